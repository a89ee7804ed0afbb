#!/usr/bin/env bash
# Benchmark: PostgreSQL (serial, 8 parallel workers) vs gpuops, per query and size.
#   GPU machine:  .devkit/pgrun.sh -c gpuops.device=gpu -- bash test/bench/bench.sh [ROWS...]
#   any server:   PGHOST=... PGPORT=... PGUSER=... bash test/bench/bench.sh [ROWS...]
# ROWS default: 10000000 50000000. For each size it creates bench_<ROWS>
# (id int8, k int8, g int4 0..999999, v int4, t text = md5(id); unlogged, loaded in parallel
# chunks; reused when it already has the right row count), runs every query
# BENCH_RUNS times (default 3) per configuration and takes the median of
# EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF)'s "Execution Time".
# Join queries also use extra tables, each created (unlogged, VACUUM ANALYZE) only
# when a query selected by BENCH_ONLY names it, and reused when it has the
# expected row count (see TABLES below):
#   bench_dim              (id int4, name text) 1M rows, id = 0..999999: every
#                          probe row of bench_<ROWS> matches once (b.g = d.id)
#   bench_dim_m<P>         match-ratio sweep, P = 01, 10, 50 (percent): 1M rows,
#                          id = i for i < P% of 1M, i + 10000000 otherwise, so
#                          only P% of the probe rows match (100% is bench_dim)
#   bench_dim_d<D>         duplicate sweep, D = 4, 16, 64 (1 is bench_dim): 1M rows,
#                          id = i / D, each key D times; 1/D of the probe rows
#                          match D rows each, so the output stays ~ROWS rows
#   bench_<ROWS>_zipf      per size, (g int4, v int4) from bench_<ROWS> with g
#                          log-uniform in 0..999999 (Zipf, s = 1: key 0 ~5%)
#   bench_<ROWS>_hot       per size, (g int4, v int4): g = 0 for half of the rows,
#                          bench_<ROWS>.g otherwise
# 10M x 10M joins are the self-joins (join_self_*) run with ROWS = 10000000.
# Configurations:
#   PostgreSQL serial      gpuops.enabled = off, max_parallel_workers_per_gather = 0
#   PostgreSQL parallel(8) gpuops.enabled = off, max_parallel_workers_per_gather = 8
#   gpuops                 gpuops.enabled = on, everything else as configured
# Prints a markdown table and writes it to ${OUT:-.}/bench.md.
# Server settings (shown in the header) are the server's: doc/benchmarks.md's sort runs
# with min_dynamic_shared_memory start the server with it, e.g.
#   .devkit/pgrun.sh -c gpuops.device=gpu -c min_dynamic_shared_memory=8GB -- bash test/bench/bench.sh 50000000
# Environment: BENCH_RUNS, BENCH_DB (default $PGDATABASE or postgres),
# BENCH_ONLY (regex on query names), BENCH_RECREATE=1 (reload the tables, the
# extra join tables included),
# BENCH_LOAD_JOBS (parallel loaders, default 8), BENCH_KEEP=0 (drop bench_<ROWS>
# and its derived tables afterwards; by default they are kept for the next run).
set -uo pipefail

# Queries: "name|SQL" or "name|SQL|SETs for the gpuops run only"; {T} stands
# for the table. Add lines to extend.
QUERIES=(
  "sort_all|SELECT * FROM {T} ORDER BY k"
  "sort_all_inmem|SELECT * FROM {T} ORDER BY k|SET gpuops.host_memory_limit = '48GB'"
  "sort_limit100|SELECT * FROM {T} ORDER BY k LIMIT 100"
  # the same with the device used for the top-N's sorts (by default a bound below
  # gpuops.topn_device_min_bound sorts on the CPU): the leader on the device, its
  # workers on the CPU; then serial, one backend on the device
  "sort_limit100_device|SELECT * FROM {T} ORDER BY k LIMIT 100|SET gpuops.topn_device_min_bound = 0"
  "sort_limit100_gpu|SELECT * FROM {T} ORDER BY k LIMIT 100|SET gpuops.tuple_cost = 0.001; SET max_parallel_workers_per_gather = 0; SET gpuops.topn_device_min_bound = 0"
  "sort_limit100k|SELECT * FROM {T} ORDER BY k LIMIT 100000"
  "sort_text|SELECT * FROM {T} ORDER BY t COLLATE \"C\""
  "sort_g_kdesc|SELECT * FROM {T} ORDER BY g, k DESC"
  "sort_runs|SELECT * FROM {T} ORDER BY k|SET gpuops.device_memory_limit = '512MB'"
  # in memory (a 48GB limit lets GpuSort take the 50M rows) without parallel staging: one
  # backend reads the rows; with it (the *_inmem rows) workers stage them into shared memory
  "sort_all_unstaged|SELECT * FROM {T} ORDER BY k|SET gpuops.host_memory_limit = '48GB'; SET gpuops.enable_parallel_staging = off"
  "sort_text_inmem|SELECT * FROM {T} ORDER BY t COLLATE \"C\"|SET gpuops.host_memory_limit = '48GB'"
  "sort_g_kdesc_inmem|SELECT * FROM {T} ORDER BY g, k DESC|SET gpuops.host_memory_limit = '48GB'"
  # an expression as the sort key: computed on the device from the plain columns (the
  # scan read directly), or (_cols) by the scan's projection; _unstaged: no parallel
  # staging (staged chunks carry no computed keys), so the cost model's choice is shown
  # beside the computed keys
  "sort_expr|SELECT * FROM {T} ORDER BY k / 7 + v|SET gpuops.host_memory_limit = '48GB'"
  "sort_expr_unstaged|SELECT * FROM {T} ORDER BY k / 7 + v|SET gpuops.host_memory_limit = '48GB'; SET gpuops.enable_parallel_staging = off"
  "sort_expr_cols_unstaged|SELECT * FROM {T} ORDER BY k / 7 + v|SET gpuops.host_memory_limit = '48GB'; SET gpuops.enable_parallel_staging = off; SET gpuops.enable_device_exprs = off"
  "sort_expr_limit100|SELECT * FROM {T} ORDER BY k / 7 + v LIMIT 100"
  "join_count|SELECT count(*) FROM {T} b JOIN bench_dim d ON b.g = d.id"
  "join_count_gpu|SELECT count(*) FROM {T} b JOIN bench_dim d ON b.g = d.id|SET gpuops.tuple_cost = 0.001; SET max_parallel_workers_per_gather = 0"
  "join_cols_gpu|SELECT b.id, b.k, d.name FROM {T} b JOIN bench_dim d ON b.g = d.id|SET gpuops.tuple_cost = 0.001; SET max_parallel_workers_per_gather = 0"
  # an extra join clause beside the key: tested on the device (pair filter) for the gpuops run
  "join_filter_gpu|SELECT count(*) FROM {T} b JOIN bench_dim d ON b.g = d.id AND b.v % 7 < d.id % 5 - 2|SET gpuops.tuple_cost = 0.001; SET max_parallel_workers_per_gather = 0"
  # GpuHashJoin in 8 workers, each building bench_dim itself (PostgreSQL's hash and merge joins off for the gpuops run)
  "join_count_gpu_par|SELECT count(*) FROM {T} b JOIN bench_dim d ON b.g = d.id|SET gpuops.tuple_cost = 0.001; SET gpuops.parallel_startup_cost = 0; SET enable_hashjoin = off; SET enable_mergejoin = off"
  # the shared build (only the leader uses the GPU) against every process building its own;
  # PostgreSQL's partial aggregate above (a partial GpuAgg would open a CUDA context per worker)
  "join_count_shared|SELECT count(*) FROM {T} b JOIN bench_dim d ON b.g = d.id|SET gpuops.enable_agg = off; SET enable_hashjoin = off; SET enable_mergejoin = off"
  "join_count_unshared|SELECT count(*) FROM {T} b JOIN bench_dim d ON b.g = d.id|SET gpuops.enable_agg = off; SET gpuops.enable_shared_build = off; SET gpuops.parallel_startup_cost = 0; SET enable_hashjoin = off; SET enable_mergejoin = off"
  "join_cols_gpu_par|SELECT b.id, b.k, d.name FROM {T} b JOIN bench_dim d ON b.g = d.id|SET gpuops.tuple_cost = 0.001; SET gpuops.parallel_startup_cost = 0; SET enable_hashjoin = off; SET enable_mergejoin = off"
  # ROWS x ROWS (10M x 10M with ROWS = 10000000): self-join on the unique id
  "join_self_count|SELECT count(*) FROM {T} a JOIN {T} b ON a.id = b.id"
  "join_self_count_gpu|SELECT count(*) FROM {T} a JOIN {T} b ON a.id = b.id|SET gpuops.tuple_cost = 0.001; SET max_parallel_workers_per_gather = 0"
  "join_self_cols|SELECT a.id, a.k, b.v FROM {T} a JOIN {T} b ON a.id = b.id"
  "join_self_cols_gpu|SELECT a.id, a.k, b.v FROM {T} a JOIN {T} b ON a.id = b.id|SET gpuops.tuple_cost = 0.001; SET max_parallel_workers_per_gather = 0"
  # match-ratio sweep: 1%, 10%, 50%, 100% of the probe rows find a match
  "join_match_01|SELECT count(*) FROM {T} b JOIN bench_dim_m01 d ON b.g = d.id|SET gpuops.tuple_cost = 0.001; SET max_parallel_workers_per_gather = 0"
  "join_match_10|SELECT count(*) FROM {T} b JOIN bench_dim_m10 d ON b.g = d.id|SET gpuops.tuple_cost = 0.001; SET max_parallel_workers_per_gather = 0"
  "join_match_50|SELECT count(*) FROM {T} b JOIN bench_dim_m50 d ON b.g = d.id|SET gpuops.tuple_cost = 0.001; SET max_parallel_workers_per_gather = 0"
  "join_match_100|SELECT count(*) FROM {T} b JOIN bench_dim d ON b.g = d.id|SET gpuops.tuple_cost = 0.001; SET max_parallel_workers_per_gather = 0"
  # duplicate sweep (He et al., Fig. 13): each build key D times
  "join_dup_1|SELECT count(*) FROM {T} b JOIN bench_dim d ON b.g = d.id|SET gpuops.tuple_cost = 0.001; SET max_parallel_workers_per_gather = 0"
  "join_dup_4|SELECT count(*) FROM {T} b JOIN bench_dim_d4 d ON b.g = d.id|SET gpuops.tuple_cost = 0.001; SET max_parallel_workers_per_gather = 0"
  "join_dup_16|SELECT count(*) FROM {T} b JOIN bench_dim_d16 d ON b.g = d.id|SET gpuops.tuple_cost = 0.001; SET max_parallel_workers_per_gather = 0"
  "join_dup_64|SELECT count(*) FROM {T} b JOIN bench_dim_d64 d ON b.g = d.id|SET gpuops.tuple_cost = 0.001; SET max_parallel_workers_per_gather = 0"
  # skewed probe keys
  "join_zipf|SELECT count(*) FROM {T}_zipf b JOIN bench_dim d ON b.g = d.id|SET gpuops.tuple_cost = 0.001; SET max_parallel_workers_per_gather = 0"
  "join_hot50|SELECT count(*) FROM {T}_hot b JOIN bench_dim d ON b.g = d.id|SET gpuops.tuple_cost = 0.001; SET max_parallel_workers_per_gather = 0"
  # merge joins (He et al.'s size: run with ROWS = 16000000): a self-join on k (random,
  # almost unique), PostgreSQL's hash join and GpuHashJoin off for the gpuops run so that
  # it plans GpuMergeJoin (with the 8 workers reading both sides: GpuStage; count(*)
  # counted by the join); the ordered variant needs the join key order above the join;
  # _serial: no workers; _default: the cost model's choice with every join on
  "merge_self_count|SELECT count(*) FROM {T} a JOIN {T} b ON a.k = b.k|SET enable_hashjoin = off; SET gpuops.enable_hashjoin = off"
  "merge_self_ordered|SELECT a.k, a.v, b.v FROM {T} a JOIN {T} b ON a.k = b.k ORDER BY a.k|SET enable_hashjoin = off; SET gpuops.enable_hashjoin = off"
  "merge_self_count_serial|SELECT count(*) FROM {T} a JOIN {T} b ON a.k = b.k|SET enable_hashjoin = off; SET gpuops.enable_hashjoin = off; SET max_parallel_workers_per_gather = 0"
  "merge_self_ordered_serial|SELECT a.k, a.v, b.v FROM {T} a JOIN {T} b ON a.k = b.k ORDER BY a.k|SET enable_hashjoin = off; SET gpuops.enable_hashjoin = off; SET max_parallel_workers_per_gather = 0"
  "merge_self_count_default|SELECT count(*) FROM {T} a JOIN {T} b ON a.k = b.k"
  "merge_self_ordered_default|SELECT a.k, a.v, b.v FROM {T} a JOIN {T} b ON a.k = b.k ORDER BY a.k"
  # GROUP BY with 16, 1k and 1M groups, without GROUP BY, count(DISTINCT) over 1M
  # distinct values, a median and a median per group of 1k.  The gpuops run may use
  # the 8 workers (partial GpuAgg per worker, Finalize above Gather) where its cost
  # model prefers; the _serial variants show GpuAgg alone.
  "agg_g16|SELECT g % 16 AS grp, count(*), sum(v), avg(v) FROM {T} GROUP BY 1"
  "agg_g1k|SELECT g % 1000 AS grp, count(*), sum(v), avg(v) FROM {T} GROUP BY 1"
  "agg_g1m|SELECT g, count(*), sum(v), avg(v) FROM {T} GROUP BY g"
  "agg_g1m_serial|SELECT g, count(*), sum(v), avg(v) FROM {T} GROUP BY g|SET max_parallel_workers_per_gather = 0"
  "agg_g1m_par|SELECT g, count(*), sum(v), avg(v) FROM {T} GROUP BY g|SET parallel_tuple_cost = 0.001"
  "agg_global|SELECT count(*), sum(v), avg(v) FROM {T}"
  "agg_numeric|SELECT g % 1000 AS grp, sum(v::numeric(12, 2)), avg(v::numeric(12, 2)) FROM {T} GROUP BY 1"
  "agg_numeric_var|SELECT g % 1000 AS grp, var_samp(v::numeric(12, 2)), stddev(v::numeric(12, 2)) FROM {T} GROUP BY 1"
  # aggregate arguments that are expressions: computed on the device from the plain
  # columns (the scan read directly), or (_cols) by the scan's projection as before
  "agg_expr_g1m|SELECT g, sum(v::int8 * 3 + id), avg(k / 1000 - v) FROM {T} GROUP BY g"
  "agg_expr_g1m_cols|SELECT g, sum(v::int8 * 3 + id), avg(k / 1000 - v) FROM {T} GROUP BY g|SET gpuops.enable_device_exprs = off"
  "agg_expr_global|SELECT sum(v::int8 * 3 + id), avg(k / 1000 - v), sum(v % 7) FROM {T}"
  "agg_expr_global_cols|SELECT sum(v::int8 * 3 + id), avg(k / 1000 - v), sum(v % 7) FROM {T}|SET gpuops.enable_device_exprs = off"
  "agg_expr_global_serial|SELECT sum(v::int8 * 3 + id), avg(k / 1000 - v), sum(v % 7) FROM {T}|SET max_parallel_workers_per_gather = 0"
  "agg_expr_global_cols_serial|SELECT sum(v::int8 * 3 + id), avg(k / 1000 - v), sum(v % 7) FROM {T}|SET max_parallel_workers_per_gather = 0; SET gpuops.enable_device_exprs = off"
  "agg_distinct|SELECT count(DISTINCT g) FROM {T}"
  "agg_median|SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY v) FROM {T}"
  "agg_median_g1k|SELECT g % 1000 AS grp, percentile_cont(0.5) WITHIN GROUP (ORDER BY v) FROM {T} GROUP BY 1"
)
# Extra tables: "name|row count|SELECT that fills it".  {T} stands for
# bench_<ROWS> and {N} for ROWS; a name with {T} is a per-size table (dropped with
# bench_<ROWS> under BENCH_KEEP=0, recreated when bench_<ROWS> is reloaded).  A
# table is created (CREATE UNLOGGED TABLE name AS SELECT ...) the first time a
# selected query names it, unless it exists with the row count.
TABLES=(
  "bench_dim|1000000|SELECT i::int4 AS id, md5(i::text) AS name FROM generate_series(0, 999999) i"
  "bench_dim_m01|1000000|SELECT (CASE WHEN i < 10000 THEN i ELSE i + 10000000 END)::int4 AS id, md5(i::text) AS name FROM generate_series(0, 999999) i"
  "bench_dim_m10|1000000|SELECT (CASE WHEN i < 100000 THEN i ELSE i + 10000000 END)::int4 AS id, md5(i::text) AS name FROM generate_series(0, 999999) i"
  "bench_dim_m50|1000000|SELECT (CASE WHEN i < 500000 THEN i ELSE i + 10000000 END)::int4 AS id, md5(i::text) AS name FROM generate_series(0, 999999) i"
  "bench_dim_d4|1000000|SELECT (i / 4)::int4 AS id, md5(i::text) AS name FROM generate_series(0, 999999) i"
  "bench_dim_d16|1000000|SELECT (i / 16)::int4 AS id, md5(i::text) AS name FROM generate_series(0, 999999) i"
  "bench_dim_d64|1000000|SELECT (i / 64)::int4 AS id, md5(i::text) AS name FROM generate_series(0, 999999) i"
  "{T}_zipf|{N}|SELECT least(floor(exp(random() * ln(1000000)))::int4 - 1, 999999) AS g, v FROM {T}"
  "{T}_hot|{N}|SELECT (CASE WHEN random() < 0.5 THEN 0 ELSE g END)::int4 AS g, v FROM {T}"
)
# Configurations: "column title|SET commands".  gpuops may use the same 8
# workers as PostgreSQL's parallel plan; its cost model picks serial,
# GpuSort below Gather Merge, or GpuSort above Gather.
CONFIGS=(
  "PostgreSQL serial|SET gpuops.enabled = off; SET max_parallel_workers_per_gather = 0"
  "PostgreSQL parallel(8)|SET gpuops.enabled = off; SET max_parallel_workers_per_gather = 8"
  "gpuops|SET gpuops.enabled = on; SET max_parallel_workers_per_gather = 8"
)

RUNS=${BENCH_RUNS:-3}
DB=${BENCH_DB:-${PGDATABASE:-postgres}}
JOBS=${BENCH_LOAD_JOBS:-8}
OUTFILE=${OUT:-.}/bench.md
if [ $# -gt 0 ]; then SIZES=("$@"); else SIZES=(10000000 50000000); fi
for n in "${SIZES[@]}" "$RUNS" "$JOBS"; do
  [[ $n =~ ^[1-9][0-9]*$ ]] || { echo "bench.sh: not a positive integer: $n" >&2; exit 2; }
done

PSQL=(psql -X -q -v ON_ERROR_STOP=1 -d "$DB")
q() { "${PSQL[@]}" -At "$@"; }
. "$(dirname "$0")/lib.sh"

q -c 'CREATE EXTENSION IF NOT EXISTS gpuops' >/dev/null || { echo "bench.sh: cannot connect or create extension gpuops" >&2; exit 1; }

header=$(bench_header "gpuops benchmark" \
  "runs per measurement: $RUNS (median of EXPLAIN ANALYZE Execution Time, TIMING OFF)" \
  "ratios are PostgreSQL time / gpuops time: above 1x gpuops is faster")
printf '%s\n\n' "$header"

# TABLES entries checked in this run; bench_<ROWS> (re)loaded in this run
declare -A READY=() RELOADED=()

load_table() { # load_table ROWS: bench_<ROWS>, noted in RELOADED when (re)loaded
  load_bench_table "$1" "$JOBS" || return 1
  if [ "$BENCH_LOADED" = 1 ]; then RELOADED[bench_$1]=1; fi
}

cols=(query rows:)
for c in "${CONFIGS[@]}"; do cols+=("${c%%|*} ms:"); done
table=$(md_head "${cols[@]}" "serial / gpuops:" "parallel(8) / gpuops:" "gpuops node used")
PLANS=""

# ensure_tables ROWS SQL: create the TABLES entries that SQL names (once per run)
ensure_tables() {
  local n="$1" sql="$2" e tmpl name rows def per_size have start
  for e in "${TABLES[@]}"; do
    tmpl=${e%%|*}; rows=${e#*|}; def=${rows#*|}; rows=${rows%%|*}
    name=${tmpl//\{T\}/bench_$n}; rows=${rows//\{N\}/$n}; def=${def//\{T\}/bench_$n}
    [[ $sql =~ (^|[^A-Za-z0-9_])${name}([^A-Za-z0-9_]|$) ]] || continue
    [ -n "${READY[$name]:-}" ] && continue
    per_size=""; [ "$tmpl" != "$name" ] && per_size=1
    have=$(q -c "select count(*) from $name" 2>/dev/null || true)
    if [ "${BENCH_RECREATE:-0}" != 1 ] && [ "$have" = "$rows" ] \
       && ! { [ -n "$per_size" ] && [ -n "${RELOADED[bench_$n]:-}" ]; }; then
      echo "reusing $name ($rows rows)" >&2
    else
      echo "creating $name ($rows rows) ..." >&2; start=$SECONDS
      q -c "SET client_min_messages = warning; DROP TABLE IF EXISTS $name" \
        -c "CREATE UNLOGGED TABLE $name AS $def" -c "VACUUM ANALYZE $name" || return 1
      if [ -n "$per_size" ]; then q -c "ALTER TABLE $name SET (parallel_workers = 8)" || return 1; fi
      echo "created $name in $((SECONDS - start))s" >&2
    fi
    READY[$name]=1
  done
}

for n in "${SIZES[@]}"; do
  load_table "$n" || exit 1
  for entry in "${QUERIES[@]}"; do
    name=${entry%%|*}; rest=${entry#*|}; sql=${rest%%|*}; sql=${sql//\{T\}/bench_$n}
    extra=""; [[ $rest == *"|"* ]] && extra=${rest#*|}
    if [ -n "${BENCH_ONLY:-}" ] && ! [[ $name =~ $BENCH_ONLY ]]; then continue; fi
    ensure_tables "$n" "$sql" || exit 1
    row="| $name | $n |"; vals=(); gplan=""
    for c in "${CONFIGS[@]}"; do
      title=${c%%|*}; sets=${c#*|}
      [ "$title" = gpuops ] && [ -n "$extra" ] && sets="$sets; $extra"
      echo "running $name on bench_$n: $title ($RUNS runs) ..." >&2
      res=$(measure "$sets" "$sql")
      ms=${res%%|*}; vals+=("$ms")
      row+=" $(fmt_ms "$ms") |"
      [ "$title" = gpuops ] && gplan=${res#*|}
    done
    # vals: serial, parallel, gpuops (the order of CONFIGS)
    row+=" $(ratio "${vals[0]}" "${vals[2]}") | $(ratio "${vals[1]}" "${vals[2]}") | $(node_used "$gplan") |"
    table+=$'\n'"$row"
    echo "$row" >&2
    PLANS+=$'\n'"### $name, $n rows, gpuops (last run)"$'\n\n```\n'"$gplan"$'\n```\n'
  done
  if [ "${BENCH_KEEP:-1}" != 1 ]; then
    drop="bench_$n"
    for e in "${TABLES[@]}"; do [[ ${e%%|*} == *"{T}"* ]] && t=${e%%|*} && drop+=", ${t//\{T\}/bench_$n}"; done
    q -c "SET client_min_messages = warning; DROP TABLE IF EXISTS $drop"
  fi
done

echo
printf '%s\n' "$table"
mkdir -p "$(dirname "$OUTFILE")" 2>/dev/null
{ printf '%s\n\n' "$header"; printf '%s\n' "$table"; printf '\n## gpuops plans\n%s' "$PLANS"; } > "$OUTFILE" \
  && echo && echo "written to $OUTFILE"
