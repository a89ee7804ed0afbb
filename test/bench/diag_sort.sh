#!/bin/bash
# diag_sort.sh: where a 50M-row SELECT * ... ORDER BY k spends its time, on the
# GPU machine. Loads the bench table (through bench.sh's sort_all_inmem row,
# which also measures it), then runs the sort twice with EXPLAIN (ANALYZE,
# VERBOSE, TIMING OFF) and client_min_messages = debug1 (GpuSort reports how long returning
# the rows took, and its end), beside two floors: PostgreSQL returning the same
# rows from a serial Seq Scan and through a Gather of 8 workers, no sort.
# Writes $OUT/bench.log, $OUT/bench.md and $OUT/explain.log.
set -u
ROWS=${DIAG_ROWS:-50000000}
BENCH_RUNS=${BENCH_RUNS:-1} BENCH_ONLY=${DIAG_BENCH_ONLY:-'^sort_all_inmem$'} OUT=$OUT \
  bash test/bench/bench.sh $ROWS > $OUT/bench.log 2>&1
T=bench_$ROWS
G="SET gpuops.host_memory_limit = '48GB'; SET max_parallel_workers_per_gather = 8; SET client_min_messages = debug1; ${DIAG_SET:-}"
for i in 1 2; do
  psql -X -c "$G" -c "EXPLAIN (ANALYZE, VERBOSE, TIMING OFF, COSTS OFF) SELECT * FROM $T ORDER BY k" >> $OUT/explain.log 2>&1
done
psql -X -c "SET gpuops.enabled = off; SET max_parallel_workers_per_gather = 0" \
  -c "EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) SELECT * FROM $T" >> $OUT/explain.log 2>&1
psql -X -c "SET gpuops.enabled = off; SET max_parallel_workers_per_gather = 8; SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0" \
  -c "EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) SELECT * FROM $T" >> $OUT/explain.log 2>&1
