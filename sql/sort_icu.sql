-- Text under ICU collations: the device sorts PostgreSQL's abbreviated ICU
-- sort keys and PostgreSQL's comparator settles their ties, so the order is
-- the collation's exactly: case, accents, punctuation, digits, long shared
-- prefixes, and a nondeterministic (case-insensitive) collation.  Servers
-- built without ICU skip this file (expected/sort_icu_1.out).
SET gpuops.min_rows = 0;
SET gpuops.startup_cost = 0;
SET gpuops.tuple_cost = 0;
SET max_parallel_workers_per_gather = 0;
SELECT EXISTS (SELECT 1 FROM pg_collation WHERE collname = 'und-x-icu') AS have_icu \gset
\if :have_icu
CREATE COLLATION sort_icu_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
CREATE TABLE sort_icu AS
SELECT i AS id,
       CASE WHEN i % 97 = 0 THEN NULL
            WHEN i % 89 = 0 THEN ''
            ELSE (ARRAY['apple', 'Apple', 'APPLE', 'apple pie', 'apple-pie', 'applepie',
                        'r' || chr(233) || 'sum' || chr(233), 'resume', 'R' || chr(233) || 'sum' || chr(233),
                        'zebra', 'Zebra', chr(197) || 'ngstr' || chr(246) || 'm', 'angstrom',
                        'item 2', 'item 10', 'item 1', 'the same long prefix of this string ',
                        'The same long prefix of this string '])[1 + (i * 7919) % 18]
                 || CASE WHEN i % 3 = 0 THEN (i % 50)::text ELSE '' END END AS t,
       (i % 5)::int4 AS g
FROM generate_series(1, 30000) i;
ANALYZE sort_icu;

SELECT uses_gpusort('SELECT * FROM sort_icu ORDER BY t COLLATE "und-x-icu"') AS icu_used;
SELECT check_sort_keys('SELECT t AS k1, id FROM sort_icu ORDER BY t COLLATE "und-x-icu"', 1);
SELECT check_sort_keys('SELECT t AS k1, id FROM sort_icu ORDER BY t COLLATE "und-x-icu" DESC NULLS LAST', 1);
SELECT check_sort_keys('SELECT g AS k1, t AS k2, id AS k3 FROM sort_icu
                        ORDER BY g, t COLLATE "und-x-icu" DESC, id', 3);
SELECT check_sort_keys('SELECT t::varchar AS k1, id AS k2 FROM sort_icu ORDER BY t::varchar COLLATE "und-x-icu", id', 2);
SELECT check_sort_keys('SELECT t::char(40) AS k1, id AS k2 FROM sort_icu ORDER BY t::char(40) COLLATE "und-x-icu", id', 2);
-- case-insensitive: 'apple' and 'APPLE' tie; id then decides
SELECT check_sort_keys('SELECT t COLLATE sort_icu_ci AS k1, id AS k2 FROM sort_icu ORDER BY t COLLATE sort_icu_ci, id', 2);
-- the order itself, on distinct values
SELECT t FROM (SELECT DISTINCT t FROM sort_icu WHERE t !~ '[0-9]$' OR t LIKE 'item%') s
ORDER BY t COLLATE "und-x-icu", t COLLATE "C";
-- ties on the abbreviation were settled by the comparator
SELECT (j->>'Tie Runs')::int > 0 AS ties_resolved
FROM (SELECT gpusort_analyze('SELECT id FROM sort_icu ORDER BY t COLLATE "und-x-icu"') j) x;
\else
\echo no ICU collations on this server: skipped
\endif
