#!/usr/bin/env bash
# GpuNestLoop benchmark: joins with no equality (band, inequality, a
# filter-heavy band join) on PostgreSQL's nested loop, serial and with 8
# workers, against gpuops, side by side in one run.
#   GPU machine:  .devkit/pgrun.sh -c gpuops.device=gpu -- bash test/bench/nestloop.sh
#   any server:   PGHOST=... PGPORT=... PGUSER=... bash test/bench/nestloop.sh
# Tables (unlogged; reused when they exist with the right row count):
#   nlb_outer (id int8, x int4, w int4)  1M rows, x and w uniform in [0, 1e6)
#   nlb_band  (id int4, lo int4, hi int4) 10K bands of width 5000: an outer
#             row falls in 0.5% of them (selectivity 5e-3, Govindaraju and
#             Manocha's band join), 50 matches per outer row
#   nlb_ineq  (id int4, y int4, z int4) 100K rows, y and z uniform in
#             [980000, 1e6): o.x > y AND o.w > z holds for 1e-4 of the pairs
# A nested loop tests every outer row against every inner row, so its time
# is linear in the outer rows.  Where PostgreSQL's own time at full size
# would exceed the GPU machine's 10-minute command limit, it is measured on
# the first 1/10 or 1/100 of the outer rows (id <= N) and scaled: those
# figures are marked "est." and name the measurement they come from; every
# other figure is measured in this run.
# GpuNestLoop picks its indexed form (the inner side sorted on a bounded
# column, each outer row testing its range) by cost; the *_blocked rows turn
# it off (gpuops.enable_nestloop_index = off) to show the blocked loop.
# NL_ONLY: a regex on query names to run only some.
# Runs: PostgreSQL configurations NL_PG_RUNS times (default 1: their times
# are tens of seconds), gpuops NL_RUNS times (default 3); medians of
# EXPLAIN (ANALYZE, TIMING OFF) Execution Time.  Writes ${OUT:-.}/nestloop.md.
set -uo pipefail

DB=${BENCH_DB:-${PGDATABASE:-postgres}}
PSQL=(psql -X -q -v ON_ERROR_STOP=1 -d "$DB")
q() { "${PSQL[@]}" -At "$@"; }
RUNS=1
. "$(dirname "$0")/lib.sh"
PG_RUNS=${NL_PG_RUNS:-1}
GPU_RUNS=${NL_RUNS:-3}
OUTFILE=${OUT:-.}/nestloop.md

q -c 'CREATE EXTENSION IF NOT EXISTS gpuops' >/dev/null || { echo "nestloop.sh: cannot connect" >&2; exit 1; }

make_table() { # name rows definition
  local have
  have=$(q -c "select count(*) from $1" 2>/dev/null || true)
  [ "$have" = "$2" ] && { echo "reusing $1" >&2; return 0; }
  q -c "SET client_min_messages = warning; DROP TABLE IF EXISTS $1" \
    -c "CREATE UNLOGGED TABLE $1 AS $3" -c "VACUUM ANALYZE $1" -c "ALTER TABLE $1 SET (parallel_workers = 8)"
}
make_table nlb_outer 1000000 "SELECT i::int8 AS id, floor(random() * 1e6)::int4 AS x, floor(random() * 1e6)::int4 AS w FROM generate_series(1, 1000000) i" || exit 1
make_table nlb_band 10000 "SELECT i::int4 AS id, lo, lo + 5000 AS hi FROM (SELECT i, floor(random() * 995000)::int4 AS lo FROM generate_series(1, 10000) i) s" || exit 1
make_table nlb_ineq 100000 "SELECT i::int4 AS id, (980000 + floor(random() * 20000))::int4 AS y, (980000 + floor(random() * 20000))::int4 AS z FROM generate_series(1, 100000) i" || exit 1

BAND="nlb_outer o JOIN nlb_band b ON o.x BETWEEN b.lo AND b.hi"
INEQ="nlb_outer o JOIN nlb_ineq i ON o.x > i.y AND o.w > i.z"
FILT="nlb_outer o JOIN nlb_band b ON o.x BETWEEN b.lo AND b.hi AND (o.w + b.id) % 3 <> 0 AND o.w::float8 / (b.id + 1) > 0.5 AND o.w - b.lo < 900000"
# name | outer rows | inner rows | SQL | configurations measured (s: PostgreSQL
# serial, p: PostgreSQL 8 workers, g: gpuops) | estimate of serial from | of
# parallel from | extra SETs for the gpuops run
BLOCKED="SET gpuops.enable_nestloop_index = off"
QUERIES=(
  "band_100k|100000|10000|SELECT count(*) FROM $BAND WHERE o.id <= 100000|spg||"
  "band_1m|1000000|10000|SELECT count(*) FROM $BAND|pg|band_100k|"
  "band_1m_blocked|1000000|10000|SELECT count(*) FROM $BAND|g|band_100k|band_1m|$BLOCKED"
  "band_sum_1m|1000000|10000|SELECT count(*), sum(o.w::int8 - b.lo) FROM $BAND|g|band_100k|band_1m"
  "ineq_10k|10000|100000|SELECT count(*) FROM $INEQ WHERE o.id <= 10000|spg||"
  "ineq_100k|100000|100000|SELECT count(*) FROM $INEQ WHERE o.id <= 100000|pg|ineq_10k|"
  "ineq_1m|1000000|100000|SELECT count(*) FROM $INEQ|g|ineq_10k|ineq_100k"
  "ineq_1m_blocked|1000000|100000|SELECT count(*) FROM $INEQ|g|ineq_10k|ineq_100k|$BLOCKED"
  "filter_100k|100000|10000|SELECT count(*) FROM $FILT WHERE o.id <= 100000|spg||"
  "filter_1m|1000000|10000|SELECT count(*) FROM $FILT|pg|filter_100k|"
)
CONFIG_S="SET gpuops.enabled = off; SET max_parallel_workers_per_gather = 0"
CONFIG_P="SET gpuops.enabled = off; SET max_parallel_workers_per_gather = 8"
CONFIG_G="SET gpuops.enabled = on; SET max_parallel_workers_per_gather = 0"

declare -A SER=() PAR=() OUTER=()
table="| query | outer x inner | PostgreSQL serial ms | PostgreSQL 8 workers ms | gpuops ms | serial / gpuops | 8 workers / gpuops | gpuops node |"
table+=$'\n'"|---|---|---:|---:|---:|---:|---:|---|"
PLANS=""
for entry in "${QUERIES[@]}"; do
  IFS='|' read -r name outer inner sql configs est_s est_p extra <<<"$entry"
  OUTER[$name]=$outer
  [[ $name =~ ${NL_ONLY:-.} ]] || continue
  s="n/a"; p="n/a"; g="n/a"; s_txt="-"; p_txt="-"; gplan=""
  if [[ $configs == *s* ]]; then
    echo "running $name: PostgreSQL serial" >&2
    RUNS=$PG_RUNS; r=$(measure "$CONFIG_S" "$sql"); s=${r%%|*}; s_txt=$(fmt_ms "$s")
  elif [ -n "$est_s" ] && [ -n "${SER[$est_s]:-}" ]; then
    s=$(awk -v a="${SER[$est_s]}" -v n="$outer" -v m="${OUTER[$est_s]}" 'BEGIN { printf "%.1f", a * n / m }')
    s_txt="$s (est. from $est_s)"
  fi
  if [[ $configs == *p* ]]; then
    echo "running $name: PostgreSQL 8 workers" >&2
    RUNS=$PG_RUNS; r=$(measure "$CONFIG_P" "$sql"); p=${r%%|*}; p_txt=$(fmt_ms "$p")
  elif [ -n "$est_p" ] && [ -n "${PAR[$est_p]:-}" ]; then
    p=$(awk -v a="${PAR[$est_p]}" -v n="$outer" -v m="${OUTER[$est_p]}" 'BEGIN { printf "%.1f", a * n / m }')
    p_txt="$p (est. from $est_p)"
  fi
  SER[$name]=$s; PAR[$name]=$p
  if [[ $configs == *g* ]]; then
    echo "running $name: gpuops" >&2
    RUNS=$GPU_RUNS; r=$(measure "$CONFIG_G${extra:+; $extra}" "$sql"); g=${r%%|*}; gplan=${r#*|}
  fi
  row="| $name | ${outer} x ${inner} | $s_txt | $p_txt | $(fmt_ms "$g") | $(ratio "$s" "$g") | $(ratio "$p" "$g") | $(node_used "$gplan")$(grep -q 'Index Cond' <<<"$gplan" && echo ', indexed') |"
  table+=$'\n'"$row"
  echo "$row" >&2
  [ -n "$gplan" ] && PLANS+=$'\n'"### $name, gpuops (last run)"$'\n\n```\n'"$gplan"$'\n```\n'
done

header="# GpuNestLoop benchmark
- date: $(date -u '+%Y-%m-%d %H:%M UTC'), host: $(uname -n), $(nproc) CPUs
- $(q -c 'select version()')
- PostgreSQL runs: $PG_RUNS, gpuops runs: $GPU_RUNS (median of EXPLAIN ANALYZE Execution Time, TIMING OFF)
- ratios are PostgreSQL time / gpuops time; est.: scaled by outer rows from the named measurement"
printf '%s\n\n%s\n' "$header" "$table"
mkdir -p "$(dirname "$OUTFILE")" 2>/dev/null
{ printf '%s\n\n%s\n' "$header" "$table"; printf '\n## gpuops plans\n%s' "$PLANS"; } > "$OUTFILE"
