#!/bin/bash
# paired_join.sh [ROWS] [ROUNDS]: paired.sh for the count(*) join of
# bench_<ROWS> with bench_dim (default 50000000 rows, 5 rounds).
ROWS=${1:-50000000}
exec bash "$(dirname "$0")/paired.sh" "${2:-5}" \
  "SELECT count(*) FROM bench_${ROWS} b JOIN bench_dim d ON b.g = d.id"
