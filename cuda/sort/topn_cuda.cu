/*
 * topn_cuda.cu
 *    The top-N backend on the GPU (gpuops_topn.h).  Each batch's key words,
 *    null bytes and payloads are copied in; one thread per row makes the
 *    row's key words (topn_common.hpp) and, when it comes before the cut
 *    (or no cut is set yet), appends it to the candidates, a warp's rows
 *    with one atomic.  When the next batch would not fit, the candidates
 *    are ordered (a stable radix sort per key word that varies, least
 *    significant first, as the sort backend's runs) and cut to the bound;
 *    the bound-th row's words become the cut.  A candidate is its key words
 *    and then its payload, a column each, the payload compared last (the
 *    order is total: topn_common.hpp).  The rows never leave the device:
 *    only the bound payloads come back, in order.
 */
#include <chrono>
#include <cub/device/device_radix_sort.cuh>
#include <utility>
#include <vector>

#include "backend_tables.hpp"
#include "cuda_runtime.cuh"
#include "device_array.cuh"
#include "launch.cuh"
#include "topn_common.hpp"

namespace gpuops {
namespace cuda {
namespace {

/*
 * meta words: the candidates' count, then the cut's words (the key words
 * and the payload), then whether it is set
 */
constexpr int kMetaCount = 0;
constexpr int kMetaCut = 1;

struct BatchView
{
	const uint64_t *words; /* nkeys x n, key by key */
	const uint8_t *nulls;  /* nkeys x n, key by key (read where has_nulls) */
	const uint64_t *payload;
	uint32_t n;
	uint8_t has_nulls[GPUOPS_TOPN_MAX_KEYS];
};

__global__ void
keep_kernel(TopnKeys keys, BatchView b, uint64_t *meta, uint64_t *cand, uint64_t capacity)
{
	uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x;
	int nc = keys.words() + 1;
	uint64_t w[kTopnMaxWords + 1];
	bool keep = false;

	if (i < b.n)
	{
		for (int k = 0; k < keys.nkeys; k++)
			topn_key_words(keys, k, b.words[k * (uint64_t) b.n + i],
						   b.has_nulls[k] && b.nulls[k * (uint64_t) b.n + i] != 0, &w[2 * k]);
		w[nc - 1] = b.payload[i];
		keep = meta[kMetaCut + nc] == 0 || topn_before(w, meta + kMetaCut, nc);
	}
	/* one atomic a warp: before the first cut every row is kept */
	unsigned mask = __ballot_sync(0xffffffffu, keep);
	unsigned lane = threadIdx.x & 31u;
	unsigned long long base = 0;

	if (mask == 0)
		return;
	if (lane == (unsigned) (__ffs(mask) - 1))
		base = atomicAdd(reinterpret_cast<unsigned long long *>(&meta[kMetaCount]),
						 (unsigned long long) __popc(mask));
	base = __shfl_sync(0xffffffffu, base, __ffs(mask) - 1);
	if (!keep)
		return;
	uint64_t pos = base + __popc(mask & ((1u << lane) - 1u));

	for (int j = 0; j < nc; j++)
		cand[j * capacity + pos] = w[j];
}

/* diff[j]: the bits of column j that differ from the first candidate's */
__global__ void
diff_kernel(const uint64_t *cand, uint64_t capacity, uint64_t n, int nc, uint64_t *diff)
{
	uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x;

	if (i < n)
		for (int j = 0; j < nc; j++)
		{
			uint64_t d = cand[j * capacity + i] ^ cand[j * capacity];

			if (d != 0)
				atomicOr(reinterpret_cast<unsigned long long *>(&diff[j]), (unsigned long long) d);
		}
}

__global__ void
gather_word_kernel(const uint64_t *src, const uint32_t *rows, uint64_t n, uint64_t *dst)
{
	uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x;

	if (i < n)
		dst[i] = src[rows[i]];
}

/* the first `keep` candidates in order, column by column, from cand into out (same stride) */
__global__ void
gather_rows_kernel(const uint64_t *cand, const uint32_t *rows, uint64_t keep, int nc,
				   uint64_t capacity, uint64_t *out)
{
	uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x;

	if (i < keep)
		for (int j = 0; j < nc; j++)
			out[j * capacity + i] = cand[j * capacity + rows[i]];
}

/* the cut: the columns of candidate `last` (kept in order), set */
__global__ void
set_cut_kernel(const uint64_t *cand, uint64_t capacity, uint64_t last, int nc, uint64_t keep,
			   uint64_t *meta)
{
	for (int j = 0; j < nc; j++)
		meta[kMetaCut + j] = cand[j * capacity + last];
	meta[kMetaCut + nc] = 1;
	meta[kMetaCount] = keep;
}

struct CudaTopn
{
	Runtime *rt = nullptr;
	GpuopsSettings settings;
	GpuopsTopnSpec spec;
	TopnKeys keys;
	int nc; /* columns of a candidate: the key words, then the payload */
	uint64_t capacity;
	cudaStream_t stream = nullptr;
	DeviceArray cand, cand_alt, meta, in;
	uint64_t in_rows = 0;
	uint64_t count_ub = 0;	/* the candidates, at most (the device holds the count) */
	uint64_t after_cut = 0; /* the candidates the last cut kept */
	bool has_cut = false;
	cudaEvent_t ev[3] = {nullptr, nullptr, nullptr};
	std::vector<uint64_t> result;
	GpuopsTopnStats stats{};

	/* the entry points (backend_tables.hpp) */
	CudaTopn(const GpuopsSettings *settings, const GpuopsTopnSpec *spec);
	~CudaTopn();
	GpuopsStatus topn_add(const GpuopsTopnBatch *batch);
	GpuopsStatus topn_finish(uint64_t *nrows);
	GpuopsStatus topn_result(const uint64_t **payload);
	void topn_stats(GpuopsTopnStats *out) const;

	uint64_t read_count();
	void order_and_cut(uint64_t keep);
	void add_slice(const GpuopsTopnBatch *b, uint32_t first, uint32_t n);
	void note_peak() { stats.device_bytes = std::max<uint64_t>(stats.device_bytes, rt->used()); }
};

CudaTopn::CudaTopn(const GpuopsSettings *settings, const GpuopsTopnSpec *spec)
	: settings(*settings), spec(*spec), keys(topn_keys(*spec))
{
	maybe_inject(GPUOPS_FAULT_NO_DEVICE, settings->fault);
	nc = keys.words() + 1;
	capacity = topn_capacity(*spec);
	if (capacity > UINT32_MAX)
		fail(GPUOPS_ERR_UNSUPPORTED, "top-N: a bound of %llu rows",
			 static_cast<unsigned long long>(spec->bound));
	rt = &Runtime::get(*settings);
	rt->set_limit(settings->device_memory_limit, settings->device_share);
	stream = rt->stream(0);
	cand.get(rt, capacity * nc * sizeof(uint64_t), stream);
	meta.get(rt, (kMetaCut + nc + 1) * sizeof(uint64_t), stream);
	GPUOPS_CUDA_TRY(
		cudaMemsetAsync(meta.as<void>(), 0, (kMetaCut + nc + 1) * sizeof(uint64_t), stream));
	for (auto &e : ev)
		GPUOPS_CUDA_TRY(cudaEventCreate(&e));
	note_peak();
}

CudaTopn::~CudaTopn()
{
	cand.reset();
	cand_alt.reset();
	meta.reset();
	in.reset();
	(void) cudaStreamSynchronize(stream);
	for (auto &e : ev)
		if (e)
			(void) cudaEventDestroy(e);
}

uint64_t
CudaTopn::read_count()
{
	uint64_t n = 0;

	copy_to_host(&n, meta.as<uint64_t>() + kMetaCount, sizeof(n), stream, &stats.bytes_from_device);
	return n;
}

/* Orders the candidates; keeps the first `keep`, and where that is the bound sets the cut. */
void
CudaTopn::order_and_cut(uint64_t keep)
{
	auto t0 = std::chrono::steady_clock::now();
	uint64_t n = read_count();
	std::vector<uint64_t> diff(nc, 0);
	DeviceArray d_diff, rows, rows_alt, keys_d, keys_alt, temp;
	size_t temp_bytes = 0;

	keep = std::min(keep, n);
	stats.cuts++;
	stats.kept += n - after_cut;
	if (n > 1)
	{
		d_diff.get(rt, nc * sizeof(uint64_t), stream);
		GPUOPS_CUDA_TRY(cudaMemsetAsync(d_diff.as<void>(), 0, nc * sizeof(uint64_t), stream));
		diff_kernel<<<blocks(n), kThreads, 0, stream>>>(cand.as<uint64_t>(), capacity, n, nc,
														d_diff.as<uint64_t>());
		GPUOPS_CUDA_CHECK_LAUNCH("top-N diff");
		copy_to_host(diff.data(), d_diff.as<uint64_t>(), nc * sizeof(uint64_t), stream,
					 &stats.bytes_from_device);
	}
	rows.get(rt, n * sizeof(uint32_t) + 8, stream);
	rows_alt.get(rt, n * sizeof(uint32_t) + 8, stream);
	keys_d.get(rt, n * sizeof(uint64_t) + 8, stream);
	keys_alt.get(rt, n * sizeof(uint64_t) + 8, stream);
	GPUOPS_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, keys_d.as<uint64_t>(),
													keys_alt.as<uint64_t>(), rows.as<uint32_t>(),
													rows_alt.as<uint32_t>(),
													static_cast<int64_t>(n), 0, 64, stream));
	temp.get(rt, temp_bytes + 8, stream);
	if (n > 0)
	{
		iota_kernel<<<blocks(n), kThreads, 0, stream>>>(rows.as<uint32_t>(), n);
		GPUOPS_CUDA_CHECK_LAUNCH("top-N iota");
	}
	/* least significant column (the payload) first; every pass is stable */
	for (int j = nc - 1; j >= 0; j--)
	{
		int bits = diff[j] ? 64 - __builtin_clzll(diff[j]) : 0;

		if (bits == 0)
			continue; /* the same in every candidate: decides nothing */
		gather_word_kernel<<<blocks(n), kThreads, 0, stream>>>(cand.as<uint64_t>() + j * capacity,
															   rows.as<uint32_t>(), n,
															   keys_d.as<uint64_t>());
		GPUOPS_CUDA_CHECK_LAUNCH("top-N gather");
		GPUOPS_CUDA_TRY(cub::DeviceRadixSort::SortPairs(
			temp.as<void>(), temp_bytes, keys_d.as<uint64_t>(), keys_alt.as<uint64_t>(),
			rows.as<uint32_t>(), rows_alt.as<uint32_t>(), static_cast<int64_t>(n), 0, bits,
			stream));
		rows.swap(rows_alt);
	}
	note_peak();
	temp.reset();
	keys_d.reset();
	keys_alt.reset();
	rows_alt.reset();
	if (cand_alt.as<void>() == nullptr)
		cand_alt.get(rt, capacity * nc * sizeof(uint64_t), stream);
	if (keep > 0)
	{
		gather_rows_kernel<<<blocks(keep), kThreads, 0, stream>>>(
			cand.as<uint64_t>(), rows.as<uint32_t>(), keep, nc, capacity, cand_alt.as<uint64_t>());
		GPUOPS_CUDA_CHECK_LAUNCH("top-N keep");
	}
	cand.swap(cand_alt);
	if (keep == spec.bound)
	{
		set_cut_kernel<<<1, 1, 0, stream>>>(cand.as<uint64_t>(), capacity, keep - 1, nc, keep,
											meta.as<uint64_t>());
		GPUOPS_CUDA_CHECK_LAUNCH("top-N cut");
		has_cut = true;
	}
	else
		GPUOPS_CUDA_TRY(cudaMemcpyAsync(meta.as<uint64_t>() + kMetaCount, &keep, sizeof(keep),
										cudaMemcpyHostToDevice, stream));
	note_peak();
	sync_stream(stream);
	count_ub = after_cut = keep;
	stats.kernel_ms += ms_since(t0);
}

/* Rows first .. first + n - 1 of b, n at most half the capacity. */
void
CudaTopn::add_slice(const GpuopsTopnBatch *b, uint32_t first, uint32_t n)
{
	size_t words_off = 0, nulls_off = keys.nkeys * (size_t) n * 8,
		   pay_off = nulls_off + ((keys.nkeys * (size_t) n + 7) & ~size_t(7));
	BatchView v{};

	if (count_ub + n > capacity)
	{
		count_ub = read_count();
		if (count_ub + n > capacity)
			order_and_cut(spec.bound);
	}
	if (in_rows < n)
	{
		in.get(rt, pay_off + (size_t) n * 8, stream);
		in_rows = n;
		note_peak();
	}
	/* the layout for n rows (in holds at least that many) */
	GPUOPS_CUDA_TRY(cudaEventRecord(ev[0], stream));
	for (int k = 0; k < keys.nkeys; k++)
	{
		GPUOPS_CUDA_TRY(cudaMemcpyAsync(in.as<uint8_t>() + words_off + k * (size_t) n * 8,
										b->words[k] + first, (size_t) n * 8, cudaMemcpyHostToDevice,
										stream));
		v.has_nulls[k] = b->nulls[k] != nullptr;
		if (b->nulls[k] != nullptr)
			GPUOPS_CUDA_TRY(cudaMemcpyAsync(in.as<uint8_t>() + nulls_off + k * (size_t) n,
											b->nulls[k] + first, n, cudaMemcpyHostToDevice,
											stream));
	}
	GPUOPS_CUDA_TRY(cudaMemcpyAsync(in.as<uint8_t>() + pay_off, b->payload + first, (size_t) n * 8,
									cudaMemcpyHostToDevice, stream));
	GPUOPS_CUDA_TRY(cudaEventRecord(ev[1], stream));
	v.words = reinterpret_cast<const uint64_t *>(in.as<uint8_t>() + words_off);
	v.nulls = in.as<uint8_t>() + nulls_off;
	v.payload = reinterpret_cast<const uint64_t *>(in.as<uint8_t>() + pay_off);
	v.n = n;
	keep_kernel<<<blocks(n), kThreads, 0, stream>>>(keys, v, meta.as<uint64_t>(),
													cand.as<uint64_t>(), capacity);
	GPUOPS_CUDA_CHECK_LAUNCH("top-N keep rows");
	GPUOPS_CUDA_TRY(cudaEventRecord(ev[2], stream));
	/* the caller may reuse the batch once this returns */
	sync_stream(stream);
	stats.copy_ms += elapsed_ms(ev[0], ev[1]);
	stats.kernel_ms += elapsed_ms(ev[1], ev[2]);
	count_ub += n;
}

GpuopsStatus
CudaTopn::topn_add(const GpuopsTopnBatch *b)
{
	uint32_t slice = static_cast<uint32_t>(std::min<uint64_t>(capacity / 2, UINT32_MAX));

	maybe_inject(GPUOPS_FAULT_OUT_OF_MEMORY, settings.fault);
	for (uint32_t first = 0; first < b->nrows; first += slice)
		add_slice(b, first, std::min(slice, b->nrows - first));
	stats.rows += b->nrows;
	return GPUOPS_OK;
}

GpuopsStatus
CudaTopn::topn_finish(uint64_t *nrows)
{
	uint64_t kept_before;

	maybe_inject(GPUOPS_FAULT_KERNEL_ERROR, settings.fault);
	order_and_cut(spec.bound);
	kept_before = count_ub;
	result.resize(kept_before);
	if (kept_before > 0)
		copy_to_host(result.data(), cand.as<uint64_t>() + (nc - 1) * capacity,
					 kept_before * sizeof(uint64_t), stream, &stats.bytes_from_device);
	*nrows = kept_before;
	return GPUOPS_OK;
}

GpuopsStatus
CudaTopn::topn_result(const uint64_t **payload)
{
	*payload = result.data();
	return GPUOPS_OK;
}

void
CudaTopn::topn_stats(GpuopsTopnStats *out) const
{
	*out = stats;
}

constexpr GpuopsTopnBackend cuda_topn_backend = shell::make_topn_backend<CudaTopn>("cuda");

} /* namespace */
} /* namespace cuda */
} /* namespace gpuops */

extern "C" const GpuopsTopnBackend *
gpuops_cuda_topn_backend(void) noexcept
{
	return &gpuops::cuda::cuda_topn_backend;
}
