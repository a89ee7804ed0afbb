-- numeric in the device expression evaluator: comparisons, + - * %, unary
-- minus and abs, casts to and from integers and floats, and to
-- numeric(p, s), as join clauses (GpuNestLoop, and a GpuHashJoin's extra
-- clause).  Every result is compared with PostgreSQL's (gpuops.enabled =
-- off), EXCEPT ALL both ways.  Values the device does not hold (NaN, the
-- infinities, too many digits, a TOAST-ed numeric) are decided by
-- PostgreSQL row by row; run-time errors are PostgreSQL's own.
SET gpuops.min_rows = 0;
SET gpuops.startup_cost = 0;
SET gpuops.tuple_cost = 0;
SET max_parallel_workers_per_gather = 0;
SET gpuops.cpu_fallback = off;

-- p: numeric(10,2); u: unconstrained, every scale from 0 to 20 and the
-- values the device does not hold; i: integers for the casts
CREATE TABLE en_l AS
SELECT i AS id,
       CASE WHEN i % 11 = 0 THEN NULL
            ELSE ((i * 7919 % 20001) - 10000) / 100.0 END::numeric(10,2) AS p,
       CASE WHEN i % 13 = 0 THEN NULL
            WHEN i % 17 = 0 THEN 'NaN'::numeric
            WHEN i % 19 = 0 THEN 'Infinity'::numeric
            WHEN i % 23 = 0 THEN '-Infinity'::numeric
            WHEN i % 29 = 0 THEN 1e30 + i
            WHEN i % 31 = 0 THEN 1.0 / 3
            WHEN i % 37 = 0 THEN 12.345000000000000000000000
            WHEN i % 41 = 0 THEN 0.000000000000000000001 * i
            WHEN i % 43 = 0 THEN 288230376151711743 - i
            ELSE round((i * 37 % 2003 - 1000)::numeric / 8, i % 21) END AS u,
       CASE WHEN i % 7 = 0 THEN NULL ELSE (i * 104729 % 2000003 - 1000000) END::int8 AS i8,
       CASE WHEN i % 9 = 0 THEN NULL ELSE (i * 53 % 200 - 100) END::int4 AS i4
FROM generate_series(1, 300) i;
CREATE TABLE en_r AS
SELECT i AS id,
       CASE WHEN i % 8 = 0 THEN NULL
            ELSE ((i * 4099 % 20001) - 10000) / 100.0 END::numeric(10,2) AS p,
       CASE WHEN i % 10 = 0 THEN NULL
            WHEN i % 21 = 0 THEN 'NaN'::numeric
            WHEN i % 27 = 0 THEN 'Infinity'::numeric
            WHEN i % 33 = 0 THEN -12.345
            WHEN i % 35 = 0 THEN 0
            ELSE round((i * 53 % 1999 - 1000)::numeric / 3, i % 7) END AS u,
       CASE WHEN i % 6 = 0 THEN NULL ELSE (i * 4099 % 20001 - 10000) END::int4 AS i4,
       CASE WHEN i % 5 = 0 THEN NULL WHEN i % 23 = 0 THEN 'NaN'::float8
            ELSE i * 0.917 - 40 END AS f8,
       (i * 7 % 200 - 100)::int4 AS k
FROM generate_series(1, 120) i;
-- a numeric of 8000 digits, stored compressed
INSERT INTO en_r VALUES (1000, 1.5, (repeat('7', 8000) || '.25')::numeric, 5, 1, 5);
ANALYZE en_l;
ANALYZE en_r;
SELECT pg_column_size(u) < 1000 AS compressed FROM en_r WHERE id = 1000;

-- en_check(e): the clause e as an inner join's, compared with PostgreSQL;
-- and whether all of it ran on the device (its Device Filter is its Join
-- Filter)
CREATE FUNCTION en_check(e text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE q text := 'SELECT l.id AS lid, r.id AS rid FROM en_l l JOIN en_r r ON ' || e;
  jf text; df text;
BEGIN
  SELECT substring(l from 'Join Filter: (.*)$') INTO jf FROM plan_lines(q) l
   WHERE l LIKE '%Join Filter:%';
  SELECT substring(l from 'Device Filter: (.*)$') INTO df FROM plan_lines(q) l
   WHERE l LIKE '%Device Filter:%';
  RETURN check_join_on(q, 'GpuNestLoop') || ' device=' ||
    CASE WHEN df IS NULL THEN 'none' WHEN df = jf THEN 'all' ELSE 'part' END;
END $$;

SELECT e, en_check(e)
FROM (VALUES
  ('l.p < r.p'), ('l.p = r.p OR l.p > r.p + 150'), ('l.p <> r.p AND l.p >= r.p'),
  ('l.u < r.u'), ('l.u <= r.u AND l.u >= r.u - 10'), ('l.u = r.u OR l.u = r.u + 1'), ('l.u > r.p'),
  ('l.p BETWEEN r.p - 1.5 AND r.p + 1.5'), ('l.u BETWEEN r.u AND r.u + 0.001'),
  ('l.p + r.p > 120.25'), ('l.p - r.p < -150'), ('l.u + r.u > 200'), ('l.u - r.u BETWEEN -1 AND 1'),
  ('l.p * r.p > 5000'), ('l.u * r.u < -20000'), ('l.u * r.p > 1e6'), ('l.p * 1.000001 > r.p'),
  ('r.p <> 0 AND l.p % r.p > 10'), ('r.u <> 0 AND l.u % r.u < -100'), ('mod(l.p, 7.5) > mod(r.p, 7.5)'),
  ('-l.p > r.p'), ('-l.u < r.u'), ('abs(l.p) < abs(r.p) - 50'), ('@ l.u > r.u + 500'),
  ('l.i8::numeric > r.p * 1000'), ('l.i4 + r.p > 40'), ('l.p > r.i4'), ('l.i8 * r.p < -1e7'),
  ('l.p::int4 < r.i4 % 100'), ('abs(l.u) < 1e9 AND l.u::int8 > r.i4'), ('abs(l.u) < 30000 AND l.u::int2 < r.i4'),
  ('l.p::float8 < r.f8'), ('l.u::float8 > r.f8 + 500'), ('l.p::float4 > r.f8::float4'),
  ('l.u::float4 < r.f8::float4'),
  ('l.p::numeric(6,1) <= r.p::numeric(6,1) AND l.p > r.p'), ('abs(l.u) < 1e9 AND l.u::numeric(12,0) > r.p'),
  ('abs(l.u) < 1e9 AND l.u::numeric(20,3) >= r.u'), ('(l.u * 0)::numeric(3,2) < r.p'),
  ('l.p IN (r.p, 1.5, -2.25)'), ('l.u NOT IN (0, 1, r.u)'), ('l.p IS DISTINCT FROM r.p AND l.p < r.p'),
  ('l.u IS NOT DISTINCT FROM r.u'), ('l.u IS NULL OR r.u IS NULL'),
  ('CASE WHEN l.p > 0 THEN l.p ELSE r.p END > 25.5'),
  ('CASE WHEN l.u > r.u THEN l.u - r.u END < 3'),
  -- kept by PostgreSQL: a NaN constant, numeric division
  ('l.u = ''NaN'' OR l.p < r.p'),
  ('l.p / r.p > 2 AND r.p > 0'),
  ('l.p < r.p AND l.p::text < r.p::text')
) v(e);

-- outer, semi and anti joins
SELECT check_join_on('SELECT l.id AS lid, r.id AS rid FROM en_l l LEFT JOIN en_r r
                      ON l.u BETWEEN r.u - 1 AND r.u + 1', 'GpuNestLoop');
SELECT check_join_on('SELECT l.id FROM en_l l WHERE EXISTS
                      (SELECT 1 FROM en_r r WHERE l.p * 2 < r.p - 100)', 'GpuNestLoop');
SELECT check_join_on('SELECT l.id FROM en_l l WHERE NOT EXISTS
                      (SELECT 1 FROM en_r r WHERE l.u > r.u + 500)', 'GpuNestLoop');

-- a hash join's extra clause on numerics
SET enable_nestloop = off;
SET enable_mergejoin = off;
EXPLAIN (COSTS OFF)
SELECT l.id AS lid, r.id AS rid FROM en_l l JOIN en_r r ON l.i4 = r.k AND l.p + r.p > 10;
SELECT check_join('SELECT l.id AS lid, r.id AS rid FROM en_l l JOIN en_r r
                   ON l.i4 = r.k AND l.p + r.p > 10');
SELECT check_join('SELECT l.id AS lid, r.id AS rid FROM en_l l LEFT JOIN en_r r
                   ON l.i4 = r.k AND l.u < r.u');
RESET enable_nestloop;
RESET enable_mergejoin;

-- Params of numeric type, bound once per execution
SET plan_cache_mode = force_generic_plan;
PREPARE en_p(numeric) AS
SELECT count(*), sum(l.id), sum(r.id) FROM en_l l JOIN en_r r ON l.p + $1 < r.p;
SELECT EXISTS (SELECT FROM plan_lines('EXECUTE en_p(1)') l WHERE l LIKE '%Device Filter%') AS device;
EXECUTE en_p(10.5);
EXECUTE en_p('NaN');
EXECUTE en_p(NULL);
EXECUTE en_p(-1e25);
SET gpuops.enabled = off;
EXECUTE en_p(10.5);
EXECUTE en_p('NaN');
EXECUTE en_p(NULL);
EXECUTE en_p(-1e25);
SET gpuops.enabled = on;
DEALLOCATE en_p;
RESET plan_cache_mode;

-- run-time errors: PostgreSQL's own, with gpuops on and off
CREATE TABLE en_x (id int, n numeric, z numeric, m numeric(4,2));
INSERT INTO en_x VALUES (1, 1.5, 1, 1.25), (2, 99999999999.5, 0, -99.99),
  (3, 'NaN', 2, 0), (4, 'Infinity', 3, 12.5), (5, 2147483647.5, 4, 1);
SELECT e, check_error('SELECT count(*) FROM en_x a JOIN en_x b ON ' || e)
FROM (VALUES
  ('a.n % b.z > 0'), ('a.m % b.z = 0'), ('a.n::int4 > b.id'), ('a.n::int8 > b.id'),
  ('(a.m * 1000)::int2 > b.id'), ('(a.n * b.n)::int8 > 0'), ('a.n::numeric(5,1) > b.m'),
  ('(a.m * 100)::numeric(4,2) > b.m'), ('a.m::numeric(3,1) > b.m - 1'),
  ('a.n::float8 > b.id'), ('a.n - b.n > 0'),
  -- never reached
  ('b.z <> 0 AND a.m % b.z = 0'), ('CASE WHEN b.z = 0 THEN false ELSE a.m % b.z > 0 END'),
  ('a.id + b.id < 3 AND (a.m * 1000)::int2 > b.id')
) v(e);

-- what ran where: values the device does not hold are rechecked pairs
SELECT j->'Pairs Tested' AS tested, j->'Pairs Rechecked' AS rechecked, (j->>'Actual Rows')::numeric::int8 AS rows
FROM nl_analyze('SELECT l.id, r.id FROM en_l l JOIN en_r r ON l.p < r.p') j;
SELECT (j->>'Pairs Rechecked')::int > 0 AS rechecked, (j->>'Actual Rows')::numeric::int8 AS rows
FROM nl_analyze('SELECT l.id, r.id FROM en_l l JOIN en_r r ON l.u < r.u') j;
