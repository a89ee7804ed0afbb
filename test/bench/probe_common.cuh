// What the standalone probes (gather_probe.cu, gather_methods.cu) share:
// CK(x), a CUDA call that exits with its error; now_ms(); and the page
// service's own gather kernel (cuda/query/page_gather.cuh), so that they
// measure the engine's code.  They are built alone with nvcc.
#ifndef GPUOPS_PROBE_COMMON_CUH
#define GPUOPS_PROBE_COMMON_CUH

#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "../../cuda/query/page_gather.cuh"

using gpuops::cuda::kGatherThreads;
using gpuops::cuda::page_gather_kernel;

#define CK(x) \
	do \
	{ \
		cudaError_t e_ = (x); \
		if (e_ != cudaSuccess) \
		{ \
			fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
			exit(1); \
		} \
	} while (0)

static double
now_ms()
{
	using namespace std::chrono;
	return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

#endif
