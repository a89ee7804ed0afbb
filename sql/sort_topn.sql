-- ORDER BY ... LIMIT n [OFFSET m]: a bounded sort.  GpuSort keeps at most
-- max(2 (n + m), 256K) rows: whenever it holds that many, it sorts them and
-- keeps the best n + m (a compaction), and it returns only n + m rows.
-- Every result is compared with PostgreSQL's; ORDER BY lists end in a unique
-- column wherever rows other than the keys are returned, so that the cut
-- falls at a defined place.
-- GpuTopN would read this file's top-N queries by row position (gpu_topn.sql
-- tests it): off, so that GpuSort's bounded sort is what they test
SET gpuops.enable_topn = off;
SET gpuops.min_rows = 0;
SET gpuops.startup_cost = 0;
SET gpuops.tuple_cost = 0;
SET max_parallel_workers_per_gather = 0;
SET gpuops.cpu_fallback = off;
SET gpuops.host_memory_limit = '1GB';
-- every bounded sort on the primary backend (the device on a GPU machine);
-- the default, sorting small bounds on the CPU, is tested at the end
SET gpuops.topn_device_min_bound = 0;

-- 600000 rows: k with duplicates, NULLs and extremes; t with a shared
-- 20-byte prefix (ties on the device's 16-byte prefix, resolved by the
-- comparator after every compaction)
CREATE TABLE topn_src AS
SELECT i AS id,
       CASE WHEN i % 101 = 0 THEN NULL WHEN i % 997 = 0 THEN 9223372036854775807
            ELSE (i::int8 * 7919) % 5003 - 2500 END AS k,
       'shared-prefix-twenty' || lpad(((i * 7) % 600011)::text, 7, '0') AS t,
       CASE WHEN i % 89 = 0 THEN 'NaN'::float8 ELSE (i % 1000) / 7.0 END AS f
FROM generate_series(1, 600000) i;
ANALYZE topn_src;

SELECT check_sort_keys('SELECT k AS k1, id AS k2, t FROM topn_src ORDER BY k, id LIMIT 10', 2);
SELECT check_sort_keys('SELECT k AS k1, id AS k2, t FROM topn_src ORDER BY k DESC NULLS FIRST, id LIMIT 100', 2);
SELECT check_sort_keys('SELECT k AS k1, id AS k2 FROM topn_src ORDER BY k, id LIMIT 1000 OFFSET 5000', 2);
SELECT check_sort('SELECT t COLLATE "C" AS k, id FROM topn_src ORDER BY 1 LIMIT 3000 OFFSET 17');
SELECT check_sort('SELECT t COLLATE "C" AS k, id FROM topn_src ORDER BY 1 DESC LIMIT 70000');
SELECT check_sort_keys('SELECT f AS k1, id AS k2 FROM topn_src ORDER BY f DESC, id LIMIT 200000', 2);
SELECT check_sort_keys('SELECT f AS k1, id AS k2 FROM topn_src ORDER BY f, id LIMIT 299999 OFFSET 1', 2);
-- a bound above the row count, and LIMIT ALL / NULL (no bound)
SELECT check_sort_keys('SELECT k AS k1, id AS k2 FROM topn_src ORDER BY k, id LIMIT 10000000', 2);
SELECT check_sort_keys('SELECT k AS k1, id AS k2 FROM topn_src ORDER BY k, id LIMIT ALL', 2);
SELECT check_sort_keys('SELECT k AS k1, id AS k2 FROM topn_src ORDER BY k, id LIMIT NULL OFFSET 599990', 2);
SELECT check_sort_keys('SELECT k AS k1, id AS k2 FROM topn_src ORDER BY k, id LIMIT 0', 2);
-- only the keys returned: ties at the cut do not matter
SELECT check_sort('SELECT k FROM topn_src ORDER BY k DESC LIMIT 12345');

-- FETCH FIRST ... WITH TIES needs every row tying with the last: no bound
SELECT check_sort_keys('SELECT k AS k1, f AS k2, id FROM topn_src ORDER BY k, f FETCH FIRST 50 ROWS WITH TIES', 2);
SELECT j ? 'Row Bound' AS bounded
FROM gpusort_analyze('SELECT k FROM topn_src ORDER BY k FETCH FIRST 50 ROWS WITH TIES') j;

-- what EXPLAIN ANALYZE says: the bound, compactions, rows returned, and
-- the rows the cut dropped as they were read (below): of 600000, all but the
-- first compaction's 65536 and the few that beat the cut after it
SELECT j->>'Sort Method' AS method, j->>'Row Bound' AS bound,
       (j->>'Compactions')::int >= 1 AS compacted, (j->>'Actual Rows')::numeric::int8 AS rows_out,
       (j->>'Rows')::int8 < 80000 AS few_rows_sorted,
       (j->>'Rows Removed by Bound')::int8 + (j->>'Rows')::int8 >= 600000 AS every_row_seen
FROM gpusort_analyze('SELECT * FROM topn_src ORDER BY k, id LIMIT 100 OFFSET 10') j;

-- The cut.  After a compaction the store holds the best n + m rows in
-- order; a row whose first key sorts after the last of them is dropped as it
-- is read (heap pages read directly, or through the executor), before its
-- other columns are copied.  Rows equal to it are kept: the later keys may
-- still put them first.  Input in key order, in reverse order (every row
-- beats the cut), with many ties at the cut, a NULL cut, NaN and -0 at the
-- cut, text keys of every length, and toasted text.
CREATE TABLE topn_cut AS
SELECT i AS id, i::int8 AS up, (-i)::int8 AS down, (i % 7)::int4 AS m,
       CASE WHEN i % 5 = 0 THEN NULL ELSE i END AS n,
       CASE WHEN i % 3 = 0 THEN 'NaN'::float8 WHEN i % 3 = 1 THEN '-0'::float8
            ELSE (i % 1000)::float8 END AS f,
       CASE WHEN i % 50000 = 0 THEN repeat(md5(i::text), 4000)
            ELSE repeat('p', i % 40) || i END AS t
FROM generate_series(1, 300000) i;
ANALYZE topn_cut;
SELECT q, check_sort_keys('SELECT ' || q, 2)
FROM (VALUES
  ('up AS k1, id AS k2, m FROM topn_cut ORDER BY up, id LIMIT 50'),
  ('down AS k1, id AS k2, t FROM topn_cut ORDER BY down, id LIMIT 50'),
  ('up AS k1, id AS k2 FROM topn_cut ORDER BY up DESC, id LIMIT 70 OFFSET 30'),
  ('m AS k1, id AS k2, up FROM topn_cut ORDER BY m, id LIMIT 1000'),
  ('m AS k1, up AS k2, id FROM topn_cut ORDER BY m DESC, up DESC LIMIT 999'),
  ('n AS k1, id AS k2 FROM topn_cut ORDER BY n NULLS FIRST, id LIMIT 100'),
  ('n AS k1, id AS k2 FROM topn_cut ORDER BY n DESC, id DESC LIMIT 61000'),
  ('n AS k1, id AS k2 FROM topn_cut ORDER BY n DESC NULLS LAST, id LIMIT 100'),
  ('f AS k1, id AS k2 FROM topn_cut ORDER BY f DESC, id LIMIT 500'),
  ('f AS k1, id AS k2 FROM topn_cut ORDER BY f, id DESC LIMIT 100001'),
  ('t COLLATE "C" AS k1, id AS k2 FROM topn_cut ORDER BY 1, 2 LIMIT 300'),
  ('t COLLATE "C" AS k1, id AS k2 FROM topn_cut ORDER BY 1 DESC, 2 LIMIT 10')
) v(q);
-- a cut whose value is compressed (every key here is): kept decompressed
CREATE TABLE topn_long AS
SELECT i AS id, repeat(chr(65 + i % 26), 3000) || i AS t FROM generate_series(1, 100000) i;
SELECT check_sort_keys('SELECT t COLLATE "C" AS k1, id AS k2 FROM topn_long ORDER BY 1 DESC, 2 LIMIT 5', 2);
SELECT (j->>'Rows Removed by Bound')::int8 > 30000 AS cut
FROM gpusort_analyze('SELECT t COLLATE "C" FROM topn_long ORDER BY 1 DESC LIMIT 5') j;
-- through the executor (a qual on the scan): the same cut
SELECT check_sort_keys('SELECT up AS k1, id AS k2 FROM topn_cut WHERE m <> 3 ORDER BY up, id LIMIT 40', 2);
-- what was cut: on input in key order every row after the first compaction
-- (65536 rows); in reverse order none (the next compaction would come at
-- 262144 rows held)
SELECT j->>'Compactions' AS compactions, (j->>'Rows Removed by Bound')::int8 AS cut,
       (j->>'Heap Rows Read Directly')::int8 AS read_directly
FROM gpusort_analyze('SELECT * FROM topn_cut ORDER BY up LIMIT 50', true) j;
SELECT j->>'Compactions' AS compactions, (j->>'Rows Removed by Bound')::int8 AS cut
FROM gpusort_analyze('SELECT * FROM topn_cut ORDER BY down LIMIT 50') j;
SELECT j->>'Compactions' AS compactions, (j->>'Rows Removed by Bound')::int8 AS cut,
       j ? 'Heap Rows Read Directly' AS read_directly
FROM gpusort_analyze('SELECT * FROM topn_cut WHERE m <> 3 ORDER BY up LIMIT 40', true) j;
-- rescans with new parameters: each sort sets its cut afresh
SELECT check_join_on('SELECT o.m, x.up, x.id FROM (VALUES (0), (3), (6)) o(m),
                      LATERAL (SELECT up, id FROM topn_cut c WHERE c.m = o.m
                               ORDER BY up DESC, id LIMIT 5) x', 'GpuSort');
-- a large bound: one compaction (at 2 x 200000 rows)
SELECT j->>'Compactions' AS compactions, (j->>'Actual Rows')::numeric::int8 AS rows_out
FROM gpusort_analyze('SELECT * FROM topn_src ORDER BY f, id LIMIT 200000') j;

-- a LIMIT given as a parameter of a generic plan is not known at planning:
-- no bound, same rows
SET plan_cache_mode = force_generic_plan;
PREPARE topn(int8) AS SELECT k, id FROM topn_src ORDER BY k DESC, id LIMIT $1;
SELECT j ? 'Row Bound' AS bounded, (j->>'Actual Rows')::numeric::int8 AS rows_out
FROM gpusort_analyze('EXECUTE topn(25)') j;
EXECUTE topn(25);
SET gpuops.enabled = off;
EXECUTE topn(25);
RESET gpuops.enabled;
DEALLOCATE topn;
RESET plan_cache_mode;

-- backward fetches through a scroll cursor over a bounded sort
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT k, id FROM topn_src ORDER BY k, id LIMIT 5 OFFSET 2;
FETCH ALL c;
FETCH BACKWARD 3 c;
FETCH FIRST c;
COMMIT;
SET gpuops.enabled = off;
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT k, id FROM topn_src ORDER BY k, id LIMIT 5 OFFSET 2;
FETCH ALL c;
FETCH BACKWARD 3 c;
FETCH FIRST c;
COMMIT;
RESET gpuops.enabled;

-- by default a bound below gpuops.topn_device_min_bound (65536) sorts on
-- the CPU backend, starting no device; the same rows
RESET gpuops.topn_device_min_bound;
SELECT line FROM plan_lines('SELECT * FROM topn_cut ORDER BY up LIMIT 50') line
WHERE line ~ 'Sorts On|Row Bound';
SELECT check_sort_keys('SELECT down AS k1, id AS k2, t FROM topn_cut ORDER BY down, id LIMIT 50', 2);
SELECT check_sort_keys('SELECT n AS k1, id AS k2 FROM topn_cut ORDER BY n NULLS FIRST, id LIMIT 100', 2);
SELECT j->>'Backend' AS backend, j->>'Compactions' AS compactions,
       (j->>'Rows Removed by Bound')::int8 AS cut
FROM gpusort_analyze('SELECT * FROM topn_cut ORDER BY up LIMIT 50') j;
SELECT count(*) AS sorts_on_lines FROM plan_lines('SELECT * FROM topn_cut ORDER BY up LIMIT 65536') line
WHERE line ~ 'Sorts On';
