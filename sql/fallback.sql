-- Device failures (forced by gpuops.fault_injection): with cpu_fallback the
-- query finishes on the CPU backend with PostgreSQL's results; without it, a
-- clear error with the failure's SQLSTATE.  The same messages appear on the
-- GPU and on the CPU backend.
SET gpuops.min_rows = 0;
SET gpuops.startup_cost = 0;
SET gpuops.tuple_cost = 0;
SET max_parallel_workers_per_gather = 0;

SET gpuops.cpu_fallback = notice;
SET gpuops.fault_injection = no_device;
SELECT check_sort('SELECT a8 AS k, id FROM sort_src ORDER BY a8');
SET gpuops.fault_injection = out_of_memory;
SELECT check_sort('SELECT f8 AS k, id FROM sort_src ORDER BY f8 DESC');
SET gpuops.fault_injection = kernel_error;
SELECT check_sort('SELECT a4 AS k, pad FROM sort_src ORDER BY a4 NULLS FIRST');
-- EXPLAIN ANALYZE says it fell back
SELECT j->>'Backend' AS backend, j->>'Fallback' AS fallback, j->>'Rows' AS rows
FROM gpusort_analyze('SELECT id FROM sort_src ORDER BY a8') j;

-- on: the same, silently
SET gpuops.cpu_fallback = on;
SELECT check_sort('SELECT a4 AS k, id FROM sort_src ORDER BY a4 DESC');

-- off: errors with SQLSTATEs 55000, 53200, 58000
SET gpuops.cpu_fallback = off;
SET gpuops.fault_injection = no_device;
SELECT sql_error('SELECT count(*) FROM (SELECT a8 FROM sort_src ORDER BY a8 OFFSET 0) s');
SET gpuops.fault_injection = out_of_memory;
SELECT sql_error('SELECT count(*) FROM (SELECT a8 FROM sort_src ORDER BY a8 OFFSET 0) s');
SET gpuops.fault_injection = kernel_error;
SELECT sql_error('SELECT count(*) FROM (SELECT a8 FROM sort_src ORDER BY a8 OFFSET 0) s');
-- the plain ERROR as a client sees it
SELECT count(*) FROM (SELECT a8 FROM sort_src ORDER BY a8 OFFSET 0) s;
-- nothing is left behind: the next sorts run normally
RESET gpuops.fault_injection;
SELECT check_sort('SELECT a8 AS k, id FROM sort_src ORDER BY a8');
RESET gpuops.cpu_fallback;

-- a cancelled sort (statement timeout while the input is being read) leaves
-- nothing behind either
SET statement_timeout = '200ms';
SELECT count(*) FROM (SELECT a8, pg_sleep(0.01) FROM sort_src ORDER BY a8 OFFSET 0) s;
RESET statement_timeout;
SELECT check_sort('SELECT a8 AS k, id FROM sort_src ORDER BY a8 DESC');
