#!/usr/bin/env bash
# GpuAgg's hash strategy against its sort strategy: device time (EXPLAIN
# ANALYZE's Kernel Time) and execution time per group count, serial GpuAgg,
# over a fresh table p of N rows (default 50M).  GPU machine:
#   .devkit/pgrun.sh -c gpuops.device=gpu -- bash test/bench/agg_strategy.sh [N]
set -u
N=${1:-50000000}
q() { psql -X -q -At "$@"; }
. "$(dirname "$0")/lib.sh"
q -c "CREATE EXTENSION IF NOT EXISTS gpuops"
if [ "$(q -c "SELECT count(*) FROM pg_class WHERE relname = 'p'")" = 0 ]; then
  q -c "CREATE UNLOGGED TABLE p (id int8, g int4, v int4)"
  load_parallel p "$N" "i, floor(random() * 1000000)::int4, floor(random() * 2e9 - 1e9)::int4" \
    || { echo "agg_strategy.sh: loading p failed" >&2; exit 1; }
  q -c "VACUUM ANALYZE p"
fi
echo "| groups | strategy | kernel ms | copy ms | execution ms |"
echo "|---|---|---:|---:|---:|"
for spec in "16|g % 16" "1k|g % 1000" "64k|g % 65536" "1M|g"; do
  name=${spec%%|*}; key=${spec#*|}
  for mode in "hash|SET gpuops.agg_hash_max_groups = 16000000" "sort|SET gpuops.agg_hash_max_groups = 0"; do
    m=${mode%%|*}; set=${mode#*|}
    for run in 1 2; do
      out=$(psql -X -q -At -c "SET max_parallel_workers_per_gather = 0" -c "$set" \
        -c "EXPLAIN (ANALYZE, COSTS OFF) SELECT $key AS grp, count(*), sum(v), avg(v), min(v), max(v) FROM p GROUP BY 1")
      [ $run = 2 ] || continue
      k=$(echo "$out" | sed -n 's/.*Kernel Time: \([0-9.]*\).*/\1/p')
      c=$(echo "$out" | sed -n 's/.*Copy Time: \([0-9.]*\).*/\1/p')
      e=$(echo "$out" | sed -n 's/.*Execution Time: \([0-9.]*\).*/\1/p')
      s=$(echo "$out" | sed -n 's/.*Strategy: \(.*\)/\1/p')
      o=$(echo "$out" | grep -c "Hash Overflow")
      echo "| $name | $m ($s$( [ $o = 1 ] && echo ', overflow')) | $k | $c | $e |"
    done
  done
done
