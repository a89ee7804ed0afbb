/*
 * sort_cuda.cu
 *    The GPU key-pointer sort.
 *
 * Each staged batch of raw key columns (values and null bitmaps) crosses
 * the bus once, through a pinned buffer, on one of several streams.  A
 * kernel right behind its copy turns it into 64-bit key words
 * (key_normalize.hpp), so staging the next batch on the host overlaps the
 * copy and the kernel of this one.  At the end the words are laid out
 * contiguously and the row numbers are ordered one word at a time, least
 * significant word first, each pass a stable CUB radix sort of (word, row)
 * pairs on only the bits in which that word differs between rows (words
 * that never differ are skipped).  Only row numbers come back, and on
 * request a bitmap of sorted rows whose key equals their predecessor's; the
 * tuples never leave the host.
 *
 * Inputs whose words exceed the device memory budget are sorted in runs
 * that fit: each run's sorted row numbers and key words come back to the
 * host, and the runs are merged there (run_merge.hpp).
 *
 * Computed keys (expressions): the batch brings the program columns
 * instead of the key, and a kernel ahead of the normalize evaluates the
 * program into the batch's computed values (eval_kernel.cuh), which stay
 * on the device until the caller asks for them (sort_values).
 *
 * Files (sort_cuda.cuh): this one holds the backend, its begin and end,
 * the polls and results, the device memory a sort holds and the copies of
 * results and computed values back to the host; sort_stage_cuda.cu the
 * batches' upload and normalization; sort_run_cuda.cu the radix sort, the
 * runs and their merge.
 */
#include <cstring>
#include <vector>

#include "backend_tables.hpp"
#include "key_normalize.hpp"
#include "sort_cuda.cuh"

namespace gpuops {
namespace cuda {
namespace gpusort {

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
	DevPtr d;

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

/*
 * Device -> caller's host memory through the pinned pool: chunk i+1 is
 * copied while chunk i is moved into place.  Returns the copy time.
 */
double
copy_to_host(CudaSort *s, const void *dev, size_t bytes, void *host)
{
	Runtime &rt = *s->rt;
	cudaStream_t st = rt.stream(0);
	size_t chunk = rt.buffer_bytes();
	int pending_buf = -1;
	size_t pending_off = 0, pending_len = 0;
	cudaEvent_t t0 = new_event(), t1 = new_event();
	int buf = -1;

	/*
	 * A failure or a cancel mid-way gives the staging buffers back once the
	 * copies into them are over, so the pool never loses one.
	 */
	try
	{
		GPUOPS_CUDA_TRY(cudaEventRecord(t0, st));
		GPUOPS_CUDA_TRY(cudaEventRecord(t1, st));
		for (size_t off = 0; off < bytes || pending_buf >= 0; off += chunk)
		{
			size_t len = 0;

			buf = -1;
			if (off < bytes)
			{
				len = bytes - off < chunk ? bytes - off : chunk;
				buf = rt.acquire_buffer_blocking();
				GPUOPS_CUDA_TRY(cudaMemcpyAsync(rt.buffer(buf),
												static_cast<const char *>(dev) + off, len,
												cudaMemcpyDeviceToHost, st));
				/* stays held (not "in flight") until its bytes are moved out below */
			}
			if (pending_buf >= 0)
			{
				::gpuops::cuda::sync_event(t1);
				memcpy(static_cast<char *>(host) + pending_off, rt.buffer(pending_buf),
					   pending_len);
				rt.release_now(pending_buf);
				pending_buf = -1;
			}
			if (buf >= 0)
				GPUOPS_CUDA_TRY(cudaEventRecord(t1, st));
			pending_buf = buf;
			pending_off = off;
			pending_len = len;
		}
		::gpuops::cuda::sync_event(t1);
		s->stats.bytes_from_device += bytes;
	}
	catch (...)
	{
		(void) cudaStreamSynchronize(st);
		if (pending_buf >= 0)
			rt.release_now(pending_buf);
		if (buf >= 0 && buf != pending_buf)
			rt.release_now(buf); /* acquired, its copy not yet recorded */
		cudaEventDestroy(t0);
		cudaEventDestroy(t1);
		throw;
	}
	double ms = elapsed_ms(t0, t1);

	cudaEventDestroy(t0);
	cudaEventDestroy(t1);
	return ms;
}

/*
 * Brings the computed values of every batch still holding them on the
 * device to the host (in batch order, so chunks stay in row order) and
 * frees them there.  Waits for the batches' kernels.
 */
void
fetch_computed(CudaSort *s)
{
	size_t voff[GPUOPS_MAX_SORT_KEYS], noff[GPUOPS_MAX_SORT_KEYS];

	for (Batch &b : s->batches)
	{
		if (!b.computed.p)
			continue;
		ComputedChunk ch;

		ch.first = b.first;
		ch.rows = b.rows;
		ch.bytes.resize(computed_layout(s->spec, b.rows, voff, noff));
		GPUOPS_CUDA_TRY(cudaStreamWaitEvent(s->rt->stream(0), b.kernel_end, 0));
		s->result_copy_ms += copy_to_host(s, b.computed.p, ch.bytes.size(), ch.bytes.data());
		give_back(s, b.computed, s->rt->stream(0));
		b.computed = DevPtr();
		s->computed.chunks.push_back(std::move(ch));
	}
}

GpuopsStatus
CudaSort::probe(GpuopsDeviceInfo *info)
{
	Runtime::probe(info);
	return GPUOPS_OK;
}

/*
 * A constructor that throws never runs its destructor, and the device
 * memory taken so far (the programs, the recheck word) sits in `owned` as
 * plain pointers: a begin that failed after take() kept it, and its share
 * of the budget, until the process ended.  So the work is init(), and a
 * failure there releases what it took before the exception goes on to the
 * shell's guarded().
 */
CudaSort::CudaSort(const GpuopsSettings *settings, const GpuopsSortSpec *spec)
{
	try
	{
		init(settings, spec);
	}
	catch (...)
	{
		release();
		throw;
	}
}

void
CudaSort::init(const GpuopsSettings *settings, const GpuopsSortSpec *spec)
{
	maybe_inject(GPUOPS_FAULT_NO_DEVICE, settings->fault);
	if (spec->nkeys < 1 || spec->nkeys > GPUOPS_MAX_SORT_KEYS)
		fail(GPUOPS_ERR_INTERNAL, "bad number of sort keys: %d", spec->nkeys);
	rt = &Runtime::get(*settings);
	rt->set_limit(settings->device_memory_limit, settings->device_share);
	this->settings = *settings;
	this->spec = *spec;
	nwords = spec_words(*spec);
	if (nwords * sizeof(uint64_t) > Runtime::kScalarBytes)
		fail(GPUOPS_ERR_UNSUPPORTED, "sort key too wide: %u words", nwords);
	check_programs(*spec);
	has_programs = sort_has_programs(*spec);
	stage_rows = stage_capacity(*spec, rt->buffer_bytes());
	if (stage_rows == 0)
		fail(GPUOPS_ERR_UNSUPPORTED, "staging buffer too small for the sort key");
	/* a computed key's values stay until fetched: about one more word a row */
	run_rows = run_rows_for_budget(rt->limit(), nwords + (has_programs ? spec->nkeys : 0));
	if (run_rows && run_rows < stage_rows)
		stage_rows = static_cast<uint32_t>(run_rows & ~uint64_t(7));
	input_off = stage_layout(*spec, stage_rows, values_off, nulls_off);
	if (input_off + input_bytes(*spec, stage_rows) > rt->buffer_bytes())
		fail(GPUOPS_ERR_INTERNAL, "staging layout exceeds its buffer");
	if (has_programs)
	{
		cudaStream_t st = rt->stream(0);

		for (int k = 0; k < spec->nkeys; k++)
			if (spec->programs[k])
			{
				programs[k] = take(this, sizeof(GpuopsExprProgram), st);
				GPUOPS_CUDA_TRY(cudaMemcpyAsync(programs[k].p, spec->programs[k],
												sizeof(GpuopsExprProgram), cudaMemcpyHostToDevice,
												st));
			}
		recheck = take(this, sizeof(unsigned long long), st);
		GPUOPS_CUDA_TRY(cudaMemsetAsync(recheck.p, 0xff, sizeof(unsigned long long), st));
		/* the programs come from the caller's memory, which may go once this returns */
		::gpuops::cuda::sync_stream(st);
	}
	memset(&kspec, 0, sizeof(kspec));
	kspec.nkeys = spec->nkeys;
	kspec.nwords = nwords;
	for (int k = 0; k < spec->nkeys; k++)
	{
		kspec.kind[k] = static_cast<uint8_t>(spec->keys[k].kind);
		kspec.desc[k] = spec->keys[k].descending != 0;
		kspec.nulls_first[k] = spec->keys[k].nulls_first != 0;
		kspec.computed[k] = spec->programs[k] != nullptr;
	}
	stats.key_words = nwords;
	sort_start = new_event();
	sort_end = new_event();
}

GpuopsStatus
CudaSort::sort_poll()
{
	if (!finished)
		fail(GPUOPS_ERR_INTERNAL, "sort polled before it was finished");
	if (merged)
		return GPUOPS_OK;
	cudaError_t err = cudaEventQuery(sort_end);

	if (err == cudaErrorNotReady)
		return GPUOPS_PENDING;
	if (err != cudaSuccess)
		throw_cuda(err, "radix sort");
	return GPUOPS_OK;
}

GpuopsStatus
CudaSort::sort_result(uint32_t *order, uint64_t nrows)
{
	if (nrows != rows)
		fail(GPUOPS_ERR_INTERNAL, "sort result asked for %llu rows, sort holds %llu",
			 (unsigned long long) nrows, (unsigned long long) rows);
	if (merged)
	{
		memcpy(order, host_order.data(), nrows * sizeof(uint32_t));
		return GPUOPS_OK;
	}
	if (identity)
	{
		for (uint64_t i = 0; i < nrows; i++)
			order[i] = static_cast<uint32_t>(i);
		return GPUOPS_OK;
	}
	result_copy_ms += copy_to_host(this, sorted_rows.p, nrows * sizeof(uint32_t), order);
	return GPUOPS_OK;
}

GpuopsStatus
CudaSort::sort_recheck(uint64_t *row)
{
	*row = GPUOPS_SORT_NO_RECHECK;
	if (!finished)
		fail(GPUOPS_ERR_INTERNAL, "sort recheck asked for before the sort finished");
	if (!has_programs)
		return GPUOPS_OK;
	cudaStream_t st = rt->stream(0);
	uint64_t *scalar = rt->pinned_scalar();

	/* stream 0 waited for every batch's kernels before the sort */
	GPUOPS_CUDA_TRY(
		cudaMemcpyAsync(scalar, recheck.p, sizeof(uint64_t), cudaMemcpyDeviceToHost, st));
	stats.bytes_from_device += sizeof(uint64_t);
	::gpuops::cuda::sync_stream(st);
	*row = *scalar;
	return GPUOPS_OK;
}

GpuopsStatus
CudaSort::sort_values(int key, uint64_t first, uint32_t n, void *values, uint8_t *nulls)
{
	if (!finished)
		fail(GPUOPS_ERR_INTERNAL, "sort values asked for before the sort finished");
	fetch_computed(this);
	computed.copy_out(spec, key, first, n, values, nulls);
	return GPUOPS_OK;
}

void
CudaSort::sort_stats(GpuopsStats *out) const
{
	*out = stats;
	out->copy_ms = result_copy_ms;
	for (const Batch &b : batches)
	{
		out->copy_ms += elapsed_ms(b.copy_start, b.copy_end);
		out->kernel_ms += elapsed_ms(b.copy_end, b.kernel_end);
	}
	out->kernel_ms += merged ? runs_kernel_ms : elapsed_ms(sort_start, sort_end);
}

/* sort_end: frees everything, also after a failure or a cancel mid-flight. */
CudaSort::~CudaSort()
{
	release();
}

/* Safe on a partly made sort: every member starts empty. */
void
CudaSort::release() noexcept
{
	if (rt)
	{
		for (int i = 0; i < rt->stream_count(); i++)
			if (cudaStreamSynchronize(rt->stream(i)) != cudaSuccess)
				(void) cudaGetLastError();
		if (held_buffer >= 0)
			rt->release_now(held_buffer);
		park_release();
		for (DevPtr &d : owned)
			rt->free(d.p, d.bytes, rt->stream(0));
	}
	for (Batch &b : batches)
	{
		cudaEventDestroy(b.copy_start);
		cudaEventDestroy(b.copy_end);
		cudaEventDestroy(b.kernel_end);
	}
	if (sort_start)
		cudaEventDestroy(sort_start);
	if (sort_end)
		cudaEventDestroy(sort_end);
	(void) cudaGetLastError();
}

constexpr GpuopsBackend cuda_backend = shell::make_sort_backend<CudaSort>("cuda");

} /* namespace gpusort */
} /* namespace cuda */
} /* namespace gpuops */

extern "C" const GpuopsBackend *
gpuops_cuda_backend(void) noexcept
{
	return &gpuops::cuda::gpusort::cuda_backend;
}
