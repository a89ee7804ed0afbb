/*
 * agg_reduce_cuda.cu
 *    The sort strategy's aggregates (agg_cuda.cuh): per aggregate one CUB
 *    reduce-by-key over the group numbers of the sorted rows, its leaf
 *    states read through the permutation (agg_common.hpp has the states and
 *    their combining operators, shared with the CPU twin); and the
 *    percentiles, whose rows are picked from each group's counted rows.
 *    Only the per-group states come back.
 */
#include <cub/device/device_reduce.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <algorithm>
#include <cstring>
#include <vector>

#include "agg_common.hpp"
#include "agg_cuda.cuh"
#include "launch.cuh"

namespace gpuops {
namespace cuda {
namespace gpuagg {
namespace {

/*
 * A percentile's rows in each group: its counted rows are the group's
 * first counts[j], in value order (the sub-key).
 */
__global__ void
percentile_kernel(const CountState *counts, const uint32_t *group_start, const uint32_t *perm,
				  uint64_t ngroups, GpuopsAggKind kind, double f, uint64_t *rows)
{
	uint64_t j = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x;
	uint64_t lo = 0, hi = 0;

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
	__device__ CountState operator()(uint32_t i) const
	{
		return count_leaf(agg_null(nulls, perm[i]));
	}
};

struct ValueLeaf
{
	const uint32_t *perm;
	const uint8_t *vals;
	const uint8_t *nulls;
	GpuopsKeyKind kind;
	uint32_t width;

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
	__device__ SumSqIntState operator()(uint32_t i) const
	{
		return sumsq_int_leaf(kind, raw(perm[i]));
	}
};

struct FloatLeaf : ValueLeaf
{
	__device__ FloatState operator()(uint32_t i) const
	{
		return float_value_leaf(kind, raw(perm[i]));
	}
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
	int nwords;
	uint64_t n;

	__device__ CountState operator()(uint32_t i) const
	{
		uint32_t r = perm[i];
		bool first = (i == 0);

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
		uint32_t r = perm[i];

		return minmax_leaf(kind, raw(r), r);
	}
};

/* Reduce-by-key of leaf states over the group numbers, into states (on the device). */
template <typename State, typename Leaf, typename Op>
void
reduce_states(CudaAgg *a, const uint32_t *gid, uint64_t n, uint64_t ngroups, Leaf leaf, Op op,
			  DeviceArray &states)
{
	Runtime *rt = a->rt;
	cudaStream_t s = a->stream;
	DeviceArray unique, nruns, temp;
	size_t temp_bytes = 0;
	auto in = thrust::make_transform_iterator(thrust::counting_iterator<uint32_t>(0), leaf);

	unique.get(rt, ngroups * 4 + 4, s);
	states.get(rt, ngroups * sizeof(State) + sizeof(State), s);
	nruns.get(rt, 8, s);
	GPUOPS_CUDA_TRY(cub::DeviceReduce::ReduceByKey(nullptr, temp_bytes, gid, unique.as<uint32_t>(),
												   in, states.as<State>(), nruns.as<uint64_t>(), op,
												   static_cast<int64_t>(n), s));
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
	::gpuops::cuda::copy_to_host(h.data(), states.as<State>(), ngroups * sizeof(State), s,
								 &a->stats.bytes_from_device);
	for (uint64_t k = 0; k < ngroups; k++)
	{
		::gpuops::check_interrupt_every(k);
		to_result(h[k], &a->results[k * a->spec.naggs + g]);
	}
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
	::gpuops::cuda::copy_to_host(hc.data(), counts.as<CountState>(), ngroups * sizeof(CountState),
								 s, &a->stats.bytes_from_device);
	::gpuops::cuda::copy_to_host(hr.data(), rows.as<uint64_t>(), ngroups * 16, s,
								 &a->stats.bytes_from_device);
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

} /* namespace */

/*
 * Every aggregate's states per group, over the sorted rows (perm) and their
 * groups (gid, gstart: number_groups), into a->results.  words: the packed
 * keys, for count(DISTINCT); pct_counts: the percentiles' shared counts.
 */
void
reduce_groups(CudaAgg *a, uint64_t n, uint64_t ngroups, DeviceArray &perm, DeviceArray &gid,
			  DeviceArray &gstart, DeviceArray &words, DeviceArray &pct_counts)
{
	for (int g = 0; g < a->spec.naggs; g++)
	{
		const uint32_t *p = perm.as<uint32_t>();
		const uint8_t *nulls = a->value_nulls[g].as<uint8_t>();
		ValueLeaf v = {p, a->values[g].as<uint8_t>(), nulls, a->spec.value_kinds[g],
					   gpuops_key_raw_width(a->spec.value_kinds[g])};
		const uint32_t *gd = gid.as<uint32_t>();

		switch (a->spec.kinds[g])
		{
			case GPUOPS_AGG_COUNT:
				reduce_aggregate<CountState>(a, gd, n, ngroups, CountLeaf{p, nulls}, CountOp(), g);
				break;
			case GPUOPS_AGG_SUM_INT:
				reduce_aggregate<SumIntState>(a, gd, n, ngroups, SumIntLeaf{v}, SumIntOp(), g);
				break;
			case GPUOPS_AGG_FLOAT:
				reduce_aggregate<FloatState>(a, gd, n, ngroups, FloatLeaf{v}, FloatOp(), g);
				break;
			case GPUOPS_AGG_SUMSQ_INT:
				reduce_aggregate<SumSqIntState>(a, gd, n, ngroups, SumSqIntLeaf{v}, SumSqIntOp(),
												g);
				break;
			case GPUOPS_AGG_MIN:
				reduce_aggregate<MinMaxState>(a, gd, n, ngroups, MinMaxLeaf{v}, MinMaxOp<false>(),
											  g);
				break;
			case GPUOPS_AGG_MAX:
				reduce_aggregate<MinMaxState>(a, gd, n, ngroups, MinMaxLeaf{v}, MinMaxOp<true>(),
											  g);
				break;
			case GPUOPS_AGG_COUNT_DISTINCT:
				reduce_aggregate<CountState>(a, gd, n, ngroups,
											 DistinctLeaf{p, nulls, words.as<uint64_t>(),
														  agg_sort_words(a->spec), n},
											 CountOp(), g);
				break;
			case GPUOPS_AGG_PERCENTILE_DISC:
			case GPUOPS_AGG_PERCENTILE_CONT:
				percentile_aggregate(a, gd, n, ngroups, p, gstart.as<uint32_t>(), g, pct_counts);
				break;
		}
	}
}

} /* namespace gpuagg */
} /* namespace cuda */
} /* namespace gpuops */
