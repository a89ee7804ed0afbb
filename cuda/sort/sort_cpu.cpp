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

#include "backend_tables.hpp"
#include "device_common.hpp"
#include "host_radix.hpp"
#include "key_normalize.hpp"
#include "park_chunk.hpp"
#include "run_merge.hpp"
#include "sort_computed.hpp"

namespace gpuops {
namespace {

using Clock = std::chrono::steady_clock;

struct CpuSort
{
	GpuopsSettings settings;
	GpuopsSortSpec spec;
	uint32_t nwords = 0;
	std::vector<unsigned char> stage;
	uint32_t stage_rows = 0;
	size_t values_off[GPUOPS_MAX_SORT_KEYS];
	size_t nulls_off[GPUOPS_MAX_SORT_KEYS];
	size_t input_off = 0;					  /* program columns in the staging buffer */
	ComputedValues computed;				  /* computed keys' values, per batch */
	std::vector<std::vector<uint64_t>> words; /* current run: [word][row] */
	uint64_t rows = 0;						  /* all rows submitted */
	uint64_t run_base = 0;					  /* first row of the current run */
	uint64_t run_rows = 0;					  /* rows per run; 0 = one run */
	std::vector<SortedRun> runs;			  /* finished runs, when there are several */
	std::vector<uint32_t> order;
	std::vector<uint8_t> merged_ties;
	bool sorted = false;
	GpuopsStats stats = {};

	/*
	 * Parked rows, as the GPU keeps them (sort_park_cuda.cu): blocks in
	 * memory, an address per row; after the sort the output offsets, the
	 * ties as 32-row words, and one chunk laid out at a time.
	 */
	std::vector<std::vector<uint8_t>> park_blocks;
	std::vector<uint8_t> park_stage;
	std::vector<const uint8_t *> park_addr;
	uint64_t park_bytes = 0;
	bool park_ready = false;
	std::vector<uint64_t> park_off;
	std::vector<uint32_t> park_ties;
	std::vector<uint8_t> park_chunk;
	std::vector<uint32_t> park_chunk_ties;
	uint64_t park_pos = 0;
	uint64_t park_cap = 0;

	/* the entry points (backend_tables.hpp) */
	static GpuopsStatus probe(GpuopsDeviceInfo *info);
	CpuSort(const GpuopsSettings *settings, const GpuopsSortSpec *spec);
	GpuopsStatus sort_stage(GpuopsStageBuffer *buf);
	GpuopsStatus sort_submit(uint32_t nrows);
	GpuopsStatus sort_finish();
	GpuopsStatus sort_poll();
	GpuopsStatus sort_result(uint32_t *order_out, uint64_t nrows);
	GpuopsStatus sort_ties(uint8_t *ties, uint64_t nrows);
	void sort_stats(GpuopsStats *out) const;
	GpuopsStatus sort_recheck(uint64_t *row);
	GpuopsStatus sort_values(int key, uint64_t first, uint32_t n, void *values, uint8_t *nulls);
	GpuopsStatus sort_park_room(uint64_t bytes, uint32_t nrows, int *fits);
	GpuopsStatus sort_park_stage(GpuopsParkBuffer *buf);
	GpuopsStatus sort_park_submit(uint64_t bytes, uint32_t nrows);
	GpuopsStatus sort_park_next(GpuopsParkChunk *chunk);
	GpuopsStatus sort_park_rewind();
};

/* Number of low bits in which the words differ from each other. */
unsigned
used_bits(const std::vector<uint64_t> &w)
{
	uint64_t diff = 0;

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
	size_t voff[GPUOPS_MAX_SORT_KEYS], noff[GPUOPS_MAX_SORT_KEYS];
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
		uint32_t w = gpuops_key_raw_width(kind);

		if (!p)
			continue;
		for (uint32_t i = 0; i < nrows; i++)
		{
			bool isnull = true;

			if (!agg_eval_row(p, in, i, kind,
							  ch.bytes.data() + voff[k] + static_cast<size_t>(i) * w, &isnull))
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
	size_t n = s->rows - s->run_base;
	std::vector<uint64_t> keys(n);

	order.resize(n);
	for (size_t i = 0; i < n; i++)
		order[i] = static_cast<uint32_t>(i);
	for (int j = static_cast<int>(s->nwords) - 1; j >= 0; j--)
	{
		unsigned bits = n ? used_bits(s->words[j]) : 0;

		if (bits == 0)
			continue; /* the same in every row: decides nothing */
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
	SortedRun run;
	size_t n = s->rows - s->run_base;

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
CpuSort::probe(GpuopsDeviceInfo *info)
{
	memset(info, 0, sizeof(*info));
	snprintf(info->name, sizeof(info->name), "host CPU");
	snprintf(info->reason, sizeof(info->reason), "CPU backend");
	return GPUOPS_OK;
}

CpuSort::CpuSort(const GpuopsSettings *settings, const GpuopsSortSpec *spec)
{
	maybe_inject(GPUOPS_FAULT_NO_DEVICE, settings->fault);
	if (spec->nkeys < 1 || spec->nkeys > GPUOPS_MAX_SORT_KEYS)
		fail(GPUOPS_ERR_INTERNAL, "bad number of sort keys: %d", spec->nkeys);
	this->settings = *settings;
	this->spec = *spec;
	nwords = spec_words(*spec);
	words.resize(nwords);
	check_programs(*spec);
	stage_rows = stage_capacity(*spec, settings->batch_bytes);
	if (stage_rows == 0)
		fail(GPUOPS_ERR_INTERNAL, "batch size too small for the sort key");
	run_rows = run_rows_for_budget(settings->device_memory_limit /
									   (settings->device_share > 1 ? settings->device_share : 1),
								   nwords);
	if (run_rows && run_rows < stage_rows)
		stage_rows = static_cast<uint32_t>(run_rows & ~uint64_t(7));
	input_off = stage_layout(*spec, stage_rows, values_off, nulls_off);
	stage.resize(input_off + input_bytes(*spec, stage_rows));
	stats.key_words = nwords;
}

GpuopsStatus
CpuSort::sort_stage(GpuopsStageBuffer *buf)
{
	for (int k = 0; k < spec.nkeys; k++)
	{
		buf->values[k] = stage.data() + values_off[k];
		buf->nulls[k] = stage.data() + nulls_off[k];
	}
	for (int c = 0; c < spec.program_ncols; c++)
	{
		buf->input_words[c] = reinterpret_cast<uint64_t *>(stage.data() + input_off +
														   input_words_off(stage_rows, c));
		buf->input_nulls[c] = stage.data() + input_off + input_nulls_off(spec, stage_rows, c);
	}
	buf->capacity_rows = stage_rows;
	return GPUOPS_OK;
}

GpuopsStatus
CpuSort::sort_submit(uint32_t nrows)
{
	if (nrows > stage_rows)
		fail(GPUOPS_ERR_INTERNAL, "batch of %u rows exceeds its buffer", nrows);
	if (stats.batches == 0)
		maybe_inject(GPUOPS_FAULT_OUT_OF_MEMORY, settings.fault);
	if (rows + nrows > UINT32_MAX)
		fail(GPUOPS_ERR_UNSUPPORTED, "more than 2^32-1 rows in one sort");
	auto t0 = Clock::now();
	uint32_t j = 0;

	/* a new run when this batch would take the current one over budget */
	if (run_rows && rows > run_base && rows - run_base + nrows > run_rows)
		cut_run(this);
	const ComputedChunk *comp = sort_has_programs(spec) ? &eval_computed(this, nrows) : nullptr;
	size_t coff_v[GPUOPS_MAX_SORT_KEYS], coff_n[GPUOPS_MAX_SORT_KEYS];

	if (comp)
		computed_layout(spec, nrows, coff_v, coff_n);
	for (int k = 0; k < spec.nkeys; k++)
	{
		const GpuopsSortKey &key = spec.keys[k];
		const uint8_t *vals = spec.programs[k] ? comp->bytes.data() + coff_v[k]
											   : stage.data() + values_off[k];
		const uint8_t *nulls = spec.programs[k] ? comp->bytes.data() + coff_n[k]
												: stage.data() + nulls_off[k];
		uint32_t width = gpuops_key_raw_width(key.kind);
		uint32_t nv = gpuops_key_value_words(key.kind);
		std::vector<uint64_t> &nw = words[j];

		for (uint32_t i = 0; i < nrows; i++)
		{
			bool isnull = (nulls[i >> 3] >> (i & 7)) & 1;
			uint64_t w[2] = {0, 0};

			nw.push_back(isnull == (key.nulls_first != 0) ? 0 : 1);
			if (!isnull)
			{
				value_words(key.kind, vals + static_cast<size_t>(i) * width, w);
				if (key.descending)
					w[0] = ~w[0], w[1] = ~w[1];
			}
			for (uint32_t v = 0; v < nv; v++)
				words[j + 1 + v].push_back(w[v]);
		}
		j += 1 + nv;
	}
	rows += nrows;
	stats.rows = rows;
	stats.batches++;
	stats.kernel_ms += ms_since(t0);
	return GPUOPS_OK;
}

GpuopsStatus
CpuSort::sort_finish()
{
	maybe_inject(GPUOPS_FAULT_KERNEL_ERROR, settings.fault);
	auto t0 = Clock::now();

	if (runs.empty())
		sort_current_run(this, order); /* one run: the order is final */
	else
	{
		if (rows > run_base)
			cut_run(this);
		order.resize(rows);
		if (spec.tie_words)
			merged_ties.assign((rows + 7) / 8, 0);
		merge_runs(runs, nwords, spec.tie_words, order.data(),
				   spec.tie_words ? merged_ties.data() : nullptr);
		std::vector<SortedRun>().swap(runs);
	}
	stats.runs = std::max<uint32_t>(1, stats.runs);
	if (spec.tie_words == 0)
		std::vector<std::vector<uint64_t>>().swap(words);
	sorted = true;
	stats.kernel_ms += ms_since(t0);
	return GPUOPS_OK;
}

GpuopsStatus
CpuSort::sort_poll()
{
	if (!sorted)
	{
		set_last_error("sort polled before it was finished");
		return GPUOPS_ERR_INTERNAL;
	}
	return GPUOPS_OK;
}

GpuopsStatus
CpuSort::sort_result(uint32_t *order_out, uint64_t nrows)
{
	if (!sorted || nrows != order.size())
	{
		set_last_error("sort result asked for %llu rows, sort holds %zu",
					   (unsigned long long) nrows, order.size());
		return GPUOPS_ERR_INTERNAL;
	}
	if (nrows > 0)
		memcpy(order_out, order.data(), nrows * sizeof(uint32_t));
	stats.bytes_from_device += nrows * sizeof(uint32_t); /* the row numbers (gpuops_device.h) */
	return GPUOPS_OK;
}

GpuopsStatus
CpuSort::sort_ties(uint8_t *ties, uint64_t nrows)
{
	if (!sorted || spec.tie_words == 0 || spec.tie_words > nwords || nrows != order.size())
	{
		set_last_error("sort ties asked for without tie_words or after the wrong sort");
		return GPUOPS_ERR_INTERNAL;
	}
	stats.bytes_from_device += (nrows + 7) / 8; /* the tie bits (gpuops_device.h) */
	if (!merged_ties.empty())
	{
		memcpy(ties, merged_ties.data(), (nrows + 7) / 8);
		return GPUOPS_OK;
	}
	memset(ties, 0, (nrows + 7) / 8);
	for (uint64_t i = 1; i < nrows; i++)
	{
		bool same = true;

		check_interrupt_every(i);
		for (uint32_t j = 0; j < spec.tie_words && same; j++)
			same = words[j][order[i]] == words[j][order[i - 1]];
		if (same)
			ties[i >> 3] |= static_cast<uint8_t>(1 << (i & 7));
	}
	return GPUOPS_OK;
}

GpuopsStatus
CpuSort::sort_recheck(uint64_t *row)
{
	*row = computed.first_stop;
	return GPUOPS_OK;
}

GpuopsStatus
CpuSort::sort_values(int key, uint64_t first, uint32_t n, void *values, uint8_t *nulls)
{
	computed.copy_out(spec, key, first, n, values, nulls);
	return GPUOPS_OK;
}

/* a park buffer's split, as on the GPU: rows, then one offset per 32 bytes of them */
uint32_t
park_capacity_rows(size_t buffer_bytes)
{
	return static_cast<uint32_t>(buffer_bytes / 36) & ~7u;
}

GpuopsStatus
CpuSort::sort_park_room(uint64_t bytes, uint32_t nrows, int *fits)
{
	uint64_t budget = settings.device_memory_limit /
		(settings.device_share > 1 ? settings.device_share : 1);

	*fits = park_fits(budget, nwords, park_bytes + bytes, park_addr.size() + nrows);
	return GPUOPS_OK;
}

GpuopsStatus
CpuSort::sort_park_stage(GpuopsParkBuffer *buf)
{
	uint32_t cap_rows = park_capacity_rows(settings.batch_bytes);

	park_stage.resize(settings.batch_bytes);
	buf->capacity = settings.batch_bytes - static_cast<size_t>(cap_rows) * sizeof(uint32_t);
	buf->data = park_stage.data();
	buf->offsets = reinterpret_cast<uint32_t *>(park_stage.data() + buf->capacity);
	buf->capacity_rows = cap_rows;
	return GPUOPS_OK;
}

GpuopsStatus
CpuSort::sort_park_submit(uint64_t bytes, uint32_t nrows)
{
	uint32_t cap_rows = park_capacity_rows(settings.batch_bytes);
	size_t capacity = settings.batch_bytes - static_cast<size_t>(cap_rows) * sizeof(uint32_t);

	if (sorted || park_stage.size() != settings.batch_bytes)
		fail(GPUOPS_ERR_INTERNAL, "rows parked without a park buffer");
	if (bytes > capacity || nrows > cap_rows || (bytes & 7) != 0)
		fail(GPUOPS_ERR_INTERNAL, "park buffer overfilled: %llu bytes, %u rows",
			 (unsigned long long) bytes, nrows);
	const uint32_t *offsets = reinterpret_cast<const uint32_t *>(park_stage.data() + capacity);

	/* the buffer becomes the block (its memory does not move), a new one is staged */
	park_blocks.push_back(std::move(park_stage));
	park_stage = std::vector<uint8_t>();
	for (uint32_t i = 0; i < nrows; i++)
		park_addr.push_back(park_blocks.back().data() + offsets[i]);
	park_bytes += bytes;
	return GPUOPS_OK;
}

GpuopsStatus
CpuSort::sort_park_next(GpuopsParkChunk *chunk)
{
	uint64_t n = order.size();

	memset(chunk, 0, sizeof(*chunk));
	if (!sorted)
		fail(GPUOPS_ERR_INTERNAL, "parked rows asked for before the sort finished");
	if (!park_ready)
	{
		if (park_addr.size() != n)
			fail(GPUOPS_ERR_INTERNAL, "%zu rows parked for %llu sorted", park_addr.size(),
				 (unsigned long long) n);
		park_cap = (settings.batch_bytes - settings.batch_bytes / 64 - 64) & ~uint64_t(7);
		park_off.assign(n + 1, 0);
		for (uint64_t i = 0; i < n; i++)
		{
			uint32_t len;

			memcpy(&len, park_addr[order[i]], sizeof(len));
			park_off[i + 1] = park_off[i] + park_row_bytes(len);
		}
		if (spec.tie_words && n > 0)
		{
			uint64_t counted = stats.bytes_from_device; /* the chunks count their bits */

			park_ties.assign((n + 31) / 32, 0);
			GpuopsStatus rc = sort_ties(reinterpret_cast<uint8_t *>(park_ties.data()), n);

			stats.bytes_from_device = counted;
			if (rc != GPUOPS_OK)
				return rc;
		}
		park_ready = true;
	}
	if (park_pos >= n)
		return GPUOPS_OK;
	const uint32_t *ties = park_ties.empty() ? nullptr : park_ties.data();
	uint64_t s = park_pos;
	uint64_t e = park_chunk_end(park_off.data(), n, s, park_cap, ties);

	park_chunk.resize(park_off[e] - park_off[s]);
	for (uint64_t i = s; i < e; i++)
	{
		check_interrupt_every(i);
		memcpy(park_chunk.data() + (park_off[i] - park_off[s]), park_addr[order[i]],
			   park_off[i + 1] - park_off[i]);
	}
	if (ties)
	{
		park_chunk_ties.assign(ties + s / 32, ties + (e - 1) / 32 + 1);
		stats.bytes_from_device += park_chunk_ties.size() * sizeof(uint32_t);
		chunk->ties = park_chunk_ties.data();
		chunk->ties_bit0 = static_cast<uint32_t>(s & 31);
	}
	chunk->data = park_chunk.data();
	chunk->bytes = park_chunk.size();
	stats.bytes_from_device += park_chunk.size(); /* the rows handed back (gpuops_device.h) */
	chunk->rows = static_cast<uint32_t>(e - s);
	park_pos = e;
	return GPUOPS_OK;
}

GpuopsStatus
CpuSort::sort_park_rewind()
{
	park_pos = 0;
	return GPUOPS_OK;
}

void
CpuSort::sort_stats(GpuopsStats *out) const
{
	*out = stats;
}

constexpr GpuopsBackend cpu_backend = shell::make_sort_backend<CpuSort>("cpu");

} /* namespace */
} /* namespace gpuops */

extern "C" const GpuopsBackend *
gpuops_cpu_backend(void) noexcept
{
	return &gpuops::cpu_backend;
}
