# Shared by the benchmark scripts (sourced): medians of EXPLAIN ANALYZE
# runs, ratios, and which gpuops node a plan used.  Needs PSQL (an array:
# the psql command) and RUNS.

median() { # numbers on stdin -> median
  sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) { print "NaN"; exit }
    if (NR % 2) print a[(NR + 1) / 2]; else printf "%.3f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

# measure CONFIG_SETS SQL -> prints "median_ms|plan_of_last_run"
measure() {
  local sets="$1" sql="$2" out times=() r ms
  for ((r = 0; r < RUNS; r++)); do
    out=$("${PSQL[@]}" -At -c "$sets" -c "EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) $sql" 2>&1) \
      || { echo "bench.sh: failed: $sets; $sql" >&2; printf '%s\n' "$out" | tail -n 5 >&2; echo "NaN|"; return; }
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
