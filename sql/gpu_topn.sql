-- GpuTopN: ORDER BY column keys LIMIT n over one table without quals.  The
-- keys and each row's TID are read from the table's pages, the n first kept
-- by the top-N backend, and just those rows fetched by TID, in order.
-- Every result is compared with PostgreSQL's (gpuops.enabled off); ORDER BY
-- lists end in a unique column wherever other columns are returned, so the
-- cut falls at a defined place.
SET gpuops.min_rows = 0;
SET gpuops.startup_cost = 0;
SET gpuops.cpu_fallback = off;
-- GpuSort's bounded sort competes on cost (sort_topn.sql tests it): off, so
-- that the plans here do not depend on the machine's costs
SET gpuops.enable_sort = off;
-- PostgreSQL's bounded sort costs less where its rows fit work_mem, which
-- differs between servers (CI's 4MB, the GPU machine's 1GB): one for all
SET work_mem = '64MB';
SET max_parallel_workers_per_gather = 0;

-- check_topn(q, nkeys): check_sort_keys, and whether GpuTopN planned q
CREATE FUNCTION check_topn(q text, nkeys int) RETURNS text
LANGUAGE sql AS $$ SELECT check_sort_keys(q, nkeys) || ' topn=' || uses_node(q, 'GpuTopN') $$;

-- 300000 rows (more than the 256K candidates the backend holds before its
-- first cut): keys of every type taken, with duplicates, NULLs, extremes,
-- NaN, -0 and infinities; a wide text column, some of it toasted; then
-- updates (HOT and not) and deletes, so that dead rows and moved rows sit
-- beside the live ones
CREATE TABLE topn_rows AS
SELECT i AS id,
       CASE WHEN i % 101 = 0 THEN NULL WHEN i % 997 = 0 THEN 9223372036854775807
            WHEN i % 991 = 0 THEN -9223372036854775808
            ELSE (i::int8 * 7919) % 5003 - 2500 END AS k8,
       ((i * 31) % 977 - 400)::int4 AS k4,
       ((i * 13) % 300)::int2 AS s2,
       CASE WHEN i % 89 = 0 THEN 'NaN'::float8 WHEN i % 83 = 0 THEN '-0'::float8
            WHEN i % 79 = 0 THEN '-Infinity'::float8 WHEN i % 73 = 0 THEN NULL
            ELSE ((i * 17) % 1000) / 7.0 END AS f8,
       ((i * 7) % 500 / 3.0)::float4 AS f4,
       date '2020-01-01' + (i * 37) % 2000 AS d,
       timestamp '2020-01-01' + ((i * 53) % 100000) * interval '1 minute' AS ts,
       (i % 3 = 0) AS b,
       CASE WHEN i % 50000 = 0 THEN repeat(md5(i::text), 500) ELSE 'row ' || i END AS t
FROM generate_series(1, 300000) i;
UPDATE topn_rows SET k8 = k8 - 1 WHERE id % 17 = 0 AND k8 > 0;
UPDATE topn_rows SET t = t || ' moved' WHERE id % 23 = 0;
DELETE FROM topn_rows WHERE id % 29 = 0;
ANALYZE topn_rows;

SELECT q, check_topn('SELECT ' || q, 2)
FROM (VALUES
  ('k8 AS k1, id AS k2, t FROM topn_rows ORDER BY k8, id LIMIT 10'),
  ('k8 AS k1, id AS k2, k4, s2, f8, f4, d, ts, b, t FROM topn_rows ORDER BY k8 DESC, id LIMIT 1000'),
  ('k8 AS k1, id AS k2 FROM topn_rows ORDER BY k8 NULLS FIRST, id DESC LIMIT 2000'),
  ('k8 AS k1, id AS k2 FROM topn_rows ORDER BY k8 DESC NULLS LAST, id LIMIT 50 OFFSET 1150'),
  ('k4 AS k1, id AS k2, s2 FROM topn_rows ORDER BY k4, id LIMIT 30000'),
  ('s2 AS k1, id AS k2, d FROM topn_rows ORDER BY s2 DESC, id LIMIT 777'),
  ('f8 AS k1, id AS k2 FROM topn_rows ORDER BY f8 DESC, id LIMIT 5000'),
  ('f8 AS k1, id AS k2 FROM topn_rows ORDER BY f8 NULLS FIRST, id LIMIT 5000'),
  ('f4 AS k1, id AS k2, f8 FROM topn_rows ORDER BY f4, id LIMIT 100'),
  ('d AS k1, id AS k2, ts FROM topn_rows ORDER BY d DESC, id DESC LIMIT 400'),
  ('ts AS k1, id AS k2 FROM topn_rows ORDER BY ts, id LIMIT 64'),
  ('b AS k1, id AS k2 FROM topn_rows ORDER BY b DESC, id LIMIT 3'),
  ('id AS k1, id AS k2, t FROM topn_rows ORDER BY id DESC LIMIT 25')
) v(q);
-- three keys; every row (a bound over the row count: PostgreSQL's sort by
-- cost, fetching every row by TID would cost more); an OFFSET
SELECT check_topn('SELECT s2 AS k1, k4 AS k2, id AS k3, t FROM topn_rows ORDER BY s2, k4 DESC, id LIMIT 4000', 3);
SELECT check_topn('SELECT k8 AS k1, id AS k2, t FROM topn_rows ORDER BY k8, id LIMIT 1000000', 2);
SELECT check_topn('SELECT k8 AS k1, id AS k2 FROM topn_rows ORDER BY k8, id LIMIT 10 OFFSET 20000', 2);
-- only the key returned: ties at the cut do not matter
SELECT check_sort('SELECT k4 AS k FROM topn_rows ORDER BY k4 DESC LIMIT 12345'),
       uses_node('SELECT k4 FROM topn_rows ORDER BY k4 DESC LIMIT 12345', 'GpuTopN') AS topn;

-- read by parallel workers walking the pages (the leader ships their batches)
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT check_topn('SELECT k8 AS k1, id AS k2, t FROM topn_rows ORDER BY k8 DESC, id LIMIT 3000', 2);
SELECT check_topn('SELECT f8 AS k1, id AS k2, d FROM topn_rows ORDER BY f8, id LIMIT 10000', 2);
-- the workers fetch the rows by TID too (a bound of two chunks and more:
-- query_parallel_fetch.h), each chunk's rows while they fit in its slot
-- and the leader the rest: here wide rows come first, far wider than the
-- table's average row that sizes the slots
CREATE TABLE topn_wide AS
SELECT i AS id,
       CASE WHEN i % 10 = 0 THEN -(i::int8 * 7919 % 100003) ELSE i::int8 * 7919 % 100003 END AS k,
       CASE WHEN i % 10 = 0 THEN (SELECT string_agg(md5(i::text || j), '') FROM generate_series(1, 45) j)
            ELSE 'r' || i END AS t
FROM generate_series(1, 60000) i;
ANALYZE topn_wide;
SELECT check_topn('SELECT k AS k1, id AS k2, t FROM topn_wide ORDER BY k, id LIMIT 9000', 2);
SELECT check_topn('SELECT k AS k1, id AS k2, t FROM topn_wide ORDER BY k DESC, id LIMIT 20 OFFSET 4000', 2);
-- the workers fetched rows (in one of five runs at least: the leader
-- takes a chunk no worker has taken yet, so a run where none was scheduled
-- in time has none), never the wide ones past their slot's room
SELECT bool_or(f > 0) AS workers_fetched, bool_and(f < 9000) AS leader_fetched_the_rest,
       min(n) AS rows_out
FROM (SELECT (j->>'Rows Fetched By Workers')::int8 AS f, (j->>'Actual Rows')::numeric::int8 AS n
      FROM generate_series(1, 5) i,
           LATERAL node_analyze('SELECT * FROM topn_wide ORDER BY k, id LIMIT 9000 -- run ' || i,
                                'GpuTopN') j) r;
DROP TABLE topn_wide;
SELECT j->>'Bound' AS bound, (j->>'Workers Planned')::int > 0 AS workers_planned,
       (j->>'Rows Read')::int8 AS rows_read, (j->>'Rows Kept')::int8 >= 500 AS kept_at_least_bound,
       (j->>'Actual Rows')::numeric::int8 AS rows_out
FROM node_analyze('SELECT * FROM topn_rows ORDER BY k8, id LIMIT 500', 'GpuTopN') j;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET min_parallel_table_scan_size;
SET max_parallel_workers_per_gather = 0;

-- the plan: the keys and the bound; every live row read once
EXPLAIN (COSTS OFF) SELECT id, t FROM topn_rows ORDER BY k8 DESC NULLS LAST, f4 LIMIT 10 OFFSET 5;
SELECT j->>'Bound' AS bound, (j->>'Rows Read')::int8 AS rows_read,
       (j->>'Actual Rows')::numeric::int8 AS rows_out, (j->>'Cuts')::int >= 2 AS cut_while_reading
FROM node_analyze('SELECT * FROM topn_rows ORDER BY k8, id LIMIT 500', 'GpuTopN') j;
SELECT count(*) AS live_rows FROM topn_rows;

-- this transaction's own changes: rows it deleted are not read, rows it
-- inserted are, under its snapshot
BEGIN;
DELETE FROM topn_rows WHERE k8 < -2000;
INSERT INTO topn_rows (id, k8, t) SELECT 200000 + i, -3000 - i, 'new' FROM generate_series(1, 40) i;
SELECT check_topn('SELECT k8 AS k1, id AS k2, t FROM topn_rows ORDER BY k8, id LIMIT 100', 2);
ROLLBACK;

-- a cursor (no parallel mode), read backward too (a Material keeps the rows)
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT id, k8 FROM topn_rows ORDER BY k8 DESC, id LIMIT 5;
FETCH 3 FROM c;
FETCH BACKWARD 2 FROM c;
FETCH ALL FROM c;
COMMIT;

-- run again for each outer row (a rescan returns the same rows)
SELECT v.x, s.id
FROM (VALUES (1), (2)) v(x),
     LATERAL (SELECT id FROM topn_rows ORDER BY k8 DESC, id LIMIT 3 OFFSET v.x * 0) s
ORDER BY v.x, s.id;

-- an empty table; LIMIT 0
CREATE TABLE topn_empty (k int8, v text);
SELECT count(*) FROM (SELECT * FROM topn_empty ORDER BY k LIMIT 10) s;
SELECT uses_node('SELECT * FROM topn_empty ORDER BY k LIMIT 10', 'GpuTopN') AS topn;
SELECT count(*) FROM (SELECT * FROM topn_rows ORDER BY k8 LIMIT 0) s;

-- what keeps PostgreSQL's plan: a WHERE clause, a key of
-- another type or an expression, no LIMIT, WITH TIES, row locks, the switch
SELECT q, uses_node(q, 'GpuTopN') AS topn
FROM (VALUES
  ('SELECT * FROM topn_rows WHERE k4 > 0 ORDER BY k8 LIMIT 10'),
  ('SELECT * FROM topn_rows ORDER BY t LIMIT 10'),
  ('SELECT * FROM topn_rows ORDER BY k8 + 1 LIMIT 10'),
  ('SELECT * FROM topn_rows ORDER BY k8'),
  ('SELECT * FROM topn_rows ORDER BY k8 FETCH FIRST 10 ROWS WITH TIES'),
  ('SELECT * FROM topn_rows ORDER BY k8 LIMIT 10 FOR UPDATE'),
  ('SELECT * FROM topn_rows r JOIN topn_empty e ON e.k = r.k8 ORDER BY r.k8 LIMIT 10')
) v(q);
SET gpuops.enable_topn = off;
SELECT uses_node('SELECT * FROM topn_rows ORDER BY k8 LIMIT 10', 'GpuTopN') AS topn;
RESET gpuops.enable_topn;

-- a device failure: the CPU backend reads the table again and answers
SET gpuops.cpu_fallback = on;
SET gpuops.fault_injection = kernel_error;
SELECT check_topn('SELECT k8 AS k1, id AS k2, t FROM topn_rows ORDER BY k8, id LIMIT 20', 2);
SELECT j->>'Fallback' IS NOT NULL AS fell_back, (j->>'Actual Rows')::numeric::int8 AS rows_out
FROM node_analyze('SELECT * FROM topn_rows ORDER BY k8, id LIMIT 20', 'GpuTopN') j;
RESET gpuops.fault_injection;

DROP TABLE topn_rows;
DROP TABLE topn_empty;
DROP FUNCTION check_topn(text, int);
