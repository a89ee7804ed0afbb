# shellcheck shell=bash
# Helpers shared by test/check.sh, test/demo.sh and test/gpu_check.sh.
# Source it; it defines functions and a few variables, and runs nothing.
# gpu_check.sh uses only count_regress/print_diffs, which need bash alone.

GPUOPS_TEST_USER=${GPUOPS_TEST_USER:-gpuops_test}

log()  { printf '%s\n' "$*"; }
warn() { printf '%s\n' "$*" >&2; }

# count_regress FILE: reads pg_regress output and sets REG_PASSED / REG_FAILED.
# PostgreSQL 15 prints "test NAME ... ok|FAILED|failed (ignored)" (or indented
# lines under "parallel group"); 16+ prints TAP ("ok N - NAME", "not ok N - NAME").
count_regress() {
  local line re_classic='^(test[[:space:]]+|[[:space:]]+)[^[:space:]]+[[:space:]]+\.\.\.[[:space:]]+(ok|FAILED|failed \(ignored\))'
  local re_tap='^(not )?ok[[:space:]]+[0-9]+[[:space:]]'
  REG_PASSED=0 REG_FAILED=0
  while IFS= read -r line || [ -n "$line" ]; do
    if [[ $line =~ $re_classic ]]; then
      case "${BASH_REMATCH[2]}" in
        ok|"failed (ignored)") REG_PASSED=$((REG_PASSED + 1)) ;;
        *) REG_FAILED=$((REG_FAILED + 1)) ;;
      esac
    elif [[ $line =~ $re_tap ]]; then
      if [ -n "${BASH_REMATCH[1]}" ]; then REG_FAILED=$((REG_FAILED + 1)); else REG_PASSED=$((REG_PASSED + 1)); fi
    fi
  done < "$1"
}

# reconcile_regress SCHEDULE RC: after count_regress, counts the tests of the
# schedule that reported no result (pg_regress bailed out) as failed, and a
# nonzero exit with no failure seen as one failure. Prints why.
reconcile_regress() {
  local line want=0 words re='^test:[[:space:]]*(.*)$'
  while IFS= read -r line || [ -n "$line" ]; do
    if [[ $line =~ $re ]]; then
      read -r -a words <<<"${BASH_REMATCH[1]}"
      want=$((want + ${#words[@]}))
    fi
  done < "$1"
  local seen=$((REG_PASSED + REG_FAILED))
  if [ "$seen" -lt "$want" ]; then
    log "pg_regress: $((want - seen)) of the $want tests in the schedule reported no result; counted as failed"
    REG_FAILED=$((REG_FAILED + want - seen))
  fi
  if [ "$2" -ne 0 ] && [ "$REG_FAILED" -eq 0 ]; then
    if [ "$2" -eq 124 ]; then log "pg_regress timed out"; else log "pg_regress exited with status $2"; fi
    REG_FAILED=1
  fi
}

# print_diffs DIR: first 200 lines of DIR/regression.diffs, if there is one.
print_diffs() {
  local f="$1/regression.diffs" n=0 line
  [ -s "$f" ] || return 0
  log "--- $f (first 200 lines)"
  while IFS= read -r line || [ -n "$line" ]; do
    n=$((n + 1)); [ "$n" -gt 200 ] && { log "... (truncated; see the file)"; break; }
    printf '%s\n' "$line"
  done < "$f"
  log "--- end of regression.diffs"
}

# find_pg: sets PG_CONFIG, PG_BINDIR, PG_REGRESS (PG_CONFIG from the environment wins).
find_pg() {
  if [ -z "${PG_CONFIG:-}" ]; then
    if [ -x /usr/lib/postgresql/15/bin/pg_config ]; then PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config
    else PG_CONFIG=$(command -v pg_config || true); fi
  fi
  if [ -z "$PG_CONFIG" ] || [ ! -x "$PG_CONFIG" ]; then
    warn "pg_config not found (set PG_CONFIG=/path/to/pg_config)"; return 1
  fi
  PG_BINDIR=$("$PG_CONFIG" --bindir) || return 1
  local pgxs; pgxs=$("$PG_CONFIG" --pgxs) || return 1
  # shellcheck disable=SC2034  # used by the scripts that source this file
  PG_REGRESS="$(dirname "$pgxs")/../../src/test/regress/pg_regress"
  if [ ! -x "$PG_BINDIR/initdb" ] || [ ! -x "$PG_BINDIR/pg_ctl" ] || [ ! -x "$PG_BINDIR/psql" ]; then
    warn "no PostgreSQL server binaries in $PG_BINDIR (is postgresql-15 installed?)"; return 1
  fi
  export PG_CONFIG
}

# ensure_test_user: as root, creates the unprivileged cluster owner if missing.
ensure_test_user() {
  [ "$(id -u)" -eq 0 ] || return 0
  id "$GPUOPS_TEST_USER" >/dev/null 2>&1 && return 0
  useradd --system --user-group --no-create-home --home-dir /nonexistent \
    --shell /bin/sh "$GPUOPS_TEST_USER" \
    || { warn "could not create OS user $GPUOPS_TEST_USER"; return 1; }
}
# as_test_user CMD...: runs CMD as that user when we are root, else as ourselves.
as_test_user() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u "$GPUOPS_TEST_USER" -- "$@"
  else
    "$@"
  fi
}

# build_install REPO LOGFILE: make (default target) then make install; sudo
# for the install step when not root and the install dirs are not writable.
# GPUOPS_WERROR=1 in the environment (CI: .ci/run) builds with -Wall -Wextra
# -Werror (the Makefile's GPUOPS_WERROR).
build_install() {
  local repo="$1" logf="$2" sudo=() werror="GPUOPS_WERROR=${GPUOPS_WERROR:-0}"
  if [ "$(id -u)" -ne 0 ] && [ ! -w "$("$PG_CONFIG" --pkglibdir)" ]; then
    command -v sudo >/dev/null 2>&1 || { warn "make install needs root (or sudo)"; return 1; }
    sudo=(sudo)
  fi
  log "building gpuops (make -C $repo -j2 $werror; log: $logf)"
  if ! { make -C "$repo" -j2 PG_CONFIG="$PG_CONFIG" "$werror" &&
         "${sudo[@]}" make -C "$repo" -j2 install PG_CONFIG="$PG_CONFIG" "$werror"; } >"$logf" 2>&1; then
    warn "--- build/install failed; last 60 lines of $logf:"
    tail -n 60 "$logf" >&2
    return 1
  fi
  log "build + install: ok ($(grep -ci 'warning:' "$logf") compiler warnings)"
}

# start_cluster TMPDIR PORT [extra postgresql.conf lines...]
# Sets PGDATA_DIR, SOCK_DIR, SERVER_LOG, CLUSTER_PORT. Returns nonzero (after
# printing the server log tail) if initdb or the start fails.
start_cluster() {
  local tmp="$1" port="$2"; shift 2
  PGDATA_DIR="$tmp/data" SOCK_DIR="$tmp/sock" SERVER_LOG="$tmp/server.log" CLUSTER_PORT="$port"
  ensure_test_user || return 1
  mkdir -p "$SOCK_DIR" || return 1
  chmod 755 "$tmp"
  if [ "$(id -u)" -eq 0 ]; then chown -R "$GPUOPS_TEST_USER:" "$tmp" || return 1; fi
  if ! (cd "$tmp" && as_test_user "$PG_BINDIR/initdb" -D "$PGDATA_DIR" -A trust -E UTF8 --locale=C -U postgres) >"$tmp/initdb.log" 2>&1; then
    warn "--- initdb failed:"; cat "$tmp/initdb.log" >&2; return 1
  fi
  {
    echo "# added by gpuops test scripts"
    echo "listen_addresses = ''"
    echo "port = $port"
    echo "unix_socket_directories = '$SOCK_DIR'"
    echo "shared_preload_libraries = 'gpuops'"
    echo "fsync = off"
    local kv; for kv in "$@"; do echo "$kv"; done
  } >> "$PGDATA_DIR/postgresql.conf"
  if ! (cd "$tmp" && as_test_user "$PG_BINDIR/pg_ctl" -D "$PGDATA_DIR" -l "$SERVER_LOG" -w -t 120 start) >"$tmp/pg_ctl.log" 2>&1; then
    warn "--- the server did not start; pg_ctl said:"; cat "$tmp/pg_ctl.log" >&2
    warn "--- last 40 lines of the server log ($SERVER_LOG):"; tail -n 40 "$SERVER_LOG" >&2 2>/dev/null
    return 1
  fi
  CLUSTER_STARTED=1
}

stop_cluster() {
  if [ "${CLUSTER_STARTED:-0}" = 1 ] && [ -n "${PGDATA_DIR:-}" ]; then
    (cd / && as_test_user "$PG_BINDIR/pg_ctl" -D "$PGDATA_DIR" -m fast -w -t 60 stop) >/dev/null 2>&1 \
      || (cd / && as_test_user "$PG_BINDIR/pg_ctl" -D "$PGDATA_DIR" -m immediate stop) >/dev/null 2>&1
    CLUSTER_STARTED=0
  fi
}

# tpsql DB ARGS...: psql against the throwaway cluster as postgres.
tpsql() {
  local db="$1"; shift
  "$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -h "$SOCK_DIR" -p "$CLUSTER_PORT" -U postgres -d "$db" "$@"
}

# Forget libpq settings from the caller's environment; the scripts pass all
# connection parameters explicitly.
clear_pg_env() {
  unset PGHOST PGHOSTADDR PGPORT PGUSER PGDATABASE PGOPTIONS PGSERVICE PGSERVICEFILE \
        PGPASSWORD PGPASSFILE PGSSLMODE PGTZ PGDATESTYLE PGCLIENTENCODING PGTARGETSESSIONATTRS
}
