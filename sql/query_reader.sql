-- GpuQuery's fact-table reader (src/query/query_reader.h), before the node
-- that uses it: heap pages to device words, on reader threads or on the
-- backend.  Through two test-only C functions (query_reader_test.cpp):
-- qr_rows returns every row read with each word decoded back to text,
-- compared here with PostgreSQL's own values of the same rows in the same
-- order (the scan's page order); qr_bench reads with nothing but a checksum.
CREATE FUNCTION qr_rows(regclass, int2[], int, int) RETURNS SETOF text[]
AS '$libdir/gpuops', 'gpuops_read_rows' LANGUAGE C STRICT;
CREATE FUNCTION qr_bench(regclass, int2[], nthreads int, batch_rows int,
  OUT rows int8, OUT batches int8, OUT pages int8, OUT threads int, OUT ms float8,
  OUT cpu_ms float8, OUT checksum int8, OUT escape text)
AS '$libdir/gpuops', 'gpuops_read_bench' LANGUAGE C STRICT;

SHOW gpuops.reader_threads;

-- every column form; NULLs; a dropped column; columns added later (old rows
-- do not store them: a default, a numeric default, NULL); dead rows and
-- newer versions (HOT and not)
CREATE TABLE qr (
  id int4, s int2, big int8, d date, ts timestamp, b bool, f4 float4, f8 float8,
  n numeric(15, 2), nf numeric, t text, vc varchar(20), c bpchar(5), c1 char(1),
  c20 char(20), gone int4);
INSERT INTO qr
SELECT i,
       CASE WHEN i % 11 = 0 THEN NULL ELSE (i % 30000 - 15000)::int2 END,
       i::int8 * -123456789,
       date '1990-01-01' + (i % 20000),
       CASE WHEN i % 13 = 0 THEN NULL ELSE timestamp '1999-12-31 23:00' + i * interval '37 seconds' END,
       CASE WHEN i % 7 = 0 THEN NULL ELSE i % 3 = 0 END,
       CASE WHEN i % 401 = 0 THEN 'NaN'::float4 WHEN i % 409 = 0 THEN '-Infinity' ELSE i / 3.0 END,
       CASE WHEN i % 17 = 0 THEN NULL WHEN i % 419 = 0 THEN '-0'::float8 ELSE i * 1.1 END,
       i * 1.01 - 5000,
       CASE WHEN i % 997 = 0 THEN 'NaN' WHEN i % 499 = 0 THEN 1e30
            WHEN i % 503 = 0 THEN 400000000000000001 WHEN i % 509 = 0 THEN 1e-19
            WHEN i % 19 = 0 THEN NULL ELSE i::numeric / 8 END,
       CASE WHEN i % 5 = 0 THEN '' WHEN i % 23 = 0 THEN NULL
            WHEN i % 29 = 0 THEN repeat('ü', 8) ELSE repeat(chr(97 + i % 26), i % 17) END,
       'v' || i,
       CASE i % 3 WHEN 0 THEN 'ab' WHEN 1 THEN '' ELSE 'abcde' END,
       chr(65 + i % 26),
       'k' || i,
       i
FROM generate_series(1, 20000) i;
ALTER TABLE qr DROP COLUMN gone;
ALTER TABLE qr ADD COLUMN added int8 DEFAULT 42;
ALTER TABLE qr ADD COLUMN added_n numeric DEFAULT 1.50;
ALTER TABLE qr ADD COLUMN added_null text;
INSERT INTO qr (id, added, added_n, added_null)
SELECT i, i, i / 4.0, 'a' || i FROM generate_series(20001, 21000) i;
DELETE FROM qr WHERE id % 31 = 0;
UPDATE qr SET b = NOT b WHERE id % 37 = 0;
UPDATE qr SET added = -id, t = 'upd' WHERE id % 41 = 0;
SELECT attnum, attname FROM pg_attribute WHERE attrelid = 'qr'::regclass AND attnum > 0 ORDER BY 1;

-- PostgreSQL's values as the reader's text (dates in days and timestamps in
-- microseconds from 2000-01-01, bools 0/1, numerics at their fewest places
-- or 'unknown', bpchar without its trailing blanks), rows in ctid order
-- a numeric word holds a mantissa below 2^58 at a scale up to 18
CREATE FUNCTION qr_num(n numeric) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN n = 'NaN' OR scale(trim_scale(n)) > 18 OR
                   abs(trim_scale(n)) * power(10::numeric, scale(trim_scale(n))) > 288230376151711743
              THEN 'unknown' ELSE trim_scale(n)::text END
$$;
CREATE VIEW qr_expected AS
SELECT row_number() OVER (ORDER BY ctid) AS rn,
       ARRAY[id::text, s::text, big::text, (d - date '2000-01-01')::text,
             (extract(epoch FROM ts - timestamp '2000-01-01') * 1000000)::int8::text,
             b::int::text, f4::text, f8::text, qr_num(n), qr_num(nf),
             t, vc::text, c::text, c1::text, c20::text, added::text, qr_num(added_n),
             added_null] AS v
FROM qr;
-- the reader's floats back through float8 (it prints %.17g)
CREATE FUNCTION qr_norm(a text[]) RETURNS text[] LANGUAGE sql IMMUTABLE AS $$
  SELECT a[1:6] || ARRAY[(a[7]::float8::float4)::text, (a[8]::float8)::text] || a[9:]
$$;
-- (at most 16 columns a read: the table in two reads, joined by row number)
CREATE FUNCTION qr_check(nthreads int, batch_rows int) RETURNS text LANGUAGE sql AS $$
  WITH a AS (SELECT rn, v FROM qr_rows('qr', '{1,2,3,4,5,6,7,8,9,10}', nthreads, batch_rows)
                               WITH ORDINALITY AS x(v, rn)),
       b AS (SELECT rn, v FROM qr_rows('qr', '{11,12,13,14,15,17,18,19}', nthreads, batch_rows)
                               WITH ORDINALITY AS x(v, rn)),
       r AS (SELECT rn, qr_norm(a.v || b.v) AS v FROM a FULL JOIN b USING (rn))
  SELECT format('rows=%s expected=%s differ=%s',
                (SELECT count(*) FROM r), (SELECT count(*) FROM qr_expected),
                (SELECT count(*) FROM r FULL JOIN qr_expected e USING (rn)
                  WHERE r.v IS DISTINCT FROM e.v))
$$;
SELECT qr_check(0, 65536);
SELECT qr_check(1, 1000);
SELECT qr_check(3, 8);
SELECT qr_check(2, 4096);
-- pages are handed to the threads in runs: runs of many pages, batches that
-- end inside a run (and inside a page), the run's rows split over batches
SELECT qr_check(1, 5000);
SELECT qr_check(4, 9992);
-- a few rows as read
SELECT v FROM qr_rows('qr', '{1,7,8,10,11,13,15,18,19}', 2, 64) WITH ORDINALITY AS x(v, rn)
WHERE v[1]::int IN (1, 2, 401, 419, 499, 503, 509, 997, 20001) ORDER BY rn;

-- one attribute twice, columns in another order than the table's
SELECT count(*) AS rows,
       count(*) FILTER (WHERE v[1] IS DISTINCT FROM v[2]) AS differ,
       sum(v[3]::int8) = (SELECT sum(id) FROM qr) AS id_sum,
       count(v[4]) = (SELECT count(s) FROM qr) AS s_count
FROM qr_rows('qr', '{1,1,1,2}', 2, 1000) x(v);

-- the same checksum whatever the threads and batches
SELECT count(DISTINCT (b.rows, b.checksum)) AS results, min(b.rows) AS rows, bool_and(b.escape IS NULL) AS no_escape
FROM (VALUES (0, 8), (1, 4096), (2, 1000), (4, 65536)) p(t, br),
     qr_bench('qr', '{1,4,9,14,17,18,11,15}', p.t, p.br) b;

-- numerics of every shape the decoders take (a short header with up to 4
-- base-10000 digits takes the fast path, the rest the general one):
-- weights, scales, signs, zeros, the 2^58 and int64 edges; the reader's
-- words against PostgreSQL's values
CREATE TABLE qr_nums AS
SELECT row_number() OVER () AS id, v FROM (
  SELECT ((CASE WHEN i % 2 = 0 THEN -1 ELSE 1 END) * ((i * 7919) % 1000003)::numeric
          * 10::numeric ^ ((i % 45) - 25))::numeric AS v FROM generate_series(1, 20000) i
  UNION ALL SELECT (10::numeric ^ k) * m FROM generate_series(-30, 25) k,
                   (VALUES (1), (-1), (7), (9999), (123456789)) x(m)
  UNION ALL SELECT trunc(288230376151711743::numeric / 10::numeric ^ k, 30) + d
            FROM generate_series(0, 18) k, generate_series(-2, 2) d
  UNION ALL SELECT 9223372036854775807::numeric + d FROM generate_series(-2, 2) d
  UNION ALL SELECT v::numeric FROM (VALUES ('0'), ('0.000'), ('-0.00'), ('NaN'), ('1e-30'),
                                           ('1.5e20'), ('0.00010'), ('-10000.5')) y(v)) z;
-- (how many have no word depends on the version: numeric ^ gives other scales from 16 on)
SELECT count(*) AS numerics, count(*) FILTER (WHERE r.v[2] IS DISTINCT FROM qr_num(n.v)) AS mismatches
FROM qr_rows('qr_nums', '{1,2}', 2, 4096) r(v) JOIN qr_nums n ON n.id::text = r.v[1];
DROP TABLE qr_nums;

-- values with no device form stop the read with a reason, after the batches
-- before them: a text over 16 bytes, a compressed one
CREATE TABLE qr_esc (id int4, t text, c bpchar(30));
INSERT INTO qr_esc SELECT i, 'short' || i, 'padded' FROM generate_series(1, 30000) i;
SELECT count(*) FROM qr_rows('qr_esc', '{1,2,3}', 2, 1000);
UPDATE qr_esc SET t = 'seventeen bytes!!' WHERE id = 25000;
SELECT count(*) FROM qr_rows('qr_esc', '{1,2}', 2, 1000);
SELECT count(*) FROM qr_rows('qr_esc', '{1,3}', 2, 1000);
UPDATE qr_esc SET t = repeat('x', 10000) WHERE id = 25000;
SELECT count(*) FROM qr_rows('qr_esc', '{2}', 0, 1000);
SELECT rows, escape FROM qr_bench('qr_esc', '{2}', 3, 4096);

-- an empty table, a temporary one
CREATE TABLE qr_empty (a int4);
SELECT rows, batches, pages, threads, escape FROM qr_bench('qr_empty', '{1}', 2, 1024);
CREATE TEMP TABLE qr_temp AS SELECT i AS a, i::numeric / 3 AS n FROM generate_series(1, 50000) i;
SELECT count(*) AS rows, count(*) FILTER (WHERE v[2] <> 'unknown') AS known,
       count(*) FILTER (WHERE v[1]::int <> a OR v[2] IS DISTINCT FROM qr_num(n)) AS differ
FROM qr_rows('qr_temp', '{1,2}', 2, 4096) WITH ORDINALITY AS x(v, rn)
     JOIN (SELECT row_number() OVER (ORDER BY ctid) AS rn, * FROM qr_temp) t USING (rn);

-- a cancel while threads read: the statement ends, the session goes on
CREATE TABLE qr_big AS SELECT i AS a, i::numeric(15, 2) AS n, 'x' || i AS t FROM generate_series(1, 400000) i;
SET statement_timeout = '1ms';
SELECT rows FROM qr_bench('qr_big', '{1,2,3}', 4, 65536);
-- (one thread, one batch: the cancel mostly lands in the walk, inside a run)
SELECT rows FROM qr_bench('qr_big', '{1,2,3}', 1, 1048576);
RESET statement_timeout;
SELECT rows, escape FROM qr_bench('qr_big', '{1,2,3}', 4, 65536);

DROP TABLE qr, qr_esc, qr_empty, qr_temp, qr_big CASCADE;
DROP FUNCTION qr_check(int, int);
DROP FUNCTION qr_norm(text[]);
DROP FUNCTION qr_num(numeric);
DROP FUNCTION qr_rows(regclass, int2[], int, int);
DROP FUNCTION qr_bench(regclass, int2[], int, int);
