#!/usr/bin/env bash
# Where parallel and serial GpuAgg spend their time: EXPLAIN (ANALYZE, VERBOSE)
# with per-worker figures, PostgreSQL's plan, GpuAgg partial in 8 workers on
# CUDA and on the CPU backend, and serial GpuAgg, over a fresh table p of N rows
# (default 50M).  doc/benchmarks.md's per-worker figures come from it.  GPU machine:
#   .devkit/pgrun.sh -c gpuops.device=gpu -- bash test/bench/agg_probe.sh [N]
set -u
N=${1:-50000000}
q() { psql -X -q -At "$@"; }
. "$(dirname "$0")/lib.sh"
q -c "CREATE EXTENSION IF NOT EXISTS gpuops"
q -c "CREATE UNLOGGED TABLE p (id int8, k int8, g int4, v int4, t text)"
load_parallel p "$N" "i, 0, floor(random() * 1000000)::int4, floor(random() * 2e9 - 1e9)::int4, ''" \
  || { echo "agg_probe.sh: loading p failed" >&2; exit 1; }
q -c "VACUUM ANALYZE p" -c "ALTER TABLE p SET (parallel_workers = 8)"
run() { echo "== $1"; psql -X -q -c "SET max_parallel_workers_per_gather = 8" -c "$2" -c "EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) $3" 2>&1 | grep -v "^ *Output:"; }
run "pg global" "SET gpuops.enabled = off" "SELECT count(*), sum(v), avg(v) FROM p"
run "gpu global" "SET gpuops.enabled = on" "SELECT count(*), sum(v), avg(v) FROM p"
run "gpu global again" "SET gpuops.enabled = on" "SELECT count(*), sum(v), avg(v) FROM p"
run "cpu twin global" "SET gpuops.device = cpu" "SELECT count(*), sum(v), avg(v) FROM p"
run "gpu g16 partial (forced by parallel_tuple_cost 0)" "SET parallel_tuple_cost = 0" "SELECT g % 16, count(*), sum(v), avg(v) FROM p GROUP BY 1"
run "gpu g1m partial" "SET parallel_tuple_cost = 0" "SELECT g, count(*), sum(v), avg(v) FROM p GROUP BY 1"
run "gpu g1m serial" "SET max_parallel_workers_per_gather = 0" "SELECT g, count(*), sum(v), avg(v) FROM p GROUP BY 1"
