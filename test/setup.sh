#!/usr/bin/env bash
# Installs what building and testing gpuops needs and is missing (idempotent):
#   postgresql-server-dev-15 (headers, PGXS), postgresql-15-pgtap + pg_prove,
#   clang-format (make format-check, a CI job; Debian 12's is version 14),
#   and the PostgreSQL 15 server itself and make/g++ if they are absent.
# Checks that CUDA is at /usr/local/cuda (nvcc). Runs as root, or via sudo.
set -euo pipefail

CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

missing=()
for p in postgresql-server-dev-15 postgresql-15-pgtap; do
  installed "$p" || missing+=("$p")
done
[ -x /usr/lib/postgresql/15/bin/initdb ] || missing+=(postgresql-15)
command -v pg_prove >/dev/null 2>&1 || missing+=(libtap-parser-sourcehandler-pgtap-perl)
command -v make >/dev/null 2>&1 || missing+=(make)
command -v g++ >/dev/null 2>&1 || missing+=(g++)
command -v clang-format >/dev/null 2>&1 || missing+=(clang-format)

if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then
    sudo=()
  elif command -v sudo >/dev/null 2>&1; then
    sudo=(sudo)
  else
    echo "setup.sh: these packages are missing: ${missing[*]}" >&2
    echo "setup.sh: installing them needs root, and sudo is not available; run as root:" >&2
    echo "  DEBIAN_FRONTEND=noninteractive apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  echo "setup.sh: installing ${missing[*]}"
  apt_install() { "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y "$@"; }
  if ! apt_install "${missing[@]}"; then
    echo "setup.sh: install failed; running apt-get update and retrying"
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
    apt_install "${missing[@]}" || { echo "setup.sh: could not install ${missing[*]}" >&2; exit 1; }
  fi
else
  echo "setup.sh: packages ok (postgresql-server-dev-15, postgresql-15-pgtap, pg_prove, clang-format)"
fi

if [ -x "$CUDA_HOME/bin/nvcc" ]; then
  echo "setup.sh: CUDA ok: $("$CUDA_HOME/bin/nvcc" --version | sed -n 's/^Cuda compilation tools, //p') ($CUDA_HOME/bin/nvcc)"
else
  echo "setup.sh: WARNING: CUDA not found: no nvcc at $CUDA_HOME/bin/nvcc." >&2
  echo "setup.sh: gpuops is built with nvcc; install the CUDA toolkit at $CUDA_HOME (or set CUDA_HOME)." >&2
fi
