/*
 * nestloop_index.cuh
 *    The indexed nested loop on the GPU (gpuops_device.h,
 *    GpuopsNestLoopIndex), for nestloop_cuda.cu.
 *
 * Inner block: the index column's keys are made byte-order words
 * (nl_index_key), the rows with a non-NULL column are selected in row order
 * and radix-sorted by key (stable, so ties keep row order), the NULL ones
 * follow in row order, and every program column is gathered into that
 * order, so an outer row's candidates are contiguous.
 *
 * Probe: one thread per outer row evaluates the bound programs and binary-
 * searches its range; the ranges are cut into work items of nl_chunk_rows
 * candidates (an outer row's items are consecutive), so a row with a wide
 * range does not serialize on one thread.  Count pass per item, CUB prefix
 * sums, write pass per window: the blocked loop's count-then-write, over
 * items instead of (outer row, chunk) cells.  The CPU twin
 * (nestloop_cpu.cpp) walks the same items in the same order.
 */
#ifndef GPUOPS_NESTLOOP_INDEX_CUH
#define GPUOPS_NESTLOOP_INDEX_CUH

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include "cuda_runtime.cuh"
#include "device_array.cuh"
#include "expr_columns.cuh"
#include "launch.cuh"
#include "nestloop_common.hpp"

namespace gpuops {
namespace cuda {

/* A probe of the indexed loop, as its kernels read it. */
struct IndexProbe
{
	ColumnsView outer;
	ColumnsView inner;			 /* sorted */
	const uint32_t *perm;		 /* sorted position -> block row */
	const uint64_t *range_start; /* per outer row o: start at [o], end at [n + o] */
	const uint64_t *item_off;	 /* per outer row: its first item; [n] = items */
	uint64_t nitems;
	uint64_t chunk;
	int first_only;
};

__global__ void
nl_index_key_kernel(ColumnsView in, int col, int is_float, uint64_t *keys, uint8_t *valid,
					uint8_t *invalid)
{
	uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x;

	if (i >= in.n)
		return;
	bool isnull = in.nulls[col * in.n + i] != 0;

	valid[i] = !isnull;
	invalid[i] = isnull;
	keys[i] = isnull ? 0 : nl_index_key(in.words[col * in.n + i], is_float);
}

__global__ void
nl_index_gather_keys(const uint64_t *keys, const uint32_t *rows, uint64_t m, uint64_t *out)
{
	uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x;

	if (i < m)
		out[i] = keys[rows[i]];
}

__global__ void
nl_index_gather_columns(ColumnsView in, uint64_t cells, const uint32_t *perm, uint64_t *words,
						uint8_t *nulls)
{
	uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x;

	if (i >= cells)
		return;
	uint64_t c = i / in.n, r = i % in.n;

	words[i] = in.words[c * in.n + perm[r]];
	nulls[i] = in.nulls[c * in.n + perm[r]];
}

/*
 * Per outer row o: its range [range[o], range[n + o]) and the number of its
 * items; cands += its candidates.
 */
__global__ void
nl_index_range_kernel(const GpuopsNestLoopIndex *ix, ColumnsView outer, const uint64_t *keys,
					  uint64_t nkeys, uint64_t nall, uint64_t chunk, uint64_t *range_start,
					  uint64_t *items, unsigned long long *cands)
{
	uint64_t o = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x;
	uint64_t s, e;

	if (o >= outer.n)
		return;
	nl_index_range(ix, ColumnsRow{&outer, o}, keys, nkeys, nall, &s, &e);
	range_start[o] = s;
	range_start[outer.n + o] = e;
	items[o] = nl_index_items(e - s, chunk);
	atomicAdd(cands, (unsigned long long) (e - s));
}

/*
 * Both passes over the items.  Count (kWrite false): counts[item].  Write:
 * pairs numbered [from, to) of the probe, at their number - from.
 */
template <bool kWrite>
__global__ void __launch_bounds__(kThreads)
	nl_index_kernel(const GpuopsExprProgram *prog, IndexProbe pr, uint64_t *counts,
					const uint64_t *offsets, uint64_t from, uint64_t to, uint32_t *pout,
					uint32_t *bout)
{
	__shared__ GpuopsExprStep steps[GPUOPS_EXPR_MAX_STEPS];
	__shared__ uint64_t consts[GPUOPS_EXPR_MAX_CONSTS];
	__shared__ uint8_t const_null[GPUOPS_EXPR_MAX_CONSTS];
	const int nsteps = prog->nsteps;
	uint64_t t = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x;

	for (int i = threadIdx.x; i < nsteps; i += blockDim.x)
		steps[i] = prog->steps[i];
	for (int i = threadIdx.x; i < prog->nconsts; i += blockDim.x)
	{
		consts[i] = prog->consts[i];
		const_null[i] = prog->const_null[i];
	}
	__syncthreads();
	if (t >= pr.nitems)
		return;

	/* the item's outer row: the last whose first item is <= t */
	uint64_t o = nl_index_search(pr.item_off, pr.outer.n + 1, t, true) - 1;
	uint64_t s = pr.range_start[o], e = pr.range_start[pr.outer.n + o];
	uint64_t j0 = s + (t - pr.item_off[o]) * pr.chunk;
	uint64_t j1 = e < j0 + pr.chunk ? e : j0 + pr.chunk;
	uint64_t base = 0, cnt = 0;
	ColumnsRow orow{&pr.outer, o};

	if (kWrite)
	{
		base = offsets[t];
		if (offsets[t + 1] == base || offsets[t + 1] <= from || base >= to)
			return;
	}
	for (uint64_t j = j0; j < j1; j++)
	{
		GpuopsExprResult r = expr_eval(steps, nsteps, consts, const_null, orow,
									   ColumnsRow{&pr.inner, j});

		if (r == GPUOPS_EXPR_FALSE)
			continue;
		if (kWrite)
		{
			uint64_t k = base + cnt;

			if (k >= to)
				break;
			if (k >= from)
			{
				pout[k - from] = static_cast<uint32_t>(o);
				bout[k - from] = pr.perm[j] | (r == GPUOPS_EXPR_RECHECK ? GPUOPS_NL_RECHECK : 0);
			}
		}
		cnt++;
		if (r == GPUOPS_EXPR_TRUE && pr.first_only)
			break;
	}
	if (!kWrite)
		counts[t] = cnt;
}

/*
 * Sorts an uploaded inner block (inner) on the index column, in place:
 * afterwards inner holds the columns in sorted order, keys the nkeys
 * non-NULL keys ascending, perm every sorted position's block row.
 * *bytes_from_device counts the count read back.
 */
inline void
nl_index_build(Runtime *rt, cudaStream_t s, const GpuopsNestLoopIndex &ix, int ncols,
			   DeviceColumns &inner, DeviceArray &keys, DeviceArray &perm, uint64_t *nkeys,
			   uint64_t *bytes_from_device)
{
	uint64_t n = inner.n;
	DeviceArray all_keys, valid, invalid, rows, sorted_in, nsel, temp, words, nulls;
	size_t temp_bytes = 0, t2 = 0;
	uint64_t m;

	perm.get(rt, n * 4 + 4, s);
	*nkeys = 0;
	if (n == 0)
	{
		keys.get(rt, 8, s);
		return;
	}
	all_keys.get(rt, n * 8, s);
	valid.get(rt, n, s);
	invalid.get(rt, n, s);
	rows.get(rt, n * 4, s);
	nsel.get(rt, 8, s);
	nl_index_key_kernel<<<blocks(n), kThreads, 0, s>>>(inner.view(), ix.column, ix.is_float,
													   all_keys.as<uint64_t>(), valid.as<uint8_t>(),
													   invalid.as<uint8_t>());
	GPUOPS_CUDA_CHECK_LAUNCH("nested loop index keys");
	GPUOPS_CUDA_TRY(cub::DeviceSelect::Flagged(nullptr, temp_bytes,
											   thrust::counting_iterator<uint32_t>(0),
											   valid.as<uint8_t>(), rows.as<uint32_t>(),
											   nsel.as<uint64_t>(), n, s));
	GPUOPS_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, t2, all_keys.as<uint64_t>(),
													all_keys.as<uint64_t>(), rows.as<uint32_t>(),
													perm.as<uint32_t>(), n, 0, 64, s));
	temp_bytes = std::max(temp_bytes, t2);
	temp.get(rt, temp_bytes + 8, s);
	GPUOPS_CUDA_TRY(cub::DeviceSelect::Flagged(temp.as<void>(), temp_bytes,
											   thrust::counting_iterator<uint32_t>(0),
											   valid.as<uint8_t>(), rows.as<uint32_t>(),
											   nsel.as<uint64_t>(), n, s));
	GPUOPS_CUDA_TRY(
		cudaMemcpyAsync(rt->pinned_scalar(), nsel.as<uint64_t>(), 8, cudaMemcpyDeviceToHost, s));
	*bytes_from_device += 8;
	::gpuops::cuda::sync_stream(s);
	m = rt->pinned_scalar()[0];

	/* the NULL rows, in row order, after the sorted ones */
	GPUOPS_CUDA_TRY(cub::DeviceSelect::Flagged(temp.as<void>(), temp_bytes,
											   thrust::counting_iterator<uint32_t>(0),
											   invalid.as<uint8_t>(), perm.as<uint32_t>() + m,
											   nsel.as<uint64_t>(), n, s));
	keys.get(rt, m * 8 + 8, s);
	if (m > 0)
	{
		sorted_in.get(rt, m * 8, s);
		nl_index_gather_keys<<<blocks(m), kThreads, 0, s>>>(all_keys.as<uint64_t>(),
															rows.as<uint32_t>(), m,
															sorted_in.as<uint64_t>());
		GPUOPS_CUDA_CHECK_LAUNCH("nested loop index key gather");
		GPUOPS_CUDA_TRY(cub::DeviceRadixSort::SortPairs(temp.as<void>(), temp_bytes,
														sorted_in.as<uint64_t>(),
														keys.as<uint64_t>(), rows.as<uint32_t>(),
														perm.as<uint32_t>(), m, 0, 64, s));
	}
	/* the sort's buffers go before the sorted copy of the columns comes */
	::gpuops::cuda::sync_stream(s);
	all_keys.reset();
	valid.reset();
	invalid.reset();
	rows.reset();
	sorted_in.reset();
	nsel.reset();
	temp.reset();
	words.get(rt, n * ncols * 8 + 8, s);
	nulls.get(rt, n * ncols + 8, s);
	nl_index_gather_columns<<<blocks(n * ncols), kThreads, 0, s>>>(
		inner.view(), n * ncols, perm.as<uint32_t>(), words.as<uint64_t>(), nulls.as<uint8_t>());
	GPUOPS_CUDA_CHECK_LAUNCH("nested loop index column gather");
	::gpuops::cuda::sync_stream(s);
	inner.words.swap(words);
	inner.nulls.swap(nulls);
	*nkeys = m;
}

} /* namespace cuda */
} /* namespace gpuops */

#endif
