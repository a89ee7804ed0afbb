-- GpuAgg over numeric: GROUP BY numeric keys, and min, max, count(DISTINCT)
-- and percentile_disc of numeric, all through ranks in numeric order
-- (equal values such as 1.0 and 1.00 one rank).  Compared with
-- PostgreSQL's results as text, so the scale a result prints with counts.
-- GpuQuery (gpuops.enable_query, on by default) would take some of these
-- query blocks whole; this file tests GpuAgg.
SET gpuops.enable_query = off;
SET gpuops.min_rows = 0;
SET gpuops.startup_cost = 0;
SET max_parallel_workers_per_gather = 0;
SET gpuops.cpu_fallback = off;
SET enable_hashagg = off;
SET enable_sort = off;

-- values with several scales of one value, NaN, NULLs, large and tiny
-- magnitudes, negative zero scales; g holds skew (half the rows 0)
CREATE TABLE num_src AS
SELECT i AS id,
       CASE WHEN i % 2 = 0 THEN 0 ELSE i % 300 END AS g,
       CASE WHEN i % 97 = 0 THEN NULL
            WHEN i % 89 = 0 THEN 'NaN'::numeric
            WHEN i % 7 = 0 THEN round((i % 50)::numeric, 2)       -- 12.00
            WHEN i % 7 = 1 THEN round((i % 50)::numeric, 0)       -- 12
            WHEN i % 7 = 2 THEN (i % 50)::numeric / 3             -- 4.3333333333333333
            WHEN i % 7 = 3 THEN ((i % 50) * 1e30)::numeric
            WHEN i % 7 = 4 THEN ((i % 50) * 1e-20)::numeric
            ELSE -(i % 50)::numeric * 1.5 END AS n,
       round((i % 40)::numeric / 8, 1 + i % 3) AS k,
       CASE WHEN i % 13 = 0 THEN NULL ELSE ((i::int8 * 7919) % 2000000001 - 1000000000)::int4 END AS i4,
       CASE WHEN i % 17 = 0 THEN NULL ELSE (i % 65535 - 32767)::int2 END AS i2,
       CASE WHEN i % 19 = 0 THEN NULL WHEN i % 5 = 0 THEN 9223372036854775807 - i
            WHEN i % 5 = 1 THEN -9223372036854775807 + i ELSE i::int8 * 1000003 END AS i8
FROM generate_series(1, 120000) i;
INSERT INTO num_src (id, g, i4, i2) VALUES (-1, -1, 5, 5), (-2, -2, NULL, NULL), (-3, -2, NULL, NULL),
  (-4, -3, 2147483647, 32767), (-5, -3, -2147483648, -32768), (-6, -3, 2147483647, 32767);
ANALYZE num_src;

EXPLAIN (COSTS OFF) SELECT k, count(*), min(n) FROM num_src GROUP BY k;

-- numeric keys: 5.0, 5.00 and 5 are one group.  Which row's scale
-- PostgreSQL shows for it depends on its plan (the first row of a hash
-- table, or of a sort's run of equal keys), so keys print trim_scale'd;
-- grouping by their text keeps the scales apart
SELECT check_agg('SELECT trim_scale(k) AS k, count(*) AS c FROM num_src GROUP BY k');
SELECT check_agg('SELECT k::text AS kt, count(*) AS c FROM num_src GROUP BY k::text');
SELECT check_agg('SELECT trim_scale(n) AS n, count(*) AS c FROM num_src GROUP BY n');
SELECT check_agg('SELECT g, trim_scale(k) AS k, count(*) AS c FROM num_src GROUP BY g, k');
-- min and max: of equal values (12 and 12.00) the later row's, as
-- numeric_smaller returns its newer argument; which row is later depends
-- on PostgreSQL's plan (a sort reorders equal keys), so results that can
-- tie print trim_scale'd.  Values of one scale (n / 3) show theirs.
SELECT check_agg($$SELECT g, trim_scale(min(n)) AS a, trim_scale(max(n)) AS b, trim_scale(min(k)) AS c,
                         trim_scale(max(k)) AS d FROM num_src GROUP BY g$$);
SELECT check_agg($$SELECT g % 9 AS m, min(n) FILTER (WHERE id % 7 = 2) AS a, max(n) FILTER (WHERE id % 7 = 2) AS b
                   FROM num_src GROUP BY g % 9$$);
SELECT check_agg($$SELECT trim_scale(min(n)) AS a, trim_scale(max(n) FILTER (WHERE g > 0)) AS b,
                         trim_scale(min(n) FILTER (WHERE n <> 'NaN')) AS c FROM num_src$$);
SELECT check_agg('SELECT trim_scale(k) AS k, trim_scale(max(n)) AS b FROM num_src GROUP BY k HAVING min(n) < 0');
-- count(DISTINCT): by value
SELECT check_agg('SELECT g, count(DISTINCT n) AS d FROM num_src GROUP BY g');
SELECT check_agg('SELECT count(DISTINCT k) AS d, count(DISTINCT k) AS e FROM num_src');
-- percentile_disc in numeric order, NaN last
SELECT check_agg($$SELECT g, trim_scale(percentile_disc(0.5) WITHIN GROUP (ORDER BY n)) AS a,
                         trim_scale(percentile_disc(1) WITHIN GROUP (ORDER BY n)) AS b FROM num_src GROUP BY g$$);
SELECT check_agg($$SELECT trim_scale(percentile_disc(0.25) WITHIN GROUP (ORDER BY k DESC)) AS a FROM num_src$$);

-- variance and stddev of int2/int4: numeric results from exact 128-bit
-- sums by PostgreSQL's own final functions (a one-row group's sample
-- variance is NULL, as are all-NULL groups')
SELECT check_agg($$SELECT g, variance(i4), var_samp(i4), var_pop(i4), stddev(i4), stddev_samp(i4),
                         stddev_pop(i4) FROM num_src GROUP BY g$$);
SELECT check_agg($$SELECT g % 7 AS m, variance(i2), var_pop(i2), stddev_samp(i2), stddev_pop(i2)
                   FROM num_src GROUP BY g % 7$$);
SELECT check_agg('SELECT var_samp(i4), stddev_pop(i2), var_pop(i4) FILTER (WHERE g < 0) FROM num_src');
SELECT check_agg('SELECT var_samp(i4), stddev(i2) FROM num_src WHERE id < -100');
SELECT check_agg('SELECT g, stddev(i4) FROM num_src GROUP BY g HAVING variance(i2) > 1e8');
-- int8: squares near 2^126, their sum past 2^128 (192-bit sums of squares,
-- numeric_serialize's state)
SELECT check_agg($$SELECT g % 11 AS m, variance(i8), var_pop(i8), stddev_samp(i8), stddev_pop(i8), stddev(i8)
                   FROM num_src GROUP BY g % 11$$);
SELECT check_agg('SELECT var_samp(i8), stddev_pop(i8), var_pop(i8) FILTER (WHERE g = 0) FROM num_src');
SELECT check_agg('SELECT g, var_samp(i8) FROM num_src WHERE g < 0 GROUP BY g');

-- over a 1 MB budget: chunks merged by ranks
SET gpuops.device_memory_limit = '1MB';
SELECT check_agg('SELECT trim_scale(k) AS k, count(*) AS c, trim_scale(min(n)) AS a, trim_scale(max(n)) AS b FROM num_src GROUP BY k');
SELECT check_agg('SELECT g, trim_scale(min(n)) AS a, trim_scale(max(k)) AS b FROM num_src GROUP BY g');
SELECT check_agg('SELECT g % 5 AS m, var_samp(i4), stddev_pop(i2), var_pop(i8) FROM num_src GROUP BY g % 5');
RESET gpuops.device_memory_limit;

-- parallel: min/max of numeric as partial states
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET gpuops.parallel_startup_cost = 0;
SET gpuops.enable_parallel_staging = off;	-- the partial states (gpuagg_staged stages numeric)
RESET enable_hashagg;
EXPLAIN (COSTS OFF) SELECT g, min(n), max(n), count(*) AS c FROM num_src GROUP BY g;
SELECT check_agg('SELECT g, trim_scale(min(n)) AS a, trim_scale(max(n)) AS b, count(*) AS c FROM num_src GROUP BY g');
SELECT check_agg('SELECT trim_scale(k) AS k, trim_scale(min(n)) AS a, trim_scale(max(n)) AS b FROM num_src GROUP BY k');
-- variance's partial state: numeric_poly_serialize's bytea
SELECT check_agg('SELECT g, var_samp(i4), stddev_pop(i2), variance(i2) FROM num_src GROUP BY g');
SELECT check_agg('SELECT var_pop(i4), stddev(i4), var_samp(i8), stddev_pop(i8) FROM num_src');
SELECT check_agg('SELECT g % 13 AS m, variance(i8) FROM num_src GROUP BY g % 13');

-- sum and avg of numeric have no partial state here: the partial plan is
-- not offered (GpuAgg's serial plan or PostgreSQL's parallel one remain)
SELECT check_agg('SELECT g, sum(k) AS s, avg(k) AS a FROM num_src GROUP BY g');
EXPLAIN (COSTS OFF) SELECT g, sum(k), avg(k) FROM num_src GROUP BY g;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET gpuops.parallel_startup_cost;
RESET gpuops.enable_parallel_staging;

-- sum and avg of numeric, exact.  The inputs of one display scale (a
-- numeric(p, s) column) that fit in 64 bits scaled are summed on the
-- device as integers; NaN, infinities, mixed scales and wider values on
-- the host with numeric_add.  Compared as text: value and display scale.
CREATE TABLE nsum AS
SELECT i AS id, i % 7 AS g, i % 1000 AS g1k,
       CASE WHEN i % 11 = 0 THEN NULL
            ELSE ((i::int8 * 7919) % 2000001 - 1000000) / 100.0 END::numeric(12, 2) AS p2,
       CASE WHEN i % 13 = 0 THEN NULL ELSE (i % 1000) END::numeric(10, 0) AS p0,
       ((i % 5000) * 1e-7)::numeric(20, 10) AS tiny,
       -- each fits in 64 bits, their sums do not (128-bit device sums)
       (9000000000000000000 - i)::numeric(19, 0) AS huge,
       -- wider than 64 bits: host
       ((i % 97) * 1e25)::numeric(40, 2) AS wide,
       -- one group with +Infinity, one with -Infinity too, one NaN
       CASE WHEN i = 5 THEN 'Infinity'::numeric WHEN i = 12 THEN '-Infinity'::numeric
            WHEN i = 19 THEN 'Infinity'::numeric WHEN i = 6 THEN 'NaN'::numeric
            ELSE (i % 100)::numeric(6, 1) END AS special,
       CASE WHEN i % 3 = 0 THEN round(i / 7.0, 3) ELSE round(i / 7.0, 1) END AS mixed
FROM generate_series(1, 200000) i;
ANALYZE nsum;
EXPLAIN (COSTS OFF) SELECT g, sum(p2), avg(p2) FROM nsum GROUP BY g;
SELECT check_agg('SELECT g, sum(p2) AS s, avg(p2) AS a, count(p2) AS c FROM nsum GROUP BY g');
-- which sums the host took: none here, two (wide, mixed) below
SELECT explain_json('SELECT g, sum(p2), avg(huge), sum(tiny) FROM nsum GROUP BY g')->0->'Plan'->'Numeric Sums on Host' AS host_sums;
SELECT explain_json('SELECT g, sum(wide), avg(mixed), sum(p2) FROM nsum GROUP BY g')->0->'Plan'->'Numeric Sums on Host' AS host_sums;
SELECT check_agg('SELECT g1k, sum(p2) AS s, avg(p0) AS a, sum(tiny) AS t, avg(tiny) AS at FROM nsum GROUP BY g1k');
SELECT check_agg('SELECT g, sum(huge) AS s, avg(huge) AS a FROM nsum GROUP BY g');
SELECT check_agg('SELECT sum(huge) AS s, avg(huge) AS a, sum(p2) AS s2, avg(tiny) AS at FROM nsum');
-- the host path: wide values, NaN and infinities, mixed display scales
SELECT check_agg('SELECT g, sum(wide) AS s, avg(wide) AS a FROM nsum GROUP BY g');
SELECT check_agg('SELECT g, sum(special) AS s, avg(special) AS a, sum(p2) AS p FROM nsum GROUP BY g');
SELECT check_agg('SELECT g1k, sum(mixed) AS s, avg(mixed) AS a FROM nsum GROUP BY g1k');
SELECT check_agg('SELECT g, sum(n) AS s, avg(n) AS a FROM num_src GROUP BY g');
SELECT check_agg('SELECT sum(special) AS s, avg(special) AS a FROM nsum WHERE id <> 6');
-- stored TOAST-ed numerics of 6000 digits, compressed (x) and out of line
-- (y): detoasted, too wide for the device, summed on the host; the small
-- values alone go to the device
CREATE TABLE ntoast (g int, x numeric, y numeric);
ALTER TABLE ntoast ALTER COLUMN y SET STORAGE EXTERNAL;
INSERT INTO ntoast
SELECT i % 3, v, v FROM generate_series(1, 300) i,
  LATERAL (SELECT CASE WHEN i % 10 = 0 THEN (repeat('9', 6000) || '.5')::numeric
                       ELSE (i / 4.0)::numeric(10, 2) END AS v) v;
SELECT pg_column_compression(x) AS compressed, count(*) FROM ntoast GROUP BY 1 ORDER BY 1;
SELECT check_agg('SELECT g, sum(x) AS s, avg(x) AS a, sum(y) AS sy FROM ntoast GROUP BY g');
SELECT check_agg('SELECT g, sum(x) AS s, avg(y) AS a FROM ntoast WHERE length(x::text) < 100 GROUP BY g');
SELECT check_agg('SELECT g, var_samp(x) AS v, stddev_pop(y) AS s FROM ntoast GROUP BY g');
DROP TABLE ntoast;
-- FILTER, all-NULL and empty inputs, HAVING
SELECT check_agg('SELECT g, sum(p2) FILTER (WHERE id % 2 = 0) AS s, avg(mixed) FILTER (WHERE p0 > 500) AS a FROM nsum GROUP BY g');
SELECT check_agg('SELECT g, sum(p2) FILTER (WHERE false) AS s, avg(special) FILTER (WHERE false) AS a FROM nsum GROUP BY g');
SELECT check_agg('SELECT sum(p2) AS s, avg(mixed) AS a FROM nsum WHERE id < 0');
SELECT check_agg('SELECT g1k, sum(p2) AS s FROM nsum GROUP BY g1k HAVING avg(mixed) > 14286');
-- over the device budget: chunks' scaled sums combined on the host
SET gpuops.device_memory_limit = '1MB';
SELECT check_agg('SELECT g1k, sum(p2) AS s, avg(huge) AS a, sum(mixed) AS m FROM nsum GROUP BY g1k');
RESET gpuops.device_memory_limit;

-- variance and stddev of numeric: the device's scaled sums and sums of
-- squares (192 bits, at twice the scale) become numeric_accum's state for
-- PostgreSQL's own final function; NaN, infinities, mixed scales and wide
-- values take the host path (numeric_accum per row)
EXPLAIN (COSTS OFF) SELECT g, var_samp(p2), stddev(p2) FROM nsum GROUP BY g;
SELECT check_agg('SELECT g, variance(p2) AS v, var_samp(p2) AS vs, var_pop(p2) AS vp, stddev(p2) AS s,
                         stddev_samp(tiny) AS st, stddev_pop(p0) AS sp FROM nsum GROUP BY g');
SELECT check_agg('SELECT g1k, var_samp(huge) AS v, stddev(huge) AS s, var_pop(tiny) AS t FROM nsum GROUP BY g1k');
SELECT check_agg('SELECT var_samp(p2) AS v, stddev_pop(huge) AS s, variance(tiny) AS t, stddev(p0) AS s0 FROM nsum');
SELECT explain_json('SELECT g, var_samp(p2), stddev(wide), variance(mixed) FROM nsum GROUP BY g')->0->'Plan'->'Numeric Sums on Host' AS host_sums;
SELECT check_agg('SELECT g, var_samp(wide) AS v, stddev(mixed) AS s, var_pop(special) AS sp,
                         stddev_samp(special) AS ss, variance(p2) AS vp FROM nsum GROUP BY g');
SELECT check_agg('SELECT g, var_samp(n) AS v, stddev_pop(n) AS s FROM num_src GROUP BY g');
-- one input per group (var_samp NULL, var_pop 0), FILTER, empty input, HAVING
SELECT check_agg('SELECT id, var_samp(p2) AS v, var_pop(p2) AS vp, stddev(special) AS s FROM nsum WHERE id < 100 GROUP BY id');
SELECT check_agg('SELECT g, var_samp(p2) FILTER (WHERE id % 2 = 0) AS v, stddev(mixed) FILTER (WHERE false) AS s FROM nsum GROUP BY g');
SELECT check_agg('SELECT var_samp(p2) AS v, stddev(mixed) AS s FROM nsum WHERE id < 0');
SELECT check_agg('SELECT g1k, count(*) AS c FROM nsum GROUP BY g1k HAVING stddev(p2) > 5800');
-- over the device budget: the chunks' sums of squares combined on the host
SET gpuops.device_memory_limit = '1MB';
SELECT check_agg('SELECT g1k, var_samp(p2) AS v, stddev_pop(huge) AS s, variance(mixed) AS m FROM nsum GROUP BY g1k');
RESET gpuops.device_memory_limit;


DROP TABLE nsum;
DROP TABLE num_src;
