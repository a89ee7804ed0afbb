-- GpuQuery's pages form (query_reader.h, page_deform.hpp): the reader hands
-- whole heap pages and their visible line pointers to the query backend,
-- which deforms them itself (by default only on the GPU; `on` makes the
-- CPU backend do it too, so that this suite runs the same code on both).
-- Every result is compared with PostgreSQL's (gpuops.enabled = off), and
-- the same query with the host's deforming (query_read_pages = off) must
-- agree too, as must the pages copied rather than read in place from
-- shared buffers (query_pages_in_place).  "Deformed By" and "Pages Read"
-- say which read it was.
SET gpuops.min_rows = 0;
SET gpuops.startup_cost = 0;
SET max_parallel_workers_per_gather = 0;
SET gpuops.cpu_fallback = off;
SET gpuops.enable_query = on;
SET gpuops.query_read_pages = on;
SET gpuops.query_pages_in_place = on;

-- pages_lines(q): the GpuQuery lines that say how it read, without timings
CREATE FUNCTION pages_lines(q text) RETURNS SETOF text
LANGUAGE sql AS $$ SELECT explain_lines(q, 'GpuQuery|Deformed By|Pages Read|Escaped|Workers Launched') $$;

-- every alignment and column form; NULLs (so the null bitmap) in every
-- column; short and 4-byte varlena headers; a dropped column; columns
-- added later with defaults (older tuples do not store them); dead rows
-- and updated ones
CREATE TABLE qp (
  c1 char(1), s int2, id int4, big int8, gone text, d date, ts timestamp, b bool,
  f4 float4, f8 float8, n numeric(15, 2), nf numeric, t varchar(16), vc varchar(16), c bpchar(5),
  long text);
INSERT INTO qp
SELECT chr(65 + i % 7),
       CASE WHEN i % 11 = 0 THEN NULL ELSE (i % 30000 - 15000)::int2 END,
       i,
       CASE WHEN i % 43 = 0 THEN NULL ELSE i::int8 * -123456789 END,
       CASE WHEN i % 3 = 0 THEN repeat('g', 200) ELSE 'x' END,
       date '1990-01-01' + (i % 20000),
       CASE WHEN i % 13 = 0 THEN NULL ELSE timestamp '1999-12-31 23:00' + i * interval '37 seconds' END,
       CASE WHEN i % 7 = 0 THEN NULL ELSE i % 3 = 0 END,
       CASE WHEN i % 401 = 0 THEN '-Infinity'::float4 ELSE i / 3.0 END,
       CASE WHEN i % 17 = 0 THEN NULL WHEN i % 419 = 0 THEN '-0'::float8 ELSE i * 1.1 END,
       CASE WHEN i % 23 = 0 THEN NULL ELSE i * 1.01 - 5000 END,
       CASE WHEN i % 499 = 0 THEN 1e30 WHEN i % 509 = 0 THEN 1e-19
            WHEN i % 19 = 0 THEN NULL ELSE i::numeric / 8 END,
       CASE WHEN i % 5 = 0 THEN '' WHEN i % 29 = 0 THEN NULL
            WHEN i % 31 = 0 THEN repeat('ü', 8) ELSE repeat(chr(97 + i % 26), i % 17) END,
       -- 16 characters, 18 bytes: no device form
       CASE WHEN i % 37 = 0 THEN repeat('ü', 9) ELSE 'v' || (i % 50) END,
       CASE i % 3 WHEN 0 THEN 'ab' WHEN 1 THEN '' ELSE 'abcde' END,
       -- a 4-byte varlena header (over 126 bytes) before the added columns
       CASE WHEN i % 3 = 0 THEN repeat('w', 130 + i % 50) ELSE 'x' END
FROM generate_series(1, 30000) i;
ALTER TABLE qp DROP COLUMN gone;
ALTER TABLE qp ADD COLUMN added int8 DEFAULT 42;
ALTER TABLE qp ADD COLUMN added_n numeric(10, 2) DEFAULT 1.50;
ALTER TABLE qp ADD COLUMN added_null int4;
INSERT INTO qp (c1, id, added, added_n, added_null)
SELECT 'Z', i, i, i / 4.0, i % 5 FROM generate_series(30001, 31000) i;
DELETE FROM qp WHERE id % 53 = 0;
UPDATE qp SET b = NOT b WHERE id % 59 = 0;
UPDATE qp SET added = -id, t = 'upd' WHERE id % 61 = 0;
ANALYZE qp;

SELECT check_pages('SELECT c1, count(*), count(s), sum(s), min(id), max(big), sum(big) FROM qp GROUP BY c1');
-- (after a first run: on the GPU that mapped shared buffers for the next)
SELECT * FROM pages_lines('SELECT c1, count(*) FROM qp GROUP BY c1');
SELECT check_pages('SELECT b, count(*), min(d), max(ts), count(ts), count(f8), count(f4) FROM qp GROUP BY b');
SELECT check_pages('SELECT (d - date $$1990-01-01$$) % 7 AS k, sum(n), count(n), avg(n) FROM qp GROUP BY 1');
SELECT check_pages('SELECT count(*), sum(n) FROM qp WHERE nf > 100.125 AND nf < 2000');
SELECT check_pages('SELECT f4 < 1000 AS k, count(*) FROM qp WHERE f8 <> 0 GROUP BY 1');
SELECT check_pages('SELECT s % 5 AS k, count(f4), sum(s), count(*) FROM qp WHERE f4 > 2.5 GROUP BY 1');
-- text and bpchar group keys (16 bytes at most): the bytes columns
SELECT check_pages('SELECT t, count(*), sum(id) FROM qp GROUP BY t');
SELECT check_pages('SELECT c, count(*) FROM qp GROUP BY c');
SELECT check_pages($$SELECT t, c, count(*) FROM qp WHERE id % 3 = 1 GROUP BY t, c$$);
-- the added columns: stored in the newer rows, defaults in the older ones
SELECT check_pages('SELECT added, count(*), sum(added_n), count(added_null), sum(added_null) FROM qp GROUP BY added HAVING count(*) > 1');
SELECT check_pages('SELECT added_null, count(*), sum(added_n), max(added) FROM qp GROUP BY 1');
-- values the device cannot read from the page: PostgreSQL's plan answers
SELECT * FROM pages_lines('SELECT vc, count(*) FROM qp GROUP BY vc');
SELECT check_pages('SELECT vc, count(*) FROM qp GROUP BY vc');
SELECT check_pages($$SELECT c1, count(*) FROM qp WHERE vc <> 'v1' GROUP BY c1$$);
-- a compressed value (a numeric of 4000 digits), in a later batch
CREATE TABLE qp_toast (id int4, n numeric(15, 2), big numeric, t varchar(4));
INSERT INTO qp_toast SELECT i, i / 3.0, i % 100, 'k' || i % 9 FROM generate_series(1, 20000) i;
INSERT INTO qp_toast VALUES (20001, 1, repeat('9', 4000)::numeric, 'k1');
ANALYZE qp_toast;
SELECT pg_column_compression(big) IS NOT NULL AS compressed FROM qp_toast WHERE id = 20001;
SELECT * FROM pages_lines('SELECT t, count(*) FROM qp_toast WHERE big > 5 GROUP BY t');
SELECT check_pages('SELECT t, count(*), sum(n) FROM qp_toast WHERE big > 5 GROUP BY t');
SELECT check_pages('SELECT t, count(*), sum(n) FROM qp_toast WHERE id < 20001 GROUP BY t');

-- text tests, evaluated by the deformer on the page's bytes (any length:
-- vc's 18-byte values and long's 4-byte headers too): =, <>, IN with a
-- NULL, NOT IN, LIKE with _ over UTF-8, NOT LIKE, bpchar's = without its
-- blanks, in quals, FILTERs and CASEs; NULL texts; the older rows' added
-- columns stay the stored default's result
SELECT * FROM pages_lines($$SELECT count(*) FROM qp WHERE t LIKE 'ab%'$$);
SELECT check_pages($$SELECT c1, count(*) FROM qp WHERE t LIKE 'ab%' GROUP BY c1$$);
SELECT check_pages($$SELECT c1, count(*), sum(id) FROM qp WHERE vc = 'v7' OR vc LIKE 'ü_ü%' GROUP BY c1$$);
SELECT check_pages($$SELECT c1, count(*) FILTER (WHERE t <> 'upd'), count(*) FILTER (WHERE t IN ('', 'ccc', NULL)),
  count(*) FILTER (WHERE vc NOT IN ('v1', 'v2')) FROM qp GROUP BY c1$$);
SELECT check_pages($$SELECT c = 'ab' AS k, count(*), sum(CASE WHEN c = 'abcde   ' THEN 1 ELSE 0 END) FROM qp GROUP BY 1$$);
SELECT * FROM pages_lines($$SELECT count(*) FROM qp WHERE long NOT LIKE '%ww_w' AND c1 <> 'B'$$);
SELECT check_pages($$SELECT count(*), sum(id) FROM qp WHERE long NOT LIKE '%ww_w' AND c1 <> 'B'$$);
SELECT check_pages($$SELECT count(*) FROM qp WHERE long LIKE 'w%' AND t NOT LIKE '%a%'$$);
-- more attributes walked than the pages form takes (128): the host reads
SELECT format('CREATE TABLE qp_wide (%s)', string_agg(format('a%s int4', i), ', ')) FROM generate_series(1, 140) i \gexec
INSERT INTO qp_wide (a1, a130, a140) SELECT i % 10, i, i % 3 FROM generate_series(1, 5000) i;
ANALYZE qp_wide;
SELECT * FROM pages_lines('SELECT a1, sum(a130) FROM qp_wide GROUP BY a1');
SELECT check_pages('SELECT a1, sum(a130), count(a140) FROM qp_wide GROUP BY a1');
SELECT * FROM pages_lines('SELECT a140, count(*) FROM qp_wide GROUP BY a140');
SELECT check_pages('SELECT a140, count(*), sum(a1) FROM qp_wide GROUP BY a140');

-- a batch of pages has room for 1.5 times the rows a page that pg_class
-- gives (at least 16 full pages' worth): with statistics from wide rows,
-- the narrow rows inserted since end each batch early, by its rows, and
-- none is lost (more batches than its pages alone would make)
CREATE TABLE qp_dense (id int4, pad text) WITH (autovacuum_enabled = off);
ALTER TABLE qp_dense ALTER pad SET STORAGE EXTERNAL;
INSERT INTO qp_dense SELECT i, repeat('p', 2000) FROM generate_series(1, 2000) i;
ANALYZE qp_dense;
DELETE FROM qp_dense;
INSERT INTO qp_dense SELECT i, NULL FROM generate_series(1, 100000) i;
SELECT relpages >= 400 AND reltuples = 2000 AS stale FROM pg_class WHERE relname = 'qp_dense';
SET gpuops.query_page_cost = 0; -- (else the stale statistics cost GpuQuery out)
SELECT check_pages('SELECT id % 7 AS k, count(*), sum(id), min(id), max(id) FROM qp_dense GROUP BY 1');
SELECT (regexp_match(l, 'Batches: (\d+)'))[1]::int >= 20 AS ended_by_rows
FROM explain_lines('SELECT id % 7 AS k, count(*), sum(id) FROM qp_dense GROUP BY 1', 'Batches') l;
RESET gpuops.query_page_cost;

-- the parallel read: workers copy pages straight into the shared slots;
-- small batches, so that every process ships several
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET min_parallel_table_scan_size = 0;
SET gpuops.tuple_cost = 0;
SET gpuops.batch_size = '1MB';
SELECT * FROM pages_lines('SELECT c1, count(*), sum(n) FROM qp GROUP BY c1');
SELECT check_pages('SELECT c1, count(*), sum(n), min(d), max(big) FROM qp GROUP BY c1');
SELECT check_pages('SELECT t, count(*) FROM qp GROUP BY t');
SELECT check_pages('SELECT t, count(*), sum(n) FROM qp_toast WHERE big > 5 GROUP BY t');
SET gpuops.query_page_cost = 0;
SELECT check_pages('SELECT id % 7 AS k, count(*), sum(id), min(id), max(id) FROM qp_dense GROUP BY 1');
SELECT (regexp_match(l, 'Batches: (\d+)'))[1]::int >= 20 AS ended_by_rows
FROM explain_lines('SELECT id % 7 AS k, count(*), sum(id) FROM qp_dense GROUP BY 1', 'Batches') l;
RESET gpuops.query_page_cost;
-- read in place, the backend holds a worker's batch over one add (the
-- CUDA engine while the page service gathers it; the CPU backend too, for
-- this): the leader must not wait for the workers meanwhile, since a
-- worker ends only once its slots are back.  Many batches, so that the
-- last one is held when the workers finish; a hang fails by the timeout.
CREATE TABLE qp_held AS
SELECT i, (i % 97)::int4 g, (i * 7 % 1000)::numeric(12,2) v FROM generate_series(1, 300000) i;
ANALYZE qp_held;
SET statement_timeout = '60s';
SELECT * FROM pages_lines('SELECT g, count(*), sum(v) FROM qp_held GROUP BY g');
SELECT check_pages('SELECT g, count(*), sum(v), min(i), max(i) FROM qp_held GROUP BY g');
RESET statement_timeout;
-- a device failure: the CPU backend reads the pages again, alone
SET gpuops.cpu_fallback = on;
SET gpuops.fault_injection = kernel_error;
SELECT check_pages('SELECT c1, count(*), sum(n) FROM qp GROUP BY c1');
RESET gpuops.fault_injection;
RESET gpuops.batch_size;
RESET gpuops.cpu_fallback;

DROP TABLE qp, qp_toast, qp_wide, qp_held, qp_dense;
DROP FUNCTION pages_lines(text);
