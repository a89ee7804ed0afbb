-- Inputs larger than the device memory budget: the sort runs in pieces that
-- fit (sorted runs), merged on the host.  A 1 MB budget turns these inputs
-- into dozens of runs; results must still be PostgreSQL's, including text
-- ties that straddle runs.  The CPU backend honours the same budget, so this
-- runs the same run/merge code with and without a GPU.
SET gpuops.min_rows = 0;
SET gpuops.startup_cost = 0;
SET gpuops.tuple_cost = 0;
SET max_parallel_workers_per_gather = 0;
SET gpuops.cpu_fallback = off;	-- a budget overrun must not hide behind a fallback
SET gpuops.device_memory_limit = '1MB';

SELECT check_sort('SELECT a8 AS k, id FROM sort_src ORDER BY a8');
SELECT check_sort('SELECT f8 AS k, id, pad FROM sort_src ORDER BY f8 DESC NULLS LAST');
SELECT check_sort('SELECT a4 AS k, id FROM sort_src ORDER BY a4 NULLS FIRST');
SELECT check_sort_keys('SELECT a4 AS k1, f8 AS k2, a8 AS k3, id FROM sort_src
                        ORDER BY a4 DESC, f8, a8 NULLS FIRST', 3);
SELECT check_sort_keys('SELECT t AS k1, i8 AS k2, id FROM sort_types
                        ORDER BY t COLLATE "C", i8 DESC NULLS LAST', 2);
SELECT check_sort_keys('SELECT b AS k1, t AS k2, iv AS k3, u AS k4, id AS k5 FROM sort_types
                        ORDER BY b, t COLLATE "C" DESC, iv, u, id', 5);
-- all keys equal: every run is one tie
SELECT check_sort('SELECT (id % 1)::int8 AS k, id FROM sort_src ORDER BY 1');

-- EXPLAIN ANALYZE counts the runs
SELECT (j->>'Runs')::int > 10 AS many_runs, j->>'Rows' AS rows, j ? 'Fallback' AS fell_back
FROM gpusort_analyze('SELECT id FROM sort_src ORDER BY a8') j;
RESET gpuops.device_memory_limit;
SELECT (j->>'Runs')::int AS runs_without_limit
FROM gpusort_analyze('SELECT id FROM sort_src ORDER BY a8') j;
