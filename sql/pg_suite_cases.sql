-- Queries from PostgreSQL's own regression suite that gpuops answered
-- differently or failed on (issue 26), with gpuops forced where it can
-- run: each must give PostgreSQL's rows (gpuops.enabled = off), or keep
-- PostgreSQL's plan.
SET gpuops.min_rows = 0;
SET gpuops.startup_cost = 0;
SET gpuops.tuple_cost = 0;

-- float aggregates: PostgreSQL's serial float8_accum rounds otherwise than
-- combined partial states (2.5 against 2.500000004967054): GpuAgg keeps
-- PostgreSQL's plan for them unless gpuops.enable_float_aggs is on
SELECT check_agg('SELECT avg(x::float8), var_pop(x::float8) FROM (VALUES (100000003), (100000004), (100000006), (100000007)) v(x)');
SELECT check_agg('SELECT stddev_samp(x::float4), sum(x::float8), variance(x::float8) FROM (VALUES (1e8), (1e8 + 1), (-1e8), (3.5)) v(x)');
SET gpuops.enable_float_aggs = on;
SELECT uses_gpuagg('SELECT avg(x::float8), var_pop(x::float8) FROM (VALUES (100000003), (100000004), (100000006), (100000007)) v(x)') AS gpuagg_with_float_aggs;
RESET gpuops.enable_float_aggs;

-- GROUPING() of this level, from a subquery: only an Agg evaluates it
SELECT check_agg($$select (select (select grouping(a,b) from (values (1)) v2(c)) from (values (1,2)) v1(a,b) group by (a,b)) from (values(6,7)) v3(e,f) GROUP BY ROLLUP(e,f)$$);
SELECT check_agg($$select a, grouping(a) from (values (1), (2), (2)) v(a) group by a$$);

-- a group key expression over a partitioned table: the partitions compute
-- it, and the Append above returns no column it reads
CREATE TABLE psc_lp (a text, b int) PARTITION BY LIST (a);
CREATE TABLE psc_lp1 PARTITION OF psc_lp FOR VALUES IN ('x');
CREATE TABLE psc_lp2 PARTITION OF psc_lp DEFAULT;
INSERT INTO psc_lp VALUES ('x', 1), ('x', 2), ('y', 3);
SELECT check_agg('SELECT tableoid::regclass::text, a, min(b), max(b) FROM psc_lp GROUP BY 1, 2');
SELECT check_agg('SELECT upper(a), count(*), sum(b) FROM psc_lp GROUP BY 1');
SELECT check_sort_cols('SELECT upper(a) AS u, b FROM psc_lp ORDER BY upper(a), b', ARRAY['u', 'b']);

-- the same in parallel: a group key the parallel scan computes
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 4;
CREATE TABLE psc_tk AS SELECT md5(i::text)::name AS s FROM generate_series(1, 10000) i;
ANALYZE psc_tk;
SELECT check_agg('SELECT length(s), count(*) FROM psc_tk GROUP BY length(s)');
SELECT check_agg('SELECT substr(s, 1, 1), count(*) FROM psc_tk GROUP BY 1');
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

-- ORDER BY over a UNION: its columns name no relation; PostgreSQL's plan
CREATE TABLE psc_t (a int, b int, c int);
INSERT INTO psc_t SELECT mod(i, 10), mod(i, 10), i FROM generate_series(1, 10000) s(i);
CREATE INDEX ON psc_t (a);
ANALYZE psc_t;
SET enable_hashagg = off;
SELECT count(*) FROM plan_lines('SELECT * FROM psc_t UNION SELECT * FROM psc_t ORDER BY 1, 3') AS explain_lines;
SELECT check_sort_cols('SELECT * FROM psc_t UNION SELECT * FROM psc_t ORDER BY 1, 3', ARRAY['a', 'c']);
SELECT check_sort_cols('SELECT a, c FROM psc_t UNION ALL SELECT b, c FROM psc_t ORDER BY 1, 2', ARRAY['a', 'c']);
RESET enable_hashagg;

-- the row identity of an inherited UPDATE, DELETE or MERGE target
-- (ROWID_VAR) names no relation either ("bogus varno: -4" in EXPLAIN)
CREATE TABLE psc_mt (tid integer PRIMARY KEY) PARTITION BY LIST (tid);
CREATE TABLE psc_mtp PARTITION OF psc_mt DEFAULT PARTITION BY LIST (tid);
CREATE TABLE psc_ms (sid integer);
INSERT INTO psc_ms VALUES (1), (2);
CREATE FUNCTION verbose_plan_ok(q text) RETURNS bool
LANGUAGE plpgsql AS $$
DECLARE line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (VERBOSE, COSTS OFF) ' || q LOOP
  END LOOP;
  RETURN true;
END $$;
SELECT verbose_plan_ok('MERGE INTO psc_mt t USING psc_ms s ON t.tid = s.sid
  WHEN NOT MATCHED THEN INSERT VALUES (s.sid)');
CREATE TABLE psc_ps (a int, b int) PARTITION BY RANGE (a);
CREATE TABLE psc_ps1 PARTITION OF psc_ps FOR VALUES FROM (0) TO (100);
CREATE TABLE psc_ps2 PARTITION OF psc_ps FOR VALUES FROM (100) TO (1000);
INSERT INTO psc_ps SELECT i, i FROM generate_series(1, 999) i;
CREATE TABLE psc_pss AS SELECT i * 2 AS a FROM generate_series(1, 500) i;
ANALYZE psc_ps, psc_pss;
SET gpuops.enabled = off;
UPDATE psc_ps SET b = b + 1 FROM psc_pss WHERE psc_ps.a = psc_pss.a;
CREATE TEMP TABLE psc_ps_off AS SELECT * FROM psc_ps;
UPDATE psc_ps SET b = a;
RESET gpuops.enabled;
SELECT verbose_plan_ok('UPDATE psc_ps SET b = b + 1 FROM psc_pss WHERE psc_ps.a = psc_pss.a');
UPDATE psc_ps SET b = b + 1 FROM psc_pss WHERE psc_ps.a = psc_pss.a;
SELECT (SELECT count(*) FROM (TABLE psc_ps EXCEPT ALL TABLE psc_ps_off) d) AS extra,
       (SELECT count(*) FROM (TABLE psc_ps_off EXCEPT ALL TABLE psc_ps) d) AS missing,
       (SELECT count(*) FROM psc_ps WHERE b <> a) AS updated;
DELETE FROM psc_ps USING psc_pss WHERE psc_ps.a = psc_pss.a + 1;
SELECT count(*) AS left_after_delete FROM psc_ps;

-- A field of a CTE's record column (a recursive CTE's SEARCH column, whose
-- depth the recursive term reads): EXPLAIN VERBOSE names the field by
-- looking into the plan node that scans the CTE, which a custom scan over
-- it would hide (an assertion failure in ruleutils.c with assertions on,
-- "f1" without).  gpuops keeps PostgreSQL's plan there, and only there:
-- the same join without the SEARCH column is a gpuops join.
CREATE TABLE psc_graph (f int, t int, label text);
INSERT INTO psc_graph SELECT i, i % 50 + 1, 'n' || i FROM generate_series(1, 2000) i;
ANALYZE psc_graph;
CREATE FUNCTION plan_text(q text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE line text; r text := '';
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (VERBOSE, COSTS OFF) ' || q LOOP
    r := r || line || E'\n';
  END LOOP;
  RETURN r;
END $$;
SET gpuops.enabled = off;
CREATE TEMP TABLE psc_plan_off AS SELECT plan_text($q$
  WITH RECURSIVE sg(f, t, label) AS (
    SELECT * FROM psc_graph g UNION ALL
    SELECT g.* FROM psc_graph g, sg WHERE g.f = sg.t)
  SEARCH BREADTH FIRST BY f, t SET seq
  SELECT * FROM sg ORDER BY seq$q$) AS p;
RESET gpuops.enabled;
SELECT plan_text($q$
  WITH RECURSIVE sg(f, t, label) AS (
    SELECT * FROM psc_graph g UNION ALL
    SELECT g.* FROM psc_graph g, sg WHERE g.f = sg.t)
  SEARCH BREADTH FIRST BY f, t SET seq
  SELECT * FROM sg ORDER BY seq$q$) = (SELECT p FROM psc_plan_off) AS search_plan_is_postgresqls;
SELECT plan_text($q$
  WITH RECURSIVE sg(f, t, label) AS (
    SELECT * FROM psc_graph g UNION ALL
    SELECT g.* FROM psc_graph g, sg WHERE g.f = sg.t)
  SELECT * FROM sg$q$) ~ 'Custom Scan \(Gpu' AS without_search_gpuops_joins;

DROP TABLE psc_lp, psc_tk, psc_t, psc_mt, psc_ms, psc_ps, psc_pss, psc_ps_off, psc_graph;
DROP FUNCTION verbose_plan_ok(text);
DROP FUNCTION plan_text(text);
