/*
 * agg_cuda.cu
 *    Grouped aggregation on the GPU (gpuops_device.h describes the
 *    algorithm, agg_common.hpp the keys and states).
 *
 * The raw group key and aggregate input columns are copied to the device
 * batch by batch as the caller adds them.  finish packs each row's group key
 * into words (a kernel), radix sorts (word, row) pairs with CUB one word at a
 * time, least significant first (stable, so the order is that of the whole
 * key, ties by row), flags the first row of each group, numbers the groups
 * by a prefix sum, and runs one CUB reduce-by-key per aggregate over the
 * sorted rows, the leaf states read through the permutation.  Only the
 * per-group states and first rows come back.  With the hash strategy
 * (agg_hash_cuda.cu) the packed words go to a hash table instead, and the
 * sort runs only when the groups outnumber its capacity.
 *
 * Files (agg_cuda.cuh): this one holds the backend, its begin, the
 * batches' upload (and the computed inputs' programs), finish and the
 * table; agg_group_cuda.cu packs, sorts and numbers the groups;
 * agg_reduce_cuda.cu reduces the aggregates' states per group.
 */
#include <algorithm>
#include <chrono>
#include <vector>

#include "agg_common.hpp"
#include "agg_cuda.cuh"
#include "agg_eval.hpp"
#include "agg_hash.cuh"
#include "backend_tables.hpp"
#include "eval_kernel.cuh"
#include "launch.cuh"

namespace gpuops {
namespace cuda {
namespace gpuagg {
namespace {

size_t
bitmap_bytes(uint64_t n)
{
	return (n + 7) / 8 + 8;
}

} /* namespace */

GpuopsStatus
CudaAgg::agg_capacity(const GpuopsSettings *settings, const GpuopsAggSpec *spec, uint64_t *rows)
{
	*rows = 0;
	maybe_inject(GPUOPS_FAULT_NO_DEVICE, settings->fault);
	Runtime &rt = Runtime::get(*settings);

	rt.set_limit(settings->device_memory_limit, settings->device_share);
	*rows = agg_rows_for_budget(rt.limit(), *spec);
	return GPUOPS_OK;
}

CudaAgg::CudaAgg(const GpuopsSettings *settings, const GpuopsAggSpec *spec, uint64_t nrows)
{
	maybe_inject(GPUOPS_FAULT_NO_DEVICE, settings->fault);
	if (spec->nkeys < 0 || spec->nkeys > GPUOPS_MAX_SORT_KEYS || spec->naggs < 0 ||
		spec->naggs > GPUOPS_MAX_AGGS)
		fail(GPUOPS_ERR_INTERNAL, "bad aggregation spec");
	if (nrows > UINT32_MAX)
		fail(GPUOPS_ERR_UNSUPPORTED, "aggregation over %u rows", UINT32_MAX);
	if (spec->order_agg >= spec->naggs)
		fail(GPUOPS_ERR_INTERNAL, "bad aggregation spec");
	if (agg_sort_words(*spec) > kAggMaxKeyWords)
		fail(GPUOPS_ERR_UNSUPPORTED, "group key of %d words", agg_sort_words(*spec));
	rt = &Runtime::get(*settings);
	cudaStream_t s;

	rt->set_limit(settings->device_memory_limit, settings->device_share);
	this->settings = *settings;
	this->spec = *spec;
	this->nrows = nrows;
	stream = s = rt->stream(0);
	maybe_inject(GPUOPS_FAULT_OUT_OF_MEMORY, settings->fault);
	for (int k = 0; k < spec->nkeys; k++)
	{
		keys[k].get(rt, nrows * gpuops_key_raw_width(spec->keys[k]) + 16, s);
		key_nulls[k].get(rt, bitmap_bytes(nrows), s);
		GPUOPS_CUDA_TRY(cudaMemsetAsync(key_nulls[k].as<void>(), 0, bitmap_bytes(nrows), s));
	}
	for (int g = 0; g < spec->naggs; g++)
	{
		if (spec->kinds[g] != GPUOPS_AGG_COUNT)
			values[g].get(rt, nrows * gpuops_key_raw_width(spec->value_kinds[g]) + 16, s);
		value_nulls[g].get(rt, bitmap_bytes(nrows), s);
		GPUOPS_CUDA_TRY(cudaMemsetAsync(value_nulls[g].as<void>(), 0, bitmap_bytes(nrows), s));
		if (spec->programs[g])
		{
			const char *bad = expr_validate(spec->programs[g],
											spec->program_ncols > 0 ? spec->program_ncols : 1, 0);

			if (bad)
				fail(GPUOPS_ERR_INTERNAL, "bad device program: %s", bad);
			programs[g].get(rt, sizeof(GpuopsExprProgram), s);
			GPUOPS_CUDA_TRY(cudaMemcpyAsync(programs[g].as<void>(), spec->programs[g],
											sizeof(GpuopsExprProgram), cudaMemcpyHostToDevice, s));
		}
	}
	stats.recheck_row = kAggNoRecheck;
	recheck.get(rt, sizeof(uint64_t), s);
	GPUOPS_CUDA_TRY(cudaMemsetAsync(recheck.as<void>(), 0xff, sizeof(uint64_t), s));
	::gpuops::cuda::sync_stream(s);
}

GpuopsStatus
CudaAgg::agg_add(const GpuopsAggBatch *b)
{
	cudaStream_t s = stream;
	uint64_t at = added;
	size_t nb = (b->nrows + 7) / 8;
	auto t0 = std::chrono::steady_clock::now();

	if (at + b->nrows > nrows || at % 8 != 0)
		fail(GPUOPS_ERR_INTERNAL, "aggregation batch of %u rows after %llu of %llu", b->nrows,
			 (unsigned long long) at, (unsigned long long) nrows);
	for (int k = 0; k < spec.nkeys && b->nrows > 0; k++)
	{
		size_t w = gpuops_key_raw_width(spec.keys[k]);

		GPUOPS_CUDA_TRY(cudaMemcpyAsync(keys[k].as<uint8_t>() + at * w, b->keys[k], b->nrows * w,
										cudaMemcpyHostToDevice, s));
		if (b->key_nulls[k])
			GPUOPS_CUDA_TRY(cudaMemcpyAsync(key_nulls[k].as<uint8_t>() + at / 8, b->key_nulls[k],
											nb, cudaMemcpyHostToDevice, s));
	}
	for (int g = 0; g < spec.naggs && b->nrows > 0; g++)
	{
		if (spec.kinds[g] != GPUOPS_AGG_COUNT && !spec.programs[g])
		{
			size_t w = gpuops_key_raw_width(spec.value_kinds[g]);

			GPUOPS_CUDA_TRY(cudaMemcpyAsync(values[g].as<uint8_t>() + at * w, b->values[g],
											b->nrows * w, cudaMemcpyHostToDevice, s));
		}
		if (b->value_nulls[g])
			GPUOPS_CUDA_TRY(cudaMemcpyAsync(value_nulls[g].as<uint8_t>() + at / 8,
											b->value_nulls[g], nb, cudaMemcpyHostToDevice, s));
	}
	if (b->nrows > 0 &&
		std::any_of(spec.programs, spec.programs + spec.naggs,
					[](const GpuopsExprProgram *p) { return p != nullptr; }))
	{
		/*
		 * computed inputs, after their FILTER masks (queued above); also
		 * a program that reads no column (sum(NULL::int8)): skipping it
		 * left its rows 0 and not NULL, and the sum 0
		 */
		if (spec.program_ncols > 0)
			inputs.upload(rt, s, &b->inputs, spec.program_ncols);
		for (int g = 0; g < spec.naggs; g++)
			if (spec.programs[g])
				eval_input_kernel<<<blocks(nb), kThreads, 0, s>>>(
					programs[g].as<GpuopsExprProgram>(), inputs.view(), at, b->nrows,
					spec.value_kinds[g], values[g].as<uint8_t>(), value_nulls[g].as<uint8_t>(), 0,
					recheck.as<unsigned long long>());
		GPUOPS_CUDA_TRY(cudaGetLastError());
	}
	/* the caller's buffers may change once this returns */
	::gpuops::cuda::sync_stream(s);
	added = at + b->nrows;
	stats.copy_ms += ms_since(t0);
	return GPUOPS_OK;
}

GpuopsStatus
CudaAgg::agg_finish(uint64_t *ngroups_out)
{
	cudaStream_t s = stream;
	uint64_t n = added;
	uint64_t ngroups = 0;
	DeviceArray perm, head, words, gid, grows, gstart, pct_counts;
	auto t0 = std::chrono::steady_clock::now();

	/* the first row a computed input stopped at, over every batch added */
	GPUOPS_CUDA_TRY(cudaMemcpyAsync(&stats.recheck_row, recheck.as<void>(), sizeof(uint64_t),
									cudaMemcpyDeviceToHost, s));
	stats.bytes_from_device += sizeof(uint64_t);
	::gpuops::cuda::sync_stream(s);
	maybe_inject(GPUOPS_FAULT_KERNEL_ERROR, settings.fault);
	stats.rows = n;
	stats.hash_capacity = agg_hash_capacity(spec, n);
	group_rows.clear();
	results.clear();
	if (n > 0)
		pack_words(this, n, words);
	if (stats.hash_capacity > 0)
	{
		HashAggInput in = {rt, s, &spec, words.as<uint64_t>(), n, stats.hash_capacity, {}, {}};

		for (int g = 0; g < spec.naggs; g++)
		{
			in.values[g] = values[g].as<uint8_t>();
			in.nulls[g] = value_nulls[g].as<uint8_t>();
		}
		if (hash_aggregate(in, group_rows, results, &ngroups, &stats.device_bytes,
						   &stats.bytes_from_device))
			stats.hashed = 1;
		else
			stats.hash_overflow = 1;
	}
	if (n > 0 && !stats.hashed)
	{
		sort_groups(this, n, words, perm, head);
		ngroups = number_groups(this, n, perm, head, gid, grows, gstart);
		results.resize(ngroups * spec.naggs);
		reduce_groups(this, n, ngroups, perm, gid, gstart, words, pct_counts);
		::gpuops::cuda::sync_stream(s);
	}
	stats.groups = ngroups;
	stats.kernel_ms += ms_since(t0);
	*ngroups_out = ngroups;
	return GPUOPS_OK;
}

GpuopsStatus
CudaAgg::agg_groups(const uint64_t **group_rows_out, const GpuopsAggResult **results_out)
{
	*group_rows_out = group_rows.data();
	*results_out = results.data();
	return GPUOPS_OK;
}

void
CudaAgg::agg_stats(GpuopsAggStats *out) const
{
	*out = stats;
}

constexpr GpuopsAggBackend cuda_agg_backend = shell::make_agg_backend<CudaAgg>("cuda");

} /* namespace gpuagg */
} /* namespace cuda */
} /* namespace gpuops */

extern "C" const GpuopsAggBackend *
gpuops_cuda_agg_backend(void) noexcept
{
	return &gpuops::cuda::gpuagg::cuda_agg_backend;
}
