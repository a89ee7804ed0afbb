# gpuops: PGXS build.
#   src/         C++17 that talks to PostgreSQL, compiled by g++ through PGXS:
#                gpuops.cpp and planner.cpp on top, then sort/ join/ agg/
#                (the nodes), expr/ input/ plan/, and core/ at the bottom
#   cuda/        the device engine, CUDA (.cu, nvcc, sm_75 to sm_120 + PTX) beside its
#                CPU twin (.cpp, g++), by subsystem: runtime/ expr/ sort/
#                join/ agg/ host/
#   cuda/include/gpuops/
#                the engine's interface (its C ABI and the header-only
#                formats both sides compute alike): the only device headers
#                src/ may include
# The device layer is linked into the one gpuops.so as a static archive,
# with a static CUDA runtime, so the library loads on a host without a GPU
# driver (CUDA calls then fail and gpuops keeps PostgreSQL's plans).
#
#   make            build         make install   install (PG_CONFIG=...)
#   make check      set up, build, install and run every test (test/check.sh)
#   make check-cassert  the same against a PostgreSQL built with
#                   --enable-cassert (test/cassert.sh; CI runs both)
#   make demo       a throwaway cluster, a query with gpuops off and on
#   make deb        Debian packages postgresql-NN-gpuops in .. (debian/rules;
#                   dpkg-buildpackage -b -uc -us; test/deb_check.sh, a CI job)
#   make device-test  the device engine's unit tests (test/device, no PostgreSQL)
#   make format     clang-format src/ cuda/ test/device/ in place (.clang-format;
#                   Debian's clang-format 14, which test/setup.sh installs)
#   make format-check  change nothing, list the files that differ, fail if any
#                   (test/format.sh --check; a CI job)
#   make GPUOPS_WERROR=1  built with -Wall -Wextra -Werror: src/, cuda/*.cpp,
#                   and cuda/*.cu (g++ under nvcc, and nvcc's own warnings);
#                   CI's switch is in .ci/run; objects already built are not
#                   rebuilt when it changes (make clean)
#   make compile_commands.json  every src/ and cuda/ compile command, for clangd
#                   and clang-tidy -p . (make all writes it too; cuda/*.cu as
#                   clang++ -x cuda, which Debian's clang 14 cannot read with
#                   CUDA 13; CC_JSON_NVCC=exact for nvcc's own command)
# check, check-cassert, demo, deb, device-test, format and format-check do not
# need PostgreSQL's headers; the rest do.

EXTENSION  = gpuops
MODULE_big = gpuops
DATA       = sql/gpuops--0.1.0.sql
PGFILEDESC = "gpuops - sorts, joins and aggregates on the GPU"

PG_CONFIG ?= pg_config
CUDA_HOME ?= /usr/local/cuda
NVCC      ?= $(CUDA_HOME)/bin/nvcc

SRC_DIRS  = src src/core src/plan src/input src/expr src/sort src/join src/agg src/query
CUDA_DIRS = cuda/runtime cuda/expr cuda/sort cuda/join cuda/agg cuda/query cuda/host
API_DIR   = cuda/include/gpuops

OBJS = $(patsubst %.cpp,%.o,$(foreach d,$(SRC_DIRS),$(wildcard $(d)/*.cpp)))

DEVICE_LIB  = cuda/libgpuops_device.a
DEVICE_OBJS = $(patsubst %.cu,%.cu.o,$(foreach d,$(CUDA_DIRS),$(wildcard $(d)/*.cu))) \
              $(patsubst %.cpp,%.host.o,$(foreach d,$(CUDA_DIRS),$(wildcard $(d)/*.cpp)))
API_HDRS    = $(wildcard $(API_DIR)/*.h $(API_DIR)/*.hpp)
DEVICE_HDRS = $(API_HDRS) $(foreach d,$(CUDA_DIRS),$(wildcard $(d)/*.h $(d)/*.hpp $(d)/*.cuh))
DEVICE_INC  = -I$(API_DIR) $(addprefix -I,$(CUDA_DIRS))

# Native code for every architecture CUDA 13 builds from Turing on (sm_75
# Turing, sm_80 A100, sm_86 RTX 30 / A40, sm_89 L4 / L40S / RTX 40, sm_90
# H100 / H200, sm_100 B200, sm_120 RTX 50 / RTX PRO), and PTX of the newest,
# which the driver compiles once (and caches) for a later GPU, so no GPU
# needs nvcc at server start.  GPUOPS_CUDA_ARCHS=90 builds one architecture
# (development; test/arch_check.sh, a CI job, fails on such a module).  A
# changed list rebuilds the device objects (cuda/.archs).
GPUOPS_CUDA_ARCHS ?= 75 80 86 89 90 100 120
GPUOPS_PTX_ARCH   ?= $(lastword $(GPUOPS_CUDA_ARCHS))
NVCC_FLAGS = -std=c++17 -O3 -Xcompiler -fPIC -Xcompiler -fvisibility=hidden \
             $(foreach a,$(GPUOPS_CUDA_ARCHS),-gencode arch=compute_$(a),code=sm_$(a)) \
             -gencode arch=compute_$(GPUOPS_PTX_ARCH),code=compute_$(GPUOPS_PTX_ARCH) \
             -DGPUOPS_CUDA_ARCHS='"$(GPUOPS_CUDA_ARCHS)"' -DGPUOPS_PTX_ARCH=$(GPUOPS_PTX_ARCH)
ARCH_STAMP = cuda/.archs
ifneq ($(file <$(ARCH_STAMP)),$(GPUOPS_CUDA_ARCHS) ptx $(GPUOPS_PTX_ARCH))
$(file >$(ARCH_STAMP),$(GPUOPS_CUDA_ARCHS) ptx $(GPUOPS_PTX_ARCH))
endif
# cuda/ never sees PostgreSQL's include path, so it cannot include its headers
DEVICE_CXXFLAGS = -std=c++17 -O2 -fPIC -fvisibility=hidden -Wall $(DEVICE_INC)

# src/ sees the engine only through its interface folder
PG_CPPFLAGS = -I$(API_DIR) $(addprefix -I,$(SRC_DIRS))
# gnu++17: PostgreSQL's headers use typeof
PG_CXXFLAGS = -std=gnu++17 -Wno-register

# GPUOPS_WERROR=1 (CI, .ci/run): -Wall -Wextra, and every warning an error,
# for src/ (after PGXS's CXXFLAGS, which have -Wall and a few others),
# cuda/*.cpp, and cuda/*.cu: g++ under nvcc (-Xcompiler; CUDA's own headers,
# CUB included, are system headers there and stay quiet) and nvcc's own
# front end (-Werror all-warnings: "#177-D: variable declared but never
# referenced" and the like, in device code too)
GPUOPS_WERROR ?= 0
ifeq ($(GPUOPS_WERROR),1)
WERROR_FLAGS = -Wall -Wextra -Werror
PG_CXXFLAGS += $(WERROR_FLAGS)
# PostgreSQL's headers are not written for -Wextra (lib/ilist.h's inline
# functions have unused parameters, ...): searched as system headers, they
# are not warned about, and src/'s own code still is (PGXS's -I of the same
# folders keeps their place in the search order)
PG_CPPFLAGS += -isystem $(includedir_server) -isystem $(includedir_internal)
DEVICE_CXXFLAGS += $(WERROR_FLAGS)
NVCC_FLAGS += -Xcompiler -Wall,-Wextra,-Werror -Werror all-warnings
endif
SHLIB_LINK += $(DEVICE_LIB) -L$(CUDA_HOME)/lib64 -lcudart_static -ldl -lrt -lpthread -lstdc++

EXTRA_CLEAN = results regression.diffs regression.out compile_commands.json
# make clean removes the device library too, unless GPUOPS_KEEP_DEVICE=1
# (debian/rules: one device build serves every PostgreSQL major's build)
ifneq ($(GPUOPS_KEEP_DEVICE),1)
EXTRA_CLEAN += $(DEVICE_LIB) $(ARCH_STAMP) $(addsuffix /*.o,$(CUDA_DIRS))
endif

# PGXS would want LLVM bitcode for every object; gpuops is not JIT-inlined.
override with_llvm = no

# check, check-cassert and demo set the machine up first (headers may be
# missing), so they must not need PGXS themselves; nor do device-test (no
# PostgreSQL), format and format-check (clang-format alone), and deb
# (debian/rules runs this Makefile per PostgreSQL major).
ifneq ($(filter-out check check-cassert demo deb device-test format format-check,$(or $(MAKECMDGOALS),all)),)
PGXS := $(shell $(PG_CONFIG) --pgxs 2>/dev/null)
ifeq ($(wildcard $(PGXS)),)
$(error PostgreSQL server headers not found (pg_config: $(PG_CONFIG)); run "make check", which installs them, or apt-get install postgresql-server-dev-15)
endif
include $(PGXS)

$(shlib): $(DEVICE_LIB)
$(OBJS): $(foreach d,$(SRC_DIRS),$(wildcard $(d)/*.h)) $(API_HDRS)

# compile_commands.json (clangd, clang-tidy -p .): every translation unit's
# command from the variables its rule compiles it with: src/ PGXS's COMPILE.cc
# (make's %.o: %.cpp), cuda/ DEVICE_COMPILE.cpp and DEVICE_COMPILE.cu.  clang
# does not read nvcc's options, so a .cu entry is, by default, the clang++
# -x cuda command of the same file, host side only (clang-tidy wants one
# compile job); CC_JSON_NVCC=exact writes nvcc's own.  Either way Debian 12's
# clang 14 cannot read the .cu files: it knows CUDA up to 11.5 and no sm_90,
# and CUDA 13's headers fail in its CUDA wrappers (a newer clang may).
# Rewritten only when it changes; make all writes it too.
CC_JSON_NVCC ?= clang
CC_JSON_CLANG_CUDA = clang++ -x cuda --cuda-host-only -std=c++17 -O3 -fPIC -fvisibility=hidden \
                     --cuda-path=$(CUDA_HOME) --cuda-gpu-arch=sm_90 -nocudalib \
                     $(DEVICE_INC) -c
CC_JSON_TUS = $(OBJS:.o=.cpp) $(DEVICE_OBJS:.host.o=.cpp)
CC_JSON_TUS := $(CC_JSON_TUS:.cu.o=.cu)
cc_json_str = "$(subst ",\",$(subst \,\\,$(strip $1)))"
cc_json_cmd = $(strip \
  $(if $(filter src/%,$1),$(COMPILE.cc) -o $(1:.cpp=.o) $1, \
  $(if $(filter %.cpp,$1),$(DEVICE_COMPILE.cpp) $1 -o $(1:.cpp=.host.o), \
  $(if $(filter exact,$(CC_JSON_NVCC)),$(DEVICE_COMPILE.cu),$(CC_JSON_CLANG_CUDA)) $1 -o $1.o)))
cc_json_entry = {"directory": $(call cc_json_str,$(CURDIR)), "file": $(call cc_json_str,$1), "command": $(call cc_json_str,$(call cc_json_cmd,$1))}

.PHONY: compile_commands.json
all: compile_commands.json
compile_commands.json:
	$(file >$@.tmp,[$(call cc_json_entry,$(firstword $(CC_JSON_TUS))))
	$(foreach f,$(wordlist 2,$(words $(CC_JSON_TUS)),$(CC_JSON_TUS)),$(file >>$@.tmp,,$(call cc_json_entry,$f)))
	$(file >>$@.tmp,])
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv -f $@.tmp $@ && echo "wrote $@ ($(words $(CC_JSON_TUS)) files)"; fi
else
.PHONY: check check-cassert demo
check:
	bash test/check.sh

check-cassert:
	bash test/cassert.sh

demo:
	bash test/demo.sh
endif

# the Debian packages (debian/rules; build dependencies: debhelper and
# postgresql-server-dev-all, and CUDA at /usr/local/cuda), into ..
.PHONY: deb
deb:
	dpkg-buildpackage -b -uc -us
	@ls -1 ../postgresql-*-gpuops_$$(dpkg-parsechangelog -S Version)_*.deb

# clang-format (.clang-format) over src/ cuda/ test/device/: format rewrites
# the files, format-check lists those that differ and fails (test/format.sh)
.PHONY: format format-check
format:
	bash test/format.sh

format-check:
	bash test/format.sh --check

$(DEVICE_LIB): $(DEVICE_OBJS)
	rm -f $@
	ar rcs $@ $^

# device-layer unit tests (test/device/, no PostgreSQL): each operator's CPU
# twin against the test's own reference, and its CUDA backend against the
# twin where a GPU is usable (bash test/device/run.sh --cuda-required there)
.PHONY: device-test
device-test: $(DEVICE_LIB)
	bash test/device/run.sh

# the device objects' compile commands (also written to compile_commands.json)
DEVICE_COMPILE.cu  = $(NVCC) $(NVCC_FLAGS) $(DEVICE_INC) -c
DEVICE_COMPILE.cpp = $(CXX) $(DEVICE_CXXFLAGS) -c

cuda/%.cu.o: cuda/%.cu $(DEVICE_HDRS) $(ARCH_STAMP)
	$(DEVICE_COMPILE.cu) $< -o $@

# The .cu sources are never made: without this, GNU make's built-in
# "%: %.o" rule looks for a way to make x.cu out of x.cu.o and prints
# "Circular x.cu <- x.cu.o dependency dropped" for each of them.
$(foreach d,$(CUDA_DIRS),$(wildcard $(d)/*.cu)): ;

cuda/%.host.o: cuda/%.cpp $(DEVICE_HDRS)
	$(DEVICE_COMPILE.cpp) $< -o $@

