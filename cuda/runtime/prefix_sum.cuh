/*
 * prefix_sum.cuh
 *    The count-then-write joins' prefix sums: n counts (plus a zero at [n])
 *    into offsets, so offsets[i] is row i's first output and offsets[n] the
 *    total.  CUB's two-call form, its temporary storage from the budget.
 */
#ifndef GPUOPS_PREFIX_SUM_CUH
#define GPUOPS_PREFIX_SUM_CUH

#include <cub/device/device_scan.cuh>

#include "cuda_runtime.cuh"
#include "device_array.cuh"

namespace gpuops {
namespace cuda {

inline void
exclusive_sum(Runtime *rt, cudaStream_t s, const DeviceArray &counts, DeviceArray &offsets,
			  uint64_t n)
{
	DeviceArray temp;
	size_t temp_bytes = 0;

	GPUOPS_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, counts.as<uint64_t>(),
												  offsets.as<uint64_t>(), n + 1, s));
	temp.get(rt, temp_bytes + 8, s);
	GPUOPS_CUDA_TRY(cub::DeviceScan::ExclusiveSum(
		temp.as<void>(), temp_bytes, counts.as<uint64_t>(), offsets.as<uint64_t>(), n + 1, s));
}

} /* namespace cuda */
} /* namespace gpuops */

#endif
