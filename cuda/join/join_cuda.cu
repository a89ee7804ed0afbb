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
#include <chrono>
#include <memory>
#include <vector>

#include "cuda_runtime.cuh"
#include "device_array.cuh"
#include "join_hash.hpp"
#include "launch.cuh"
#include "prefix_sum.cuh"

namespace gpuops {
namespace cuda {
namespace {

struct KeyPtrs
{
	const uint64_t *words[GPUOPS_MAX_JOIN_KEYS];
	const uint8_t *nulls[GPUOPS_MAX_JOIN_KEYS];
};

struct CudaJoin
{
	Runtime    *rt = nullptr;
	GpuopsSettings settings;
	int			nkeys = 0;
	cudaStream_t stream = nullptr;

	/* build side, gathered on the host until build_finish: one array per key */
	std::vector<uint64_t> h_words[GPUOPS_MAX_JOIN_KEYS];
	std::vector<uint32_t> h_rows;
	uint64_t	build_rows = 0;

	/* on the device after build_finish */
	DeviceArray sorted_rows;	/* build rows in hash order */
	DeviceArray dir;			/* distinct hashes */
	DeviceArray first;			/* their first index in sorted_rows */
	DeviceArray count;
	uint64_t	ndir = 0;
	size_t		build_bytes = 0;

	/* the current probe: candidates counted, pairs written window by window */
	DeviceArray slot;			/* per probe row: directory entry or -1 */
	DeviceArray offsets;		/* per probe row: its first pair; [n] = total */
	uint64_t	probe_n = 0;
	uint64_t	total = 0;
	uint64_t	written = 0;	/* pairs returned so far */
	uint64_t	window = 0;		/* pairs per window */

	std::vector<uint32_t> probe_out, build_out;
	GpuopsJoinStats stats = {};
};

__global__ void
hash_kernel(KeyPtrs keys, int nkeys, uint64_t n, uint64_t *hash)
{
	uint64_t	i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x;

	if (i < n)
		hash[i] = join_hash(keys.words, nkeys, i);
}

__global__ void
head_kernel(const uint64_t *hash, uint64_t n, uint8_t *head)
{
	uint64_t	i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x;

	if (i < n)
		head[i] = (i == 0 || hash[i] != hash[i - 1]);
}

__global__ void
dir_kernel(const uint64_t *hash, const uint64_t *first, uint64_t ndir, uint64_t n,
		   uint64_t *dir, uint64_t *count)
{
	uint64_t	d = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x;

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
	uint64_t	i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x;

	if (i < n)
	{
		int64_t		d = join_slot(keys.words, keys.nulls, nkeys, i, dir, ndir);

		slot[i] = d;
		counts[i] = d < 0 ? 0 : static_cast<Count>(count[d]);
	}
	if (i == n)
		counts[n] = 0;			/* the scan's last element: offsets[n] = total */
}

/* one thread per output pair (of the window from `from`): skew does not serialize */
__global__ void
probe_write_kernel(const uint64_t *offsets, uint64_t n, uint64_t from, uint64_t m,
				   const int64_t *slot, const uint64_t *first, const uint32_t *sorted_rows,
				   uint32_t *probe_out, uint32_t *build_out)
{
	uint64_t	w = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x;

	if (w < m)
	{
		uint64_t	i = from + w;
		uint64_t	p = join_owner(offsets, n, i);

		probe_out[w] = static_cast<uint32_t>(p);
		build_out[w] = sorted_rows[first[slot[p]] + (i - offsets[p])];
	}
}

GpuopsStatus
cuda_join_begin(const GpuopsSettings *settings, int nkeys, GpuopsJoin **out) noexcept
{
	*out = nullptr;
	return guarded([&]() {
		maybe_inject(GPUOPS_FAULT_NO_DEVICE, settings->fault);
		if (nkeys < 1 || nkeys > GPUOPS_MAX_JOIN_KEYS)
			fail(GPUOPS_ERR_INTERNAL, "bad number of join keys: %d", nkeys);
		Runtime    &rt = Runtime::get(*settings);
		auto		j = std::make_unique<CudaJoin>();

		rt.set_limit(settings->device_memory_limit, settings->device_share);
		j->rt = &rt;
		j->window = join_window_pairs_for_budget(rt.limit());
		j->settings = *settings;
		j->nkeys = nkeys;
		j->stream = rt.stream(0);
		*out = reinterpret_cast<GpuopsJoin *>(j.release());
		return GPUOPS_OK;
	});
}

GpuopsStatus
cuda_join_build(GpuopsJoin *join, const GpuopsJoinKeys *keys) noexcept
{
	return guarded([&]() {
		auto	   *j = reinterpret_cast<CudaJoin *>(join);

		if (keys->nkeys != j->nkeys)
			fail(GPUOPS_ERR_INTERNAL, "join keys: %d given, %d expected", keys->nkeys, j->nkeys);
		if (j->build_rows + keys->nrows > UINT32_MAX)
			fail(GPUOPS_ERR_UNSUPPORTED, "build side over %u rows", UINT32_MAX);
		/* NULL keys never match: they stay out of the directory */
		for (uint64_t i = 0; i < keys->nrows; i++)
			if (!join_key_null(keys->nulls, j->nkeys, i))
			{
				for (int k = 0; k < j->nkeys; k++)
					j->h_words[k].push_back(keys->words[k][i]);
				j->h_rows.push_back(static_cast<uint32_t>(j->build_rows + i));
			}
		j->build_rows += keys->nrows;
		j->stats.build_rows = j->build_rows;
		return GPUOPS_OK;
	});
}

GpuopsStatus
cuda_join_build_finish(GpuopsJoin *join) noexcept
{
	return guarded([&]() {
		auto	   *j = reinterpret_cast<CudaJoin *>(join);
		Runtime    *rt = j->rt;
		cudaStream_t s = j->stream;
		uint64_t	n = j->h_rows.size();
		int			nkeys = j->nkeys;
		DeviceArray words, rows_in, hash_in, hash_out, head, nsel, temp;
		KeyPtrs		kp = {};
		size_t		temp_bytes = 0,
					t2 = 0;
		auto		t0 = std::chrono::steady_clock::now();

		maybe_inject(GPUOPS_FAULT_OUT_OF_MEMORY, j->settings.fault);
		/* one device array holding each key's words, key after key */
		words.get(rt, n * nkeys * 8 + 8, s);
		rows_in.get(rt, n * 4 + 4, s);
		for (int k = 0; k < nkeys && n > 0; k++)
			GPUOPS_CUDA_TRY(cudaMemcpyAsync(words.as<uint64_t>() + k * n, j->h_words[k].data(),
											n * 8, cudaMemcpyHostToDevice, s));
		if (n > 0)
			GPUOPS_CUDA_TRY(cudaMemcpyAsync(rows_in.as<uint32_t>(), j->h_rows.data(), n * 4,
											cudaMemcpyHostToDevice, s));
		::gpuops::cuda::sync_stream(s);
		j->stats.copy_ms += ms_since(t0);
		t0 = std::chrono::steady_clock::now();
		for (int k = 0; k < nkeys; k++)
			std::vector<uint64_t>().swap(j->h_words[k]);
		std::vector<uint32_t>().swap(j->h_rows);
		for (int k = 0; k < nkeys; k++)
			kp.words[k] = words.as<uint64_t>() + k * n;

		hash_in.get(rt, n * 8 + 8, s);
		hash_out.get(rt, n * 8 + 8, s);
		j->sorted_rows.get(rt, n * 4 + 4, s);
		if (n > 0)
		{
			hash_kernel<<<blocks(n), kThreads, 0, s>>>(kp, nkeys, n, hash_in.as<uint64_t>());
			GPUOPS_CUDA_CHECK_LAUNCH("hash");
			GPUOPS_CUDA_TRY(cub::DeviceRadixSort::SortPairs(
				nullptr, temp_bytes, hash_in.as<uint64_t>(), hash_out.as<uint64_t>(),
				rows_in.as<uint32_t>(), j->sorted_rows.as<uint32_t>(), n, 0, 64, s));
			head.get(rt, n + 1, s);
			j->first.get(rt, n * 8 + 8, s);
			nsel.get(rt, 8, s);
			GPUOPS_CUDA_TRY(cub::DeviceSelect::Flagged(
				nullptr, t2, thrust::counting_iterator<uint64_t>(0), head.as<uint8_t>(),
				j->first.as<uint64_t>(), nsel.as<uint64_t>(), n, s));
			temp.get(rt, std::max(temp_bytes, t2) + 8, s);
			temp_bytes = std::max(temp_bytes, t2);
			GPUOPS_CUDA_TRY(cub::DeviceRadixSort::SortPairs(
				temp.as<void>(), temp_bytes, hash_in.as<uint64_t>(), hash_out.as<uint64_t>(),
				rows_in.as<uint32_t>(), j->sorted_rows.as<uint32_t>(), n, 0, 64, s));
			head_kernel<<<blocks(n), kThreads, 0, s>>>(hash_out.as<uint64_t>(), n, head.as<uint8_t>());
			GPUOPS_CUDA_CHECK_LAUNCH("head");
			GPUOPS_CUDA_TRY(cub::DeviceSelect::Flagged(
				temp.as<void>(), temp_bytes, thrust::counting_iterator<uint64_t>(0),
				head.as<uint8_t>(), j->first.as<uint64_t>(), nsel.as<uint64_t>(), n, s));
			GPUOPS_CUDA_TRY(cudaMemcpyAsync(rt->pinned_scalar(), nsel.as<uint64_t>(), 8,
											cudaMemcpyDeviceToHost, s));
			::gpuops::cuda::sync_stream(s);
			j->ndir = rt->pinned_scalar()[0];
		}
		j->dir.get(rt, j->ndir * 8 + 8, s);
		j->count.get(rt, j->ndir * 8 + 8, s);
		if (j->ndir > 0)
		{
			dir_kernel<<<blocks(j->ndir), kThreads, 0, s>>>(hash_out.as<uint64_t>(),
															j->first.as<uint64_t>(), j->ndir, n,
															j->dir.as<uint64_t>(),
															j->count.as<uint64_t>());
			GPUOPS_CUDA_CHECK_LAUNCH("directory");
		}
		::gpuops::cuda::sync_stream(s);
		j->stats.directory = j->ndir;
		j->build_bytes = n * 4 + j->ndir * 24 + n * 8;
		j->stats.device_bytes = std::max<uint64_t>(j->stats.device_bytes, rt->used());
		j->stats.kernel_ms += ms_since(t0);
		return GPUOPS_OK;
	});
}

/*
 * The next window of the current probe's pairs: written on the device from
 * the prefix sums, copied back.
 */
void
write_window(CudaJoin *j, GpuopsJoinPairs *pairs)
{
	Runtime    *rt = j->rt;
	cudaStream_t s = j->stream;
	uint64_t	from = j->written;
	uint64_t	m = std::min(j->total - from, j->window);
	DeviceArray pout, bout;

	pout.get(rt, m * 4 + 4, s);
	bout.get(rt, m * 4 + 4, s);
	if (m > 0)
	{
		probe_write_kernel<<<blocks(m), kThreads, 0, s>>>(
			j->offsets.as<uint64_t>(), j->probe_n, from, m, j->slot.as<int64_t>(),
			j->first.as<uint64_t>(), j->sorted_rows.as<uint32_t>(), pout.as<uint32_t>(),
			bout.as<uint32_t>());
		GPUOPS_CUDA_CHECK_LAUNCH("probe write");
	}
	j->probe_out.resize(m);
	j->build_out.resize(m);
	if (m > 0)
	{
		::gpuops::cuda::copy_to_host(j->probe_out.data(), pout.as<uint32_t>(), m * 4, s);
		::gpuops::cuda::copy_to_host(j->build_out.data(), bout.as<uint32_t>(), m * 4, s);
	}
	::gpuops::cuda::sync_stream(s);
	j->stats.device_bytes = std::max<uint64_t>(j->stats.device_bytes, rt->used());
	j->written = from + m;
	pairs->npairs = m;
	pairs->probe_rows = j->probe_out.data();
	pairs->build_rows = j->build_out.data();
	pairs->more = j->written < j->total;
}

GpuopsStatus
cuda_join_probe(GpuopsJoin *join, const GpuopsJoinKeys *keys, GpuopsJoinPairs *pairs) noexcept
{
	return guarded([&]() {
		auto	   *j = reinterpret_cast<CudaJoin *>(join);
		Runtime    *rt = j->rt;
		cudaStream_t s = j->stream;
		uint64_t	n = keys->nrows;
		int			nkeys = j->nkeys;
		DeviceArray words, nulls, counts;
		KeyPtrs		kp = {};
		size_t		nbytes = (n + 7) / 8;
		auto		t0 = std::chrono::steady_clock::now();

		if (keys->nkeys != nkeys)
			fail(GPUOPS_ERR_INTERNAL, "join keys: %d given, %d expected", keys->nkeys, nkeys);
		maybe_inject(GPUOPS_FAULT_KERNEL_ERROR, j->settings.fault);
		j->slot.reset();
		j->offsets.reset();
		words.get(rt, n * 8 * nkeys + 8, s);
		nulls.get(rt, nbytes * nkeys + 8, s);
		for (int k = 0; k < nkeys; k++)
		{
			kp.words[k] = words.as<uint64_t>() + k * n;
			GPUOPS_CUDA_TRY(cudaMemcpyAsync(const_cast<uint64_t *>(kp.words[k]), keys->words[k],
											n * 8, cudaMemcpyHostToDevice, s));
			if (keys->nulls[k])
			{
				kp.nulls[k] = nulls.as<uint8_t>() + k * nbytes;
				GPUOPS_CUDA_TRY(cudaMemcpyAsync(const_cast<uint8_t *>(kp.nulls[k]), keys->nulls[k],
												nbytes, cudaMemcpyHostToDevice, s));
			}
		}
		j->slot.get(rt, n * 8 + 8, s);
		counts.get(rt, (n + 1) * 8, s);
		j->offsets.get(rt, (n + 1) * 8, s);
		probe_count_kernel<<<blocks(n + 1), kThreads, 0, s>>>(kp, nkeys, n, j->dir.as<uint64_t>(),
															   j->ndir, j->count.as<uint64_t>(),
															   j->slot.as<int64_t>(),
															   counts.as<uint64_t>());
		GPUOPS_CUDA_CHECK_LAUNCH("probe count");
		exclusive_sum(rt, s, counts, j->offsets, n);
		GPUOPS_CUDA_TRY(cudaMemcpyAsync(rt->pinned_scalar(), j->offsets.as<uint64_t>() + n, 8,
										cudaMemcpyDeviceToHost, s));
		::gpuops::cuda::sync_stream(s);
		j->probe_n = n;
		j->total = rt->pinned_scalar()[0];
		j->written = 0;
		words.reset();
		nulls.reset();
		counts.reset();
		write_window(j, pairs);
		j->stats.probe_rows += n;
		j->stats.pairs += j->total;
		j->stats.probe_batches++;
		j->stats.kernel_ms += ms_since(t0);
		return GPUOPS_OK;
	});
}

GpuopsStatus
cuda_join_next_pairs(GpuopsJoin *join, GpuopsJoinPairs *pairs) noexcept
{
	return guarded([&]() {
		auto	   *j = reinterpret_cast<CudaJoin *>(join);
		auto		t0 = std::chrono::steady_clock::now();

		maybe_inject(GPUOPS_FAULT_KERNEL_ERROR, j->settings.fault);
		j->stats.windows++;
		write_window(j, pairs);
		j->stats.kernel_ms += ms_since(t0);
		return GPUOPS_OK;
	});
}

uint64_t
cuda_join_capacity(const GpuopsJoin *join) noexcept
{
	auto	   *j = reinterpret_cast<const CudaJoin *>(join);

	return join_build_rows_for_budget(j->rt->limit(), j->nkeys);
}

void
cuda_join_stats(const GpuopsJoin *join, GpuopsJoinStats *stats) noexcept
{
	*stats = reinterpret_cast<const CudaJoin *>(join)->stats;
}

void
cuda_join_end(GpuopsJoin *join) noexcept
{
	auto	   *j = reinterpret_cast<CudaJoin *>(join);

	if (j)
	{
		/* device arrays go back to the pool on the stream; then wait for it */
		j->sorted_rows.reset();
		j->dir.reset();
		j->first.reset();
		j->count.reset();
		j->slot.reset();
		j->offsets.reset();
		(void) cudaStreamSynchronize(j->stream);
	}
	delete j;
}

uint32_t
cuda_join_probe_rows(const GpuopsJoin *join) noexcept
{
	auto	   *j = reinterpret_cast<const CudaJoin *>(join);

	return join_probe_rows_for_budget(j->rt->limit(), j->nkeys);
}

GpuopsStatus
cuda_join_directory(GpuopsJoin *join, uint64_t *ndir, uint64_t *checksum) noexcept
{
	return guarded([&]() {
		auto	   *j = reinterpret_cast<CudaJoin *>(join);
		std::vector<uint64_t> dir(j->ndir);

		if (j->ndir > 0)
		{
			::gpuops::cuda::copy_to_host(dir.data(), j->dir.as<uint64_t>(), j->ndir * 8, j->stream);
			::gpuops::cuda::sync_stream(j->stream);
		}
		*ndir = j->ndir;
		*checksum = join_directory_checksum(dir.data(), dir.size());
		return GPUOPS_OK;
	});
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
	uint32_t	max_rows = 0;
	cudaStream_t stream = nullptr;
	DeviceArray words, nulls, slot, counts;

	~CudaLookup()
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

GpuopsStatus
cuda_lookup_begin(GpuopsJoin *join, uint32_t max_rows, GpuopsJoinLookup **out) noexcept
{
	*out = nullptr;
	return guarded([&]() {
		auto	   *j = reinterpret_cast<CudaJoin *>(join);
		auto		l = std::make_unique<CudaLookup>();
		size_t		nbytes = (max_rows + 7) / 8;

		l->join = j;
		l->fault = j->settings.fault;
		l->max_rows = max_rows;
		GPUOPS_CUDA_TRY(cudaStreamCreateWithFlags(&l->stream, cudaStreamNonBlocking));
		l->words.get(j->rt, (size_t) max_rows * 8 * j->nkeys + 8, l->stream);
		l->nulls.get(j->rt, nbytes * j->nkeys + 8, l->stream);
		l->slot.get(j->rt, (size_t) max_rows * 8 + 8, l->stream);
		l->counts.get(j->rt, ((size_t) max_rows + 1) * 4, l->stream);	/* the kernel's [n] too */
		::gpuops::cuda::sync_stream(l->stream);
		*out = reinterpret_cast<GpuopsJoinLookup *>(l.release());
		return GPUOPS_OK;
	});
}

GpuopsStatus
cuda_lookup(GpuopsJoinLookup *lookup, const GpuopsJoinKeys *keys, int64_t *slots,
			uint32_t *counts) noexcept
{
	return guarded([&]() {
		auto	   *l = reinterpret_cast<CudaLookup *>(lookup);
		const CudaJoin *j = l->join;
		cudaStream_t s = l->stream;
		uint64_t	n = keys->nrows;
		size_t		nbytes = (n + 7) / 8;
		KeyPtrs		kp = {};

		if (keys->nkeys != j->nkeys || n > l->max_rows)
			fail(GPUOPS_ERR_INTERNAL, "lookup of %llu rows, %d keys",
				 (unsigned long long) n, keys->nkeys);
		maybe_inject(GPUOPS_FAULT_KERNEL_ERROR, l->fault);
		if (n == 0)
			return GPUOPS_OK;
		for (int k = 0; k < j->nkeys; k++)
		{
			kp.words[k] = l->words.as<uint64_t>() + k * n;
			GPUOPS_CUDA_TRY(cudaMemcpyAsync(const_cast<uint64_t *>(kp.words[k]), keys->words[k],
											n * 8, cudaMemcpyHostToDevice, s));
			if (keys->nulls[k])
			{
				kp.nulls[k] = l->nulls.as<uint8_t>() + k * nbytes;
				GPUOPS_CUDA_TRY(cudaMemcpyAsync(const_cast<uint8_t *>(kp.nulls[k]), keys->nulls[k],
												nbytes, cudaMemcpyHostToDevice, s));
			}
		}
		probe_count_kernel<<<blocks(n + 1), kThreads, 0, s>>>(kp, j->nkeys, n,
															   j->dir.as<uint64_t>(), j->ndir,
															   j->count.as<uint64_t>(),
															   l->slot.as<int64_t>(),
															   l->counts.as<uint32_t>());
		GPUOPS_CUDA_CHECK_LAUNCH("lookup");
		::gpuops::cuda::copy_to_host(slots, l->slot.as<int64_t>(), n * 8, s);
		::gpuops::cuda::copy_to_host(counts, l->counts.as<uint32_t>(), n * 4, s);
		::gpuops::cuda::sync_stream(s);
		return GPUOPS_OK;
	});
}

void
cuda_lookup_end(GpuopsJoinLookup *lookup) noexcept
{
	delete reinterpret_cast<CudaLookup *>(lookup);
}

const GpuopsJoinBackend cuda_join_backend = {
	"cuda",
	cuda_join_begin,
	cuda_join_build,
	cuda_join_build_finish,
	cuda_join_probe,
	cuda_join_next_pairs,
	cuda_join_capacity,
	cuda_join_probe_rows,
	cuda_join_stats,
	cuda_join_end,
	cuda_join_directory,
	cuda_lookup_begin,
	cuda_lookup,
	cuda_lookup_end,
};

}								/* namespace */
}								/* namespace cuda */
}								/* namespace gpuops */

extern "C" const GpuopsJoinBackend *
gpuops_cuda_join_backend(void) noexcept
{
	return &gpuops::cuda::cuda_join_backend;
}
