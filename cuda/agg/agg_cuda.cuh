/*
 * agg_cuda.cuh
 *    Grouped aggregation on the GPU: its state, CudaAgg, and the steps its
 *    three files share.
 *
 * One class (its entry points, backend_tables.hpp) in three files, one per
 * phase: agg_cuda.cu holds the backend (begin, the batches' upload, finish
 * calling the steps below, the table), agg_group_cuda.cu the group keys
 * packed, sorted and numbered, agg_reduce_cuda.cu the aggregates' states
 * reduced per group.  A kernel lives in the file that launches it; the
 * hash strategy is agg_hash_cuda.cu.
 */
#ifndef GPUOPS_AGG_CUDA_CUH
#define GPUOPS_AGG_CUDA_CUH

#include <vector>

#include "cuda_runtime.cuh"
#include "device_array.cuh"
#include "expr_columns.cuh"

namespace gpuops {
namespace cuda {
namespace gpuagg {

struct CudaAgg
{
	Runtime *rt = nullptr;
	GpuopsSettings settings;
	GpuopsAggSpec spec;
	cudaStream_t stream = nullptr;
	uint64_t nrows = 0;
	uint64_t added = 0;
	DeviceArray keys[GPUOPS_MAX_SORT_KEYS];
	DeviceArray key_nulls[GPUOPS_MAX_SORT_KEYS];
	DeviceArray values[GPUOPS_MAX_AGGS];
	DeviceArray value_nulls[GPUOPS_MAX_AGGS];
	DeviceArray programs[GPUOPS_MAX_AGGS]; /* computed inputs' programs */
	DeviceColumns inputs;				   /* the current batch's program columns */
	DeviceArray recheck;				   /* the first row a program stopped at */
	std::vector<uint64_t> group_rows;
	std::vector<GpuopsAggResult> results;
	GpuopsAggStats stats = {};

	/* the entry points (backend_tables.hpp) */
	static GpuopsStatus agg_capacity(const GpuopsSettings *settings, const GpuopsAggSpec *spec,
									 uint64_t *rows);
	CudaAgg(const GpuopsSettings *settings, const GpuopsAggSpec *spec, uint64_t nrows);
	GpuopsStatus agg_add(const GpuopsAggBatch *b);
	GpuopsStatus agg_finish(uint64_t *ngroups_out);
	GpuopsStatus agg_groups(const uint64_t **group_rows_out, const GpuopsAggResult **results_out);
	void agg_stats(GpuopsAggStats *out) const;
};

/* the sort strategy's steps, in the order agg_finish takes them */
void pack_words(CudaAgg *a, uint64_t n, DeviceArray &words);
void sort_groups(CudaAgg *a, uint64_t n, DeviceArray &words, DeviceArray &perm, DeviceArray &head);
uint64_t number_groups(CudaAgg *a, uint64_t n, DeviceArray &perm, DeviceArray &head,
					   DeviceArray &gid, DeviceArray &grows, DeviceArray &gstart);
void reduce_groups(CudaAgg *a, uint64_t n, uint64_t ngroups, DeviceArray &perm, DeviceArray &gid,
				   DeviceArray &gstart, DeviceArray &words, DeviceArray &pct_counts);

} /* namespace gpuagg */
} /* namespace cuda */
} /* namespace gpuops */

#endif
