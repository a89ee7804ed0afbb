#!/usr/bin/env bash
# test/pgsuite/run.sh: PostgreSQL's own core regression suite (src/test/regress
# of the server's Debian source package) run twice against throwaway clusters,
# once without gpuops (the baseline) and once with gpuops preloaded and forced
# into every plan it can take, then compared with each other (not with
# PostgreSQL's expected files: the environment may differ from theirs).
# Fails on a crash, an error only the gpuops run raises, or a result that
# differs other than in row order of a query without ORDER BY or in plan text
# (test/pgsuite/compare.py says exactly what it ignores). Last line:
#   pgsuite: N tests, N queries compared, N differences, N crashes
#
# Steps: (1) the suite: downloaded once with apt-get source (a private
# deb-src list, no change to the system's apt configuration), unpacked and its
# C modules (regress.so, autoinc.so, refint.so) built with PGXS against the
# server that PG_CONFIG names, all cached under PGSUITE_CACHE; (2) the runs;
# (3) the comparison.
#
# Environment:
#   PG_CONFIG        the server to test (default /usr/lib/postgresql/15/bin/pg_config);
#                    gpuops must already be installed into it (make install)
#   PGSUITE_PORT     port of the throwaway clusters (default 54339)
#   PGSUITE_CACHE    download and build cache (default /var/tmp/gpuops-pgsuite)
#   PGSUITE_DIR      a prepared suite directory to use as is (see --prepare)
#   PGSUITE_RESULTS  outputs: <mode>/results/*.out, server logs, the comparison
#                    (default <repo>/test/pgsuite/results)
#   PGSUITE_MODES    runs to compare with their baseline, from
#                    "forced" (serial plans) and "parallel" (forced, and parallel
#                    plans made cheap on both sides); default "forced"
#   PGSUITE_SCHEDULE parallel_schedule (default) or a file of "test: a b" lines
#   GPUOPS_TEST_USER the cluster owner when run as root (default gpuops_test)
#   GPUOPS_TMPDIR    where the clusters live (default /tmp)
#
# usage: test/pgsuite/run.sh             prepare (cached), run, compare
#        test/pgsuite/run.sh --prepare DIR
#            only prepare the suite into DIR (for a machine that cannot
#            download or build: carry DIR and run with PGSUITE_DIR=DIR)
#        test/pgsuite/run.sh --source [MAJOR]
#            only download postgresql-MAJOR's source package (PG_CONFIG's
#            major by default) into the cache (if it is not there yet) and
#            print the path of its orig tarball as the last line of stdout
#            (test/pgbuild.sh builds PostgreSQL from it)
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$REPO/test/lib.sh"

PORT=${PGSUITE_PORT:-54339}
CACHE=${PGSUITE_CACHE:-/var/tmp/gpuops-pgsuite}
RESULTS=${PGSUITE_RESULTS:-$REPO/test/pgsuite/results}
MODES=${PGSUITE_MODES:-forced}
TMP=""

# Settings that make gpuops plan every operator it can: no row threshold and
# no start-up, staging or transfer cost, and top-N sorts on the device too.
# gpuops.device = cpu is its CPU twin; PGSUITE_DEVICE=gpu on the GPU machine.
# GpuQuery reads the pages form on either (the suite's tables, dropped and
# added columns, TOAST, every type, deformed by the query backend).
# Its pages read in place on the twin (pinned, no mapping needed); on the
# GPU, mapping shared buffers would take every session seconds: auto there.
IN_PLACE=on; [ "${PGSUITE_DEVICE:-cpu}" = gpu ] && IN_PLACE=auto
FORCED=("gpuops.device = ${PGSUITE_DEVICE:-cpu}" "gpuops.cpu_fallback = off"
        "gpuops.min_rows = 0" "gpuops.startup_cost = 0" "gpuops.parallel_startup_cost = 0"
        "gpuops.tuple_cost = 0" "gpuops.transfer_cost = 0" "gpuops.topn_device_min_bound = 0"
        "gpuops.enable_query = on" "gpuops.query_read_pages = on"
        "gpuops.query_pages_in_place = $IN_PLACE")
# Parallel plans wherever PostgreSQL can make one; used on both sides of the
# "parallel" comparison, so that only gpuops differs.
PARALLEL=("parallel_setup_cost = 0" "parallel_tuple_cost = 0" "min_parallel_table_scan_size = 0"
          "min_parallel_index_scan_size = 0" "max_parallel_workers_per_gather = 2")
# Common to every run: the settings pg_regress gives its own temporary
# instance, so that more of the suite runs as in PostgreSQL's "make check".
COMMON=("max_prepared_transactions = 2" "log_line_prefix = '%m %b[%p] %q%a '"
        "log_autovacuum_min_duration = 0")

cleanup() {
  stop_cluster
  [ -n "$TMP" ] && [ -d "$TMP" ] && rm -rf "$TMP"
  TMP=""
}
trap cleanup EXIT
trap 'exit 130' INT TERM
die() { warn "pgsuite: $*"; log "pgsuite: failed: $*"; exit 1; }

# pg_full_version: "15.20-0+deb12u1" from "PostgreSQL 15.20 (Debian 15.20-0+deb12u1)".
pg_full_version() {
  local v; v=$("$PG_CONFIG" --version) || return 1
  if [[ $v =~ \(Debian\ ([^\)]+)\) ]]; then echo "${BASH_REMATCH[1]}"
  else echo "$v" | awk '{print $2}'; fi
}

# pg_major: "15" from PG_CONFIG's "PostgreSQL 15.20 (Debian ...)".
pg_major() { "$PG_CONFIG" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/'; }

# fetch_source DIR [MAJOR]: leaves postgresql-MAJOR_<version>.orig.tar.* in
# DIR (MAJOR: PG_CONFIG's by default), from Debian's source package
# postgresql-MAJOR (apt-get source with a private deb-src list; the system's
# apt configuration is not changed).  The suites searched: this system's
# release (with its updates and security suites) and the newer releases,
# where the majors this release does not ship live (trixie, forky, sid,
# experimental).  Versions tried: the installed server's exact one first,
# then every version the suites list, newest first, until one downloads (a
# mirror may lag its index).  The regression suite or the server of a
# neighbouring minor release serves as well: both runs of the suite use the
# same files, and a server built from it is tested as what it is.
fetch_source() {
  local dir="$1" major="${2:-}" debver="" codename w apt v
  [ -n "$major" ] || major=$(pg_major) || return 1
  shopt -s nullglob; local have=("$dir"/postgresql-"$major"_*.orig.tar.*); shopt -u nullglob
  [ "${#have[@]}" -gt 0 ] && return 0
  command -v apt-get >/dev/null || { warn "apt-get not found: set PGSUITE_DIR to a prepared suite"; return 1; }
  [ -n "${PG_CONFIG:-}" ] && [ "$(pg_major 2>/dev/null)" = "$major" ] && debver=$(pg_full_version)
  codename=$(. /etc/os-release 2>/dev/null; echo "${VERSION_CODENAME:-bookworm}")
  w=$(mktemp -d "${TMPDIR:-/tmp}/pgsuite-apt.XXXXXX") || return 1
  mkdir -p "$w/lists/partial" "$w/parts" "$w/cache/archives/partial" "$w/dl"
  local suites="$codename $codename-updates" sec="$codename-security" newer
  for newer in trixie forky; do
    [ "$newer" = "$codename" ] && continue
    suites="$suites $newer $newer-updates" sec="$sec $newer-security"
  done
  cat > "$w/parts/src.sources" <<SRC
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: $suites sid experimental
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: $sec
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  apt=(-oDir::Etc::SourceList=/dev/null "-oDir::Etc::SourceParts=$w/parts"
       "-oDir::State::Lists=$w/lists" "-oDir::Cache=$w/cache")
  log "pgsuite: downloading postgresql-$major's source package (apt-get source)"
  # a suite that does not exist (yet or any more) fails only its own lists
  apt-get "${apt[@]}" update >"$w/apt.log" 2>&1
  local versions=()
  mapfile -t versions < <({ [ -n "$debver" ] && echo "$debver"
    apt-cache "${apt[@]}" showsrc "postgresql-$major" 2>/dev/null |
      sed -n 's/^Version: //p' | sort -u | sort -rV; } | awk '!seen[$0]++')
  for v in "${versions[@]}"; do
    if (cd "$w/dl" && apt-get "${apt[@]}" source --download-only "postgresql-$major=$v") >>"$w/apt.log" 2>&1; then
      mkdir -p "$dir" && mv "$w"/dl/*.orig.tar.* "$dir"/ && rm -rf "$w"
      return 0
    fi
    rm -f "$w"/dl/*
    log "pgsuite: postgresql-$major $v is not downloadable"
  done
  [ "${#versions[@]}" -eq 0 ] && warn "pgsuite: no suite searched ($suites sid experimental) has postgresql-$major"
  tail -n 20 "$w/apt.log" >&2; rm -rf "$w"; return 1
}

# prepare_suite DIR: DIR gets PostgreSQL's src/test/regress (sql, expected,
# data, parallel_schedule) and, in DIR/lib, its modules built against PG_CONFIG.
prepare_suite() {
  local dir="$1" src tarball top
  [ -f "$dir/parallel_schedule" ] && [ -f "$dir/lib/regress.so" ] && return 0
  src="$CACHE/src"
  fetch_source "$src" || return 1
  tarball=$(ls "$src"/postgresql-"$(pg_major)"_*.orig.tar.* | head -n 1)
  top=$(basename "$tarball" | sed -E 's/^postgresql-[0-9]+_([^.]+\.[0-9]+)\.orig.*/postgresql-\1/')
  log "pgsuite: unpacking the regression suite from $(basename "$tarball") into $dir"
  rm -rf "$dir.tmp" && mkdir -p "$dir.tmp" || return 1
  tar -C "$dir.tmp" -xf "$tarball" "$top/src/test/regress" "$top/contrib/spi" || return 1
  mkdir -p "$dir.tmp/suite/lib" "$dir.tmp/suite/build"
  (cd "$dir.tmp/$top/src/test/regress" && cp -r sql expected data parallel_schedule resultmap "$dir.tmp/suite/") || return 1
  cp "$dir.tmp/$top/src/test/regress/regress.c" "$dir.tmp/$top/contrib/spi/autoinc.c" \
     "$dir.tmp/$top/contrib/spi/refint.c" "$dir.tmp/suite/build/" || return 1
  echo "$top" > "$dir.tmp/suite/VERSION"
  # PGXS, no LLVM bitcode (a JIT-inlining detail the suite does not need)
  cat > "$dir.tmp/suite/build/Makefile" <<'MK'
MODULES = regress autoinc refint
override with_llvm = no
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)
MK
  log "pgsuite: building regress.so, autoinc.so, refint.so against $PG_CONFIG"
  make -C "$dir.tmp/suite/build" PG_CONFIG="$PG_CONFIG" >"$dir.tmp/suite/build/build.log" 2>&1 \
    || { tail -30 "$dir.tmp/suite/build/build.log" >&2; return 1; }
  cp "$dir.tmp/suite/build"/*.so "$dir.tmp/suite/lib/" || return 1
  rm -rf "$dir" && mv "$dir.tmp/suite" "$dir" && rm -rf "$dir.tmp"
  chmod -R a+rX "$dir"
}

# run_suite MODE SETTINGS...: a fresh cluster with SETTINGS, the schedule
# through pg_regress, the outputs and the server log to $RESULTS/MODE.
run_suite() {
  local mode="$1"; shift
  local out="$RESULTS/$mode" t0=$SECONDS rc
  rm -rf "$out" && mkdir -p "$out"
  TMP=$(mktemp -d "${GPUOPS_TMPDIR:-/tmp}/gpuops-pgsuite.XXXXXX") || return 1
  start_cluster "$TMP" "$PORT" "${COMMON[@]}" "$@" || { cleanup; return 1; }
  mkdir -p "$TMP/regress"
  [ "$(id -u)" -eq 0 ] && chown -R "$GPUOPS_TEST_USER:" "$TMP/regress"
  # pg_regress as the cluster owner: the server writes files (COPY TO) into
  # its output directory. Not --use-existing: it (re)creates the database
  # "regression" with the settings the suite expects.
  (cd "$TMP/regress" && as_test_user timeout "${PGSUITE_TIMEOUT:-1800}" \
     "$PG_REGRESS" --host="$SOCK_DIR" --port="$PORT" --user=postgres --bindir="$PG_BINDIR" \
     --inputdir="$SUITE" --outputdir="$TMP/regress" --dlpath="$SUITE/lib" \
     --schedule="$SCHEDULE" --max-concurrent-tests=20) >"$out/pg_regress.log" 2>&1
  rc=$?
  stop_cluster
  cp -r "$TMP/regress/results" "$out/" 2>/dev/null
  cp "$TMP/regress/regression.diffs" "$out/expected.diffs" 2>/dev/null
  cp "$SERVER_LOG" "$out/server.log" 2>/dev/null
  printf '%s\n' "$@" > "$out/settings"
  count_regress "$out/pg_regress.log"
  log "pgsuite: $mode: $((REG_PASSED + REG_FAILED)) tests in $((SECONDS - t0)) s" \
      "(pg_regress exit $rc; $REG_FAILED differ from PostgreSQL's expected files, which is not checked)"
  rm -rf "$TMP"; TMP=""
}

clear_pg_env
if [ "${1:-}" = --prepare ]; then
  [ -n "${2:-}" ] || die "usage: run.sh --prepare DIR"
  find_pg || die "PostgreSQL not found (set PG_CONFIG)"
  prepare_suite "$(realpath -m "$2")" || die "could not prepare the suite"
  log "pgsuite: suite ready in $2 ($(cat "$2/VERSION"))"
  exit 0
fi

if [ "${1:-}" = --source ]; then
  major=${2:-}
  if [ -z "$major" ]; then find_pg || die "PostgreSQL not found (set PG_CONFIG or name the major version)"; major=$(pg_major); fi
  fetch_source "$CACHE/src" "$major" >&2 || die "could not download postgresql-$major's source package"
  printf '%s\n' "$CACHE/src"/postgresql-"$major"_*.orig.tar.* | head -n 1
  exit 0
fi

T0=$SECONDS
find_pg || die "PostgreSQL not found (set PG_CONFIG)"
[ -x "$PG_REGRESS" ] || die "pg_regress not found at $PG_REGRESS"
[ -f "$("$PG_CONFIG" --pkglibdir)/gpuops.so" ] || die "gpuops is not installed into $("$PG_CONFIG" --pkglibdir) (make install)"
if [ -n "${PGSUITE_DIR:-}" ]; then
  SUITE=$(realpath "$PGSUITE_DIR")
else
  SUITE="$CACHE/suite-$(pg_full_version)-$(printf '%s' "$PG_CONFIG" | md5sum | cut -c1-8)"
  prepare_suite "$SUITE" || die "could not prepare the suite"
fi
[ -f "$SUITE/parallel_schedule" ] && [ -f "$SUITE/lib/regress.so" ] || die "$SUITE is not a prepared suite"
SCHEDULE=${PGSUITE_SCHEDULE:-$SUITE/parallel_schedule}
mkdir -p "$RESULTS" || die "cannot create $RESULTS"
log "pgsuite: PostgreSQL's regression suite ($(cat "$SUITE/VERSION")) against $("$PG_CONFIG" --version), modes: $MODES"

pairs=()
for m in $MODES; do
  case "$m" in
    forced)   run_suite baseline "shared_preload_libraries = ''" || die "baseline run failed"
              run_suite forced "${FORCED[@]}" || die "forced run failed"
              pairs+=(baseline:forced) ;;
    parallel) run_suite baseline-parallel "shared_preload_libraries = ''" "${PARALLEL[@]}" || die "baseline-parallel run failed"
              run_suite forced-parallel "${FORCED[@]}" "${PARALLEL[@]}" || die "forced-parallel run failed"
              pairs+=(baseline-parallel:forced-parallel) ;;
    *) die "unknown mode $m (forced, parallel)" ;;
  esac
done

rc=0
for p in "${pairs[@]}"; do
  /usr/bin/python3 "$REPO/test/pgsuite/compare.py" --suite "$SUITE" --schedule "$SCHEDULE" \
    "$RESULTS/${p%%:*}" "$RESULTS/${p##*:}" | tee "$RESULTS/${p##*:}.compare"
  [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
done
log "pgsuite: wall time $((SECONDS - T0)) s"
exit $rc
