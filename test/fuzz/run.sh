#!/usr/bin/env bash
# test/fuzz/run.sh [--seeds "1 2 3"] [--queries N] [--seconds S] [--device cpu|gpu]
# Runs fuzz.py once per seed (N queries each) against a throwaway cluster
# like make check's (test/lib.sh), or, with GPUOPS_FUZZ_EXISTING=1, against
# the server in PGHOST/PGPORT.  The last line sums the seeds' "fuzz:" lines;
# the exit status is 0 only when every seed passed.
set -uo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$REPO/test/lib.sh"
SEEDS="1 2 3" QUERIES=1000 DEVICE=cpu SECS=0
while [ $# -gt 0 ]; do
  case "$1" in
    --seeds) SEEDS=$2; shift 2 ;;
    --queries) QUERIES=$2; shift 2 ;;
    --device) DEVICE=$2; shift 2 ;;
    --seconds) SECS=$2; shift 2 ;;
    *) echo "usage: $0 [--seeds \"1 2 3\"] [--queries N] [--device cpu|gpu]" >&2; exit 2 ;;
  esac
done
OUTDIR=${GPUOPS_FUZZ_OUT:-$REPO/test/results/fuzz}
mkdir -p "$OUTDIR"
PY=/usr/bin/python3; [ -x "$PY" ] || PY=python3
if [ "${GPUOPS_FUZZ_EXISTING:-0}" != 1 ]; then
  clear_pg_env
  find_pg || exit 1
  PORT=${GPUOPS_FUZZ_PORT:-54349}
  TMP=$(mktemp -d /tmp/gpuops-fuzz.XXXXXX)
  # the server log is kept beside the seeds' outputs (test/cassert.sh reads it)
  trap 'stop_cluster; cp "${SERVER_LOG:-}" "$OUTDIR/server.log" 2>/dev/null; rm -rf "$TMP"' EXIT
  start_cluster "$TMP" "$PORT" "gpuops.device = $DEVICE" || exit 1
  export PGHOST=$SOCK_DIR PGPORT=$PORT PGUSER=postgres PGDATABASE=postgres PSQL="$PG_BINDIR/psql"
fi
export PGOPTIONS="-c gpuops.device=$DEVICE"
rc=0 total=0 mism=0 errs=0 crashes=0
for s in $SEEDS; do
  "$PY" -u "$REPO/test/fuzz/fuzz.py" --seed "$s" --queries "$QUERIES" --seconds "$SECS" --out "$OUTDIR/seed$s" 2>&1 | tee "$OUTDIR/seed$s.log" | tail -n 25
  [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
  line=$(grep '^fuzz: seed' "$OUTDIR/seed$s.log" | tail -1)
  [ -n "$line" ] || { rc=1; continue; }
  total=$((total + $(sed -E 's/.* ([0-9]+) queries checked.*/\1/' <<<"$line")))
  mism=$((mism + $(sed -E 's/.* ([0-9]+) mismatches.*/\1/' <<<"$line")))
  errs=$((errs + $(sed -E 's/.* ([0-9]+) one-side.*/\1/' <<<"$line")))
  crashes=$((crashes + $(sed -E 's/.* ([0-9]+) crashes.*/\1/' <<<"$line")))
done
if [ -n "${SERVER_LOG:-}" ] && [ -f "$SERVER_LOG" ] && grep -qE 'terminated by signal|PANIC' "$SERVER_LOG"; then
  rc=1; crashes=$((crashes + $(grep -cE 'terminated by signal|PANIC' "$SERVER_LOG")))
fi
echo "fuzz: seeds $SEEDS, $total queries ($DEVICE), $mism mismatches, $errs one-side or different errors, $crashes crashes"
exit $rc
