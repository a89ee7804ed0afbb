#!/usr/bin/env bash
# sort_spill.sh [ROWS...]: issue 30's benchmark: sorts larger than work_mem,
# gpuops with its default settings against PostgreSQL's 8 workers.
#   GPU machine: .devkit/pgrun.sh -c gpuops.device=gpu -c shared_buffers=16GB -c work_mem=1GB \
#                  -- bash test/bench/sort_spill.sh 50000000
#   any server:  PGHOST=... PGPORT=... PGUSER=... bash test/bench/sort_spill.sh [ROWS...]
# ROWS default 50000000.  The table is bench.sh's bench_<ROWS> (lib.sh's
# load_bench_table: created, or reused when it has the row count).  Nothing is set
# at the server level: each session SETs only what its configuration needs.
# Cells: each query (QUERIES) at each session work_mem (SPILL_WORK_MEMS, default
# "server 4MB"; "server" keeps the server's work_mem, anything else is SET), the
# configurations run interleaved round by round, median of EXPLAIN (ANALYZE,
# TIMING OFF, COSTS OFF) "Execution Time":
#   PostgreSQL 8 workers  gpuops.enabled = off, max_parallel_workers_per_gather = 8
#   gpuops                gpuops.enabled = on, max_parallel_workers_per_gather = 8 (no gpuops tuning)
#   PostgreSQL serial     (SPILL_SERIAL=1) gpuops.enabled = off, max_parallel_workers_per_gather = 0
# Rounds: BENCH_RUNS (default 3) at the server's work_mem, SPILL_SMALL_RUNS (default 1)
# at the others.  Round 1 of every cell comes first, then the cleanup tests, then the
# results checks, then the further rounds; a check or a round is skipped when it would
# end past SPILL_BUDGET_S (default 480 s, counted from the start, table load included;
# estimated from the cell's earlier runs), so that a device call of 10 minutes holds
# it.  The report is rewritten after each phase.  Every query runs with
# statement_timeout SPILL_TIMEOUT (default 300s): one that fails or times out counts
# as NaN and the script goes on.
# Per cell it also reports: the gpuops plan's node and its spill lines (Spill, Runs,
# Merge, Device Sort, Sort Method); the bytes spilled (pg_stat_database.temp_bytes read
# before and after each run, in other sessions); the peak RSS of the leader backend
# (VmHWM and RssShmem of /proc/self/status read with pg_read_file after the EXPLAIN;
# superuser only, else "n/a"; shared buffers it touched count, so the private part is
# shown: peak minus shared); and a results check (SPILL_CHECK=0 skips it): the query
# wrapped in
#   SELECT count(*), sum(hash of the row), sum(hash of the sort keys seeded by the position)
#   FROM (SELECT q.*, row_number() OVER () rn FROM (query) q) s
# under PostgreSQL 8 workers once per query and under gpuops at each work_mem: equal
# sums are the same rows with the same key sequence (ties may come in any order).
# Cleanup tests, under gpuops at each work_mem: ORDER BY k cancelled by
# statement_timeout 1500ms, and an error late in the output (division by zero on the
# row with id = ROWS, above the sort), each followed by a check that the temporary
# directory is empty (pg_ls_tmpdir() and pg_ls_dir('base/pgsql_tmp')); the same
# check once more at the end.  PASS/FAIL lines go to the report.
# Sessions: each timed run is a new session, so gpuops' runs pay its session start (the
# CUDA context, 0.3-0.4 s on the H200); with SPILL_WARM=1 every configuration's run
# follows an untimed run of the same query in its session (lib.sh's MEASURE_WARMUP), as
# test/bench/olap/run.sh measures, and the temp bytes are those of one run (half).
# Environment: BENCH_RUNS, SPILL_QUERIES, SPILL_SMALL_RUNS, SPILL_WORK_MEMS, SPILL_SERIAL, SPILL_WARM, SPILL_CHECK,
# SPILL_BUDGET_S, SPILL_TIMEOUT, BENCH_DB (default $PGDATABASE or postgres),
# BENCH_RECREATE=1, BENCH_LOAD_JOBS (default 8).
# Prints a markdown table, writes it with the tests and the gpuops plans to
# ${OUT:-.}/sort_spill.md; progress with elapsed seconds on stderr.
set -uo pipefail

# "name|SQL|hash of the sort keys at position rn": {T} stands for the table
QUERIES=(
  "sort_all|SELECT * FROM {T} ORDER BY k|hashint8extended(k, rn)"
  "sort_text|SELECT * FROM {T} ORDER BY t COLLATE \"C\"|hashtextextended(t, rn)"
  "sort_g_kdesc|SELECT * FROM {T} ORDER BY g, k DESC|hashint4extended(g, rn) # hashint8extended(k, -rn)"
  "sort_limit100k|SELECT * FROM {T} ORDER BY k LIMIT 100000|hashint8extended(k, rn)"
)
# SPILL_QUERIES: the names to run (space-separated; default all)
if [ -n "${SPILL_QUERIES:-}" ]; then
  kept=()
  for e in "${QUERIES[@]}"; do
    [[ " $SPILL_QUERIES " == *" ${e%%|*} "* ]] && kept+=("$e")
  done
  [ ${#kept[@]} -gt 0 ] || { echo "sort_spill.sh: SPILL_QUERIES names none of the queries" >&2; exit 2; }
  QUERIES=("${kept[@]}")
fi
# order-insensitive hash of a whole row of bench_<ROWS>
ROWHASH="hashint8extended(id, 1) # hashint8extended(k, 2) # hashint4extended(g, 3) # hashint4extended(v, 4) # hashtextextended(t, 5)"
# "column title|SET commands"; the first is the ratio's baseline, gpuops is named gpuops
CONFIGS=(
  "PostgreSQL 8 workers|SET gpuops.enabled = off; SET max_parallel_workers_per_gather = 8"
  "gpuops|SET gpuops.enabled = on; SET max_parallel_workers_per_gather = 8"
)
[ "${SPILL_SERIAL:-0}" = 1 ] \
  && CONFIGS+=("PostgreSQL serial|SET gpuops.enabled = off; SET max_parallel_workers_per_gather = 0")
GPUOPS_SETS=${CONFIGS[1]#*|}

RUNS=1 # lib.sh's measure: one run a call, the rounds are ours
MEASURE_WARMUP=${SPILL_WARM:-0}
BIG_RUNS=${BENCH_RUNS:-3}
SMALL_RUNS=${SPILL_SMALL_RUNS:-1}
BUDGET=${SPILL_BUDGET_S:-480}
TIMEOUT=${SPILL_TIMEOUT:-300s}
read -r -a WORK_MEMS <<<"${SPILL_WORK_MEMS:-server 4MB}"
DB=${BENCH_DB:-${PGDATABASE:-postgres}}
JOBS=${BENCH_LOAD_JOBS:-8}
OUTFILE=${OUT:-.}/sort_spill.md
if [ $# -gt 0 ]; then SIZES=("$@"); else SIZES=(50000000); fi
for n in "${SIZES[@]}" "$BIG_RUNS" "$SMALL_RUNS" "$JOBS"; do
  [[ $n =~ ^[1-9][0-9]*$ ]] || { echo "sort_spill.sh: not a positive integer: $n" >&2; exit 2; }
done
[[ $BUDGET =~ ^[0-9]+$ ]] || { echo "sort_spill.sh: SPILL_BUDGET_S not a number: $BUDGET" >&2; exit 2; }

PSQL=(psql -X -q -v ON_ERROR_STOP=1 -d "$DB")
q() { "${PSQL[@]}" -At "$@"; }
. "$(dirname "$0")/lib.sh"

START=$SECONDS
log() { echo "[$((SECONDS - START))s] $*" >&2; }

q -c 'CREATE EXTENSION IF NOT EXISTS gpuops' >/dev/null \
  || { echo "sort_spill.sh: cannot connect or create extension gpuops" >&2; exit 1; }
SERVER_WM=$(q -c 'SHOW work_mem')

# the leader's peak memory, read in the measured session (see measure's MEASURE_AFTER)
MEM_SQL="SELECT 'memory: peak_kB=' || coalesce((regexp_match(s, 'VmHWM:\s+(\d+)'))[1], '?')
  || ' shmem_kB=' || coalesce((regexp_match(s, 'RssShmem:\s+(\d+)'))[1], '0') FROM pg_read_file('/proc/self/status') s"
if q -c "$MEM_SQL" 2>/dev/null | grep -q 'peak_kB=[0-9]'; then
  MEASURE_AFTER=$MEM_SQL; MEM_NOTE="leader's peak RSS: VmHWM of /proc/self/status after the query, shared memory it touched (RssShmem) subtracted"
else
  MEASURE_AFTER=""; MEM_NOTE="leader's peak RSS: not available (pg_read_file of /proc/self/status refused)"
fi

wm_label() { if [ "$1" = server ]; then echo "$SERVER_WM (server)"; else echo "$1"; fi; }
wm_set() { if [ "$1" = server ]; then echo ""; else echo "SET work_mem = '$1'; "; fi; }
session_sets() { echo "SET statement_timeout = '${2:-$TIMEOUT}'; $(wm_set "$1")$3"; } # WM [TIMEOUT] CONFIG_SETS

temp_bytes() { # the database's temp_bytes so far (after backends that ended flushed their counts)
  q -c "SELECT pg_sleep(0.2)" -c "SELECT temp_bytes FROM pg_stat_database WHERE datname = current_database()" 2>/dev/null | tail -n 1
}
pretty_bytes() {
  awk -v b="$1" 'BEGIN { if (b !~ /^-?[0-9]+$/) { print "n/a"; exit }
    split("B kB MB GB TB", u, " "); i = 1; while (b >= 1024 && i < 5) { b /= 1024; i++ }
    printf(i == 1 ? "%d %s\n" : "%.1f %s\n", b, u[i]) }'
}
mem_of() { # plan text with MEASURE_AFTER's line -> "private MB (peak MB)"
  sed -n 's/^memory: peak_kB=\([0-9]*\) shmem_kB=\([0-9]*\)$/\1 \2/p' <<<"$1" \
    | awk '{ printf "%.0f MB (peak %.0f MB)\n", ($1 - $2) / 1024, $1 / 1024 } END { if (NR == 0) print "n/a" }'
}
spill_info() { # the plan's lines about sorting, runs and spilling, compact: the
  # workers' "Worker N: Sort Method: ..." lines summed up as one
  grep -E 'Spill|Runs|Merge|Device Sort|Sort Method' <<<"$1" | grep -vE 'Gather Merge|Merge (Join|Append)|->' \
    | sed 's/^ *//; s/  */ /g; s/|/\\|/g' | awk '
      /^Worker [0-9]+: Sort Method: / {
        m = $0; sub(/^Worker [0-9]+: Sort Method: /, "", m); sub(/ (Memory|Disk):.*/, "", m)
        if (!(m in wm)) order[++nm] = m
        wm[m]++
        if (match($0, /Disk: [0-9]+kB/)) disk += substr($0, RSTART + 6, RLENGTH - 8)
        next }
      !seen[$0]++ { lines[++nl] = $0 }
      END {
        for (i = 1; i <= nl && i <= 6; i++) a = a (i > 1 ? "; " : "") lines[i]
        if (nl > 6) a = a "; (+" nl - 6 " more)"
        if (nm) {
          w = ""; for (i = 1; i <= nm; i++) w = w (i > 1 ? ", " : "") order[i] " x" wm[order[i]]
          a = a (a != "" ? "; " : "") "workers: " w (disk ? " (Disk: " disk "kB)" : "")
        }
        print (a != "" ? a : "-") }'
}

# tmpdir_check LABEL: PASS when the server's temporary directory holds nothing
TESTS=()
tmpdir_check() {
  local label="$1" sql n
  sql="SELECT (SELECT count(*) FROM pg_ls_tmpdir()) || ' ' || (SELECT count(*) FROM pg_ls_dir('base/pgsql_tmp', true, false))"
  for _ in 1 2; do
    n=$(q -c "$sql" 2>&1) || { TESTS+=("FAIL: $label: cannot list the temporary directory: ${n//$'\n'/ }"); log "${TESTS[-1]}"; return; }
    [ "$n" = "0 0" ] && break
    sleep 1 # a backend that just ended may still be removing its files
  done
  if [ "$n" = "0 0" ]; then
    TESTS+=("PASS: $label: temporary directory empty")
  else
    TESTS+=("FAIL: $label: temporary directory holds files (pg_ls_tmpdir, pg_ls_dir entries: $n): $(q -c "SELECT string_agg(f, ', ') FROM (SELECT f FROM pg_ls_dir('base/pgsql_tmp', true, false) f LIMIT 10) s")")
  fi
  log "${TESTS[-1]}"
}

# expect_error LABEL EXPECTED_ERROR SETS SQL: runs SQL under EXPLAIN ANALYZE (no rows
# to the client), then checks that the temporary directory is empty
expect_error() {
  local label="$1" want="$2" sets="$3" sql="$4" out rc t0 t1 node
  node=$(node_used "$(q -c "$sets" -c "EXPLAIN (COSTS OFF) $sql" 2>&1)")
  t0=$(date +%s.%N)
  out=$("${PSQL[@]}" -At -c "$sets" -c "EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) $sql" 2>&1); rc=$?
  t1=$(date +%s.%N)
  local wall; wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f s", b - a }')
  if [ "$rc" != 0 ] && grep -q "$want" <<<"$out"; then
    TESTS+=("PASS: $label: '$want' after $wall (plan: $node)")
  elif [ "$rc" = 0 ]; then
    TESTS+=("SKIP: $label: finished without the error in $wall (plan: $node), not exercised")
  else
    TESTS+=("FAIL: $label: unexpected error after $wall (plan: $node): $(grep -m1 ERROR <<<"$out")")
  fi
  log "${TESTS[-1]}"
  tmpdir_check "$label"
}

# check_digest WM SETS SQL KEYHASH -> "count rowhash keyhash" or NaN
check_digest() {
  q -c "$(session_sets "$1" "" "$2")" -c "SELECT count(*) || ' ' || coalesce(sum($ROWHASH), 0) || ' ' || coalesce(sum($4), 0)
    FROM (SELECT q.*, row_number() OVER () AS rn FROM ($3) q) s" 2>/dev/null || echo NaN
}

# Per cell (size/query/work_mem) and configuration: the times so far, the last plan,
# the last run's temp bytes; per cell: the last round's seconds, the results check
declare -A TIMES=() PLAN=() TEMP=() CELL_SECS=() RESULT=() PG_DIGEST=()

# run_cell N QI WI: one round of a cell, every configuration in turn
run_cell() {
  local n="$1" qi="$2" wi="$3" e name sql ci title sets before after res ms t0=$SECONDS
  e=${QUERIES[$qi]}; name=${e%%|*}; sql=${e#*|}; sql=${sql%%|*}; sql=${sql//\{T\}/bench_$n}
  for ci in "${!CONFIGS[@]}"; do
    title=${CONFIGS[$ci]%%|*}
    sets=$(session_sets "${WORK_MEMS[$wi]}" "" "${CONFIGS[$ci]#*|}")
    before=$(temp_bytes)
    res=$(measure "$sets" "$sql")
    after=$(temp_bytes)
    ms=${res%%|*}
    [[ $ms =~ ^[0-9.]+$ ]] && TIMES[$n/$qi/$wi/$ci]+="$ms "
    PLAN[$n/$qi/$wi/$ci]=${res#*|}
    TEMP[$n/$qi/$wi/$ci]=$(awk -v a="$before" -v b="$after" -v r=$((1 + MEASURE_WARMUP)) \
      'BEGIN { if (a ~ /^[0-9]+$/ && b ~ /^[0-9]+$/) print int((b - a) / r); else print "n/a" }')
    log "$name, work_mem $(wm_label "${WORK_MEMS[$wi]}"), $title: $ms ms, temp $(pretty_bytes "${TEMP[$n/$qi/$wi/$ci]}")"
  done
  CELL_SECS[$n/$qi/$wi]=$((SECONDS - t0))
}

# check_cell N QI WI: the results check of a cell (PostgreSQL's digest once per query)
check_cell() {
  local n="$1" qi="$2" wi="$3" e name sql key pg gp cnode tnode
  e=${QUERIES[$qi]}; name=${e%%|*}; sql=${e#*|}; key=${sql#*|}; sql=${sql%%|*}; sql=${sql//\{T\}/bench_$n}
  if [ -z "${PG_DIGEST[$n/$qi]:-}" ]; then
    PG_DIGEST[$n/$qi]=$(check_digest server "${CONFIGS[0]#*|}" "$sql" "$key")
    log "$name: check, ${CONFIGS[0]%%|*}: ${PG_DIGEST[$n/$qi]}"
  fi
  pg=${PG_DIGEST[$n/$qi]}
  gp=$(check_digest "${WORK_MEMS[$wi]}" "$GPUOPS_SETS" "$sql" "$key")
  log "$name: check, gpuops, work_mem $(wm_label "${WORK_MEMS[$wi]}"): $gp"
  if [ "$pg" = NaN ] || [ "$gp" = NaN ]; then RESULT[$n/$qi/$wi]="n/a (check failed)"
  elif [ "$pg" = "$gp" ]; then RESULT[$n/$qi/$wi]=MATCH
  else RESULT[$n/$qi/$wi]=MISMATCH
  fi
  # the check wraps the query: say so when its plan differs from the timed one
  cnode=$(node_used "$(q -c "$(session_sets "${WORK_MEMS[$wi]}" "" "$GPUOPS_SETS")" \
    -c "EXPLAIN (COSTS OFF) SELECT * FROM (SELECT q.*, row_number() OVER () AS rn FROM ($sql) q) s" 2>&1)")
  tnode=$(node_used "${PLAN[$n/$qi/$wi/1]:-}")
  if [ -n "${PLAN[$n/$qi/$wi/1]:-}" ] && [ "${cnode%% (*}" != "${tnode%% (*}" ]; then
    RESULT[$n/$qi/$wi]+=" (checked plan: $cnode)"
  fi
}

header=$(bench_header "gpuops: sorts larger than work_mem (issue 30)" \
  "server work_mem: $SERVER_WM; session work_mem per row: ${WORK_MEMS[*]}" \
  "configurations: $(for c in "${CONFIGS[@]}"; do printf '%s (%s); ' "${c%%|*}" "${c#*|}"; done | sed 's/; $//')" \
  "rounds: $BIG_RUNS at the server's work_mem, $SMALL_RUNS at the others (fewer, and checks skipped, past SPILL_BUDGET_S=$BUDGET s); median of EXPLAIN ANALYZE Execution Time, TIMING OFF" \
  "sessions: $([ "$MEASURE_WARMUP" = 1 ] && echo "each timed run after an untimed run of the same query in its session (SPILL_WARM=1)" || echo "each timed run in a new session (its start, a CUDA context, timed)")" \
  "ratio: ${CONFIGS[0]%%|*} time / gpuops time: above 1x gpuops is faster" \
  "temp bytes: pg_stat_database.temp_bytes spilled by the last gpuops run (in parentheses: by the last ${CONFIGS[0]%%|*} run)" \
  "$MEM_NOTE" \
  "results: order-sensitive digest of the gpuops output against PostgreSQL's (SPILL_CHECK=${SPILL_CHECK:-1})")
printf '%s\n\n' "$header"

HEAD_TABLE=$(
  cols=(query work_mem rows:)
  for c in "${CONFIGS[@]}"; do cols+=("${c%%|*} ms:"); done
  md_head "${cols[@]}" ratio: "gpuops plan" "spill info" "temp bytes:" "gpuops peak RSS:" results rounds:
)

rounds_of() { if [ "${WORK_MEMS[$1]}" = server ]; then echo "$BIG_RUNS"; else echo "$SMALL_RUNS"; fi; }

# over_budget N QI WI CONFIG_INDEX...: whether one more run of those configurations
# of the cell (estimated from their first run, the results check's extra work
# included) would end past SPILL_BUDGET_S
over_budget() {
  local cell="$1/$2/$3" ci est=0 t
  shift 3
  for ci in "$@"; do
    t=${TIMES[$cell/$ci]:-}
    est=$(awk -v e="$est" -v t="${t%% *}" 'BEGIN { printf "%d", e + (t ~ /^[0-9.]+$/ ? t / 1000 * 1.5 + 5 : 30) }')
  done
  [ $((SECONDS - START + est)) -gt "$BUDGET" ]
}

# report: the table of every cell so far, the tests, the plans, into OUTFILE (again
# after each phase, so that a run stopped from outside leaves what it measured);
# sets REPORT (the table and the tests)
report() {
  local n qi wi ci e name sql shown row vals nr t ms c gplan table=$HEAD_TABLE plans="" tests
  for n in "${SIZES[@]}"; do
    for qi in "${!QUERIES[@]}"; do
      e=${QUERIES[$qi]}; name=${e%%|*}; sql=${e#*|}; sql=${sql%%|*}; shown=${sql#*\{T\} }; sql=${sql//\{T\}/bench_$n}
      for wi in "${!WORK_MEMS[@]}"; do
        [ -n "${PLAN[$n/$qi/$wi/0]+set}" ] || continue
        row="| ${shown//|/\\|} | $(wm_label "${WORK_MEMS[$wi]}") | $n |"; vals=(); nr=0
        for ci in "${!CONFIGS[@]}"; do
          t=${TIMES[$n/$qi/$wi/$ci]:-}
          # shellcheck disable=SC2086 # the times, one a word
          ms=$(printf '%s\n' $t | grep . | median); vals+=("$ms")
          c=$(wc -w <<<"$t"); [ "$c" -gt "$nr" ] && nr=$c
          row+=" $(fmt_ms "$ms") |"
        done
        gplan=${PLAN[$n/$qi/$wi/1]:-}
        row+=" $(ratio "${vals[0]}" "${vals[1]}") | $(node_used "$gplan") | $(spill_info "$gplan") |"
        row+=" $(pretty_bytes "${TEMP[$n/$qi/$wi/1]:-}") ($(pretty_bytes "${TEMP[$n/$qi/$wi/0]:-}")) |"
        row+=" $(mem_of "$gplan") | ${RESULT[$n/$qi/$wi]:-not checked} | $nr |"
        table+=$'\n'"$row"
        plans+=$'\n'"### $name ($sql), work_mem $(wm_label "${WORK_MEMS[$wi]}"), gpuops (last run)"$'\n\n```\n'"$gplan"$'\n```\n'
      done
    done
  done
  tests=$(printf -- '- %s\n' "${TESTS[@]}")
  REPORT=$(printf '%s\n\n## Cleanup tests\n\n%s' "$table" "$tests")
  mkdir -p "$(dirname "$OUTFILE")" 2>/dev/null
  { printf '%s\n\n%s\n' "$header" "$REPORT"; printf '\n## gpuops plans\n%s' "$plans"; } > "$OUTFILE.tmp" \
    && mv "$OUTFILE.tmp" "$OUTFILE"
}

for n in "${SIZES[@]}"; do
  load_bench_table "$n" "$JOBS" || exit 1
  log "bench_$n ready"
  tmpdir_check "before the run, bench_$n"
  for qi in "${!QUERIES[@]}"; do
    for wi in "${!WORK_MEMS[@]}"; do run_cell "$n" "$qi" "$wi"; done
  done
  report
  for wi in "${!WORK_MEMS[@]}"; do
    wl=$(wm_label "${WORK_MEMS[$wi]}")
    expect_error "cancel, ORDER BY k, bench_$n, work_mem $wl" "canceling statement due to statement timeout" \
      "$(session_sets "${WORK_MEMS[$wi]}" 1500ms "$GPUOPS_SETS")" "SELECT * FROM bench_$n ORDER BY k"
    # OFFSET 0 keeps the failing qual above the sort: the error comes while the sorted rows are returned
    expect_error "error late in the output, bench_$n, work_mem $wl" "division by zero" \
      "$(session_sets "${WORK_MEMS[$wi]}" "" "$GPUOPS_SETS")" \
      "SELECT * FROM (SELECT * FROM bench_$n ORDER BY k OFFSET 0) s WHERE 1 / (s.id - $n) IS NOT NULL"
  done
  report
  if [ "${SPILL_CHECK:-1}" = 1 ]; then
    for qi in "${!QUERIES[@]}"; do
      for wi in "${!WORK_MEMS[@]}"; do
        pgci=(); [ -z "${PG_DIGEST[$n/$qi]:-}" ] && pgci=(0)
        if over_budget "$n" "$qi" "$wi" 1 "${pgci[@]}"; then
          RESULT[$n/$qi/$wi]="not checked (SPILL_BUDGET_S)"
          log "check of ${QUERIES[$qi]%%|*}, work_mem $(wm_label "${WORK_MEMS[$wi]}"): skipped (SPILL_BUDGET_S=$BUDGET)"
          continue
        fi
        check_cell "$n" "$qi" "$wi"
      done
    done
    report
  fi
  maxr=$BIG_RUNS; [ "$SMALL_RUNS" -gt "$maxr" ] && maxr=$SMALL_RUNS
  for ((r = 2; r <= maxr; r++)); do
    for qi in "${!QUERIES[@]}"; do
      for wi in "${!WORK_MEMS[@]}"; do
        [ "$r" -le "$(rounds_of "$wi")" ] || continue
        last=${CELL_SECS[$n/$qi/$wi]:-0}
        if [ $((SECONDS - START + last)) -gt "$BUDGET" ]; then
          log "round $r of ${QUERIES[$qi]%%|*}, work_mem $(wm_label "${WORK_MEMS[$wi]}"): skipped (SPILL_BUDGET_S=$BUDGET)"
          continue
        fi
        log "round $r"
        run_cell "$n" "$qi" "$wi"
      done
    done
  done
  tmpdir_check "after the run, bench_$n"
  report
done

echo
printf '%s\n' "$REPORT"
log "done"
echo && echo "written to $OUTFILE"
