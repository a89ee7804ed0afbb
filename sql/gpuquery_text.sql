-- GpuQuery's text tests (src/query/query_text_test.h): = or <> a
-- constant, IN or NOT IN a list, LIKE or NOT LIKE a pattern, of one text
-- column, computed by the reader (the fact table) or the dimensions'
-- staging and read by the device as a bool column; and numeric sums of a
-- CASE whose branches have unequal scales (TPC-H Q14).  Every result is
-- compared with PostgreSQL's (gpuops.enabled = off) as text.
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

CREATE FUNCTION explain_text(q text) RETURNS SETOF text
LANGUAGE sql AS $$ SELECT explain_lines(q, 'GpuQuery|Lookups|Escaped|Rows Read|Rows Passed|Groups:') $$;

-- a fact table with TPC-H's kinds of text: a flag, modes in char(10), an
-- instruction over 16 bytes in char(25), free text, NULLs, trailing blanks
CREATE TABLE tf (id int4, pk int4, flag char(1), mode char(10), instr char(25),
                 note varchar(40), body text, qty int4, price numeric(12,2), disc numeric(4,2));
INSERT INTO tf SELECT i, i % 500 + 1,
       CASE WHEN i % 7 = 0 THEN NULL WHEN i % 3 = 0 THEN 'R' ELSE 'A' END,
       (ARRAY['MAIL', 'SHIP', 'AIR', 'AIR REG', 'TRUCK', 'RAIL', 'FOB'])[i % 7 + 1],
       CASE WHEN i % 11 = 0 THEN NULL
            ELSE (ARRAY['DELIVER IN PERSON', 'TAKE BACK RETURN', 'COLLECT COD', 'NONE'])[i % 4 + 1] END,
       CASE WHEN i % 13 = 0 THEN NULL WHEN i % 5 = 0 THEN 'special requests ' || i
            WHEN i % 5 = 1 THEN '100% sure_' || i WHEN i % 5 = 2 THEN 'café ' || i
            WHEN i % 5 = 3 THEN 'trailing  ' ELSE '' END,
       'body ' || repeat(chr(97 + i % 26), i % 40),
       i % 50, round((i % 997) * 1.25, 2), (i % 11) / 100.0
FROM generate_series(1, 20000) i;
-- a dimension: parts with brands, containers and types
CREATE TABLE tp (pk int4 PRIMARY KEY, brand char(10), container char(10), ptype varchar(25), psize int4);
INSERT INTO tp SELECT i, 'Brand#' || (i % 5 + 1) || (i % 3 + 1),
       (ARRAY['SM', 'MED', 'LG', 'JUMBO'])[i % 4 + 1] || ' ' || (ARRAY['CASE', 'BOX', 'PACK', 'PKG', 'BAG'])[i % 5 + 1],
       CASE WHEN i % 17 = 0 THEN NULL
            ELSE (ARRAY['PROMO', 'STANDARD', 'ECONOMY', 'PROMOTIONAL'])[i % 4 + 1] || ' BRUSHED TIN' END,
       i % 50 + 1
FROM generate_series(1, 500) i;
ANALYZE tf; ANALYZE tp;

-- fact tests as device filters: EXPLAIN shows them, the reader computes them
EXPLAIN (COSTS OFF)
SELECT mode, count(*) FROM tf WHERE mode IN ('MAIL', 'SHIP') AND instr = 'DELIVER IN PERSON' GROUP BY mode;
SELECT * FROM explain_text($$SELECT mode, count(*) FROM tf WHERE mode IN ('MAIL', 'SHIP') AND instr = 'DELIVER IN PERSON' GROUP BY mode$$);
SELECT check_query($$SELECT mode, count(*), sum(price) FROM tf WHERE mode IN ('MAIL', 'SHIP') AND instr = 'DELIVER IN PERSON' GROUP BY mode$$);
-- = and <> with NULLs; bpchar ignores trailing blanks on both sides, text does not
SELECT check_query($$SELECT count(*), sum(qty) FROM tf WHERE flag = 'R'$$);
SELECT check_query($$SELECT count(*), sum(qty) FROM tf WHERE flag <> 'R'$$);
SELECT check_query($$SELECT count(*) FROM tf WHERE mode = 'AIR   '$$);
SELECT check_query($$SELECT count(*) FROM tf WHERE note = 'trailing'$$);
SELECT check_query($$SELECT count(*) FROM tf WHERE note = 'trailing  '$$);
SELECT check_query($$SELECT count(*) FROM tf WHERE note = ''$$);
SELECT check_query($$SELECT count(*) FROM tf WHERE 'NONE' = instr$$);
-- IN and NOT IN, with and without a NULL in the list
SELECT check_query($$SELECT mode, count(*) FROM tf WHERE mode NOT IN ('MAIL', 'SHIP') GROUP BY mode$$);
SELECT check_query($$SELECT count(*) FROM tf WHERE instr IN ('NONE', NULL)$$);
SELECT check_query($$SELECT count(*) FROM tf WHERE instr NOT IN ('NONE', NULL)$$);
SELECT check_query($$SELECT count(*) FILTER (WHERE (instr IN ('NONE', NULL)) IS NULL) FROM tf$$);
SELECT check_query($$SELECT count(*) FROM tf WHERE note::text IN ('trailing  ', 'café 2')$$);
-- LIKE: prefixes, suffixes, runs, _ (one character, in UTF-8 too), escapes; bpchar keeps its blanks
SELECT check_query($$SELECT count(*) FROM tf WHERE note LIKE 'special%'$$);
SELECT check_query($$SELECT count(*) FROM tf WHERE note LIKE '%requests 1%5'$$);
SELECT check_query($$SELECT count(*) FROM tf WHERE note LIKE 'caf_ 1_'$$);
SELECT check_query($$SELECT count(*) FROM tf WHERE note LIKE '100\% sure\_%'$$);
SELECT check_query($$SELECT count(*) FROM tf WHERE note LIKE '100#% sure%' ESCAPE '#'$$);
SELECT check_query($$SELECT count(*) FROM tf WHERE note LIKE '%'$$);
SELECT check_query($$SELECT count(*) FROM tf WHERE note LIKE ''$$);
SELECT check_query($$SELECT count(*) FROM tf WHERE note NOT LIKE '%e%'$$);
SELECT check_query($$SELECT count(*) FROM tf WHERE mode LIKE 'AIR'$$);
SELECT check_query($$SELECT count(*) FROM tf WHERE mode LIKE 'AIR%'$$);
SELECT check_query($$SELECT count(*) FROM tf WHERE mode LIKE '%R'$$);
SELECT check_query($$SELECT count(*) FROM tf WHERE mode LIKE '%R   %'$$);
SELECT check_query($$SELECT count(*) FROM tf WHERE body LIKE '%zzzz%' OR body LIKE 'body a%a'$$);
SELECT check_query($$SELECT count(*) FROM tf WHERE body LIKE '%_%_%_%a'$$);
-- tests inside expressions: OR with numbers, a CASE key, FILTER, a test as a group key
SELECT check_query($$SELECT count(*) FROM tf WHERE (flag = 'R' AND qty < 10) OR (mode LIKE 'A%' AND qty > 40)$$);
SELECT check_query($$SELECT CASE WHEN mode IN ('AIR', 'AIR REG') THEN 1 ELSE 2 END AS k, count(*) FROM tf GROUP BY 1$$);
SELECT check_query($$SELECT mode, count(*) FILTER (WHERE instr LIKE '%COD'), sum(qty) FILTER (WHERE flag <> 'A') FROM tf GROUP BY mode$$);
SELECT check_query($$SELECT flag = 'R' AS r, count(*) FROM tf GROUP BY 1$$);
-- a long value stored compressed: the reader escapes to PostgreSQL's plan, rows alike
CREATE TABLE tlong (id int4, body text);
INSERT INTO tlong SELECT i, CASE WHEN i = 500 THEN repeat('x', 100000) ELSE 'short ' || i END FROM generate_series(1, 1000) i;
ANALYZE tlong;
-- (the counts before the escape depend on the read's form: not shown)
SELECT * FROM explain_text($$SELECT count(*) FROM tlong WHERE body LIKE 'short%'$$) l
WHERE l !~ 'Rows Read|Rows Passed|Groups';
SELECT check_query($$SELECT count(*) FROM tlong WHERE body LIKE 'short%'$$);
-- a nondeterministic-free collation other than the default: "C" is deterministic
SELECT check_query($$SELECT count(*) FROM tf WHERE mode = 'MAIL' COLLATE "C"$$);

-- dimension tests: TPC-H Q19's shape, an OR over both tables in the join filter
EXPLAIN (COSTS OFF)
SELECT sum(f.price * (1 - f.disc)) FROM tf f, tp p
WHERE (p.pk = f.pk AND p.brand = 'Brand#12' AND p.container IN ('SM CASE', 'SM BOX', 'SM PACK', 'SM PKG')
       AND f.qty BETWEEN 1 AND 11 AND p.psize BETWEEN 1 AND 5 AND f.mode IN ('AIR', 'AIR REG') AND f.instr = 'DELIVER IN PERSON')
   OR (p.pk = f.pk AND p.brand = 'Brand#23' AND p.container IN ('MED BAG', 'MED BOX', 'MED PKG', 'MED PACK')
       AND f.qty BETWEEN 10 AND 20 AND p.psize BETWEEN 1 AND 10 AND f.mode IN ('AIR', 'AIR REG') AND f.instr = 'DELIVER IN PERSON');
SELECT check_query($$SELECT sum(f.price * (1 - f.disc)), count(*) FROM tf f, tp p
WHERE (p.pk = f.pk AND p.brand = 'Brand#12' AND p.container IN ('SM CASE', 'SM BOX', 'SM PACK', 'SM PKG')
       AND f.qty BETWEEN 1 AND 11 AND p.psize BETWEEN 1 AND 5 AND f.mode IN ('AIR', 'AIR REG') AND f.instr = 'DELIVER IN PERSON')
   OR (p.pk = f.pk AND p.brand = 'Brand#23' AND p.container IN ('MED BAG', 'MED BOX', 'MED PKG', 'MED PACK')
       AND f.qty BETWEEN 10 AND 20 AND p.psize BETWEEN 1 AND 10 AND f.mode IN ('AIR', 'AIR REG') AND f.instr = 'DELIVER IN PERSON')$$);
-- TPC-H Q12's shape: a dimension's test in the aggregates, a fact test as the group
SELECT check_query($$SELECT f.mode,
  sum(CASE WHEN p.container LIKE 'SM%' OR p.container LIKE 'LG%' THEN 1 ELSE 0 END),
  sum(CASE WHEN p.container NOT LIKE 'SM%' AND p.container NOT LIKE 'LG%' THEN 1 ELSE 0 END)
FROM tf f, tp p WHERE p.pk = f.pk AND f.mode IN ('MAIL', 'SHIP') AND f.qty < 30 GROUP BY f.mode$$);
-- TPC-H Q14's shape: a CASE of scales 4 and 0 summed; NULL types (no match, no scale)
SELECT * FROM explain_text($$SELECT 100.00 * sum(CASE WHEN p.ptype LIKE 'PROMO%' THEN f.price * (1 - f.disc) ELSE 0 END)
  / sum(f.price * (1 - f.disc)) FROM tf f, tp p WHERE f.pk = p.pk AND f.qty < 20$$);
SELECT check_query($$SELECT 100.00 * sum(CASE WHEN p.ptype LIKE 'PROMO%' THEN f.price * (1 - f.disc) ELSE 0 END)
  / sum(f.price * (1 - f.disc)) FROM tf f, tp p WHERE f.pk = p.pk AND f.qty < 20$$);
-- the display scale per group: groups where only the scale-0 branch adds show 0 decimals
SELECT check_query($$SELECT f.mode, sum(CASE WHEN p.ptype LIKE 'PROMO%' AND f.mode <> 'FOB' THEN f.price * (1 - f.disc) ELSE 0 END),
  avg(CASE WHEN p.ptype LIKE 'ECO%' AND f.mode <> 'RAIL' THEN f.price ELSE 1 END)
FROM tf f, tp p WHERE f.pk = p.pk GROUP BY f.mode$$);
SELECT check_query($$SELECT f.mode, sum(CASE WHEN p.ptype LIKE 'PROMO%' AND f.mode <> 'FOB' THEN f.price * (1 - f.disc) END)
FROM tf f, tp p WHERE f.pk = p.pk GROUP BY f.mode$$);
SELECT check_query($$SELECT sum(CASE WHEN f.qty > 100 THEN f.price ELSE 0 END),
  sum(CASE WHEN f.qty > 100 THEN f.price ELSE 0 END) FILTER (WHERE f.flag = 'R') FROM tf f$$);
-- a dimension's test in a group key and a FILTER, with its NULL types
SELECT check_query($$SELECT p.ptype LIKE '%TIN' AS tin, count(*), count(*) FILTER (WHERE p.brand IN ('Brand#11', NULL))
FROM tf f, tp p WHERE f.pk = p.pk GROUP BY 1$$);

-- dimensions read from their pages (at least gpuops.min_rows rows), their
-- quals a program with text tests; a compressed value sends one to its plan
SELECT * FROM explain_text($$SELECT count(*), sum(f.qty) FROM tf f, tp p
WHERE f.pk = p.pk AND p.brand LIKE 'Brand#1%' AND p.psize < 30$$);
SELECT check_query($$SELECT count(*), sum(f.qty) FROM tf f, tp p
WHERE f.pk = p.pk AND p.brand LIKE 'Brand#1%' AND p.psize < 30$$);
CREATE TABLE tp2 (pk int4 PRIMARY KEY, descr text);
INSERT INTO tp2 SELECT i, CASE WHEN i = 250 THEN repeat('y', 100000) ELSE 'part ' || i END
FROM generate_series(1, 500) i;
ANALYZE tp2;
SELECT * FROM explain_text($$SELECT count(*) FROM tf f, tp2 p WHERE f.pk = p.pk AND p.descr NOT LIKE 'part 1%'$$);
SELECT check_query($$SELECT count(*) FROM tf f, tp2 p WHERE f.pk = p.pk AND p.descr NOT LIKE 'part 1%'$$);
-- a dimension's short text (char(n), varchar(n), n <= 16) read from its
-- pages as its stored bytes and coded there: NULLs, '', trailing blanks
-- (distinct in varchar, not in char), 16 bytes, UTF-8; bpchar keeps its
-- padding in the groups.  varchar(25) stays with the plan; a 16-character
-- value over 16 bytes sends the dimension to its plan at run time.
CREATE TABLE tv (pk int4 PRIMARY KEY, tag varchar(16), code char(4), label varchar(16), wide varchar(25));
INSERT INTO tv SELECT i,
       (ARRAY[NULL, '', 'x', 'x ', 'exactly16bytes!!', 'café'])[i % 6 + 1],
       CASE WHEN i % 4 = 0 THEN 'AB' WHEN i % 4 = 1 THEN 'AB  ' ELSE 'A' || (i % 3) END,
       CASE WHEN i = 333 THEN repeat('é', 16) ELSE 'ok ' || (i % 5) END,
       'wide ' || (i % 7)
FROM generate_series(1, 500) i;
ANALYZE tv;
SELECT * FROM explain_text($$SELECT v.tag, v.code, count(*), sum(f.qty) FROM tf f, tv v
WHERE f.pk = v.pk GROUP BY v.tag, v.code$$);
SELECT check_query($$SELECT v.tag, v.code, count(*), sum(f.qty) FROM tf f, tv v
WHERE f.pk = v.pk GROUP BY v.tag, v.code$$);
SELECT check_query($$SELECT v.code, length(v.tag), count(*) FROM tf f, tv v
WHERE f.pk = v.pk AND v.pk > 100 GROUP BY v.code, v.tag$$);
SELECT * FROM explain_text($$SELECT v.label, count(*) FROM tf f, tv v WHERE f.pk = v.pk GROUP BY v.label$$);
SELECT check_query($$SELECT v.label, count(*) FROM tf f, tv v WHERE f.pk = v.pk GROUP BY v.label$$);
SELECT * FROM explain_text($$SELECT v.wide, count(*) FROM tf f, tv v WHERE f.pk = v.pk GROUP BY v.wide$$);
SELECT check_query($$SELECT v.wide, count(*) FROM tf f, tv v WHERE f.pk = v.pk GROUP BY v.wide$$);
-- with workers: a dimension's pages shared out among them and the leader,
-- and a compressed value one of them meets sends it to its plan
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT * FROM explain_text($$SELECT count(*), sum(f.qty) FROM tf f, tp p
WHERE f.pk = p.pk AND p.brand LIKE 'Brand#1%' AND p.psize < 30$$);
SELECT check_query($$SELECT p.container, count(*), sum(f.qty) FROM tf f, tp p
WHERE f.pk = p.pk AND p.brand LIKE 'Brand#1%' AND p.psize < 30 GROUP BY p.container$$);
SELECT * FROM explain_text($$SELECT count(*) FROM tf f, tp2 p WHERE f.pk = p.pk AND p.descr NOT LIKE 'part 1%'$$);
SELECT check_query($$SELECT count(*) FROM tf f, tp2 p WHERE f.pk = p.pk AND p.descr NOT LIKE 'part 1%'$$);
-- the workers keep the rows the dimension's quals pass, short text with them
SELECT * FROM explain_text($$SELECT v.tag, v.code, count(*) FROM tf f, tv v
WHERE f.pk = v.pk AND v.pk % 3 <> 0 GROUP BY v.tag, v.code$$);
SELECT check_query($$SELECT v.tag, v.code, count(*), sum(f.qty) FROM tf f, tv v
WHERE f.pk = v.pk AND v.pk % 3 <> 0 GROUP BY v.tag, v.code$$);
SELECT check_query($$SELECT v.label, count(*) FROM tf f, tv v WHERE f.pk = v.pk AND v.pk % 3 <> 0 GROUP BY v.label$$);
RESET min_parallel_table_scan_size;
RESET parallel_setup_cost;
SET max_parallel_workers_per_gather = 0;
-- through their plans below gpuops.min_rows rows
SET gpuops.min_rows = 10000;
SELECT * FROM explain_text($$SELECT count(*), sum(f.qty) FROM tf f, tp p
WHERE f.pk = p.pk AND p.brand LIKE 'Brand#1%' AND p.psize < 30$$);
SELECT check_query($$SELECT count(*), sum(f.qty) FROM tf f, tp p
WHERE f.pk = p.pk AND p.brand LIKE 'Brand#1%' AND p.psize < 30$$);
SET gpuops.min_rows = 0;

DROP TABLE tf, tp, tp2, tv, tlong;
DROP FUNCTION explain_text(text);
