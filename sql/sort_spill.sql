-- Inputs larger than GpuSort's host memory limit (gpuops.host_memory_limit,
-- by default work_mem, as for PostgreSQL's own sort): each time the rows
-- held reach the limit they are sorted and written to a temporary file as a
-- run; the runs and the last, in-memory one are merged with PostgreSQL's
-- comparators.  Results must be PostgreSQL's, ties included.
SET gpuops.min_rows = 0;
SET gpuops.startup_cost = 0;
SET gpuops.tuple_cost = 0;
SET max_parallel_workers_per_gather = 0;
SET gpuops.cpu_fallback = off;
SET work_mem = '1MB';			-- PostgreSQL's sort spills too
SET gpuops.enable_sort_park = off;	-- rows go to files, not device memory (sort_park.sql)

SELECT check_sort('SELECT a8 AS k, id FROM sort_src ORDER BY a8');
SELECT check_sort('SELECT f8 AS k, id, pad FROM sort_src ORDER BY f8 DESC NULLS LAST');
SELECT check_sort_keys('SELECT a4 AS k1, f8 AS k2, a8 AS k3, id, pad FROM sort_src
                        ORDER BY a4 DESC, f8, a8 NULLS FIRST', 3);
-- text with long values, TOAST-ed values and shared prefixes, ties
-- straddling runs; numeric; ICU-free collations only here
SELECT check_sort_keys('SELECT t AS k1, i8 AS k2, id FROM sort_types
                        ORDER BY t COLLATE "C", i8 DESC NULLS LAST', 2);
SELECT check_sort_keys('SELECT b AS k1, t AS k2, iv AS k3, u AS k4, id AS k5, d, ts FROM sort_types
                        ORDER BY b, t COLLATE "C" DESC, iv, u, id', 5);
SELECT check_sort('SELECT (id % 1)::int8 AS k, id FROM sort_src ORDER BY 1');
-- bounded and spilling: only the bound's rows are written per run
SELECT check_sort_keys('SELECT a4 AS k1, id AS k2, pad FROM sort_src ORDER BY a4, id LIMIT 150000', 2);

-- EXPLAIN ANALYZE: runs went to disk
SELECT (j->>'Spilled Runs')::int > 1 AS spilled, (j->>'Spilled Disk')::int > 1000 AS disk_kb,
       (j->>'Actual Rows')::numeric::int8 AS rows_out
FROM gpusort_analyze('SELECT * FROM sort_src ORDER BY a8') j;
-- a larger limit keeps everything in memory
SET gpuops.host_memory_limit = '1GB';
SELECT j ? 'Spilled Runs' AS spilled FROM gpusort_analyze('SELECT * FROM sort_src ORDER BY a8') j;
SET gpuops.host_memory_limit = '1MB';
SET work_mem = '64MB';
SELECT (j->>'Spilled Runs')::int > 1 AS spilled_by_own_limit
FROM gpusort_analyze('SELECT * FROM sort_src ORDER BY a8') j;
RESET gpuops.host_memory_limit;
SET work_mem = '1MB';

-- backward scans of a spilled sort (the merged output is kept in a tuplestore)
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT a8, id FROM sort_src ORDER BY a8 DESC, id;
MOVE FORWARD 150000 c;
FETCH 3 c;
FETCH BACKWARD 4 c;
MOVE LAST c;
FETCH BACKWARD 2 c;
FETCH FIRST c;
COMMIT;
SET gpuops.enabled = off;
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT a8, id FROM sort_src ORDER BY a8 DESC, id;
MOVE FORWARD 150000 c;
FETCH 3 c;
FETCH BACKWARD 4 c;
MOVE LAST c;
FETCH BACKWARD 2 c;
FETCH FIRST c;
COMMIT;
RESET gpuops.enabled;

-- a spilled sort scanned again (a nested loop without Materialize): the
-- merge restarts from the files
SET enable_material = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT check_sort_cols($q$
  SELECT v.x, s.k, s.id FROM (VALUES (1), (2)) v(x),
    LATERAL (SELECT a8 AS k, id FROM sort_src ORDER BY a8 OFFSET 0) s$q$, ARRAY['x', 'k']);
RESET enable_material;
RESET enable_hashjoin;
RESET enable_mergejoin;

-- cancel while spilling: no temporary file stays behind, and the device
-- memory of the cancelled sort is free again (a sort under a small device
-- budget still fits)
SELECT uses_gpusort('SELECT s.pad, g FROM sort_src s, generate_series(1, 20) g ORDER BY s.pad, g') AS cancel_query_uses_gpusort;
SET statement_timeout = '1s';
DO $$
BEGIN
  PERFORM count(*) FROM (SELECT s.pad, g FROM sort_src s, generate_series(1, 20) g ORDER BY s.pad, g) x;
  RAISE NOTICE 'not cancelled';
EXCEPTION WHEN query_canceled THEN
  RAISE NOTICE 'cancelled: %', SQLERRM;
END $$;
RESET statement_timeout;
SELECT count(*) AS temp_files_left FROM pg_ls_tmpdir();
SET gpuops.device_memory_limit = '8MB';
SELECT check_sort('SELECT a8 AS k, id FROM sort_src ORDER BY a8');
RESET gpuops.device_memory_limit;
