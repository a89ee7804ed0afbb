#!/usr/bin/env bash
# test/deb_check.sh: the Debian package (debian/) built, installed and used;
# CI's job deb.  Runs as root (or with sudo): it installs the build tools,
# and the package into the system's PostgreSQL 15, which it purges again.
#
#   1. The build: dpkg-buildpackage -b -uc -us in a copy of the working tree
#      (what git tracks or would track, as test/versions.sh copies it), with
#      the checkout's device library when make check built it (cuda/ never
#      sees PostgreSQL's headers, so it is built once, ~7 minutes for the
#      seven architectures on 2 cores; make rebuilds what of it is stale).
#   2. The package: its version is gpuops.control's default_version, it
#      depends on postgresql-15, it holds gpuops.so, gpuops.control and the
#      SQL scripts where PostgreSQL 15 looks for them; gpuops.so needs no
#      CUDA library (objdump's NEEDED: the CUDA runtime is linked in) and
#      carries every architecture the Makefile promises (test/arch_check.sh).
#   3. apt-get install ./postgresql-15-gpuops_*.deb, then a fresh cluster
#      (initdb by the unprivileged test user, as make check's), gpuops
#      preloaded, gpuops.device = cpu: CREATE EXTENSION gpuops, and a GROUP BY
#      whose result is PostgreSQL's (gpuops.enabled = off) and whose plan has
#      a gpuops node.
#   4. Always, at exit: the cluster stopped, the package purged, and the
#      gpuops that make check had installed there (files no package owns)
#      put back as they were.
#
# Last line "deb: N passed, N failed"; exit status 0 only when none failed.
# Environment: GPUOPS_DEB_PORT (54700), GPUOPS_RESULTS (<repo>/test/results:
# deb/ holds the build log and the server log), GPUOPS_DEB_REUSE_DEVICE=0
# (build the device library afresh in the copy), GPUOPS_DEB_KEEP=1 (keep the
# copy and the packages; their path is printed), GPUOPS_SKIP_SETUP=1 (the
# build tools are installed already), GPUOPS_TEST_USER, GPUOPS_TMPDIR (/tmp).
set -uo pipefail
# one group, read whole before it runs: a change to this file meanwhile is not
# half-read by the running script
{

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$REPO/test/lib.sh"

MAJOR=15
PKG=postgresql-$MAJOR-gpuops
PORT=${GPUOPS_DEB_PORT:-54700}
OUT=${GPUOPS_RESULTS:-$REPO/test/results}/deb
PG_BINDIR=/usr/lib/postgresql/$MAJOR/bin
LIBDIR=/usr/lib/postgresql/$MAJOR/lib EXTDIR=/usr/share/postgresql/$MAJOR/extension
PASSED=0 FAILED=0 W="" INSTALLED=0 BACKUP=""
T0=$SECONDS

ok()   { PASSED=$((PASSED + 1)); log "ok: $*"; }
fail() { FAILED=$((FAILED + 1)); log "FAILED: $*"; }
indent() { local l; while IFS= read -r l; do log "  $l"; done <<<"$1"; }
finish() {
  log "deb: wall time $((SECONDS - T0)) s"
  log "deb: $PASSED passed, $FAILED failed"
  [ "$FAILED" -eq 0 ]; exit $?
}

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO=(sudo); else
    fail "needs root or sudo (it installs packages)"; finish; fi
fi
apt_get() { "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -q "$@"; }

cleanup() {
  stop_cluster
  if [ "$INSTALLED" = 1 ]; then
    apt_get purge -y "$PKG" >>"$OUT/install.log" 2>&1 || warn "deb: could not purge $PKG (see $OUT/install.log)"
    INSTALLED=0
  fi
  if [ -n "$BACKUP" ]; then
    "${SUDO[@]}" tar -xPpf "$BACKUP" && log "deb: put back make check's gpuops in $LIBDIR and $EXTDIR"
    BACKUP=""
  fi
  if [ -n "$W" ]; then
    if [ "${GPUOPS_DEB_KEEP:-0}" = 1 ]; then log "deb: kept $W"; else rm -rf "$W"; fi
  fi
  W=""
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# run from make, this script would inherit the outer make's flags
unset MAKELEVEL MAKEFLAGS MFLAGS MAKEOVERRIDES
clear_pg_env
mkdir -p "$OUT" || { echo "deb: 0 passed, 1 failed (cannot create $OUT)"; exit 1; }
: >"$OUT/install.log"
W=$(mktemp -d "${GPUOPS_TMPDIR:-/tmp}/gpuops-deb.XXXXXX") || { fail "mktemp"; finish; }
chmod 755 "$W"
log "== gpuops's Debian package ($REPO; work in $W, logs in $OUT)"

# build tools (pg_buildext and the pgxs_loop debhelper addon come with
# postgresql-server-dev-all)
if [ "${GPUOPS_SKIP_SETUP:-0}" != 1 ]; then
  need=()
  for p in debhelper dpkg-dev postgresql-server-dev-all binutils; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need+=("$p")
  done
  if [ "${#need[@]}" -gt 0 ]; then
    log "deb: installing ${need[*]}"
    { apt_get install -y --no-install-recommends "${need[@]}" ||
      { apt_get update && apt_get install -y --no-install-recommends "${need[@]}"; }; } >"$OUT/setup.log" 2>&1 ||
      { tail -n 20 "$OUT/setup.log"; fail "could not install ${need[*]} (see $OUT/setup.log)"; finish; }
  fi
fi

# 1. the build, in a copy: the sources, and the device library when built
T=$SECONDS SRC=$W/gpuops
mkdir "$SRC" || { fail "mkdir"; finish; }
if git -C "$REPO" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  (cd "$REPO" && git ls-files -z --cached --others --exclude-standard |
     while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
     tar --format=posix --null -T - -cf -) | tar -C "$SRC" -xf -
else
  (cd "$REPO" && tar --format=posix --exclude=./test/results --exclude=./.devkit --exclude=./.git \
     --exclude='*.o' --exclude='*.a' --exclude='*.so' --exclude='*.bc' -cf - .) | tar -C "$SRC" -xf -
fi || { fail "could not copy the tree into $SRC"; finish; }
if [ "${GPUOPS_DEB_REUSE_DEVICE:-1}" = 1 ] && [ -f "$REPO/cuda/libgpuops_device.a" ]; then
  (cd "$REPO" && shopt -s nullglob && tar --format=posix -cf - cuda/libgpuops_device.a cuda/.arch[s] cuda/*/*.cu.o cuda/*/*.host.o) |
    tar -C "$SRC" -xf - &&
    log "deb: the device library carried over from the checkout (built for: $(cat "$REPO/cuda/.archs" 2>/dev/null || echo '?'); make rebuilds what is stale)"
fi
jobs=$(nproc 2>/dev/null || echo 2)
log "deb: dpkg-buildpackage -b -uc -us in $SRC (parallel=$jobs; log: $OUT/build.log)"
if (cd "$SRC" && env -u GPUOPS_CUDA_ARCHS DEB_BUILD_OPTIONS="parallel=$jobs ${DEB_BUILD_OPTIONS:-}" \
      nice -n 5 dpkg-buildpackage -b -uc -us) >"$OUT/build.log" 2>&1; then
  ok "dpkg-buildpackage -b -uc -us ($((SECONDS - T)) s)"
else
  tail -n 40 "$OUT/build.log"
  fail "dpkg-buildpackage failed after $((SECONDS - T)) s (see $OUT/build.log)"; finish
fi
debs=("$W"/"$PKG"_*.deb)
if [ ! -f "${debs[0]}" ] || [ "${#debs[@]}" -ne 1 ]; then fail "no single ${PKG}_*.deb in $W"; finish; fi
DEB=${debs[0]}
log "deb: built $(cd "$W" && printf '%s ' ./*.deb)"

# 2. the package itself
want=$(sed -n "s/^default_version = '\(.*\)'/\1/p" "$REPO/gpuops.control")
ver=$(dpkg-deb -f "$DEB" Version) deps=$(dpkg-deb -f "$DEB" Depends)
if [ -n "$want" ] && [ "$ver" = "$want" ]; then ok "version $ver (gpuops.control's default_version)"
else fail "version $ver, but gpuops.control's default_version is '$want' (debian/changelog)"; fi
re="(^|, *)postgresql-${MAJOR}( |,|$)"
if [[ $deps =~ $re ]]; then ok "Depends: $deps"
else fail "Depends lacks postgresql-$MAJOR: $deps"; fi
dpkg-deb -c "$DEB" | awk '{print $NF}' | sed 's|^\./|/|' > "$W/files"
read -r -a sqls <<<"$(sed -n 's/^DATA *= *//p' "$REPO/Makefile")"
sqls=("${sqls[@]##*/}")
missing=()
for f in "$LIBDIR/gpuops.so" "$EXTDIR/gpuops.control" "${sqls[@]/#/$EXTDIR/}"; do
  grep -qxF "$f" "$W/files" || missing+=("$f")
done
if [ "${#missing[@]}" -eq 0 ]; then ok "files: gpuops.so in $LIBDIR, gpuops.control and ${sqls[*]} in $EXTDIR"
else fail "the package lacks ${missing[*]}"; fi
mkdir "$W/x" && dpkg-deb -x "$DEB" "$W/x"
needed=$(objdump -p "$W/x$LIBDIR/gpuops.so" 2>/dev/null | awk '/NEEDED/ {print $2}' | tr '\n' ' ')
if [ -z "$needed" ]; then fail "objdump -p found no NEEDED in gpuops.so"
elif [[ $needed =~ libcuda|libnvidia|libnvrtc|libcublas ]]; then fail "gpuops.so needs a CUDA library at run time: $needed"
else ok "gpuops.so needs no CUDA library: $needed"; fi
if arch_out=$(bash "$REPO/test/arch_check.sh" "$W/x$LIBDIR/gpuops.so" 2>&1); then
  ok "architectures: $(grep -m1 'SASS for' <<<"$arch_out" | sed 's/^ *//')"
else
  indent "$arch_out"; fail "the packaged gpuops.so lacks architectures (test/arch_check.sh above)"
fi

# 3. installed; make check's own install (files no package owns) saved first
saved=()
for f in "$LIBDIR/gpuops.so" "$EXTDIR"/gpuops.control "$EXTDIR"/gpuops--*.sql; do
  [ -e "$f" ] && ! dpkg-query -S "$f" >/dev/null 2>&1 && saved+=("$f")
done
if [ "${#saved[@]}" -gt 0 ]; then
  "${SUDO[@]}" tar -cPpf "$W/make-install.tar" "${saved[@]}" && BACKUP=$W/make-install.tar &&
    log "deb: saved make check's ${saved[*]}"
fi
INSTALLED=1
if (cd "$W" && apt_get install -y "./${DEB##*/}") >>"$OUT/install.log" 2>&1 &&
   [ "$(dpkg-query -W -f='${Status}' "$PKG" 2>/dev/null)" = "install ok installed" ]; then
  ok "apt-get install ./${DEB##*/}"
else
  tail -n 20 "$OUT/install.log"; fail "apt-get install ./${DEB##*/} (see $OUT/install.log)"; finish
fi

TMP=$W/cluster
mkdir -p "$TMP"
if ! start_cluster "$TMP" "$PORT" "gpuops.device = cpu"; then
  cp "$TMP/server.log" "$OUT/server.log" 2>/dev/null; fail "a cluster with the packaged gpuops preloaded did not start"; finish
fi
ok "a fresh cluster (port $PORT) starts with shared_preload_libraries = 'gpuops'"
if v=$(tpsql postgres -At -c "CREATE EXTENSION gpuops" -c "SELECT extversion FROM pg_extension WHERE extname = 'gpuops'") &&
   [ "$v" = "$want" ]; then ok "CREATE EXTENSION gpuops (version $v)"
else fail "CREATE EXTENSION gpuops: '$v'"; fi
Q="SELECT g % 7 AS k, count(*) AS n, sum(g) AS s, min(g), max(g) FROM generate_series(1, 100000) g GROUP BY g % 7 ORDER BY k"
SETS=(-c "SET gpuops.min_rows = 0" -c "SET gpuops.startup_cost = 0")
off=$(tpsql postgres -At -c "SET gpuops.enabled = off" -c "$Q" 2>&1)
on=$(tpsql postgres -At "${SETS[@]}" -c "$Q" 2>&1)
plan=$(tpsql postgres -At "${SETS[@]}" -c "EXPLAIN (COSTS OFF) $Q" 2>&1)
if [ -n "$off" ] && [ "$on" = "$off" ] && [ "$(wc -l <<<"$on")" -eq 7 ]; then ok "GROUP BY over generate_series: gpuops's result is PostgreSQL's (7 groups)"
else fail "the GROUP BY's result differs from PostgreSQL's"; diff <(echo "$off") <(echo "$on") | head -n 20; fi
if node=$(grep -o 'Custom Scan (Gpu[A-Za-z]*)' <<<"$plan" | head -n 1) && [ -n "$node" ]; then ok "its plan has $node"
else fail "its plan has no gpuops node:"; indent "$plan"; fi
log "deb: gpuops.device_info() here: $(tpsql postgres -At -c "SELECT gpu_available, backend, coalesce(reason, '') FROM gpuops.device_info()" 2>&1 | tr '\n' ' ')"
stop_cluster
cp "$TMP/server.log" "$OUT/server.log" 2>/dev/null
if grep -qE 'terminated by signal|PANIC:' "$OUT/server.log"; then fail "the server log shows a crash ($OUT/server.log)"
else ok "server log: no crash"; fi

# 4. purged (and make check's install put back) by cleanup
cleanup
if [ "$(dpkg-query -W -f='${Status}' "$PKG" 2>/dev/null)" != "install ok installed" ] &&
   { [ "${#saved[@]}" -gt 0 ] || [ ! -e "$LIBDIR/gpuops.so" ]; }; then ok "$PKG purged"
else fail "$PKG still installed after the purge"; fi
finish
}
