#!/usr/bin/env bash
# test/cassert.sh: the whole suite of "make check" (pg_regress, pgTAP, stress,
# fuzz, PostgreSQL's own suite) against a PostgreSQL 15 built with
# --enable-cassert, so that the server's assertions (and the memory-context
# checks and freed-memory clobbering that come with them) watch gpuops.
#
# Steps:
#   1. what is missing from apt (test/setup.sh; ICU's headers and pkg-config
#      for the build).
#   2. PostgreSQL's source: the orig tarball of Debian's postgresql-15 source
#      package, from test/pgsuite's cache (test/pgsuite/run.sh --source: it
#      downloads it only if PostgreSQL's suite has not already done so).
#   3. PostgreSQL built with `make -j2` and installed into a private prefix,
#      $GPUOPS_CASSERT_PREFIX/<version>-<hash of the options>, with contrib's
#      dblink (sql/cancel_sweep.sql) and the system's pgTAP files.  Cached:
#      an install of the same version and options is used as it is.
#   4. gpuops built and tested by `make check PG_CONFIG=<that pg_config>` in a
#      copy of the working tree (tracked and untracked, not ignored files), so
#      that the checkout's own build, made against Debian's headers, is neither
#      used nor disturbed.  The device library (cuda/, which never sees
#      PostgreSQL's headers) is carried over when it is up to date.
#   5. Every server log of the run searched for assertion failures (TRAP),
#      crashes, and the memory and resource checks' warnings.
# Last line:
#   cassert: N passed, N failed (PostgreSQL 15.x with assertions)
# (make check's tests, plus one for the server logs); exit status 0 only when
# nothing failed.
#
# Environment:
#   GPUOPS_CASSERT_PREFIX   where the builds are installed (/var/tmp/gpuops-cassert)
#   GPUOPS_CASSERT_PORT     first of the 4 ports of the clusters (54429)
#   GPUOPS_CASSERT_RESULTS  outputs (<repo>/test/results/cassert): PostgreSQL's
#                           build logs, check/ (make check's results and server logs)
#   GPUOPS_CASSERT_JOBS     make -j for PostgreSQL (2)
#   GPUOPS_CASSERT_REUSE_DEVICE=0  build the device library afresh in the copy
#   GPUOPS_CASSERT_KEEP=1   keep the copy of the tree (its path is printed)
#   PGSUITE_CACHE           test/pgsuite's download cache (/var/tmp/gpuops-pgsuite)
#   GPUOPS_SKIP_SETUP, GPUOPS_SKIP_STRESS, GPUOPS_SKIP_FUZZ, GPUOPS_SKIP_PGSUITE,
#   GPUOPS_TEST_USER, GPUOPS_TEST_TIMEOUT: as for make check (test/check.sh).
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$REPO/test/lib.sh"

BASE=${GPUOPS_CASSERT_PREFIX:-/var/tmp/gpuops-cassert}
PORT=${GPUOPS_CASSERT_PORT:-54429}
RESULTS=${GPUOPS_CASSERT_RESULTS:-$REPO/test/results/cassert}
JOBS=${GPUOPS_CASSERT_JOBS:-2}
SYS_PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config
# the recipe of the build; a change here makes a new prefix (see build_key)
CONTRIB=(dblink)
CONFIGURE=(--enable-cassert --enable-debug --with-icu --without-readline --without-zlib
           --without-llvm --with-system-tzdata=/usr/share/zoneinfo
           "CFLAGS=-O2 -g -fno-omit-frame-pointer" "CXXFLAGS=-O2 -g")
# what a server log must not show: assertion failures (the TRAP line is
# followed by a backtrace), crashes, and the warnings of the memory-context
# and resource-owner checks
LOG_PATTERN='TRAP:|terminated by signal|terminated by exception|PANIC:|problem in (alloc set|slab|generation)|write past chunk end|WARNING: .*(leak|still referenced)'

TREE="" BUILD="" VERSION_TEXT="PostgreSQL 15 with assertions" NOTE=""
cleanup() {
  if [ -n "$TREE" ] && [ -d "$TREE" ]; then
    if [ "${GPUOPS_CASSERT_KEEP:-0}" = 1 ]; then log "cassert: kept the copy of the tree in $TREE"
    else rm -rf "$TREE"; fi
  fi
  [ -n "$BUILD" ] && [ -d "$BUILD" ] && rm -rf "$BUILD"
  TREE="" BUILD=""
}
trap cleanup EXIT
trap 'exit 130' INT TERM

summary() {  # summary PASSED FAILED: the last line, and the exit status
  cleanup
  log "cassert: $1 passed, $2 failed ($VERSION_TEXT${NOTE:+; $NOTE})"
  [ "$2" -eq 0 ]; exit $?
}
fatal() { warn "cassert: $*"; NOTE=$*; summary 0 1; }

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
apt_install() {  # apt_install PKG...: as root or through sudo; one retry after apt-get update
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || { warn "cassert: installing $* needs root or sudo"; return 1; }
    sudo=(sudo)
  fi
  log "cassert: installing $*"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y "$@" && return 0
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update &&
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y "$@"
}

# Run by "make check-cassert", this script inherits make's MAKELEVEL and
# MAKEFLAGS: PostgreSQL's build makes its generated headers (utils/errcodes.h
# and the others) only at MAKELEVEL 0, and the makes below are not the outer
# make's sub-makes.
unset MAKELEVEL MAKEFLAGS MFLAGS MAKEOVERRIDES
clear_pg_env
T_ALL=$SECONDS
mkdir -p "$RESULTS" || { echo "cassert: cannot create $RESULTS"; echo "cassert: 0 passed, 1 failed (PostgreSQL 15 with assertions)"; exit 1; }
log "== gpuops make check against PostgreSQL with assertions ($REPO)"

# 1. packages: the system's PostgreSQL (its version picks the source), pgTAP,
# and what the build needs beyond make and a compiler
if [ "${GPUOPS_SKIP_SETUP:-0}" != 1 ]; then
  bash "$REPO/test/setup.sh" || fatal "setup (test/setup.sh) failed"
  missing=()
  installed libicu-dev || missing+=(libicu-dev)
  command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
  if [ "${#missing[@]}" -gt 0 ] && ! apt_install "${missing[@]}"; then
    warn "cassert: could not install ${missing[*]}: building without ICU (sort_icu then runs its no-ICU variant)"
  fi
fi
if ! { installed libicu-dev && command -v pkg-config >/dev/null 2>&1; }; then
  CONFIGURE=("${CONFIGURE[@]/--with-icu/--without-icu}")
  NOTE="without ICU"
fi

# 2. the source, from test/pgsuite's cache
TARBALL=$(env -u PG_CONFIG PGSUITE_CACHE="${PGSUITE_CACHE:-/var/tmp/gpuops-pgsuite}" \
            bash "$REPO/test/pgsuite/run.sh" --source | tail -n 1)
[ -f "$TARBALL" ] || fatal "could not get PostgreSQL's source (test/pgsuite/run.sh --source)"
VERSION=$(basename "$TARBALL" | sed -E 's/^postgresql-[0-9]+_([0-9.]+)\.orig\.tar\..*$/\1/')
VERSION_TEXT="PostgreSQL $VERSION with assertions"
KEY=$(printf '%s\n' "recipe 1" "$(basename "$TARBALL")" "${CONFIGURE[@]}" "contrib ${CONTRIB[*]}" | md5sum | cut -c1-8)
PREFIX="$BASE/$VERSION-$KEY"
STAMP="$PREFIX/.gpuops-cassert"
PGC="$PREFIX/bin/pg_config"

# 3. PostgreSQL with assertions, unless this version and these options are
# installed already (the stamp is written last)
mkdir -p "$BASE" || fatal "cannot create $BASE"
exec 9>"$BASE/.lock"
flock 9 || fatal "cannot lock $BASE/.lock"
if [ -f "$STAMP" ] && [ -x "$PGC" ] && [ -x "$PREFIX/bin/postgres" ]; then
  log "cassert: using the PostgreSQL $VERSION built earlier in $PREFIX (configure ${CONFIGURE[*]})"
else
  T_BUILD=$SECONDS
  log "cassert: building PostgreSQL $VERSION from $(basename "$TARBALL") into $PREFIX (make -j$JOBS; logs: $RESULTS/pg-*.log)"
  log "cassert: configure ${CONFIGURE[*]}"
  BUILD=$(mktemp -d /var/tmp/gpuops-cassert-build.XXXXXX) || fatal "mktemp failed"
  tar -C "$BUILD" -xf "$TARBALL" || fatal "could not unpack $TARBALL"
  SRC=$(echo "$BUILD"/postgresql-*/)
  [ -x "$SRC/configure" ] || fatal "no configure in $TARBALL"
  (cd "$SRC" && ./configure --prefix="$PREFIX" "${CONFIGURE[@]}") >"$RESULTS/pg-configure.log" 2>&1 \
    || { tail -n 30 "$RESULTS/pg-configure.log" >&2; fatal "PostgreSQL's configure failed (see $RESULTS/pg-configure.log)"; }
  { make -C "$SRC" -j"$JOBS" &&
    for c in "${CONTRIB[@]}"; do make -C "$SRC/contrib/$c" -j"$JOBS" || exit 1; done; } >"$RESULTS/pg-build.log" 2>&1 \
    || { tail -n 40 "$RESULTS/pg-build.log" >&2; fatal "PostgreSQL's build failed (see $RESULTS/pg-build.log)"; }
  rm -rf "$PREFIX"
  { make -C "$SRC" install &&
    for c in "${CONTRIB[@]}"; do make -C "$SRC/contrib/$c" install || exit 1; done; } >"$RESULTS/pg-install.log" 2>&1 \
    || { tail -n 30 "$RESULTS/pg-install.log" >&2; fatal "PostgreSQL's install failed (see $RESULTS/pg-install.log)"; }
  printf '%s\n' "$(basename "$TARBALL")" "${CONFIGURE[@]}" "contrib: ${CONTRIB[*]}" > "$STAMP"
  rm -rf "$BUILD"; BUILD=""
  log "cassert: PostgreSQL $VERSION built and installed in $((SECONDS - T_BUILD)) s"
fi
exec 9>&-
grep -q "^#define USE_ASSERT_CHECKING 1" "$("$PGC" --includedir-server)/pg_config.h" \
  || fatal "$PGC is not a build with assertions"
log "cassert: $("$PGC" --version) in $PREFIX ($("$PGC" --configure))"

# pgTAP is SQL only: its files from the system's PostgreSQL (setup.sh installed it)
SYS_EXT="$("$SYS_PG_CONFIG" --sharedir 2>/dev/null)/extension"
EXT="$("$PGC" --sharedir)/extension"
shopt -s nullglob
tap=("$SYS_EXT"/pgtap*.control "$SYS_EXT"/pgtap*.sql "$SYS_EXT"/uninstall_pgtap.sql)
shopt -u nullglob
if [ "${#tap[@]}" -gt 0 ]; then cp "${tap[@]}" "$EXT/" || fatal "could not copy pgTAP into $EXT"
else warn "cassert: no pgTAP in $SYS_EXT (the pgTAP tests will fail)"; fi

# 4. a copy of the working tree: what git tracks or would track (no build
# outputs), mtimes kept; and the device library's objects when they are there
TREE=$(mktemp -d "${GPUOPS_TMPDIR:-/tmp}/gpuops-cassert-tree.XXXXXX") || fatal "mktemp failed"
chmod 755 "$TREE"
if git -C "$REPO" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  (cd "$REPO" && git ls-files -z --cached --others --exclude-standard |
     while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
     tar --format=posix --null -T - -cf -) | tar -C "$TREE" -xf - || fatal "could not copy the tree to $TREE"
else
  (cd "$REPO" && tar --format=posix --exclude=./test/results --exclude=./.devkit --exclude=./.git \
     --exclude='*.o' --exclude='*.a' --exclude='*.so' --exclude='*.bc' -cf - .) | tar -C "$TREE" -xf - \
    || fatal "could not copy the tree to $TREE"
fi
if [ "${GPUOPS_CASSERT_REUSE_DEVICE:-1}" = 1 ] && [ -f "$REPO/cuda/libgpuops_device.a" ]; then
  # make rebuilds whatever of it is older than its sources (cuda/.archs: the
  # architectures it was built for, which the Makefile compares)
  (cd "$REPO" && shopt -s nullglob && tar --format=posix -cf - cuda/libgpuops_device.a cuda/.arch[s] cuda/*/*.cu.o cuda/*/*.host.o) |
    tar -C "$TREE" -xf - && log "cassert: the device library (cuda/, no PostgreSQL headers) carried over from $REPO"
fi

# 5. make check in the copy
OUT="$RESULTS/check"
rm -rf "$OUT"; mkdir -p "$OUT"
T_SUITE=$SECONDS
log "cassert: make check PG_CONFIG=$PGC in $TREE (ports $PORT-$((PORT + 3)), results in $OUT)"
(cd "$TREE" && env PG_CONFIG="$PGC" GPUOPS_TEST_PORT="$PORT" GPUOPS_RESULTS="$OUT" GPUOPS_SKIP_SETUP=1 \
   make --no-print-directory check PG_CONFIG="$PGC") 2>&1 | tee "$RESULTS/check.log"
rc=${PIPESTATUS[0]}
log "cassert: make check took $((SECONDS - T_SUITE)) s (exit $rc)"
# check.sh's last line (make may print its own error after it)
re='^([0-9]+) passed, ([0-9]+) failed$'
last=$(grep -E "$re" "$RESULTS/check.log" | tail -n 1)
if [[ $last =~ $re ]]; then
  PASSED=${BASH_REMATCH[1]} FAILED=${BASH_REMATCH[2]}
  [ "$rc" -ne 0 ] && [ "$FAILED" -eq 0 ] && FAILED=1
else
  warn "cassert: make check did not end with \"N passed, N failed\" (exit $rc)"
  PASSED=0 FAILED=1
fi

# 6. the server logs
mapfile -t logs < <(find "$OUT" -name 'server*.log' -type f | sort)
bad=0
for f in "${logs[@]}"; do
  n=$(grep -cE "$LOG_PATTERN" "$f")
  [ "$n" -eq 0 ] && continue
  bad=$((bad + n))
  log "--- ${f#"$OUT"/}: $n lines show an assertion failure, a crash or a memory/resource check; the first ones, with what follows:"
  grep -nE -A 12 "$LOG_PATTERN" "$f" | head -n 150
  grep -nE -A 1 'terminated by signal|terminated by exception' "$f" | grep -E 'Failed process was running' | head -n 10
done
if [ "${#logs[@]}" -eq 0 ]; then
  log "cassert: server logs: none found under $OUT"
  FAILED=$((FAILED + 1))
elif [ "$bad" -eq 0 ]; then
  log "cassert: server logs: ${#logs[@]} searched, no assertion failure, crash or memory/resource warning"
  PASSED=$((PASSED + 1))
else
  log "cassert: server logs: $bad lines of assertion failures, crashes or memory/resource warnings (above; logs in $OUT)"
  FAILED=$((FAILED + 1))
fi
log "cassert: wall time $((SECONDS - T_ALL)) s"
summary "$PASSED" "$FAILED"
