#!/usr/bin/env bash
# test/arch_check.sh: does the built module carry native code (SASS) for
# every GPU architecture the Makefile promises (GPUOPS_CUDA_ARCHS's default
# list), and PTX for the newest, in every translation unit that has kernels?
# A module built with GPUOPS_CUDA_ARCHS=90 (development) fails here.
#
#   bash test/arch_check.sh [gpuops.so]      (default: ./gpuops.so; a CI job)
#
# cuobjdump --list-elf would answer this, but Debian's machines have CUDA's
# compiler without cuobjdump; the fatbinary container is simple enough to
# read here: the ELF section .nv_fatbin holds one fatbinary per translation
# unit (magic 0xBA55ED50, then entries: kind 1 PTX / 2 ELF, and the
# architecture as major * 10 + minor).
# Last line: "arch: N passed, N failed" (one test per architecture, and PTX).
set -uo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SO=${1:-$REPO/gpuops.so}

want=$(sed -n 's/^GPUOPS_CUDA_ARCHS ?= *//p' "$REPO/Makefile")
if [ ! -f "$SO" ] || [ -z "$want" ]; then
	echo "arch_check: no module ($SO) or no GPUOPS_CUDA_ARCHS in the Makefile"
	echo "arch: 0 passed, 1 failed"
	exit 1
fi

# Debian's python3 (as test/fuzz/run.sh), not whatever a PATH shim offers
PY=/usr/bin/python3; [ -x "$PY" ] || PY=python3
"$PY" - "$SO" $want <<'EOF'
import struct, sys

path, want = sys.argv[1], [int(a) for a in sys.argv[2:]]
data = open(path, 'rb').read()

# ELF64 little endian: find .nv_fatbin through the section headers
shoff, = struct.unpack_from('<Q', data, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from('<HHH', data, 0x3A)
def section(i):
    name, _, _, _, off, size = struct.unpack_from('<IIQQQQ', data, shoff + i * shentsize)
    return name, off, size
_, stroff, _ = section(shstrndx)
fat = None
for i in range(shnum):
    name, off, size = section(i)
    if data[stroff + name:data.index(b'\0', stroff + name)] == b'.nv_fatbin':
        fat = data[off:off + size]
if fat is None:
    print('arch_check: %s has no .nv_fatbin section (no device code)' % path)
    print('arch: 0 passed, 1 failed')
    sys.exit(1)

units = []  # per fatbinary: (set of SASS archs, set of PTX archs)
off = 0
while off + 16 <= len(fat):
    magic, _, hsize, fsize = struct.unpack_from('<IHHQ', fat, off)
    if magic != 0xBA55ED50:
        off += 8  # sections are padded to 8 bytes
        continue
    p, end, sass, ptx = off + hsize, off + hsize + fsize, set(), set()
    while p < end:
        kind, _, ehsize, esize = struct.unpack_from('<HHIQ', fat, p)
        arch, = struct.unpack_from('<I', fat, p + 28)
        (sass if kind == 2 else ptx).add(arch)
        p += ehsize + esize
    units.append((sass, ptx))
    off = end

print('arch_check: %s: %d translation units with device code' % (path, len(units)))
allsass = sorted(set().union(*(u[0] for u in units))) if units else []
allptx = sorted(set().union(*(u[1] for u in units))) if units else []
print('  SASS for sm_%s; PTX for compute_%s' % (' sm_'.join(map(str, allsass)),
                                                 ' compute_'.join(map(str, allptx))))
passed = failed = 0
for a in want + ['ptx']:
    if a == 'ptx':
        missing = [i for i, u in enumerate(units) if max(want) not in u[1]]
        what = 'PTX compute_%d' % max(want)
    else:
        missing = [i for i, u in enumerate(units) if a not in u[0]]
        what = 'SASS sm_%d' % a
    if units and not missing:
        passed += 1
        print('ok     %s in all %d units' % (what, len(units)))
    else:
        failed += 1
        print('FAILED %s missing in %d of %d units' % (what, len(missing), len(units)))
print('arch: %d passed, %d failed' % (passed, failed))
sys.exit(1 if failed else 0)
EOF
