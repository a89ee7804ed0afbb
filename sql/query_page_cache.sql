-- The page service's device cache (gpuops_page_service.h): on the GPU the
-- service keeps the pages it gathers for GpuQuery and serves a page again
-- from device memory while its buffer, relation, block and LSN are the
-- same.  Every change below (updates in place and elsewhere, deletes,
-- VACUUM's pruning and defragmenting, inserts into freed space, a new
-- table in the old one's buffers, an unlogged table) must show in the next
-- result, compared with PostgreSQL's (gpuops.enabled = off).  Without a GPU
-- there is no service and this checks the same queries on the CPU backend.
SET gpuops.min_rows = 0;
SET gpuops.startup_cost = 0;
SET max_parallel_workers_per_gather = 0;
SET gpuops.cpu_fallback = off;
SET gpuops.enable_query = on;
SET gpuops.query_read_pages = on;
SET gpuops.query_pages_in_place = on;

-- page_cache_hits(q): q's pages from the device cache (EXPLAIN ANALYZE's
-- "Page Service Cached Pages"), NULL when the service did not gather them
CREATE FUNCTION page_cache_hits(q text) RETURNS bigint
LANGUAGE sql AS $$
  SELECT (jsonb_path_query_first(explain_json(q), 'strict $.**."Page Service Cached Pages"'))::bigint
$$;
-- check_cached(q): q twice through GpuQuery; where the service gathered
-- both runs (and has a cache), the second must have found pages cached.
-- Returns check_agg_on's line for the second run.
CREATE FUNCTION check_cached(q text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE first bigint; second bigint; r text;
BEGIN
  first := page_cache_hits(q);
  second := page_cache_hits(q);
  r := check_agg_on(q, 'GpuQuery');
  IF first IS NOT NULL AND second IS NOT NULL AND second = 0 AND
     (SELECT cache_mb FROM gpuops.page_service()) > 0 THEN
    RAISE WARNING 'no page of % came from the device cache on its second run', q;
  END IF;
  RETURN r;
END $$;

CREATE TABLE pc (id int4, g int4, v int8, n numeric(12, 2), t text);
ALTER TABLE pc SET (fillfactor = 70, autovacuum_enabled = off);
INSERT INTO pc
SELECT i, i % 37, i * 3, (i % 1000) / 4.0, 'r' || (i % 11)
FROM generate_series(1, 60000) i;
VACUUM ANALYZE pc;

-- the same pages twice: the second run's from the cache on the GPU
SELECT check_cached('SELECT g, count(*), sum(v), sum(n), min(id), max(id) FROM pc GROUP BY g');
-- hint bits and nothing else change: the same LSNs, the same rows
SELECT count(*) FROM pc WHERE t = 'r3';
SELECT check_agg_on('SELECT g, count(*), sum(v), sum(n) FROM pc WHERE t = ''r3'' GROUP BY g', 'GpuQuery');

-- updates: new versions in the same pages (HOT, fillfactor 70) and the
-- old ones dead; the pages' LSNs move on
UPDATE pc SET v = v + 1000000, n = n + 1 WHERE id % 10 = 0;
SELECT check_cached('SELECT g, count(*), sum(v), sum(n), min(id), max(id) FROM pc GROUP BY g');
-- a second update of the same rows, within one transaction with a read of them
BEGIN;
UPDATE pc SET v = -v WHERE id % 20 = 0;
SELECT check_agg_on('SELECT g, count(*), sum(v), sum(n) FROM pc GROUP BY g', 'GpuQuery');
ROLLBACK;
SELECT check_agg_on('SELECT g, count(*), sum(v), sum(n) FROM pc GROUP BY g', 'GpuQuery');

-- deletes, then VACUUM prunes and defragments the pages (tuples move
-- within them), then inserts fill the freed space
DELETE FROM pc WHERE id % 7 = 0;
SELECT check_cached('SELECT g, count(*), sum(v), sum(n), min(id), max(id) FROM pc GROUP BY g');
VACUUM pc;
SELECT check_cached('SELECT g, count(*), sum(v), sum(n), min(id), max(id) FROM pc GROUP BY g');
INSERT INTO pc SELECT 100000 + i, i % 41, -i, i / 8.0, 'new' FROM generate_series(1, 5000) i;
SELECT check_cached('SELECT g, count(*), sum(v), sum(n), min(id), max(id) FROM pc GROUP BY g');
SELECT check_agg_on('SELECT g, count(*), sum(v) FROM pc WHERE t = ''new'' GROUP BY g', 'GpuQuery');

-- another table in the buffers the first one leaves: the same block
-- numbers, other relation
DROP TABLE pc;
CREATE TABLE pc2 (id int4, g int4, v int8, n numeric(12, 2), t text);
INSERT INTO pc2
SELECT i, i % 37, i * 5, (i % 999) / 8.0, 'q' || (i % 13)
FROM generate_series(1, 60000) i;
VACUUM ANALYZE pc2;
SELECT check_cached('SELECT g, count(*), sum(v), sum(n), min(id), max(id) FROM pc2 GROUP BY g');
-- TRUNCATE and refill: a new file, the same block numbers
TRUNCATE pc2;
INSERT INTO pc2 SELECT i, i % 5, i, i, 'z' FROM generate_series(1, 30000) i;
SELECT check_cached('SELECT g, count(*), sum(v), sum(n), min(id), max(id) FROM pc2 GROUP BY g');
DROP TABLE pc2;

-- an unlogged table: its pages have no LSN and are never cached; changed
-- between the runs, the result follows
CREATE UNLOGGED TABLE pcu (id int4, g int4, v int8);
INSERT INTO pcu SELECT i, i % 23, i FROM generate_series(1, 40000) i;
VACUUM ANALYZE pcu;
SELECT coalesce(page_cache_hits('SELECT g, count(*), sum(v) FROM pcu GROUP BY g'), 0)
  AS unlogged_first_cached;
SELECT coalesce(page_cache_hits('SELECT g, count(*), sum(v) FROM pcu GROUP BY g'), 0) AS unlogged_cached;
UPDATE pcu SET v = v * 2 WHERE id % 3 = 0;
SELECT check_agg_on('SELECT g, count(*), sum(v) FROM pcu GROUP BY g', 'GpuQuery');
DROP TABLE pcu;

-- with workers: the leader gathers their pages, named by their own reads
CREATE TABLE pcw (id int4, g int4, v int8);
INSERT INTO pcw SELECT i, i % 97, i FROM generate_series(1, 300000) i;
VACUUM ANALYZE pcw;
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET gpuops.tuple_cost = 0;
SET gpuops.batch_size = '1MB';
SELECT (jsonb_path_query_first(explain_json('SELECT g, count(*), sum(v) FROM pcw GROUP BY g'),
                               'strict $.**."Workers Launched"'))::int > 0 AS workers_read;
SELECT check_cached('SELECT g, count(*), sum(v) FROM pcw GROUP BY g');
UPDATE pcw SET v = v + 7 WHERE id % 1000 = 1;
SELECT check_cached('SELECT g, count(*), sum(v) FROM pcw GROUP BY g');
RESET gpuops.batch_size;
RESET gpuops.tuple_cost;
RESET min_parallel_table_scan_size;
RESET parallel_tuple_cost;
RESET parallel_setup_cost;
SET max_parallel_workers_per_gather = 0;
DROP TABLE pcw;

SELECT cached_pages <= pages AS cached_within_gathered FROM gpuops.page_service();
DROP FUNCTION check_cached(text);
DROP FUNCTION page_cache_hits(text);
