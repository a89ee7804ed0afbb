-- GpuQuery: a one-table block (scan, quals, GROUP BY aggregates) run whole
-- by the query backend, returning only the groups (doc/gpuquery.md).  Every
-- result is compared with PostgreSQL's (gpuops.enabled = off), as text, so
-- values and display scales count.  Rows the device cannot decide (a NaN
-- numeric) run PostgreSQL's own plan, the node's child.
SET gpuops.min_rows = 0;
SET gpuops.startup_cost = 0;
SET max_parallel_workers_per_gather = 0;
SET gpuops.cpu_fallback = off;
SET gpuops.enable_query = on;

-- explain_escape(q): the GpuQuery lines (rows, groups, and why it escaped or
-- fell back, if it did; not the backend's name, cpu or cuda)
CREATE FUNCTION explain_escape(q text) RETURNS SETOF text
LANGUAGE sql AS $$ SELECT explain_lines(q, 'GpuQuery|Escaped|Fallback|Rows Read|Rows Passed|Groups:') $$;

-- lineitem's shape: numeric(15,2) money, char(1) flags, dates
CREATE TABLE qli (
  l_orderkey int8,
  l_quantity numeric(15,2),
  l_extendedprice numeric(15,2),
  l_discount numeric(15,2),
  l_tax numeric(15,2),
  l_returnflag char(1),
  l_linestatus char(1),
  l_shipdate date,
  f8 float8,
  i4 int4,
  tag varchar(4),
  tag3 char(3),
  big numeric(15,2),
  note text);
INSERT INTO qli
SELECT i,
       (i % 50 + 1)::numeric(15,2),
       round((i % 9973) * 1.37 + 900, 2),
       (i % 11) / 100.0,
       (i % 9) / 100.0,
       CASE WHEN i % 3 = 0 THEN 'A' WHEN i % 3 = 1 THEN 'N' ELSE 'R' END,
       CASE WHEN i % 7 < 4 THEN 'F' ELSE 'O' END,
       date '1992-01-01' + (i % 2500),
       CASE WHEN i % 10 = 0 THEN -0.0 WHEN i % 10 = 1 THEN 0.0 WHEN i % 10 = 2 THEN 'NaN' ELSE i % 5 END,
       CASE WHEN i % 13 = 0 THEN NULL ELSE i % 100 END,
       CASE WHEN i % 4 = 0 THEN 'a' WHEN i % 4 = 1 THEN 'a  ' WHEN i % 4 = 2 THEN 'bé' ELSE NULL END,
       CASE WHEN i % 4 = 0 THEN 'a' WHEN i % 4 = 1 THEN 'a  ' WHEN i % 4 = 2 THEN 'bé' ELSE NULL END,
       9999999999999.99 - i,
       repeat('x', i % 30)
FROM generate_series(1, 30000) i;
ANALYZE qli;

-- TPC-H Q1
EXPLAIN (COSTS OFF)
select l_returnflag, l_linestatus, sum(l_quantity) as sum_qty, sum(l_extendedprice) as sum_base_price,
       sum(l_extendedprice * (1 - l_discount)) as sum_disc_price,
       sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) as sum_charge,
       avg(l_quantity) as avg_qty, avg(l_extendedprice) as avg_price, avg(l_discount) as avg_disc,
       count(*) as count_order
from qli where l_shipdate <= date '1998-12-01' - interval '90' day
group by l_returnflag, l_linestatus order by l_returnflag, l_linestatus;
SELECT * FROM explain_escape($$select l_returnflag, l_linestatus, sum(l_quantity) as sum_qty,
       sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) as sum_charge, count(*) as count_order
from qli where l_shipdate <= date '1998-12-01' - interval '90' day group by l_returnflag, l_linestatus$$);
select l_returnflag, l_linestatus, sum(l_quantity) as sum_qty, sum(l_extendedprice) as sum_base_price,
       sum(l_extendedprice * (1 - l_discount)) as sum_disc_price,
       sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) as sum_charge,
       avg(l_quantity) as avg_qty, avg(l_extendedprice) as avg_price, avg(l_discount) as avg_disc,
       count(*) as count_order
from qli where l_shipdate <= date '1998-12-01' - interval '90' day
group by l_returnflag, l_linestatus order by l_returnflag, l_linestatus;
SELECT check_query($$select l_returnflag, l_linestatus, sum(l_quantity) as sum_qty, sum(l_extendedprice) as sum_base_price,
       sum(l_extendedprice * (1 - l_discount)) as sum_disc_price,
       sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) as sum_charge,
       avg(l_quantity) as avg_qty, avg(l_extendedprice) as avg_price, avg(l_discount) as avg_disc,
       count(*) as count_order
from qli where l_shipdate <= date '1998-12-01' - interval '90' day
group by l_returnflag, l_linestatus$$);

-- TPC-H Q6
EXPLAIN (COSTS OFF)
select sum(l_extendedprice * l_discount) as revenue from qli
where l_shipdate >= date '1994-01-01' and l_shipdate < date '1994-01-01' + interval '1' year
  and l_discount between 0.06 - 0.01 and 0.06 + 0.01 and l_quantity < 24;
select sum(l_extendedprice * l_discount) as revenue from qli
where l_shipdate >= date '1994-01-01' and l_shipdate < date '1994-01-01' + interval '1' year
  and l_discount between 0.06 - 0.01 and 0.06 + 0.01 and l_quantity < 24;
SELECT check_query($$select sum(l_extendedprice * l_discount) as revenue from qli
where l_shipdate >= date '1994-01-01' and l_shipdate < date '1994-01-01' + interval '1' year
  and l_discount between 0.06 - 0.01 and 0.06 + 0.01 and l_quantity < 24$$);

-- NULLs: in keys (a NULL group), in arguments (count(x) against count(*),
-- a group of NULLs only: NULL sums, averages, min, max)
SELECT check_query('SELECT i4, count(*), count(i4), sum(i4), avg(i4), min(i4), max(i4) FROM qli GROUP BY i4');
SELECT check_query($$SELECT i4 IS NULL AS n, count(*), count(i4), sum(i4), avg(i4), min(i4), max(i4),
                          sum(l_orderkey), avg(l_orderkey) FROM qli GROUP BY i4 IS NULL$$);
SELECT i4 IS NULL AS n, count(*), count(i4), sum(i4), avg(i4), min(i4), max(i4)
FROM qli GROUP BY i4 IS NULL ORDER BY 1;
-- min and max of dates and integers, FILTER, keys computed on the device
SELECT check_query($$SELECT l_linestatus, min(l_shipdate), max(l_shipdate), min(l_orderkey), max(i4),
                          count(*) FILTER (WHERE l_discount > 0.05),
                          sum(l_quantity) FILTER (WHERE i4 > 50)
                   FROM qli GROUP BY l_linestatus$$);
SELECT check_query('SELECT l_orderkey % 7 AS k, sum(l_tax), avg(l_tax) FROM qli WHERE i4 < 90 GROUP BY l_orderkey % 7');
SELECT check_query('SELECT l_shipdate, count(*), sum(l_extendedprice) FROM qli GROUP BY l_shipdate');
-- numeric sums past 2^63 (scaled), negative values, a constant of another scale
SELECT check_query($$SELECT l_returnflag, sum(big), avg(big), sum(-big), sum(big * 1.000),
                          sum(l_quantity - 30.5) FROM qli GROUP BY l_returnflag$$);
SELECT sum(big), avg(big), sum(l_quantity * 1.50), sum(l_tax + 1) FROM qli;
SELECT check_query('SELECT sum(big), avg(big), sum(l_quantity * 1.50), sum(l_tax + 1) FROM qli');

-- short text keys: varchar(4) 'a' and 'a  ' apart, char(3) 'a' and 'a  ' one
-- group (shown padded), a multibyte value, NULL
SELECT tag, count(*), sum(l_quantity) FROM qli GROUP BY tag ORDER BY 1;
SELECT tag3, length(tag3), octet_length(tag3::text || '|'), count(*) FROM qli GROUP BY tag3 ORDER BY 1;
SELECT check_query('SELECT tag, tag3, count(*) FROM qli GROUP BY tag, tag3');
-- float keys: -0 and 0 one group, NaN one group (keys shown through abs:
-- which of -0 and 0 PostgreSQL shows depends on the first row)
SELECT abs(f8) AS k, count(*) FROM qli GROUP BY f8 ORDER BY 1;
SELECT check_query('SELECT abs(f8) AS k, count(*), sum(i4) FROM qli GROUP BY f8');
-- float sums: only with gpuops.enable_float_aggs (their rounding follows the order of rows)
EXPLAIN (COSTS OFF) SELECT l_linestatus, sum(f8) FROM qli GROUP BY l_linestatus;
SET gpuops.enable_float_aggs = on;
SELECT check_query('SELECT l_linestatus, sum(f8), avg(f8), sum(i4::float8), avg(i4::float4) FROM qli WHERE f8 < 3 GROUP BY l_linestatus');
RESET gpuops.enable_float_aggs;

-- GROUP BY without aggregates; expressions over aggregates and keys (the projection)
SELECT check_query('SELECT l_returnflag, l_linestatus FROM qli GROUP BY l_returnflag, l_linestatus');
SELECT check_query($$SELECT l_linestatus || '/' || l_returnflag AS k, sum(l_quantity) / count(*) AS a,
                          max(l_shipdate) - min(l_shipdate) AS span
                   FROM qli GROUP BY l_returnflag, l_linestatus$$);

-- HAVING (with an aggregate not in the target list); ORDER BY and LIMIT above
SELECT check_query($$SELECT l_returnflag, l_linestatus, sum(l_quantity) FROM qli
                   GROUP BY l_returnflag, l_linestatus HAVING count(*) > 4500 AND min(i4) = 0$$);
EXPLAIN (COSTS OFF)
SELECT i4, sum(l_extendedprice) FROM qli GROUP BY i4 HAVING avg(l_discount) > 0.05 ORDER BY 2 DESC LIMIT 3;
SELECT i4, sum(l_extendedprice) FROM qli GROUP BY i4 HAVING avg(l_discount) > 0.05 ORDER BY 2 DESC LIMIT 3;

-- empty table, no passing row, a plain aggregate over nothing (one row)
CREATE TABLE qempty (LIKE qli);
ANALYZE qempty;
SELECT count(*), sum(l_quantity), avg(l_quantity), min(i4) FROM qempty;
SELECT check_query('SELECT count(*), sum(l_quantity), avg(l_quantity), min(i4) FROM qempty');
SELECT check_query('SELECT l_returnflag, count(*) FROM qempty GROUP BY l_returnflag');
SELECT count(*), sum(l_quantity), max(l_shipdate) FROM qli WHERE l_quantity < 0;
SELECT check_query('SELECT count(*), sum(l_quantity), max(l_shipdate) FROM qli WHERE l_quantity < 0');
SELECT check_query('SELECT l_returnflag, count(*) FROM qli WHERE l_quantity < 0 GROUP BY l_returnflag');
SELECT check_query('SELECT count(*) FROM qli WHERE l_quantity < 0 HAVING count(*) = 0');

-- a prepared statement's generic plan: $1 in the qual, bound at each run
PREPARE qp(date, numeric) AS
  SELECT l_returnflag, count(*), sum(l_extendedprice * (1 - l_discount))
  FROM qli WHERE l_shipdate <= $1 AND l_discount >= $2 GROUP BY l_returnflag ORDER BY 1;
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE qp('1995-06-01', 0.03);
EXECUTE qp('1995-06-01', 0.03);
EXECUTE qp('1993-01-01', 0.08);
SET gpuops.enabled = off;
EXECUTE qp('1995-06-01', 0.03);
EXECUTE qp('1993-01-01', 0.08);
SET gpuops.enabled = on;
RESET plan_cache_mode;
DEALLOCATE qp;
-- rescans: a correlated subquery (its Param in the qual changes)
SELECT check_query($$SELECT g, (SELECT sum(l_quantity) FROM qli WHERE l_orderkey % 5 = g) AS s
                   FROM generate_series(0, 5) g$$);
SELECT g, (SELECT sum(l_quantity) FROM qli WHERE l_orderkey % 5 = g) AS s FROM generate_series(0, 5) g;

-- rows the device cannot decide: a NaN numeric in a summed column runs
-- PostgreSQL's plan (NaN sums); NaN only in rows the filter drops does not
CREATE TABLE qnan (id int4, g int4, n numeric(10,2));
INSERT INTO qnan SELECT i, i % 3, i / 7.0 FROM generate_series(1, 3000) i;
INSERT INTO qnan VALUES (-1, 0, 'NaN');
ANALYZE qnan;
SELECT g, sum(n), avg(n), count(*) FROM qnan GROUP BY g ORDER BY 1;
SELECT check_query('SELECT g, sum(n), avg(n), count(*) FROM qnan GROUP BY g');
SELECT * FROM explain_escape('SELECT g, sum(n) FROM qnan GROUP BY g');
SELECT check_query('SELECT g, sum(n), avg(n), count(*) FROM qnan WHERE id > 0 GROUP BY g');
SELECT * FROM explain_escape('SELECT g, sum(n) FROM qnan WHERE id > 0 GROUP BY g');
-- rescans: after an escape (the NaN's group), with the Param changed, the device again
SELECT check_query('SELECT x, (SELECT sum(n) FROM qnan WHERE g = x) AS s FROM generate_series(0, 3) x');
-- rescans without a changed Param: the same groups again
SET enable_material = off;
SELECT check_query($$SELECT x, s.* FROM generate_series(1, 3) x,
                   LATERAL (SELECT count(*), sum(n) FROM qnan WHERE id > 0) s$$);
SELECT check_query($$SELECT x, s.* FROM generate_series(1, 3) x,
                   LATERAL (SELECT g, count(*), sum(n) FROM qnan GROUP BY g) s$$);
RESET enable_material;
-- an error PostgreSQL raises (integer overflow in an argument): raised by its plan
SELECT sum(i4 * 100000000) FROM qli;

-- the reader on the backend alone, and on two threads with small batches
-- (their rows' cost kept out of the comparison)
SET gpuops.tuple_cost = 0;
SET gpuops.reader_threads = 0;
SELECT check_query($$SELECT l_returnflag, l_linestatus, sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)),
                          avg(l_discount), count(*), min(l_shipdate) FROM qli
                   WHERE l_shipdate <= date '1998-09-02' GROUP BY l_returnflag, l_linestatus$$);
SET gpuops.reader_threads = 2;
SET gpuops.batch_size = '1MB';
SELECT check_query($$SELECT tag3, i4 % 3 AS m, sum(big), count(i4) FROM qli WHERE l_discount < 0.08 GROUP BY tag3, i4 % 3$$);
RESET gpuops.batch_size;
RESET gpuops.reader_threads;
RESET gpuops.tuple_cost;

-- a device failure: the CPU backend runs it again from the table's start
SET gpuops.cpu_fallback = on;
SET gpuops.fault_injection = kernel_error;
SELECT check_query('SELECT l_returnflag, sum(l_quantity), avg(l_tax), count(*) FROM qli GROUP BY l_returnflag');
SELECT * FROM explain_escape('SELECT l_returnflag, sum(l_quantity) FROM qli WHERE l_discount > 0.05 GROUP BY l_returnflag');
RESET gpuops.fault_injection;
SET gpuops.cpu_fallback = off;

-- count of a numeric column without a scale (only sums need one); quals never true
CREATE TABLE qnum (g int4, n numeric);
INSERT INTO qnum SELECT i % 4, i / 3.0 FROM generate_series(1, 1000) i;
INSERT INTO qnum VALUES (1, NULL), (2, 'NaN');
ANALYZE qnum;
SELECT check_query('SELECT g, count(n), count(*) FROM qnum GROUP BY g');
EXPLAIN (COSTS OFF) SELECT g, sum(n) FROM qnum GROUP BY g;
EXPLAIN (COSTS OFF) SELECT count(*) FROM qli WHERE false;
DROP TABLE qnum;

-- declined (PostgreSQL's plans): DISTINCT aggregate, GROUPING SETS, a
-- volatile qual, an unconstrained numeric argument, a long text key, a
-- partitioned table
SET gpuops.enable_agg = off;
-- (PostgreSQL's own plan for it differs by version: 18 sorts by i4 too)
SELECT uses_node('SELECT l_returnflag, count(DISTINCT i4) FROM qli GROUP BY l_returnflag', 'GpuQuery') AS distinct_uses_gpuquery;
EXPLAIN (COSTS OFF) SELECT l_returnflag, l_linestatus, count(*) FROM qli GROUP BY GROUPING SETS ((l_returnflag), (l_linestatus));
EXPLAIN (COSTS OFF) SELECT count(*) FROM qli WHERE random() < 2;
EXPLAIN (COSTS OFF) SELECT sum(l_quantity::numeric / 3) FROM qli;
EXPLAIN (COSTS OFF) SELECT note, count(*) FROM qli GROUP BY note;
CREATE TABLE qpart (k int4, v numeric(10,2)) PARTITION BY RANGE (k);
CREATE TABLE qpart1 PARTITION OF qpart FOR VALUES FROM (0) TO (100);
INSERT INTO qpart SELECT i % 100, i FROM generate_series(1, 1000) i;
ANALYZE qpart;
EXPLAIN (COSTS OFF) SELECT k % 3, sum(v) FROM qpart GROUP BY k % 3;
RESET gpuops.enable_agg;

-- the parallel read (query_parallel.h): two workers walk the table's pages
-- into shared slots and the leader ships them with its own share; no
-- Gather.  Every row count and page count below is the whole table's,
-- whichever process read what.
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET min_parallel_table_scan_size = 0;
SET gpuops.tuple_cost = 0;
CREATE FUNCTION explain_parallel(q text) RETURNS SETOF text
LANGUAGE sql AS $$ SELECT explain_lines(q, 'GpuQuery|Workers|Escaped|Fallback|Rows Read|Heap Pages|Groups:') $$;
EXPLAIN (COSTS OFF)
SELECT l_returnflag, l_linestatus, sum(l_quantity), count(*) FROM qli WHERE l_discount > 0.02 GROUP BY 1, 2;
SELECT * FROM explain_parallel($$SELECT l_returnflag, l_linestatus, sum(l_quantity), count(*)
                                FROM qli WHERE l_discount > 0.02 GROUP BY 1, 2$$);
SELECT relpages AS qli_pages FROM pg_class WHERE relname = 'qli';
SELECT check_query($$select l_returnflag, l_linestatus, sum(l_quantity), sum(l_extendedprice),
       sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)), avg(l_quantity), avg(l_discount), count(*)
from qli where l_shipdate <= date '1998-12-01' - interval '90' day group by l_returnflag, l_linestatus$$);
SELECT check_query($$SELECT tag, tag3, i4 % 7, count(*), count(i4), sum(big), min(l_shipdate), max(i4)
                   FROM qli GROUP BY tag, tag3, i4 % 7$$);
SELECT check_query($$SELECT sum(l_extendedprice * l_discount) FROM qli
                   WHERE l_shipdate >= date '1994-01-01' AND l_shipdate < date '1995-01-01'
                     AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24$$);
SELECT check_query('SELECT count(*), sum(l_quantity) FROM qli WHERE l_quantity < 0');
-- small slots: many batches from every process
SET gpuops.batch_size = '1MB';
SELECT check_query('SELECT i4, count(*), sum(l_tax) FROM qli GROUP BY i4');
RESET gpuops.batch_size;
-- a new context each run: the Param of a correlated subquery changes
SELECT check_query($$SELECT g, (SELECT sum(l_quantity) FROM qli WHERE l_orderkey % 5 = g) AS s
                   FROM generate_series(0, 5) g$$);
-- no worker to be had: the leader reads it all
SET max_parallel_workers = 0;
SELECT * FROM explain_parallel('SELECT l_linestatus, count(*) FROM qli GROUP BY 1');
SELECT check_query('SELECT l_linestatus, count(*), sum(l_quantity) FROM qli GROUP BY 1');
RESET max_parallel_workers;
-- a device failure: the CPU backend reads the table again, alone
SET gpuops.cpu_fallback = on;
SET gpuops.fault_injection = kernel_error;
SELECT check_query('SELECT l_returnflag, sum(l_quantity), avg(l_tax), count(*) FROM qli GROUP BY l_returnflag');
SELECT * FROM explain_parallel('SELECT l_returnflag, sum(l_quantity) FROM qli GROUP BY l_returnflag');
RESET gpuops.fault_injection;
SET gpuops.cpu_fallback = off;
-- a value no reader can take (a compressed numeric), in whichever process's
-- share: PostgreSQL's plan answers
CREATE TABLE qwide (id int4, g int4, n numeric);
INSERT INTO qwide SELECT i, i % 5, i FROM generate_series(1, 20000) i;
INSERT INTO qwide VALUES (0, 1, repeat('7', 8000)::numeric);
ANALYZE qwide;
SELECT check_query('SELECT g, count(n), count(*) FROM qwide GROUP BY g');
SELECT l FROM explain_parallel('SELECT g, count(n) FROM qwide GROUP BY g') l
WHERE l !~ 'Rows Read|Heap Pages|Groups';  -- how far the others read first varies
DELETE FROM qwide WHERE id = 0;
SELECT check_query('SELECT g, count(n), count(*) FROM qwide GROUP BY g');
DROP TABLE qwide;
-- a temporary table is read alone (workers cannot see its buffers)
CREATE TEMP TABLE qtemp AS SELECT * FROM qli;
ANALYZE qtemp;
EXPLAIN (COSTS OFF) SELECT l_returnflag, count(*) FROM qtemp GROUP BY 1;
DROP TABLE qtemp;
DROP FUNCTION explain_parallel(text);
RESET gpuops.tuple_cost;
RESET min_parallel_table_scan_size;
RESET parallel_setup_cost;
SET max_parallel_workers_per_gather = 0;

DROP TABLE qli, qempty, qnan, qpart;
DROP FUNCTION explain_escape(text);
