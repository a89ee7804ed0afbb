#!/usr/bin/env bash
# Draws the README's benchmark chart: per query, gpuops' speed-up over
# PostgreSQL serial and over PostgreSQL with 8 workers (log scale; 1x is
# PostgreSQL's own time), from a results TSV.
#   bash test/bench/plot.sh [RESULTS.tsv [OUT.png]]
# Defaults: test/bench/results/latest.tsv -> doc/img/bench.png.
# The TSV (tab-separated, '#' lines are comments, one header line):
#   id  label  rows  pg_serial_ms  pg_workers_ms  gpuops_ms  gpuops_plan  date  card
# test/bench/results/latest.tsv holds the numbers of the README's table, each
# copied from doc/benchmarks.md; test/bench/results/olap.tsv the SSB and
# TPC-H-shaped queries (-> doc/img/olap.png). A time not measured is "-":
# its bar is left out, and a column of them is left out of the chart. gnuplot (Debian's gnuplot-nox) is installed
# with apt-get when missing and this runs as root; otherwise it says so.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
IN=${1:-$REPO/test/bench/results/latest.tsv}
OUT=${2:-$REPO/doc/img/bench.png}

[ -r "$IN" ] || { echo "plot.sh: no results file $IN" >&2; exit 1; }
if ! command -v gnuplot >/dev/null 2>&1; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "plot.sh: installing gnuplot-nox" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends gnuplot-nox >/dev/null \
      || { apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive \
             apt-get install -y --no-install-recommends gnuplot-nox >/dev/null; }
  else
    echo "plot.sh: gnuplot is missing (apt-get install gnuplot-nox, as root)" >&2
    exit 1
  fi
fi

# the data rows only (no comments, no header), and the cards and dates they
# were measured on, for the title
DATA=$(mktemp "${TMPDIR:-/tmp}/gpuops-plot.XXXXXX")
trap 'rm -f "$DATA"' EXIT
grep -v '^#' "$IN" | tail -n +2 | grep -v '^[[:space:]]*$' > "$DATA"
[ -s "$DATA" ] || { echo "plot.sh: no data rows in $IN" >&2; exit 1; }
CARDS=$(cut -f9 "$DATA" | sort -u | paste -sd/ -)
DATES=$(cut -f8 "$DATA" | sort -u | sed -n '1p;$p' | paste -sd' ' - | sed 's/ / to /')
ROWS=$(wc -l < "$DATA")
SERIAL="\"$DATA\" using (\$4/\$6):xtic(2) title \"vs PostgreSQL serial\" lc rgb \"#9ecae1\", \"\" using (\$5/\$6)"
if ! cut -f4 "$DATA" | grep -qv '^-$'; then SERIAL="\"$DATA\" using (\$5/\$6):xtic(2)"; fi
mkdir -p "$(dirname "$OUT")"

gnuplot <<EOF
set terminal pngcairo size 1100,$((260 + 34 * ROWS)) font "sans,11"
set output "$OUT"
set datafile separator "\t"
set datafile missing "-"
set title "gpuops vs PostgreSQL 15, execution time ratio (NVIDIA $CARDS, $DATES)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set logscale y 10
set yrange [0.1:*]
set ylabel "speed-up (PostgreSQL ms / gpuops ms), log scale"
set grid ytics
set key top left
set xtics rotate by -30 left noenhanced
set bmargin 9
set rmargin 10
set arrow from graph 0, first 1 to graph 1, first 1 nohead dashtype 2 lc rgb "#444444"
plot $SERIAL title "vs PostgreSQL, 8 workers" lc rgb "#08519c"
EOF
echo "plot.sh: wrote $OUT ($ROWS queries, from $IN)"
