/*
 * agg_strategy.hpp
 *    The choices the CUDA aggregation and its CPU twin must make alike, so
 *    that both split an input and pick a strategy the same way (and
 *    EXPLAIN ANALYZE says the same on either): the rows one aggregation
 *    takes under a device budget, and whether the hash strategy serves, with
 *    its states' layout and its group capacity.
 *
 * One part of agg_common.hpp, which includes every part (include that).
 */
#ifndef GPUOPS_AGG_STRATEGY_HPP
#define GPUOPS_AGG_STRATEGY_HPP

#include <cstdint>

#include "gpuops_device.h"
#include "agg_key.hpp"

namespace gpuops {

/*
 * The most rows one aggregation may take under a device budget of `budget`
 * bytes (0: unlimited), so that both backends split an input alike: per row
 * its raw columns and bitmaps, the packed key, the sort's keys, alternate
 * buffers and permutations, the group numbers, and one aggregate's states
 * (reduced one aggregate at a time); plus CUB's fixed temporary storage.
 */
inline uint64_t
agg_rows_for_budget(uint64_t budget, const GpuopsAggSpec &spec)
{
	const uint64_t fixed = 256 * 1024;
	const uint64_t min_rows = 1024;
	uint64_t per_row = 8 * agg_sort_words(spec) + 16 + 8 + 16 + 8 + 8 + 48;
	uint64_t rows;

	if (budget == 0)
		return UINT32_MAX;
	for (int k = 0; k < spec.nkeys; k++)
		per_row += gpuops_key_raw_width(spec.keys[k]) + 1;
	for (int g = 0; g < spec.naggs; g++)
		per_row += (spec.kinds[g] == GPUOPS_AGG_COUNT ? 0
													  : gpuops_key_raw_width(spec.value_kinds[g])) +
			1;
	rows = budget > fixed + min_rows * per_row ? (budget - fixed) / per_row : min_rows;
	rows &= ~uint64_t(7); /* chunks start at multiples of 8 rows (null bitmaps) */
	return rows < UINT32_MAX ? rows : UINT32_MAX;
}

/*
 * The hash strategy (gpuops_device.h) takes only states that atomics
 * accumulate exactly in any order: counts, integer sums, and min/max of
 * values whose normalized form is one word (the winner's row is a second
 * pass).  Float states round in the order they combine; ordered aggregates
 * need the sort.
 */
GPUOPS_HD bool
agg_hash_kind(GpuopsAggKind kind, GpuopsKeyKind value_kind)
{
	switch (kind)
	{
		case GPUOPS_AGG_COUNT:
		case GPUOPS_AGG_SUM_INT:
		case GPUOPS_AGG_SUMSQ_INT:
			return true;
		case GPUOPS_AGG_MIN:
		case GPUOPS_AGG_MAX:
			return agg_value_bits(value_kind) <= 64;
		default:
			return false;
	}
}

/*
 * One aggregate's hash state, in 64-bit words: COUNT n; SUM_INT the sum's
 * low and high words, n; SUMSQ_INT those, then the square sum's three
 * words; MIN/MAX the best normalized word, then its row + 1 (0: none).
 */
GPUOPS_HD int
agg_hash_state_words(GpuopsAggKind kind)
{
	switch (kind)
	{
		case GPUOPS_AGG_COUNT:
			return 1;
		case GPUOPS_AGG_SUM_INT:
			return 3;
		case GPUOPS_AGG_SUMSQ_INT:
			return 6;
		default:
			return 2;
	}
}

/* Words per group of the hash states: its first row, then every aggregate's state. */
inline int
agg_hash_stride(const GpuopsAggSpec &spec)
{
	int words = 1;

	for (int g = 0; g < spec.naggs; g++)
		words += agg_hash_state_words(spec.kinds[g]);
	return words;
}

/*
 * The hash strategy's group capacity for n rows, or 0 where the sort serves:
 * not asked for, no GROUP BY (one group: a plain reduction), a kind it does
 * not take, or states too large for the memory the sort would have used.
 * Both backends decide alike, so EXPLAIN ANALYZE says the same on either.
 */
inline uint64_t
agg_hash_capacity(const GpuopsAggSpec &spec, uint64_t n)
{
	uint64_t cap;

	if (spec.hash_capacity == 0 || spec.nkeys == 0 || spec.order_agg >= 0 || n == 0)
		return 0;
	for (int g = 0; g < spec.naggs; g++)
		if (!agg_hash_kind(spec.kinds[g], spec.value_kinds[g]))
			return 0;
	/* never more groups than rows */
	cap = spec.hash_capacity < n ? spec.hash_capacity : n;
	/* two table slots, a rank and the states per group */
	if (cap * (16 + 8 * static_cast<uint64_t>(agg_hash_stride(spec))) > n * 100 + (1u << 20))
		return 0;
	return cap;
}

} /* namespace gpuops */

#endif /* GPUOPS_AGG_STRATEGY_HPP */
