/*
 * launch.cuh
 *    The one-thread-per-element launch shape of the join and aggregation
 *    kernels, the identity permutation they sort from, and a fill of any
 *    word (cudaMemset fills bytes).
 */
#ifndef GPUOPS_LAUNCH_CUH
#define GPUOPS_LAUNCH_CUH

#include <cstdint>

namespace gpuops {
namespace cuda {

constexpr int kThreads = 256;

/* blocks of kThreads covering n elements */
inline unsigned
blocks(uint64_t n)
{
	return static_cast<unsigned>((n + kThreads - 1) / kThreads);
}

/* perm[i] = i, the identity permutation the radix sorts start from */
template <typename Index>
__global__ void
iota_kernel(Index *perm, uint64_t n)
{
	uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x;

	if (i < n)
		perm[i] = static_cast<Index>(i);
}

/* a[i] = v over n elements */
template <typename T>
__global__ void
fill_kernel(T *a, uint64_t n, T v)
{
	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < n;
		 i += gridDim.x * (uint64_t) blockDim.x)
		a[i] = v;
}

} /* namespace cuda */
} /* namespace gpuops */

#endif
