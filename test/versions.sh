#!/usr/bin/env bash
# test/versions.sh [--cassert] [MAJOR...]: gpuops's tests against PostgreSQL
# versions other than the system's, each built from Debian's source package
# (test/pgbuild.sh; cached per version and options) or, where that cannot be
# downloaded, assembled from prebuilt binaries and Debian's binary headers
# (test/pgbinary.sh, through test/pgbuild.sh), one source tree for all.
# MAJORs: GPUOPS_VERSIONS, default "16 17 18".  test/cassert.sh runs it with
# --cassert and the system's version.
#
# For each version:
#   1. PostgreSQL built (test/pgbuild.sh MAJOR [--cassert]).  The builds run
#      one after another in the background, a version ahead of the tests: the
#      tests of one version wait on their server more than on the CPU, and
#      the next version's build (at a lower priority) takes what they leave.
#   2. gpuops built and tested by `make check PG_CONFIG=<that pg_config>` in
#      a copy of the working tree (tracked and untracked, not ignored files),
#      so that the checkout's own build is neither used nor disturbed.  The
#      device library (cuda/, which never sees PostgreSQL's headers) is
#      carried over from the checkout when it is there, and built once here
#      otherwise (make rebuilds what of it is older than its sources).
#   3. Every server log of the run searched for crashes and, with
#      assertions, assertion failures and the memory and resource checks'
#      warnings.
# Which of make check's suites: GPUOPS_VERSIONS_SUITES=regress (default:
# pg_regress and pgTAP, the tests that see PostgreSQL's API; the device
# engine's tests do not depend on the server, and stress, fuzz and
# PostgreSQL's own suite run against the system's version and under
# assertions) or all (every suite; --cassert's default).
#
# One line per version, "pgNN: N passed, N failed (PostgreSQL x.y, ...)",
# and the last line:
#   versions: N passed, N failed (PostgreSQL 16.x, 17.x, 18.x)
# (make check's tests, plus one per version for the server logs, or one
# failure for a version that could not be built); exit status 0 only when
# nothing failed.
#
# Environment:
#   GPUOPS_VERSIONS          the majors (16 17 18)
#   GPUOPS_VERSIONS_LABEL    the summary's first word (versions; cassert with --cassert)
#   GPUOPS_VERSIONS_PORT     first port; each version takes 4 (54449)
#   GPUOPS_VERSIONS_RESULTS  outputs (<repo>/test/results/versions): per
#                            version pgNN/ (build logs, check/ with make
#                            check's results and server logs, check.log)
#   GPUOPS_VERSIONS_SUITES   regress or all (see above)
#   GPUOPS_VERSIONS_REUSE_DEVICE=0  build the device library afresh in each copy
#   GPUOPS_VERSIONS_KEEP=1   keep the copies of the tree (their paths are printed)
#   GPUOPS_VERSIONS_HEADERS_ONLY=0  a version that can be neither built nor
#                            assembled fails; by default src/ is then at least
#                            compiled against the headers of Debian's binary
#                            postgresql-server-dev-MAJOR (one test; no tests run)
#   GPUOPS_PGBUILD_*, GPUOPS_CASSERT_PREFIX, PGSUITE_CACHE: as for test/pgbuild.sh
#   GPUOPS_SKIP_SETUP, GPUOPS_TEST_USER, GPUOPS_TEST_TIMEOUT: as for make check.
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$REPO/test/lib.sh"

CASSERT=0 PGB_ARGS=()
if [ "${1:-}" = --cassert ]; then CASSERT=1 PGB_ARGS=(--cassert); shift; fi
if [ "$#" -gt 0 ]; then MAJORS=("$@"); else read -r -a MAJORS <<<"${GPUOPS_VERSIONS:-16 17 18}"; fi
if [ "$CASSERT" = 1 ]; then LABEL=${GPUOPS_VERSIONS_LABEL:-cassert} SUITES=${GPUOPS_VERSIONS_SUITES:-all}
else LABEL=${GPUOPS_VERSIONS_LABEL:-versions} SUITES=${GPUOPS_VERSIONS_SUITES:-regress}; fi
PORT=${GPUOPS_VERSIONS_PORT:-54449}
RESULTS=${GPUOPS_VERSIONS_RESULTS:-$REPO/test/results/versions}
# what a server log must not show: crashes, assertion failures (the TRAP line
# is followed by a backtrace), and the warnings of the memory-context and
# resource-owner checks of a build with assertions
LOG_PATTERN='TRAP:|terminated by signal|terminated by exception|PANIC:|problem in (alloc set|slab|generation)|write past chunk end|WARNING: .*(leak|still referenced)'

W="" TREES=() BUILDER=""
cleanup() {
  [ -n "$BUILDER" ] && kill "$BUILDER" 2>/dev/null && wait "$BUILDER" 2>/dev/null
  local t
  for t in "${TREES[@]}"; do
    [ -d "$t" ] || continue
    if [ "${GPUOPS_VERSIONS_KEEP:-0}" = 1 ]; then log "$LABEL: kept the copy of the tree in $t"; else rm -rf "$t"; fi
  done
  [ -n "$W" ] && rm -rf "$W"
  W="" TREES=() BUILDER=""
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Run from make (make check-cassert), this script inherits make's MAKELEVEL
# and MAKEFLAGS; the makes below are not the outer make's sub-makes.
unset MAKELEVEL MAKEFLAGS MFLAGS MAKEOVERRIDES
clear_pg_env
T_ALL=$SECONDS PASSED=0 FAILED=0 NAMES=() LINES=()
mkdir -p "$RESULTS" || { echo "$LABEL: cannot create $RESULTS"; echo "$LABEL: 0 passed, 1 failed"; exit 1; }
W=$(mktemp -d "${TMPDIR:-/tmp}/gpuops-versions.XXXXXX") || { echo "$LABEL: 0 passed, 1 failed (mktemp)"; exit 1; }
log "== gpuops against PostgreSQL ${MAJORS[*]}${PGB_ARGS[*]:+ with assertions} ($REPO; suites: $SUITES)"

# packages once (pgTAP, clang-format, ...): the builds and the checks below skip it
if [ "${GPUOPS_SKIP_SETUP:-0}" != 1 ]; then
  bash "$REPO/test/setup.sh" || warn "$LABEL: setup (test/setup.sh) failed"
fi

# 1. the builds, in order, in the background: $W/pgNN.pgc (the pg_config)
# or $W/pgNN.failed when done
(
  for m in "${MAJORS[@]}"; do
    mkdir -p "$RESULTS/pg$m"
    t=$SECONDS
    pgc=$(GPUOPS_PGBUILD_LOGS="$RESULTS/pg$m" bash "$REPO/test/pgbuild.sh" "$m" "${PGB_ARGS[@]}" \
            2> >(tee "$RESULTS/pg$m/pgbuild.log" >&2) | tail -n 1)
    echo "$((SECONDS - t))" > "$W/pg$m.seconds"
    if [ -x "$pgc" ]; then echo "$pgc" > "$W/pg$m.pgc"; else : > "$W/pg$m.failed"; fi
  done
) &
BUILDER=$!

# a copy of the working tree: what git tracks or would track (no build
# outputs), mtimes kept; and the device library's objects when they are there
copy_tree() {  # copy_tree DIR
  if git -C "$REPO" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    (cd "$REPO" && git ls-files -z --cached --others --exclude-standard |
       while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
       tar --format=posix --null -T - -cf -) | tar -C "$1" -xf - || return 1
  else
    (cd "$REPO" && tar --format=posix --exclude=./test/results --exclude=./.devkit --exclude=./.git \
       --exclude='*.o' --exclude='*.a' --exclude='*.so' --exclude='*.bc' -cf - .) | tar -C "$1" -xf - || return 1
  fi
  if [ "${GPUOPS_VERSIONS_REUSE_DEVICE:-${GPUOPS_CASSERT_REUSE_DEVICE:-1}}" = 1 ]; then
    local from=$REPO
    # the first copy's device library, once built, serves the others
    [ -f "$from/cuda/libgpuops_device.a" ] || from=${DEVICE_FROM:-}
    if [ -n "$from" ] && [ -f "$from/cuda/libgpuops_device.a" ]; then
      (cd "$from" && shopt -s nullglob && tar --format=posix -cf - cuda/libgpuops_device.a cuda/.arch[s] cuda/*/*.cu.o cuda/*/*.host.o) |
        tar -C "$1" -xf - && log "$LABEL: the device library (cuda/, no PostgreSQL headers) carried over from $from"
    fi
  fi
}

# 2. and 3. one version: sets the counts and its line
SUITE_SKIPS=(GPUOPS_SKIP_DEVICE=1 GPUOPS_SKIP_STRESS=1 GPUOPS_SKIP_FUZZ=1 GPUOPS_SKIP_PGSUITE=1)
[ "$SUITES" = all ] && SUITE_SKIPS=()
test_version() {  # test_version MAJOR PG_CONFIG PORT
  local m=$1 pgc=$2 port=$3 out="$RESULTS/pg$1" tree rc last p f t
  local re='^([0-9]+) passed, ([0-9]+) failed$'
  VTEXT="PostgreSQL $("$pgc" --version | awk '{print $2}')${PGB_ARGS[*]:+ with assertions}"
  # a PostgreSQL assembled from prebuilt parts (test/pgbinary.sh) says which
  f="$(dirname "$(dirname "$pgc")")/.gpuops-origin"
  [ -f "$f" ] && VTEXT="$VTEXT: $(cat "$f")"
  tree=$(mktemp -d "${GPUOPS_TMPDIR:-/tmp}/gpuops-pg$m-tree.XXXXXX") || { VP=0 VF=1 VNOTE="mktemp failed"; return; }
  TREES+=("$tree")
  chmod 755 "$tree"
  copy_tree "$tree" || { VP=0 VF=1 VNOTE="could not copy the tree"; return; }
  rm -rf "$out/check"; mkdir -p "$out/check"
  t=$SECONDS
  log "$LABEL: make check PG_CONFIG=$pgc in $tree (ports $port-$((port + 3)), results in $out/check)"
  (cd "$tree" && env PG_CONFIG="$pgc" GPUOPS_TEST_PORT="$port" GPUOPS_RESULTS="$out/check" GPUOPS_SKIP_SETUP=1 \
     "${SUITE_SKIPS[@]}" make --no-print-directory check PG_CONFIG="$pgc") 2>&1 | tee "$out/check.log"
  rc=${PIPESTATUS[0]}
  VCHECK=$((SECONDS - t))
  [ -f "$tree/cuda/libgpuops_device.a" ] && DEVICE_FROM=$tree
  # check.sh's last line (make may print its own error after it)
  last=$(grep -E "$re" "$out/check.log" | tail -n 1)
  if [[ $last =~ $re ]]; then
    p=${BASH_REMATCH[1]} f=${BASH_REMATCH[2]}
    [ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && f=1
  else
    warn "$LABEL: make check did not end with \"N passed, N failed\" (exit $rc)"
    p=0 f=1
  fi
  # the server logs
  local logs bad=0 n x
  mapfile -t logs < <(find "$out/check" -name 'server*.log' -type f | sort)
  for x in "${logs[@]}"; do
    n=$(grep -cE "$LOG_PATTERN" "$x")
    [ "$n" -eq 0 ] && continue
    bad=$((bad + n))
    log "--- ${x#"$out"/}: $n lines show a crash, an assertion failure or a memory/resource check; the first ones, with what follows:"
    grep -nE -A 12 "$LOG_PATTERN" "$x" | head -n 150
    grep -nE -A 1 'terminated by signal|terminated by exception' "$x" | grep -E 'Failed process was running' | head -n 10
  done
  if [ "${#logs[@]}" -eq 0 ]; then
    log "$LABEL: server logs: none found under $out/check"; f=$((f + 1))
  elif [ "$bad" -eq 0 ]; then
    log "$LABEL: server logs: ${#logs[@]} searched, no crash, assertion failure or memory/resource warning"; p=$((p + 1))
  else
    log "$LABEL: server logs: $bad lines of crashes, assertion failures or memory/resource warnings (above)"; f=$((f + 1))
  fi
  VP=$p VF=$f VNOTE=""
}

# headers_check MAJOR: when PostgreSQL MAJOR cannot be built (its source
# package is not downloadable), at least gpuops's src/ compiled (g++
# -fsyntax-only; the Makefile's flags with GPUOPS_WERROR=1 and PGXS's of a
# PostgreSQL 16 or later, which has -Wshadow=compatible-local) against the
# server headers of Debian's binary package postgresql-server-dev-MAJOR of
# the newer suites.  Sets VP/VF/VNOTE like test_version.
headers_check() {
  local m=$1 cache="${PGSUITE_CACHE:-/var/tmp/gpuops-pgsuite}/dev" root inc w apt f bad=0 n=0 shim=()
  root="$cache/pg$m"
  if [ ! -f "$root/.done" ]; then
    w=$(mktemp -d "${TMPDIR:-/tmp}/gpuops-dev.XXXXXX") || { VP=0 VF=1 VNOTE="mktemp failed"; return; }
    mkdir -p "$w/lists/partial" "$w/parts" "$w/cache/archives/partial" "$w/dl"
    printf '%s\n' "Types: deb" "URIs: http://deb.debian.org/debian" "Suites: trixie trixie-updates forky sid experimental" \
      "Components: main" "Architectures: $(dpkg --print-architecture)" \
      "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg" > "$w/parts/dev.sources"
    apt=(-oDir::Etc::SourceList=/dev/null "-oDir::Etc::SourceParts=$w/parts" "-oDir::State::Lists=$w/lists"
         "-oDir::Cache=$w/cache")
    { apt-get "${apt[@]}" update && (cd "$w/dl" && apt-get "${apt[@]}" download "postgresql-server-dev-$m"); } \
      >"$RESULTS/pg$m/headers-apt.log" 2>&1
    rm -rf "$root" && mkdir -p "$root"
    if ! { ls "$w"/dl/*.deb >/dev/null 2>&1 && dpkg -x "$w"/dl/*.deb "$root" && : > "$root/.done"; }; then
      rm -rf "$w" "$root"; VP=0 VF=1 VNOTE="not built, and no postgresql-server-dev-$m to compile against either"; return
    fi
    rm -rf "$w"
  fi
  inc=$(echo "$root"/usr/include/postgresql/"$m"/server)
  [ -f "$inc/pg_config.h" ] || { VP=0 VF=1 VNOTE="no server headers in postgresql-server-dev-$m"; return; }
  VTEXT="PostgreSQL $(sed -n 's/^#define PG_VERSION "\(.*\)"/\1/p' "$inc/pg_config.h") (headers only)"
  # a newer Debian's headers expect its C library's strlcpy
  if grep -q '^#define HAVE_DECL_STRLCPY 1' "$inc/pg_config.h" && ! grep -q strlcpy /usr/include/string.h; then
    printf '%s\n' '#include <stddef.h>' 'extern "C" size_t strlcpy(char *, const char *, size_t);' > "$W/strlcpy.h"
    shim=(-include "$W/strlcpy.h")
  fi
  local dirs=() d
  for d in $(find "$REPO/src" -type d | sort); do dirs+=(-I"$d"); done
  log "$LABEL: PostgreSQL $m could not be built here: compiling src/ against $inc (syntax only)"
  while IFS= read -r f; do
    n=$((n + 1))
    nice -n "${GPUOPS_PGBUILD_NICE:-5}" g++ -fsyntax-only -std=gnu++17 -Wno-register -Wall -Wextra -Werror \
      -Wpointer-arith -Wendif-labels -Wmissing-format-attribute -Wimplicit-fallthrough=3 -Wcast-function-type \
      -Wshadow=compatible-local -Wformat-security -fno-strict-aliasing -fwrapv -D_GNU_SOURCE "${shim[@]}" -I"$REPO/cuda/include/gpuops" \
      "${dirs[@]}" -isystem "$inc" "$f" >>"$RESULTS/pg$m/headers-check.log" 2>&1 || { bad=$((bad + 1)); log "$LABEL: ${f#"$REPO"/} does not compile"; }
  done < <(find "$REPO/src" -name '*.cpp' | sort)
  [ "$bad" -gt 0 ] && head -n 60 "$RESULTS/pg$m/headers-check.log"
  if [ "$bad" -eq 0 ]; then VP=1 VF=0; else VP=0 VF=1; fi
  VNOTE="its source package is not downloadable here: $((n - bad)) of $n files of src/ compile against its headers, no test run"
}

i=0
for m in "${MAJORS[@]}"; do
  while [ ! -f "$W/pg$m.pgc" ] && [ ! -f "$W/pg$m.failed" ]; do
    kill -0 "$BUILDER" 2>/dev/null || break
    sleep 2
  done
  build_s=$(cat "$W/pg$m.seconds" 2>/dev/null || echo "?")
  VCHECK=0 VTEXT="PostgreSQL $m${PGB_ARGS[*]:+ with assertions}"
  if [ -f "$W/pg$m.pgc" ]; then
    test_version "$m" "$(cat "$W/pg$m.pgc")" $((PORT + 4 * i))
  elif [ "${GPUOPS_VERSIONS_HEADERS_ONLY:-1}" = 1 ] && [ "$CASSERT" = 0 ] &&
       grep -q "could not get PostgreSQL $m's source" "$RESULTS/pg$m/pgbuild.log" 2>/dev/null; then
    headers_check "$m"
  else
    VP=0 VF=1 VNOTE="not built: see $RESULTS/pg$m/pgbuild.log"
    tail -n 20 "$RESULTS/pg$m/pgbuild.log" 2>/dev/null
  fi
  PASSED=$((PASSED + VP)) FAILED=$((FAILED + VF)) NAMES+=("${VTEXT#PostgreSQL }")
  LINES+=("pg$m: $VP passed, $VF failed ($VTEXT${VNOTE:+; $VNOTE}; build ${build_s} s, make check ${VCHECK} s)")
  log "${LINES[-1]}"
  i=$((i + 1))
done
wait "$BUILDER" 2>/dev/null; BUILDER=""
cleanup
log "== $LABEL summary (wall time $((SECONDS - T_ALL)) s)"
printf '%s\n' "${LINES[@]}"
names=$(printf '%s, ' "${NAMES[@]}")
log "$LABEL: $PASSED passed, $FAILED failed (PostgreSQL ${names%, })"
[ "$FAILED" -eq 0 ]
