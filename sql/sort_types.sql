-- GpuSort on several keys of many types, compared with PostgreSQL: int2/4/8,
-- float4/8, bool, date, time, timestamp(tz), interval, uuid, and text /
-- varchar / bpchar under the "C" collation; and the keys that keep
-- PostgreSQL's plan.  Every text key says COLLATE "C": the database's default
-- collation differs between machines, and the output must not.
SET gpuops.batch_size = '1MB';
SET gpuops.min_rows = 0;
SET gpuops.startup_cost = 0;
SET gpuops.tuple_cost = 0;
SET max_parallel_workers_per_gather = 0;

-- 70000 rows (more than one 64K-row batch).  Every key column has NULLs and
-- many duplicates; floats have NaN, +-Infinity, -0 and 0; dates and
-- timestamps +-infinity; intervals hold equal spans written differently
-- ('1 mon' = '30 days' = '720 hours', '1 day' = '24 hours'); uuids share all
-- but their last byte; text has strings sharing prefixes longer than 16 bytes,
-- empty strings, 2 kB strings differing at the end, bytes below ' ' and above
-- 127; bpchar has trailing spaces (ignored when comparing) and a tab (below ' ').
CREATE TABLE sort_types AS
SELECT i AS id,
  CASE WHEN i % 53 = 0 THEN NULL ELSE ((i * 37) % 401 - 200)::int2 END AS i2,
  CASE WHEN i % 59 = 0 THEN NULL ELSE ((i::int8 * 7919) % 1009 - 504)::int4 END AS i4,
  CASE WHEN i % 61 = 0 THEN NULL
       ELSE ((i::int8 * 2654435761) % 100003 - 50000) * 92233720368 END AS i8,
  CASE WHEN i % 67 = 0 THEN NULL WHEN i % 71 = 0 THEN 'NaN' WHEN i % 73 = 0 THEN 'Infinity'
       WHEN i % 79 = 0 THEN '-Infinity' WHEN i % 83 = 0 THEN '-0' WHEN i % 89 = 0 THEN '0'
       ELSE ((i * 31) % 997 / 8.0 - 60)::float4 END AS f4,
  CASE WHEN i % 97 = 0 THEN NULL WHEN i % 101 = 0 THEN 'NaN' WHEN i % 103 = 0 THEN 'Infinity'
       WHEN i % 107 = 0 THEN '-Infinity' WHEN i % 109 = 0 THEN '-0' WHEN i % 113 = 0 THEN '0'
       ELSE ((i::int8 * 7919) % 2003 / 3.0 - 300)::float8 END AS f8,
  CASE WHEN i % 7 = 0 THEN NULL ELSE i % 3 = 0 END AS b,
  CASE WHEN i % 41 = 0 THEN NULL WHEN i % 997 = 0 THEN 'infinity' WHEN i % 991 = 0 THEN '-infinity'
       ELSE date '2000-01-01' + ((i * 13) % 3001 - 1500) END AS d,
  CASE WHEN i % 43 = 0 THEN NULL
       ELSE time '00:00' + ((i::int8 * 7919) % 5003) * interval '17.000001 seconds' END AS tm,
  CASE WHEN i % 47 = 0 THEN NULL WHEN i % 983 = 0 THEN 'infinity' WHEN i % 977 = 0 THEN '-infinity'
       ELSE timestamp '2020-02-29 12:00' + ((i::int8 * 7919) % 5009 - 2500) * interval '1 day 1 hour 1.000001 s' END AS ts,
  CASE WHEN i % 37 = 0 THEN NULL WHEN i % 971 = 0 THEN 'infinity' WHEN i % 967 = 0 THEN '-infinity'
       ELSE timestamptz '1999-12-31 23:00+00' + ((i::int8 * 104729) % 4999 - 2500) * interval '7 hours 0.5 s' END AS tz,
  CASE WHEN i % 31 = 0 THEN NULL
       WHEN i % 3 = 0 THEN (ARRAY['1 mon', '30 days', '720 hours', '1 day', '24 hours', '1440 minutes',
                                 '1 mon 1 day', '31 days', '-1 mon', '-30 days', '1 year', '360 days',
                                 '0', '0.000001 s'])[1 + (i / 3) % 14]::interval
       ELSE make_interval(months => i % 5, days => (i * 7) % 40 - 20, secs => (i * 13) % 9000) END AS iv,
  CASE WHEN i % 29 = 0 THEN NULL
       WHEN i % 11 = 0 THEN ('00000000-0000-0000-0000-0000000000' || lpad(to_hex(i % 256), 2, '0'))::uuid
       ELSE md5((i % 20011)::text)::uuid END AS u,
  CASE WHEN i % 23 = 0 THEN NULL WHEN i % 211 = 0 THEN ''
       WHEN i % 50 = 1 THEN repeat('long', 500 + i % 2) || (i * 31) % 97
       WHEN i % 5 = 0 THEN 'shared-prefix-longer-than-16-bytes/' || (i * 7919) % 3001
       WHEN i % 5 = 1 THEN (ARRAY['apple', 'Apple', 'APPLE', 'b', 'B', 'a', 'A', 'ab', E'ab\t', 'ab!',
                                 'ab ', chr(233), chr(255) || 'x', 'Z'])[1 + (i / 5) % 14]
       WHEN i % 5 = 2 THEN chr(65 + i % 58) || chr(200 + i % 50)
       ELSE md5((i % 1000)::text) END AS t,
  CASE WHEN i % 19 = 0 THEN NULL ELSE repeat('0', i % 4) || (i * 17) % 503 END::varchar(40) AS vc,
  CASE WHEN i % 17 = 0 THEN NULL
       ELSE (ARRAY['a', 'a ', 'a   ', 'ab', E'ab\t', 'ab!', '', ' ', 'b', 'B  ', 'abc', chr(233) || ' '])[1 + i % 12]::bpchar END AS bp,
  CASE WHEN i % 13 = 0 THEN NULL ELSE ((i * 7) % 50)::text END::char(6) AS c6
FROM generate_series(1, 70000) i;
-- the extremes of every type, and a row whose keys are all NULL
INSERT INTO sort_types VALUES
  (-1, 32767, 2147483647, 9223372036854775807, 3.4028235e38, 1.7976931348623157e308, true,
   '5874897-12-31', '24:00:00', '294276-12-31 23:59:59.999999', '294276-12-31 23:59:59.999999+00',
   '178000000 years 2147483647 days 2562047788:00:54.775807', 'ffffffff-ffff-ffff-ffff-ffffffffffff',
   repeat(chr(255), 20), repeat('~', 40), '~~ ', '~~~~~~'),
  (-2, -32768, -2147483648, -9223372036854775808, -3.4028235e38, -1.7976931348623157e308, false,
   '4713-01-01 BC', '00:00:00', '4714-11-24 00:00:00 BC', '4714-11-24 00:00:00+00 BC',
   '-178000000 years -2147483647 days -2562047788:00:54.775807', '00000000-0000-0000-0000-000000000000',
   '', '', '', ''),
  (-3, 0, 0, 0, 1.4e-45, 4.9e-324, true, 'epoch', '23:59:59.999999', 'epoch', 'epoch',
   '-0.000001 s', '80000000-0000-0000-0000-000000000000', chr(1), ' ', E'\t', ' '),
  (-4, -1, -1, -1, -1.4e-45, -4.9e-324, false, '1999-12-31', '00:00:00.000001', '1999-12-31 23:59:59.999999',
   '1999-12-31 23:59:59.999999-01', '1 mon -30 days', '7fffffff-ffff-ffff-ffff-ffffffffffff', E'\x7f', '0', 'a', 'a');
INSERT INTO sort_types (id) VALUES (-5);
ANALYZE sort_types;

-- each key type alone, in all four directions.  "shown" is the value's output
-- text, so the rows must also keep -0, the interval spellings and bpchar's
-- trailing spaces.
SELECT key, dir, check_sort(format(
         'SELECT %s AS k, id, concat(%s) AS shown FROM sort_types ORDER BY %s %s', key, key, key, dir))
FROM unnest(ARRAY['i2', 'i4', 'i8', 'f4', 'f8', 'b', 'd', 'tm', 'ts', 'tz', 'iv', 'u', 't COLLATE "C"',
                  'vc COLLATE "C"', 'bp COLLATE "C"', 'c6 COLLATE "C"']) WITH ORDINALITY k(key, kn),
     unnest(ARRAY['ASC', 'ASC NULLS FIRST', 'DESC', 'DESC NULLS LAST']) WITH ORDINALITY o(dir, dn)
ORDER BY kn, dn;

-- several keys: later keys decide among the many ties of the earlier ones
SELECT check_sort_keys('SELECT b AS k1, i4 AS k2, t AS k3, id FROM sort_types ORDER BY b, i4 DESC, t COLLATE "C"', 3);
SELECT check_sort_keys('SELECT d AS k1, f8 AS k2, u AS k3, id, concat(f8) AS shown FROM sort_types
                        ORDER BY d NULLS FIRST, f8, u DESC', 3);
SELECT check_sort_keys('SELECT t AS k1, i8 AS k2, id FROM sort_types ORDER BY t COLLATE "C", i8 DESC NULLS LAST', 2);
SELECT check_sort_keys('SELECT iv AS k1, tz AS k2, id, iv::text AS shown FROM sort_types ORDER BY iv, tz DESC', 2);
SELECT check_sort_keys('SELECT tz AS k1, iv AS k2, id, iv::text AS shown FROM sort_types
                        ORDER BY tz NULLS FIRST, iv DESC NULLS LAST', 2);
SELECT check_sort_keys('SELECT i2 AS k1, f4 AS k2, vc AS k3, tm AS k4, id FROM sort_types
                        ORDER BY i2 NULLS FIRST, f4 DESC NULLS LAST, vc COLLATE "C" DESC, tm', 4);
SELECT check_sort_keys('SELECT bp AS k1, c6 AS k2, ts AS k3, id, concat(bp) AS shown FROM sort_types
                        ORDER BY bp COLLATE "C" DESC, c6 COLLATE "C", ts NULLS FIRST', 3);
SELECT check_sort_keys('SELECT u AS k1, b AS k2, vc AS k3, d AS k4, id FROM sort_types
                        ORDER BY u NULLS FIRST, b DESC, vc COLLATE "C", d DESC NULLS LAST', 4);
-- all sixteen key types at once, then id (unique): the whole row order is PostgreSQL's
SELECT check_sort_keys('SELECT b k1, bp k2, i2 k3, d k4, c6 k5, f4 k6, iv k7, tm k8, vc k9, i4 k10,
                               tz k11, u k12, f8 k13, ts k14, i8 k15, t k16, id k17 FROM sort_types
                        ORDER BY b DESC, bp COLLATE "C", i2 NULLS FIRST, d DESC, c6 COLLATE "C" DESC,
                                 f4, iv DESC NULLS LAST, tm, vc COLLATE "C" NULLS FIRST, i4 DESC,
                                 tz, u, f8 DESC, ts, i8, t COLLATE "C" DESC, id', 17);

-- the same column twice (the second is redundant to PostgreSQL)
SELECT check_sort_keys('SELECT i4 AS k1, f8 AS k2, i4 AS k3, id FROM sort_types ORDER BY i4 DESC, f8, i4', 3);
SELECT check_sort_keys('SELECT t AS k1, t AS k2, d AS k3, id FROM sort_types
                        ORDER BY t COLLATE "C", t COLLATE "C" DESC, d', 3);
-- expressions as keys, computed below the sort
SELECT check_sort_keys('SELECT i4::int8 + i2 AS k1, lower(t) AS k2, id AS k3, t FROM sort_types
                        ORDER BY i4::int8 + i2 DESC NULLS LAST, lower(t) COLLATE "C", id', 3);
SELECT check_sort_keys('SELECT date_part(''year'', ts) AS k1, abs(f4) AS k2, upper(vc) AS k3, id FROM sort_types
                        ORDER BY date_part(''year'', ts), abs(f4) DESC, upper(vc) COLLATE "C"', 3);
SELECT check_sort_keys('SELECT d - i2 AS k1, -iv AS k2, id, iv::text AS shown FROM sort_types
                        ORDER BY d - i2 NULLS FIRST, -iv DESC', 2);
-- keys not in the select list: id is the last key and unique, so the id
-- sequence alone pins down PostgreSQL's order
SELECT check_sort_keys('SELECT id AS k1, i2 FROM sort_types ORDER BY d DESC, u, id', 1);
SELECT check_sort_keys('SELECT id AS k1 FROM sort_types ORDER BY bp COLLATE "C", iv, f4 DESC, id DESC', 1);
-- LIMIT and OFFSET cut at a defined place: each full key list is unique
SELECT check_sort_keys('SELECT t AS k1, id AS k2 FROM sort_types ORDER BY t COLLATE "C" DESC, id LIMIT 1000 OFFSET 500', 2);
SELECT check_sort_keys('SELECT b AS k1, d AS k2, id AS k3, t FROM sort_types
                        ORDER BY b NULLS FIRST, d DESC, id OFFSET 65000', 3);
SELECT check_sort_keys('SELECT iv AS k1, id AS k2, iv::text AS shown FROM sort_types ORDER BY iv, id LIMIT 100', 2);
SELECT check_sort_keys('SELECT u AS k1, i8 AS k2, id AS k3 FROM sort_types
                        ORDER BY u DESC NULLS LAST, i8, id LIMIT 70000 OFFSET 3', 3);

-- where the equal spans and the extremes land (the order shown is PostgreSQL's)
SELECT iv, count(*) FROM sort_types
WHERE iv IN ('1 mon', '1 day', '0') OR id < 0 GROUP BY iv, iv::text ORDER BY iv, iv::text;

-- empty input, one row, then all-NULL and all-equal keys
CREATE TABLE sort_types_small AS SELECT * FROM sort_types WHERE false;
SELECT check_sort_keys('SELECT i8 AS k1, t AS k2, iv AS k3, id FROM sort_types_small
                        ORDER BY i8 DESC, t COLLATE "C", iv', 3);
INSERT INTO sort_types_small SELECT * FROM sort_types WHERE id = -3;
SELECT check_sort_keys('SELECT i8 AS k1, t AS k2, iv AS k3, id FROM sort_types_small
                        ORDER BY i8 DESC, t COLLATE "C", iv', 3);
INSERT INTO sort_types_small (id) SELECT i FROM generate_series(1, 3000) i;
INSERT INTO sort_types_small SELECT i, i2, i4, i8, f4, f8, b, d, tm, ts, tz, iv, u, t, vc, bp, c6
FROM sort_types_small, generate_series(5001, 8000) i WHERE id = -3;
SELECT check_sort_keys('SELECT u AS k1, f4 AS k2, bp AS k3, ts AS k4, id FROM sort_types_small
                        ORDER BY u NULLS FIRST, f4 DESC, bp COLLATE "C", ts', 4);
UPDATE sort_types_small SET u = NULL, f4 = NULL, bp = NULL, ts = NULL;
SELECT check_sort_keys('SELECT u AS k1, f4 AS k2, bp AS k3, ts AS k4, id FROM sort_types_small
                        ORDER BY u, f4, bp COLLATE "C" DESC, ts DESC', 4);

-- TOAST-ed keys (stored out of line): 3 kB strings that share 3200 bytes and
-- differ after them, beside short ones, NULLs and duplicates
CREATE TABLE sort_types_toast (id int4, g int4, t text, vc varchar);
ALTER TABLE sort_types_toast ALTER COLUMN t SET STORAGE EXTERNAL, ALTER COLUMN vc SET STORAGE EXTERNAL;
INSERT INTO sort_types_toast
SELECT i, i % 4,
  CASE WHEN i % 37 = 0 THEN NULL WHEN i % 41 = 0 THEN ''
       WHEN i % 3 = 0 THEN repeat(md5('p'), 100) || (i * 7919) % 101
       WHEN i % 3 = 1 THEN repeat(md5((i % 20)::text), 60 + i % 5) ELSE md5(i::text) END,
  CASE WHEN i % 43 = 0 THEN NULL ELSE repeat('v', 4000) || i % 7 || repeat('w', i % 3) END
FROM generate_series(1, 600) i;
SELECT pg_relation_size(reltoastrelid) > 0 AS out_of_line FROM pg_class WHERE relname = 'sort_types_toast';
SELECT check_sort_keys('SELECT t AS k1, id AS k2, vc FROM sort_types_toast ORDER BY t COLLATE "C", id', 2);
SELECT check_sort_keys('SELECT g AS k1, vc AS k2, t AS k3, id FROM sort_types_toast
                        ORDER BY g DESC, vc COLLATE "C" DESC NULLS LAST, t COLLATE "C"', 3);
SELECT check_sort_keys('SELECT vc AS k1, md5(t) AS h, id FROM sort_types_toast ORDER BY vc COLLATE "C" NULLS FIRST', 1);

-- keys GpuSort does not take keep PostgreSQL's plan, also when only one key
-- of several is such a key: ranges, arrays, jsonb
SELECT uses_gpusort('SELECT * FROM sort_types ORDER BY int4range(i4, i4 + 1)') AS range_key,
       uses_gpusort('SELECT * FROM sort_types ORDER BY ARRAY[i4, i2]') AS array_key,
       uses_gpusort('SELECT * FROM sort_types ORDER BY to_jsonb(t)') AS jsonb_key,
       uses_gpusort('SELECT * FROM sort_types ORDER BY b, int8range(i8, i8), t COLLATE "C"') AS range_second,
       uses_gpusort('SELECT * FROM sort_types ORDER BY i4, d, jsonb_build_object(''a'', u)') AS jsonb_last,
       uses_gpusort('SELECT * FROM sort_types ORDER BY ARRAY[t], iv') AS array_first;
SELECT check_sort_keys('SELECT i4 AS k1, i8::numeric AS k2, t AS k3, id FROM sort_types
                        ORDER BY i4, i8::numeric DESC, t COLLATE "C"', 3);
-- text under a libc collation other than C: PostgreSQL's plan (PostgreSQL
-- has no trusted sort key for those; ICU collations are in sort_icu).  The
-- database's default collation is checked only where it is a libc one that
-- is not C, and a libc collation only where the server has one, so each
-- line prints t everywhere.
SELECT NOT uses_gpusort('SELECT * FROM sort_types ORDER BY t')
       OR datlocprovider <> 'c' OR datcollate IN ('C', 'POSIX') AS default_collation_not_c
FROM pg_database WHERE datname = current_database();
SELECT NOT uses_gpusort('SELECT * FROM sort_types ORDER BY i4, vc')
       OR datlocprovider <> 'c' OR datcollate IN ('C', 'POSIX') AS default_collation_second_key
FROM pg_database WHERE datname = current_database();
SELECT coalesce(bool_and(NOT uses_gpusort(format('SELECT * FROM sort_types ORDER BY t COLLATE %I.%I', nspname, collname))
                         AND NOT uses_gpusort(format('SELECT * FROM sort_types ORDER BY b, bp COLLATE %I.%I', nspname, collname))),
                true) AS other_collation
FROM (SELECT n.nspname, c.collname FROM pg_collation c JOIN pg_namespace n ON n.oid = c.collnamespace
      WHERE c.collprovider = 'c' AND c.collname NOT IN ('C', 'POSIX', 'ucs_basic')
        AND coalesce(c.collcollate, '') NOT IN ('C', 'POSIX') AND coalesce(c.collcollate, '') NOT LIKE 'C.%'
        AND c.collencoding IN (-1, pg_char_to_encoding(getdatabaseencoding()))
      ORDER BY c.collname LIMIT 1) x;
