#!/usr/bin/env bash
# Regression suite on the GPU machine, inside the devkit wrapper:
#   .devkit/pgrun.sh -c gpuops.device=gpu -- bash test/gpu_check.sh
# pgrun.sh provides PATH (psql), PGHOST, PGPORT, PGUSER, PGDATABASE and
# $PGXS_REGRESS. Needs only bash, psql and pg_regress (no pgTAP there).
# Output goes to ${OUT:-/tmp}/regress; the last line is "N passed, N failed".
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO" || exit 1
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$REPO/test/lib.sh"

if [ -z "${PGXS_REGRESS:-}" ] || [ ! -x "$PGXS_REGRESS" ]; then
  echo "gpu_check.sh: \$PGXS_REGRESS is not set or not executable; run it through .devkit/pgrun.sh"
  echo "0 passed, 1 failed"; exit 1
fi
PSQL=$(command -v psql) || { echo "gpu_check.sh: psql not in PATH"; echo "0 passed, 1 failed"; exit 1; }
SCHEDULE=${GPU_CHECK_SCHEDULE:-test/schedule}   # a part of the suite: a schedule file
# GPU_CHECK_DB: the database (two parts of the suite may run side by side)
OUTDIR=${GPU_CHECK_OUT:-${OUT:-/tmp}/regress}
mkdir -p "$OUTDIR" || { echo "gpu_check.sh: cannot create $OUTDIR"; echo "0 passed, 1 failed"; exit 1; }
rm -rf "$OUTDIR/results" "$OUTDIR/regression.diffs" "$OUTDIR/regression.out"

echo "== gpuops regression suite on $(uname -n) (server ${PGHOST:-?}:${PGPORT:-?}, results in $OUTDIR)"
"$PSQL" -X -At -c "select 'server: ' || version()" -c "select 'gpuops.device = ' || current_setting('gpuops.device', true)" 2>&1

# Not --use-existing: with it pg_regress neither creates the database nor runs
# --load-extension. Without it, it (re)creates gpuops_regress on the running
# server named by PGHOST/PGPORT and creates the extension there. --bindir points
# it at the psql in PATH (its compiled-in bindir is the staging prefix).
"$PGXS_REGRESS" --inputdir=. --outputdir="$OUTDIR" --bindir="$(dirname "$PSQL")" \
  --load-extension=gpuops --schedule="$SCHEDULE" --dbname="${GPU_CHECK_DB:-gpuops_regress}" 2>&1 | tee "$OUTDIR/pg_regress.log"
rc=${PIPESTATUS[0]}

count_regress "$OUTDIR/pg_regress.log"
reconcile_regress "$SCHEDULE" "$rc"
[ "$REG_FAILED" -gt 0 ] && print_diffs "$OUTDIR"

echo "== gpuops.device_info()"
"$PSQL" -X -x -d "${GPU_CHECK_DB:-gpuops_regress}" -c "select * from gpuops.device_info()" 2>&1
"$PSQL" -X -At -d "${GPU_CHECK_DB:-gpuops_regress}" -c "select gpuops.version()" 2>&1

echo "$REG_PASSED passed, $REG_FAILED failed"
[ "$REG_FAILED" -eq 0 ]
