/*
 * sort_park_cuda.cu
 *    Parked rows (gpuops_sort.h): the rows themselves kept in device memory
 *    beside their keys, and brought back in sorted order, chunk by chunk.
 *
 * A sort larger than its caller's memory limit would otherwise be written
 * to temporary files in runs of that limit and merged (GPUTeraSort's two
 * phases); device memory holds tens of gigabytes, so a run is as large as
 * the device budget.  Each filled pinned buffer (rows, then their offsets)
 * crosses the bus in one copy per part, into a block of its own.  After the
 * sort, one kernel turns the blocks' offsets into an address per row,
 * another the sorted rows' lengths into output offsets (CUB's scan); each
 * chunk is then one gather kernel (a warp a row) into a device buffer and
 * one copy into a pinned buffer.  Two chunks alternate, so the next one is
 * gathered and copied while the caller returns the rows of this one.
 */
#include <cub/device/device_scan.cuh>

#include <cstring>

#include "park_chunk.hpp"
#include "sort_cuda.cuh"

namespace gpuops {
namespace cuda {
namespace gpusort {
namespace {

/* addr[i] = the device address of the block's row i */
__global__ void
park_addr_kernel(uint64_t *addr, const uint8_t *base, const uint32_t *offsets, uint32_t n)
{
	for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		addr[i] = reinterpret_cast<uint64_t>(base + offsets[i]);
}

/* size[i] = sorted row i's bytes in a chunk; size[n] = 0 (the scan's total) */
__global__ void
park_size_kernel(const uint64_t *addr, const uint32_t *order, uint64_t n, uint64_t *size)
{
	for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i <= n;
		 i += static_cast<uint64_t>(gridDim.x) * blockDim.x)
		size[i] = i < n ? park_row_bytes(*reinterpret_cast<const uint32_t *>(addr[order[i]])) : 0;
}

/* out[0] = the chunk's end, out[1..2] = the offsets of its first row and its end */
__global__ void
park_end_kernel(const uint64_t *off, uint64_t n, uint64_t s, uint64_t cap, const uint32_t *ties,
				uint64_t *out)
{
	uint64_t e = park_chunk_end(off, n, s, cap, ties);

	out[0] = e;
	out[1] = off[s];
	out[2] = off[e];
}

/* sorted rows [s, e) one after another into out; a warp per row, 8 bytes a lane */
__global__ void
park_gather_kernel(const uint64_t *addr, const uint32_t *order, const uint64_t *off, uint64_t s,
				   uint64_t e, uint8_t *out)
{
	uint64_t warp = (blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x) / 32;
	uint64_t nwarps = static_cast<uint64_t>(gridDim.x) * blockDim.x / 32;
	unsigned lane = threadIdx.x & 31;

	for (uint64_t i = s + warp; i < e; i += nwarps)
	{
		const uint64_t *src = reinterpret_cast<const uint64_t *>(addr[order[i]]);
		uint64_t *dst = reinterpret_cast<uint64_t *>(out + (off[i] - off[s]));
		uint64_t words = (off[i + 1] - off[i]) / 8;

		for (uint64_t j = lane; j < words; j += 32)
			dst[j] = src[j];
	}
}

/* a park buffer's split: rows first, then one offset per 32 bytes of it */
uint32_t
park_capacity_rows(size_t buffer_bytes)
{
	return static_cast<uint32_t>(buffer_bytes / 36) & ~7u;
}

/* Lays out addresses, order, output offsets and ties once the sort is done. */
void
park_prepare(CudaSort *s)
{
	cudaStream_t st = s->rt->stream(0);
	uint64_t n = s->rows;

	if (s->park_rows != n)
		fail(GPUOPS_ERR_INTERNAL, "%llu rows parked for %llu sorted",
			 (unsigned long long) s->park_rows, (unsigned long long) n);
	/* the blocks' copies went out on every stream */
	for (int i = 0; i < s->rt->stream_count(); i++)
		::gpuops::cuda::sync_stream(s->rt->stream(i));
	s->park_cap = (s->rt->buffer_bytes() - s->rt->buffer_bytes() / 64 - 64) & ~uint64_t(7);
	s->park_end = take(s, 4 * sizeof(uint64_t), st);
	s->park_ready = true;
	if (n == 0)
		return;
	s->park_addr = take(s, n * sizeof(uint64_t), st);
	for (const ParkBlock &b : s->park_blocks)
	{
		const uint8_t *base = static_cast<const uint8_t *>(b.mem.p);

		park_addr_kernel<<<grid_for(b.rows), kThreads, 0, st>>>(
			static_cast<uint64_t *>(s->park_addr.p) + b.first, base,
			reinterpret_cast<const uint32_t *>(base + b.data_bytes), b.rows);
		GPUOPS_CUDA_CHECK_LAUNCH("park_addr");
	}
	const uint32_t *order;

	if (s->merged)
	{
		s->park_order = take(s, n * sizeof(uint32_t), st);
		GPUOPS_CUDA_TRY(cudaMemcpyAsync(s->park_order.p, s->host_order.data(), n * sizeof(uint32_t),
										cudaMemcpyHostToDevice, st));
		order = static_cast<const uint32_t *>(s->park_order.p);
		if (s->spec.tie_words)
		{
			size_t words = (n + 31) / 32;

			s->park_ties = take(s, words * sizeof(uint32_t), st);
			GPUOPS_CUDA_TRY(cudaMemsetAsync(s->park_ties.p, 0, words * sizeof(uint32_t), st));
			GPUOPS_CUDA_TRY(cudaMemcpyAsync(s->park_ties.p, s->host_ties.data(), (n + 7) / 8,
											cudaMemcpyHostToDevice, st));
		}
		/* pageable sources: the copies are done when the stream is */
		::gpuops::cuda::sync_stream(st);
		std::vector<uint32_t>().swap(s->host_order);
		std::vector<uint8_t>().swap(s->host_ties);
	}
	else
	{
		order = static_cast<const uint32_t *>(s->sorted_rows.p);
		if (s->spec.tie_words)
			s->park_ties = ties_on_device(s);
	}
	/* the key words are no longer needed: room for the output offsets */
	if (s->words.p)
	{
		give_back(s, s->words, st);
		s->words = DevPtr();
	}
	DevPtr size = take(s, (n + 1) * sizeof(uint64_t), st);
	size_t temp_bytes = 0;

	s->park_off = take(s, (n + 1) * sizeof(uint64_t), st);
	park_size_kernel<<<grid_for(n + 1), kThreads, 0, st>>>(
		static_cast<const uint64_t *>(s->park_addr.p), order, n, static_cast<uint64_t *>(size.p));
	GPUOPS_CUDA_CHECK_LAUNCH("park_size");
	GPUOPS_CUDA_TRY(
		cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, static_cast<const uint64_t *>(size.p),
									  static_cast<uint64_t *>(s->park_off.p), n + 1, st));
	DevPtr temp = take(s, temp_bytes, st);

	GPUOPS_CUDA_TRY(
		cub::DeviceScan::ExclusiveSum(temp.p, temp_bytes, static_cast<const uint64_t *>(size.p),
									  static_cast<uint64_t *>(s->park_off.p), n + 1, st));
	give_back(s, temp, st);
	give_back(s, size, st);
}

const uint32_t *
park_order_of(const CudaSort *s)
{
	return static_cast<const uint32_t *>(s->merged ? s->park_order.p : s->sorted_rows.p);
}

/* Starts bringing back the chunk at park_pos into slot o. */
void
park_launch(CudaSort *s, ParkOut &o)
{
	cudaStream_t st = s->rt->stream(0);
	uint64_t n = s->rows;
	uint64_t *scalar = s->rt->pinned_scalar();
	const uint32_t *ties = static_cast<const uint32_t *>(s->park_ties.p);

	o.launched = false;
	if (s->park_pos >= n)
		return;
	park_end_kernel<<<1, 1, 0, st>>>(static_cast<const uint64_t *>(s->park_off.p), n, s->park_pos,
									 s->park_cap, ties, static_cast<uint64_t *>(s->park_end.p));
	GPUOPS_CUDA_CHECK_LAUNCH("park_end");
	GPUOPS_CUDA_TRY(
		cudaMemcpyAsync(scalar, s->park_end.p, 3 * sizeof(uint64_t), cudaMemcpyDeviceToHost, st));
	::gpuops::cuda::sync_stream(st);
	s->stats.bytes_from_device += 3 * sizeof(uint64_t);
	o.first = s->park_pos;
	o.end = scalar[0];
	o.bytes = scalar[2] - scalar[1];
	o.big = o.bytes > s->park_cap;
	if (o.buffer < 0)
		o.buffer = s->rt->acquire_buffer_blocking();
	if (o.done == nullptr)
		o.done = new_event();
	DevPtr out = o.big ? take(s, o.bytes, st) : o.dev;

	if (!o.big && out.p == nullptr)
		out = o.dev = take(s, s->park_cap, st);
	park_gather_kernel<<<grid_for((o.end - o.first) * 32), kThreads, 0, st>>>(
		static_cast<const uint64_t *>(s->park_addr.p), park_order_of(s),
		static_cast<const uint64_t *>(s->park_off.p), o.first, o.end,
		static_cast<uint8_t *>(out.p));
	GPUOPS_CUDA_CHECK_LAUNCH("park_gather");
	uint8_t *host = static_cast<uint8_t *>(s->rt->buffer(o.buffer));

	if (o.big)
	{
		/* a row larger than a chunk: through pageable memory, at once */
		s->park_big.resize(o.bytes);
		s->result_copy_ms += copy_to_host(s, out.p, o.bytes, s->park_big.data());
		give_back(s, out, st);
	}
	else
		GPUOPS_CUDA_TRY(cudaMemcpyAsync(host, out.p, o.bytes, cudaMemcpyDeviceToHost, st));
	if (!o.big)
		s->stats.bytes_from_device += o.bytes; /* copy_to_host counted the big row's */
	if (ties)
	{
		uint64_t w0 = o.first / 32, w1 = (o.end - 1) / 32;

		GPUOPS_CUDA_TRY(cudaMemcpyAsync(host + s->park_cap, ties + w0,
										(w1 - w0 + 1) * sizeof(uint32_t), cudaMemcpyDeviceToHost,
										st));
		s->stats.bytes_from_device += (w1 - w0 + 1) * sizeof(uint32_t);
	}
	GPUOPS_CUDA_TRY(cudaEventRecord(o.done, st));
	o.launched = true;
	s->park_pos = o.end;
}

} /* namespace */

GpuopsStatus
CudaSort::sort_park_room(uint64_t bytes, uint32_t nrows, int *fits)
{
	*fits = park_fits(rt->limit(), nwords + (has_programs ? spec.nkeys : 0), park_bytes + bytes,
					  park_rows + nrows);
	return GPUOPS_OK;
}

GpuopsStatus
CudaSort::sort_park_stage(GpuopsParkBuffer *buf)
{
	if (park_held < 0)
		park_held = rt->try_acquire_buffer();
	if (park_held < 0)
		return GPUOPS_PENDING;
	uint32_t cap_rows = park_capacity_rows(rt->buffer_bytes());
	uint8_t *base = static_cast<uint8_t *>(rt->buffer(park_held));

	buf->capacity = rt->buffer_bytes() - static_cast<size_t>(cap_rows) * sizeof(uint32_t);
	buf->data = base;
	buf->offsets = reinterpret_cast<uint32_t *>(base + buf->capacity);
	buf->capacity_rows = cap_rows;
	return GPUOPS_OK;
}

GpuopsStatus
CudaSort::sort_park_submit(uint64_t bytes, uint32_t nrows)
{
	uint32_t cap_rows = park_capacity_rows(rt->buffer_bytes());
	size_t capacity = rt->buffer_bytes() - static_cast<size_t>(cap_rows) * sizeof(uint32_t);

	if (park_held < 0 || finished)
		fail(GPUOPS_ERR_INTERNAL, "rows parked without a park buffer");
	if (bytes > capacity || nrows > cap_rows || (bytes & 7) != 0)
		fail(GPUOPS_ERR_INTERNAL, "park buffer overfilled: %llu bytes, %u rows",
			 (unsigned long long) bytes, nrows);
	cudaStream_t st = rt->stream(next_stream++);
	const uint8_t *host = static_cast<const uint8_t *>(rt->buffer(park_held));
	ParkBlock b;

	b.first = park_rows;
	b.rows = nrows;
	b.data_bytes = bytes;
	if (nrows > 0)
	{
		b.mem = take(this, bytes + static_cast<size_t>(nrows) * sizeof(uint32_t), st);
		GPUOPS_CUDA_TRY(cudaMemcpyAsync(b.mem.p, host, bytes, cudaMemcpyHostToDevice, st));
		GPUOPS_CUDA_TRY(cudaMemcpyAsync(static_cast<uint8_t *>(b.mem.p) + bytes, host + capacity,
										static_cast<size_t>(nrows) * sizeof(uint32_t),
										cudaMemcpyHostToDevice, st));
		park_blocks.push_back(b);
	}
	rt->release_after(park_held, st);
	park_held = -1;
	park_rows += nrows;
	park_bytes += bytes;
	return GPUOPS_OK;
}

GpuopsStatus
CudaSort::sort_park_next(GpuopsParkChunk *chunk)
{
	memset(chunk, 0, sizeof(*chunk));
	if (!finished)
		fail(GPUOPS_ERR_INTERNAL, "parked rows asked for before the sort finished");
	if (!park_ready)
	{
		park_prepare(this);
		park_launch(this, park_out[0]);
	}
	ParkOut &o = park_out[park_turn];

	if (!o.launched)
		return GPUOPS_OK; /* the end */
	::gpuops::cuda::sync_event(o.done);
	/* the next chunk travels while the caller returns this one's rows */
	park_turn ^= 1;
	park_launch(this, park_out[park_turn]);
	o.launched = false;
	uint8_t *host = static_cast<uint8_t *>(rt->buffer(o.buffer));

	chunk->data = o.big ? park_big.data() : host;
	chunk->bytes = o.bytes;
	chunk->rows = static_cast<uint32_t>(o.end - o.first);
	if (park_ties.p)
	{
		chunk->ties = reinterpret_cast<const uint32_t *>(host + park_cap);
		chunk->ties_bit0 = static_cast<uint32_t>(o.first & 31);
	}
	stats.rows = rows;
	return GPUOPS_OK;
}

GpuopsStatus
CudaSort::sort_park_rewind()
{
	if (!park_ready)
		return GPUOPS_OK;
	::gpuops::cuda::sync_stream(rt->stream(0));
	park_out[0].launched = park_out[1].launched = false;
	park_turn = 0;
	park_pos = 0;
	park_launch(this, park_out[0]);
	return GPUOPS_OK;
}

/* release()'s share: the pinned buffers and events (device memory is in `owned`). */
void
CudaSort::park_release() noexcept
{
	if (park_held >= 0)
		rt->release_now(park_held);
	park_held = -1;
	for (ParkOut &o : park_out)
	{
		if (o.buffer >= 0)
			rt->release_now(o.buffer);
		o.buffer = -1;
		if (o.done)
			cudaEventDestroy(o.done);
		o.done = nullptr;
	}
}

} /* namespace gpusort */
} /* namespace cuda */
} /* namespace gpuops */
