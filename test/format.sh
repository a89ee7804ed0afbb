#!/usr/bin/env bash
# test/format.sh: the C++ and CUDA of src/, cuda/ and test/device/ against
# .clang-format (make format, make format-check; no PostgreSQL needed).
#
#   bash test/format.sh           formats every file in place
#   bash test/format.sh --check   changes nothing; lists the files clang-format
#                                 would change, with the start of their diffs,
#                                 and fails if there is one
#
# clang-format is Debian 12's package "clang-format" (version 14; test/setup.sh
# installs it); another version may format differently from CI's.
# Last line (--check), as .ci/run's jobs print theirs:
#   format: 1 passed, 0 failed (N files as .clang-format says; clang-format V)
#   format: 0 passed, 1 failed (N of M files differ; ...)
# Environment: CLANG_FORMAT (clang-format), GPUOPS_FORMAT_DIFF_LINES (lines of
# diff shown at most, 200).
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO" || exit 2
CLANG_FORMAT=${CLANG_FORMAT:-clang-format}
DIFF_LINES=${GPUOPS_FORMAT_DIFF_LINES:-200}
check=false
case "${1:-}" in
  --check) check=true ;;
  "") ;;
  *) echo "usage: bash test/format.sh [--check]" >&2; exit 2 ;;
esac

fail() {  # fail MESSAGE: the check cannot run
  echo "format.sh: $1" >&2
  $check && echo "format: 0 passed, 1 failed ($1)"
  exit 2
}

command -v "$CLANG_FORMAT" >/dev/null 2>&1 ||
  fail "$CLANG_FORMAT not found: bash test/setup.sh installs it (apt-get install clang-format)"
[ -f .clang-format ] || fail "no .clang-format in $REPO"
version=$("$CLANG_FORMAT" --version | sed -n 's/.*clang-format version \([0-9][0-9.]*\).*/\1/p')
[ "${version%%.*}" = 14 ] ||
  echo "format.sh: warning: clang-format ${version:-(unknown version)}; CI's is 14 (Debian 12), whose output may differ" >&2

# every C, C++ and CUDA source and header (test/device/build holds objects only)
mapfile -t files < <(find src cuda test/device -path test/device/build -prune -o -type f \
  \( -name '*.c' -o -name '*.h' -o -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' -o -name '*.cuh' \) \
  -print | LC_ALL=C sort)
[ "${#files[@]}" -gt 0 ] || fail "no sources found under src/ cuda/ test/device/"

if ! $check; then
  printf '%s\0' "${files[@]}" | xargs -0 "$CLANG_FORMAT" -i --style=file ||
    { echo "format.sh: $CLANG_FORMAT failed" >&2; exit 1; }
  echo "format.sh: formatted ${#files[@]} files (clang-format $version)"
  exit 0
fi

# One run over all files: each place that would change is reported as
# "FILE:LINE:COL: error: code should be clang-formatted"; count them by file.
out=$(printf '%s\0' "${files[@]}" |
  xargs -0 "$CLANG_FORMAT" --dry-run --Werror --ferror-limit=0 --style=file 2>&1)
rc=$?
declare -A places=()
re='^([^:]+):[0-9]+:[0-9]+: (error|warning): code should be clang-formatted'
while IFS= read -r line; do
  [[ $line =~ $re ]] && places[${BASH_REMATCH[1]}]=$((${places[${BASH_REMATCH[1]}]:-0} + 1))
done <<<"$out"
if [ "$rc" -ne 0 ] && [ "${#places[@]}" -eq 0 ]; then
  printf '%s\n' "$out" | tail -n 20 >&2
  fail "$CLANG_FORMAT exited with status $rc"
fi

if [ "${#places[@]}" -eq 0 ]; then
  echo "format: 1 passed, 0 failed (${#files[@]} files as .clang-format says; clang-format $version)"
  exit 0
fi
mapfile -t bad < <(printf '%s\n' "${!places[@]}" | LC_ALL=C sort)
echo "== files that clang-format would change (places in each):"
for f in "${bad[@]}"; do echo "  $f: ${places[$f]}"; done
echo "== the start of the diffs (make format applies them; clang-format -i FILE one file):"
shown=0
for f in "${bad[@]}"; do
  [ "$shown" -lt "$DIFF_LINES" ] || { echo "... (more; GPUOPS_FORMAT_DIFF_LINES=$DIFF_LINES)"; break; }
  d=$(diff -u --label "a/$f" --label "b/$f" "$f" <("$CLANG_FORMAT" --style=file "$f"))
  printf '%s\n' "$d" | head -n $((DIFF_LINES - shown))
  shown=$((shown + $(printf '%s\n' "$d" | wc -l)))
done
echo "format: 0 passed, 1 failed (${#bad[@]} of ${#files[@]} files differ from .clang-format; clang-format $version)"
exit 1
