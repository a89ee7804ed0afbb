-- GpuAgg's hash strategy: for few groups, rows find their group in a hash
-- table on the device and the states are summed by atomics, in each
-- block's shared memory when they fit there, else in global memory; more
-- groups than the table was sized for and the aggregation is sorted
-- instead.  Every query runs under the hash strategy and the sort strategy
-- (gpuops.agg_hash_max_groups = 0), each compared with PostgreSQL.
-- float sums, averages and variances too (off by default: their rounding
-- is a parallel plan's); these tables' values give PostgreSQL's digits
-- GpuQuery (gpuops.enable_query, on by default) would take some of these
-- query blocks whole; this file tests GpuAgg.
SET gpuops.enable_query = off;
SET gpuops.enable_float_aggs = on;
SET gpuops.min_rows = 0;
SET gpuops.startup_cost = 0;
SET max_parallel_workers_per_gather = 0;
SET gpuops.cpu_fallback = off;
SET enable_hashagg = off;
SET enable_sort = off;

-- 120000 rows: 16 groups (g16), 5000 groups (g5k, NULL keys), int8 values
-- near both ends of the range (sums carry past 64 bits, up and down),
-- floats with -0 next to 0 and NaN (min/max ties: the later row's value
-- prints), text, numeric, dates and booleans for min/max.
CREATE TABLE hash_src AS
SELECT i AS id,
       (i % 16)::int4 AS g16,
       CASE WHEN i % 101 = 0 THEN NULL ELSE i % 5000 END::int4 AS g5k,
       CASE WHEN i % 7 = 0 THEN NULL
            WHEN i % 3 = 0 THEN -9223372036854775807 + i
            ELSE 9223372036854775807 - i END::int8 AS big,
       (i % 20001 - 10000)::int4 AS v4,
       CASE WHEN i % 11 = 0 THEN NULL ELSE (i % 301 - 150)::int2 END AS v2,
       CASE WHEN i % 13 = 0 THEN '-0'::float8 WHEN i % 13 = 1 THEN '0'::float8
            WHEN i % 13 = 2 AND i % 16 = 5 THEN 'NaN'::float8
            ELSE (i % 17) - 8 END AS f8,
       CASE WHEN i % 19 = 0 THEN NULL ELSE 'w' || (i % 977) END AS t,
       ((i % 1000) / 8.0)::numeric(10, 3) AS nm,
       date '2000-01-01' + (i % 4001) AS d,
       CASE WHEN i % 5 = 0 THEN NULL ELSE i % 4 <> 1 END AS b
FROM generate_series(1, 120000) i;
ANALYZE hash_src;

-- the plans: hashed for few groups, sorted when told, plain without GROUP BY
EXPLAIN (COSTS OFF) SELECT g16, count(*), sum(v4) FROM hash_src GROUP BY g16;
EXPLAIN (COSTS OFF) SELECT count(*), sum(v4) FROM hash_src;
-- float sums round in the order they combine: those keep the sort
EXPLAIN (COSTS OFF) SELECT g16, sum(f8) FROM hash_src GROUP BY g16;
SET gpuops.agg_hash_max_groups = 0;
EXPLAIN (COSTS OFF) SELECT g16, count(*), sum(v4) FROM hash_src GROUP BY g16;
RESET gpuops.agg_hash_max_groups;

-- agg_strategy(q): the Strategy of q's GpuAgg, as planned
CREATE FUNCTION agg_strategy(q text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE j jsonb;
BEGIN
  EXECUTE 'EXPLAIN (COSTS OFF, FORMAT JSON) ' || q INTO j;
  RETURN jsonb_path_query_first(j, 'strict $.**? (@."Custom Plan Provider" == "GpuAgg")')->>'Strategy';
END $$;

CREATE TABLE hash_queries (n int, q text);
INSERT INTO hash_queries VALUES
-- 16 groups: states in shared memory
(1, 'SELECT g16, count(*) AS n, count(big) AS nb, sum(big), avg(big), sum(v4), avg(v2),
        min(f8), max(f8), min(t), max(t), min(nm), max(nm), min(d), max(d),
        bool_and(b), bool_or(b), var_samp(v4), stddev_pop(v2), variance(big), stddev(big)
 FROM hash_src GROUP BY g16'),
-- 5000 groups and the NULL key: states in global memory
(2, 'SELECT g5k, count(*) AS n, sum(big), avg(v4), min(f8), max(t), var_pop(v2), bool_or(b)
 FROM hash_src GROUP BY g5k'),
-- two keys, one of them boolean with NULLs; HAVING and FILTER
(3, 'SELECT g16, b, count(*) AS n, sum(v4) FILTER (WHERE v2 > 0) AS sp, max(big) FILTER (WHERE b)
 FROM hash_src GROUP BY g16, b HAVING count(*) > 1000'),
-- groups where every input is NULL or filtered out
(4, 'SELECT g16, count(big) FILTER (WHERE false) AS nf, sum(big) FILTER (WHERE false) AS sf,
        min(t) FILTER (WHERE v4 > 100000) AS mf, avg(v2) FILTER (WHERE false) AS af
 FROM hash_src GROUP BY g16'),
-- one group of all rows under a key; every row its own group
(5, 'SELECT g16 / 16 AS one, count(*) AS n, sum(big), min(f8), max(f8) FROM hash_src GROUP BY 1'),
(6, 'SELECT id, sum(v4), min(t) FROM hash_src WHERE id < 3000 GROUP BY id'),
-- an empty input
(7, 'SELECT g16, count(*), sum(big) FROM hash_src WHERE id < 0 GROUP BY g16');

SELECT n, agg_strategy(q), check_agg(q) FROM hash_queries ORDER BY n;
SET gpuops.agg_hash_max_groups = 0;
SELECT n, agg_strategy(q), check_agg(q) FROM hash_queries ORDER BY n;
RESET gpuops.agg_hash_max_groups;

-- what ran: the hash table's capacity (four times the estimate, at least
-- 4096, at most the rows), and no overflow
SELECT n->>'Strategy' AS strategy, (n->>'Hash Capacity')::bigint AS capacity,
       n->>'Hash Overflow' AS overflow, (n->>'Groups')::bigint AS groups
FROM explain_json('SELECT g16, count(*), sum(v4) FROM hash_src GROUP BY g16') j,
     LATERAL (SELECT j->0->'Plan' AS n) p;
SELECT n->>'Strategy' AS strategy, (n->>'Hash Capacity')::bigint AS capacity,
       n->>'Hash Overflow' AS overflow, (n->>'Groups')::bigint AS groups
FROM explain_json('SELECT id, count(*) FROM hash_src WHERE id <= 1000 GROUP BY id') j,
     LATERAL (SELECT j->0->'Plan' AS n) p;

-- an estimate far too low (no statistics: 200 groups expected), 30000
-- groups found: the table overflows and the rows are sorted instead
CREATE TABLE hash_nostats WITH (autovacuum_enabled = off) AS
SELECT i % 30000 AS k, i::int8 * 1000003 AS v, (i % 7 = 0) AS b
FROM generate_series(1, 90000) i;
SELECT n->>'Strategy' AS strategy, (n->>'Hash Capacity')::bigint AS capacity,
       n->>'Hash Overflow' AS overflow, (n->>'Groups')::bigint AS groups
FROM explain_json('SELECT k, count(*), sum(v) FROM hash_nostats GROUP BY k') j,
     LATERAL (SELECT j->0->'Plan' AS n) p;
SELECT check_agg('SELECT k, count(*) AS n, sum(v), min(v), bool_and(b) FROM hash_nostats GROUP BY k');

-- inputs over the device budget: each chunk hashed, the groups merged on the host
SET gpuops.device_memory_limit = '1MB';
SELECT check_agg(q) FROM hash_queries WHERE n IN (1, 3);
SELECT (n->>'Chunks')::int > 10 AS chunked, (n->>'Hash Capacity')::bigint > 0 AS hashed,
       n->>'Hash Overflow' AS overflow,
       (n->>'Actual Rows')::numeric::bigint AS rows
FROM explain_json('SELECT g16, count(*), sum(big), min(t) FROM hash_src GROUP BY g16') j,
     LATERAL (SELECT j->0->'Plan' AS n) p;
RESET gpuops.device_memory_limit;
