#!/bin/bash
# test/device/run.sh: builds and runs the device-layer unit tests (no
# PostgreSQL): each operator's CPU twin against the test's own reference,
# and, where a GPU is usable, the CUDA backend against the twin.
#
#   bash test/device/run.sh [--cuda-required] [-v] [substring ...]
#
# The program links this checkout's cuda/libgpuops_device.a (make device-test
# builds it first) and is rebuilt into test/device/build/ when it, a test
# source or an engine header is newer.  --cuda-required (the GPU machine):
# fail when no GPU is usable instead of running the twins alone.  -v adds
# each case's time and output size; substrings select cases by title.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
lib="$root/cuda/libgpuops_device.a"
build="$here/build"
bin="$build/device_test"
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
CXX=${CXX:-g++}

if [ ! -f "$lib" ]; then
	echo "run.sh: $lib is missing: run 'make device-test' (or 'make cuda/libgpuops_device.a')" >&2
	exit 2
fi

# newer: does any of the files after the first exist newer than it (or is it missing)?
newer() {
	local target=$1
	shift
	[ ! -e "$target" ] || [ -n "$(find "$@" -newer "$target" -print -quit)" ]
}

# an object is rebuilt when its source, a test header or an engine header is
# newer; one compiler at a time, as the machines that run this are often busy
mkdir -p "$build"
objs=()
relink=false
for src in "$here"/*.cpp; do
	obj="$build/$(basename "${src%.cpp}").o"
	if newer "$obj" "$src" "$here"/*.h "$root/cuda/include/gpuops"; then
		"$CXX" -std=gnu++17 -O2 -Wall -Wextra -I"$root/cuda/include/gpuops" -I"$here" \
			-c "$src" -o "$obj"
		relink=true
	fi
	objs+=("$obj")
done
if $relink || newer "$bin" "$lib"; then
	"$CXX" -o "$bin.tmp" "${objs[@]}" "$lib" -L"$CUDA_HOME/lib64" -lcudart_static -ldl -lrt -lpthread
	mv "$bin.tmp" "$bin"
fi

exec "$bin" "$@"
