-- GpuSort results on one int4, int8 or float8 key, compared with PostgreSQL.
-- Small staging batches (set before this session's first device use) make
-- the 200000-row inputs cross several staging buffers and device batches.
-- GpuTopN would read this file's top-N queries by row position (gpu_topn.sql
-- tests it): off, so that GpuSort's bounded sort is what they test
SET gpuops.enable_topn = off;
SET gpuops.batch_size = '1MB';
SET gpuops.min_rows = 0;
SET gpuops.startup_cost = 0;
SET gpuops.tuple_cost = 0;
SET max_parallel_workers_per_gather = 0;

-- int4: ASC/DESC, NULLS FIRST/LAST, all columns carried along
SELECT check_sort('SELECT a4 AS k, id, pad FROM sort_src ORDER BY a4');
SELECT check_sort('SELECT a4 AS k, id FROM sort_src ORDER BY a4 DESC');
SELECT check_sort('SELECT a4 AS k, id FROM sort_src ORDER BY a4 NULLS FIRST');
SELECT check_sort('SELECT a4 AS k, id FROM sort_src ORDER BY a4 DESC NULLS LAST');
-- int8, including the extremes
SELECT check_sort('SELECT a8 AS k, * FROM sort_src ORDER BY a8');
SELECT check_sort('SELECT a8 AS k, id FROM sort_src ORDER BY a8 DESC');
SELECT check_sort('SELECT a8 AS k, id FROM sort_src ORDER BY a8 ASC NULLS FIRST');
SELECT check_sort('SELECT a8 AS k, id FROM sort_src ORDER BY a8 DESC NULLS LAST');
-- float8: NaN above +Infinity, -0 equal to 0, denormals, infinities
SELECT check_sort('SELECT f8 AS k, id FROM sort_src ORDER BY f8');
SELECT check_sort('SELECT f8 AS k, id FROM sort_src ORDER BY f8 DESC');
SELECT check_sort('SELECT f8 AS k, id FROM sort_src ORDER BY f8 NULLS FIRST');
SELECT check_sort('SELECT f8 AS k, id FROM sort_src ORDER BY f8 DESC NULLS LAST');
-- where the specials land, shown
SELECT f8 FROM (SELECT DISTINCT f8 FROM sort_src
                WHERE f8 IS NULL OR f8 = 'NaN' OR f8 IN ('Infinity', '-Infinity')
                   OR (abs(f8) < 1e-300 AND f8 <> 0) OR abs(f8) > 1e300) s ORDER BY f8;
-- -0 and 0 are ties: the multiset keeps both spellings
SELECT count(*) FILTER (WHERE f8::text = '-0') AS neg_zero, count(*) FILTER (WHERE f8::text = '0') AS zero
FROM (SELECT f8 FROM sort_src WHERE f8 = 0 ORDER BY f8) s;

-- id is unique: the whole row order is PostgreSQL's
SELECT check_sort('SELECT id AS k, a4, a8, f8, pad FROM sort_src ORDER BY id DESC');

-- empty input, one row, all keys equal, all keys NULL
CREATE TABLE sort_small (k int8, v text);
SELECT check_sort('SELECT k, v FROM sort_small ORDER BY k');
INSERT INTO sort_small VALUES (42, 'only');
SELECT check_sort('SELECT k, v FROM sort_small ORDER BY k DESC');
INSERT INTO sort_small SELECT 7, 'same ' || i FROM generate_series(1, 5000) i;
DELETE FROM sort_small WHERE k = 42;
SELECT check_sort('SELECT k, v FROM sort_small ORDER BY k');
UPDATE sort_small SET k = NULL;
SELECT check_sort('SELECT k, v FROM sort_small ORDER BY k NULLS FIRST');

-- already sorted and reverse-sorted input (sequential scan order)
CREATE TABLE sort_presorted AS SELECT i::int4 AS k, -i::int8 AS r FROM generate_series(1, 100000) i;
SELECT check_sort('SELECT k, r FROM sort_presorted ORDER BY k');
SELECT check_sort('SELECT r AS k, k AS x FROM sort_presorted ORDER BY r');
-- narrow key ranges: only the bits that differ are sorted
SELECT check_sort('SELECT (k % 3)::int8 AS k, r FROM sort_presorted ORDER BY 1');
SELECT check_sort('SELECT (k::float8 / 3) AS k, r FROM sort_presorted ORDER BY 1 DESC');

-- long and TOAST-ed values are carried through unchanged
CREATE TABLE sort_toast (k int4, doc text, arr int[]);
INSERT INTO sort_toast
SELECT i % 50, repeat(md5(i::text), 200 + i % 300), array_fill(i, ARRAY[100 + i])
FROM generate_series(1, 400) i;
ALTER TABLE sort_toast ALTER COLUMN doc SET STORAGE EXTERNAL;
INSERT INTO sort_toast
SELECT i % 50, repeat(md5(i::text), 1000), NULL FROM generate_series(401, 600) i;
SELECT check_sort('SELECT k, doc, arr FROM sort_toast ORDER BY k');
SELECT check_sort('SELECT k, length(doc) AS len, md5(doc) AS h FROM sort_toast ORDER BY k DESC');

-- keys computed below the sort; expressions in the output above it
SELECT check_sort('SELECT a4::int8 * 3 AS k, id FROM sort_src ORDER BY a4::int8 * 3');
SELECT check_sort('SELECT sqrt(abs(f8)) AS k, id + 1 AS id1 FROM sort_src WHERE f8 <> ''NaN'' ORDER BY 1');
-- a sort over a join and over an aggregate
SELECT check_sort('SELECT s.a4 AS k, p.r FROM sort_src s JOIN sort_presorted p ON p.k = s.id ORDER BY s.a4 DESC');
SELECT check_sort('SELECT count(*) AS k, a4 % 100 AS g FROM sort_src GROUP BY 2 ORDER BY 1');
-- in a subquery, in a CTE, with LIMIT and OFFSET above
SELECT check_sort('SELECT k, id FROM (SELECT a8 AS k, id FROM sort_src ORDER BY a8) s WHERE id % 2 = 0');
SELECT check_sort('WITH c AS MATERIALIZED (SELECT f8 AS k, id FROM sort_src ORDER BY f8 DESC) SELECT * FROM c');
-- (a8 is unique apart from NULLs, so LIMIT and OFFSET cut at a defined place)
SELECT check_sort('SELECT a8 AS k, id FROM sort_src ORDER BY a8 LIMIT 1000');
SELECT check_sort('SELECT a8 AS k, id FROM sort_src WHERE a8 IS NOT NULL ORDER BY a8 DESC OFFSET 190000');
