/*
 * mergejoin_cuda.cu
 *    The merge join on the GPU (gpuops_device.h describes it).
 *
 * Each side: its key words and null bitmaps are copied once; a row order
 * is sorted by CUB's (stable) radix sort, least significant criterion
 * first: for each key from the last, its words, then its NULL flags (only
 * where the key has NULLs), so NULLs sort after every value of their key.
 * The sorted keys are gathered once.  Join: two merge-path passes, each
 * thread walking 32 positions of the merged sequence from its diagonal,
 * give each outer row the start and end of its equal run on the inner
 * side; CUB prefix-sums the run lengths (the exact output size), and each
 * output pair of a window is written by its own thread, which finds its
 * outer row in the prefix sums: a key on half the rows of both sides does
 * not serialize.
 */
#include <cub/device/device_radix_sort.cuh>
#include <chrono>
#include <memory>
#include <vector>

#include "backend_tables.hpp"
#include "cuda_runtime.cuh"
#include "device_array.cuh"
#include "launch.cuh"
#include "merge_common.hpp"
#include "pair_window.cuh"
#include "prefix_sum.cuh"

namespace gpuops {
namespace cuda {
namespace {

constexpr uint64_t kSegment = 32; /* merged positions per thread */

struct Side
{
	DeviceArray words[GPUOPS_MAX_JOIN_KEYS]; /* sorted */
	DeviceArray mask;						 /* sorted null masks */
	DeviceArray order;						 /* sorted position -> row */
	uint64_t n = 0;
	bool loaded = false;

	MjKeys keys(int nkeys) const
	{
		MjKeys k = {};

		for (int i = 0; i < nkeys; i++)
			k.words[i] = words[i].as<uint64_t>();
		k.nullmask = mask.as<uint8_t>();
		k.nkeys = nkeys;
		return k;
	}
};

struct CudaMergeJoin
{
	Runtime *rt = nullptr;
	GpuopsSettings settings;
	int nkeys = 0;
	cudaStream_t stream = nullptr;
	Side side[2];
	DeviceArray lb;
	DeviceArray offsets;
	PairWindow window;
	std::vector<uint32_t> outer_order;
	GpuopsMergeJoinStats stats = {};

	/* the entry points (backend_tables.hpp) */
	CudaMergeJoin(const GpuopsSettings *settings, int nkeys);
	~CudaMergeJoin();
	GpuopsStatus mj_side(int which, const GpuopsJoinKeys *keys);
	GpuopsStatus mj_join(GpuopsJoinPairs *pairs);
	GpuopsStatus mj_next_pairs(GpuopsJoinPairs *pairs);
	GpuopsStatus mj_outer_order(const uint32_t **order);
	uint64_t mj_capacity() const;
	void mj_stats(GpuopsMergeJoinStats *out) const;
};

/* mask[i] bit k: key k of row i is NULL */
__global__ void
mask_kernel(const uint8_t *nulls, int k, uint64_t n, uint8_t *mask)
{
	uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x;

	if (i < n)
		mask[i] |= ((nulls[i >> 3] >> (i & 7)) & 1) << k;
}

__global__ void
gather_words_kernel(const uint64_t *src, const uint32_t *perm, uint64_t n, uint64_t *dst)
{
	uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x;

	if (i < n)
		dst[i] = src[perm[i]];
}

/* shift > 7: the whole mask; else its bit `shift` */
__global__ void
gather_mask_kernel(const uint8_t *src, const uint32_t *perm, uint64_t n, int shift, uint8_t *dst)
{
	uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x;

	if (i < n)
		dst[i] = shift > 7 ? src[perm[i]] : (src[perm[i]] >> shift) & 1;
}

template <bool kUpper>
__global__ void
merge_kernel(MjKeys o, uint64_t m, MjKeys in, uint64_t n, uint64_t *at)
{
	uint64_t t = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x;
	uint64_t d0 = t * kSegment;

	if (d0 < m + n)
		mj_merge_segment<kUpper>(o, m, in, n, d0, d0 + kSegment < m + n ? d0 + kSegment : m + n,
								 at);
}

__global__ void
count_kernel(const uint8_t *mask, const uint64_t *lb, const uint64_t *ub, uint64_t m,
			 uint64_t *counts)
{
	uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x;

	if (i < m)
		counts[i] = mask[i] ? 0 : ub[i] - lb[i];
	if (i == m)
		counts[m] = 0;
}

__global__ void
write_kernel(const uint64_t *offsets, uint64_t m, const uint64_t *lb, const uint32_t *oorder,
			 const uint32_t *iorder, uint64_t from, uint64_t count, uint32_t *pout, uint32_t *bout)
{
	uint64_t w = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x;

	if (w < count)
	{
		uint64_t idx = from + w;
		uint64_t i = join_owner(offsets, m, idx);

		pout[w] = oorder[i];
		bout[w] = iorder[lb[i] + (idx - offsets[i])];
	}
}

/* One stable radix sort pass of `order` by keys (bits [0, bits)). */
template <typename K>
void
sort_pass(CudaMergeJoin *mj, DeviceArray &keys_in, DeviceArray &order, uint64_t n, int bits)
{
	Runtime *rt = mj->rt;
	cudaStream_t s = mj->stream;
	DeviceArray keys_out, order_out, temp;
	size_t temp_bytes = 0;

	keys_out.get(rt, n * sizeof(K) + 8, s);
	order_out.get(rt, n * 4 + 4, s);
	GPUOPS_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, keys_in.as<K>(),
													keys_out.as<K>(), order.as<uint32_t>(),
													order_out.as<uint32_t>(), n, 0, bits, s));
	temp.get(rt, temp_bytes + 8, s);
	GPUOPS_CUDA_TRY(cub::DeviceRadixSort::SortPairs(temp.as<void>(), temp_bytes, keys_in.as<K>(),
													keys_out.as<K>(), order.as<uint32_t>(),
													order_out.as<uint32_t>(), n, 0, bits, s));
	order.swap(order_out);
	mj->stats.sort_passes++;
}

CudaMergeJoin::CudaMergeJoin(const GpuopsSettings *settings, int nkeys)
{
	maybe_inject(GPUOPS_FAULT_NO_DEVICE, settings->fault);
	if (nkeys < 1 || nkeys > GPUOPS_MAX_JOIN_KEYS)
		fail(GPUOPS_ERR_INTERNAL, "bad number of merge keys: %d", nkeys);
	rt = &Runtime::get(*settings);
	rt->set_limit(settings->device_memory_limit, settings->device_share);
	this->settings = *settings;
	this->nkeys = nkeys;
	stream = rt->stream(0);
	window.max_pairs = join_window_pairs_for_budget(rt->limit());
}

GpuopsStatus
CudaMergeJoin::mj_side(int which, const GpuopsJoinKeys *keys)
{
	cudaStream_t s = stream;
	uint64_t n = keys->nrows;
	int nk = nkeys;
	Side &sd = side[which ? 1 : 0];
	DeviceArray raw[GPUOPS_MAX_JOIN_KEYS];
	DeviceArray mask, nulls, tmp;
	auto t0 = std::chrono::steady_clock::now();

	maybe_inject(GPUOPS_FAULT_OUT_OF_MEMORY, settings.fault);
	if (keys->nkeys != nk || n > UINT32_MAX)
		fail(GPUOPS_ERR_INTERNAL, "merge join side: bad keys");
	mask.get(rt, n + 8, s);
	GPUOPS_CUDA_TRY(cudaMemsetAsync(mask.as<void>(), 0, n + 8, s));
	nulls.get(rt, (n + 7) / 8 + 8, s);
	for (int k = 0; k < nk; k++)
	{
		raw[k].get(rt, n * 8 + 8, s);
		if (n > 0)
			GPUOPS_CUDA_TRY(cudaMemcpyAsync(raw[k].as<void>(), keys->words[k], n * 8,
											cudaMemcpyHostToDevice, s));
		if (keys->nulls[k] && n > 0)
		{
			GPUOPS_CUDA_TRY(cudaMemcpyAsync(nulls.as<void>(), keys->nulls[k], (n + 7) / 8,
											cudaMemcpyHostToDevice, s));
			mask_kernel<<<blocks(n), kThreads, 0, s>>>(nulls.as<uint8_t>(), k, n,
													   mask.as<uint8_t>());
			GPUOPS_CUDA_CHECK_LAUNCH("merge null mask");
		}
	}
	::gpuops::cuda::sync_stream(s);
	stats.copy_ms += ms_since(t0);
	t0 = std::chrono::steady_clock::now();
	sd.order.get(rt, n * 4 + 4, s);
	if (n > 0)
	{
		iota_kernel<<<blocks(n), kThreads, 0, s>>>(sd.order.as<uint32_t>(), n);
		GPUOPS_CUDA_CHECK_LAUNCH("merge iota");
	}
	/* least significant first: key k's words, then its NULL flags */
	for (int k = nk - 1; k >= 0 && n > 1; k--)
	{
		tmp.get(rt, n * 8 + 8, s);
		gather_words_kernel<<<blocks(n), kThreads, 0, s>>>(raw[k].as<uint64_t>(),
														   sd.order.as<uint32_t>(), n,
														   tmp.as<uint64_t>());
		GPUOPS_CUDA_CHECK_LAUNCH("merge gather");
		sort_pass<uint64_t>(this, tmp, sd.order, n, 64);
		if (keys->nulls[k])
		{
			tmp.get(rt, n + 8, s);
			gather_mask_kernel<<<blocks(n), kThreads, 0, s>>>(mask.as<uint8_t>(),
															  sd.order.as<uint32_t>(), n, k,
															  tmp.as<uint8_t>());
			GPUOPS_CUDA_CHECK_LAUNCH("merge gather nulls");
			sort_pass<uint8_t>(this, tmp, sd.order, n, 1);
		}
	}
	for (int k = 0; k < nk; k++)
	{
		sd.words[k].get(rt, n * 8 + 8, s);
		if (n > 0)
		{
			gather_words_kernel<<<blocks(n), kThreads, 0, s>>>(raw[k].as<uint64_t>(),
															   sd.order.as<uint32_t>(), n,
															   sd.words[k].as<uint64_t>());
			GPUOPS_CUDA_CHECK_LAUNCH("merge gather keys");
		}
		raw[k].reset();
	}
	sd.mask.get(rt, n + 8, s);
	if (n > 0)
	{
		gather_mask_kernel<<<blocks(n), kThreads, 0, s>>>(mask.as<uint8_t>(),
														  sd.order.as<uint32_t>(), n, 8,
														  sd.mask.as<uint8_t>());
		GPUOPS_CUDA_CHECK_LAUNCH("merge gather masks");
	}
	::gpuops::cuda::sync_stream(s);
	sd.n = n;
	sd.loaded = true;
	(which ? stats.inner_rows : stats.outer_rows) = n;
	stats.device_bytes = std::max<uint64_t>(stats.device_bytes, rt->used());
	stats.kernel_ms += ms_since(t0);
	return GPUOPS_OK;
}

void
write_window(CudaMergeJoin *mj, GpuopsJoinPairs *pairs)
{
	cudaStream_t s = mj->stream;

	write_pair_window(mj->window, mj->rt, s, &mj->stats.device_bytes, &mj->stats.bytes_from_device,
					  pairs, [&](uint64_t from, uint64_t m, uint32_t *pout, uint32_t *bout) {
						  write_kernel<<<blocks(m), kThreads, 0, s>>>(
							  mj->offsets.as<uint64_t>(), mj->side[0].n, mj->lb.as<uint64_t>(),
							  mj->side[0].order.as<uint32_t>(), mj->side[1].order.as<uint32_t>(),
							  from, m, pout, bout);
						  GPUOPS_CUDA_CHECK_LAUNCH("merge write");
					  });
}

GpuopsStatus
CudaMergeJoin::mj_join(GpuopsJoinPairs *pairs)
{
	cudaStream_t s = stream;
	const Side &o = side[0];
	const Side &in = side[1];
	uint64_t m = o.n, n = in.n;
	DeviceArray ub, counts;
	auto t0 = std::chrono::steady_clock::now();

	maybe_inject(GPUOPS_FAULT_KERNEL_ERROR, settings.fault);
	if (!o.loaded || !in.loaded)
		fail(GPUOPS_ERR_INTERNAL, "merge join: a side is missing");
	lb.get(rt, (m + 1) * 8, s);
	ub.get(rt, (m + 1) * 8, s);
	if (m + n > 0)
	{
		uint64_t threads = (m + n + kSegment - 1) / kSegment;

		merge_kernel<false><<<blocks(threads), kThreads, 0, s>>>(o.keys(nkeys), m, in.keys(nkeys),
																 n, lb.as<uint64_t>());
		GPUOPS_CUDA_CHECK_LAUNCH("merge path (start)");
		merge_kernel<true><<<blocks(threads), kThreads, 0, s>>>(o.keys(nkeys), m, in.keys(nkeys), n,
																ub.as<uint64_t>());
		GPUOPS_CUDA_CHECK_LAUNCH("merge path (end)");
	}
	counts.get(rt, (m + 1) * 8, s);
	offsets.get(rt, (m + 1) * 8, s);
	count_kernel<<<blocks(m + 1), kThreads, 0, s>>>(o.mask.as<uint8_t>(), lb.as<uint64_t>(),
													ub.as<uint64_t>(), m, counts.as<uint64_t>());
	GPUOPS_CUDA_CHECK_LAUNCH("merge count");
	exclusive_sum(rt, s, counts, offsets, m);
	GPUOPS_CUDA_TRY(cudaMemcpyAsync(rt->pinned_scalar(), offsets.as<uint64_t>() + m, 8,
									cudaMemcpyDeviceToHost, s));
	stats.bytes_from_device += 8;
	/* counting only: neither the outer order nor a pair comes back */
	outer_order.resize(pairs ? m : 0);
	if (pairs && m > 0)
		::gpuops::cuda::copy_to_host(outer_order.data(), o.order.as<uint32_t>(), m * 4, s,
									 &stats.bytes_from_device);
	::gpuops::cuda::sync_stream(s);
	window.start(rt->pinned_scalar()[0]);
	stats.pairs = window.total;
	ub.reset();
	counts.reset();
	if (pairs)
		write_window(this, pairs);
	stats.kernel_ms += ms_since(t0);
	return GPUOPS_OK;
}

GpuopsStatus
CudaMergeJoin::mj_next_pairs(GpuopsJoinPairs *pairs)
{
	auto t0 = std::chrono::steady_clock::now();

	maybe_inject(GPUOPS_FAULT_KERNEL_ERROR, settings.fault);
	stats.windows++;
	write_window(this, pairs);
	stats.kernel_ms += ms_since(t0);
	return GPUOPS_OK;
}

GpuopsStatus
CudaMergeJoin::mj_outer_order(const uint32_t **order)
{
	*order = outer_order.data();
	return GPUOPS_OK;
}

uint64_t
CudaMergeJoin::mj_capacity() const
{
	return mj_rows_for_budget(rt->limit(), nkeys);
}

void
CudaMergeJoin::mj_stats(GpuopsMergeJoinStats *out) const
{
	*out = stats;
}

/* mj_end */
CudaMergeJoin::~CudaMergeJoin()
{
	for (auto &sd : side)
	{
		for (auto &w : sd.words)
			w.reset();
		sd.mask.reset();
		sd.order.reset();
	}
	lb.reset();
	offsets.reset();
	(void) cudaStreamSynchronize(stream);
}

constexpr GpuopsMergeJoinBackend cuda_mergejoin_backend =
	shell::make_mergejoin_backend<CudaMergeJoin>("cuda");

} /* namespace */
} /* namespace cuda */
} /* namespace gpuops */

extern "C" const GpuopsMergeJoinBackend *
gpuops_cuda_mergejoin_backend(void) noexcept
{
	return &gpuops::cuda::cuda_mergejoin_backend;
}
