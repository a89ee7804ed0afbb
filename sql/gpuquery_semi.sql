-- GpuQuery with semi and anti joins (EXISTS, IN, NOT EXISTS): a semi or
-- anti join of one table is a lookup that keeps the fact rows with a match
-- (semi) or without one (anti: a NULL key has none), once each however
-- often the key repeats.  Every result is compared with PostgreSQL's
-- (gpuops.enabled = off) as text; what the lookup cannot decide (a second
-- clause, an anti join's condition on the outer side, the largest table
-- inside the subquery) keeps PostgreSQL's plan.
SET gpuops.min_rows = 0;
SET gpuops.startup_cost = 0;
SET gpuops.tuple_cost = 0;
SET gpuops.query_page_cost = 0;
SET max_parallel_workers_per_gather = 0;
SET gpuops.cpu_fallback = off;
SET gpuops.enable_query = on;
SET gpuops.enable_hashjoin = off;
SET gpuops.enable_mergejoin = off;
SET gpuops.enable_nestloop = off;
SET gpuops.enable_agg = off;

-- explain_semi(q): EXPLAIN ANALYZE's GpuQuery lines (lookups with their
-- kind and rows, rows passed, groups, escapes), without timings
CREATE FUNCTION explain_semi(q text) RETURNS SETOF text
LANGUAGE sql AS $$ SELECT explain_lines(q, 'GpuQuery|Lookups|Escaped|Fallback|Rows Passed|Groups:') $$;

-- the fact table: keys with NULLs, keys no other table holds
CREATE TABLE sf (id int8, k int4, k2 int8, g int4, v numeric(12,2), flag char(1));
INSERT INTO sf SELECT i,
       CASE WHEN i % 97 = 0 THEN NULL ELSE (i * 7) % 600 END,
       CASE WHEN i % 53 = 0 THEN NULL ELSE ((i * 3) % 900) * 1000003 END,
       i % 20,
       round((i % 9973) * 1.37, 2),
       CASE WHEN i % 3 = 0 THEN 'A' ELSE 'R' END
FROM generate_series(1, 30000) i;
-- dense keys, each repeated up to four times, some NULL (a direct lookup)
CREATE TABLE sd (k int4, x int4, name text);
INSERT INTO sd SELECT CASE WHEN i % 41 = 0 THEN NULL ELSE (i * 5) % 700 END, i % 100,
       CASE WHEN i % 2 = 0 THEN 'a' || i ELSE 'b' || i END
FROM generate_series(1, 2500) i;
-- sparse int8 keys (open addressing), repeated
CREATE TABLE se (k8 int8, y int4);
INSERT INTO se SELECT ((i * 11) % 1200) * 1000003, i % 7 FROM generate_series(1, 3000) i;
-- a dimension for the inner joins
CREATE TABLE sn (nk int4 PRIMARY KEY, nname text, rk int8);
INSERT INTO sn SELECT i, 'n' || (i % 6), CASE WHEN i % 3 = 0 THEN 7 ELSE (i % 8) * 1000003 END
FROM generate_series(0, 17) i;
ANALYZE sf; ANALYZE sd; ANALYZE se; ANALYZE sn;

-- IN over repeated keys: each fact row once
SELECT * FROM explain_semi($$SELECT f.g, count(*), sum(f.v) FROM sf f
WHERE f.k IN (SELECT d.k FROM sd d WHERE d.x < 50) GROUP BY f.g$$);
SELECT check_query($$SELECT f.g, count(*), sum(f.v) FROM sf f
WHERE f.k IN (SELECT d.k FROM sd d WHERE d.x < 50) GROUP BY f.g$$);
-- EXISTS with a text qual of its own
SELECT check_query($$SELECT f.flag, count(*), min(f.id), max(f.g) FROM sf f
WHERE EXISTS (SELECT 1 FROM sd d WHERE d.k = f.k AND d.name LIKE 'a%') GROUP BY f.flag$$);
-- NOT EXISTS keeps the NULL keys and the keys the table lacks
SELECT * FROM explain_semi($$SELECT count(*), sum(f.v) FROM sf f
WHERE NOT EXISTS (SELECT 1 FROM sd d WHERE d.k = f.k)$$);
SELECT check_query($$SELECT count(*), sum(f.v), count(f.k) FROM sf f
WHERE NOT EXISTS (SELECT 1 FROM sd d WHERE d.k = f.k)$$);
SELECT check_query($$SELECT f.g, count(*) FROM sf f
WHERE NOT EXISTS (SELECT 1 FROM sd d WHERE d.k = f.k AND d.x >= 10) GROUP BY f.g$$);
-- a LEFT JOIN keeping the rows without a match: PostgreSQL's anti join
SELECT check_query($$SELECT f.g, count(*) FROM sf f LEFT JOIN sd d ON d.k = f.k
WHERE d.k IS NULL GROUP BY f.g$$);
-- an empty inner side: a semi join keeps nothing, an anti join everything
SELECT check_query($$SELECT count(*), sum(f.v) FROM sf f
WHERE EXISTS (SELECT 1 FROM sd d WHERE d.k = f.k AND d.x > 1000)$$);
SELECT check_query($$SELECT f.g, count(*) FROM sf f
WHERE NOT EXISTS (SELECT 1 FROM sd d WHERE d.k = f.k AND d.x > 1000) GROUP BY f.g$$);
-- sparse int8 keys
SELECT check_query($$SELECT f.g, count(*) FROM sf f
WHERE f.k2 IN (SELECT e.k8 FROM se e WHERE e.y < 3) GROUP BY f.g$$);
SELECT check_query($$SELECT count(*) FROM sf f
WHERE NOT EXISTS (SELECT 1 FROM se e WHERE e.k8 = f.k2)$$);
-- with an inner join: grouped by the dimension's text, the semi and anti
-- lookups on the fact's columns and through the dimension's (a snowflake)
SELECT * FROM explain_semi($$SELECT n.nname, count(*), sum(f.v) FROM sf f, sn n
WHERE f.g = n.nk AND f.k IN (SELECT k FROM sd) AND NOT EXISTS (SELECT 1 FROM se e WHERE e.k8 = n.rk)
GROUP BY n.nname$$);
SELECT check_query($$SELECT n.nname, count(*), sum(f.v) FROM sf f, sn n
WHERE f.g = n.nk AND f.k IN (SELECT k FROM sd) AND NOT EXISTS (SELECT 1 FROM se e WHERE e.k8 = n.rk)
GROUP BY n.nname$$);
SELECT check_query($$SELECT n.nname, count(*) FROM sf f JOIN sn n ON f.g = n.nk
WHERE EXISTS (SELECT 1 FROM se e WHERE e.k8 = n.rk AND e.y = 2) GROUP BY n.nname$$);
-- two semi joins and an anti join on one row
SELECT check_query($$SELECT f.flag, count(*), sum(f.v) FROM sf f
WHERE f.k IN (SELECT k FROM sd WHERE x < 70) AND f.k2 IN (SELECT k8 FROM se)
  AND NOT EXISTS (SELECT 1 FROM sd d2 WHERE d2.k = f.k AND d2.name LIKE 'b1%') GROUP BY f.flag$$);
-- read in parallel
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT check_query($$SELECT f.g, count(*), sum(f.v) FROM sf f
WHERE f.k IN (SELECT d.k FROM sd d) AND NOT EXISTS (SELECT 1 FROM se e WHERE e.k8 = f.k2) GROUP BY f.g$$);
RESET min_parallel_table_scan_size;
RESET parallel_setup_cost;
SET max_parallel_workers_per_gather = 0;

-- kept by PostgreSQL: a second clause (the lookup tests one key), an anti
-- join's condition on the outer side only (it does not filter the outer
-- rows), the largest table inside the subquery, a key that is an
-- expression, NOT IN (no anti join: NULLs make it three-valued)
SELECT check_query($$SELECT count(*) FROM sf f
WHERE EXISTS (SELECT 1 FROM sd d WHERE d.k = f.k AND d.x > f.g)$$);
SELECT check_query($$SELECT count(*), sum(f.v) FROM sf f
WHERE NOT EXISTS (SELECT 1 FROM sd d WHERE d.k = f.k AND f.flag = 'A')$$);
SELECT check_query($$SELECT count(*) FROM sd d WHERE d.k IN (SELECT f.k FROM sf f)$$);
SELECT check_query($$SELECT count(*), sum(f.v) FROM sf f
WHERE f.k IN (SELECT e.k8 / 1000003 FROM se e)$$);
SELECT check_query($$SELECT count(*) FROM sf f WHERE f.k NOT IN (SELECT d.k FROM sd d)$$);

DROP TABLE sf, sd, se, sn;
DROP FUNCTION explain_semi(text);
