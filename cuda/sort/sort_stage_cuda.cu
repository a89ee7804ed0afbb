/*
 * sort_stage_cuda.cu
 *    The GPU sort's batches (sort_cuda.cuh): the staging buffer handed to
 *    the caller, and each submitted batch's upload through it, the computed
 *    keys' programs and the kernel that turns the batch into key words.
 *
 * The upload and its kernels run on the batch's own stream, so that the
 * caller fills the next staging buffer while this one crosses the bus; a
 * batch's events (copy start, copy end, kernel end) time it and let the
 * sort wait for it (sort_run_cuda.cu).
 */
#include "eval_kernel.cuh"
#include "key_normalize.hpp"
#include "sort_cuda.cuh"

namespace gpuops {
namespace cuda {
namespace gpusort {
namespace {

/* Raw staged (or computed) columns of one batch -> key words [word][row]. */
__global__ void
normalize_kernel(KernelSpec spec, const uint8_t *raw_in, const uint8_t *comp, uint32_t n,
				 uint64_t *words)
{
	for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
	{
		uint32_t j = 0;

		for (int k = 0; k < spec.nkeys; k++)
		{
			const uint8_t *raw = spec.computed[k] ? comp : raw_in;
			GpuopsKeyKind kind = static_cast<GpuopsKeyKind>(spec.kind[k]);
			bool isnull = (raw[spec.nulls_off[k] + (i >> 3)] >> (i & 7)) & 1;
			uint64_t w[2] = {0, 0};
			int nv = gpuops_key_value_words(kind);

			words[static_cast<size_t>(j) * n + i] = (isnull == (spec.nulls_first[k] != 0)) ? 0 : 1;
			if (!isnull)
			{
				value_words(kind,
							raw + spec.values_off[k] +
								static_cast<size_t>(i) * gpuops_key_raw_width(kind),
							w);
				if (spec.desc[k])
					w[0] = ~w[0], w[1] = ~w[1];
			}
			for (int v = 0; v < nv; v++)
				words[static_cast<size_t>(j + 1 + v) * n + i] = w[v];
			j += 1 + nv;
		}
	}
}

} /* namespace */

GpuopsStatus
CudaSort::sort_stage(GpuopsStageBuffer *buf)
{
	if (held_buffer < 0)
		held_buffer = rt->try_acquire_buffer();
	if (held_buffer < 0)
		return GPUOPS_PENDING;
	char *base = static_cast<char *>(rt->buffer(held_buffer));

	for (int k = 0; k < spec.nkeys; k++)
	{
		buf->values[k] = base + values_off[k];
		buf->nulls[k] = reinterpret_cast<uint8_t *>(base + nulls_off[k]);
	}
	for (int c = 0; c < spec.program_ncols; c++)
	{
		buf->input_words[c] = reinterpret_cast<uint64_t *>(base + input_off +
														   input_words_off(stage_rows, c));
		buf->input_nulls[c] = reinterpret_cast<uint8_t *>(base + input_off +
														  input_nulls_off(spec, stage_rows, c));
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
	size_t voff[GPUOPS_MAX_SORT_KEYS], noff[GPUOPS_MAX_SORT_KEYS];
	size_t in_off = stage_layout(spec, nrows, voff, noff);
	size_t raw_bytes = in_off + input_bytes(spec, nrows);
	Batch b;

	if (has_programs && !batches.empty() && batches.back().rows % 8 != 0)
		fail(GPUOPS_ERR_INTERNAL, "computed sort keys: a partial batch before the last");
	b.rows = nrows;
	b.first = rows;
	b.copy_start = new_event();
	b.copy_end = new_event();
	b.kernel_end = new_event();
	batches.push_back(b); /* owns the events from here on */
	Batch &bb = batches.back();
	DevPtr raw = take(this, raw_bytes, st);

	bb.words = take(this, static_cast<size_t>(nrows) * nwords * sizeof(uint64_t), st);
	GPUOPS_CUDA_TRY(cudaEventRecord(bb.copy_start, st));
	for (int k = 0; k < spec.nkeys; k++)
	{
		size_t w = gpuops_key_raw_width(spec.keys[k].kind);

		if (spec.programs[k])
			continue; /* computed below */
		GPUOPS_CUDA_TRY(cudaMemcpyAsync(static_cast<char *>(raw.p) + voff[k], host + values_off[k],
										static_cast<size_t>(nrows) * w, cudaMemcpyHostToDevice,
										st));
		GPUOPS_CUDA_TRY(cudaMemcpyAsync(static_cast<char *>(raw.p) + noff[k], host + nulls_off[k],
										(nrows + 7) / 8, cudaMemcpyHostToDevice, st));
	}
	for (int c = 0; c < spec.program_ncols; c++)
	{
		GPUOPS_CUDA_TRY(cudaMemcpyAsync(
			static_cast<char *>(raw.p) + in_off + input_words_off(nrows, c),
			host + input_off + input_words_off(stage_rows, c),
			static_cast<size_t>(nrows) * sizeof(uint64_t), cudaMemcpyHostToDevice, st));
		GPUOPS_CUDA_TRY(
			cudaMemcpyAsync(static_cast<char *>(raw.p) + in_off + input_nulls_off(spec, nrows, c),
							host + input_off + input_nulls_off(spec, stage_rows, c), nrows,
							cudaMemcpyHostToDevice, st));
	}
	GPUOPS_CUDA_TRY(cudaEventRecord(bb.copy_end, st));
	rt->release_after(held_buffer, st);
	held_buffer = -1;

	KernelSpec ks = kspec;
	size_t coff_v[GPUOPS_MAX_SORT_KEYS], coff_n[GPUOPS_MAX_SORT_KEYS];

	for (int k = 0; k < spec.nkeys; k++)
	{
		ks.values_off[k] = voff[k];
		ks.nulls_off[k] = noff[k];
	}
	if (has_programs)
	{
		size_t cbytes = computed_layout(spec, nrows, coff_v, coff_n);
		ColumnsView in = input_view(spec, static_cast<const uint8_t *>(raw.p) + in_off, nrows);

		bb.computed = take(this, cbytes, st);
		GPUOPS_CUDA_TRY(cudaMemsetAsync(bb.computed.p, 0, cbytes, st)); /* no row masked */
		for (int k = 0; k < spec.nkeys; k++)
		{
			if (!spec.programs[k])
				continue;
			uint8_t *comp = static_cast<uint8_t *>(bb.computed.p);

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
		ks, static_cast<const uint8_t *>(raw.p), static_cast<const uint8_t *>(bb.computed.p), nrows,
		static_cast<uint64_t *>(bb.words.p));
	GPUOPS_CUDA_CHECK_LAUNCH("normalize");
	GPUOPS_CUDA_TRY(cudaEventRecord(bb.kernel_end, st));
	give_back(this, raw, st);
	rows += nrows;
	stats.rows = rows;
	stats.batches++;
	return GPUOPS_OK;
}

} /* namespace gpusort */
} /* namespace cuda */
} /* namespace gpuops */
