/*
 * agg_hash.cuh
 *    The hash strategy of grouped aggregation on the GPU (gpuops_device.h
 *    describes it; agg_hash_cuda.cu implements it), called by agg_cuda.cu
 *    once the group keys are packed.
 */
#ifndef GPUOPS_AGG_HASH_CUH
#define GPUOPS_AGG_HASH_CUH

#include <vector>

#include "cuda_runtime.cuh"
#include "gpuops_device.h"

namespace gpuops {
namespace cuda {

struct HashAggInput
{
	Runtime *rt;
	cudaStream_t stream;
	const GpuopsAggSpec *spec;
	const uint64_t *words; /* packed group keys, column-major (word w of row i at w * n + i) */
	uint64_t n;
	uint64_t capacity; /* agg_hash_capacity */
	const uint8_t *values[GPUOPS_MAX_AGGS];
	const uint8_t *nulls[GPUOPS_MAX_AGGS];
};

/*
 * Aggregates by hash: per group (in key-word order) its first row and
 * naggs results.  Returns false, with nothing produced, when the input has
 * more groups than input.capacity.  *device_bytes: the peak in use.
 */
bool hash_aggregate(const HashAggInput &in, std::vector<uint64_t> &group_rows,
					std::vector<GpuopsAggResult> &results, uint64_t *ngroups,
					uint64_t *device_bytes, uint64_t *bytes_from_device);

} /* namespace cuda */
} /* namespace gpuops */

#endif
