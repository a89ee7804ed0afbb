#!/usr/bin/env bash
# The GPU machine's verification batch, in parts that fit one device call
# (run inside the devkit wrapper, with the server's environment holding
# GPUOPS_LOG_SLOW_MS for the slow-call lines):
#   GPUOPS_LOG_SLOW_MS=300 .devkit/pgrun.sh -c gpuops.device=gpu \
#     -c max_connections=260 -- bash test/gpu_batch.sh regress q18
# Parts, run in the order given:
#   regress     the pg_regress suite in two halves side by side (~3.5 min), then
#               gpuops_stat alone (it reads counters every backend adds to)
#   fuzz        test/fuzz, seeds $GPU_FUZZ_SEEDS (default 51-60) x 1000 queries
#   pgsuite     PostgreSQL's suite, forced (needs .devkit/pgsuite: stage it
#               with test/pgsuite/run.sh --prepare .devkit/pgsuite)
#   fuzz+pgsuite  the two side by side (~4.5 min)
#   stress32    32 sessions, 90 s, 1000 statements under timeouts
#   stress200   200 sessions, 40 s, 100 under timeouts (max_connections 260)
#   stress200pg the same with the cancel session on PostgreSQL's own plans
#               (how late any cancel ends under that load)
#   stress32serial, stress32pg  stress32 with the cancel session's plans
#               serial (no parallel workers to wait for), or PostgreSQL's own
#   q18         TPC-H Q18's shape at scale $GPU_Q18_SCALE (default 4: 24M rows)
# Logs go under $OUT; each part prints its summary line; at the end the
# server log's slow-call and release lines go to $OUT/slow.log and its
# crash lines are counted.
set -uo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO" || exit 1
OUT=${OUT:-/tmp/gpu_batch}
mkdir -p "$OUT"
T0=$(date +%s)
since() { echo "$(( $(date +%s) - T0 )) s"; }

regress() {
  local a="$OUT/schedA" b="$OUT/schedB" n=0 line
  echo "test: test_setup" > "$a"; echo "test: test_setup" > "$b"
  while read -r line; do
    case "$line" in
      "test: test_setup" | "#"* | "") continue ;;
      # the sort tests read sort_types' tables: they stay together, in A
      "test: sort_"*) echo "$line" >> "$a"; continue ;;
      # it reads gpuops.stat, which counts every backend's nodes: alone, after A and B
      "test: gpuops_stat") continue ;;
    esac
    if [ $((n % 2)) -eq 0 ]; then echo "$line" >> "$b"; else echo "$line" >> "$a"; fi
    n=$((n + 1))
  done < test/schedule
  ( GPU_CHECK_SCHEDULE="$a" GPU_CHECK_DB=rega GPU_CHECK_OUT="$OUT/regA" timeout 420 bash test/gpu_check.sh > "$OUT/regA.log" 2>&1 ) &
  ( GPU_CHECK_SCHEDULE="$b" GPU_CHECK_DB=regb GPU_CHECK_OUT="$OUT/regB" timeout 420 bash test/gpu_check.sh > "$OUT/regB.log" 2>&1 ) &
  wait
  printf 'test: test_setup\ntest: gpuops_stat\n' > "$OUT/schedC"
  GPU_CHECK_SCHEDULE="$OUT/schedC" GPU_CHECK_DB=regc GPU_CHECK_OUT="$OUT/regC" timeout 120 bash test/gpu_check.sh > "$OUT/regC.log" 2>&1
  echo "regress: A $(tail -n 1 "$OUT/regA.log") | B $(tail -n 1 "$OUT/regB.log") | C $(tail -n 1 "$OUT/regC.log") ($(since))"
  rm -rf "$OUT/regA/results" "$OUT/regB/results" "$OUT/regC/results"
}
fuzz() {
  GPUOPS_FUZZ_EXISTING=1 GPUOPS_FUZZ_OUT="$OUT/fuzz" timeout 270 bash test/fuzz/run.sh --device gpu \
    --seeds "${GPU_FUZZ_SEEDS:-51 52 53 54 55 56 57 58 59 60}" --queries 1000 > "$OUT/fuzz.log" 2>&1
  echo "$(tail -n 1 "$OUT/fuzz.log") ($(since))"
  rm -rf "$OUT/fuzz"
}
pgsuite() {
  PG_CONFIG=$(command -v pg_config) PGSUITE_DEVICE=gpu PGSUITE_DIR=.devkit/pgsuite \
    PGSUITE_RESULTS="$OUT/pgsuite" timeout 270 bash test/pgsuite/run.sh > "$OUT/pgsuite.log" 2>&1
  echo "$(grep '^pgsuite: [0-9]* tests' "$OUT/pgsuite.log" | tail -n 1) ($(since))"
  rm -rf "$OUT"/pgsuite/*/results
}
stress() {  # stress NAME SESSIONS SECONDS TIMEOUTS ROWS LIMIT [cancel-session options]
  local name=$1 limit=$6
  GPUOPS_STRESS_CANCEL_OPTIONS="${7:-}" GPUOPS_STRESS_EXISTING=1 GPUOPS_STRESS_OUT="$OUT/$name" \
    timeout "$limit" bash test/stress/run.sh --device gpu --sessions "$2" --seconds "$3" \
    --timeouts "$4" --rows "$5" > "$OUT/$name.log" 2>&1
  echo "$name: $(tail -n 1 "$OUT/$name.log") ($(since))"
  grep -h "after the timeout\|late:\|per idle backend\|at its peak" "$OUT/$name.log"
  rm -f "$OUT/$name/server.log" "$OUT/$name/timeouts.sql" "$OUT/$name/timeouts.out"
}
q18() {
  timeout 240 bash test/bench/q18.sh "${GPU_Q18_SCALE:-4}" > "$OUT/q18.log" 2>&1
  echo "q18: exit $? ($(since))"
  grep '^q18:' "$OUT/q18.log"
}

nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv,noheader 2>&1 | head -n 1
for part in "$@"; do
  case "$part" in
    regress) regress ;;
    fuzz) fuzz ;;
    pgsuite) pgsuite ;;
    fuzz+pgsuite) fuzz & pgsuite & wait ;;
    stress32) stress stress32 32 90 1000 300000 300 ;;
    stress200) stress stress200 200 40 100 100000 120 ;;
    stress200pg) stress stress200pg 200 40 100 100000 240 "-c gpuops.enabled=off" ;;
    stress32serial) stress stress32serial 32 60 500 300000 240 "-c max_parallel_workers_per_gather=0" ;;
    stress32pg) stress stress32pg 32 60 500 300000 240 "-c gpuops.enabled=off" ;;
    q18) q18 ;;
    *) echo "gpu_batch.sh: unknown part $part"; exit 2 ;;
  esac
done
if [ -n "${PGLOG:-}" ] && [ -f "$PGLOG" ]; then
  grep -E "gpuops device layer|gpuops: (releasing|giving)|gpuops.*at process exit" "$PGLOG" > "$OUT/slow.log"
  echo "server log: $(wc -l < "$OUT/slow.log") slow-call or slow-release lines, $(grep -cE 'terminated by signal|PANIC' "$PGLOG") crashes"
fi
