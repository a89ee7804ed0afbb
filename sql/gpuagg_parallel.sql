-- Parallel GpuAgg: a partial GpuAgg in each parallel worker (and the
-- leader) emits partial aggregate states in PostgreSQL's own formats;
-- PostgreSQL's Finalize Aggregate above Gather combines them.  Every
-- result is compared with PostgreSQL's own (parallel) aggregation as text.
-- float sums, averages and variances too (off by default: their rounding
-- is a parallel plan's); these tables' values give PostgreSQL's digits
-- GpuQuery (gpuops.enable_query, on by default) would take some of these
-- query blocks whole; this file tests GpuAgg.
SET gpuops.enable_query = off;
SET gpuops.enable_float_aggs = on;
SET gpuops.min_rows = 0;
SET gpuops.startup_cost = 0;
SET gpuops.parallel_startup_cost = 0;
SET gpuops.cpu_fallback = off;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = on;
-- partial aggregation in the workers; staging for the leader is gpuagg_staged
SET gpuops.enable_parallel_staging = off;

-- check_par(q): check_agg(q), and whether GpuAgg ran partial (in workers)
CREATE FUNCTION check_par(q text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE line text; stage text := 'serial';
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    IF line LIKE '%Stage: partial%' THEN stage := 'partial'; END IF;
  END LOOP;
  RETURN check_agg(q) || ' ' || stage;
END $$;

-- Values whose sums are exact in any order (integers, multiples of 1/8),
-- as the oracle's own parallel plan adds them in an order of its own.
CREATE TABLE par_src AS
SELECT i AS id,
       CASE WHEN i % 97 = 0 THEN NULL ELSE (i % 500)::int4 END AS g,
       (i % 5)::int2 AS g5,
       CASE WHEN i % 89 = 0 THEN NULL ELSE (i % 20001 - 10000)::int4 END AS v4,
       CASE WHEN i % 83 = 0 THEN NULL ELSE (i % 301 - 150)::int2 END AS v2,
       CASE WHEN i % 1009 = 0 THEN 9223372036854775807
            WHEN i % 79 = 0 THEN NULL ELSE i::int8 * -1000003 END AS v8,
       CASE WHEN i % 71 = 0 THEN NULL ELSE (i % 4001 - 2000) / 8.0 END::float8 AS f8,
       CASE WHEN i % 73 = 0 THEN NULL ELSE (i % 301 - 150) / 4.0 END::float4 AS f4,
       CASE WHEN i % 5 = 0 THEN NULL ELSE i % 3 = 0 END AS b,
       date '2020-01-01' + (i % 1500) AS d,
       timestamp '2021-03-04 05:06:07' + (i % 977) * interval '1 hour 1 second' AS ts,
       (i % 50) * interval '1 hour' AS iv,
       'key ' || (i % 37) AS t
FROM generate_series(1, 300000) i;
ANALYZE par_src;

-- the plan: Finalize over Gather over the partial GpuAgg
EXPLAIN (COSTS OFF) SELECT g, count(*), sum(v4), avg(v8) FROM par_src GROUP BY g;
EXPLAIN (COSTS OFF) SELECT count(*), avg(f8) FROM par_src;

-- every partial state format: int8 (count, sum of int2/int4), int8[]
-- (avg of int2/int4), bytea (sum and avg of int8, serialized), float8[]
-- (avg, variance, stddev of floats), the value (min, max, bool_and, bool_or)
SELECT check_par('SELECT g, count(*) AS n, count(v4), sum(v4), sum(v2), avg(v4), avg(v2) FROM par_src GROUP BY g');
SELECT check_par('SELECT g5, sum(v8), avg(v8), count(v8) FROM par_src GROUP BY g5');
SELECT check_par('SELECT g, sum(f8), avg(f8), sum(f4), avg(f4) FROM par_src GROUP BY g');
-- Sxx is combined in a different order (PostgreSQL's workers accumulate
-- serially, the device in a tree): the last digits differ, as between two
-- of PostgreSQL's own plans
SELECT check_par($$SELECT g, round(var_samp(f8)::numeric, 6) AS v, round(stddev_pop(f8)::numeric, 8) AS s,
                          round(variance(f4)::numeric, 6) AS v4 FROM par_src GROUP BY g$$);
SELECT check_par($$SELECT g5, min(v4), max(v4), min(f8), max(f8), min(d), max(ts), min(iv),
                          max(v8), bool_and(b), bool_or(b) FROM par_src GROUP BY g5$$);
-- text keys, several keys, expressions, FILTER, HAVING, no GROUP BY
SELECT check_par('SELECT t, count(*) AS n, sum(v4), avg(v2) FROM par_src GROUP BY t');
SELECT check_par('SELECT g5, min(t), max(t), max(t COLLATE "C") AS c FROM par_src GROUP BY g5');
SELECT check_par('SELECT g5, t, b, count(*) AS n, max(d) FROM par_src GROUP BY g5, t, b');
SELECT check_par('SELECT g % 7 AS m, sum(v4 * 2) AS s, avg(f8 + 1) AS a FROM par_src GROUP BY g % 7');
SELECT check_par('SELECT g5, sum(v4) FILTER (WHERE b) AS s, count(*) FILTER (WHERE v2 > 0) AS c FROM par_src GROUP BY g5');
SELECT check_par('SELECT g, count(*) AS n, avg(v8) FROM par_src GROUP BY g HAVING avg(v4) > 0 AND count(*) > 500');
SELECT check_par('SELECT count(*) AS n, sum(v4), avg(v8), avg(f8), min(d), bool_or(b) FROM par_src');
-- empty input, and groups whose inputs are all NULL
SELECT check_par('SELECT count(*) AS n, sum(v4), avg(v8), avg(f8), max(d) FROM par_src WHERE id < 0');
SELECT check_par($$SELECT g5, sum(v4) FILTER (WHERE false) AS s, avg(v8) FILTER (WHERE false) AS a,
                          avg(v2) FILTER (WHERE false) AS a2, avg(f8) FILTER (WHERE false) AS f
                   FROM par_src GROUP BY g5$$);
-- an int8 sum beyond 64 bits, and a negative one, through the serialized state
SELECT check_par($$SELECT g5, sum(x), avg(x) FROM (SELECT g5, 9223372036854775807 - id AS x FROM par_src) s
                   GROUP BY g5$$);
SELECT check_par($$SELECT g5, sum(x), avg(x) FROM (SELECT g5, -9223372036854775807 + id AS x FROM par_src) s
                   GROUP BY g5$$);

-- where hashing is off: a sorted finalize, or a serial GpuAgg above Gather
SET enable_hashagg = off;
SELECT check_par('SELECT g5, count(*) AS n, sum(v8) FROM par_src GROUP BY g5');
RESET enable_hashagg;

-- device failures in the workers: fall back there, or raise
SET gpuops.fault_injection = kernel_error;
-- (the leader or a worker fails first: no CONTEXT line)
\set SHOW_CONTEXT never
SELECT g5, count(*) FROM par_src GROUP BY g5 ORDER BY g5 LIMIT 1;
\set SHOW_CONTEXT errors
SET gpuops.cpu_fallback = on;
SET client_min_messages = warning;
SELECT check_par('SELECT g5, count(*) AS n, avg(v8) FROM par_src GROUP BY g5');
RESET client_min_messages;
RESET gpuops.fault_injection;
RESET gpuops.cpu_fallback;

-- aggregates PostgreSQL cannot run in parallel keep a serial plan
SELECT uses_gpuagg('SELECT g5, count(DISTINCT v4) FROM par_src GROUP BY g5') AS distinct_serial;
EXPLAIN (COSTS OFF) SELECT g5, count(DISTINCT v4) FROM par_src GROUP BY g5;


DROP TABLE par_src;
DROP FUNCTION check_par(text);
