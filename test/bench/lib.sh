# Shared by the benchmark scripts (sourced): medians of EXPLAIN ANALYZE
# runs, ratios, which gpuops node a plan used, the report header and the
# bench_<ROWS> table.  Needs PSQL (an array: the psql command) and RUNS.

median() { # numbers on stdin -> median
  sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) { print "NaN"; exit }
    if (NR % 2) print a[(NR + 1) / 2]; else printf "%.3f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

# measure CONFIG_SETS SQL -> prints "median_ms|plan_of_last_run".  With
# MEASURE_AFTER set, that SQL runs after each EXPLAIN in the same session and
# its output follows the plan (e.g. the backend's peak memory).  Each run is
# a new session; with MEASURE_WARMUP=1 the same EXPLAIN runs once untimed
# before the timed one in that session (session start, a CUDA context
# included, is then not timed, as test/bench/olap/run.sh measures).
measure() {
  local sets="$1" sql="$2" out times=() r ms warm=()
  [ "${MEASURE_WARMUP:-0}" = 1 ] && warm=(-c "EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) $sql" -c "SELECT 'measure: timed run'")
  for ((r = 0; r < RUNS; r++)); do
    out=$("${PSQL[@]}" -At -c "$sets" "${warm[@]}" -c "EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) $sql" \
            ${MEASURE_AFTER:+-c "$MEASURE_AFTER"} 2>&1) \
      || { echo "${0##*/}: failed: $sets; $sql" >&2; printf '%s\n' "$out" | tail -n 5 >&2; echo "NaN|"; return; }
    out=${out#*measure: timed run}
    ms=$(sed -n 's/^Execution Time: \([0-9.]*\) ms$/\1/p' <<<"$out")
    times+=("${ms:-NaN}")
  done
  printf '%s|%s\n' "$(printf '%s\n' "${times[@]}" | median)" "$out"
}

# node description from a plan: "GpuSort (cuda)" or "no"
node_used() {
  local plan="$1" nodes backend
  nodes=$(grep -o 'Custom Scan (Gpu[A-Za-z]*)' <<<"$plan" | sed 's/Custom Scan (\(.*\))/\1/' | sort -u | paste -sd, -)
  backend=$(sed -n 's/^ *Backend: *\([A-Za-z0-9_]*\).*/\1/p' <<<"$plan" | sort -u | paste -sd, -)
  if [ -z "$nodes" ]; then echo "no"; else echo "$nodes${backend:+ ($backend)}"; fi
}

# md_head COLUMN...: a markdown table's first two lines; a column written
# "title:" is right-aligned (numbers)
md_head() {
  local c head="|" sep="|"
  for c in "$@"; do
    if [[ $c == *: ]]; then head+=" ${c%:} |"; sep+="---:|"; else head+=" $c |"; sep+="---|"; fi
  done
  printf '%s\n%s' "$head" "$sep"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2fx", a / b; else print "n/a" }'; }
fmt_ms() { awk -v a="$1" 'BEGIN { if (a ~ /^[0-9.]+$/) printf "%.1f", a; else print "n/a" }'; }


# load_parallel TABLE N SELECT_LIST [JOBS]: inserts rows i = 1..N into TABLE,
# SELECT_LIST computed from i, in JOBS (default 8) concurrent chunks; fails
# when any chunk does.  Needs q (a psql function) from the caller.
load_parallel() {
  local table="$1" n="$2" cols="$3" jobs="${4:-8}" i lo hi pids=() rc=0
  for ((i = 0; i < jobs; i++)); do
    lo=$(( i * n / jobs + 1 )); hi=$(( (i + 1) * n / jobs ))
    [ "$lo" -gt "$hi" ] && continue
    q -c "INSERT INTO $table SELECT $cols FROM generate_series($lo::int8, $hi::int8) i" &
    pids+=($!)
  done
  for i in "${pids[@]}"; do wait "$i" || rc=1; done
  return "$rc"
}

# bench_header TITLE [LINE...]: a report's markdown header: date, host,
# versions, the server's settings, the LINEs as items, the device.
bench_header() {
  local title="$1" line
  shift
  echo "# $title"
  echo
  echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'), host: $(uname -n), $(nproc 2>/dev/null || echo '?') CPUs"
  echo "- $("${PSQL[@]}" -At -c 'select version()')"
  echo "- $("${PSQL[@]}" -At -c 'select gpuops.version()')"
  echo "- settings: $("${PSQL[@]}" -At -c "select string_agg(name || '=' || current_setting(name), ', ' order by name) from pg_settings
       where name in ('shared_buffers', 'work_mem', 'max_parallel_workers', 'max_worker_processes', 'jit', 'min_dynamic_shared_memory')
          or (name like 'gpuops.%' and source <> 'default')")"
  for line in "$@"; do echo "- $line"; done
  echo
  echo '```'
  "${PSQL[@]}" -x -c 'select * from gpuops.device_info()'
  echo '```'
}

# load_bench_table ROWS [JOBS]: bench_<ROWS> (id int8, k int8 random, g int4
# 0..999999, v int4, t text = md5(id); unlogged, parallel_workers = 8), loaded
# in JOBS (default 8) parallel chunks, or reused when it has ROWS rows (unless
# BENCH_RECREATE=1).  Sets BENCH_LOADED to 1 when it loaded the table, 0 when
# it reused it.  Needs q.
load_bench_table() {
  local n="$1" jobs="${2:-8}" t="bench_$1" have start
  BENCH_LOADED=0
  have=$(q -c "select count(*) from $t" 2>/dev/null || true)
  if [ "${BENCH_RECREATE:-0}" != 1 ] && [ "$have" = "$n" ]; then
    echo "reusing $t ($n rows)" >&2; return 0
  fi
  echo "loading $t: $n rows in $jobs parallel chunks ..." >&2
  start=$SECONDS
  q -c "SET client_min_messages = warning; DROP TABLE IF EXISTS $t" -c "CREATE UNLOGGED TABLE $t (id int8, k int8, g int4, v int4, t text)" || return 1
  load_parallel "$t" "$n" "i, ((random() - 0.5) * 1.8e19)::int8, floor(random() * 1000000)::int4,
            floor(random() * 2e9 - 1e9)::int4, md5(i::text)" "$jobs" \
    || { echo "${0##*/}: loading $t failed" >&2; return 1; }
  q -c "VACUUM ANALYZE $t" -c "ALTER TABLE $t SET (parallel_workers = 8)" || return 1
  BENCH_LOADED=1
  echo "loaded $t in $((SECONDS - start))s ($(q -c "select pg_size_pretty(pg_table_size('$t'))"))" >&2
}
