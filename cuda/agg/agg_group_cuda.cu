/*
 * agg_group_cuda.cu
 *    The sort strategy's groups (agg_cuda.cuh): each row's group key (and
 *    the ordered aggregates' sub-key) packed into words, the rows radix
 *    sorted by them one word at a time (agg_sort.cuh), the first row of
 *    each group flagged and the groups numbered by a prefix sum.
 */
#include <cub/device/device_scan.cuh>
#include <algorithm>

#include "agg_common.hpp"
#include "agg_cuda.cuh"
#include "agg_sort.cuh"
#include "launch.cuh"

namespace gpuops {
namespace cuda {
namespace gpuagg {
namespace {

struct KeyCols
{
	GpuopsKeyKind kinds[GPUOPS_MAX_SORT_KEYS];
	const uint8_t *raw[GPUOPS_MAX_SORT_KEYS];
	const uint8_t *nulls[GPUOPS_MAX_SORT_KEYS];
	/* the ordered aggregates' sub-key, when order_words > 0 */
	int group_words;
	int order_words;
	GpuopsKeyKind order_kind;
	bool order_desc;
	const uint8_t *order_raw;
	const uint8_t *order_nulls;
};

__global__ void
pack_kernel(KeyCols kc, int nkeys, uint64_t n, uint64_t *words)
{
	uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x;
	uint64_t w[kAggMaxKeyWords];
	int nwords = kc.group_words + kc.order_words;

	if (i >= n)
		return;
	agg_pack_key(kc.kinds, nkeys, kc.raw, kc.nulls, i, w, kc.group_words);
	if (kc.order_words > 0)
		agg_pack_order(kc.order_kind, kc.order_desc,
					   agg_null(kc.order_nulls, i)
						   ? nullptr
						   : kc.order_raw + i * gpuops_key_raw_width(kc.order_kind),
					   w + kc.group_words);
	for (int j = 0; j < nwords; j++)
		words[j * n + i] = w[j];
}

/* the radix pass's keys: word w of the rows in their current order */
__global__ void
gather_word_kernel(const uint64_t *word, const uint32_t *perm, uint64_t n, uint64_t *out)
{
	uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x;

	if (i < n)
		out[i] = word[perm[i]];
}

/* head[i]: sorted row i starts a group (its key differs from row i-1's) */
__global__ void
head_kernel(const uint64_t *words, int nwords, const uint32_t *perm, uint64_t n, uint32_t *head)
{
	uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x;

	if (i >= n)
		return;
	uint32_t h = (i == 0);

	for (int w = 0; w < nwords && !h; w++)
		h = words[w * n + perm[i]] != words[w * n + perm[i - 1]];
	head[i] = h;
}

/* each group's first row and its sorted position; gid is 1-based (the inclusive sum of heads) */
__global__ void
group_rows_kernel(const uint32_t *head, const uint32_t *gid, const uint32_t *perm, uint64_t n,
				  uint64_t *group_rows, uint32_t *group_start)
{
	uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x;

	if (i < n && head[i])
	{
		group_rows[gid[i] - 1] = perm[i];
		group_start[gid[i] - 1] = static_cast<uint32_t>(i);
	}
}

} /* namespace */

/*
 * Packs each row's group key (and sub-key) into words, column-major; the
 * raw key columns are freed.  Nothing without GROUP BY.
 */
void
pack_words(CudaAgg *a, uint64_t n, DeviceArray &words)
{
	Runtime *rt = a->rt;
	cudaStream_t s = a->stream;
	const GpuopsAggSpec &spec = a->spec;
	int nwords = agg_sort_words(spec);
	int gwords = agg_key_words(spec);
	KeyCols kc = {};

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
	Runtime *rt = a->rt;
	cudaStream_t s = a->stream;
	const GpuopsAggSpec &spec = a->spec;
	int nwords = agg_sort_words(spec);
	int gwords = agg_key_words(spec);

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
											gather_word_kernel<<<blocks(n), kThreads, 0, s>>>(
												words.as<uint64_t>() + w * n, p, n, out);
											GPUOPS_CUDA_CHECK_LAUNCH("gather word");
										});
	head_kernel<<<blocks(n), kThreads, 0, s>>>(words.as<uint64_t>(), gwords, perm.as<uint32_t>(), n,
											   head.as<uint32_t>());
	GPUOPS_CUDA_CHECK_LAUNCH("head");
	a->stats.device_bytes = std::max<uint64_t>(a->stats.device_bytes, rt->used());
	if (spec.order_agg < 0)
		words.reset();
}

/*
 * Numbers the groups of the sorted rows (perm, head: sort_groups): gid, the
 * 1-based group of each sorted row (an inclusive sum of the heads), and per
 * group its first row (a->group_rows, and grows on the device) and its
 * first sorted position (gstart).  head is freed.  Returns the number of
 * groups.
 */
uint64_t
number_groups(CudaAgg *a, uint64_t n, DeviceArray &perm, DeviceArray &head, DeviceArray &gid,
			  DeviceArray &grows, DeviceArray &gstart)
{
	cudaStream_t s = a->stream;
	uint64_t ngroups;
	DeviceArray temp;
	size_t temp_bytes = 0;

	gid.get(a->rt, n * 4 + 4, s);
	GPUOPS_CUDA_TRY(cub::DeviceScan::InclusiveSum(nullptr, temp_bytes, head.as<uint32_t>(),
												  gid.as<uint32_t>(), n, s));
	temp.get(a->rt, temp_bytes + 8, s);
	GPUOPS_CUDA_TRY(cub::DeviceScan::InclusiveSum(temp.as<void>(), temp_bytes, head.as<uint32_t>(),
												  gid.as<uint32_t>(), n, s));
	temp.reset();
	GPUOPS_CUDA_TRY(cudaMemcpyAsync(a->rt->pinned_scalar(), gid.as<uint32_t>() + n - 1, 4,
									cudaMemcpyDeviceToHost, s));
	a->stats.bytes_from_device += 4;
	::gpuops::cuda::sync_stream(s);
	ngroups = reinterpret_cast<uint32_t *>(a->rt->pinned_scalar())[0];
	grows.get(a->rt, ngroups * 8 + 8, s);
	gstart.get(a->rt, ngroups * 4 + 4, s);
	group_rows_kernel<<<blocks(n), kThreads, 0, s>>>(head.as<uint32_t>(), gid.as<uint32_t>(),
													 perm.as<uint32_t>(), n, grows.as<uint64_t>(),
													 gstart.as<uint32_t>());
	GPUOPS_CUDA_CHECK_LAUNCH("group rows");
	head.reset();
	a->group_rows.resize(ngroups);
	::gpuops::cuda::copy_to_host(a->group_rows.data(), grows.as<uint64_t>(), ngroups * 8, s,
								 &a->stats.bytes_from_device);
	return ngroups;
}

} /* namespace gpuagg */
} /* namespace cuda */
} /* namespace gpuops */
