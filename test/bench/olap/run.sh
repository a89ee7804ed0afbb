#!/usr/bin/env bash
# Star Schema Benchmark (13 queries) and TPC-H-shaped tables (Q1, Q3, Q5, Q6,
# Q10, Q12, Q14, Q19): PostgreSQL's best plan against gpuops, side by side.
# README.md (here) describes the data, the queries and what is measured.
#
#   GPU machine:  .devkit/pgrun.sh -c gpuops.device=gpu -- bash test/bench/olap/run.sh --sf 20 --suite ssb
#   any server:   PGHOST=... PGPORT=... PGUSER=... bash test/bench/olap/run.sh [options]
#   correctness:  bash test/bench/olap/run.sh --check        (SF 0.01, both suites, CPU twin is fine)
#
# Options:
#   --suite ssb|tpch|both  which benchmark (default ssb; --check: both)
#   --sf N                 scale factor (default 1; --check: 0.01); SSB lineorder ~ 6M x N
#                          rows, TPC-H lineitem ~ 6M x N rows
#   --queries LIST         comma-separated subset: 1.1,3.4 (SSB), 1,6,19 (TPC-H), a leading
#                          q/Q is allowed (default: all)
#   --reps N               timed runs per query and engine, the median is reported (default 1)
#   --warmup N             runs per query and engine before the timed ones (default 1; the
#                          first is EXPLAIN (ANALYZE, BUFFERS, TIMING OFF), which also gives
#                          the plan and gpuops' memory figures; 0: plain EXPLAIN, no run)
#   --engines LIST         from pg, gpuops, forced, forced_serial (default pg,gpuops;
#                          --check: all four); pg is always first, the others compared to it
#   --gpuops-set 'SQL'     extra SETs for the gpuops engines (e.g. "SET gpuops.min_rows = 0")
#   --workers N            max_parallel_workers_per_gather of every engine (default 8)
#   --timeout S            statement_timeout of each query run, seconds (default 120)
#   --budget S             start no new query after S seconds of the whole run (default 0: none);
#                          the table so far and its summary are still printed
#   --jobs N               loader sessions (default: nproc)
#   --reload               regenerate the data even when the database holds them already
#   --unlogged             UNLOGGED tables (faster to load; gpuops' device page cache keeps no
#                          page of them); default: regular tables, as users have (--logged)
#   --pkeys                primary keys on the tables after the load (default none)
#   --checksum             print an order-independent checksum of every table after the load
#   --load-only            stop after loading (and --checksum)
#   --drop                 drop the database at the end (default: kept, reused next time)
# Environment: OUT (if set, everything is also written under $OUT/olap), the PG* variables.
#
# Data: database olap_<suite>_sf<SF> (dots as _), reused when its bench_meta row names the
# same scale factor, generator version (an md5 of the generator files), --pkeys and --unlogged; loaded by
# --jobs psql sessions, each INSERTing a range of row numbers (every value a function of
# its row number, so any split gives the same data), then VACUUM ANALYZE and pg_prewarm.
# Timing: psql's \timing of the query itself, run to completion with its rows written
# to a file (client-side wall time); the median of --reps runs.  Every engine runs a
# query in its own session: warm-up(s) first, then the timed runs, so that session
# start (a CUDA context) is not timed; a gpuops engine's session ends with one more run as
# EXPLAIN ANALYZE (timing on: GpuQuery's stage times, logged as "stages"), not timed.
# Results: the timed run's rows in output order compared byte for byte with PostgreSQL's
# ("yes"; "order" = the same rows in another order; "NO").  Memory: "peak MB" = the leader
# backend's VmHWM - RssShmem from /proc/self/status at the end of its session (its private
# peak, roughly; parallel workers not counted); "dev MB" = the sum of "Device Memory" over
# gpuops' nodes in the warm-up's EXPLAIN ANALYZE.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)

SUITE="" SF="" QUERIES="" REPS=1 WARMUP=1 ENGINES="" GPUOPS_SET="" WORKERS=8 TIMEOUT=120
BUDGET=0 JOBS=$(nproc 2>/dev/null || echo 4) RELOAD=0 PERSISTENCE="" PKEYS=0 CHECKSUM=0
LOAD_ONLY=0 DROP=0 CHECK=0
ARGS=("$@")
usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit "${1:-0}"; }
while [ $# -gt 0 ]; do
  case "$1" in
    --suite) SUITE=$2; shift 2 ;;
    --sf) SF=$2; shift 2 ;;
    --queries) QUERIES=$2; shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    --warmup) WARMUP=$2; shift 2 ;;
    --engines) ENGINES=$2; shift 2 ;;
    --gpuops-set) GPUOPS_SET=$2; shift 2 ;;
    --workers) WORKERS=$2; shift 2 ;;
    --timeout) TIMEOUT=$2; shift 2 ;;
    --budget) BUDGET=$2; shift 2 ;;
    --jobs) JOBS=$2; shift 2 ;;
    --reload) RELOAD=1; shift ;;
    --logged) PERSISTENCE=""; shift ;;
    --unlogged) PERSISTENCE=UNLOGGED; shift ;;
    --pkeys) PKEYS=1; shift ;;
    --checksum) CHECKSUM=1; shift ;;
    --load-only) LOAD_ONLY=1; shift ;;
    --drop) DROP=1; shift ;;
    --check) CHECK=1; shift ;;
    -h|--help) usage 0 ;;
    *) echo "run.sh: unknown option $1" >&2; usage 2 ;;
  esac
done
if [ "$CHECK" = 1 ]; then
  SUITE=${SUITE:-both} SF=${SF:-0.01} ENGINES=${ENGINES:-pg,gpuops,forced,forced_serial}
fi
SUITE=${SUITE:-ssb} SF=${SF:-1} ENGINES=${ENGINES:-pg,gpuops}
case "$SUITE" in ssb|tpch) SUITES=("$SUITE") ;; both) SUITES=(ssb tpch) ;; *) usage 2 ;; esac
awk -v s="$SF" 'BEGIN { exit !(s ~ /^[0-9]*\.?[0-9]+$/ && s + 0 > 0) }' || { echo "run.sh: bad --sf $SF" >&2; exit 2; }

# everything goes to stdout and, with OUT, to $OUT/olap/run.log too
if [ -z "${OLAP_WORK:-}" ]; then
  if [ -n "${OUT:-}" ]; then OLAP_WORK=$OUT/olap; mkdir -p "$OLAP_WORK"; else OLAP_WORK=$(mktemp -d /tmp/olap.XXXXXX); fi
  export OLAP_WORK
  bash "$0" "${ARGS[@]}" 2>&1 | tee -a "$OLAP_WORK/run.log"
  exit "${PIPESTATUS[0]}"
fi
WORK=$OLAP_WORK
T_START=$(date +%s)
PSQL=(psql -X -q -v ON_ERROR_STOP=1)
log() { echo "olap: $*"; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

ENGINE_SETS_pg="SET gpuops.enabled = off;"
ENGINE_SETS_gpuops="SET gpuops.enabled = on; $GPUOPS_SET"
FORCE="SET gpuops.min_rows = 0; SET gpuops.tuple_cost = 0.001; SET gpuops.startup_cost = 0; SET gpuops.parallel_startup_cost = 0; SET gpuops.transfer_cost = 0;"
ENGINE_SETS_forced="SET gpuops.enabled = on; $FORCE $GPUOPS_SET"
ENGINE_SETS_forced_serial="SET gpuops.enabled = on; $FORCE SET max_parallel_workers_per_gather = 0; $GPUOPS_SET"
IFS=, read -r -a ENG <<<"$ENGINES"
ENG=(pg $(printf '%s\n' "${ENG[@]}" | grep -vx pg))
for e in "${ENG[@]}"; do
  v=ENGINE_SETS_$e; [ -n "${!v+x}" ] || { echo "run.sh: unknown engine $e" >&2; exit 2; }
done

# ---------------------------------------------------------------- data
# sizes NAME=VALUE... of a suite at SF (rounded, at least 1)
sizes() {
  awk -v s="$SF" -v suite="$1" 'function r(x) { x = int(x + 0.5); return x < 1 ? 1 : x }
  BEGIN {
    if (suite == "ssb") {
      # part: 200,000 x floor(1 + log2 SF) from SF 1 up, 200,000 x SF below
      np = s >= 1 ? 200000 * int(1 + log(s) / log(2) + 1e-9) : r(200000 * s)
      printf "ncust=%d nsupp=%d npart=%d norders=%d\n", r(30000 * s), r(2000 * s), np, r(1500000 * s)
    } else
      printf "ncust=%d nsupp=%d npart=%d norders=%d nclerk=%d\n", r(150000 * s), r(10000 * s),
        r(200000 * s), r(1500000 * s), r(1000 * s)
  }'
}
# tables of a suite: "table file units-variable", the big ones first
tables() {
  if [ "$1" = ssb ]; then printf '%s\n' "lineorder lineorder.sql norders" "part part.sql npart" \
    "customer customer.sql ncust" "supplier supplier.sql nsupp"
  else printf '%s\n' "lineitem lineitem.sql norders" "orders orders.sql norders" "part part.sql npart" \
    "customer customer.sql ncust" "supplier supplier.sql nsupp"
  fi
}
all_tables() { if [ "$1" = ssb ]; then echo "lineorder part customer supplier date"; else echo "lineitem orders part customer supplier nation region"; fi; }
gen_version() { cat "$HERE/common.sql" "$HERE/$1"/*.sql | md5sum | cut -c1-12; }

# run_pool CMD...: each CMD (a string) in the background, JOBS at a time; fails if one does
run_pool() {
  local pids=() cmd rc=0 p
  for cmd in "$@"; do
    if [ "${#pids[@]}" -ge "$JOBS" ]; then wait "${pids[0]}" || rc=1; pids=("${pids[@]:1}"); fi
    bash -c "$cmd" &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || rc=1; done
  return $rc
}

# load_chunk DB SUITE TABLE FILE LO HI VARS: one loader session, one log line (with the
# backend's CPU time from /proc/self/stat where the server lets us read it)
load_chunk() {
  local db=$1 suite=$2 table=$3 file=$4 lo=$5 hi=$6 vars=$7 t0 out rows s rc cpu
  local cpusql="SELECT 'cpu ' || ((f[12])::int8 + (f[13])::int8) FROM (SELECT string_to_array(split_part(pg_read_file('/proc/self/stat'), ') ', 2), ' ') f) s"
  t0=$(now)
  # shellcheck disable=SC2086
  out=$(psql -X -At -d "$db" $vars -v lo="$lo" -v hi="$hi" -c "SET gpuops.enabled = off" \
        -c "SET synchronous_commit = off" -c "$cpusql" -c '\set ON_ERROR_STOP 1' -f "$HERE/$suite/$file" \
        -c '\set ON_ERROR_STOP 0' -c "$cpusql" 2>&1)
  rc=$?
  s=$(elapsed "$t0")
  rows=$(sed -n 's/^INSERT 0 \([0-9]*\)$/\1/p' <<<"$out")
  if [ $rc -ne 0 ] || [ -z "$rows" ]; then echo "olap: load $table $lo..$hi FAILED: $out"; return 1; fi
  cpu=$(awk -v hz="$(getconf CLK_TCK 2>/dev/null || echo 100)" '/^cpu / { c[++n] = $2 } END { if (n == 2) printf "%.1f", (c[2] - c[1]) / hz }' <<<"$out")
  awk -v t="$table" -v lo="$lo" -v hi="$hi" -v n="$rows" -v s="$s" -v c="$cpu" 'BEGIN {
    printf "olap: load %s units %d..%d: %d rows in %.1f s (%.0f rows/s", t, lo, hi, n, s, n / (s > 0 ? s : 1e-3)
    if (c != "") printf "; backend CPU %.1f s, %.0f rows per CPU-second", c, n / (c > 0 ? c : 1e-3)
    print ")" }'
}
export -f load_chunk now elapsed
export HERE

# load SUITE DB: create (or reuse) the database with the suite's data at SF
load() {
  local suite=$1 db=$2 ver meta sz t0 t1 cmds=() line table file var n chunks c lo hi tabs total
  ver="$(gen_version "$suite") pkeys=$PKEYS ${PERSISTENCE:-logged}"
  meta=$("${PSQL[@]}" -d "$db" -At -c "SELECT sf || ' ' || gen_version FROM bench_meta" 2>/dev/null)
  if [ "$RELOAD" = 0 ] && [ "$meta" = "$SF $ver" ]; then
    log "$suite: reusing database $db (SF $SF, generator $ver)"
    return 0
  fi
  sz=$(sizes "$suite")
  log "$suite: generating SF $SF into $db: $sz, $JOBS loader sessions, ${PERSISTENCE:-logged} tables"
  "${PSQL[@]}" -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" || return 1
  "${PSQL[@]}" -d "$db" -c "SET client_min_messages = warning" -c "CREATE EXTENSION IF NOT EXISTS gpuops" \
    -f "$HERE/common.sql" -v persistence="$PERSISTENCE" -f "$HERE/$suite/schema.sql" >/dev/null || return 1
  local vars=""
  for kv in $sz; do vars="$vars -v $kv"; done
  t0=$(now)
  while read -r table file var; do
    n=$(sed -n "s/.*\b$var=\([0-9]*\).*/\1/p" <<<"$sz")
    chunks=$(( n / 20000 )); [ "$chunks" -gt "$JOBS" ] && chunks=$JOBS; [ "$chunks" -lt 1 ] && chunks=1
    for ((c = 0; c < chunks; c++)); do
      lo=$(( c * n / chunks + 1 )); hi=$(( (c + 1) * n / chunks ))
      cmds+=("load_chunk '$db' '$suite' '$table' '$file' $lo $hi '$vars'")
    done
  done < <(tables "$suite")
  run_pool "${cmds[@]}" || { log "$suite: load failed"; return 1; }
  t1=$(elapsed "$t0")
  tabs=$(all_tables "$suite")
  total=$("${PSQL[@]}" -d "$db" -At -c "SET gpuops.enabled = off" -c "SELECT $(for t in $tabs; do printf "(SELECT count(*) FROM \"%s\") + " "$t"; done) 0")
  log "$suite: generated $total rows in $t1 s ($(awk -v n="$total" -v s="$t1" 'BEGIN { printf "%.0f", n / s }') rows/s, $JOBS sessions)"
  t0=$(now)
  cmds=()
  for t in $tabs; do cmds+=("psql -X -q -v ON_ERROR_STOP=1 -d '$db' -c 'VACUUM ANALYZE \"$t\"'"); done
  run_pool "${cmds[@]}" || { log "$suite: VACUUM ANALYZE failed"; return 1; }
  log "$suite: VACUUM ANALYZE in $(elapsed "$t0") s"
  if [ "$PKEYS" = 1 ]; then
    t0=$(now)
    "${PSQL[@]}" -d "$db" -f "$HERE/$suite/pkeys.sql" || return 1
    log "$suite: primary keys in $(elapsed "$t0") s"
  fi
  "${PSQL[@]}" -d "$db" -c "CREATE TABLE bench_meta AS SELECT '$SF'::text AS sf, '$ver'::text AS gen_version,
      $total::int8 AS total_rows, $t1::float8 AS load_s, now() AS loaded_at" || return 1
}

# print row counts and sizes; with --checksum an order-independent checksum per table
describe() {
  local suite=$1 db=$2 t sql
  for t in $(all_tables "$suite"); do
    sql="SELECT count(*) || ' rows, ' || pg_size_pretty(pg_table_size('\"$t\"'))"
    [ "$CHECKSUM" = 1 ] && sql="$sql || ', checksum ' || coalesce(sum(hashtext(x::text)::int8), 0)"
    log "$suite: $t: $("${PSQL[@]}" -d "$db" -At -c "SET max_parallel_workers_per_gather = $WORKERS" -c "SET gpuops.enabled = off" -c "$sql FROM \"$t\" x")"
  done
}

# fits SUITE DB: logs the tables' size against shared_buffers.  Tables that do
# not fit are read through the OS's cache by both engines on every run, so the
# figures would not be those of data in shared buffers (TPC-H at SF 20 is
# ~24 GB of tables: 12 MB at SF 0.01).
fits() {
  local suite=$1 db=$2 t list=() tmb bmb
  for t in $(all_tables "$suite"); do list+=("'\"$t\"'"); done
  read -r tmb bmb < <("${PSQL[@]}" -d "$db" -At -F ' ' -c "SELECT (sum(pg_relation_size(c::regclass)) / 1048576)::int8,
      pg_size_bytes(current_setting('shared_buffers')) / 1048576 FROM unnest(ARRAY[$(IFS=,; echo "${list[*]}")]) c")
  if [ -z "$bmb" ]; then log "$suite: the tables' size against shared_buffers could not be read"
  elif [ "$tmb" -gt "$bmb" ]; then
    log "$suite: the tables ($tmb MB) do not fit shared_buffers ($bmb MB): both engines read the rest from the OS cache; set shared_buffers above $tmb MB for figures of data in shared buffers"
  else log "$suite: the tables ($tmb MB) fit shared_buffers ($bmb MB)"; fi
}

prewarm() {
  local suite=$1 db=$2 t cmds=() t0
  fits "$suite" "$db"
  "${PSQL[@]}" -d "$db" -c "SET client_min_messages = warning" -c "CREATE EXTENSION IF NOT EXISTS pg_prewarm" 2>/dev/null || { log "$suite: no pg_prewarm, the warm-up runs warm the tables"; return 0; }
  t0=$(now)
  for t in $(all_tables "$suite"); do cmds+=("psql -X -q -At -d '$db' -c 'SELECT pg_prewarm('\''\"$t\"'\'')' >/dev/null"); done
  run_pool "${cmds[@]}"
  log "$suite: pg_prewarm in $(elapsed "$t0") s"
}

# ---------------------------------------------------------------- queries
# query files of a suite selected by --queries
query_files() {
  local suite=$1 f name want tok
  for f in "$HERE/$suite"/queries/q*.sql; do
    name=$(basename "$f" .sql)
    if [ -n "$QUERIES" ]; then
      want=0
      for tok in ${QUERIES//,/ }; do
        tok=${tok#[qQ]}
        if [[ "$tok" == *.* ]]; then [ "$suite" = ssb ] && [ "q$tok" = "$name" ] && want=1
        else [ "$suite" = tpch ] && [ "$(printf 'q%02d' "$((10#$tok))")" = "$name" ] && want=1; fi
      done
      [ "$want" = 1 ] || continue
    fi
    echo "$f"
  done
}
label() { local n; n=$(basename "$1" .sql); n=${n#q}; [[ "$n" == *.* ]] || n=$((10#$n)); echo "Q$n"; }

# run_engine DB QUERYFILE ENGINE PREFIX: one session: warm-up(s), timed run(s); writes
# PREFIX.plan, PREFIX.out, PREFIX.log; prints "median_ms peak_kB all_ms" (median_ms "timeout" or
# "error" on failure; all_ms: the timed runs' times, comma-separated)
run_engine() {
  local db=$1 qf=$2 eng=$3 pre=$4 q sets v i script ms all
  q=$(grep -v '^[[:space:]]*--' "$qf"); q=${q%;}
  v=ENGINE_SETS_$eng; sets=${!v}
  script=$pre.sql
  rm -f "$pre.stages" # (an earlier run's, where $OUT is reused)
  {
    echo "SET max_parallel_workers_per_gather = $WORKERS;"
    echo "$sets"
    echo "SET statement_timeout = '${TIMEOUT}s';"
    echo "\\o $pre.plan"
    if [ "$WARMUP" -ge 1 ]; then echo "EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, COSTS OFF) $q;"; else echo "EXPLAIN (COSTS OFF) $q;"; fi
    echo "\\o /dev/null"
    for ((i = 1; i < WARMUP; i++)); do echo "$q;"; done
    for ((i = 0; i < REPS; i++)); do
      if [ "$i" = 0 ]; then echo "\\o $pre.out"; else echo "\\o /dev/null"; fi
      echo "\\timing on"; echo "$q;"; echo "\\timing off"
    done
    echo "\\o"
    echo "\\set ON_ERROR_STOP 0"
    # gpuops' stages in a warm run (its EXPLAIN gives them with TIMING on only), after the timed
    # runs; its failure (past the marker) fails nothing
    if [ "$eng" != pg ] && [ "$WARMUP" -ge 1 ]; then
      echo "\\echo olap-stages"; echo "\\o $pre.stages"; echo "EXPLAIN (ANALYZE, COSTS OFF) $q;"; echo "\\o"
    fi
    echo "SELECT 'mem ' || coalesce(max(v) FILTER (WHERE k = 'VmHWM'), 0) || ' ' || coalesce(max(v) FILTER (WHERE k = 'RssShmem'), 0)
      FROM (SELECT split_part(l, ':', 1) AS k, regexp_replace(split_part(l, ':', 2), '[^0-9]', '', 'g')::int8 AS v
            FROM regexp_split_to_table(pg_read_file('/proc/self/status'), E'\\n') l WHERE l ~ '^(VmHWM|RssShmem):') s;"
  } > "$script"
  psql -X -q -A -t -v ON_ERROR_STOP=1 -d "$db" -f "$script" > "$pre.log" 2>&1
  if sed '/^olap-stages$/,$d' "$pre.log" | grep -q 'canceling statement due to statement timeout'; then echo "timeout 0 -"; return; fi
  if sed '/^olap-stages$/,$d' "$pre.log" | grep -q 'ERROR'; then echo "error 0 -"; return; fi
  all=$(sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' "$pre.log" | paste -sd, -)
  ms=$(tr , '\n' <<<"$all" | sort -g | awk 'NF { a[++n] = $1 } END {
    if (n == 0) print "error"; else if (n % 2) print a[(n + 1) / 2]; else printf "%.3f\n", (a[n / 2] + a[n / 2 + 1]) / 2 }')
  echo "$ms $(awk '/^mem / { d = $2 - $3; print (d > 0 ? d : 0) }' "$pre.log" | tail -1) ${all:--}"
}

# stages PLAN: a GpuQuery's stage times from a warm EXPLAIN ANALYZE (run_engine's .stages), one
# line; the first GpuQuery's own (the nodes below it, its dimensions' plans, come after its lines)
stages() {
  [ -s "$1" ] || { echo "none"; return; }
  awk '/Execution Time:/ { ex = $3 }
    /Custom Scan \(GpuQuery\)/ { g = 1 }
    g && /^ *Workers Launched:/ && !w { w = $3 }
    g && /^ *(Read Time|Workers Read Time|Walk Time|Lookup Staging Time|Page Service Time|Copy Time|Kernel Time):/ {
      k = $0; sub(/^ */, "", k); sub(/:.*/, "", k); v = $0; sub(/.*: */, "", v); sub(/ ms/, "", v); if (!(k in t)) t[k] = v }
    END {
      if (!g) { printf "execution %s ms (no GpuQuery)\n", ex; exit }
      printf "execution %s ms; GpuQuery: lookups %s, read (the leader'"'"'s loop) %s, workers'"'"' read %s (%d workers), walk %s, page service %s, copy %s, kernel %s ms\n",
        ex, t["Lookup Staging Time"] == "" ? "0" : t["Lookup Staging Time"], t["Read Time"],
        t["Workers Read Time"] == "" ? "0" : t["Workers Read Time"], w, t["Walk Time"],
        t["Page Service Time"] == "" ? "0" : t["Page Service Time"], t["Copy Time"], t["Kernel Time"] }' "$1"
}

exec_ms() { sed -n 's/^Execution Time: \([0-9.]*\) ms$/\1 ms/p' "$1" 2>/dev/null | head -1 | grep . || echo "none"; }
nodes_of() { # gpuops nodes in a plan file: "GpuAgg,GpuHashJoin" or "-"
  local n; n=$(grep -o 'Custom Scan (Gpu[A-Za-z]*)' "$1" 2>/dev/null | sed 's/Custom Scan (\(.*\))/\1/' | sort -u | paste -sd, -)
  echo "${n:--}"
}
dev_mb() { awk '/Device Memory: [0-9]+ kB/ { for (i = 1; i <= NF; i++) if ($i == "Memory:") s += $(i + 1) } END { printf "%.0f", s / 1024 }' "$1" 2>/dev/null; }
mb() { awk -v k="$1" 'BEGIN { if (k ~ /^[0-9]+$/) printf "%.0f", k / 1024; else print "n/a" }'; }
fmt_ms() { awk -v a="$1" 'BEGIN { if (a ~ /^[0-9.]+$/) printf "%.1f", a; else print a }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a ~ /^[0-9.]+$/ && b ~ /^[0-9.]+$/ && a > 0 && b > 0) printf "%.2fx", a / b; else print "n/a" }'; }
same() { # same PGOUT OUT: yes, order (the same rows in another order) or NO
  if [ "$(md5sum < "$1")" = "$(md5sum < "$2")" ]; then echo yes
  elif [ "$(LC_ALL=C sort "$1" | md5sum)" = "$(LC_ALL=C sort "$2" | md5sum)" ]; then echo order
  else echo NO; fi
}

# ---------------------------------------------------------------- main
log "start $(date -u '+%Y-%m-%d %H:%M:%S UTC'), host $(uname -n), $(nproc) cores; suites ${SUITES[*]}, SF $SF, engines ${ENG[*]}, reps $REPS, warm-up $WARMUP, workers $WORKERS; files in $WORK"
log "server: $("${PSQL[@]}" -At -d postgres -c "SELECT version()")"
log "settings: $("${PSQL[@]}" -At -d postgres -c "SELECT string_agg(name || '=' || setting || coalesce(unit, ''), ', ' ORDER BY name) FROM pg_settings
  WHERE name IN ('shared_buffers', 'work_mem', 'max_parallel_workers', 'max_worker_processes', 'jit', 'gpuops.device', 'effective_cache_size', 'random_page_cost')")"
"${PSQL[@]}" -At -d postgres -c "CREATE EXTENSION IF NOT EXISTS gpuops" >/dev/null 2>&1
log "gpuops: $("${PSQL[@]}" -At -d postgres -c "SELECT gpuops.version()" 2>&1); device: $("${PSQL[@]}" -At -d postgres -c "SELECT concat_ws(' ', backend, device_name, total_memory_mb || ' MB', reason) FROM gpuops.device_info()" 2>&1)"

fail=0 stop=0
declare -a GM_LOGS=() SUMMARY=()
for suite in "${SUITES[@]}"; do
  db=olap_${suite}_sf${SF//./_}
  load "$suite" "$db" || { fail=1; continue; }
  describe "$suite" "$db"
  [ "$LOAD_ONLY" = 1 ] && continue
  prewarm "$suite" "$db"
  mapfile -t qfiles < <(query_files "$suite")
  [ "${#qfiles[@]}" -gt 0 ] || { log "$suite: no query matches --queries $QUERIES"; continue; }
  # table header
  h="| query | rows | PG ms | PG peak MB"; s="|---|---:|---:|---:"
  for e in "${ENG[@]:1}"; do h="$h | $e ms | speed-up | equal? | $e nodes | peak MB | dev MB"; s="$s|---:|---:|---|---|---:|---:"; done
  table=("$h |" "$s|")
  echo; echo "### ${suite^^} at SF $SF ($(date -u '+%Y-%m-%d %H:%M UTC'))"; echo; printf '%s\n' "${table[@]}"
  declare -A logs=()
  for qf in "${qfiles[@]}"; do
    name=$(label "$qf")
    if [ "$BUDGET" -gt 0 ] && [ $(( $(date +%s) - T_START )) -ge "$BUDGET" ]; then
      stop=1; row="| $name | skipped: --budget $BUDGET s reached |"; table+=("$row"); echo "$row"; continue
    fi
    base=$WORK/${suite}_$(basename "$qf" .sql)
    read -r pg_ms pg_kb pg_all <<<"$(run_engine "$db" "$qf" pg "$base.pg")"
    detail="pg ${pg_all} ms (EXPLAIN ANALYZE: $(exec_ms "$base.pg.plan"))"
    rows=0; [ -f "$base.pg.out" ] && rows=$(wc -l < "$base.pg.out")
    row="| $name | $rows | $(fmt_ms "$pg_ms") | $(mb "$pg_kb")"
    for e in "${ENG[@]:1}"; do
      read -r e_ms e_kb e_all <<<"$(run_engine "$db" "$qf" "$e" "$base.$e")"
      detail="$detail; $e ${e_all} ms (EXPLAIN ANALYZE: $(exec_ms "$base.$e.plan"))"
      if [[ "$pg_ms" =~ ^[0-9.]+$ ]] && [[ "$e_ms" =~ ^[0-9.]+$ ]]; then eq=$(same "$base.pg.out" "$base.$e.out"); else eq="n/a"; fi
      [ "$eq" = yes ] || fail=1
      r=$(ratio "$pg_ms" "$e_ms")
      [[ "$r" == *x ]] && logs[$e]="${logs[$e]:-} $(awk -v a="$pg_ms" -v b="$e_ms" 'BEGIN { printf "%.6g", a / b }')"
      row="$row | $(fmt_ms "$e_ms") | $r | $eq | $(nodes_of "$base.$e.plan") | $(mb "$e_kb") | $(dev_mb "$base.$e.plan")"
    done
    row="$row |"; table+=("$row"); echo "$row"
    log "$suite $name timed runs: $detail"
    for e in "${ENG[@]:1}"; do log "$suite $name $e stages (a warm EXPLAIN ANALYZE): $(stages "$base.$e.stages")"; done
  done
  for e in "${ENG[@]:1}"; do
    gm=$(awk '{ for (i = 1; i <= NF; i++) { s += log($i); n++ } } END { if (n) printf "%.2fx over %d queries", exp(s / n), n; else print "n/a" }' <<<"${logs[$e]:-}")
    SUMMARY+=("${suite^^} SF $SF: $e vs PostgreSQL, geometric mean of the speed-ups: $gm")
    table+=("" "${suite^^} SF $SF: geometric mean of the speed-ups, $e vs PostgreSQL: $gm")
  done
  unset logs
  printf '%s\n' "${table[@]}" > "$WORK/${suite}_sf${SF//./_}.md"
  echo
  [ "$DROP" = 1 ] && "${PSQL[@]}" -d postgres -c "DROP DATABASE $db"
done
echo
printf '%s\n' "${SUMMARY[@]}"
log "plans, rows and logs in $WORK; $(( $(date +%s) - T_START )) s in all"
if [ "$CHECK" = 1 ]; then
  if [ "$fail" = 0 ]; then log "check: PASS (every query's rows equal PostgreSQL's with every engine)"; else log "check: FAIL"; fi
fi
[ "$fail" = 0 ]
