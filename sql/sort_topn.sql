-- ORDER BY ... LIMIT n [OFFSET m]: a bounded sort.  GpuSort keeps at most
-- max(2 (n + m), 256K) rows: whenever it holds that many, it sorts them and
-- keeps the best n + m (a compaction), and it returns only n + m rows.
-- Every result is compared with PostgreSQL's; ORDER BY lists end in a unique
-- column wherever rows other than the keys are returned, so that the cut
-- falls at a defined place.
SET gpuops.min_rows = 0;
SET gpuops.startup_cost = 0;
SET gpuops.tuple_cost = 0;
SET max_parallel_workers_per_gather = 0;
SET gpuops.cpu_fallback = off;
SET gpuops.host_memory_limit = '1GB';

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

-- what EXPLAIN ANALYZE says: the bound, compactions, rows returned
SELECT j->>'Sort Method' AS method, j->>'Row Bound' AS bound,
       (j->>'Compactions')::int >= 2 AS compacted, j->>'Actual Rows' AS rows_out,
       j->>'Rows' AS rows_sorted_in_all
FROM gpusort_analyze('SELECT * FROM topn_src ORDER BY k, id LIMIT 100 OFFSET 10') j;
-- a large bound: one compaction (at 2 x 200000 rows)
SELECT j->>'Compactions' AS compactions, j->>'Actual Rows' AS rows_out
FROM gpusort_analyze('SELECT * FROM topn_src ORDER BY f, id LIMIT 200000') j;

-- a LIMIT given as a parameter of a generic plan is not known at planning:
-- no bound, same rows
SET plan_cache_mode = force_generic_plan;
PREPARE topn(int8) AS SELECT k, id FROM topn_src ORDER BY k DESC, id LIMIT $1;
SELECT j ? 'Row Bound' AS bounded, j->>'Actual Rows' AS rows_out
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
