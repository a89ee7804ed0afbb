-- GpuNestLoop and the device expression evaluator.  Joins with no usable
-- equality; every result is compared with PostgreSQL's (gpuops.enabled =
-- off) as a multiset, EXCEPT ALL both ways.  Each evaluator operation is
-- tested as a join clause over two small tables of boundary values, NULLs,
-- NaN, infinities and -0; run-time errors must be PostgreSQL's own.
SET gpuops.min_rows = 0;
SET gpuops.startup_cost = 0;
SET gpuops.tuple_cost = 0;
SET max_parallel_workers_per_gather = 0;
SET gpuops.cpu_fallback = off;

CREATE TABLE ev_l AS
SELECT i AS id,
       CASE WHEN i % 11 = 0 THEN NULL ELSE (i * 37 % 200 - 100)::int2 END AS i2,
       CASE WHEN i % 13 = 0 THEN NULL ELSE (i * 7919 % 20001 - 10000)::int4 END AS i4,
       CASE WHEN i % 17 = 0 THEN NULL ELSE (i::int8 * 104729 % 2000003 - 1000000) END AS i8,
       CASE WHEN i % 19 = 0 THEN NULL WHEN i % 23 = 0 THEN 'NaN'::float4
            WHEN i % 29 = 0 THEN '-0'::float4 ELSE (i * 0.37 - 20)::float4 END AS f4,
       CASE WHEN i % 19 = 1 THEN NULL WHEN i % 31 = 0 THEN 'NaN'::float8
            WHEN i % 37 = 0 THEN 'Infinity'::float8 WHEN i % 41 = 0 THEN '-Infinity'::float8
            WHEN i % 43 = 0 THEN '-0'::float8 ELSE i * 0.731 - 30 END AS f8,
       CASE WHEN i % 7 = 0 THEN NULL ELSE i % 2 = 0 END AS b,
       CASE WHEN i % 10 = 3 THEN NULL ELSE date '2024-01-01' + (i * 13 % 90) END AS d,
       CASE WHEN i % 10 = 4 THEN NULL
            ELSE timestamp '2024-01-01' + (i * 97 % 5000) * interval '1 minute' END AS ts,
       CASE WHEN i % 10 = 5 THEN NULL
            ELSE timestamptz '2024-01-01 00:00+00' + (i * 89 % 5000) * interval '1 minute' END AS tz,
       CASE WHEN i % 10 = 6 THEN NULL ELSE time '00:00' + (i * 53 % 1440) * interval '1 minute' END AS tm
FROM generate_series(1, 300) i;
CREATE TABLE ev_r AS
SELECT i AS id,
       CASE WHEN i % 9 = 0 THEN NULL ELSE (i * 53 % 200 - 100)::int2 END AS i2,
       CASE WHEN i % 8 = 0 THEN NULL ELSE (i * 4099 % 20001 - 10000)::int4 END AS i4,
       CASE WHEN i % 12 = 0 THEN NULL ELSE (i::int8 * 15485863 % 2000003 - 1000000) END AS i8,
       CASE WHEN i % 10 = 0 THEN NULL WHEN i % 21 = 0 THEN 'NaN'::float4
            WHEN i % 27 = 0 THEN '-0'::float4 ELSE (i * 0.53 - 25)::float4 END AS f4,
       CASE WHEN i % 10 = 1 THEN NULL WHEN i % 25 = 0 THEN 'NaN'::float8
            WHEN i % 33 = 0 THEN 'Infinity'::float8 WHEN i % 35 = 0 THEN '-Infinity'::float8
            WHEN i % 39 = 0 THEN '-0'::float8 WHEN i % 26 = 0 THEN 0 ELSE i * 0.917 - 40 END AS f8,
       CASE WHEN i % 6 = 0 THEN NULL ELSE i % 3 = 0 END AS b,
       CASE WHEN i % 10 = 7 THEN NULL ELSE date '2024-01-01' + (i * 17 % 90) END AS d,
       CASE WHEN i % 10 = 8 THEN NULL
            ELSE timestamp '2024-01-01' + (i * 61 % 5000) * interval '1 minute' END AS ts,
       CASE WHEN i % 10 = 9 THEN NULL
            ELSE timestamptz '2024-01-01 00:00+00' + (i * 71 % 5000) * interval '1 minute' END AS tz,
       CASE WHEN i % 10 = 2 THEN NULL ELSE time '00:00' + (i * 47 % 1440) * interval '1 minute' END AS tm
FROM generate_series(1, 120) i;
ANALYZE ev_l;
ANALYZE ev_r;

-- the plan: clauses on the device, and which ones
EXPLAIN (COSTS OFF)
SELECT l.id, r.id FROM ev_l l JOIN ev_r r ON l.i4 BETWEEN r.i4 - 100 AND r.i4 + 100;
EXPLAIN (COSTS OFF)
SELECT l.id, r.id FROM ev_l l LEFT JOIN ev_r r ON l.i4 < r.i4 AND l.i4::text < r.i4::text;

-- every operation, as a join clause
SELECT e, check_join_on('SELECT l.id AS lid, r.id AS rid FROM ev_l l JOIN ev_r r ON ' || e,
                        'GpuNestLoop')
FROM (VALUES
  ('l.i4 < r.i4'), ('l.i2 <= r.i8'), ('l.i8 <> r.i2 AND l.i8 > r.i4'), ('l.i4 >= r.i2'),
  ('l.i4 - r.i4 BETWEEN -50 AND 50'), ('l.i2 + r.i2 > 150'), ('l.i8 * r.i4 > 1000000000'),
  ('l.i2 * r.i2 < -5000'), ('l.i8 - r.i8 > 1900000'),
  ('r.i4 <> 0 AND l.i4 / r.i4 > 2'), ('r.i2 <> 0 AND l.i8 / r.i2 < -20000'),
  ('CASE WHEN r.i4 = 0 THEN false ELSE l.i4 % r.i4 = 1 END'),
  ('r.i2 <> 0 AND l.i2 % r.i2 = 0 AND l.i2 <> 0'),
  ('-l.i4 > r.i4'), ('@ l.i4 < r.i4 - 9000'), ('abs(l.i8) < r.i4'),
  ('l.f8 < r.f8'), ('l.f8 = r.f8 OR l.f8 < -29'), ('l.f4 >= r.f8'), ('l.f4 < r.f4 AND l.f8 > r.f8'),
  ('l.f8 + r.f8 > 150.5'), ('l.f8 - r.f8 < -100'), ('l.f8 * r.f4 < -500'),
  ('r.f8 <> 0 AND l.f8 / r.f8 > 1'), ('l.f4 + r.f4 > 60'), ('l.f4 * r.f4 BETWEEN -10 AND 10'),
  ('r.f4 <> 0 AND l.f4 / r.f4 > 5'), ('-l.f8 < abs(r.f8) - 60'), ('@ l.f4 > r.f4 + 40'),
  ('l.i4::float8 > r.f8 * 100'), ('l.i2::float4 < r.f4'), ('l.f8 + r.i4 > 9000'),
  ('abs(l.f8) < 1e9 AND l.f8::int4 < r.i2'), ('abs(l.f8) < 1e9 AND l.f8::int8 > r.i4 / 100'),
  ('abs(l.f4) < 1e9 AND l.f4::int2 > r.i2'), ('l.f8::float4 > r.f4'),
  ('l.i8::int4 < r.i4 OR l.i8 < 0'), ('l.i4::int2 > r.i2 OR l.i4 > 30000 OR l.i4 < -30000'),
  ('l.i2::int8 * 100000000000 > r.i8'),
  ('l.d < r.d'), ('l.d + 30 > r.d AND l.d - 10 < r.d'), ('l.d - r.d BETWEEN -3 AND 3'),
  ('l.d < r.ts'), ('l.ts >= r.d AND l.d <> r.ts'), ('l.d = r.ts OR l.ts <= r.d - 80'),
  ('r.ts BETWEEN l.d AND l.d + 1'), ('l.d::timestamp + interval ''2 hours'' > r.ts AND l.d > r.ts'),
  ('l.d + interval ''36 hours'' < r.ts'),
  ('l.ts - r.ts BETWEEN interval ''-1 hour'' AND interval ''1 hour'''),
  ('r.ts - l.ts > interval ''1 day 2 hours'' AND r.ts - l.ts <= interval ''1 month'''),
  ('l.tz - r.tz < interval ''-2 days'' OR l.tz - r.tz = interval ''0'''),
  ('r.ts BETWEEN l.d - interval ''2 days'' AND l.d + interval ''12:30'''),
  ('l.ts < r.ts + interval ''1 hour'' AND l.ts > r.ts - interval ''1 hour'''),
  ('l.ts BETWEEN r.ts - interval ''2 days 3 hours'' AND r.ts'),
  ('l.tz > r.tz - interval ''90 minutes'' AND l.tz < r.tz'), ('l.tm < r.tm'),
  ('l.b = r.b OR l.b IS NULL'), ('l.b IS DISTINCT FROM r.b AND l.i2 > r.i2'),
  ('l.i4 IS NOT DISTINCT FROM r.i4 OR l.i2 < r.i2 - 150'),
  ('l.f8 IS DISTINCT FROM r.f8 AND l.f8 > r.f8'), ('NOT (l.i4 < r.i4)'),
  ('l.i4 IS NULL OR r.i4 IS NOT NULL AND l.i4 > r.i4'),
  ('(l.i4 > r.i4) IS TRUE'), ('(l.i4 > r.i4) IS NOT FALSE'), ('(l.i4 > r.i4) IS UNKNOWN'),
  ('(l.b AND r.b) IS NOT TRUE AND l.i2 > r.i2'), ('(l.b OR r.b) IS FALSE'),
  ('(l.b AND r.b) IS NOT UNKNOWN AND l.i2 < r.i2'),
  ('l.i2 IN (1, 2, 3, r.i2)'), ('l.i2 + r.i2 IN (10, 20, 30, NULL)'),
  ('l.i2 - r.i2 NOT IN (1, 2, 3) AND l.i2 > r.i2'), ('l.i2 - r.i2 NOT IN (1, NULL)'),
  ('l.f8 > r.f8 AND l.i2 = ANY (''{}''::int2[])'), ('l.i2 > r.i2 AND r.i2 <> ALL (''{}''::int4[])'),
  ('CASE l.i4 % 3 WHEN 0 THEN r.i4 > 0 WHEN 1 THEN r.i4 < 0 ELSE NULL END'),
  ('CASE WHEN l.i4 > r.i4 THEN 1 WHEN l.i4 < r.i4 THEN 2 END = 1'),
  ('CASE WHEN l.f8 > r.f8 THEN l.i2 ELSE r.i2 END > 50'),
  ('(l.b AND NOT r.b) OR l.i2 > r.i2'), ('l.b OR r.b IS NULL'),
  ('l.i4 < r.i4 AND l.i4::text < r.i4::text'),
  ('l.i4::text < r.i4::text')
) v(e);

-- outer, semi and anti joins; a filter on the joined rows
SELECT check_join_on('SELECT l.id AS lid, r.id AS rid FROM ev_l l LEFT JOIN ev_r r
                      ON l.i4 BETWEEN r.i4 - 200 AND r.i4 + 200', 'GpuNestLoop');
SELECT check_join_on('SELECT l.id AS lid, r.id AS rid FROM ev_l l LEFT JOIN ev_r r
                      ON l.f8 > r.f8 + 1000', 'GpuNestLoop');
SELECT check_join_on('SELECT l.id AS lid, r.id AS rid FROM ev_l l LEFT JOIN ev_r r ON l.d < r.d - 80
                      WHERE r.id IS NULL OR r.i2 > 0', 'GpuNestLoop');
SELECT check_join_on('SELECT l.* FROM ev_l l WHERE EXISTS
                      (SELECT 1 FROM ev_r r WHERE l.i4 BETWEEN r.i4 AND r.i4 + 150)', 'GpuNestLoop');
SELECT check_join_on('SELECT l.* FROM ev_l l WHERE NOT EXISTS
                      (SELECT 1 FROM ev_r r WHERE l.i4 BETWEEN r.i4 AND r.i4 + 150)', 'GpuNestLoop');
SELECT check_join_on('SELECT l.id FROM ev_l l WHERE NOT EXISTS
                      (SELECT 1 FROM ev_r r WHERE l.f8 < r.f8)', 'GpuNestLoop');
-- empty sides
SELECT check_join_on('SELECT l.id AS lid, r.id AS rid FROM ev_l l LEFT JOIN
                      (SELECT * FROM ev_r WHERE id < 0) r ON l.i4 < r.i4', 'GpuNestLoop');
SELECT check_join_on('SELECT l.id AS lid, r.id AS rid FROM (SELECT * FROM ev_l WHERE id < 0) l
                      JOIN ev_r r ON l.i4 < r.i4', 'GpuNestLoop');
SELECT check_join_on('SELECT l.id FROM ev_l l WHERE NOT EXISTS
                      (SELECT 1 FROM ev_r r WHERE r.id < 0 AND l.i4 < r.i4)', 'GpuNestLoop');
-- three tables: a GpuNestLoop above another
SELECT check_join_on('SELECT a.id AS a, b.id AS b, c.id AS c FROM ev_l a
                      JOIN ev_r b ON a.i4 BETWEEN b.i4 AND b.i4 + 300
                      JOIN ev_r c ON b.f8 < c.f8 - 80', 'GpuNestLoop');

-- Params: a prepared statement's ($1, bound once per execution) and a
-- correlated subquery's (bound again at each rescan)
SET plan_cache_mode = force_generic_plan;
PREPARE nl_p(int, float8) AS
SELECT count(*), sum(l.id), sum(r.id) FROM ev_l l JOIN ev_r r ON l.i4 + $1 < r.i4 AND l.f8 > $2;
SELECT EXISTS (SELECT FROM plan_lines('EXECUTE nl_p(100, 0)') l WHERE l LIKE '%GpuNestLoop%') AS gpu;
EXECUTE nl_p(100, 0);
EXECUTE nl_p(-5000, NULL);
EXECUTE nl_p(2147483000, 0);
SET gpuops.enabled = off;
EXECUTE nl_p(100, 0);
EXECUTE nl_p(-5000, NULL);
EXECUTE nl_p(2147483000, 0);
SET gpuops.enabled = on;
DEALLOCATE nl_p;
RESET plan_cache_mode;
SELECT check_join_on('SELECT t.id, (SELECT count(*) FROM ev_l l JOIN ev_r r
                        ON l.i4 BETWEEN r.i4 - t.id AND r.i4 + t.id) AS n
                      FROM generate_series(1, 400, 57) t(id)', 'GpuNestLoop');

-- run-time errors: PostgreSQL's own error with gpuops on and off, and none
-- where PostgreSQL's evaluation never reaches the failing operation
CREATE TABLE ev_x (id int, i2 int2, i4 int4, i8 int8, f8 float8, z int4, m int4, d date);
INSERT INTO ev_x VALUES
  (1, 1, 1, 1, 1, 1, 1, '2024-01-01'),
  (2, 32767, 2147483647, 9223372036854775807, 1e300, 0, 1, 'infinity'),
  (3, -32768, -2147483648, -9223372036854775808, -1e300, 2, -1, '5874897-12-31');
SELECT e, check_error('SELECT count(*) FROM ev_x a JOIN ev_x b ON ' || e)
FROM (VALUES
  ('a.i4 + b.i4 > 0'), ('a.i2 + b.i2 > 0'), ('a.i2 * b.i4 > 0'), ('a.i8 * b.i8 > 0'),
  ('a.i8 - b.i8 > 0'), ('-a.i4 < b.i4'), ('abs(a.i2) > b.i2'), ('a.i4 / b.z > 0'),
  ('a.i8 % b.z > 0'), ('a.i4 / b.i2 < 0'), ('a.i4 % b.z = 0 OR a.i4 > b.i4'),
  ('a.f8 * b.f8 > 0'), ('a.f8 / b.z > 0'), ('a.f8 / b.f8 > 0'), ('a.f8::int4 > b.i4'),
  ('a.f8::float4 > b.f8'), ('a.i8::int4 > b.i4'), ('a.i4::int2 > b.i2'),
  ('a.i4 / b.m < 0'), ('a.i8 / b.m < 0'), ('a.i2 / b.m::int2 < 0'), ('a.i4 % b.m = 0'),
  ('a.i8 % b.m = 0'), ('abs(a.i8) > b.i8'), ('a.f8 + b.f8 > 0'), ('a.f8 - b.f8 > 0'),
  ('a.d + b.i4 > ''2024-01-01'''), ('a.d - b.d > 0'), ('a.d + 1 > b.d'),
  -- never reached: short-circuits as PostgreSQL's evaluator has them
  ('b.z <> 0 AND a.i4 / b.z > 0'), ('b.z = 0 OR a.i8 / b.z > 0'),
  ('CASE WHEN b.z = 0 THEN false ELSE a.i4 / b.z > 0 END'),
  ('(a.id + b.id = 2 AND a.i4 + b.i4 > 0) IS TRUE')
) v(e);
-- date against timestamp: infinities, and dates past the timestamps' range
-- (above every finite timestamp in a comparison, an error in a cast)
CREATE TABLE ev_dt (id int, d date, ts timestamp);
INSERT INTO ev_dt VALUES
  (1, '2024-01-01', '2024-01-01'), (2, '2024-01-02', '2024-01-01 12:00'),
  (3, '-infinity', '-infinity'), (4, 'infinity', 'infinity'),
  (5, '5874897-12-31', '294276-12-31 23:59:59.999999'), (6, '294276-12-31', NULL),
  (7, NULL, '4713-11-24 00:00:00 BC'), (8, '4713-11-24 BC', '2024-01-02');
SELECT e, check_join_on('SELECT a.id AS aid, b.id AS bid FROM ev_dt a JOIN ev_dt b ON ' || e,
                        'GpuNestLoop')
FROM (VALUES ('a.d = b.ts'), ('a.d <> b.ts'), ('a.d < b.ts'), ('a.d <= b.ts'), ('a.d > b.ts'),
             ('a.d >= b.ts'), ('a.ts = b.d'), ('a.ts < b.d'), ('a.ts >= b.d'),
             ('a.d::timestamp < b.ts AND a.id < 5')) v(e);
SELECT e, check_error('SELECT count(*) FROM ev_dt a JOIN ev_dt b ON ' || e)
FROM (VALUES ('a.d::timestamp < b.ts'), ('a.id < 5 AND a.d::timestamp < b.ts'),
             ('a.d < b.ts'), ('a.d + interval ''1 day'' < b.ts'),
             ('a.d - interval ''1 hour'' < b.ts AND a.id <> 5'),
             ('a.ts - b.ts > interval ''1 day'''), ('a.id < 3 AND b.id < 3 AND a.ts - b.ts > interval ''1 hour''')) v(e);
-- a semi join stops at the first match, before the failing pair
SELECT check_error('SELECT count(*) FROM ev_x a WHERE EXISTS
                    (SELECT 1 FROM ev_x b WHERE a.i8 / b.z <> 0)');
SELECT check_error('SELECT count(*) FROM ev_x a WHERE NOT EXISTS
                    (SELECT 1 FROM ev_x b WHERE a.id + b.id < 0 OR a.i8 / b.z <> 0)');

-- what ran where: EXPLAIN ANALYZE counts the pairs the device tested and
-- passed, and those a clause left to PostgreSQL then removed
SELECT j->'Pairs Tested' AS tested, j->'Pairs Passed' AS passed,
       j->'Pairs Rechecked' AS rechecked, j->'Rows Removed by Join Filter' AS removed,
       j->'Inner Blocks' AS blocks, (j->>'Actual Rows')::numeric::int8 AS rows
FROM nl_analyze('SELECT l.id, r.id FROM ev_l l JOIN ev_r r ON l.i4 < r.i4 AND l.i4::text < r.i4::text') j;
