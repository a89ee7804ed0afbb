/*
 * join_cuda.cu
 *    The hash join on the GPU (gpuops_device.h describes the algorithm).
 *
 * Build: the build side's non-NULL key words are gathered on the host and
 * copied once; a kernel hashes them, CUB radix-sorts (hash, row) pairs and
 * selects the first index of each distinct hash: the directory.  Probe, per
 * batch of probe keys: a kernel hashes and binary-searches each row's hash
 * (count), CUB prefix-sums the counts (the exact output size), and one
 * thread per output pair finds its probe row in the prefix sums and writes
 * the pair (write).  Everything runs on one stream; the host waits for the
 * pair count and the pairs.  Device memory comes from the runtime's pool
 * under the budget.
 */
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <atomic>
#include <chrono>
#include <memory>
#include <vector>

#include "backend_tables.hpp"
#include "cuda_runtime.cuh"
#include "device_array.cuh"
#include "join_hash.hpp"
#include "launch.cuh"
#include "pair_window.cuh"
#include "prefix_sum.cuh"

namespace gpuops {
namespace cuda {
namespace {

struct KeyPtrs
{
	const uint64_t *words[GPUOPS_MAX_JOIN_KEYS];
	const uint8_t *nulls[GPUOPS_MAX_JOIN_KEYS];
};

struct CudaLookup;

struct CudaJoin
{
	Runtime *rt = nullptr;
	GpuopsSettings settings;
	int nkeys = 0;
	cudaStream_t stream = nullptr;

	/* build side, gathered on the host until build_finish: one array per key */
	std::vector<uint64_t> h_words[GPUOPS_MAX_JOIN_KEYS];
	std::vector<uint32_t> h_rows;
	uint64_t build_rows = 0;

	/* on the device after build_finish */
	DeviceArray sorted_rows; /* build rows in hash order */
	DeviceArray dir;		 /* distinct hashes */
	DeviceArray first;		 /* their first index in sorted_rows */
	DeviceArray count;
	uint64_t ndir = 0;
	size_t build_bytes = 0;

	/* the current probe: candidates counted, pairs written window by window */
	DeviceArray slot;	 /* per probe row: directory entry or -1 */
	DeviceArray offsets; /* per probe row: its first pair; [n] = total */
	uint64_t probe_n = 0;
	PairWindow window; /* pairs returned so far, the last window */
	GpuopsJoinStats stats = {};
	/* the lookups' copies back (bytes_from_device): they run on the service's thread */
	mutable std::atomic<uint64_t> lookup_bytes{0};

	/* the entry points (backend_tables.hpp) */
	using Lookup = CudaLookup;
	CudaJoin(const GpuopsSettings *settings, int nkeys);
	~CudaJoin();
	GpuopsStatus join_build(const GpuopsJoinKeys *keys);
	GpuopsStatus join_build_finish();
	GpuopsStatus join_probe(const GpuopsJoinKeys *keys, GpuopsJoinPairs *pairs);
	GpuopsStatus join_next_pairs(GpuopsJoinPairs *pairs);
	uint64_t join_capacity() const;
	uint32_t join_probe_rows() const;
	void join_stats(GpuopsJoinStats *out) const;
	GpuopsStatus join_directory(uint64_t *ndir_out, uint64_t *checksum);
};

__global__ void
hash_kernel(KeyPtrs keys, int nkeys, uint64_t n, uint64_t *hash)
{
	uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x;

	if (i < n)
		hash[i] = join_hash(keys.words, nkeys, i);
}

__global__ void
head_kernel(const uint64_t *hash, uint64_t n, uint8_t *head)
{
	uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x;

	if (i < n)
		head[i] = (i == 0 || hash[i] != hash[i - 1]);
}

__global__ void
dir_kernel(const uint64_t *hash, const uint64_t *first, uint64_t ndir, uint64_t n, uint64_t *dir,
		   uint64_t *count)
{
	uint64_t d = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x;

	if (d < ndir)
	{
		dir[d] = hash[first[d]];
		count[d] = (d + 1 < ndir ? first[d + 1] : n) - first[d];
	}
}

/*
 * count: candidates per probe row; slot: its directory entry or -1.  A
 * probe counts in 64 bits (they are prefix-summed into offsets); a shared
 * build's lookup answers in 32 (a build holds fewer than 2^32 rows).
 */
template <typename Count>
__global__ void
probe_count_kernel(KeyPtrs keys, int nkeys, uint64_t n, const uint64_t *dir, uint64_t ndir,
				   const uint64_t *count, int64_t *slot, Count *counts)
{
	uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x;

	if (i < n)
	{
		int64_t d = join_slot(keys.words, keys.nulls, nkeys, i, dir, ndir);

		slot[i] = d;
		counts[i] = d < 0 ? 0 : static_cast<Count>(count[d]);
	}
	if (i == n)
		counts[n] = 0; /* the scan's last element: offsets[n] = total */
}

/* one thread per output pair (of the window from `from`): skew does not serialize */
__global__ void
probe_write_kernel(const uint64_t *offsets, uint64_t n, uint64_t from, uint64_t m,
				   const int64_t *slot, const uint64_t *first, const uint32_t *sorted_rows,
				   uint32_t *probe_out, uint32_t *build_out)
{
	uint64_t w = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x;

	if (w < m)
	{
		uint64_t i = from + w;
		uint64_t p = join_owner(offsets, n, i);

		probe_out[w] = static_cast<uint32_t>(p);
		build_out[w] = sorted_rows[first[slot[p]] + (i - offsets[p])];
	}
}

CudaJoin::CudaJoin(const GpuopsSettings *settings, int nkeys)
{
	maybe_inject(GPUOPS_FAULT_NO_DEVICE, settings->fault);
	if (nkeys < 1 || nkeys > GPUOPS_MAX_JOIN_KEYS)
		fail(GPUOPS_ERR_INTERNAL, "bad number of join keys: %d", nkeys);
	rt = &Runtime::get(*settings);
	rt->set_limit(settings->device_memory_limit, settings->device_share);
	window.max_pairs = join_window_pairs_for_budget(rt->limit());
	this->settings = *settings;
	this->nkeys = nkeys;
	stream = rt->stream(0);
}

GpuopsStatus
CudaJoin::join_build(const GpuopsJoinKeys *keys)
{
	if (keys->nkeys != nkeys)
		fail(GPUOPS_ERR_INTERNAL, "join keys: %d given, %d expected", keys->nkeys, nkeys);
	if (build_rows + keys->nrows > UINT32_MAX)
		fail(GPUOPS_ERR_UNSUPPORTED, "build side over %u rows", UINT32_MAX);
	/* NULL keys never match: they stay out of the directory */
	for (uint64_t i = 0; i < keys->nrows; i++)
		if (!join_key_null(keys->nulls, nkeys, i))
		{
			for (int k = 0; k < nkeys; k++)
				h_words[k].push_back(keys->words[k][i]);
			h_rows.push_back(static_cast<uint32_t>(build_rows + i));
		}
	build_rows += keys->nrows;
	stats.build_rows = build_rows;
	return GPUOPS_OK;
}

GpuopsStatus
CudaJoin::join_build_finish()
{
	cudaStream_t s = stream;
	uint64_t n = h_rows.size();
	DeviceArray words, rows_in, hash_in, hash_out, head, nsel, temp;
	KeyPtrs kp = {};
	size_t temp_bytes = 0, t2 = 0;
	auto t0 = std::chrono::steady_clock::now();

	maybe_inject(GPUOPS_FAULT_OUT_OF_MEMORY, settings.fault);
	/* one device array holding each key's words, key after key */
	words.get(rt, n * nkeys * 8 + 8, s);
	rows_in.get(rt, n * 4 + 4, s);
	for (int k = 0; k < nkeys && n > 0; k++)
		GPUOPS_CUDA_TRY(cudaMemcpyAsync(words.as<uint64_t>() + k * n, h_words[k].data(), n * 8,
										cudaMemcpyHostToDevice, s));
	if (n > 0)
		GPUOPS_CUDA_TRY(cudaMemcpyAsync(rows_in.as<uint32_t>(), h_rows.data(), n * 4,
										cudaMemcpyHostToDevice, s));
	::gpuops::cuda::sync_stream(s);
	stats.copy_ms += ms_since(t0);
	t0 = std::chrono::steady_clock::now();
	for (int k = 0; k < nkeys; k++)
		std::vector<uint64_t>().swap(h_words[k]);
	std::vector<uint32_t>().swap(h_rows);
	for (int k = 0; k < nkeys; k++)
		kp.words[k] = words.as<uint64_t>() + k * n;

	hash_in.get(rt, n * 8 + 8, s);
	hash_out.get(rt, n * 8 + 8, s);
	sorted_rows.get(rt, n * 4 + 4, s);
	if (n > 0)
	{
		hash_kernel<<<blocks(n), kThreads, 0, s>>>(kp, nkeys, n, hash_in.as<uint64_t>());
		GPUOPS_CUDA_CHECK_LAUNCH("hash");
		GPUOPS_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, hash_in.as<uint64_t>(),
														hash_out.as<uint64_t>(),
														rows_in.as<uint32_t>(),
														sorted_rows.as<uint32_t>(), n, 0, 64, s));
		head.get(rt, n + 1, s);
		first.get(rt, n * 8 + 8, s);
		nsel.get(rt, 8, s);
		GPUOPS_CUDA_TRY(cub::DeviceSelect::Flagged(nullptr, t2,
												   thrust::counting_iterator<uint64_t>(0),
												   head.as<uint8_t>(), first.as<uint64_t>(),
												   nsel.as<uint64_t>(), n, s));
		temp.get(rt, std::max(temp_bytes, t2) + 8, s);
		temp_bytes = std::max(temp_bytes, t2);
		GPUOPS_CUDA_TRY(cub::DeviceRadixSort::SortPairs(
			temp.as<void>(), temp_bytes, hash_in.as<uint64_t>(), hash_out.as<uint64_t>(),
			rows_in.as<uint32_t>(), sorted_rows.as<uint32_t>(), n, 0, 64, s));
		head_kernel<<<blocks(n), kThreads, 0, s>>>(hash_out.as<uint64_t>(), n, head.as<uint8_t>());
		GPUOPS_CUDA_CHECK_LAUNCH("head");
		GPUOPS_CUDA_TRY(cub::DeviceSelect::Flagged(temp.as<void>(), temp_bytes,
												   thrust::counting_iterator<uint64_t>(0),
												   head.as<uint8_t>(), first.as<uint64_t>(),
												   nsel.as<uint64_t>(), n, s));
		GPUOPS_CUDA_TRY(cudaMemcpyAsync(rt->pinned_scalar(), nsel.as<uint64_t>(), 8,
										cudaMemcpyDeviceToHost, s));
		stats.bytes_from_device += 8;
		::gpuops::cuda::sync_stream(s);
		ndir = rt->pinned_scalar()[0];
	}
	dir.get(rt, ndir * 8 + 8, s);
	count.get(rt, ndir * 8 + 8, s);
	if (ndir > 0)
	{
		dir_kernel<<<blocks(ndir), kThreads, 0, s>>>(hash_out.as<uint64_t>(), first.as<uint64_t>(),
													 ndir, n, dir.as<uint64_t>(),
													 count.as<uint64_t>());
		GPUOPS_CUDA_CHECK_LAUNCH("directory");
	}
	::gpuops::cuda::sync_stream(s);
	stats.directory = ndir;
	build_bytes = n * 4 + ndir * 24 + n * 8;
	stats.device_bytes = std::max<uint64_t>(stats.device_bytes, rt->used());
	stats.kernel_ms += ms_since(t0);
	return GPUOPS_OK;
}

/*
 * The next window of the current probe's pairs: written on the device from
 * the prefix sums, copied back.
 */
void
write_window(CudaJoin *j, GpuopsJoinPairs *pairs)
{
	cudaStream_t s = j->stream;

	write_pair_window(j->window, j->rt, s, &j->stats.device_bytes, &j->stats.bytes_from_device,
					  pairs, [&](uint64_t from, uint64_t m, uint32_t *pout, uint32_t *bout) {
						  probe_write_kernel<<<blocks(m), kThreads, 0, s>>>(
							  j->offsets.as<uint64_t>(), j->probe_n, from, m, j->slot.as<int64_t>(),
							  j->first.as<uint64_t>(), j->sorted_rows.as<uint32_t>(), pout, bout);
						  GPUOPS_CUDA_CHECK_LAUNCH("probe write");
					  });
}

GpuopsStatus
CudaJoin::join_probe(const GpuopsJoinKeys *keys, GpuopsJoinPairs *pairs)
{
	cudaStream_t s = stream;
	uint64_t n = keys->nrows;
	DeviceArray words, nulls, counts;
	KeyPtrs kp = {};
	size_t nbytes = (n + 7) / 8;
	auto t0 = std::chrono::steady_clock::now();

	if (keys->nkeys != nkeys)
		fail(GPUOPS_ERR_INTERNAL, "join keys: %d given, %d expected", keys->nkeys, nkeys);
	maybe_inject(GPUOPS_FAULT_KERNEL_ERROR, settings.fault);
	slot.reset();
	offsets.reset();
	words.get(rt, n * 8 * nkeys + 8, s);
	nulls.get(rt, nbytes * nkeys + 8, s);
	for (int k = 0; k < nkeys; k++)
	{
		kp.words[k] = words.as<uint64_t>() + k * n;
		GPUOPS_CUDA_TRY(cudaMemcpyAsync(const_cast<uint64_t *>(kp.words[k]), keys->words[k], n * 8,
										cudaMemcpyHostToDevice, s));
		if (keys->nulls[k])
		{
			kp.nulls[k] = nulls.as<uint8_t>() + k * nbytes;
			GPUOPS_CUDA_TRY(cudaMemcpyAsync(const_cast<uint8_t *>(kp.nulls[k]), keys->nulls[k],
											nbytes, cudaMemcpyHostToDevice, s));
		}
	}
	slot.get(rt, n * 8 + 8, s);
	counts.get(rt, (n + 1) * 8, s);
	offsets.get(rt, (n + 1) * 8, s);
	probe_count_kernel<<<blocks(n + 1), kThreads, 0, s>>>(kp, nkeys, n, dir.as<uint64_t>(), ndir,
														  count.as<uint64_t>(), slot.as<int64_t>(),
														  counts.as<uint64_t>());
	GPUOPS_CUDA_CHECK_LAUNCH("probe count");
	exclusive_sum(rt, s, counts, offsets, n);
	GPUOPS_CUDA_TRY(cudaMemcpyAsync(rt->pinned_scalar(), offsets.as<uint64_t>() + n, 8,
									cudaMemcpyDeviceToHost, s));
	stats.bytes_from_device += 8;
	::gpuops::cuda::sync_stream(s);
	probe_n = n;
	window.start(rt->pinned_scalar()[0]);
	words.reset();
	nulls.reset();
	counts.reset();
	write_window(this, pairs);
	stats.probe_rows += n;
	stats.pairs += window.total;
	stats.probe_batches++;
	stats.kernel_ms += ms_since(t0);
	return GPUOPS_OK;
}

GpuopsStatus
CudaJoin::join_next_pairs(GpuopsJoinPairs *pairs)
{
	auto t0 = std::chrono::steady_clock::now();

	maybe_inject(GPUOPS_FAULT_KERNEL_ERROR, settings.fault);
	stats.windows++;
	write_window(this, pairs);
	stats.kernel_ms += ms_since(t0);
	return GPUOPS_OK;
}

uint64_t
CudaJoin::join_capacity() const
{
	return join_build_rows_for_budget(rt->limit(), nkeys);
}

void
CudaJoin::join_stats(GpuopsJoinStats *out) const
{
	*out = stats;
	out->bytes_from_device += lookup_bytes.load(std::memory_order_relaxed);
}

/* join_end */
CudaJoin::~CudaJoin()
{
	/* device arrays go back to the pool on the stream; then wait for it */
	sorted_rows.reset();
	dir.reset();
	first.reset();
	count.reset();
	slot.reset();
	offsets.reset();
	(void) cudaStreamSynchronize(stream);
}

uint32_t
CudaJoin::join_probe_rows() const
{
	return join_probe_rows_for_budget(rt->limit(), nkeys);
}

GpuopsStatus
CudaJoin::join_directory(uint64_t *ndir_out, uint64_t *checksum)
{
	std::vector<uint64_t> host_dir(ndir);

	if (ndir > 0)
	{
		::gpuops::cuda::copy_to_host(host_dir.data(), dir.as<uint64_t>(), ndir * 8, stream,
									 &stats.bytes_from_device);
		::gpuops::cuda::sync_stream(stream);
	}
	*ndir_out = ndir;
	*checksum = join_directory_checksum(host_dir.data(), host_dir.size());
	return GPUOPS_OK;
}

/*
 * A lookup: its own stream and device buffers (allocated here, on the
 * caller's thread, so the runtime's budget is never touched from the
 * lookup's), reading the join's finished directory.
 */
struct CudaLookup
{
	const CudaJoin *join = nullptr;
	GpuopsFault fault = GPUOPS_FAULT_NONE;
	uint32_t max_rows = 0;
	cudaStream_t stream = nullptr;
	DeviceArray words, nulls, slot, counts;

	/* the entry points (backend_tables.hpp) */
	CudaLookup(CudaJoin *j, uint32_t max_rows);
	~CudaLookup() { release(); }
	GpuopsStatus lookup(const GpuopsJoinKeys *keys, int64_t *slots, uint32_t *counts_out);

	void release() noexcept
	{
		words.reset();
		nulls.reset();
		slot.reset();
		counts.reset();
		if (stream)
		{
			(void) cudaStreamSynchronize(stream);
			(void) cudaStreamDestroy(stream);
		}
	}
};

CudaLookup::CudaLookup(CudaJoin *j, uint32_t max_rows)
{
	size_t nbytes = (max_rows + 7) / 8;

	join = j;
	fault = j->settings.fault;
	this->max_rows = max_rows;
	/* a lookup_begin that fails frees what it has, stream included */
	try
	{
		GPUOPS_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
		words.get(j->rt, (size_t) max_rows * 8 * j->nkeys + 8, stream);
		nulls.get(j->rt, nbytes * j->nkeys + 8, stream);
		slot.get(j->rt, (size_t) max_rows * 8 + 8, stream);
		counts.get(j->rt, ((size_t) max_rows + 1) * 4, stream); /* the kernel's [n] too */
		::gpuops::cuda::sync_stream(stream);
	}
	catch (...)
	{
		release();
		throw;
	}
}

GpuopsStatus
CudaLookup::lookup(const GpuopsJoinKeys *keys, int64_t *slots, uint32_t *counts_out)
{
	const CudaJoin *j = join;
	cudaStream_t s = stream;
	uint64_t n = keys->nrows;
	size_t nbytes = (n + 7) / 8;
	KeyPtrs kp = {};

	if (keys->nkeys != j->nkeys || n > max_rows)
		fail(GPUOPS_ERR_INTERNAL, "lookup of %llu rows, %d keys", (unsigned long long) n,
			 keys->nkeys);
	maybe_inject(GPUOPS_FAULT_KERNEL_ERROR, fault);
	if (n == 0)
		return GPUOPS_OK;
	for (int k = 0; k < j->nkeys; k++)
	{
		kp.words[k] = words.as<uint64_t>() + k * n;
		GPUOPS_CUDA_TRY(cudaMemcpyAsync(const_cast<uint64_t *>(kp.words[k]), keys->words[k], n * 8,
										cudaMemcpyHostToDevice, s));
		if (keys->nulls[k])
		{
			kp.nulls[k] = nulls.as<uint8_t>() + k * nbytes;
			GPUOPS_CUDA_TRY(cudaMemcpyAsync(const_cast<uint8_t *>(kp.nulls[k]), keys->nulls[k],
											nbytes, cudaMemcpyHostToDevice, s));
		}
	}
	probe_count_kernel<<<blocks(n + 1), kThreads, 0, s>>>(kp, j->nkeys, n, j->dir.as<uint64_t>(),
														  j->ndir, j->count.as<uint64_t>(),
														  slot.as<int64_t>(),
														  counts.as<uint32_t>());
	GPUOPS_CUDA_CHECK_LAUNCH("lookup");
	uint64_t counted = 0;

	::gpuops::cuda::copy_to_host(slots, slot.as<int64_t>(), n * 8, s, &counted);
	::gpuops::cuda::copy_to_host(counts_out, counts.as<uint32_t>(), n * 4, s, &counted);
	::gpuops::cuda::sync_stream(s);
	j->lookup_bytes.fetch_add(counted, std::memory_order_relaxed);
	return GPUOPS_OK;
}

constexpr GpuopsJoinBackend cuda_join_backend = shell::make_join_backend<CudaJoin>("cuda");

} /* namespace */
} /* namespace cuda */
} /* namespace gpuops */

extern "C" const GpuopsJoinBackend *
gpuops_cuda_join_backend(void) noexcept
{
	return &gpuops::cuda::cuda_join_backend;
}
