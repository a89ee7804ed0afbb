#!/usr/bin/env bash
# make demo: builds and installs gpuops, starts a throwaway cluster, loads
# DEMO_ROWS rows (default 5000000) and runs "SELECT * FROM demo ORDER BY k"
# with gpuops off and on: the plans (EXPLAIN ANALYZE) and the times.
# Uses the GPU when gpuops.device_info() finds one, else gpuops' CPU backend.
#
# Environment: DEMO_ROWS, PG_CONFIG, GPUOPS_DEMO_PORT (54330),
# GPUOPS_SKIP_SETUP=1 / GPUOPS_SKIP_BUILD=1, GPUOPS_TMPDIR (/tmp).
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$REPO/test/lib.sh"

ROWS=${DEMO_ROWS:-5000000}
PORT=${GPUOPS_DEMO_PORT:-54330}
TMP=""
[[ $ROWS =~ ^[1-9][0-9]*$ ]] || { warn "DEMO_ROWS must be a positive integer"; exit 2; }

cleanup() {
  stop_cluster
  if [ -n "$TMP" ] && [ -d "$TMP" ]; then rm -rf "$TMP"; fi
  TMP=""
}
trap cleanup EXIT
trap 'exit 130' INT TERM
die() { warn "demo.sh: $*"; exit 1; }

clear_pg_env
if [ "${GPUOPS_SKIP_SETUP:-0}" != 1 ]; then
  bash "$REPO/test/setup.sh" || die "setup (test/setup.sh) failed"
fi
find_pg || die "PostgreSQL 15 not found"
if [ "${GPUOPS_SKIP_BUILD:-0}" != 1 ]; then
  mkdir -p "$REPO/test/results" || die "cannot create $REPO/test/results"
  build_install "$REPO" "$REPO/test/results/build.log" || die "build/install failed"
fi

TMP=$(mktemp -d "${GPUOPS_TMPDIR:-/tmp}/gpuops-demo.XXXXXX") || die "mktemp failed"
log "starting a throwaway cluster in $TMP (port $PORT)"
start_cluster "$TMP" "$PORT" "shared_buffers = 1GB" "work_mem = 256MB" "maintenance_work_mem = 512MB" \
  "max_wal_size = 4GB" "synchronous_commit = off" "jit = off" || die "the server did not start (log above)"

if ! { tpsql postgres -c 'CREATE DATABASE gpuops_demo' && tpsql gpuops_demo -c 'CREATE EXTENSION gpuops'; }; then
  die "could not create the extension"
fi

IFS='|' read -r gpu devname backend_reason < <(tpsql gpuops_demo -At -F '|' -c \
  "select gpu_available, coalesce(device_name, ''), coalesce(reason, '') from gpuops.device_info()")
log ""
if [ "${gpu:-}" = t ]; then
  DEVICE=gpu
  log "running on the GPU: $devname"
else
  DEVICE=cpu
  log "NOTE: no usable GPU here${backend_reason:+ ($backend_reason)};"
  log "      gpuops runs its CPU backend (gpuops.device = cpu): same plan node, sorting on the CPU."
fi
tpsql postgres -c "ALTER DATABASE gpuops_demo SET gpuops.device = $DEVICE" || die "ALTER DATABASE failed"
tpsql gpuops_demo -At -c "select 'gpuops: ' || gpuops.version() || ', backend: ' || backend from gpuops.device_info()"

log ""
log "loading $ROWS rows into table demo (id, k int8, g int4, v float8) ..."
SECONDS=0
tpsql gpuops_demo -c "create table demo as
  select i as id, (random()*1e9)::int8 as k, (random()*1000)::int4 as g, (random()*1e6)::float8 as v
    from generate_series(1, $ROWS) i" -c 'vacuum analyze demo' || die "loading failed"
log "loaded in ${SECONDS}s ($(tpsql gpuops_demo -At -c "select pg_size_pretty(pg_table_size('demo'))"))"

QUERY='select * from demo order by k'
declare -A MS PLAN_HAS
run_one() { # run_one on|off
  local mode="$1" out ms
  log ""
  log "=== gpuops.enabled = $mode: EXPLAIN (ANALYZE, COSTS OFF) $QUERY"
  out=$(tpsql gpuops_demo -c "set gpuops.enabled = $mode" \
          -c "explain (analyze, costs off, timing off) $QUERY" 2>&1) || { printf '%s\n' "$out"; die "EXPLAIN failed"; }
  printf '%s\n' "$out"
  if grep -q 'GpuSort' <<<"$out"; then PLAN_HAS[$mode]=yes; else PLAN_HAS[$mode]=no; fi
  # the real query, result discarded on the server side (COPY to /dev/null),
  # so the time is the executor's, not the client transfer's
  out=$(tpsql gpuops_demo -c "set gpuops.enabled = $mode" -c '\timing on' \
          -c "copy ($QUERY) to '/dev/null'" 2>&1) || { printf '%s\n' "$out"; die "query failed"; }
  ms=$(sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' <<<"$out" | tail -n 1)
  MS[$mode]=${ms:-0}
  log "time (copy ($QUERY) to '/dev/null'): ${MS[$mode]} ms"
}
run_one off
run_one on

log ""
[ "${PLAN_HAS[on]}" = yes ] || log "NOTE: with gpuops.enabled = on the plan has no GpuSort node: gpuops did not take this sort."
summary=$(awk -v a="${MS[off]}" -v b="${MS[on]}" -v n="$ROWS" -v dev="$DEVICE" 'BEGIN {
  r = (b > 0) ? a / b : 0;
  printf "SUMMARY: ORDER BY k over %d rows: PostgreSQL %.0f ms, gpuops (%s backend) %.0f ms: %.2fx %s",
         n, a, (dev == "gpu" ? "GPU" : "CPU"), b, (r >= 1 ? r : (r > 0 ? 1 / r : 0)), (r >= 1 ? "faster" : "slower") }')
log "$summary"
