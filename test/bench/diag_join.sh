#!/bin/bash
# diag_join.sh: where a parallel GpuHashJoin's time goes, on the GPU machine.
# Loads the 50M-row bench table (through bench.sh's join_count_shared row,
# which also measures it), then runs the 50M x 1M count(*) join twice with
# EXPLAIN (ANALYZE, VERBOSE): the leader's node shows each process's account
# (inner and outer reading, the wait for the leader's build, its host
# directory, lookup waits).  PostgreSQL's parallel plan runs between them.
# Writes $OUT/bench.log, $OUT/bench.md and $OUT/explain.log.
set -u
BENCH_RUNS=${BENCH_RUNS:-1} BENCH_ONLY='^join_count_shared$' OUT=$OUT \
  bash test/bench/bench.sh 50000000 > $OUT/bench.log 2>&1
Q="SELECT count(*) FROM bench_50000000 b JOIN bench_dim d ON b.g = d.id"
G="SET max_parallel_workers_per_gather = 8; SET gpuops.enable_agg = off; SET enable_hashjoin = off; SET enable_mergejoin = off; ${DIAG_SET:-}"
for i in 1 2; do
  psql -X -c "$G" -c "EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) $Q" >> $OUT/explain.log 2>&1
  psql -X -c "SET gpuops.enabled = off; SET max_parallel_workers_per_gather = 8;" \
    -c "EXPLAIN (ANALYZE, COSTS OFF) $Q" >> $OUT/explain.log 2>&1
done
