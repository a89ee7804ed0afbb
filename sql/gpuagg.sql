-- GpuAgg: GROUP BY and aggregates.  Every result is compared with
-- PostgreSQL's (gpuops.enabled = off) row by row as text (check_agg), so a
-- value must print exactly as PostgreSQL prints it.
-- float sums, averages and variances too (off by default: their rounding
-- is a parallel plan's); these tables' values give PostgreSQL's digits
-- GpuQuery (gpuops.enable_query, on by default) would take some of these
-- query blocks whole; this file tests GpuAgg.
SET gpuops.enable_query = off;
SET gpuops.enable_float_aggs = on;
SET gpuops.min_rows = 0;
SET gpuops.startup_cost = 0;
SET max_parallel_workers_per_gather = 0;
SET gpuops.cpu_fallback = off;
-- PostgreSQL's hash and sorted aggregation can be cheaper than GpuAgg under
-- its cost model for these small inputs, the more so as ANALYZE's sample
-- varies; with gpuops on, both are disabled so GpuAgg is taken throughout.
-- The oracle (gpuops off) runs with the same settings: PostgreSQL's plans.
SET enable_hashagg = off;
SET enable_sort = off;

-- 200000 rows (several 64K-row batches): keys of every supported type with
-- NULLs, duplicates and specials; sk is skewed (half the rows 0).  Float
-- values are multiples of 1/8 below 2^40, so their sums are exact in any
-- order, as the results of a sum must be for PostgreSQL's serial loop and a
-- tree reduction to agree.
CREATE TABLE agg_src AS
SELECT i AS id,
       CASE WHEN i % 97 = 0 THEN NULL ELSE (i % 1000)::int4 END AS g,
       (i % 301 - 150)::int2 AS g2,
       CASE WHEN i % 2 = 0 THEN 0 ELSE i % 5003 END::int8 AS sk,
       CASE WHEN i % 89 = 0 THEN NULL ELSE i END::int4 AS v4,
       CASE WHEN i % 83 = 0 THEN NULL ELSE (i % 30001 - 15000)::int2 END AS v2,
       CASE WHEN i % 1009 = 0 THEN 9223372036854775807
            WHEN i % 1013 = 0 THEN -9223372036854775807
            WHEN i % 79 = 0 THEN NULL ELSE i::int8 * 1000003 END AS v8,
       CASE WHEN i % 71 = 0 THEN NULL ELSE (i % 4001 - 2000) / 8.0 END::float8 AS f8,
       CASE WHEN i % 73 = 0 THEN NULL ELSE (i % 301 - 150) / 4.0 END::float4 AS f4,
       CASE WHEN i % 5 = 0 THEN NULL ELSE i % 3 = 0 END AS b,
       CASE WHEN i % 83 = 0 THEN NULL ELSE date '2020-01-01' + (i % 1500) END AS d,
       timestamp '2021-03-04 05:06:07' + (i % 977) * interval '1 hour 1 second' AS ts,
       timestamptz '2021-03-04 05:06:07+00' + (i % 613) * interval '1 minute' AS tz,
       CASE WHEN i % 7 = 0 THEN interval '1 day' WHEN i % 7 = 1 THEN interval '24 hours'
            ELSE (i % 50) * interval '1 hour' END AS iv,
       time '10:00' + (i % 37) * interval '1 minute' AS tm,
       CASE WHEN i % 61 = 0 THEN NULL
            ELSE ('00000000-0000-0000-0000-' || lpad(to_hex(i % 211), 12, '0'))::uuid END AS u,
       CASE WHEN i % 59 = 0 THEN NULL WHEN i % 59 = 1 THEN ''
            ELSE 'key ' || (i % 397) END AS t,
       ('v' || (i % 13))::varchar(10) AS vc
FROM generate_series(1, 200000) i;
-- float specials: NaN, infinities and -0, in groups of their own and mixed
INSERT INTO agg_src (id, g, f8, f4) VALUES
  (-1, -1, 'NaN', 'NaN'), (-2, -1, 1, 1), (-3, -2, 'Infinity', 'Infinity'),
  (-4, -2, 5, 5), (-5, -3, '-Infinity', '-Infinity'), (-6, -3, 'Infinity', 'Infinity'),
  (-7, -4, '-0', '-0'), (-8, -5, 'NaN', 'NaN'), (-9, -5, 'NaN', 'NaN');
ANALYZE agg_src;

-- the plan
EXPLAIN (COSTS OFF) SELECT g, count(*), sum(v4) FROM agg_src GROUP BY g;
EXPLAIN (COSTS OFF, VERBOSE)
SELECT g % 10 AS m, sum(v4) FILTER (WHERE b), avg(f8) FROM agg_src GROUP BY g % 10 HAVING count(*) > 1;
EXPLAIN (COSTS OFF) SELECT count(*), min(d) FROM agg_src;

-- group keys of every type
SELECT check_agg('SELECT g, count(*) AS n FROM agg_src GROUP BY g');
SELECT check_agg('SELECT g2, count(*) AS n, sum(v4) FROM agg_src GROUP BY g2');
SELECT check_agg('SELECT sk, count(*) AS n, sum(v8) FROM agg_src GROUP BY sk');
SELECT check_agg('SELECT f8, count(*) AS n FROM agg_src GROUP BY f8');
SELECT check_agg('SELECT f4, count(*) AS n FROM agg_src GROUP BY f4');
SELECT check_agg('SELECT b, count(*) AS n, sum(v2) FROM agg_src GROUP BY b');
SELECT check_agg('SELECT d, count(*) AS n FROM agg_src GROUP BY d');
SELECT check_agg('SELECT ts, count(*) AS n FROM agg_src GROUP BY ts');
SELECT check_agg('SELECT tz, count(*) AS n FROM agg_src GROUP BY tz');
SELECT check_agg('SELECT tm, count(*) AS n FROM agg_src GROUP BY tm');
-- '1 day' and '24 hours' are equal: one group.  Which of them PostgreSQL
-- shows depends on its plan (a hash aggregate shows the first row, a sort
-- may reorder equal keys), so compare them justified
SELECT check_agg('SELECT justify_hours(iv) AS iv, count(*) AS n FROM agg_src GROUP BY iv');
SELECT check_agg('SELECT u, count(*) AS n FROM agg_src GROUP BY u');
SELECT check_agg('SELECT t, count(*) AS n, sum(v4) FROM agg_src GROUP BY t');
SELECT check_agg('SELECT vc, count(*) AS n FROM agg_src GROUP BY vc');
-- several keys, an expression key, every row its own group, one group
SELECT check_agg('SELECT g, b, t, count(*) AS n, max(d) FROM agg_src GROUP BY g, b, t');
SELECT check_agg('SELECT u, iv, f8, g2, count(*) AS n FROM agg_src GROUP BY u, iv, f8, g2');
SELECT check_agg('SELECT g % 10 AS m, count(*) AS n, sum(v4) FROM agg_src GROUP BY g % 10');
SELECT check_agg('SELECT id, count(*) AS n, sum(v4), min(f8) FROM agg_src GROUP BY id');
SELECT check_agg('SELECT 1 AS one, count(*) AS n FROM agg_src GROUP BY 1');

-- every aggregate of every type, per group and without GROUP BY
SELECT check_agg('SELECT g, count(*), count(v4), count(t), count(iv) FROM agg_src GROUP BY g');
SELECT check_agg('SELECT g, sum(v2), sum(v4), sum(v8), avg(v2), avg(v4), avg(v8) FROM agg_src GROUP BY g');
SELECT check_agg('SELECT sk, sum(f4), sum(f8), avg(f4), avg(f8) FROM agg_src GROUP BY sk');
SELECT check_agg('SELECT g, min(v2), max(v2), min(v4), max(v4), min(v8), max(v8) FROM agg_src GROUP BY g');
SELECT check_agg('SELECT g, min(f4), max(f4), min(f8), max(f8) FROM agg_src GROUP BY g');
SELECT check_agg('SELECT g, min(d), max(d), min(ts), max(ts), min(tz), max(tz) FROM agg_src GROUP BY g');
-- of equal intervals min and max return the later row's, in the plan's row order: justified
SELECT check_agg('SELECT g, min(tm), max(tm), justify_hours(min(iv)) AS mi, justify_hours(max(iv)) AS ma
                  FROM agg_src GROUP BY g');
SELECT check_agg('SELECT g, bool_and(b), bool_or(b), every(b) FROM agg_src GROUP BY g');
-- min and max of text: ranks in the collation's order, under the
-- database's collation, "C", and ICU's root collation where the server has
-- it (else "C" again); mixed case orders differently under each
SELECT check_agg('SELECT g, min(t), max(t), min(vc), max(vc) FROM agg_src GROUP BY g');
CREATE VIEW agg_mixed AS
SELECT g, b, CASE WHEN id % 3 = 0 THEN upper(t) WHEN id % 3 = 1 THEN 'a' || t ELSE t END AS tt FROM agg_src;
SELECT check_agg('SELECT g % 10 AS m, min(tt) AS a, max(tt) AS b, min(tt COLLATE "C") AS c,
                         max(tt COLLATE "C") AS d FROM agg_mixed GROUP BY g % 10');
SELECT check_agg(format('SELECT g %% 10 AS m, min(tt COLLATE %I) AS a, max(tt COLLATE %I) AS b
                         FROM agg_mixed GROUP BY g %% 10', coll, coll))
FROM (SELECT coalesce((SELECT collname FROM pg_collation WHERE collname = 'und-x-icu'), 'C') AS coll) c;
SELECT check_agg('SELECT b, min(tt) FILTER (WHERE g > 500) AS a, max(tt) AS z FROM agg_mixed GROUP BY b
                  HAVING max(tt) > ''a''');
SELECT check_agg('SELECT min(tt), max(tt) FROM agg_mixed');
-- char(n): keys and min/max/count(DISTINCT) by bpchar's comparison, which
-- ignores trailing blanks ('k5' and 'k5      ' are one value; which of them
-- PostgreSQL shows depends on its plan, so those print rtrim'd)
CREATE VIEW agg_chars AS
SELECT g, id, t::char(6) AS c6,
       CASE WHEN id % 2 = 0 THEN rpad('k' || (id % 13), 8)::bpchar ELSE ('k' || (id % 13))::bpchar END AS cc
FROM agg_src;
SELECT check_agg('SELECT c6, count(*) AS n, min(c6), max(c6) FROM agg_chars GROUP BY c6');
SELECT check_agg('SELECT rtrim(cc) AS c, count(*) AS n FROM agg_chars GROUP BY cc');
SELECT check_agg('SELECT g % 10 AS m, rtrim(min(cc)) AS a, rtrim(max(cc)) AS b, count(DISTINCT cc) AS d FROM agg_chars GROUP BY g % 10');
SELECT check_agg('SELECT g % 10 AS m, min(c6 COLLATE "C") AS a, max(c6) AS b, count(DISTINCT c6) AS d FROM agg_chars GROUP BY g % 10');
SELECT check_agg('SELECT count(*), count(v4), sum(v2), sum(v4), sum(v8), avg(v4), avg(v8),
                         sum(f8), avg(f8), min(f4), max(d), bool_or(b) FROM agg_src');
-- variance and stddev: PostgreSQL's own final functions on {N, Sx, Sxx};
-- Sxx combines in another order than PostgreSQL's serial loop, so compare
-- through 10 significant digits
SELECT check_agg('SELECT g, round(var_samp(f8)::numeric, 6) AS vs, round(var_pop(f8)::numeric, 6) AS vp,
                         round(stddev(f4)::numeric, 8) AS sd, round(stddev_pop(f8)::numeric, 8) AS sp,
                         round(variance(f4)::numeric, 6) AS va, round(stddev_samp(f8)::numeric, 8) AS ss
                  FROM agg_src WHERE g >= 0 GROUP BY g');
-- one row and two rows: NULL sample variance, zero population variance
SELECT check_agg('SELECT id, var_samp(f8), var_pop(f8), stddev(f8) FROM agg_src WHERE id < 20 GROUP BY id');
-- float specials: NaN, infinities, -0, infinity minus infinity
SELECT check_agg('SELECT g, sum(f8), avg(f8), min(f8), max(f8), sum(f4), avg(f4), var_pop(f8)
                  FROM agg_src WHERE g < 0 GROUP BY g');
-- integer sums past int64 (sum(int8) is numeric), avg of int8 extremes
SELECT check_agg('SELECT g % 3 AS m, sum(v8), avg(v8) FROM agg_src GROUP BY g % 3');

-- expressions: aggregate arguments, FILTER, HAVING, functionally dependent columns
SELECT check_agg('SELECT g, sum(v4 * 2 + 1), avg(f8 / 2), max(d + 1) FROM agg_src GROUP BY g');
SELECT check_agg('SELECT g, count(*) FILTER (WHERE b), sum(v4) FILTER (WHERE v4 > 1000),
                         avg(f8) FILTER (WHERE t LIKE ''key 1%''), count(t) FILTER (WHERE b IS NULL)
                  FROM agg_src GROUP BY g');
SELECT check_agg('SELECT g, sum(v4) FROM agg_src GROUP BY g HAVING count(*) > 200 AND sum(v4) > 20000000');
SELECT check_agg('SELECT t, count(*) AS n FROM agg_src GROUP BY t HAVING min(d) > date ''2020-01-05''');
CREATE TABLE agg_pk (id int PRIMARY KEY, name text, score int);
INSERT INTO agg_pk SELECT i, 'name ' || i, i % 17 FROM generate_series(1, 1000) i;
ANALYZE agg_pk;
SELECT check_agg('SELECT p.id, p.name, count(*) AS n, sum(s.v4)
                  FROM agg_pk p JOIN agg_src s ON s.g = p.id GROUP BY p.id');
SELECT check_agg('SELECT upper(t) AS ut, count(*) AS n FROM agg_src GROUP BY upper(t)');

-- NULL group keys, all-NULL groups, empty inputs
SELECT check_agg('SELECT g, count(v4), sum(v4), avg(f8), bool_and(t IS NULL) FROM agg_src WHERE v4 IS NULL GROUP BY g');
SELECT check_agg('SELECT t, sum(f8), bool_or(u IS NULL) AS un FROM agg_src WHERE t IS NULL OR t = '''' GROUP BY t');
SELECT check_agg('SELECT g, count(*) AS n FROM agg_src WHERE false GROUP BY g');
SELECT check_agg('SELECT count(*), sum(v4), avg(f8), min(d), bool_and(b) FROM agg_src WHERE id < -100');
CREATE TABLE agg_empty (g int, v int);
SELECT check_agg('SELECT count(*), sum(v), max(v) FROM agg_empty');
SELECT check_agg('SELECT g, count(*) AS n FROM agg_empty GROUP BY g');

-- TOAST-ed and long text keys: equal values in separate rows are one group
CREATE TABLE agg_toast AS
SELECT i, repeat(md5((i % 3)::text), 300 + (i % 3)) AS big, i % 5 AS v FROM generate_series(1, 300) i;
SELECT check_agg('SELECT big, count(*) AS n, sum(v) FROM agg_toast GROUP BY big');
SELECT check_agg('SELECT md5(big) AS h, count(*) AS n FROM agg_toast GROUP BY big');
SELECT check_agg('SELECT v, md5(min(big)) AS a, md5(max(big)) AS b FROM agg_toast GROUP BY v');

-- float overflow: PostgreSQL's error
SELECT sum(x) FROM (VALUES (1e308::float8), (1e308::float8)) v(x);
SET gpuops.enabled = off;
SELECT sum(x) FROM (VALUES (1e308::float8), (1e308::float8)) v(x);
SET gpuops.enabled = on;
SELECT sum(x) FROM (VALUES (3e38::float4), (3e38::float4)) v(x);
SELECT sum(x) FROM (VALUES ('Infinity'::float8), (1e308::float8), (1e308::float8)) v(x);

-- what keeps PostgreSQL's plan
SELECT uses_gpuagg('SELECT g, count(DISTINCT t::bytea) FROM agg_src GROUP BY g') AS count_distinct_bytea,
       uses_gpuagg('SELECT g, regr_slope(v4, v8) FROM agg_src GROUP BY g') AS regr_slope,
       uses_gpuagg('SELECT g, string_agg(t, '','') FROM agg_src GROUP BY g') AS string_agg,
       uses_gpuagg('SELECT g, array_agg(v4 ORDER BY id) FROM agg_src GROUP BY g') AS ordered,
       uses_gpuagg('SELECT g, b, count(*) FROM agg_src GROUP BY ROLLUP (g, b)') AS rollup,
       uses_gpuagg('SELECT g, min(ARRAY[v4]) FROM agg_src GROUP BY g') AS array_min,
       uses_gpuagg('SELECT t::bytea, count(*) FROM agg_src GROUP BY 1') AS bytea_key;
SET gpuops.enable_agg = off;
SELECT uses_gpuagg('SELECT g, count(*) FROM agg_src GROUP BY g') AS agg_off;
RESET gpuops.enable_agg;
SET gpuops.min_rows = 1000000;
SELECT uses_gpuagg('SELECT g, count(*) FROM agg_src GROUP BY g') AS below_min_rows;
SET gpuops.min_rows = 0;

-- rescans: a parameter of the outer query changes the input; without one
-- the same groups come again
SELECT check_agg('SELECT s.x, a.n, a.total FROM generate_series(1, 4) s(x),
                  LATERAL (SELECT count(*) AS n, sum(v4) AS total FROM agg_src WHERE g = s.x) a');
SET enable_material = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT check_agg('SELECT s.x, a.g, a.n FROM generate_series(1, 3) s(x)
                  JOIN (SELECT g, count(*) AS n FROM agg_src GROUP BY g) a ON a.g = s.x * 7');
RESET enable_material;
RESET enable_hashjoin;
RESET enable_mergejoin;

-- EXPLAIN ANALYZE figures
SELECT n->>'Node Type' AS node, n->>'Custom Plan Provider' AS provider,
       n->'Group Key' AS group_key, n->>'Strategy' AS strategy,
       (n->>'Input Rows')::bigint AS input_rows, (n->>'Groups')::bigint AS groups,
       (n->>'Actual Rows')::numeric::bigint AS rows, (n->>'Key Words')::int AS key_words
FROM explain_json('SELECT g, b, count(*) FROM agg_src GROUP BY g, b') j,
     LATERAL (SELECT j->0->'Plan' AS n) p;

-- inputs larger than the device budget: aggregated in chunks of consecutive
-- rows, groups merged on the host (a group spans chunks; min/max ties take
-- the later row as in one piece)
SET gpuops.device_memory_limit = '1MB';
SELECT check_agg('SELECT g, count(*) AS n, sum(v4), avg(v8), min(f8), max(d) FROM agg_src GROUP BY g');
SELECT check_agg('SELECT sk, count(*) AS n, sum(v2), justify_hours(max(iv)) AS ma, justify_hours(min(iv)) AS mi,
                         bool_or(b) FROM agg_src GROUP BY sk');
SELECT check_agg('SELECT t, b, count(*) AS n, sum(f8), avg(f4) FROM agg_src GROUP BY t, b');
SELECT check_agg('SELECT g % 7 AS m, round(var_samp(f8)::numeric, 6) AS vs, count(v4) FILTER (WHERE b) AS nb
                  FROM agg_src GROUP BY g % 7');
SELECT check_agg('SELECT count(*), sum(v8), avg(v4), min(tz), max(tm) FROM agg_src');
SELECT check_agg('SELECT g, min(tt), max(tt) FROM agg_mixed GROUP BY g');
SELECT (j->>'Chunks')::int > 10 AS chunked, (j->>'Groups')::bigint > (j->>'Actual Rows')::numeric::bigint AS merged,
       (j->>'Actual Rows')::numeric::bigint AS rows
FROM explain_json('SELECT g, count(*) FROM agg_src GROUP BY g') e, LATERAL (SELECT e->0->'Plan' AS j) p;
RESET gpuops.device_memory_limit;

-- device failures: the CPU backend takes over, or the query fails
SET gpuops.cpu_fallback = notice;
SET gpuops.fault_injection = no_device;
SELECT check_agg('SELECT g, count(*) AS n, sum(f8) FROM agg_src GROUP BY g');
SET gpuops.fault_injection = out_of_memory;
SELECT check_agg('SELECT t, count(*) AS n, max(d) FROM agg_src GROUP BY t');
SET gpuops.fault_injection = kernel_error;
SELECT check_agg('SELECT count(*), avg(v8) FROM agg_src');
SET gpuops.cpu_fallback = off;
SELECT g, count(*) FROM agg_src GROUP BY g;
RESET gpuops.fault_injection;

DROP VIEW agg_mixed, agg_chars;
DROP TABLE agg_src, agg_pk, agg_empty, agg_toast;
