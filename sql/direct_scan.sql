-- gpuops operators reading a plain sequential scan's heap pages themselves
-- (gpuops.enable_direct_scan, heap_source.cpp): only the tuples visible to
-- the query's snapshot, every kind of stored column, rescans, and the
-- child's EXPLAIN row count.  Every result is compared with PostgreSQL's
-- own plan (check_sort_cols, check_join, check_agg from test_setup).
-- GpuQuery (gpuops.enable_query, on by default) would take some of these
-- query blocks whole; this file tests the direct scan under GpuSort, GpuAgg and the joins.
SET gpuops.enable_query = off;
SET gpuops.min_rows = 0;
SET gpuops.startup_cost = 0;
SET gpuops.tuple_cost = 0;
SET gpuops.cpu_fallback = off;
SET max_parallel_workers_per_gather = 0;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET gpuops.enable_mergejoin = off;

-- direct_rows(q): the rows the plan's gpuops nodes read from heap pages,
-- and the Seq Scans' own row counts (EXPLAIN ANALYZE VERBOSE)
CREATE FUNCTION direct_rows(q text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE j jsonb;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO j;
  RETURN format('direct=%s scanned=%s',
    (SELECT coalesce(sum((x #>> '{}')::int8), 0)
       FROM jsonb_path_query(j, 'strict $.**."Heap Rows Read Directly"') x),
    (SELECT coalesce(sum((x #>> '{}')::numeric::int8), 0)
       FROM jsonb_path_query(j, 'strict $.**? (@."Node Type" == "Seq Scan")."Actual Rows"') x));
END $$;

-- 150K rows over many pages; NULLs; a dropped column; columns added later
-- (old rows do not store them: a default, and NULL)
CREATE TABLE ds AS
SELECT i AS id,
       (i % 1000)::int4 AS g,
       CASE WHEN i % 7 = 0 THEN NULL ELSE i::int8 * 3 END AS k,
       md5(i::text) AS t,
       i::numeric / 7 AS n,
       (i % 3 = 0) AS b
FROM generate_series(1, 150000) i;
ALTER TABLE ds DROP COLUMN n;
ALTER TABLE ds ADD COLUMN extra int4 DEFAULT 7;
ALTER TABLE ds ADD COLUMN extra_null text;
-- TOAST-ed values: compressed inline, and out of line
UPDATE ds SET t = repeat(t, 300) WHERE id % 1000 = 0;
UPDATE ds SET t = (SELECT string_agg(md5((ds.id * j)::text), '') FROM generate_series(1, 200) j)
WHERE id % 1001 = 0;
-- dead rows, and rows with newer versions (HOT and not)
DELETE FROM ds WHERE id % 11 = 0;
UPDATE ds SET g = g + 1 WHERE id % 13 = 0;
UPDATE ds SET extra = id WHERE id % 17 = 0;
CREATE TABLE ds_dim AS SELECT i AS g, 'dim ' || i AS label FROM generate_series(0, 1000, 2) i;
ANALYZE ds;
ANALYZE ds_dim;

SELECT check_sort_cols('SELECT k, id, g, t, b, extra, extra_null FROM ds ORDER BY k, id', ARRAY['k', 'id']);
SELECT check_sort_cols('SELECT t, id FROM ds ORDER BY t COLLATE "C", id', ARRAY['t', 'id']);
SELECT check_join('SELECT a.id, a.extra, a.t, d.label FROM ds a JOIN ds_dim d ON a.g = d.g');
SELECT check_join('SELECT a.id, d.g FROM ds_dim d LEFT JOIN ds a ON a.g = d.g AND a.b');
SELECT check_agg('SELECT g, count(*), sum(k), max(extra), count(extra_null), min(t) FROM ds GROUP BY g');
SELECT direct_rows('SELECT id FROM ds ORDER BY k');
SELECT count(*) FROM ds;
SELECT direct_rows('SELECT a.id FROM ds a JOIN ds_dim d ON a.g = d.g');
SELECT count(*) + (SELECT count(*) FROM ds_dim) FROM ds;

-- the query's own changes, not yet committed, and a snapshot older than a
-- change (REPEATABLE READ): what PostgreSQL's scan would return
BEGIN;
INSERT INTO ds (id, g, k, t, b) SELECT -i, i % 10, i, 'new', true FROM generate_series(1, 5000) i;
DELETE FROM ds WHERE id % 5 = 0;
UPDATE ds SET k = -k WHERE id % 19 = 0;
SELECT check_sort_cols('SELECT k, id, t, extra FROM ds ORDER BY k, id', ARRAY['k', 'id']);
SELECT check_join('SELECT a.id, a.k, d.label FROM ds a JOIN ds_dim d ON a.g = d.g');
SELECT direct_rows('SELECT id FROM ds ORDER BY k');
SELECT count(*) FROM ds;
ROLLBACK;
SELECT check_sort_cols('SELECT k, id FROM ds ORDER BY k, id', ARRAY['k', 'id']);

-- rescans: the sort inside a LATERAL subquery runs once per outer row
SELECT check_sort_cols('SELECT o.i, s.k FROM generate_series(1, 3) o(i),
  LATERAL (SELECT k FROM (SELECT k, g FROM ds ORDER BY k OFFSET 0) x WHERE x.g = o.i LIMIT 5) s
  ORDER BY o.i, s.k', ARRAY['i', 'k']);
-- a join rescanned with a new parameter for each outer row: its outer
-- side (read directly) is read again each time
SELECT check_join('SELECT o.i, (SELECT count(*) FROM ds a JOIN ds_dim d ON a.g = d.g
                   WHERE d.g < o.i * 100) AS n FROM generate_series(1, 3) o(i)');
SELECT direct_rows('SELECT o.i, (SELECT count(*) FROM ds a JOIN ds_dim d ON a.g = d.g
                   WHERE d.g < o.i * 100) AS n FROM generate_series(1, 3) o(i)');
-- a cursor read part way, then further on: gpuops, then PostgreSQL
BEGIN;
DECLARE c CURSOR FOR SELECT k, id FROM ds ORDER BY k, id;
FETCH 3 FROM c;
MOVE FORWARD 100000 IN c;
FETCH 2 FROM c;
COMMIT;
SET gpuops.enabled = off;
BEGIN;
DECLARE c CURSOR FOR SELECT k, id FROM ds ORDER BY k, id;
FETCH 3 FROM c;
MOVE FORWARD 100000 IN c;
FETCH 2 FROM c;
COMMIT;
RESET gpuops.enabled;

-- not read directly: a scan with a qual, a computed column, the switch off
SELECT direct_rows('SELECT id FROM ds WHERE g > 10 ORDER BY k');
SELECT direct_rows('SELECT id, k + 1 AS k1 FROM ds ORDER BY id');
-- unless the computed column is a sort key the device computes (sort_exprs)
SELECT direct_rows('SELECT id, k + 1 AS k1 FROM ds ORDER BY k1');
SET gpuops.enable_direct_scan = off;
SELECT direct_rows('SELECT id FROM ds ORDER BY k');
SELECT check_sort_cols('SELECT k, id FROM ds ORDER BY k, id', ARRAY['k', 'id']);
RESET gpuops.enable_direct_scan;
