/*
 * sort_cuda.cu
 *    The GPU key-pointer sort.
 *
 * Each staged batch of key values crosses the bus once, through a pinned
 * buffer, on one of several streams, and is normalized in place by a kernel
 * right behind its copy, so staging the next batch on the host overlaps the
 * copy and the kernel of this one.  At the end the batches are laid out
 * contiguously, the key bits that actually differ are found (OR of
 * key XOR first key), and CUB's radix sort orders (key, row number) pairs on
 * those bits only.  Only the row numbers come back; the tuples never leave
 * the host.
 */
#include <cub/device/device_radix_sort.cuh>

#include <memory>
#include <vector>

#include "cuda_runtime.cuh"
#include "key_normalize.hpp"

namespace gpuops {
namespace cuda {
namespace {

constexpr int kThreads = 256;

unsigned
grid_for(uint64_t n)
{
	uint64_t	blocks = (n + kThreads - 1) / kThreads;

	return static_cast<unsigned>(blocks > 65535u * 16 ? 65535u * 16 : (blocks ? blocks : 1));
}

/* Raw SQL values -> normalized keys, in place. */
__global__ void
normalize_int4_kernel(uint32_t *data, uint32_t n, bool desc)
{
	for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		data[i] = normalize_int4(static_cast<int32_t>(data[i]), desc);
}

__global__ void
normalize_int8_kernel(uint64_t *data, uint32_t n, bool desc)
{
	for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		data[i] = normalize_int8(static_cast<int64_t>(data[i]), desc);
}

__global__ void
normalize_float8_kernel(uint64_t *data, uint32_t n, bool desc)
{
	for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		data[i] = normalize_float8_bits(data[i], desc);
}

__global__ void
iota_kernel(uint32_t *out, uint32_t n)
{
	for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		out[i] = i;
}

/* OR of (key XOR keys[0]) over all keys: its highest bit bounds the sort. */
template <class K>
__global__ void
diff_bits_kernel(const K *keys, uint32_t n, unsigned long long *out)
{
	K			first = keys[0];
	unsigned long long acc = 0;

	for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		acc |= static_cast<unsigned long long>(keys[i] ^ first);
	for (int off = 16; off > 0; off /= 2)
		acc |= __shfl_down_sync(0xffffffffu, acc, off);
	if ((threadIdx.x & 31) == 0 && acc)
		atomicOr(out, acc);
}

struct DevPtr
{
	void	   *p = nullptr;
	size_t		bytes = 0;
};

struct Batch
{
	DevPtr		keys;
	uint32_t	rows = 0;
	cudaEvent_t copy_start = nullptr;
	cudaEvent_t copy_end = nullptr;
	cudaEvent_t kernel_end = nullptr;
};

struct CudaSort
{
	Runtime    *rt = nullptr;
	GpuopsSettings settings;
	GpuopsSortSpec spec;
	int			width = 8;
	int			held_buffer = -1;	/* pinned buffer handed to the caller */
	std::vector<Batch> batches;
	uint64_t	rows = 0;
	int			next_stream = 0;
	std::vector<DevPtr> owned;	/* device memory to free at the end */
	DevPtr		sorted_rows;	/* row numbers in sorted order */
	bool		identity = false;	/* every key equal: input order is sorted */
	bool		finished = false;
	cudaEvent_t sort_start = nullptr;
	cudaEvent_t sort_end = nullptr;
	double		result_copy_ms = 0;
	GpuopsStats stats = {};
};

cudaEvent_t
new_event()
{
	cudaEvent_t ev;

	GPUOPS_CUDA_TRY(cudaEventCreate(&ev));
	return ev;
}

DevPtr
take(CudaSort *s, size_t bytes, cudaStream_t st)
{
	DevPtr		d;

	d.p = s->rt->alloc(bytes, st);
	d.bytes = bytes;
	s->owned.push_back(d);
	if (s->rt->used() > s->stats.device_bytes)
		s->stats.device_bytes = s->rt->used();
	return d;
}

void
give_back(CudaSort *s, DevPtr d, cudaStream_t st)
{
	for (size_t i = 0; i < s->owned.size(); i++)
		if (s->owned[i].p == d.p)
		{
			s->rt->free(d.p, d.bytes, st);
			s->owned.erase(s->owned.begin() + i);
			return;
		}
}

GpuopsStatus
cuda_probe(GpuopsDeviceInfo *info) noexcept
{
	return guarded([&]() {
		Runtime::probe(info);
		return GPUOPS_OK;
	});
}

GpuopsStatus
cuda_sort_begin(const GpuopsSettings *settings, const GpuopsSortSpec *spec,
				GpuopsSort **out) noexcept
{
	*out = nullptr;
	return guarded([&]() {
		maybe_inject(GPUOPS_FAULT_NO_DEVICE, settings->fault);
		Runtime    &rt = Runtime::get(*settings);
		auto		s = std::make_unique<CudaSort>();

		rt.set_limit(settings->device_memory_limit);
		s->rt = &rt;
		s->settings = *settings;
		s->spec = *spec;
		s->width = spec->key_type == GPUOPS_KEY_INT4 ? 4 : 8;
		*out = reinterpret_cast<GpuopsSort *>(s.release());
		return GPUOPS_OK;
	});
}

GpuopsStatus
cuda_sort_stage(GpuopsSort *sort, GpuopsStageBuffer *buf) noexcept
{
	auto	   *s = reinterpret_cast<CudaSort *>(sort);

	return guarded([&]() {
		if (s->held_buffer < 0)
			s->held_buffer = s->rt->try_acquire_buffer();
		if (s->held_buffer < 0)
			return GPUOPS_PENDING;
		buf->values = s->rt->buffer(s->held_buffer);
		buf->capacity_rows = static_cast<uint32_t>(s->rt->buffer_bytes() / s->width);
		return GPUOPS_OK;
	});
}

GpuopsStatus
cuda_sort_submit(GpuopsSort *sort, uint32_t nrows) noexcept
{
	auto	   *s = reinterpret_cast<CudaSort *>(sort);

	return guarded([&]() {
		if (s->held_buffer < 0)
			fail(GPUOPS_ERR_INTERNAL, "submit without a staged buffer");
		if (static_cast<size_t>(nrows) * s->width > s->rt->buffer_bytes())
			fail(GPUOPS_ERR_INTERNAL, "batch of %u rows exceeds its buffer", nrows);
		if (s->rows + nrows > UINT32_MAX)
			fail(GPUOPS_ERR_UNSUPPORTED, "more than 2^32-1 rows in one sort");
		if (s->batches.empty())
			maybe_inject(GPUOPS_FAULT_OUT_OF_MEMORY, s->settings.fault);
		cudaStream_t st = s->rt->stream(s->next_stream++);
		Batch		b;

		b.rows = nrows;
		b.copy_start = new_event();
		b.copy_end = new_event();
		b.kernel_end = new_event();
		s->batches.push_back(b);	/* owns the events from here on */
		Batch	   &bb = s->batches.back();

		bb.keys = take(s, static_cast<size_t>(nrows) * s->width, st);
		GPUOPS_CUDA_TRY(cudaEventRecord(bb.copy_start, st));
		GPUOPS_CUDA_TRY(cudaMemcpyAsync(bb.keys.p, s->rt->buffer(s->held_buffer),
										static_cast<size_t>(nrows) * s->width,
										cudaMemcpyHostToDevice, st));
		GPUOPS_CUDA_TRY(cudaEventRecord(bb.copy_end, st));
		s->rt->release_after(s->held_buffer, st);
		s->held_buffer = -1;
		bool		desc = s->spec.descending != 0;

		switch (s->spec.key_type)
		{
			case GPUOPS_KEY_INT4:
				normalize_int4_kernel<<<grid_for(nrows), kThreads, 0, st>>>(
					static_cast<uint32_t *>(bb.keys.p), nrows, desc);
				break;
			case GPUOPS_KEY_INT8:
				normalize_int8_kernel<<<grid_for(nrows), kThreads, 0, st>>>(
					static_cast<uint64_t *>(bb.keys.p), nrows, desc);
				break;
			case GPUOPS_KEY_FLOAT8:
				normalize_float8_kernel<<<grid_for(nrows), kThreads, 0, st>>>(
					static_cast<uint64_t *>(bb.keys.p), nrows, desc);
				break;
		}
		GPUOPS_CUDA_CHECK_LAUNCH("normalize");
		GPUOPS_CUDA_TRY(cudaEventRecord(bb.kernel_end, st));
		s->rows += nrows;
		s->stats.rows = s->rows;
		s->stats.batches++;
		return GPUOPS_OK;
	});
}

template <class K>
void
sort_on_device(CudaSort *s, DevPtr keys, cudaStream_t st)
{
	uint32_t	n = static_cast<uint32_t>(s->rows);
	uint64_t   *diff = s->rt->pinned_scalar();
	DevPtr		d_diff = take(s, sizeof(unsigned long long), st);

	GPUOPS_CUDA_TRY(cudaMemsetAsync(d_diff.p, 0, sizeof(unsigned long long), st));
	diff_bits_kernel<K><<<grid_for(n), kThreads, 0, st>>>(
		static_cast<const K *>(keys.p), n, static_cast<unsigned long long *>(d_diff.p));
	GPUOPS_CUDA_CHECK_LAUNCH("diff_bits");
	GPUOPS_CUDA_TRY(cudaMemcpyAsync(diff, d_diff.p, sizeof(uint64_t), cudaMemcpyDeviceToHost, st));
	/* the sort's bit range is a host-side launch parameter: wait for it */
	GPUOPS_CUDA_TRY(cudaStreamSynchronize(st));
	give_back(s, d_diff, st);
	unsigned	bits = *diff ? 64 - __builtin_clzll(*diff) : 0;

	s->stats.sort_bits = bits;
	GPUOPS_CUDA_TRY(cudaEventRecord(s->sort_start, st));
	if (bits == 0)
	{
		s->identity = true;		/* all keys equal: a stable sort keeps input order */
		give_back(s, keys, st);
		GPUOPS_CUDA_TRY(cudaEventRecord(s->sort_end, st));
		return;
	}
	DevPtr		keys_alt = take(s, static_cast<size_t>(n) * sizeof(K), st);
	DevPtr		rows = take(s, static_cast<size_t>(n) * sizeof(uint32_t), st);
	DevPtr		rows_alt = take(s, static_cast<size_t>(n) * sizeof(uint32_t), st);

	iota_kernel<<<grid_for(n), kThreads, 0, st>>>(static_cast<uint32_t *>(rows.p), n);
	GPUOPS_CUDA_CHECK_LAUNCH("iota");
	cub::DoubleBuffer<K> dk(static_cast<K *>(keys.p), static_cast<K *>(keys_alt.p));
	cub::DoubleBuffer<uint32_t> dv(static_cast<uint32_t *>(rows.p), static_cast<uint32_t *>(rows_alt.p));
	size_t		temp_bytes = 0;

	GPUOPS_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, dk, dv, n, 0, bits, st));
	DevPtr		temp = take(s, temp_bytes, st);

	GPUOPS_CUDA_TRY(cub::DeviceRadixSort::SortPairs(temp.p, temp_bytes, dk, dv, n, 0, bits, st));
	GPUOPS_CUDA_TRY(cudaEventRecord(s->sort_end, st));
	give_back(s, temp, st);
	give_back(s, keys, st);
	give_back(s, keys_alt, st);
	if (dv.Current() == static_cast<uint32_t *>(rows.p))
	{
		s->sorted_rows = rows;
		give_back(s, rows_alt, st);
	}
	else
	{
		s->sorted_rows = rows_alt;
		give_back(s, rows, st);
	}
}

GpuopsStatus
cuda_sort_finish(GpuopsSort *sort) noexcept
{
	auto	   *s = reinterpret_cast<CudaSort *>(sort);

	return guarded([&]() {
		if (s->held_buffer >= 0)
		{
			s->rt->release_now(s->held_buffer);
			s->held_buffer = -1;
		}
		cudaStream_t st = s->rt->stream(0);

		s->sort_start = new_event();
		s->sort_end = new_event();
		/* the sort stream waits for every batch's copy and normalize */
		for (Batch &b : s->batches)
			GPUOPS_CUDA_TRY(cudaStreamWaitEvent(st, b.kernel_end, 0));
		maybe_inject(GPUOPS_FAULT_KERNEL_ERROR, s->settings.fault);
		s->finished = true;
		if (s->rows == 0)
		{
			s->identity = true;
			GPUOPS_CUDA_TRY(cudaEventRecord(s->sort_start, st));
			GPUOPS_CUDA_TRY(cudaEventRecord(s->sort_end, st));
			return GPUOPS_OK;
		}
		DevPtr		keys;

		if (s->batches.size() == 1)
			keys = s->batches[0].keys;
		else
		{
			/* lay the batches out contiguously (device-to-device, ~TB/s) */
			keys = take(s, static_cast<size_t>(s->rows) * s->width, st);
			size_t		off = 0;

			for (Batch &b : s->batches)
			{
				GPUOPS_CUDA_TRY(cudaMemcpyAsync(static_cast<char *>(keys.p) + off, b.keys.p,
												b.keys.bytes, cudaMemcpyDeviceToDevice, st));
				off += b.keys.bytes;
				give_back(s, b.keys, st);
			}
		}
		for (Batch &b : s->batches)
			b.keys = DevPtr();
		if (s->width == 4)
			sort_on_device<uint32_t>(s, keys, st);
		else
			sort_on_device<uint64_t>(s, keys, st);
		return GPUOPS_OK;
	});
}

GpuopsStatus
cuda_sort_poll(GpuopsSort *sort) noexcept
{
	auto	   *s = reinterpret_cast<CudaSort *>(sort);

	return guarded([&]() {
		if (!s->finished)
			fail(GPUOPS_ERR_INTERNAL, "sort polled before it was finished");
		cudaError_t err = cudaEventQuery(s->sort_end);

		if (err == cudaErrorNotReady)
			return GPUOPS_PENDING;
		if (err != cudaSuccess)
			throw_cuda(err, "radix sort");
		return GPUOPS_OK;
	});
}

/*
 * Row numbers back to the host through the pinned pool: chunk i+1 is copied
 * while chunk i is moved into the caller's array.
 */
GpuopsStatus
cuda_sort_result(GpuopsSort *sort, uint32_t *order, uint64_t nrows) noexcept
{
	auto	   *s = reinterpret_cast<CudaSort *>(sort);

	return guarded([&]() {
		if (nrows != s->rows)
			fail(GPUOPS_ERR_INTERNAL, "sort result asked for %llu rows, sort holds %llu",
				 (unsigned long long) nrows, (unsigned long long) s->rows);
		if (s->identity)
		{
			for (uint64_t i = 0; i < nrows; i++)
				order[i] = static_cast<uint32_t>(i);
			return GPUOPS_OK;
		}
		Runtime    &rt = *s->rt;
		cudaStream_t st = rt.stream(0);
		size_t		chunk = rt.buffer_bytes() / sizeof(uint32_t);
		const uint32_t *src = static_cast<const uint32_t *>(s->sorted_rows.p);
		int			pending_buf = -1;
		size_t		pending_off = 0,
					pending_rows = 0;
		cudaEvent_t t0 = new_event(),
					t1 = new_event();

		GPUOPS_CUDA_TRY(cudaEventRecord(t0, st));
		for (size_t off = 0; off < nrows || pending_buf >= 0; off += chunk)
		{
			int			buf = -1;
			size_t		n = 0;

			if (off < nrows)
			{
				n = nrows - off < chunk ? nrows - off : chunk;
				buf = rt.acquire_buffer_blocking();
				GPUOPS_CUDA_TRY(cudaMemcpyAsync(rt.buffer(buf), src + off, n * sizeof(uint32_t),
												cudaMemcpyDeviceToHost, st));
				/* stays held (not "in flight") until its rows are moved out below */
			}
			if (pending_buf >= 0)
			{
				GPUOPS_CUDA_TRY(cudaEventSynchronize(t1));
				memcpy(order + pending_off, rt.buffer(pending_buf), pending_rows * sizeof(uint32_t));
				rt.release_now(pending_buf);
			}
			if (buf >= 0)
				GPUOPS_CUDA_TRY(cudaEventRecord(t1, st));
			pending_buf = buf;
			pending_off = off;
			pending_rows = n;
		}
		s->result_copy_ms = elapsed_ms(t0, t1);
		cudaEventDestroy(t0);
		cudaEventDestroy(t1);
		return GPUOPS_OK;
	});
}

void
cuda_sort_stats(const GpuopsSort *sort, GpuopsStats *stats) noexcept
{
	const auto *s = reinterpret_cast<const CudaSort *>(sort);

	*stats = s->stats;
	stats->copy_ms = s->result_copy_ms;
	for (const Batch &b : s->batches)
	{
		stats->copy_ms += elapsed_ms(b.copy_start, b.copy_end);
		stats->kernel_ms += elapsed_ms(b.copy_end, b.kernel_end);
	}
	stats->kernel_ms += elapsed_ms(s->sort_start, s->sort_end);
}

/* Frees everything, also after a failure or a cancel mid-flight. */
void
cuda_sort_end(GpuopsSort *sort) noexcept
{
	auto	   *s = reinterpret_cast<CudaSort *>(sort);

	if (!s)
		return;
	if (s->rt)
	{
		for (int i = 0; i < s->rt->stream_count(); i++)
			if (cudaStreamSynchronize(s->rt->stream(i)) != cudaSuccess)
				(void) cudaGetLastError();
		if (s->held_buffer >= 0)
			s->rt->release_now(s->held_buffer);
		for (DevPtr &d : s->owned)
			s->rt->free(d.p, d.bytes, s->rt->stream(0));
	}
	for (Batch &b : s->batches)
	{
		cudaEventDestroy(b.copy_start);
		cudaEventDestroy(b.copy_end);
		cudaEventDestroy(b.kernel_end);
	}
	if (s->sort_start)
		cudaEventDestroy(s->sort_start);
	if (s->sort_end)
		cudaEventDestroy(s->sort_end);
	(void) cudaGetLastError();
	delete s;
}

const GpuopsBackend cuda_backend = {
	"cuda",
	cuda_probe,
	cuda_sort_begin,
	cuda_sort_stage,
	cuda_sort_submit,
	cuda_sort_finish,
	cuda_sort_poll,
	cuda_sort_result,
	cuda_sort_stats,
	cuda_sort_end,
};

}								/* namespace */
}								/* namespace cuda */
}								/* namespace gpuops */

extern "C" const GpuopsBackend *
gpuops_cuda_backend(void) noexcept
{
	return &gpuops::cuda::cuda_backend;
}

extern "C" const char *
gpuops_build_info(void) noexcept
{
	static char buf[64];

	snprintf(buf, sizeof(buf), "CUDA %d.%d, sm_90", CUDART_VERSION / 1000,
			 (CUDART_VERSION % 1000) / 10);
	return buf;
}
