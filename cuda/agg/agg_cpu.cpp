/*
 * agg_cpu.cpp
 *    The CPU twin of grouped aggregation (gpuops_device.h): the same packed
 *    keys, the same stable order of (key, row) and the same states as the
 *    CUDA backend, on the host.  Serves gpuops.device = cpu and the fallback.
 *    Each group is folded left to right, in row order.
 *
 *    The hash strategy takes only states that are exact in any order, so
 *    its results are the sort's; this twin sorts always and reports what
 *    the device's hash table would have done (hashed, or more groups than
 *    its capacity), which depends only on the group count.
 */
#include <algorithm>
#include <chrono>
#include <memory>
#include <numeric>
#include <vector>

#include "agg_common.hpp"
#include "agg_eval.hpp"
#include "backend_tables.hpp"
#include "device_common.hpp"

namespace gpuops {
namespace {

struct CpuAgg
{
	GpuopsSettings settings;
	GpuopsAggSpec spec;
	uint64_t nrows = 0; /* announced by begin */
	uint64_t added = 0;
	int nwords = 0;							  /* sort words: group key, then sub-key */
	int gwords = 0;							  /* group key words */
	std::vector<uint64_t> words;			  /* row-major packed keys */
	std::vector<std::vector<uint8_t>> values; /* per aggregate, raw */
	std::vector<std::vector<uint8_t>> nulls;  /* per aggregate, one byte per row */
	std::vector<uint64_t> group_rows;
	std::vector<GpuopsAggResult> results;
	GpuopsAggStats stats = {};
	HostColumns inputs; /* the current batch's program columns */

	/* the entry points (backend_tables.hpp) */
	static GpuopsStatus agg_capacity(const GpuopsSettings *settings, const GpuopsAggSpec *spec,
									 uint64_t *rows);
	CpuAgg(const GpuopsSettings *settings, const GpuopsAggSpec *spec, uint64_t nrows);
	GpuopsStatus agg_add(const GpuopsAggBatch *b);
	GpuopsStatus agg_finish(uint64_t *ngroups);
	GpuopsStatus agg_groups(const uint64_t **group_rows_out, const GpuopsAggResult **results_out);
	void agg_stats(GpuopsAggStats *out) const;
};

/* the budget the CUDA backend would have (0: unlimited) */
uint64_t
budget(const GpuopsSettings &s)
{
	return s.device_memory_limit / (s.device_share ? s.device_share : 1);
}

GpuopsStatus
CpuAgg::agg_capacity(const GpuopsSettings *settings, const GpuopsAggSpec *spec, uint64_t *rows)
{
	*rows = agg_rows_for_budget(budget(*settings), *spec);
	return GPUOPS_OK;
}

CpuAgg::CpuAgg(const GpuopsSettings *settings, const GpuopsAggSpec *spec, uint64_t nrows)
{
	maybe_inject(GPUOPS_FAULT_NO_DEVICE, settings->fault);
	maybe_inject(GPUOPS_FAULT_OUT_OF_MEMORY, settings->fault);
	if (spec->nkeys < 0 || spec->nkeys > GPUOPS_MAX_SORT_KEYS || spec->naggs < 0 ||
		spec->naggs > GPUOPS_MAX_AGGS)
		fail(GPUOPS_ERR_INTERNAL, "bad aggregation spec");
	/* what the device could not hold: the caller must have split it */
	if (nrows > agg_rows_for_budget(budget(*settings), *spec))
		fail(GPUOPS_ERR_INTERNAL, "aggregation of %llu rows over the device budget's %llu",
			 (unsigned long long) nrows,
			 (unsigned long long) agg_rows_for_budget(budget(*settings), *spec));
	this->settings = *settings;
	this->spec = *spec;
	this->nrows = nrows;
	stats.recheck_row = kAggNoRecheck;
	for (int g = 0; g < spec->naggs; g++)
	{
		const char *bad = spec->programs[g]
			? expr_validate(spec->programs[g], spec->program_ncols > 0 ? spec->program_ncols : 1, 0)
			: nullptr;

		if (bad)
			fail(GPUOPS_ERR_INTERNAL, "bad device program: %s", bad);
	}
	if (spec->order_agg >= spec->naggs)
		fail(GPUOPS_ERR_INTERNAL, "bad aggregation spec");
	nwords = agg_sort_words(*spec);
	gwords = agg_key_words(*spec);
	if (nwords > kAggMaxKeyWords)
		fail(GPUOPS_ERR_UNSUPPORTED, "group key of %d words", nwords);
	words.assign(nrows * nwords, 0);
	values.resize(spec->naggs);
	nulls.resize(spec->naggs);
	for (int g = 0; g < spec->naggs; g++)
	{
		if (spec->kinds[g] != GPUOPS_AGG_COUNT)
			values[g].resize(nrows * gpuops_key_raw_width(spec->value_kinds[g]));
		nulls[g].resize(nrows);
	}
}

GpuopsStatus
CpuAgg::agg_add(const GpuopsAggBatch *b)
{
	const uint8_t *keys[GPUOPS_MAX_SORT_KEYS];
	auto t0 = std::chrono::steady_clock::now();

	if (added + b->nrows > nrows || added % 8 != 0)
		fail(GPUOPS_ERR_INTERNAL, "aggregation batch of %u rows after %llu of %llu", b->nrows,
			 (unsigned long long) added, (unsigned long long) nrows);
	for (int k = 0; k < spec.nkeys; k++)
		keys[k] = static_cast<const uint8_t *>(b->keys[k]);
	for (uint32_t i = 0; i < b->nrows; i++)
	{
		uint64_t *w = &words[(added + i) * nwords];

		agg_pack_key(spec.keys, spec.nkeys, keys, b->key_nulls, i, w, gwords);
		if (spec.order_agg >= 0)
		{
			int o = spec.order_agg;
			GpuopsKeyKind kind = spec.value_kinds[o];

			agg_pack_order(kind, spec.order_desc != 0,
						   agg_null(b->value_nulls[o], i)
							   ? nullptr
							   : static_cast<const uint8_t *>(b->values[o]) +
								   i * gpuops_key_raw_width(kind),
						   w + gwords);
		}
	}
	if (spec.program_ncols > 0)
		inputs.load(&b->inputs, spec.program_ncols);
	for (int g = 0; g < spec.naggs; g++)
	{
		size_t w = gpuops_key_raw_width(spec.value_kinds[g]);

		if (spec.programs[g])
			continue;
		if (spec.kinds[g] != GPUOPS_AGG_COUNT)
			memcpy(&values[g][added * w], b->values[g], b->nrows * w);
		for (uint32_t i = 0; i < b->nrows; i++)
			nulls[g][added + i] = agg_null(b->value_nulls[g], i);
	}
	for (int g = 0; g < spec.naggs; g++)
	{
		size_t w = gpuops_key_raw_width(spec.value_kinds[g]);
		ColumnsView in = inputs.view();

		if (!spec.programs[g])
			continue;
		for (uint32_t i = 0; i < b->nrows; i++)
		{
			uint64_t r = added + i;
			bool isnull = true;

			if (!agg_null(b->value_nulls[g], i) &&
				!agg_eval_row(spec.programs[g], in, i, spec.value_kinds[g], &values[g][r * w],
							  &isnull))
			{
				stats.recheck_row = std::min(stats.recheck_row, r);
				isnull = true;
			}
			nulls[g][r] = isnull;
		}
	}
	added += b->nrows;
	stats.copy_ms += ms_since(t0);
	return GPUOPS_OK;
}

/* Folds rows order[from, to) of aggregate g into one state. */
template <typename State, typename Op, typename Leaf>
void
fold(const std::vector<uint32_t> &order, uint64_t from, uint64_t to, Op op, Leaf leaf,
	 GpuopsAggResult *r)
{
	State s = leaf(order[from]);

	for (uint64_t i = from + 1; i < to; i++)
		s = op(s, leaf(order[i]));
	to_result(s, r);
}

/* count(DISTINCT): counted rows whose sort key differs from their predecessor's */
void
count_distinct(CpuAgg *a, const std::vector<uint32_t> &order, uint64_t from, uint64_t to,
			   const uint8_t *nulls, GpuopsAggResult *r)
{
	int nw = a->nwords;
	uint64_t n = 0;

	for (uint64_t i = from; i < to; i++)
		if (!nulls[order[i]] &&
			(i == from ||
			 memcmp(&a->words[(uint64_t) order[i] * nw], &a->words[(uint64_t) order[i - 1] * nw],
					nw * 8) != 0))
			n++;
	to_result(CountState{n}, r);
}

/* percentiles: the counted rows come first in the group, in value order */
void
percentile(const std::vector<uint32_t> &order, uint64_t from, uint64_t to, const uint8_t *nulls,
		   GpuopsAggKind kind, double f, GpuopsAggResult *r)
{
	uint64_t n = 0, lo = 0, hi = 0;

	for (uint64_t i = from; i < to; i++)
		n += nulls[order[i]] ? 0 : 1;
	if (n > 0)
		agg_percentile_rows(kind, f, n, &lo, &hi);
	memset(r, 0, sizeof(*r));
	r->count = n;
	r->row = order[from + lo];
	r->row2 = order[from + hi];
}

void
aggregate_group(CpuAgg *a, const std::vector<uint32_t> &order, uint64_t from, uint64_t to,
				GpuopsAggResult *out)
{
	const GpuopsAggSpec &spec = a->spec;

	for (int g = 0; g < spec.naggs; g++)
	{
		GpuopsKeyKind kind = spec.value_kinds[g];
		const uint8_t *nulls = a->nulls[g].data();
		const uint8_t *vals = a->values[g].data();
		size_t w = spec.kinds[g] == GPUOPS_AGG_COUNT ? 0 : gpuops_key_raw_width(kind);
		auto raw = [&](uint32_t r) -> const uint8_t * { return nulls[r] ? nullptr : vals + r * w; };

		switch (spec.kinds[g])
		{
			case GPUOPS_AGG_COUNT:
				fold<CountState>(
					order, from, to, CountOp(), [&](uint32_t r) { return count_leaf(nulls[r]); },
					&out[g]);
				break;
			case GPUOPS_AGG_SUM_INT:
				fold<SumIntState>(
					order, from, to, SumIntOp(),
					[&](uint32_t r) { return sum_int_leaf(kind, raw(r)); }, &out[g]);
				break;
			case GPUOPS_AGG_SUMSQ_INT:
				fold<SumSqIntState>(
					order, from, to, SumSqIntOp(),
					[&](uint32_t r) { return sumsq_int_leaf(kind, raw(r)); }, &out[g]);
				break;
			case GPUOPS_AGG_FLOAT:
				fold<FloatState>(
					order, from, to, FloatOp(),
					[&](uint32_t r) { return float_value_leaf(kind, raw(r)); }, &out[g]);
				break;
			case GPUOPS_AGG_MIN:
				fold<MinMaxState>(
					order, from, to, MinMaxOp<false>(),
					[&](uint32_t r) { return minmax_leaf(kind, raw(r), r); }, &out[g]);
				break;
			case GPUOPS_AGG_MAX:
				fold<MinMaxState>(
					order, from, to, MinMaxOp<true>(),
					[&](uint32_t r) { return minmax_leaf(kind, raw(r), r); }, &out[g]);
				break;
			case GPUOPS_AGG_COUNT_DISTINCT:
				count_distinct(a, order, from, to, nulls, &out[g]);
				break;
			case GPUOPS_AGG_PERCENTILE_DISC:
			case GPUOPS_AGG_PERCENTILE_CONT:
				percentile(order, from, to, nulls, spec.kinds[g], spec.fractions[g], &out[g]);
				break;
		}
	}
}

GpuopsStatus
CpuAgg::agg_finish(uint64_t *ngroups)
{
	uint64_t n = added;
	int nw = nwords;
	const uint64_t *packed = words.data();
	std::vector<uint32_t> order(n);
	auto t0 = std::chrono::steady_clock::now();

	maybe_inject(GPUOPS_FAULT_KERNEL_ERROR, settings.fault);
	std::iota(order.begin(), order.end(), 0u);
	/* ties by row: the same order as the device's stable radix sort */
	uint64_t compared = 0;

	/* a throwing comparison leaves order a permutation (std::sort is exception-neutral) */
	if (nw > 0)
		std::sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
			check_interrupt_every(++compared);
			for (int w = 0; w < nw; w++)
			{
				uint64_t a1 = packed[(uint64_t) x * nw + w];
				uint64_t b1 = packed[(uint64_t) y * nw + w];

				if (a1 != b1)
					return a1 < b1;
			}
			return x < y;
		});
	group_rows.clear();
	results.clear();
	for (uint64_t from = 0; from < n;)
	{
		uint64_t to = from + 1;

		check_interrupt_every(group_rows.size());
		while (to < n &&
			   memcmp(&packed[(uint64_t) order[to] * nw], &packed[(uint64_t) order[from] * nw],
					  gwords * 8) == 0)
			to++;
		group_rows.push_back(order[from]);
		results.resize(results.size() + spec.naggs);
		aggregate_group(this, order, from, to, &results[results.size() - spec.naggs]);
		from = to;
	}
	stats.rows = n;
	stats.groups = group_rows.size();
	stats.hash_capacity = agg_hash_capacity(spec, n);
	if (stats.hash_capacity > 0)
	{
		if (stats.groups > stats.hash_capacity)
			stats.hash_overflow = 1;
		else
			stats.hashed = 1;
	}
	stats.key_words = nw;
	stats.sort_bits = agg_key_bits(spec);
	/* what agg_groups hands over (gpuops_device.h): group rows and results */
	stats.bytes_from_device += group_rows.size() * sizeof(uint64_t) +
		results.size() * sizeof(GpuopsAggResult);
	stats.kernel_ms += ms_since(t0);
	*ngroups = group_rows.size();
	return GPUOPS_OK;
}

GpuopsStatus
CpuAgg::agg_groups(const uint64_t **group_rows_out, const GpuopsAggResult **results_out)
{
	*group_rows_out = group_rows.data();
	*results_out = results.data();
	return GPUOPS_OK;
}

void
CpuAgg::agg_stats(GpuopsAggStats *out) const
{
	*out = stats;
}

constexpr GpuopsAggBackend cpu_agg_backend = shell::make_agg_backend<CpuAgg>("cpu");

} /* namespace */
} /* namespace gpuops */

extern "C" const GpuopsAggBackend *
gpuops_cpu_agg_backend(void) noexcept
{
	return &gpuops::cpu_agg_backend;
}
