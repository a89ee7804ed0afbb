/*
 * sort_cpu.cpp
 *    The CPU twin of the GPU key-pointer sort.
 *
 * Same protocol and same algorithm as sort_cuda.cu: staged key columns are
 * normalized into 64-bit key words with the shared transforms
 * (key_normalize.hpp); an LSD radix sort with 8-bit digits then orders the
 * row numbers one word at a time, least significant word first, stably, on
 * only the bits in which that word differs between rows.  Under a memory
 * budget (gpuops.device_memory_limit) it sorts in runs and merges them, as
 * the GPU does.  It serves gpuops.device = cpu (so the whole executor path
 * is tested where there is no GPU) and the fallback when the device fails
 * mid-query.  Computed keys are evaluated by the same interpreter the
 * kernels run (agg_eval.hpp).
 */
#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <vector>

#include "device_common.hpp"
#include "host_radix.hpp"
#include "key_normalize.hpp"
#include "run_merge.hpp"
#include "sort_computed.hpp"

namespace gpuops {
namespace {

using Clock = std::chrono::steady_clock;

struct CpuSort
{
	GpuopsSettings settings;
	GpuopsSortSpec spec;
	uint32_t	nwords = 0;
	std::vector<unsigned char> stage;
	uint32_t	stage_rows = 0;
	size_t		values_off[GPUOPS_MAX_SORT_KEYS];
	size_t		nulls_off[GPUOPS_MAX_SORT_KEYS];
	size_t		input_off = 0;	/* program columns in the staging buffer */
	ComputedValues computed;	/* computed keys' values, per batch */
	std::vector<std::vector<uint64_t>> words;	/* current run: [word][row] */
	uint64_t	rows = 0;		/* all rows submitted */
	uint64_t	run_base = 0;	/* first row of the current run */
	uint64_t	run_rows = 0;	/* rows per run; 0 = one run */
	std::vector<SortedRun> runs;	/* finished runs, when there are several */
	std::vector<uint32_t> order;
	std::vector<uint8_t> merged_ties;
	bool		sorted = false;
	GpuopsStats stats = {};
};

/* Number of low bits in which the words differ from each other. */
unsigned
used_bits(const std::vector<uint64_t> &w)
{
	uint64_t	diff = 0;

	for (uint64_t v : w)
		diff |= v ^ w[0];
	return diff ? 64 - __builtin_clzll(diff) : 0;
}

/*
 * Evaluates the computed keys of the staged batch of nrows rows (the next
 * ones) into a new chunk, as the CUDA kernel does: a row a program stops at
 * is NULL, and the first such row is kept.
 */
ComputedChunk &
eval_computed(CpuSort *s, uint32_t nrows)
{
	size_t		voff[GPUOPS_MAX_SORT_KEYS],
				noff[GPUOPS_MAX_SORT_KEYS];
	ColumnsView in = input_view(s->spec, s->stage.data() + s->input_off, s->stage_rows);
	ComputedChunk ch;

	s->computed.check_next(s->rows);
	ch.first = s->rows;
	ch.rows = nrows;
	ch.bytes.assign(computed_layout(s->spec, nrows, voff, noff), 0);
	for (int k = 0; k < s->spec.nkeys; k++)
	{
		const GpuopsExprProgram *p = s->spec.programs[k];
		GpuopsKeyKind kind = s->spec.keys[k].kind;
		uint32_t	w = gpuops_key_raw_width(kind);

		if (!p)
			continue;
		for (uint32_t i = 0; i < nrows; i++)
		{
			bool		isnull = true;

			if (!agg_eval_row(p, in, i, kind, ch.bytes.data() + voff[k] + static_cast<size_t>(i) * w,
							  &isnull))
			{
				s->computed.first_stop = std::min<uint64_t>(s->computed.first_stop, s->rows + i);
				isnull = true;
			}
			if (isnull)
				ch.bytes[noff[k] + i / 8] |= static_cast<uint8_t>(1 << (i & 7));
		}
	}
	s->computed.chunks.push_back(std::move(ch));
	return s->computed.chunks.back();
}

/*
 * Orders the current run's rows (local numbers) by its key words: least
 * significant word first, every pass stable.
 */
void
sort_current_run(CpuSort *s, std::vector<uint32_t> &order)
{
	size_t		n = s->rows - s->run_base;
	std::vector<uint64_t> keys(n);

	order.resize(n);
	for (size_t i = 0; i < n; i++)
		order[i] = static_cast<uint32_t>(i);
	for (int j = static_cast<int>(s->nwords) - 1; j >= 0; j--)
	{
		unsigned	bits = n ? used_bits(s->words[j]) : 0;

		if (bits == 0)
			continue;			/* the same in every row: decides nothing */
		check_interrupt();
		for (size_t i = 0; i < n; i++)
			keys[i] = s->words[j][order[i]];
		radix_sort_pairs(keys, order, bits);
		s->stats.sort_passes++;
		s->stats.sort_bits += bits;
	}
}

/* Sorts the current run and keeps it, with its words, for the merge. */
void
cut_run(CpuSort *s)
{
	std::vector<uint32_t> local;
	SortedRun	run;
	size_t		n = s->rows - s->run_base;

	sort_current_run(s, local);
	run.rows.resize(n);
	run.words.resize(n * s->nwords);
	for (size_t i = 0; i < n; i++)
	{
		check_interrupt_every(i);
		run.rows[i] = static_cast<uint32_t>(s->run_base + local[i]);
		for (uint32_t j = 0; j < s->nwords; j++)
			run.words[i * s->nwords + j] = s->words[j][local[i]];
	}
	s->runs.push_back(std::move(run));
	s->stats.runs++;
	for (auto &w : s->words)
		std::vector<uint64_t>().swap(w);
	s->run_base = s->rows;
}

GpuopsStatus
cpu_probe(GpuopsDeviceInfo *info) noexcept
{
	memset(info, 0, sizeof(*info));
	snprintf(info->name, sizeof(info->name), "host CPU");
	snprintf(info->reason, sizeof(info->reason), "CPU backend");
	return GPUOPS_OK;
}

GpuopsStatus
cpu_sort_begin(const GpuopsSettings *settings, const GpuopsSortSpec *spec,
			   GpuopsSort **out) noexcept
{
	*out = nullptr;
	return guarded([&]() {
		maybe_inject(GPUOPS_FAULT_NO_DEVICE, settings->fault);
		if (spec->nkeys < 1 || spec->nkeys > GPUOPS_MAX_SORT_KEYS)
			fail(GPUOPS_ERR_INTERNAL, "bad number of sort keys: %d", spec->nkeys);
		auto		s = std::make_unique<CpuSort>();

		s->settings = *settings;
		s->spec = *spec;
		s->nwords = spec_words(*spec);
		s->words.resize(s->nwords);
		check_programs(*spec);
		s->stage_rows = stage_capacity(*spec, settings->batch_bytes);
		if (s->stage_rows == 0)
			fail(GPUOPS_ERR_INTERNAL, "batch size too small for the sort key");
		s->run_rows = run_rows_for_budget(settings->device_memory_limit /
										  (settings->device_share > 1 ? settings->device_share : 1),
										  s->nwords);
		if (s->run_rows && s->run_rows < s->stage_rows)
			s->stage_rows = static_cast<uint32_t>(s->run_rows & ~uint64_t(7));
		s->input_off = stage_layout(*spec, s->stage_rows, s->values_off, s->nulls_off);
		s->stage.resize(s->input_off + input_bytes(*spec, s->stage_rows));
		s->stats.key_words = s->nwords;
		*out = reinterpret_cast<GpuopsSort *>(s.release());
		return GPUOPS_OK;
	});
}

GpuopsStatus
cpu_sort_stage(GpuopsSort *sort, GpuopsStageBuffer *buf) noexcept
{
	auto	   *s = reinterpret_cast<CpuSort *>(sort);

	for (int k = 0; k < s->spec.nkeys; k++)
	{
		buf->values[k] = s->stage.data() + s->values_off[k];
		buf->nulls[k] = s->stage.data() + s->nulls_off[k];
	}
	for (int c = 0; c < s->spec.program_ncols; c++)
	{
		buf->input_words[c] = reinterpret_cast<uint64_t *>(
			s->stage.data() + s->input_off + input_words_off(s->stage_rows, c));
		buf->input_nulls[c] = s->stage.data() + s->input_off +
			input_nulls_off(s->spec, s->stage_rows, c);
	}
	buf->capacity_rows = s->stage_rows;
	return GPUOPS_OK;
}

GpuopsStatus
cpu_sort_submit(GpuopsSort *sort, uint32_t nrows) noexcept
{
	auto	   *s = reinterpret_cast<CpuSort *>(sort);

	return guarded([&]() {
		if (nrows > s->stage_rows)
			fail(GPUOPS_ERR_INTERNAL, "batch of %u rows exceeds its buffer", nrows);
		if (s->stats.batches == 0)
			maybe_inject(GPUOPS_FAULT_OUT_OF_MEMORY, s->settings.fault);
		if (s->rows + nrows > UINT32_MAX)
			fail(GPUOPS_ERR_UNSUPPORTED, "more than 2^32-1 rows in one sort");
		auto		t0 = Clock::now();
		uint32_t	j = 0;

		/* a new run when this batch would take the current one over budget */
		if (s->run_rows && s->rows > s->run_base && s->rows - s->run_base + nrows > s->run_rows)
			cut_run(s);
		const ComputedChunk *comp = sort_has_programs(s->spec) ? &eval_computed(s, nrows) : nullptr;
		size_t		coff_v[GPUOPS_MAX_SORT_KEYS],
					coff_n[GPUOPS_MAX_SORT_KEYS];

		if (comp)
			computed_layout(s->spec, nrows, coff_v, coff_n);
		for (int k = 0; k < s->spec.nkeys; k++)
		{
			const GpuopsSortKey &key = s->spec.keys[k];
			const uint8_t *vals = s->spec.programs[k] ? comp->bytes.data() + coff_v[k]
				: s->stage.data() + s->values_off[k];
			const uint8_t *nulls = s->spec.programs[k] ? comp->bytes.data() + coff_n[k]
				: s->stage.data() + s->nulls_off[k];
			uint32_t	width = gpuops_key_raw_width(key.kind);
			uint32_t	nv = gpuops_key_value_words(key.kind);
			std::vector<uint64_t> &nw = s->words[j];

			for (uint32_t i = 0; i < nrows; i++)
			{
				bool		isnull = (nulls[i >> 3] >> (i & 7)) & 1;
				uint64_t	w[2] = {0, 0};

				nw.push_back(isnull == (key.nulls_first != 0) ? 0 : 1);
				if (!isnull)
				{
					value_words(key.kind, vals + static_cast<size_t>(i) * width, w);
					if (key.descending)
						w[0] = ~w[0], w[1] = ~w[1];
				}
				for (uint32_t v = 0; v < nv; v++)
					s->words[j + 1 + v].push_back(w[v]);
			}
			j += 1 + nv;
		}
		s->rows += nrows;
		s->stats.rows = s->rows;
		s->stats.batches++;
		s->stats.kernel_ms += ms_since(t0);
		return GPUOPS_OK;
	});
}

GpuopsStatus
cpu_sort_finish(GpuopsSort *sort) noexcept
{
	auto	   *s = reinterpret_cast<CpuSort *>(sort);

	return guarded([&]() {
		maybe_inject(GPUOPS_FAULT_KERNEL_ERROR, s->settings.fault);
		auto		t0 = Clock::now();

		if (s->runs.empty())
			sort_current_run(s, s->order);	/* one run: the order is final */
		else
		{
			if (s->rows > s->run_base)
				cut_run(s);
			s->order.resize(s->rows);
			if (s->spec.tie_words)
				s->merged_ties.assign((s->rows + 7) / 8, 0);
			merge_runs(s->runs, s->nwords, s->spec.tie_words, s->order.data(),
					   s->spec.tie_words ? s->merged_ties.data() : nullptr);
			std::vector<SortedRun>().swap(s->runs);
		}
		s->stats.runs = std::max<uint32_t>(1, s->stats.runs);
		if (s->spec.tie_words == 0)
			std::vector<std::vector<uint64_t>>().swap(s->words);
		s->sorted = true;
		s->stats.kernel_ms += ms_since(t0);
		return GPUOPS_OK;
	});
}

GpuopsStatus
cpu_sort_poll(GpuopsSort *sort) noexcept
{
	auto	   *s = reinterpret_cast<CpuSort *>(sort);

	if (!s->sorted)
	{
		set_last_error("sort polled before it was finished");
		return GPUOPS_ERR_INTERNAL;
	}
	return GPUOPS_OK;
}

GpuopsStatus
cpu_sort_result(GpuopsSort *sort, uint32_t *order, uint64_t nrows) noexcept
{
	auto	   *s = reinterpret_cast<CpuSort *>(sort);

	if (!s->sorted || nrows != s->order.size())
	{
		set_last_error("sort result asked for %llu rows, sort holds %zu",
					   (unsigned long long) nrows, s->order.size());
		return GPUOPS_ERR_INTERNAL;
	}
	if (nrows > 0)
		memcpy(order, s->order.data(), nrows * sizeof(uint32_t));
	return GPUOPS_OK;
}

GpuopsStatus
cpu_sort_ties(GpuopsSort *sort, uint8_t *ties, uint64_t nrows) noexcept
{
	auto	   *s = reinterpret_cast<CpuSort *>(sort);

	if (!s->sorted || s->spec.tie_words == 0 || s->spec.tie_words > s->nwords ||
		nrows != s->order.size())
	{
		set_last_error("sort ties asked for without tie_words or after the wrong sort");
		return GPUOPS_ERR_INTERNAL;
	}
	if (!s->merged_ties.empty())
	{
		memcpy(ties, s->merged_ties.data(), (nrows + 7) / 8);
		return GPUOPS_OK;
	}
	return guarded([&]() {
		memset(ties, 0, (nrows + 7) / 8);
		for (uint64_t i = 1; i < nrows; i++)
		{
			bool		same = true;

			check_interrupt_every(i);
			for (uint32_t j = 0; j < s->spec.tie_words && same; j++)
				same = s->words[j][s->order[i]] == s->words[j][s->order[i - 1]];
			if (same)
				ties[i >> 3] |= static_cast<uint8_t>(1 << (i & 7));
		}
		return GPUOPS_OK;
	});
}

GpuopsStatus
cpu_sort_recheck(GpuopsSort *sort, uint64_t *row) noexcept
{
	auto	   *s = reinterpret_cast<CpuSort *>(sort);

	*row = s->computed.first_stop;
	return GPUOPS_OK;
}

GpuopsStatus
cpu_sort_values(GpuopsSort *sort, int key, uint64_t first, uint32_t n, void *values,
				uint8_t *nulls) noexcept
{
	auto	   *s = reinterpret_cast<CpuSort *>(sort);

	return guarded([&]() {
		s->computed.copy_out(s->spec, key, first, n, values, nulls);
		return GPUOPS_OK;
	});
}

void
cpu_sort_stats(const GpuopsSort *sort, GpuopsStats *stats) noexcept
{
	*stats = reinterpret_cast<const CpuSort *>(sort)->stats;
}

void
cpu_sort_end(GpuopsSort *sort) noexcept
{
	delete reinterpret_cast<CpuSort *>(sort);
}

const GpuopsBackend cpu_backend = {
	"cpu",
	cpu_probe,
	cpu_sort_begin,
	cpu_sort_stage,
	cpu_sort_submit,
	cpu_sort_finish,
	cpu_sort_poll,
	cpu_sort_result,
	cpu_sort_ties,
	cpu_sort_stats,
	cpu_sort_end,
	cpu_sort_recheck,
	cpu_sort_values,
};

}								/* namespace */
}								/* namespace gpuops */

extern "C" const GpuopsBackend *
gpuops_cpu_backend(void) noexcept
{
	return &gpuops::cpu_backend;
}
