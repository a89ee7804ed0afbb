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
#include "device_common.hpp"

namespace gpuops {
namespace {

struct CpuAgg
{
	GpuopsSettings settings;
	GpuopsAggSpec spec;
	uint64_t	nrows = 0;		/* announced by begin */
	uint64_t	added = 0;
	int			nwords = 0;		/* sort words: group key, then sub-key */
	int			gwords = 0;		/* group key words */
	std::vector<uint64_t> words;	/* row-major packed keys */
	std::vector<std::vector<uint8_t>> values;	/* per aggregate, raw */
	std::vector<std::vector<uint8_t>> nulls;	/* per aggregate, one byte per row */
	std::vector<uint64_t> group_rows;
	std::vector<GpuopsAggResult> results;
	GpuopsAggStats stats = {};
	HostColumns inputs;			/* the current batch's program columns */
};

/* the budget the CUDA backend would have (0: unlimited) */
uint64_t
budget(const GpuopsSettings &s)
{
	return s.device_memory_limit / (s.device_share ? s.device_share : 1);
}

GpuopsStatus
cpu_agg_capacity(const GpuopsSettings *settings, const GpuopsAggSpec *spec, uint64_t *rows) noexcept
{
	*rows = agg_rows_for_budget(budget(*settings), *spec);
	return GPUOPS_OK;
}

GpuopsStatus
cpu_agg_begin(const GpuopsSettings *settings, const GpuopsAggSpec *spec, uint64_t nrows,
			  GpuopsAgg **out) noexcept
{
	*out = nullptr;
	return guarded([&]() {
		maybe_inject(GPUOPS_FAULT_NO_DEVICE, settings->fault);
		maybe_inject(GPUOPS_FAULT_OUT_OF_MEMORY, settings->fault);
		if (spec->nkeys < 0 || spec->nkeys > GPUOPS_MAX_SORT_KEYS ||
			spec->naggs < 0 || spec->naggs > GPUOPS_MAX_AGGS)
			fail(GPUOPS_ERR_INTERNAL, "bad aggregation spec");
		/* what the device could not hold: the caller must have split it */
		if (nrows > agg_rows_for_budget(budget(*settings), *spec))
			fail(GPUOPS_ERR_INTERNAL, "aggregation of %llu rows over the device budget's %llu",
				 (unsigned long long) nrows,
				 (unsigned long long) agg_rows_for_budget(budget(*settings), *spec));
		auto		a = std::make_unique<CpuAgg>();

		a->settings = *settings;
		a->spec = *spec;
		a->nrows = nrows;
		a->stats.recheck_row = kAggNoRecheck;
		for (int g = 0; g < spec->naggs; g++)
		{
			const char *bad = spec->programs[g]
				? expr_validate(spec->programs[g], spec->program_ncols > 0 ? spec->program_ncols : 1, 0) : nullptr;

			if (bad)
				fail(GPUOPS_ERR_INTERNAL, "bad device program: %s", bad);
		}
		if (spec->order_agg >= spec->naggs)
			fail(GPUOPS_ERR_INTERNAL, "bad aggregation spec");
		a->nwords = agg_sort_words(*spec);
		a->gwords = agg_key_words(*spec);
		if (a->nwords > kAggMaxKeyWords)
			fail(GPUOPS_ERR_UNSUPPORTED, "group key of %d words", a->nwords);
		a->words.assign(nrows * a->nwords, 0);
		a->values.resize(spec->naggs);
		a->nulls.resize(spec->naggs);
		for (int g = 0; g < spec->naggs; g++)
		{
			if (spec->kinds[g] != GPUOPS_AGG_COUNT)
				a->values[g].resize(nrows * gpuops_key_raw_width(spec->value_kinds[g]));
			a->nulls[g].resize(nrows);
		}
		*out = reinterpret_cast<GpuopsAgg *>(a.release());
		return GPUOPS_OK;
	});
}

GpuopsStatus
cpu_agg_add(GpuopsAgg *agg, const GpuopsAggBatch *b) noexcept
{
	return guarded([&]() {
		auto	   *a = reinterpret_cast<CpuAgg *>(agg);
		const GpuopsAggSpec &spec = a->spec;
		const uint8_t *keys[GPUOPS_MAX_SORT_KEYS];
		auto		t0 = std::chrono::steady_clock::now();

		if (a->added + b->nrows > a->nrows || a->added % 8 != 0)
			fail(GPUOPS_ERR_INTERNAL, "aggregation batch of %u rows after %llu of %llu",
				 b->nrows, (unsigned long long) a->added, (unsigned long long) a->nrows);
		for (int k = 0; k < spec.nkeys; k++)
			keys[k] = static_cast<const uint8_t *>(b->keys[k]);
		for (uint32_t i = 0; i < b->nrows; i++)
		{
			uint64_t   *w = &a->words[(a->added + i) * a->nwords];

			agg_pack_key(spec.keys, spec.nkeys, keys, b->key_nulls, i, w, a->gwords);
			if (spec.order_agg >= 0)
			{
				int			o = spec.order_agg;
				GpuopsKeyKind kind = spec.value_kinds[o];

				agg_pack_order(kind, spec.order_desc != 0,
							   agg_null(b->value_nulls[o], i) ? nullptr
							   : static_cast<const uint8_t *>(b->values[o]) +
							   i * gpuops_key_raw_width(kind),
							   w + a->gwords);
			}
		}
		if (spec.program_ncols > 0)
			a->inputs.load(&b->inputs, spec.program_ncols);
		for (int g = 0; g < spec.naggs; g++)
		{
			size_t		w = gpuops_key_raw_width(spec.value_kinds[g]);

			if (spec.programs[g])
				continue;
			if (spec.kinds[g] != GPUOPS_AGG_COUNT)
				memcpy(&a->values[g][a->added * w], b->values[g], b->nrows * w);
			for (uint32_t i = 0; i < b->nrows; i++)
				a->nulls[g][a->added + i] = agg_null(b->value_nulls[g], i);
		}
		for (int g = 0; g < spec.naggs; g++)
		{
			size_t		w = gpuops_key_raw_width(spec.value_kinds[g]);
			ColumnsView in = a->inputs.view();

			if (!spec.programs[g])
				continue;
			for (uint32_t i = 0; i < b->nrows; i++)
			{
				uint64_t	r = a->added + i;
				bool		isnull = true;

				if (!agg_null(b->value_nulls[g], i) &&
					!agg_eval_row(spec.programs[g], in, i, spec.value_kinds[g],
								  &a->values[g][r * w], &isnull))
				{
					a->stats.recheck_row = std::min(a->stats.recheck_row, r);
					isnull = true;
				}
				a->nulls[g][r] = isnull;
			}
		}
		a->added += b->nrows;
		a->stats.copy_ms += ms_since(t0);
		return GPUOPS_OK;
	});
}

/* Folds rows order[from, to) of aggregate g into one state. */
template <typename State, typename Op, typename Leaf>
void
fold(const std::vector<uint32_t> &order, uint64_t from, uint64_t to, Op op, Leaf leaf,
	 GpuopsAggResult *r)
{
	State		s = leaf(order[from]);

	for (uint64_t i = from + 1; i < to; i++)
		s = op(s, leaf(order[i]));
	to_result(s, r);
}

/* count(DISTINCT): counted rows whose sort key differs from their predecessor's */
void
count_distinct(CpuAgg *a, const std::vector<uint32_t> &order, uint64_t from, uint64_t to,
			   const uint8_t *nulls, GpuopsAggResult *r)
{
	int			nw = a->nwords;
	uint64_t	n = 0;

	for (uint64_t i = from; i < to; i++)
		if (!nulls[order[i]] &&
			(i == from || memcmp(&a->words[(uint64_t) order[i] * nw],
								 &a->words[(uint64_t) order[i - 1] * nw], nw * 8) != 0))
			n++;
	to_result(CountState{n}, r);
}

/* percentiles: the counted rows come first in the group, in value order */
void
percentile(const std::vector<uint32_t> &order, uint64_t from, uint64_t to, const uint8_t *nulls,
		   GpuopsAggKind kind, double f, GpuopsAggResult *r)
{
	uint64_t	n = 0,
				lo = 0,
				hi = 0;

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
		size_t		w = spec.kinds[g] == GPUOPS_AGG_COUNT ? 0 : gpuops_key_raw_width(kind);
		auto		raw = [&](uint32_t r) -> const uint8_t * {
			return nulls[r] ? nullptr : vals + r * w;
		};

		switch (spec.kinds[g])
		{
			case GPUOPS_AGG_COUNT:
				fold<CountState>(order, from, to, CountOp(),
								 [&](uint32_t r) { return count_leaf(nulls[r]); }, &out[g]);
				break;
			case GPUOPS_AGG_SUM_INT:
				fold<SumIntState>(order, from, to, SumIntOp(),
								  [&](uint32_t r) { return sum_int_leaf(kind, raw(r)); }, &out[g]);
				break;
			case GPUOPS_AGG_SUMSQ_INT:
				fold<SumSqIntState>(order, from, to, SumSqIntOp(),
									[&](uint32_t r) { return sumsq_int_leaf(kind, raw(r)); }, &out[g]);
				break;
			case GPUOPS_AGG_FLOAT:
				fold<FloatState>(order, from, to, FloatOp(),
								 [&](uint32_t r) { return float_value_leaf(kind, raw(r)); }, &out[g]);
				break;
			case GPUOPS_AGG_MIN:
				fold<MinMaxState>(order, from, to, MinMaxOp<false>(),
								  [&](uint32_t r) { return minmax_leaf(kind, raw(r), r); }, &out[g]);
				break;
			case GPUOPS_AGG_MAX:
				fold<MinMaxState>(order, from, to, MinMaxOp<true>(),
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
cpu_agg_finish(GpuopsAgg *agg, uint64_t *ngroups) noexcept
{
	return guarded([&]() {
		auto	   *a = reinterpret_cast<CpuAgg *>(agg);
		uint64_t	n = a->added;
		int			nw = a->nwords;
		const uint64_t *words = a->words.data();
		std::vector<uint32_t> order(n);
		auto		t0 = std::chrono::steady_clock::now();

		maybe_inject(GPUOPS_FAULT_KERNEL_ERROR, a->settings.fault);
		std::iota(order.begin(), order.end(), 0u);
		/* ties by row: the same order as the device's stable radix sort */
		uint64_t	compared = 0;

		/* a throwing comparison leaves order a permutation (std::sort is exception-neutral) */
		if (nw > 0)
			std::sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
				check_interrupt_every(++compared);
				for (int w = 0; w < nw; w++)
				{
					uint64_t	a1 = words[(uint64_t) x * nw + w];
					uint64_t	b1 = words[(uint64_t) y * nw + w];

					if (a1 != b1)
						return a1 < b1;
				}
				return x < y;
			});
		a->group_rows.clear();
		a->results.clear();
		for (uint64_t from = 0; from < n;)
		{
			uint64_t	to = from + 1;

			check_interrupt_every(a->group_rows.size());
			while (to < n && memcmp(&words[(uint64_t) order[to] * nw],
									&words[(uint64_t) order[from] * nw], a->gwords * 8) == 0)
				to++;
			a->group_rows.push_back(order[from]);
			a->results.resize(a->results.size() + a->spec.naggs);
			aggregate_group(a, order, from, to, &a->results[a->results.size() - a->spec.naggs]);
			from = to;
		}
		a->stats.rows = n;
		a->stats.groups = a->group_rows.size();
		a->stats.hash_capacity = agg_hash_capacity(a->spec, n);
		if (a->stats.hash_capacity > 0)
		{
			if (a->stats.groups > a->stats.hash_capacity)
				a->stats.hash_overflow = 1;
			else
				a->stats.hashed = 1;
		}
		a->stats.key_words = nw;
		a->stats.sort_bits = agg_key_bits(a->spec);
		a->stats.kernel_ms += ms_since(t0);
		*ngroups = a->group_rows.size();
		return GPUOPS_OK;
	});
}

GpuopsStatus
cpu_agg_groups(GpuopsAgg *agg, const uint64_t **group_rows, const GpuopsAggResult **results) noexcept
{
	auto	   *a = reinterpret_cast<CpuAgg *>(agg);

	*group_rows = a->group_rows.data();
	*results = a->results.data();
	return GPUOPS_OK;
}

void
cpu_agg_stats(const GpuopsAgg *agg, GpuopsAggStats *stats) noexcept
{
	*stats = reinterpret_cast<const CpuAgg *>(agg)->stats;
}

void
cpu_agg_end(GpuopsAgg *agg) noexcept
{
	delete reinterpret_cast<CpuAgg *>(agg);
}

const GpuopsAggBackend cpu_agg_backend = {
	"cpu",
	cpu_agg_capacity,
	cpu_agg_begin,
	cpu_agg_add,
	cpu_agg_finish,
	cpu_agg_groups,
	cpu_agg_stats,
	cpu_agg_end,
};

}								/* namespace */
}								/* namespace gpuops */

extern "C" const GpuopsAggBackend *
gpuops_cpu_agg_backend(void) noexcept
{
	return &gpuops::cpu_agg_backend;
}
