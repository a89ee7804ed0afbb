#!/usr/bin/env bash
# test/stress/run.sh: load and cancel.  Concurrent sessions (pgbench) loop
# over sorts, joins and aggregates with gpuops on, every result checked
# against PostgreSQL's (computed first with gpuops off); beside them one
# session runs statements under random statement_timeouts (1 ms up) and
# checks that each ends within 1 s of its timeout, that only the timeout's
# error is raised and that the session still answers rightly afterwards.
# Then: no mismatch, no failed pgbench transaction, no crash in the server
# log.  With nvidia-smi: device memory before, during (per backend, busy),
# after a query (per backend, idle) and after every session has gone,
# which must not have grown.
#
#   test/stress/run.sh [--sessions N] [--seconds S] [--timeouts N] [--rows N]
#                      [--max-connections N] [--device cpu|gpu]
# Without PGHOST/PGPORT in the environment (GPUOPS_STRESS_EXISTING=1 to use
# them) it starts a throwaway cluster like make check (test/lib.sh).  The
# last line is "stress: ..." with the counts; the exit status is 0 only
# when every check held.
set -uo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$REPO/test/lib.sh"

SESSIONS=8 SECONDS_=20 TIMEOUTS=200 ROWS=20000 MAXCONN=0 DEVICE=cpu
while [ $# -gt 0 ]; do
  case "$1" in
    --sessions) SESSIONS=$2; shift 2 ;;
    --seconds) SECONDS_=$2; shift 2 ;;
    --timeouts) TIMEOUTS=$2; shift 2 ;;
    --rows) ROWS=$2; shift 2 ;;
    --max-connections) MAXCONN=$2; shift 2 ;;
    --device) DEVICE=$2; shift 2 ;;
    *) echo "usage: $0 [--sessions N] [--seconds S] [--timeouts N] [--rows N] [--max-connections N] [--device cpu|gpu]" >&2; exit 2 ;;
  esac
done
[ "$MAXCONN" -gt 0 ] || MAXCONN=$((SESSIONS + 30))
OUTDIR=${GPUOPS_STRESS_OUT:-$REPO/test/results/stress}
mkdir -p "$OUTDIR"
FAIL=()

if [ "${GPUOPS_STRESS_EXISTING:-0}" = 1 ]; then
  PSQL=(psql -X -q -v ON_ERROR_STOP=1)
  PGBENCH=(pgbench)
  SERVER_LOG=${PGLOG:-}
else
  clear_pg_env
  find_pg || exit 1
  PORT=${GPUOPS_STRESS_PORT:-54339}
  TMP=$(mktemp -d /tmp/gpuops-stress.XXXXXX)
  trap 'stop_cluster; rm -rf "$TMP"' EXIT
  start_cluster "$TMP" "$PORT" "gpuops.device = $DEVICE" "max_connections = $MAXCONN" \
    "max_worker_processes = 16" "max_parallel_workers = 16" || exit 1
  export PGHOST=$SOCK_DIR PGPORT=$PORT PGUSER=postgres PGDATABASE=postgres
  PSQL=("$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1)
  PGBENCH=("$PG_BINDIR/pgbench")
fi
DB=gpuops_stress
"${PSQL[@]}" -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB" || exit 1
export PGDATABASE=$DB
log "== stress: $SESSIONS sessions for ${SECONDS_}s, $TIMEOUTS statements under timeouts, $ROWS rows (device $DEVICE)"
"${PSQL[@]}" -c "CREATE EXTENSION IF NOT EXISTS gpuops" -v rows="$ROWS" -f "$REPO/test/stress/setup.sql" \
  >"$OUTDIR/setup.log" 2>&1 || { cat "$OUTDIR/setup.log"; exit 1; }
NQ=$("${PSQL[@]}" -At -c "SELECT count(*) FROM stress_q")

# every statement forces gpuops where it can run
export PGOPTIONS="-c gpuops.min_rows=0 -c gpuops.startup_cost=0 -c gpuops.tuple_cost=0 -c gpuops.parallel_startup_cost=0 -c gpuops.device=$DEVICE -c gpuops.cpu_fallback=on"

# the plans: each query must use the node it is aimed at
used=0 plan_line=""
for q in $(seq 1 "$NQ"); do
  r=$("${PSQL[@]}" -At -c "SELECT node || '=' || stress_plan_used(id) FROM stress_q WHERE id = $q")
  plan_line+=" $q:$r"
  case "$r" in *=true) used=$((used + 1)) ;; esac
done
log "plans:$plan_line"
[ "$used" -eq "$NQ" ] || FAIL+=("only $used of $NQ queries planned their gpuops node")

SMI=""
command -v nvidia-smi >/dev/null 2>&1 && SMI=nvidia-smi
gpu_used() { $SMI --query-gpu=memory.used --format=csv,noheader,nounits | head -1; }
# per_backend: "N processes, max M MiB, mean M MiB" of the compute processes now
per_backend() {
  $SMI --query-compute-apps=pid,used_memory --format=csv,noheader,nounits |
    awk -F', *' '{n++; s+=$2; if ($2>m) m=$2} END {if (n) printf "%d processes, max %d MiB, mean %d MiB", n, m, s/n; else printf "0 processes"}'
}
if [ -n "$SMI" ]; then
  MEM_BEFORE=$(gpu_used)
  log "device memory before: $MEM_BEFORE MiB used"
  ( while :; do
      printf '%s %s\n' "$(gpu_used)" "$(per_backend)" >>"$OUTDIR/smi.log"; sleep 1
    done ) & SAMPLER=$!
fi

# the sessions
cat >"$OUTDIR/stress.pgb" <<PGB
\set q random(1, $NQ)
SELECT stress_check(:q);
PGB
"${PGBENCH[@]}" -n -c "$SESSIONS" -j "$(( SESSIONS < 16 ? SESSIONS : 16 ))" -T "$SECONDS_" \
  -f "$OUTDIR/stress.pgb" >"$OUTDIR/pgbench.log" 2>&1 & BENCH=$!

# the cancel session, beside them
{
  echo '\set ON_ERROR_STOP 0'
  for i in $(seq 1 "$TIMEOUTS"); do
    q=$((RANDOM % NQ + 1))
    case $((RANDOM % 4)) in
      0) t=$((RANDOM % 10 + 1)) ;;
      1) t=$((RANDOM % 100 + 1)) ;;
      2) t=$((RANDOM % 1000 + 1)) ;;
      *) t=$((RANDOM % 5000 + 1)) ;;
    esac
    echo "SELECT extract(epoch FROM clock_timestamp()) * 1000 AS t0 \\gset"
    echo "SET statement_timeout = $t;"
    echo "SELECT stress_check($q);"
    echo "RESET statement_timeout;"
    echo "INSERT INTO stress_slow SELECT $q, $t, extract(epoch FROM clock_timestamp()) * 1000 - :t0;"
  done
  # afterwards the session answers every query rightly
  for q in $(seq 1 "$NQ"); do echo "SELECT stress_check($q);"; done
} >"$OUTDIR/timeouts.sql"
# GPUOPS_STRESS_CANCEL_OPTIONS: settings for this session only, for example
# "-c gpuops.enabled=off" to measure how late PostgreSQL's own plans end
# under the same load (the bound the machine sets on any cancel)
PGOPTIONS="$PGOPTIONS ${GPUOPS_STRESS_CANCEL_OPTIONS:-}" \
  "${PSQL[@]}" -f "$OUTDIR/timeouts.sql" >"$OUTDIR/timeouts.out" 2>"$OUTDIR/timeouts.err"
wait "$BENCH"; bench_rc=$?

# Errors by the script line that raised them ("psql:FILE:LINE: ERROR:  ...").
# A timed statement may only end by its timeout.  The statements after it
# run under the same timeout until a RESET of it succeeds (PostgreSQL arms
# it for every statement, the RESET's own included), so on a loaded
# machine a short timeout can cancel the RESET, and then the next ones:
# counted apart, not as failures.  Any other error is one.
read -r cancelled spilled other_errors < <(awk '
  FNR == NR { text[FNR] = $0; n = FNR; next }
  match($0, /^psql:[^:]*:[0-9]+: ERROR: /) {
    split($0, f, ":")
    err[f[3]] = ($0 ~ /canceling statement due to statement timeout/) ? "timeout" \
      : ($0 ~ /canceling statement due to user request/) ? "cancel" : "other"
  }
  END {
    armed = 0
    for (l = 1; l <= n; l++) {
      if (text[l] ~ /^SET statement_timeout/ && !(l in err)) armed = 1
      if (text[l] ~ /^RESET statement_timeout/ && !(l in err)) armed = 0
      if (!(l in err)) continue
      if (text[l] ~ /^SELECT stress_check/ && err[l] == "timeout") c++
      else if (armed && err[l] != "other") s++
      else o++
    }
    print c + 0, s + 0, o + 0
  }' "$OUTDIR/timeouts.sql" "$OUTDIR/timeouts.err")
txns=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$OUTDIR/pgbench.log")
failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$OUTDIR/pgbench.log")
mismatches=$("${PSQL[@]}" -At -c "SELECT count(*) FROM stress_mismatch")
# every timed statement's end after its timeout (took - timeout, ms: what
# a cancel costs); late = over 1 s
slow=$("${PSQL[@]}" -At -c "SELECT count(*) FROM stress_slow WHERE took_ms > timeout_ms + 1000")
slowest=$("${PSQL[@]}" -At -c "SELECT coalesce(max(took_ms - timeout_ms)::int, 0) FROM stress_slow")
log "timed statements, how long after the timeout they ended (ms): $("${PSQL[@]}" -At -c "SELECT 'p50 ' || round(percentile_cont(0.5) WITHIN GROUP (ORDER BY e)) || ', p99 ' || round(percentile_cont(0.99) WITHIN GROUP (ORDER BY e)) || ', max ' || round(max(e)) FROM (SELECT greatest(took_ms - timeout_ms, 0) AS e FROM stress_slow WHERE took_ms > timeout_ms) s")"
[ "$bench_rc" -eq 0 ] || FAIL+=("pgbench exited with $bench_rc (see $OUTDIR/pgbench.log)")
grep -q 'aborted' "$OUTDIR/pgbench.log" && FAIL+=("pgbench clients aborted (see $OUTDIR/pgbench.log)")
[ "${failed:-0}" -eq 0 ] || FAIL+=("$failed pgbench transactions failed")
[ "${txns:-0}" -gt 0 ] || FAIL+=("pgbench processed no transaction")
[ "$mismatches" -eq 0 ] || FAIL+=("$mismatches results differ from PostgreSQL's (table stress_mismatch)")
[ "$other_errors" -eq 0 ] || FAIL+=("$other_errors errors other than the statement timeout (see $OUTDIR/timeouts.err)")
if [ "$slow" -gt 0 ]; then
  FAIL+=("$slow statements ended more than 1 s after their timeout (worst $slowest ms late)")
  "${PSQL[@]}" -At -c "SELECT 'late: ' || s.qid || ' (' || q.node || ') timeout ' || s.timeout_ms || ' ms, took ' || round(s.took_ms) || ' ms' FROM stress_slow s JOIN stress_q q ON q.id = s.qid WHERE s.took_ms > s.timeout_ms + 1000 ORDER BY s.took_ms - s.timeout_ms DESC LIMIT 10"
fi

if [ -n "$SMI" ]; then
  kill "$SAMPLER" 2>/dev/null; wait "$SAMPLER" 2>/dev/null
  busy=$(sort -n "$OUTDIR/smi.log" | tail -1)
  log "device memory during the run, at its peak: $busy MiB used"
  # idle backends: each runs one query, then sleeps between statements
  pids=()
  for i in $(seq 1 "$(( SESSIONS < 16 ? SESSIONS : 16 ))"); do
    "${PSQL[@]}" -c "SELECT stress_check($(( i % NQ + 1 )))" -c "SELECT pg_sleep(6)" >/dev/null 2>&1 & pids+=($!)
  done
  sleep 4
  log "device memory per idle backend after a query: $(per_backend)"
  wait "${pids[@]}"
  sleep 2
  MEM_AFTER=$(gpu_used)
  log "device memory after every session ended: $MEM_AFTER MiB used (before: $MEM_BEFORE)"
  [ "$MEM_AFTER" -le $((MEM_BEFORE + 64)) ] || FAIL+=("device memory grew from $MEM_BEFORE to $MEM_AFTER MiB")
fi

crash=0
if [ -n "${SERVER_LOG:-}" ] && [ -f "$SERVER_LOG" ]; then
  crash=$(grep -cE 'terminated by signal|PANIC|was terminated by' "$SERVER_LOG")
  cp "$SERVER_LOG" "$OUTDIR/server.log" 2>/dev/null
fi
[ "$crash" -eq 0 ] || FAIL+=("the server log shows $crash crashes")
"${PSQL[@]}" -d postgres -c "DROP DATABASE $DB" >/dev/null 2>&1

for f in "${FAIL[@]}"; do warn "stress: FAILED: $f"; done
log "stress: $SESSIONS sessions, ${txns:-0} statements checked, ${failed:-0} failed, $mismatches mismatches; $TIMEOUTS under timeouts: $cancelled cancelled, $spilled cancels of the next statement, $other_errors other errors, $slow late; $crash crashes; $used/$NQ plans on their node"
[ "${#FAIL[@]}" -eq 0 ]
