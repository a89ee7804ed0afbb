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
 */
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <algorithm>
#include <chrono>
#include <memory>
#include <vector>

#include "agg_common.hpp"
#include "agg_eval.hpp"
#include "agg_hash.cuh"
#include "agg_sort.cuh"
#include "backend_tables.hpp"
#include "cuda_runtime.cuh"
#include "device_array.cuh"
#include "eval_kernel.cuh"
#include "expr_columns.cuh"
#include "launch.cuh"

namespace gpuops {
namespace cuda {
namespace {

struct KeyCols
{
	GpuopsKeyKind kinds[GPUOPS_MAX_SORT_KEYS];
	const uint8_t *raw[GPUOPS_MAX_SORT_KEYS];
	const uint8_t *nulls[GPUOPS_MAX_SORT_KEYS];
	/* the ordered aggregates' sub-key, when order_words > 0 */
	int			group_words;
	int			order_words;
	GpuopsKeyKind order_kind;
	bool		order_desc;
	const uint8_t *order_raw;
	const uint8_t *order_nulls;
};

struct CudaAgg
{
	Runtime    *rt = nullptr;
	GpuopsSettings settings;
	GpuopsAggSpec spec;
	cudaStream_t stream = nullptr;
	uint64_t	nrows = 0;
	uint64_t	added = 0;
	DeviceArray keys[GPUOPS_MAX_SORT_KEYS];
	DeviceArray key_nulls[GPUOPS_MAX_SORT_KEYS];
	DeviceArray values[GPUOPS_MAX_AGGS];
	DeviceArray value_nulls[GPUOPS_MAX_AGGS];
	DeviceArray programs[GPUOPS_MAX_AGGS];	/* computed inputs' programs */
	DeviceColumns inputs;		/* the current batch's program columns */
	DeviceArray recheck;		/* the first row a program stopped at */
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
	void		agg_stats(GpuopsAggStats *out) const;
};

size_t
bitmap_bytes(uint64_t n)
{
	return (n + 7) / 8 + 8;
}

__global__ void
pack_kernel(KeyCols kc, int nkeys, uint64_t n, uint64_t *words)
{
	uint64_t	i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x;
	uint64_t	w[kAggMaxKeyWords];
	int			nwords = kc.group_words + kc.order_words;

	if (i >= n)
		return;
	agg_pack_key(kc.kinds, nkeys, kc.raw, kc.nulls, i, w, kc.group_words);
	if (kc.order_words > 0)
		agg_pack_order(kc.order_kind, kc.order_desc,
					   agg_null(kc.order_nulls, i) ? nullptr
					   : kc.order_raw + i * gpuops_key_raw_width(kc.order_kind),
					   w + kc.group_words);
	for (int j = 0; j < nwords; j++)
		words[j * n + i] = w[j];
}

/* the radix pass's keys: word w of the rows in their current order */
__global__ void
gather_word_kernel(const uint64_t *word, const uint32_t *perm, uint64_t n, uint64_t *out)
{
	uint64_t	i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x;

	if (i < n)
		out[i] = word[perm[i]];
}

/* head[i]: sorted row i starts a group (its key differs from row i-1's) */
__global__ void
head_kernel(const uint64_t *words, int nwords, const uint32_t *perm, uint64_t n, uint32_t *head)
{
	uint64_t	i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x;

	if (i >= n)
		return;
	uint32_t	h = (i == 0);

	for (int w = 0; w < nwords && !h; w++)
		h = words[w * n + perm[i]] != words[w * n + perm[i - 1]];
	head[i] = h;
}

/* each group's first row and its sorted position; gid is 1-based (the inclusive sum of heads) */
__global__ void
group_rows_kernel(const uint32_t *head, const uint32_t *gid, const uint32_t *perm, uint64_t n,
				  uint64_t *group_rows, uint32_t *group_start)
{
	uint64_t	i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x;

	if (i < n && head[i])
	{
		group_rows[gid[i] - 1] = perm[i];
		group_start[gid[i] - 1] = static_cast<uint32_t>(i);
	}
}

/*
 * A percentile's rows in each group: its counted rows are the group's
 * first counts[j], in value order (the sub-key).
 */
__global__ void
percentile_kernel(const CountState *counts, const uint32_t *group_start, const uint32_t *perm,
				  uint64_t ngroups, GpuopsAggKind kind, double f, uint64_t *rows)
{
	uint64_t	j = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x;
	uint64_t	lo = 0,
				hi = 0;

	if (j >= ngroups)
		return;
	if (counts[j].n > 0)
		agg_percentile_rows(kind, f, counts[j].n, &lo, &hi);
	rows[2 * j] = perm[group_start[j] + lo];
	rows[2 * j + 1] = perm[group_start[j] + hi];
}

/* Leaf states of the sorted rows, read through the permutation. */
struct CountLeaf
{
	const uint32_t *perm;
	const uint8_t *nulls;
	__device__ CountState operator()(uint32_t i) const { return count_leaf(agg_null(nulls, perm[i])); }
};

struct ValueLeaf
{
	const uint32_t *perm;
	const uint8_t *vals;
	const uint8_t *nulls;
	GpuopsKeyKind kind;
	uint32_t	width;

	__device__ const uint8_t *raw(uint32_t r) const
	{
		return agg_null(nulls, r) ? nullptr : vals + static_cast<uint64_t>(r) * width;
	}
};

struct SumIntLeaf : ValueLeaf
{
	__device__ SumIntState operator()(uint32_t i) const { return sum_int_leaf(kind, raw(perm[i])); }
};

struct SumSqIntLeaf : ValueLeaf
{
	__device__ SumSqIntState operator()(uint32_t i) const { return sumsq_int_leaf(kind, raw(perm[i])); }
};

struct FloatLeaf : ValueLeaf
{
	__device__ FloatState operator()(uint32_t i) const { return float_value_leaf(kind, raw(perm[i])); }
};

/*
 * count(DISTINCT): a counted row whose sort key (group and sub-key) differs
 * from its predecessor's starts a new value.  Uncounted rows sort after the
 * counted ones of their group, so a counted row's predecessor is counted or
 * in another group.
 */
struct DistinctLeaf
{
	const uint32_t *perm;
	const uint8_t *nulls;
	const uint64_t *words;
	int			nwords;
	uint64_t	n;

	__device__ CountState operator()(uint32_t i) const
	{
		uint32_t	r = perm[i];
		bool		first = (i == 0);

		if (agg_null(nulls, r))
			return CountState{0};
		for (int w = 0; w < nwords && !first; w++)
			first = words[w * n + r] != words[w * n + perm[i - 1]];
		return CountState{first ? 1u : 0u};
	}
};

struct MinMaxLeaf : ValueLeaf
{
	__device__ MinMaxState operator()(uint32_t i) const
	{
		uint32_t	r = perm[i];

		return minmax_leaf(kind, raw(r), r);
	}
};

/* Reduce-by-key of leaf states over the group numbers, into states (on the device). */
template <typename State, typename Leaf, typename Op>
void
reduce_states(CudaAgg *a, const uint32_t *gid, uint64_t n, uint64_t ngroups, Leaf leaf, Op op,
			  DeviceArray &states)
{
	Runtime    *rt = a->rt;
	cudaStream_t s = a->stream;
	DeviceArray unique, nruns, temp;
	size_t		temp_bytes = 0;
	auto		in = thrust::make_transform_iterator(thrust::counting_iterator<uint32_t>(0), leaf);

	unique.get(rt, ngroups * 4 + 4, s);
	states.get(rt, ngroups * sizeof(State) + sizeof(State), s);
	nruns.get(rt, 8, s);
	GPUOPS_CUDA_TRY(cub::DeviceReduce::ReduceByKey(nullptr, temp_bytes, gid, unique.as<uint32_t>(),
												   in, states.as<State>(), nruns.as<uint64_t>(),
												   op, static_cast<int64_t>(n), s));
	temp.get(rt, temp_bytes + 8, s);
	GPUOPS_CUDA_TRY(cub::DeviceReduce::ReduceByKey(temp.as<void>(), temp_bytes, gid,
												   unique.as<uint32_t>(), in, states.as<State>(),
												   nruns.as<uint64_t>(), op,
												   static_cast<int64_t>(n), s));
	a->stats.device_bytes = std::max<uint64_t>(a->stats.device_bytes, rt->used());
}

/*
 * One aggregate: its states per group, copied back and converted into
 * column g of the results.
 */
template <typename State, typename Leaf, typename Op>
void
reduce_aggregate(CudaAgg *a, const uint32_t *gid, uint64_t n, uint64_t ngroups, Leaf leaf, Op op,
				 int g)
{
	cudaStream_t s = a->stream;
	DeviceArray states;
	std::vector<State> h(ngroups);

	reduce_states<State>(a, gid, n, ngroups, leaf, op, states);
	::gpuops::cuda::copy_to_host(h.data(), states.as<State>(), ngroups * sizeof(State), s);
	for (uint64_t k = 0; k < ngroups; k++)
	{
		::gpuops::check_interrupt_every(k);
		to_result(h[k], &a->results[k * a->spec.naggs + g]);
	}
}

GpuopsStatus
CudaAgg::agg_capacity(const GpuopsSettings *settings, const GpuopsAggSpec *spec, uint64_t *rows)
{
	*rows = 0;
	maybe_inject(GPUOPS_FAULT_NO_DEVICE, settings->fault);
	Runtime    &rt = Runtime::get(*settings);

	rt.set_limit(settings->device_memory_limit, settings->device_share);
	*rows = agg_rows_for_budget(rt.limit(), *spec);
	return GPUOPS_OK;
}

CudaAgg::CudaAgg(const GpuopsSettings *settings, const GpuopsAggSpec *spec, uint64_t nrows)
{
	maybe_inject(GPUOPS_FAULT_NO_DEVICE, settings->fault);
	if (spec->nkeys < 0 || spec->nkeys > GPUOPS_MAX_SORT_KEYS ||
		spec->naggs < 0 || spec->naggs > GPUOPS_MAX_AGGS)
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
	uint64_t	at = added;
	size_t		nb = (b->nrows + 7) / 8;
	auto		t0 = std::chrono::steady_clock::now();

	if (at + b->nrows > nrows || at % 8 != 0)
		fail(GPUOPS_ERR_INTERNAL, "aggregation batch of %u rows after %llu of %llu",
			 b->nrows, (unsigned long long) at, (unsigned long long) nrows);
	for (int k = 0; k < spec.nkeys && b->nrows > 0; k++)
	{
		size_t		w = gpuops_key_raw_width(spec.keys[k]);

		GPUOPS_CUDA_TRY(cudaMemcpyAsync(keys[k].as<uint8_t>() + at * w, b->keys[k],
										b->nrows * w, cudaMemcpyHostToDevice, s));
		if (b->key_nulls[k])
			GPUOPS_CUDA_TRY(cudaMemcpyAsync(key_nulls[k].as<uint8_t>() + at / 8,
											b->key_nulls[k], nb, cudaMemcpyHostToDevice, s));
	}
	for (int g = 0; g < spec.naggs && b->nrows > 0; g++)
	{
		if (spec.kinds[g] != GPUOPS_AGG_COUNT && !spec.programs[g])
		{
			size_t		w = gpuops_key_raw_width(spec.value_kinds[g]);

			GPUOPS_CUDA_TRY(cudaMemcpyAsync(values[g].as<uint8_t>() + at * w, b->values[g],
											b->nrows * w, cudaMemcpyHostToDevice, s));
		}
		if (b->value_nulls[g])
			GPUOPS_CUDA_TRY(cudaMemcpyAsync(value_nulls[g].as<uint8_t>() + at / 8,
											b->value_nulls[g], nb, cudaMemcpyHostToDevice, s));
	}
	if (b->nrows > 0 && std::any_of(spec.programs, spec.programs + spec.naggs,
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
					spec.value_kinds[g], values[g].as<uint8_t>(),
					value_nulls[g].as<uint8_t>(), 0, recheck.as<unsigned long long>());
		GPUOPS_CUDA_TRY(cudaGetLastError());
	}
	/* the caller's buffers may change once this returns */
	::gpuops::cuda::sync_stream(s);
	added = at + b->nrows;
	stats.copy_ms += ms_since(t0);
	return GPUOPS_OK;
}

/*
 * Packs each row's group key (and sub-key) into words, column-major; the
 * raw key columns are freed.  Nothing without GROUP BY.
 */
void
pack_words(CudaAgg *a, uint64_t n, DeviceArray &words)
{
	Runtime    *rt = a->rt;
	cudaStream_t s = a->stream;
	const GpuopsAggSpec &spec = a->spec;
	int			nwords = agg_sort_words(spec);
	int			gwords = agg_key_words(spec);
	KeyCols		kc = {};

	if (nwords == 0)
		return;
	words.get(rt, n * 8 * nwords + 8, s);
	for (int k = 0; k < spec.nkeys; k++)
	{
		kc.kinds[k] = spec.keys[k];
		kc.raw[k] = a->keys[k].as<uint8_t>();
		kc.nulls[k] = a->key_nulls[k].as<uint8_t>();
	}
	kc.group_words = gwords;
	kc.order_words = nwords - gwords;
	if (spec.order_agg >= 0)
	{
		kc.order_kind = spec.value_kinds[spec.order_agg];
		kc.order_desc = spec.order_desc != 0;
		kc.order_raw = a->values[spec.order_agg].as<uint8_t>();
		kc.order_nulls = a->value_nulls[spec.order_agg].as<uint8_t>();
	}
	pack_kernel<<<blocks(n), kThreads, 0, s>>>(kc, spec.nkeys, n, words.as<uint64_t>());
	GPUOPS_CUDA_CHECK_LAUNCH("pack");
	for (int k = 0; k < spec.nkeys; k++)
	{
		a->keys[k].reset();
		a->key_nulls[k].reset();
	}
	a->stats.key_words = nwords;
	a->stats.device_bytes = std::max<uint64_t>(a->stats.device_bytes, rt->used());
}

/*
 * Sorts rows by their packed words (pack_words); returns the permutation
 * (sorted position -> row) in perm and the group heads in head.  words is
 * freed unless ordered aggregates need it.
 */
void
sort_groups(CudaAgg *a, uint64_t n, DeviceArray &words, DeviceArray &perm, DeviceArray &head)
{
	Runtime    *rt = a->rt;
	cudaStream_t s = a->stream;
	const GpuopsAggSpec &spec = a->spec;
	int			nwords = agg_sort_words(spec);
	int			gwords = agg_key_words(spec);

	perm.get(rt, n * 4 + 4, s);
	head.get(rt, n * 4 + 4, s);
	iota_kernel<<<blocks(n), kThreads, 0, s>>>(perm.as<uint32_t>(), n);
	GPUOPS_CUDA_CHECK_LAUNCH("iota");
	if (nwords == 0)
	{
		/* no GROUP BY: one group */
		GPUOPS_CUDA_TRY(cudaMemsetAsync(head.as<void>(), 0, n * 4, s));
		GPUOPS_CUDA_TRY(cudaMemsetAsync(head.as<void>(), 1, 1, s));
		return;
	}
	a->stats.sort_bits += sort_by_words(rt, s, spec, nwords, n, perm,
										[&](int w, const uint32_t *p, uint64_t *out) {
			gather_word_kernel<<<blocks(n), kThreads, 0, s>>>(words.as<uint64_t>() + w * n, p, n, out);
			GPUOPS_CUDA_CHECK_LAUNCH("gather word");
		});
	head_kernel<<<blocks(n), kThreads, 0, s>>>(words.as<uint64_t>(), gwords, perm.as<uint32_t>(),
											   n, head.as<uint32_t>());
	GPUOPS_CUDA_CHECK_LAUNCH("head");
	a->stats.device_bytes = std::max<uint64_t>(a->stats.device_bytes, rt->used());
	if (spec.order_agg < 0)
		words.reset();
}

/*
 * A percentile aggregate: per group its count and rows, into column g of
 * the results.  counts (per group, counted rows) is reduced by the first
 * percentile and shared by the rest: the ordered aggregates share their
 * input and FILTER (gpuops_device.h).
 */
void
percentile_aggregate(CudaAgg *a, const uint32_t *gid, uint64_t n, uint64_t ngroups,
					 const uint32_t *perm, const uint32_t *group_start, int g, DeviceArray &counts)
{
	cudaStream_t s = a->stream;
	DeviceArray rows;
	std::vector<CountState> hc(ngroups);
	std::vector<uint64_t> hr(2 * ngroups);

	if (counts.as<CountState>() == nullptr)
		reduce_states<CountState>(a, gid, n, ngroups,
								  CountLeaf{perm, a->value_nulls[g].as<uint8_t>()}, CountOp(),
								  counts);
	rows.get(a->rt, ngroups * 16 + 16, s);
	percentile_kernel<<<blocks(ngroups), kThreads, 0, s>>>(counts.as<CountState>(), group_start,
														   perm, ngroups, a->spec.kinds[g],
														   a->spec.fractions[g],
														   rows.as<uint64_t>());
	GPUOPS_CUDA_CHECK_LAUNCH("percentile");
	::gpuops::cuda::copy_to_host(hc.data(), counts.as<CountState>(), ngroups * sizeof(CountState), s);
	::gpuops::cuda::copy_to_host(hr.data(), rows.as<uint64_t>(), ngroups * 16, s);
	for (uint64_t k = 0; k < ngroups; k++)
	{
		GpuopsAggResult *r = &a->results[k * a->spec.naggs + g];

		::gpuops::check_interrupt_every(k);
		memset(r, 0, sizeof(*r));
		r->count = hc[k].n;
		r->row = hr[2 * k];
		r->row2 = hr[2 * k + 1];
	}
}

GpuopsStatus
CudaAgg::agg_finish(uint64_t *ngroups_out)
{
	cudaStream_t s = stream;
	uint64_t	n = added;
	uint64_t	ngroups = 0;
	DeviceArray perm, head, words, gid, grows, gstart, pct_counts, temp;
	size_t		temp_bytes = 0;
	auto		t0 = std::chrono::steady_clock::now();

	/* the first row a computed input stopped at, over every batch added */
	GPUOPS_CUDA_TRY(cudaMemcpyAsync(&stats.recheck_row, recheck.as<void>(), sizeof(uint64_t),
									cudaMemcpyDeviceToHost, s));
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
		if (hash_aggregate(in, group_rows, results, &ngroups, &stats.device_bytes))
			stats.hashed = 1;
		else
			stats.hash_overflow = 1;
	}
	if (n > 0 && !stats.hashed)
	{
		sort_groups(this, n, words, perm, head);
		gid.get(rt, n * 4 + 4, s);
		GPUOPS_CUDA_TRY(cub::DeviceScan::InclusiveSum(nullptr, temp_bytes, head.as<uint32_t>(),
													  gid.as<uint32_t>(), n, s));
		temp.get(rt, temp_bytes + 8, s);
		GPUOPS_CUDA_TRY(cub::DeviceScan::InclusiveSum(temp.as<void>(), temp_bytes,
													  head.as<uint32_t>(), gid.as<uint32_t>(),
													  n, s));
		temp.reset();
		GPUOPS_CUDA_TRY(cudaMemcpyAsync(rt->pinned_scalar(), gid.as<uint32_t>() + n - 1, 4,
										cudaMemcpyDeviceToHost, s));
		::gpuops::cuda::sync_stream(s);
		ngroups = reinterpret_cast<uint32_t *>(rt->pinned_scalar())[0];
		grows.get(rt, ngroups * 8 + 8, s);
		gstart.get(rt, ngroups * 4 + 4, s);
		group_rows_kernel<<<blocks(n), kThreads, 0, s>>>(head.as<uint32_t>(), gid.as<uint32_t>(),
														 perm.as<uint32_t>(), n,
														 grows.as<uint64_t>(),
														 gstart.as<uint32_t>());
		GPUOPS_CUDA_CHECK_LAUNCH("group rows");
		head.reset();
		group_rows.resize(ngroups);
		::gpuops::cuda::copy_to_host(group_rows.data(), grows.as<uint64_t>(), ngroups * 8, s);
		results.resize(ngroups * spec.naggs);
		for (int g = 0; g < spec.naggs; g++)
		{
			const uint32_t *p = perm.as<uint32_t>();
			const uint8_t *nulls = value_nulls[g].as<uint8_t>();
			ValueLeaf	v = {p, values[g].as<uint8_t>(), nulls, spec.value_kinds[g],
				gpuops_key_raw_width(spec.value_kinds[g])};
			const uint32_t *gd = gid.as<uint32_t>();

			switch (spec.kinds[g])
			{
				case GPUOPS_AGG_COUNT:
					reduce_aggregate<CountState>(this, gd, n, ngroups, CountLeaf{p, nulls},
												 CountOp(), g);
					break;
				case GPUOPS_AGG_SUM_INT:
					reduce_aggregate<SumIntState>(this, gd, n, ngroups, SumIntLeaf{v}, SumIntOp(), g);
					break;
				case GPUOPS_AGG_FLOAT:
					reduce_aggregate<FloatState>(this, gd, n, ngroups, FloatLeaf{v}, FloatOp(), g);
					break;
				case GPUOPS_AGG_SUMSQ_INT:
					reduce_aggregate<SumSqIntState>(this, gd, n, ngroups, SumSqIntLeaf{v},
													SumSqIntOp(), g);
					break;
				case GPUOPS_AGG_MIN:
					reduce_aggregate<MinMaxState>(this, gd, n, ngroups, MinMaxLeaf{v},
												  MinMaxOp<false>(), g);
					break;
				case GPUOPS_AGG_MAX:
					reduce_aggregate<MinMaxState>(this, gd, n, ngroups, MinMaxLeaf{v},
												  MinMaxOp<true>(), g);
					break;
				case GPUOPS_AGG_COUNT_DISTINCT:
					reduce_aggregate<CountState>(this, gd, n, ngroups,
												 DistinctLeaf{p, nulls, words.as<uint64_t>(),
															  agg_sort_words(spec), n},
												 CountOp(), g);
					break;
				case GPUOPS_AGG_PERCENTILE_DISC:
				case GPUOPS_AGG_PERCENTILE_CONT:
					percentile_aggregate(this, gd, n, ngroups, p, gstart.as<uint32_t>(), g,
										 pct_counts);
					break;
			}
		}
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

}								/* namespace */
}								/* namespace cuda */
}								/* namespace gpuops */

extern "C" const GpuopsAggBackend *
gpuops_cuda_agg_backend(void) noexcept
{
	return &gpuops::cuda::cuda_agg_backend;
}
