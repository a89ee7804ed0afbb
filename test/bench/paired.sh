#!/bin/bash
# paired.sh ROUNDS QUERY: PostgreSQL's 8-worker plan, then gpuops' default
# plan (8 workers allowed too), of QUERY side by side, ROUNDS times: the
# ratio per round, so that machine drift between bench.sh's cells does not
# decide it.  Prints one line per round and the median ratio.  The tables
# are bench.sh's (run it first).
set -u
ROUNDS=${1:?rounds}
Q=${2:?query}
ms() {
  psql -X -q -At -c "$1" -c "EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) $Q" |
    sed -n 's/^Execution Time: \([0-9.]*\) ms$/\1/p'
}
ratios=()
for i in $(seq "$ROUNDS"); do
  pg=$(ms "SET gpuops.enabled = off; SET max_parallel_workers_per_gather = 8")
  gp=$(ms "SET gpuops.enabled = on; SET max_parallel_workers_per_gather = 8")
  r=$(awk -v a="$pg" -v b="$gp" 'BEGIN { printf "%.2f", a / b }')
  ratios+=("$r")
  echo "round $i: PostgreSQL 8 workers $pg ms, gpuops $gp ms, ${r}x"
done
printf '%s\n' "${ratios[@]}" | sort -n | awk '{ a[NR] = $1 } END { print "median ratio: " a[int((NR + 1) / 2)] "x" }'
