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
 */
#include <cub/device/device_radix_sort.cuh>

#include <memory>
#include <vector>

#include "backend_tables.hpp"
#include "cuda_runtime.cuh"
#include "eval_kernel.cuh"
#include "key_normalize.hpp"
#include "run_merge.hpp"
#include "sort_computed.hpp"

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

/* The sort spec as a kernel parameter (passed by value, < 1 KB). */
struct KernelSpec
{
	int			nkeys;
	uint32_t	nwords;
	uint8_t		kind[GPUOPS_MAX_SORT_KEYS];
	uint8_t		desc[GPUOPS_MAX_SORT_KEYS];
	uint8_t		nulls_first[GPUOPS_MAX_SORT_KEYS];
	uint8_t		computed[GPUOPS_MAX_SORT_KEYS];	/* read from `comp`, not `raw` */
	uint64_t	values_off[GPUOPS_MAX_SORT_KEYS];
	uint64_t	nulls_off[GPUOPS_MAX_SORT_KEYS];
};

/* Raw staged (or computed) columns of one batch -> key words [word][row]. */
__global__ void
normalize_kernel(KernelSpec spec, const uint8_t *raw_in, const uint8_t *comp, uint32_t n,
				 uint64_t *words)
{
	for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
	{
		uint32_t	j = 0;

		for (int k = 0; k < spec.nkeys; k++)
		{
			const uint8_t *raw = spec.computed[k] ? comp : raw_in;
			GpuopsKeyKind kind = static_cast<GpuopsKeyKind>(spec.kind[k]);
			bool		isnull = (raw[spec.nulls_off[k] + (i >> 3)] >> (i & 7)) & 1;
			uint64_t	w[2] = {0, 0};
			int			nv = gpuops_key_value_words(kind);

			words[static_cast<size_t>(j) * n + i] = (isnull == (spec.nulls_first[k] != 0)) ? 0 : 1;
			if (!isnull)
			{
				value_words(kind, raw + spec.values_off[k] +
							static_cast<size_t>(i) * gpuops_key_raw_width(kind), w);
				if (spec.desc[k])
					w[0] = ~w[0], w[1] = ~w[1];
			}
			for (int v = 0; v < nv; v++)
				words[static_cast<size_t>(j + 1 + v) * n + i] = w[v];
			j += 1 + nv;
		}
	}
}

__global__ void
iota_kernel(uint32_t *out, uint32_t n)
{
	for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		out[i] = i;
}

/* out[i] = word[rows[i]]: one key word in the current sorted order */
__global__ void
gather_kernel(const uint64_t *word, const uint32_t *rows, uint32_t n, uint64_t *out)
{
	for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		out[i] = word[rows[i]];
}

/* out[i * nwords + j] = word j of sorted row i: a run's words for the merge */
__global__ void
rowmajor_kernel(const uint64_t *words, uint32_t nwords, const uint32_t *rows, uint32_t n,
				uint64_t *out)
{
	for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		for (uint32_t j = 0; j < nwords; j++)
			out[static_cast<size_t>(i) * nwords + j] = words[static_cast<size_t>(j) * n + rows[i]];
}

/* OR of (w XOR w[0]) over one word: its highest bit bounds that word's sort. */
__global__ void
diff_bits_kernel(const uint64_t *w, uint32_t n, unsigned long long *out)
{
	uint64_t	first = w[0];
	unsigned long long acc = 0;

	for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		acc |= w[i] ^ first;
	for (int off = 16; off > 0; off /= 2)
		acc |= __shfl_down_sync(0xffffffffu, acc, off);
	if ((threadIdx.x & 31) == 0 && acc)
		atomicOr(out, acc);
}

/* Bit i of ties: sorted row i has the same key words as sorted row i-1. */
__global__ void
ties_kernel(const uint64_t *words, uint32_t nwords, const uint32_t *rows, uint32_t n,
			uint32_t *ties)
{
	uint32_t	nchunks = (n + 31) / 32;

	for (uint32_t c = blockIdx.x * blockDim.x + threadIdx.x; c < nchunks; c += gridDim.x * blockDim.x)
	{
		uint32_t	bits = 0;

		for (uint32_t b = 0; b < 32; b++)
		{
			uint32_t	i = c * 32 + b;
			bool		same = i > 0 && i < n;

			for (uint32_t j = 0; j < nwords && same; j++)
				same = words[static_cast<size_t>(j) * n + rows[i]] ==
					words[static_cast<size_t>(j) * n + rows[i - 1]];
			if (same)
				bits |= 1u << b;
		}
		ties[c] = bits;
	}
}

struct DevPtr
{
	void	   *p = nullptr;
	size_t		bytes = 0;
};

struct Batch
{
	DevPtr		words;			/* [word][row] for this batch's rows */
	DevPtr		computed;		/* computed keys' values (computed_layout), until fetched */
	uint64_t	first = 0;		/* its first row */
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
	KernelSpec	kspec;
	uint32_t	nwords = 0;
	uint32_t	stage_rows = 0;
	size_t		values_off[GPUOPS_MAX_SORT_KEYS];
	size_t		nulls_off[GPUOPS_MAX_SORT_KEYS];
	size_t		input_off = 0;	/* program columns in the staging buffer */
	bool		has_programs = false;
	DevPtr		programs[GPUOPS_MAX_SORT_KEYS];	/* computed keys' programs */
	DevPtr		recheck;		/* the first row a program stopped at */
	ComputedValues computed;	/* computed values fetched to the host */
	int			held_buffer = -1;	/* pinned buffer handed to the caller */
	std::vector<Batch> batches;
	size_t		run_first_batch = 0;	/* batches of the current run start here */
	uint64_t	rows = 0;		/* all rows submitted */
	uint64_t	run_base = 0;	/* first row of the current run */
	uint64_t	run_rows = 0;	/* rows per run under the budget */
	std::vector<SortedRun> runs;	/* finished runs, when there are several */
	bool		merged = false;	/* order and ties come from the host merge */
	std::vector<uint32_t> host_order;
	std::vector<uint8_t> host_ties;
	double		runs_kernel_ms = 0;
	int			next_stream = 0;
	std::vector<DevPtr> owned;	/* device memory to free at the end */
	DevPtr		words;			/* all rows' key words [word][row] */
	DevPtr		sorted_rows;	/* row numbers in sorted order */
	bool		identity = false;	/* nothing to sort: input order is sorted */
	bool		finished = false;
	cudaEvent_t sort_start = nullptr;
	cudaEvent_t sort_end = nullptr;
	double		result_copy_ms = 0;
	GpuopsStats stats = {};

	/* the entry points (backend_tables.hpp) */
	static GpuopsStatus probe(GpuopsDeviceInfo *info);
	CudaSort(const GpuopsSettings *settings, const GpuopsSortSpec *spec);
	~CudaSort();
	GpuopsStatus sort_stage(GpuopsStageBuffer *buf);
	GpuopsStatus sort_submit(uint32_t nrows);
	GpuopsStatus sort_finish();
	GpuopsStatus sort_poll();
	GpuopsStatus sort_result(uint32_t *order, uint64_t nrows);
	GpuopsStatus sort_ties(uint8_t *ties, uint64_t nrows);
	void		sort_stats(GpuopsStats *out) const;
	GpuopsStatus sort_recheck(uint64_t *row);
	GpuopsStatus sort_values(int key, uint64_t first, uint32_t n, void *values, uint8_t *nulls);
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

/*
 * Device -> caller's host memory through the pinned pool: chunk i+1 is
 * copied while chunk i is moved into place.  Returns the copy time.
 */
double
copy_to_host(CudaSort *s, const void *dev, size_t bytes, void *host)
{
	Runtime    &rt = *s->rt;
	cudaStream_t st = rt.stream(0);
	size_t		chunk = rt.buffer_bytes();
	int			pending_buf = -1;
	size_t		pending_off = 0,
				pending_len = 0;
	cudaEvent_t t0 = new_event(),
				t1 = new_event();
	int			buf = -1;

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
			size_t		len = 0;

			buf = -1;
			if (off < bytes)
			{
				len = bytes - off < chunk ? bytes - off : chunk;
				buf = rt.acquire_buffer_blocking();
				GPUOPS_CUDA_TRY(cudaMemcpyAsync(rt.buffer(buf), static_cast<const char *>(dev) + off,
												len, cudaMemcpyDeviceToHost, st));
				/* stays held (not "in flight") until its bytes are moved out below */
			}
			if (pending_buf >= 0)
			{
				::gpuops::cuda::sync_event(t1);
				memcpy(static_cast<char *>(host) + pending_off, rt.buffer(pending_buf), pending_len);
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
	}
	catch (...)
	{
		(void) cudaStreamSynchronize(st);
		if (pending_buf >= 0)
			rt.release_now(pending_buf);
		if (buf >= 0 && buf != pending_buf)
			rt.release_now(buf);	/* acquired, its copy not yet recorded */
		cudaEventDestroy(t0);
		cudaEventDestroy(t1);
		throw;
	}
	double		ms = elapsed_ms(t0, t1);

	cudaEventDestroy(t0);
	cudaEventDestroy(t1);
	return ms;
}

void		cut_run(CudaSort *s);

/*
 * Brings the computed values of every batch still holding them on the
 * device to the host (in batch order, so chunks stay in row order) and
 * frees them there.  Waits for the batches' kernels.
 */
void
fetch_computed(CudaSort *s)
{
	size_t		voff[GPUOPS_MAX_SORT_KEYS],
				noff[GPUOPS_MAX_SORT_KEYS];

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

CudaSort::CudaSort(const GpuopsSettings *settings, const GpuopsSortSpec *spec)
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
												sizeof(GpuopsExprProgram),
												cudaMemcpyHostToDevice, st));
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
CudaSort::sort_stage(GpuopsStageBuffer *buf)
{
	if (held_buffer < 0)
		held_buffer = rt->try_acquire_buffer();
	if (held_buffer < 0)
		return GPUOPS_PENDING;
	char	   *base = static_cast<char *>(rt->buffer(held_buffer));

	for (int k = 0; k < spec.nkeys; k++)
	{
		buf->values[k] = base + values_off[k];
		buf->nulls[k] = reinterpret_cast<uint8_t *>(base + nulls_off[k]);
	}
	for (int c = 0; c < spec.program_ncols; c++)
	{
		buf->input_words[c] = reinterpret_cast<uint64_t *>(
			base + input_off + input_words_off(stage_rows, c));
		buf->input_nulls[c] = reinterpret_cast<uint8_t *>(
			base + input_off + input_nulls_off(spec, stage_rows, c));
	}
	buf->capacity_rows = stage_rows;
	return GPUOPS_OK;
}

GpuopsStatus
CudaSort::sort_submit(uint32_t nrows)
{
	if (held_buffer < 0)
		fail(GPUOPS_ERR_INTERNAL, "submit without a staged buffer");
	if (nrows > stage_rows)
		fail(GPUOPS_ERR_INTERNAL, "batch of %u rows exceeds its buffer", nrows);
	if (rows + nrows > UINT32_MAX)
		fail(GPUOPS_ERR_UNSUPPORTED, "more than 2^32-1 rows in one sort");
	if (batches.empty())
		maybe_inject(GPUOPS_FAULT_OUT_OF_MEMORY, settings.fault);
	/* a new run when this batch would take the current one over budget */
	if (run_rows && rows > run_base && rows - run_base + nrows > run_rows)
		cut_run(this);
	cudaStream_t st = rt->stream(next_stream++);
	const char *host = static_cast<const char *>(rt->buffer(held_buffer));
	size_t		voff[GPUOPS_MAX_SORT_KEYS],
				noff[GPUOPS_MAX_SORT_KEYS];
	size_t		in_off = stage_layout(spec, nrows, voff, noff);
	size_t		raw_bytes = in_off + input_bytes(spec, nrows);
	Batch		b;

	if (has_programs && !batches.empty() && batches.back().rows % 8 != 0)
		fail(GPUOPS_ERR_INTERNAL, "computed sort keys: a partial batch before the last");
	b.rows = nrows;
	b.first = rows;
	b.copy_start = new_event();
	b.copy_end = new_event();
	b.kernel_end = new_event();
	batches.push_back(b);	/* owns the events from here on */
	Batch	   &bb = batches.back();
	DevPtr		raw = take(this, raw_bytes, st);

	bb.words = take(this, static_cast<size_t>(nrows) * nwords * sizeof(uint64_t), st);
	GPUOPS_CUDA_TRY(cudaEventRecord(bb.copy_start, st));
	for (int k = 0; k < spec.nkeys; k++)
	{
		size_t		w = gpuops_key_raw_width(spec.keys[k].kind);

		if (spec.programs[k])
			continue;		/* computed below */
		GPUOPS_CUDA_TRY(cudaMemcpyAsync(static_cast<char *>(raw.p) + voff[k], host + values_off[k],
										static_cast<size_t>(nrows) * w, cudaMemcpyHostToDevice, st));
		GPUOPS_CUDA_TRY(cudaMemcpyAsync(static_cast<char *>(raw.p) + noff[k], host + nulls_off[k],
										(nrows + 7) / 8, cudaMemcpyHostToDevice, st));
	}
	for (int c = 0; c < spec.program_ncols; c++)
	{
		GPUOPS_CUDA_TRY(cudaMemcpyAsync(static_cast<char *>(raw.p) + in_off + input_words_off(nrows, c),
										host + input_off + input_words_off(stage_rows, c),
										static_cast<size_t>(nrows) * sizeof(uint64_t),
										cudaMemcpyHostToDevice, st));
		GPUOPS_CUDA_TRY(cudaMemcpyAsync(static_cast<char *>(raw.p) + in_off + input_nulls_off(spec, nrows, c),
										host + input_off + input_nulls_off(spec, stage_rows, c),
										nrows, cudaMemcpyHostToDevice, st));
	}
	GPUOPS_CUDA_TRY(cudaEventRecord(bb.copy_end, st));
	rt->release_after(held_buffer, st);
	held_buffer = -1;

	KernelSpec	ks = kspec;
	size_t		coff_v[GPUOPS_MAX_SORT_KEYS],
				coff_n[GPUOPS_MAX_SORT_KEYS];

	for (int k = 0; k < spec.nkeys; k++)
	{
		ks.values_off[k] = voff[k];
		ks.nulls_off[k] = noff[k];
	}
	if (has_programs)
	{
		size_t		cbytes = computed_layout(spec, nrows, coff_v, coff_n);
		ColumnsView in = input_view(spec, static_cast<const uint8_t *>(raw.p) + in_off, nrows);

		bb.computed = take(this, cbytes, st);
		GPUOPS_CUDA_TRY(cudaMemsetAsync(bb.computed.p, 0, cbytes, st));	/* no row masked */
		for (int k = 0; k < spec.nkeys; k++)
		{
			if (!spec.programs[k])
				continue;
			uint8_t    *comp = static_cast<uint8_t *>(bb.computed.p);

			eval_input_kernel<<<grid_for((nrows + 7) / 8), kThreads, 0, st>>>(
				static_cast<const GpuopsExprProgram *>(programs[k].p), in, 0, nrows,
				spec.keys[k].kind, comp + coff_v[k], comp + coff_n[k], bb.first,
				static_cast<unsigned long long *>(recheck.p));
			GPUOPS_CUDA_CHECK_LAUNCH("eval keys");
			ks.values_off[k] = coff_v[k];
			ks.nulls_off[k] = coff_n[k];
		}
	}
	normalize_kernel<<<grid_for(nrows), kThreads, 0, st>>>(
		ks, static_cast<const uint8_t *>(raw.p), static_cast<const uint8_t *>(bb.computed.p),
		nrows, static_cast<uint64_t *>(bb.words.p));
	GPUOPS_CUDA_CHECK_LAUNCH("normalize");
	GPUOPS_CUDA_TRY(cudaEventRecord(bb.kernel_end, st));
	give_back(this, raw, st);
	rows += nrows;
	stats.rows = rows;
	stats.batches++;
	return GPUOPS_OK;
}

/*
 * Sorts the current run's batches on stream 0: lays their words out as one
 * [word][row] array and orders the row numbers one word at a time.  Leaves
 * s->words and s->sorted_rows (local row numbers), queued, not waited for.
 */
void
sort_run(CudaSort *s)
{
	cudaStream_t st = s->rt->stream(0);
	uint32_t	n = static_cast<uint32_t>(s->rows - s->run_base);

	s->identity = false;
	for (size_t b = s->run_first_batch; b < s->batches.size(); b++)
		GPUOPS_CUDA_TRY(cudaStreamWaitEvent(st, s->batches[b].kernel_end, 0));
	GPUOPS_CUDA_TRY(cudaEventRecord(s->sort_start, st));
	if (n == 0)
	{
		s->identity = true;
		GPUOPS_CUDA_TRY(cudaEventRecord(s->sort_end, st));
		return;
	}

	/* every batch's words into one [word][row] array (device-to-device) */
	if (s->batches.size() - s->run_first_batch == 1)
		s->words = s->batches[s->run_first_batch].words;
	else
	{
		s->words = take(s, static_cast<size_t>(n) * s->nwords * sizeof(uint64_t), st);
		size_t		row0 = 0;

		for (size_t bi = s->run_first_batch; bi < s->batches.size(); bi++)
		{
			Batch	   &b = s->batches[bi];

			GPUOPS_CUDA_TRY(cudaMemcpy2DAsync(
				static_cast<uint64_t *>(s->words.p) + row0, static_cast<size_t>(n) * sizeof(uint64_t),
				b.words.p, static_cast<size_t>(b.rows) * sizeof(uint64_t),
				static_cast<size_t>(b.rows) * sizeof(uint64_t), s->nwords,
				cudaMemcpyDeviceToDevice, st));
			row0 += b.rows;
			give_back(s, b.words, st);
		}
	}
	for (size_t bi = s->run_first_batch; bi < s->batches.size(); bi++)
		s->batches[bi].words = DevPtr();
	const uint64_t *words = static_cast<const uint64_t *>(s->words.p);

	/* which words differ at all, and in how many low bits */
	DevPtr		d_diff = take(s, s->nwords * sizeof(uint64_t), st);

	GPUOPS_CUDA_TRY(cudaMemsetAsync(d_diff.p, 0, s->nwords * sizeof(uint64_t), st));
	for (uint32_t j = 0; j < s->nwords; j++)
	{
		diff_bits_kernel<<<grid_for(n), kThreads, 0, st>>>(
			words + static_cast<size_t>(j) * n, n,
			static_cast<unsigned long long *>(d_diff.p) + j);
		GPUOPS_CUDA_CHECK_LAUNCH("diff_bits");
	}
	uint64_t   *diff = s->rt->pinned_scalar();

	GPUOPS_CUDA_TRY(cudaMemcpyAsync(diff, d_diff.p, s->nwords * sizeof(uint64_t),
									cudaMemcpyDeviceToHost, st));
	/* the passes' bit ranges are host-side launch parameters: wait for them */
	::gpuops::cuda::sync_stream(st);
	give_back(s, d_diff, st);
	std::vector<unsigned> bits(s->nwords);

	for (uint32_t j = 0; j < s->nwords; j++)
		bits[j] = diff[j] ? 64 - __builtin_clzll(diff[j]) : 0;

	DevPtr		rows = take(s, static_cast<size_t>(n) * sizeof(uint32_t), st);
	DevPtr		rows_alt = take(s, static_cast<size_t>(n) * sizeof(uint32_t), st);
	DevPtr		keys = take(s, static_cast<size_t>(n) * sizeof(uint64_t), st);
	DevPtr		keys_alt = take(s, static_cast<size_t>(n) * sizeof(uint64_t), st);
	size_t		temp_bytes = 0;

	GPUOPS_CUDA_TRY(cub::DeviceRadixSort::SortPairs(
		nullptr, temp_bytes, static_cast<uint64_t *>(keys.p), static_cast<uint64_t *>(keys_alt.p),
		static_cast<uint32_t *>(rows.p), static_cast<uint32_t *>(rows_alt.p), n, 0, 64, st));
	DevPtr		temp = take(s, temp_bytes, st);

	iota_kernel<<<grid_for(n), kThreads, 0, st>>>(static_cast<uint32_t *>(rows.p), n);
	GPUOPS_CUDA_CHECK_LAUNCH("iota");
	/* least significant word first; every pass is stable */
	for (int j = static_cast<int>(s->nwords) - 1; j >= 0; j--)
	{
		if (bits[j] == 0)
			continue;			/* the same in every row: decides nothing */
		gather_kernel<<<grid_for(n), kThreads, 0, st>>>(
			words + static_cast<size_t>(j) * n, static_cast<const uint32_t *>(rows.p), n,
			static_cast<uint64_t *>(keys.p));
		GPUOPS_CUDA_CHECK_LAUNCH("gather");
		GPUOPS_CUDA_TRY(cub::DeviceRadixSort::SortPairs(
			temp.p, temp_bytes, static_cast<uint64_t *>(keys.p), static_cast<uint64_t *>(keys_alt.p),
			static_cast<uint32_t *>(rows.p), static_cast<uint32_t *>(rows_alt.p), n, 0,
			static_cast<int>(bits[j]), st));
		std::swap(rows, rows_alt);
		s->stats.sort_passes++;
		s->stats.sort_bits += bits[j];
	}
	GPUOPS_CUDA_TRY(cudaEventRecord(s->sort_end, st));
	give_back(s, temp, st);
	give_back(s, keys, st);
	give_back(s, keys_alt, st);
	give_back(s, rows_alt, st);
	s->sorted_rows = rows;
}

/*
 * Sorts the current run and brings it back to the host (row numbers and
 * words in sorted order) for the merge, freeing its device memory.
 */
void
cut_run(CudaSort *s)
{
	cudaStream_t st = s->rt->stream(0);
	uint32_t	n = static_cast<uint32_t>(s->rows - s->run_base);
	SortedRun	run;

	sort_run(s);				/* n > 0: runs are cut only when they hold rows */
	run.rows.resize(n);
	run.words.resize(static_cast<size_t>(n) * s->nwords);
	DevPtr		rowmajor = take(s, static_cast<size_t>(n) * s->nwords * sizeof(uint64_t), st);

	rowmajor_kernel<<<grid_for(n), kThreads, 0, st>>>(
		static_cast<const uint64_t *>(s->words.p), s->nwords,
		static_cast<const uint32_t *>(s->sorted_rows.p), n, static_cast<uint64_t *>(rowmajor.p));
	GPUOPS_CUDA_CHECK_LAUNCH("rowmajor");
	s->result_copy_ms += copy_to_host(s, s->sorted_rows.p, static_cast<size_t>(n) * sizeof(uint32_t),
									  run.rows.data());
	s->result_copy_ms += copy_to_host(s, rowmajor.p, run.words.size() * sizeof(uint64_t),
									  run.words.data());
	give_back(s, rowmajor, st);
	give_back(s, s->words, st);
	give_back(s, s->sorted_rows, st);
	s->words = DevPtr();
	s->sorted_rows = DevPtr();
	::gpuops::cuda::sync_stream(st);
	s->runs_kernel_ms += elapsed_ms(s->sort_start, s->sort_end);
	for (uint32_t i = 0; i < n; i++)
		run.rows[i] += static_cast<uint32_t>(s->run_base);
	/* the run's computed values leave the device with it, freeing room for the next */
	fetch_computed(s);
	s->runs.push_back(std::move(run));
	s->stats.runs++;
	s->run_base = s->rows;
	s->run_first_batch = s->batches.size();
}

GpuopsStatus
CudaSort::sort_finish()
{
	if (held_buffer >= 0)
	{
		rt->release_now(held_buffer);
		held_buffer = -1;
	}
	maybe_inject(GPUOPS_FAULT_KERNEL_ERROR, settings.fault);
	finished = true;
	if (runs.empty())
	{
		/* one run: sort on the device, results fetched from there */
		sort_run(this);
		stats.runs = 1;
		if (spec.tie_words == 0 && words.p)
		{
			give_back(this, words, rt->stream(0));
			words = DevPtr();
		}
		return GPUOPS_OK;
	}
	/* several runs: the last one, then the merge on the host */
	if (rows > run_base)
		cut_run(this);
	host_order.resize(rows);
	if (spec.tie_words)
		host_ties.assign((rows + 7) / 8, 0);
	merge_runs(runs, nwords, spec.tie_words, host_order.data(),
			   spec.tie_words ? host_ties.data() : nullptr);
	std::vector<SortedRun>().swap(runs);
	merged = true;
	return GPUOPS_OK;
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
CudaSort::sort_ties(uint8_t *ties, uint64_t nrows)
{
	if (spec.tie_words == 0 || spec.tie_words > nwords || nrows != rows)
		fail(GPUOPS_ERR_INTERNAL, "sort ties asked for without tie_words or after the wrong sort");
	if (nrows == 0)
		return GPUOPS_OK;
	if (merged)
	{
		memcpy(ties, host_ties.data(), (nrows + 7) / 8);
		return GPUOPS_OK;
	}
	if (identity)
		fail(GPUOPS_ERR_INTERNAL, "ties of a sort that had nothing to order");
	cudaStream_t st = rt->stream(0);
	uint32_t	n = static_cast<uint32_t>(nrows);
	uint32_t	nchunks = (n + 31) / 32;
	DevPtr		d_ties = take(this, static_cast<size_t>(nchunks) * sizeof(uint32_t), st);

	ties_kernel<<<grid_for(nchunks), kThreads, 0, st>>>(
		static_cast<const uint64_t *>(words.p), spec.tie_words,
		static_cast<const uint32_t *>(sorted_rows.p), n, static_cast<uint32_t *>(d_ties.p));
	GPUOPS_CUDA_CHECK_LAUNCH("ties");
	result_copy_ms += copy_to_host(this, d_ties.p, (nrows + 7) / 8, ties);
	give_back(this, d_ties, st);
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
	uint64_t   *scalar = rt->pinned_scalar();

	/* stream 0 waited for every batch's kernels before the sort */
	GPUOPS_CUDA_TRY(cudaMemcpyAsync(scalar, recheck.p, sizeof(uint64_t),
									cudaMemcpyDeviceToHost, st));
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
	if (rt)
	{
		for (int i = 0; i < rt->stream_count(); i++)
			if (cudaStreamSynchronize(rt->stream(i)) != cudaSuccess)
				(void) cudaGetLastError();
		if (held_buffer >= 0)
			rt->release_now(held_buffer);
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
