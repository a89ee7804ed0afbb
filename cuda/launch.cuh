/*
 * launch.cuh
 *    The one-thread-per-element launch shape of the join and aggregation
 *    kernels.
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

}								/* namespace cuda */
}								/* namespace gpuops */

#endif
