#!/usr/bin/env bash
# TPC-H Q18's shape at scale (issue 26): tables of our own with TPC-H's
# columns (lineitem SCALE x 6M rows, orders SCALE x 1.5M, customer
# SCALE x 150K), Q18 with gpuops off and on (default settings, and with the
# parallel plan shape forced), results compared, times side by side; then
# cancels: statement_timeout at several points and pg_cancel_backend from
# another session, each must end the statement within 1 s, and the session
# must answer rightly afterwards.  Run against a server (PGHOST, ...), for
# example on the GPU machine inside .devkit/pgrun.sh.
#   test/bench/q18.sh [SCALE]          (default 3)
set -uo pipefail
SCALE=${1:-3}
PSQL=(psql -X -q -v ON_ERROR_STOP=1)
DB=gpuops_q18
"${PSQL[@]}" -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB" || exit 1
export PGDATABASE=$DB
"${PSQL[@]}" -c "CREATE EXTENSION IF NOT EXISTS gpuops" || exit 1
NCUST=$(awk "BEGIN { print int($SCALE * 150000) }")
NORD=$(awk "BEGIN { print int($SCALE * 1500000) }")
t0=$(date +%s)
"${PSQL[@]}" <<SQL || exit 1
SET max_parallel_workers_per_gather = 8;
CREATE UNLOGGED TABLE customer AS
SELECT i AS c_custkey, 'Customer#' || lpad(i::text, 9, '0') AS c_name
FROM generate_series(1, $NCUST) i;
CREATE UNLOGGED TABLE orders AS
SELECT i AS o_orderkey, 1 + (i::int8 * 7919) % $NCUST AS o_custkey,
       date '1992-01-01' + (i::int8 * 31 % 2400)::int AS o_orderdate,
       ((i::int8 * 104729) % 50000000) / 100.0 AS o_totalprice
FROM generate_series(1, $NORD) i;
-- 1 to 7 lines an order; an order's quantities sum above 300 for a few
CREATE UNLOGGED TABLE lineitem AS
SELECT o AS l_orderkey,
       (CASE WHEN o % 5003 = 0 THEN 100 ELSE 1 + (o::int8 * 13 + l * 7) % 50 END)::numeric(15,2) AS l_quantity
FROM generate_series(1, $NORD) o, generate_series(1, 1 + (o * 2654435761 % 7)::int) l;
VACUUM ANALYZE customer;
VACUUM ANALYZE orders;
VACUUM ANALYZE lineitem;
SQL
echo "q18: data in $(( $(date +%s) - t0 )) s: $("${PSQL[@]}" -At -c "SELECT (SELECT count(*) FROM lineitem) || ' lineitem, ' || (SELECT count(*) FROM orders) || ' orders, ' || (SELECT count(*) FROM customer) || ' customer rows'")"
# Q18_DATA_ONLY=1: stop here, the tables kept in database gpuops_q18
[ "${Q18_DATA_ONLY:-0}" = 1 ] && exit 0

Q="SELECT c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice, sum(l_quantity)
FROM customer, orders, lineitem
WHERE o_orderkey IN (SELECT l_orderkey FROM lineitem GROUP BY l_orderkey HAVING sum(l_quantity) > 300)
  AND c_custkey = o_custkey AND o_orderkey = l_orderkey
GROUP BY c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice
ORDER BY o_totalprice DESC, o_orderdate, o_orderkey LIMIT 100"
FORCE="SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET gpuops.parallel_startup_cost = 0;"

# run LABEL SETTINGS: the query's time (ms) and its rows' digest
run() {
  "${PSQL[@]}" -At <<SQL
SET max_parallel_workers_per_gather = 8;
$2
\\timing on
CREATE TEMP TABLE r AS $Q;
\\timing off
SELECT '$1 rows=' || count(*) || ' digest=' || md5(string_agg(r::text, ',' ORDER BY r::text)) FROM r;
SQL
}
for mode in "pg|SET gpuops.enabled = off;" "gpuops|" "pg_forced|SET gpuops.enabled = off; $FORCE" "gpuops_forced|$FORCE"; do
  label=${mode%%|*} settings=${mode#*|}
  echo "q18: $label: $(run "$label" "$settings" | tr '\n' ' ')"
done
echo "q18: gpuops plan (forced shape):"
"${PSQL[@]}" -c "SET max_parallel_workers_per_gather = 8; $FORCE" -c "EXPLAIN (COSTS OFF) $Q" | sed 's/^/    /'

# cancels: each statement must end within 1 s of its timeout and leave the
# session working
late=0 n=0
for t in 1 10 50 200 500 1000 2000 4000; do
  for settings in "" "$FORCE"; do
    out=$("${PSQL[@]}" -At 2>&1 <<SQL
SET max_parallel_workers_per_gather = 8;
$settings
SELECT extract(epoch FROM clock_timestamp()) * 1000 AS t0 \\gset
SET statement_timeout = $t;
\\set ON_ERROR_STOP 0
SELECT count(*) FROM ($Q) q;
RESET statement_timeout;
SELECT 'took=' || round(extract(epoch FROM clock_timestamp()) * 1000 - :t0);
SELECT 'after=' || count(*) FROM (SELECT l_orderkey FROM lineitem GROUP BY l_orderkey HAVING sum(l_quantity) > 300) s;
SQL
)
    took=$(sed -n 's/^took=//p' <<<"$out"); n=$((n + 1))
    [ -n "$took" ] && [ "$took" -le $((t + 1000)) ] || late=$((late + 1))
    echo "q18: timeout ${t} ms${settings:+ (forced)}: took ${took:-?} ms, $(grep -o 'after=[0-9]*' <<<"$out")"
  done
done
# pg_cancel_backend from another session, 0.5 s to 5 s in
for d in 0.5 1 2 3 5; do
  ( "${PSQL[@]}" -At -c "SET application_name = 'q18cancel'" -c "SET max_parallel_workers_per_gather = 8" \
      -c "SELECT count(*) FROM ($Q) q" >/dev/null 2>&1 ) &
  bg=$!
  sleep "$d"
  s=$(date +%s%N)
  "${PSQL[@]}" -At -c "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'q18cancel'" >/dev/null
  wait $bg
  ms=$(( ($(date +%s%N) - s) / 1000000 )); n=$((n + 1))
  [ "$ms" -le 1000 ] || late=$((late + 1))
  echo "q18: pg_cancel_backend after ${d} s: ended ${ms} ms later"
done
"${PSQL[@]}" -d postgres -c "DROP DATABASE $DB" >/dev/null 2>&1
echo "q18: $n cancels, $late ended late (over 1 s)"
[ "$late" -eq 0 ]
