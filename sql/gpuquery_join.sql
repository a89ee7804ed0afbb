-- GpuQuery over joins (doc/gpuquery.md, step 2): the largest table read
-- from its pages, every other table looked up on the device by one
-- equality of integer-like columns (star and snowflake), the rest of the
-- join clauses as a join filter, dimension text grouped by dictionary
-- codes.  Every result is compared with PostgreSQL's (gpuops.enabled =
-- off) as text; repeated dimension keys send the block to PostgreSQL's
-- plan (the node's first child).
SET gpuops.min_rows = 0;
SET gpuops.startup_cost = 0;
SET gpuops.tuple_cost = 0;
SET gpuops.query_page_cost = 0;
SET max_parallel_workers_per_gather = 0;
SET gpuops.cpu_fallback = off;
SET gpuops.enable_query = on;
-- the other gpuops joins and GpuAgg stay out of the way: GpuQuery or PostgreSQL
SET gpuops.enable_hashjoin = off;
SET gpuops.enable_mergejoin = off;
SET gpuops.enable_nestloop = off;
SET gpuops.enable_agg = off;

-- explain_join(q): EXPLAIN ANALYZE's GpuQuery lines (lookups with their
-- rows, rows passed, groups, escape), without timings or the backend
CREATE FUNCTION explain_join(q text) RETURNS SETOF text
LANGUAGE sql AS $$ SELECT explain_lines(q, 'GpuQuery|Lookups|^ +(\(|[a-z]+\.)|Join Filter|Escaped|Fallback|Rows Read|Rows Passed|Groups:|Workers') $$;

-- dimensions: a date table (dense keys: direct lookup), customers
-- (int4 keys joined from an int8 fact column), nations (int2 keys, a
-- snowflake through customers), suppliers with sparse keys (hashed)
CREATE TABLE jd (dk int4 PRIMARY KEY, yr int4, mon text, season varchar(10));
INSERT INTO jd SELECT 1000 + i, 1992 + i / 12,
                      to_char(date '2000-01-01' + (i % 12) * interval '1 month', 'Mon'),
                      CASE WHEN i % 12 < 3 THEN 'winter' WHEN i % 12 < 6 THEN 'spring'
                           WHEN i % 12 < 9 THEN NULL ELSE 'fall' END
FROM generate_series(0, 83) i;
CREATE TABLE jn (nk int2 PRIMARY KEY, nname text, rk int4);
INSERT INTO jn SELECT i, CASE WHEN i = 7 THEN NULL ELSE 'nation ' || (i % 9) END, i % 3
FROM generate_series(0, 24) i;
CREATE TABLE jc (ck int4 PRIMARY KEY, nation char(15), region char(12), nk int2, bal numeric(12,2));
INSERT INTO jc SELECT i, CASE WHEN i % 31 = 0 THEN NULL ELSE 'N' || (i % 25) END,
                      CASE WHEN i % 5 < 2 THEN 'ASIA' ELSE 'EUROPE' END,
                      CASE WHEN i % 17 = 0 THEN NULL ELSE (i % 25)::int2 END,
                      CASE WHEN i % 13 = 0 THEN NULL ELSE round(i * 1.5, 2) END
FROM generate_series(1, 3000) i;
CREATE TABLE js (sk int8 PRIMARY KEY, nk int2, sname varchar(20));
INSERT INTO js SELECT i * 1000003, (i % 25)::int2, 'supplier ' || i FROM generate_series(1, 400) i;
-- the fact table: keys with NULLs and keys no dimension holds
CREATE TABLE jf (id int8, dkey int4, ckey int8, skey int8, qty int4, price numeric(12,2), disc int4, flag char(1));
INSERT INTO jf SELECT i,
       CASE WHEN i % 101 = 0 THEN NULL ELSE 1000 + (i * 7) % 90 END,
       CASE WHEN i % 89 = 0 THEN NULL ELSE (i * 13) % 3100 + 1 END,
       ((i * 11) % 410 + 1) * 1000003,
       CASE WHEN i % 23 = 0 THEN NULL ELSE i % 50 END,
       round((i % 9973) * 1.37, 2),
       i % 11,
       CASE WHEN i % 3 = 0 THEN 'A' ELSE 'R' END
FROM generate_series(1, 30000) i;
ANALYZE jd; ANALYZE jn; ANALYZE jc; ANALYZE js; ANALYZE jf;

-- a star: two dimensions with their own filters, groups keyed by their text
EXPLAIN (COSTS OFF)
SELECT d.yr, c.nation, sum(f.price), count(*) FROM jf f, jd d, jc c
WHERE f.dkey = d.dk AND f.ckey = c.ck AND c.region = 'ASIA' AND d.yr >= 1994 GROUP BY d.yr, c.nation;
SELECT * FROM explain_join($$SELECT d.yr, c.nation, sum(f.price), count(*) FROM jf f, jd d, jc c
WHERE f.dkey = d.dk AND f.ckey = c.ck AND c.region = 'ASIA' AND d.yr >= 1994 GROUP BY d.yr, c.nation$$);
SELECT check_query($$SELECT d.yr, c.nation, sum(f.price), count(*), avg(f.qty), min(f.qty), max(d.dk), sum(c.bal)
FROM jf f, jd d, jc c WHERE f.dkey = d.dk AND f.ckey = c.ck AND c.region = 'ASIA' AND d.yr >= 1994
GROUP BY d.yr, c.nation$$);
-- SSB Q1's shape: no GROUP BY, fact quals, one dimension
SELECT check_query($$SELECT sum(f.price * f.disc) FROM jf f, jd d
WHERE f.dkey = d.dk AND d.yr = 1993 AND f.disc BETWEEN 1 AND 3 AND f.qty < 25$$);
-- no dimension row passes its filter: no group, or the one row of a plain aggregate
SELECT check_query($$SELECT d.yr, count(*) FROM jf f, jd d WHERE f.dkey = d.dk AND d.yr > 3000 GROUP BY d.yr$$);
SELECT check_query($$SELECT count(*), sum(f.price) FROM jf f, jd d WHERE f.dkey = d.dk AND d.yr > 3000$$);
-- a snowflake: nations through customers (an int2 key read from a dimension);
-- NULL nation keys and NULL names
SELECT * FROM explain_join($$SELECT n.nname, count(*) FROM jf f, jc c, jn n
WHERE f.ckey = c.ck AND c.nk = n.nk GROUP BY n.nname$$);
SELECT check_query($$SELECT n.nname, n.rk, count(*), sum(f.qty), sum(c.bal) FROM jf f, jc c, jn n
WHERE f.ckey = c.ck AND c.nk = n.nk AND n.rk < 2 GROUP BY n.nname, n.rk$$);
-- TPC-H Q5's shape: customer and supplier of one nation (a join filter
-- between two dimensions), sparse supplier keys (a hashed lookup)
SELECT * FROM explain_join($$SELECT c.nation, sum(f.price) FROM jf f, jc c, js s
WHERE f.ckey = c.ck AND f.skey = s.sk AND c.nk = s.nk GROUP BY c.nation$$);
SELECT check_query($$SELECT c.nation, s.nk, sum(f.price), count(*) FROM jf f, jc c, js s
WHERE f.ckey = c.ck AND f.skey = s.sk AND c.nk = s.nk GROUP BY c.nation, s.nk$$);
-- a join filter that is not an equality, and a key mixing fact and dimension
SELECT check_query($$SELECT d.season, f.qty % 3 + d.yr AS k, count(*), sum(f.price) FROM jf f, jd d
WHERE f.dkey = d.dk AND f.qty > d.yr - 1990 GROUP BY d.season, f.qty % 3 + d.yr$$);
-- group by a dimension's key, a fact column and a bpchar of the fact
SELECT check_query($$SELECT c.ck, f.flag, count(*), sum(f.qty) FROM jf f, jc c
WHERE f.ckey = c.ck AND c.ck < 40 GROUP BY c.ck, f.flag$$);
-- HAVING over the groups; a text column of a subquery's rows
SELECT check_query($$SELECT c.nation, sum(f.price) FROM jf f, jc c
WHERE f.ckey = c.ck GROUP BY c.nation HAVING count(*) > 100 AND sum(f.qty) > 3000$$);
SELECT check_query($$SELECT c.region, count(*) FROM jf f,
  (SELECT ck, region FROM jc ORDER BY ck LIMIT 1000) c WHERE f.ckey = c.ck GROUP BY c.region$$);
-- four dimensions at once
SELECT check_query($$SELECT d.yr, n.nname, c.region, count(*), sum(f.price), max(f.qty)
FROM jf f, jd d, jc c, jn n, js s
WHERE f.dkey = d.dk AND f.ckey = c.ck AND c.nk = n.nk AND f.skey = s.sk AND s.nk < 20
GROUP BY d.yr, n.nname, c.region$$);

-- a dimension whose join keys repeat: each fact row would join several
-- rows, which the device does not do; PostgreSQL's plan answers
CREATE TABLE jdup (k int4, v int4);
INSERT INTO jdup SELECT i % 40, i FROM generate_series(1, 100) i;
ANALYZE jdup;
SELECT * FROM explain_join('SELECT u.v % 5, count(*) FROM jf f, jdup u WHERE f.qty = u.k GROUP BY u.v % 5');
SELECT check_query('SELECT u.v % 5, count(*), sum(f.price) FROM jf f, jdup u WHERE f.qty = u.k GROUP BY u.v % 5');

-- a dimension read again for each new Param of a correlated subquery
SELECT check_query($$SELECT y, (SELECT count(*) FROM jf f, jd d WHERE f.dkey = d.dk AND d.yr = y)
FROM generate_series(1991, 1999) y$$);

-- a device failure: the CPU backend runs it again with the same dimensions
SET gpuops.cpu_fallback = on;
SET gpuops.fault_injection = kernel_error;
SELECT check_query($$SELECT d.yr, count(*), sum(f.price) FROM jf f, jd d WHERE f.dkey = d.dk GROUP BY d.yr$$);
SELECT * FROM explain_join($$SELECT d.yr, count(*) FROM jf f, jd d WHERE f.dkey = d.dk GROUP BY d.yr$$);
RESET gpuops.fault_injection;
SET gpuops.cpu_fallback = off;

-- parallel workers read the fact table while the leader stages the dimensions
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT * FROM explain_join($$SELECT d.yr, c.region, count(*) FROM jf f, jd d, jc c
WHERE f.dkey = d.dk AND f.ckey = c.ck GROUP BY d.yr, c.region$$);
SELECT check_query($$SELECT d.yr, c.region, count(*), sum(f.price), sum(c.bal) FROM jf f, jd d, jc c
WHERE f.dkey = d.dk AND f.ckey = c.ck GROUP BY d.yr, c.region$$);
RESET min_parallel_table_scan_size;
RESET parallel_setup_cost;
SET max_parallel_workers_per_gather = 0;

-- kept by PostgreSQL: an outer join, a join of text columns, a cross join,
-- the joins switched off (a join filter testing text against constants runs:
-- gpuquery_text)
SELECT check_query('SELECT c.region, count(*) FROM jf f LEFT JOIN jc c ON f.ckey = c.ck GROUP BY c.region');
SELECT check_query('SELECT count(*) FROM jf f, jc c WHERE f.flag = c.region');
SELECT check_query('SELECT count(*), sum(f.qty) FROM jf f, jn n WHERE n.nk < 3');
SELECT check_query($$SELECT count(*) FROM jf f, jc c WHERE f.ckey = c.ck AND (f.flag = 'A' OR c.region = 'ASIA')$$);
SET gpuops.enable_query_join = off;
SELECT check_query('SELECT d.yr, count(*) FROM jf f, jd d WHERE f.dkey = d.dk GROUP BY d.yr');
RESET gpuops.enable_query_join;

-- a one-time filter (a qual on no column: PostgreSQL's plan evaluates it
-- once, in a gating Result, before reading anything) keeps PostgreSQL's
-- plan, on the table read or on a joined one: evaluated per row, its error
-- would not be raised over an empty table (assertion builds check for it)
SELECT check_query($$SELECT d.yr, count(*) FROM jf f, jd d WHERE f.dkey = d.dk AND EXISTS (SELECT 1 FROM jn) GROUP BY d.yr$$);
SELECT check_query($$SELECT count(*), sum(f.price) FROM jf f WHERE EXISTS (SELECT 1 FROM jn)$$);

-- columns that depend on the group keys (GROUP BY a primary key and more
-- columns of its table: PostgreSQL groups by the key alone, TPC-H Q10):
-- one more group key each, which splits no group; a joined table's
-- numeric (no key word) groups by its row, and its values come back
-- from the rows read (NULLs too)
CREATE FUNCTION query_keys(q text) RETURNS SETOF text
LANGUAGE plpgsql AS $f$
DECLARE l text;
BEGIN
  FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    IF l ~ '^ *Custom Scan \(GpuQuery\)|^  (Lookups|Group Key)' THEN
      RETURN NEXT l;
    END IF;
  END LOOP;
END $f$;
SELECT * FROM query_keys($$SELECT c.ck, c.nation, c.bal, n.nname, sum(f.price), count(*)
FROM jf f, jc c, jn n WHERE f.ckey = c.ck AND c.nk = n.nk GROUP BY c.ck, c.nation, c.bal, n.nname$$);
SELECT check_query($$SELECT c.ck, c.nation, c.bal, c.region, n.nname, sum(f.price), count(*)
FROM jf f, jc c, jn n WHERE f.ckey = c.ck AND c.nk = n.nk AND f.flag = 'R'
GROUP BY c.ck, c.nation, c.bal, c.region, n.nname$$);
SELECT check_query($$SELECT c.ck, lower(c.region) AS r, c.bal * 2 AS b2, count(*) FROM jf f JOIN jc c ON f.ckey = c.ck
GROUP BY c.ck, c.region, c.bal HAVING c.bal IS NULL OR c.bal > 2000$$);
SELECT check_query($$SELECT c.ck, c.nk, c.bal, sum(f.qty) FROM jf f, jc c WHERE f.ckey = c.ck GROUP BY c.ck$$);
-- a joined table's text groups by its row too (no dictionary to build:
-- TPC-H Q10's customer texts), NULLs and expressions over it included,
-- and beside a test of the same column in a join filter
SELECT check_query($$SELECT c.ck, c.nation, c.region, n.nname, sum(f.price) FROM jf f, jc c, jn n
WHERE f.ckey = c.ck AND c.nk = n.nk GROUP BY c.ck, c.nation, c.region, n.nname
HAVING c.nation IS NULL OR c.region || 'x' = 'ASIAx'$$);
SELECT check_query($$SELECT c.ck, c.nation, c.bal, count(*) FROM jf f JOIN jc c ON f.ckey = c.ck
WHERE f.qty > 5 OR c.nation = 'N3' GROUP BY c.ck, c.nation, c.bal$$);
-- the table read's own: keys as GROUP BY's would be (a short text), or kept
-- by PostgreSQL (a numeric); a numeric also summed
SELECT check_query($$SELECT ck, nation, count(*) FROM jc GROUP BY ck$$);
SELECT check_query($$SELECT ck, bal, count(*) FROM jc GROUP BY ck$$);
SELECT check_query($$SELECT c.ck, c.bal, sum(c.bal) FROM jf f, jc c WHERE f.ckey = c.ck GROUP BY c.ck$$);

DROP TABLE jf, jd, jc, jn, js, jdup;
DROP FUNCTION query_keys(text);
DROP FUNCTION explain_join(text);
