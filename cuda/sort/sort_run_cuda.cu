/*
 * sort_run_cuda.cu
 *    The GPU sort's ordering (sort_cuda.cuh): a run's key words laid out
 *    and sorted one word at a time by CUB's radix sort, the runs cut when
 *    the input exceeds the device budget and merged on the host
 *    (run_merge.hpp), and the ties bitmap of the sorted rows.
 */
#include <cub/device/device_radix_sort.cuh>

#include <cstring>
#include <vector>

#include "run_merge.hpp"
#include "sort_cuda.cuh"

namespace gpuops {
namespace cuda {
namespace gpusort {
namespace {

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
	uint64_t first = w[0];
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
	uint32_t nchunks = (n + 31) / 32;

	for (uint32_t c = blockIdx.x * blockDim.x + threadIdx.x; c < nchunks;
		 c += gridDim.x * blockDim.x)
	{
		uint32_t bits = 0;

		for (uint32_t b = 0; b < 32; b++)
		{
			uint32_t i = c * 32 + b;
			bool same = i > 0 && i < n;

			for (uint32_t j = 0; j < nwords && same; j++)
				same = words[static_cast<size_t>(j) * n + rows[i]] ==
					words[static_cast<size_t>(j) * n + rows[i - 1]];
			if (same)
				bits |= 1u << b;
		}
		ties[c] = bits;
	}
}

} /* namespace */

/*
 * Sorts the current run's batches on stream 0: lays their words out as one
 * [word][row] array and orders the row numbers one word at a time.  Leaves
 * s->words and s->sorted_rows (local row numbers), queued, not waited for.
 */
void
sort_run(CudaSort *s)
{
	cudaStream_t st = s->rt->stream(0);
	uint32_t n = static_cast<uint32_t>(s->rows - s->run_base);

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
		size_t row0 = 0;

		for (size_t bi = s->run_first_batch; bi < s->batches.size(); bi++)
		{
			Batch &b = s->batches[bi];

			GPUOPS_CUDA_TRY(cudaMemcpy2DAsync(static_cast<uint64_t *>(s->words.p) + row0,
											  static_cast<size_t>(n) * sizeof(uint64_t), b.words.p,
											  static_cast<size_t>(b.rows) * sizeof(uint64_t),
											  static_cast<size_t>(b.rows) * sizeof(uint64_t),
											  s->nwords, cudaMemcpyDeviceToDevice, st));
			row0 += b.rows;
			give_back(s, b.words, st);
		}
	}
	for (size_t bi = s->run_first_batch; bi < s->batches.size(); bi++)
		s->batches[bi].words = DevPtr();
	const uint64_t *words = static_cast<const uint64_t *>(s->words.p);

	/* which words differ at all, and in how many low bits */
	DevPtr d_diff = take(s, s->nwords * sizeof(uint64_t), st);

	GPUOPS_CUDA_TRY(cudaMemsetAsync(d_diff.p, 0, s->nwords * sizeof(uint64_t), st));
	for (uint32_t j = 0; j < s->nwords; j++)
	{
		diff_bits_kernel<<<grid_for(n), kThreads, 0, st>>>(
			words + static_cast<size_t>(j) * n, n, static_cast<unsigned long long *>(d_diff.p) + j);
		GPUOPS_CUDA_CHECK_LAUNCH("diff_bits");
	}
	uint64_t *diff = s->rt->pinned_scalar();

	GPUOPS_CUDA_TRY(
		cudaMemcpyAsync(diff, d_diff.p, s->nwords * sizeof(uint64_t), cudaMemcpyDeviceToHost, st));
	s->stats.bytes_from_device += s->nwords * sizeof(uint64_t);
	/* the passes' bit ranges are host-side launch parameters: wait for them */
	::gpuops::cuda::sync_stream(st);
	give_back(s, d_diff, st);
	std::vector<unsigned> bits(s->nwords);

	for (uint32_t j = 0; j < s->nwords; j++)
		bits[j] = diff[j] ? 64 - __builtin_clzll(diff[j]) : 0;

	DevPtr rows = take(s, static_cast<size_t>(n) * sizeof(uint32_t), st);
	DevPtr rows_alt = take(s, static_cast<size_t>(n) * sizeof(uint32_t), st);
	DevPtr keys = take(s, static_cast<size_t>(n) * sizeof(uint64_t), st);
	DevPtr keys_alt = take(s, static_cast<size_t>(n) * sizeof(uint64_t), st);
	size_t temp_bytes = 0;

	GPUOPS_CUDA_TRY(cub::DeviceRadixSort::SortPairs(
		nullptr, temp_bytes, static_cast<uint64_t *>(keys.p), static_cast<uint64_t *>(keys_alt.p),
		static_cast<uint32_t *>(rows.p), static_cast<uint32_t *>(rows_alt.p), n, 0, 64, st));
	DevPtr temp = take(s, temp_bytes, st);

	iota_kernel<<<grid_for(n), kThreads, 0, st>>>(static_cast<uint32_t *>(rows.p), n);
	GPUOPS_CUDA_CHECK_LAUNCH("iota");
	/* least significant word first; every pass is stable */
	for (int j = static_cast<int>(s->nwords) - 1; j >= 0; j--)
	{
		if (bits[j] == 0)
			continue; /* the same in every row: decides nothing */
		gather_kernel<<<grid_for(n), kThreads, 0, st>>>(words + static_cast<size_t>(j) * n,
														static_cast<const uint32_t *>(rows.p), n,
														static_cast<uint64_t *>(keys.p));
		GPUOPS_CUDA_CHECK_LAUNCH("gather");
		GPUOPS_CUDA_TRY(cub::DeviceRadixSort::SortPairs(
			temp.p, temp_bytes, static_cast<uint64_t *>(keys.p),
			static_cast<uint64_t *>(keys_alt.p), static_cast<uint32_t *>(rows.p),
			static_cast<uint32_t *>(rows_alt.p), n, 0, static_cast<int>(bits[j]), st));
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
	uint32_t n = static_cast<uint32_t>(s->rows - s->run_base);
	SortedRun run;

	sort_run(s); /* n > 0: runs are cut only when they hold rows */
	run.rows.resize(n);
	run.words.resize(static_cast<size_t>(n) * s->nwords);
	DevPtr rowmajor = take(s, static_cast<size_t>(n) * s->nwords * sizeof(uint64_t), st);

	rowmajor_kernel<<<grid_for(n), kThreads, 0, st>>>(
		static_cast<const uint64_t *>(s->words.p), s->nwords,
		static_cast<const uint32_t *>(s->sorted_rows.p), n, static_cast<uint64_t *>(rowmajor.p));
	GPUOPS_CUDA_CHECK_LAUNCH("rowmajor");
	s->result_copy_ms += copy_to_host(s, s->sorted_rows.p,
									  static_cast<size_t>(n) * sizeof(uint32_t), run.rows.data());
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

/* The ties bitmap of a one-run sort's sorted rows, 32 rows a word, on the device. */
DevPtr
ties_on_device(CudaSort *s)
{
	cudaStream_t st = s->rt->stream(0);
	uint32_t n = static_cast<uint32_t>(s->rows);
	uint32_t nchunks = (n + 31) / 32;
	DevPtr d_ties = take(s, static_cast<size_t>(nchunks ? nchunks : 1) * sizeof(uint32_t), st);

	ties_kernel<<<grid_for(nchunks), kThreads, 0, st>>>(
		static_cast<const uint64_t *>(s->words.p), s->spec.tie_words,
		static_cast<const uint32_t *>(s->sorted_rows.p), n, static_cast<uint32_t *>(d_ties.p));
	GPUOPS_CUDA_CHECK_LAUNCH("ties");
	return d_ties;
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
	DevPtr d_ties = ties_on_device(this);

	result_copy_ms += copy_to_host(this, d_ties.p, (nrows + 7) / 8, ties);
	give_back(this, d_ties, rt->stream(0));
	return GPUOPS_OK;
}

} /* namespace gpusort */
} /* namespace cuda */
} /* namespace gpuops */
