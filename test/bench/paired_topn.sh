#!/bin/bash
# paired_topn.sh [ROWS] [ROUNDS] [LIMIT]: paired.sh for ORDER BY k LIMIT n of
# bench_<ROWS> (default 50000000 rows, 5 rounds, LIMIT 100).
ROWS=${1:-50000000}
exec bash "$(dirname "$0")/paired.sh" "${2:-5}" \
  "SELECT * FROM bench_${ROWS} ORDER BY k LIMIT ${3:-100}"
