#!/usr/bin/env bash
# make check: installs missing packages, builds and installs gpuops, starts a
# throwaway PostgreSQL cluster (owned by an unprivileged user, unix socket in a
# temp dir, gpuops preloaded, gpuops.device = cpu), runs pg_regress
# (test/schedule, sql/, expected/) and pgTAP (test/pgtap/*.sql via pg_prove),
# and ends with the line "N passed, N failed" (regress tests + pgTAP files).
#
# Environment: PG_CONFIG (default /usr/lib/postgresql/15/bin/pg_config; any
# PostgreSQL 15 to 18 with its server headers, e.g. one of test/pgbuild.sh's:
# `make check PG_CONFIG=/var/tmp/gpuops-pg18/bin/pg_config`; the objects of a
# build against another PostgreSQL are cleaned first, and pgTAP's SQL files
# are copied from the system's PostgreSQL when that one lacks them),
# GPUOPS_TEST_PORT (54329), GPUOPS_TEST_USER (gpuops_test, used when root),
# GPUOPS_RESULTS (<repo>/test/results: build log, server log, pg_regress output),
# GPUOPS_SKIP_SETUP=1 / GPUOPS_SKIP_BUILD=1 to skip those steps,
# GPUOPS_SKIP_DEVICE=1 to skip test/device (the device engine's unit tests),
# GPUOPS_SKIP_STRESS=1 / GPUOPS_SKIP_FUZZ=1 / GPUOPS_SKIP_PGSUITE=1 to skip test/stress (a small CPU run),
# test/fuzz (3 seeds x 1000 queries) and test/pgsuite (PostgreSQL's own suite),
# GPUOPS_TEST_TIMEOUT (seconds per suite, default 1800), GPUOPS_TMPDIR (/tmp).
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$REPO/test/lib.sh"

PORT=${GPUOPS_TEST_PORT:-54329}
RESULTS=${GPUOPS_RESULTS:-$REPO/test/results}
SUITE_TIMEOUT=${GPUOPS_TEST_TIMEOUT:-1800}
PASSED=0 FAILED=0 TMP="" SUMMARY=()

cleanup() {
  stop_cluster
  if [ -n "$TMP" ] && [ -d "$TMP" ]; then
    [ -f "$TMP/server.log" ] && cp "$TMP/server.log" "$RESULTS/server.log" 2>/dev/null
    rm -rf "$TMP"
  fi
  TMP=""
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# finish: cleans up, prints the per-suite summaries and the final line, exits.
finish() {
  cleanup
  local s; for s in "${SUMMARY[@]}"; do log "$s"; done
  log "$PASSED passed, $FAILED failed"
  [ "$FAILED" -eq 0 ]; exit $?
}
fatal() { warn "check.sh: $*"; FAILED=$((FAILED + 1)); SUMMARY+=("check.sh: $*"); finish; }

clear_pg_env
mkdir -p "$RESULTS" || { echo "cannot create $RESULTS"; echo "0 passed, 1 failed"; exit 1; }
log "== gpuops make check ($REPO)"

# 1. packages
if [ "${GPUOPS_SKIP_SETUP:-0}" != 1 ]; then
  bash "$REPO/test/setup.sh" || fatal "setup (test/setup.sh) failed"
fi
find_pg || fatal "PostgreSQL not found (PG_CONFIG)"
[ -x "$PG_REGRESS" ] || fatal "pg_regress not found at $PG_REGRESS"
log "PostgreSQL: $("$PG_CONFIG" --version) ($PG_CONFIG)"

# 2. build + install. The objects of src/ are built against one server's
# headers: a build for another PostgreSQL (the stamp names its pg_config and
# version) starts with make clean; the device library (cuda/) never sees
# PostgreSQL's headers and is kept.
if [ "${GPUOPS_SKIP_BUILD:-0}" != 1 ]; then
  stamp="$REPO/src/.built-for" want="$PG_CONFIG $("$PG_CONFIG" --version)"
  if { [ -f "$stamp" ] && [ "$(cat "$stamp")" != "$want" ]; } ||
     { [ ! -f "$stamp" ] && [ -n "$(find "$REPO/src" -name '*.o' -print -quit)" ]; }; then
    log "the last build was for $(cat "$stamp" 2>/dev/null || echo "an unknown PostgreSQL"): cleaning src/'s objects"
    find "$REPO/src" -name '*.o' -delete; rm -f "$REPO/gpuops.so"
  fi
  build_install "$REPO" "$RESULTS/build.log" || fatal "build/install failed (see $RESULTS/build.log)"
  echo "$want" > "$stamp"
fi
# pgTAP is SQL only: a PostgreSQL without it gets the system's files
ext="$("$PG_CONFIG" --sharedir)/extension" sys_ext=/usr/share/postgresql/15/extension
if [ ! -f "$ext/pgtap.control" ] && [ -f "$sys_ext/pgtap.control" ] && [ -w "$ext" ]; then
  log "copying pgTAP's files from $sys_ext into $ext"
  cp "$sys_ext"/pgtap*.control "$sys_ext"/pgtap*.sql "$ext"/ 2>/dev/null
  cp "$sys_ext"/uninstall_pgtap.sql "$ext"/ 2>/dev/null
fi

# 3. throwaway cluster
# under /tmp (not $TMPDIR): the cluster owner must reach it, and the socket
# path must stay short
TMP=$(mktemp -d "${GPUOPS_TMPDIR:-/tmp}/gpuops-check.XXXXXX") || fatal "mktemp failed"
log "starting a throwaway cluster in $TMP (port $PORT, user ${GPUOPS_TEST_USER})"
start_cluster "$TMP" "$PORT" "gpuops.device = cpu" || fatal "the test server did not start (log above)"

# 4. pg_regress. Not --use-existing: with it pg_regress neither creates the
# database nor runs --load-extension; without it, it drops/creates
# gpuops_regress on this (already running) server and creates the extension.
if [ -f "$REPO/test/schedule" ]; then
  log "== pg_regress (schedule test/schedule)"
  rm -rf "$RESULTS/results" "$RESULTS/regression.diffs" "$RESULTS/regression.out"
  timeout "$SUITE_TIMEOUT" "$PG_REGRESS" --host="$SOCK_DIR" --port="$PORT" --user=postgres \
    --bindir="$PG_BINDIR" --inputdir="$REPO" --outputdir="$RESULTS" \
    --load-extension=gpuops --schedule="$REPO/test/schedule" --dbname=gpuops_regress \
    2>&1 | tee "$RESULTS/pg_regress.log"
  rc=${PIPESTATUS[0]}
  count_regress "$RESULTS/pg_regress.log"
  reconcile_regress "$REPO/test/schedule" "$rc"
  [ "$REG_FAILED" -gt 0 ] && print_diffs "$RESULTS"
  PASSED=$((PASSED + REG_PASSED)) FAILED=$((FAILED + REG_FAILED))
  SUMMARY+=("pg_regress: $((REG_PASSED + REG_FAILED)) tests, $REG_PASSED passed, $REG_FAILED failed (output in $RESULTS)")
else
  warn "no test/schedule: pg_regress skipped"
fi

# 5. pgTAP
shopt -s nullglob
tapfiles=("$REPO"/test/pgtap/*.sql)
shopt -u nullglob
if [ "${#tapfiles[@]}" -gt 0 ]; then
  log "== pgTAP (${#tapfiles[@]} files in test/pgtap)"
  if ! { tpsql postgres -c 'CREATE DATABASE gpuops_tap' &&
         tpsql gpuops_tap -c 'CREATE EXTENSION gpuops' -c 'CREATE EXTENSION pgtap'; } 2>&1 | tee "$RESULTS/pgtap_setup.log"; then
    FAILED=$((FAILED + ${#tapfiles[@]}))
    SUMMARY+=("pgTAP: ${#tapfiles[@]} files not run: could not create database gpuops_tap with gpuops and pgtap")
  else
    (cd "$REPO" && timeout "$SUITE_TIMEOUT" pg_prove --psql-bin "$PG_BINDIR/psql" -h "$SOCK_DIR" -p "$PORT" \
       -U postgres -d gpuops_tap "${tapfiles[@]#"$REPO"/}") 2>&1 | tee "$RESULTS/pg_prove.log"
    rc=${PIPESTATUS[0]}
    # "Files=3, Tests=57, ..." and, under "Test Summary Report", one line per
    # failed file: "test/pgtap/x.sql (Wstat: 0 Tests: 20 Failed: 1)".
    files=${#tapfiles[@]} asserts="?" bad_files=0 bad_asserts=0
    re_total='^Files=([0-9]+), Tests=([0-9]+)'
    re_bad='^[^[:space:]].*\.sql[[:space:]]+\(Wstat: .*Tests: ([0-9]+) Failed: ([0-9]+)\)'
    while IFS= read -r line; do
      if [[ $line =~ $re_total ]]; then files=${BASH_REMATCH[1]} asserts=${BASH_REMATCH[2]}
      elif [[ $line =~ $re_bad ]]; then bad_files=$((bad_files + 1)) bad_asserts=$((bad_asserts + BASH_REMATCH[2]))
      fi
    done < "$RESULTS/pg_prove.log"
    if [ "$rc" -ne 0 ] && [ "$bad_files" -eq 0 ]; then
      bad_files=$files
      warn "pg_prove exited with status $rc"
    fi
    [ "$bad_files" -gt "$files" ] && bad_files=$files
    PASSED=$((PASSED + files - bad_files)) FAILED=$((FAILED + bad_files))
    SUMMARY+=("pgTAP: $files files ($((files - bad_files)) passed, $bad_files failed), $asserts assertions ($bad_asserts failed)")
  fi
else
  warn "no test/pgtap/*.sql: pgTAP skipped"
fi

# 6. suites with clusters of their own, after this one is stopped
stop_cluster
run_suite() {  # run_suite NAME COMMAND...: one pass or fail, its last line in the summary
  local name=$1 rc; shift
  log "== $name"
  timeout "$SUITE_TIMEOUT" "$@" 2>&1 | tee "$RESULTS/$name.log"
  rc=${PIPESTATUS[0]}
  if [ "$rc" -eq 0 ]; then PASSED=$((PASSED + 1)); else FAILED=$((FAILED + 1)); fi
  SUMMARY+=("$(tail -n 1 "$RESULTS/$name.log") (exit $rc)")
}
if [ "${GPUOPS_SKIP_DEVICE:-0}" != 1 ]; then
  # the device engine alone (no PostgreSQL): the CPU twin against the tests'
  # own references here; on the GPU machine also CUDA against the twin
  run_suite device bash "$REPO/test/device/run.sh"
fi
if [ "${GPUOPS_SKIP_STRESS:-0}" != 1 ]; then
  GPUOPS_STRESS_OUT="$RESULTS/stress" GPUOPS_STRESS_PORT=$((PORT + 1)) \
    run_suite stress bash "$REPO/test/stress/run.sh" --sessions 8 --seconds 20 --timeouts 200
fi
if [ "${GPUOPS_SKIP_FUZZ:-0}" != 1 ]; then
  GPUOPS_FUZZ_OUT="$RESULTS/fuzz" GPUOPS_FUZZ_PORT=$((PORT + 2)) \
    run_suite fuzz bash "$REPO/test/fuzz/run.sh" --seeds "1 2 3" --queries 1000
fi
if [ "${GPUOPS_SKIP_PGSUITE:-0}" != 1 ]; then
  PGSUITE_RESULTS="$RESULTS/pgsuite" PGSUITE_PORT=$((PORT + 3)) \
    run_suite pgsuite bash "$REPO/test/pgsuite/run.sh"
fi

if [ "$FAILED" -gt 0 ] && [ -f "$TMP/server.log" ] && grep -qE 'terminated by signal|PANIC|server process .* was terminated' "$TMP/server.log"; then
  log "--- the server log shows a crash; last 40 lines:"
  tail -n 40 "$TMP/server.log"
fi
log "(logs in $RESULTS)"
finish
