/*
 * agg_key.hpp
 *    The aggregation's sort key, alike in the CUDA aggregation and its CPU
 *    twin: the packed group key, the ordered aggregates' sub-key after it,
 *    and which of a group's rows in that order a percentile reads.
 *
 * Group key: per key column a null bit and its normalized value bits
 * (key_normalize.hpp: -0 = 0, every NaN one value, intervals by span), packed
 * back to back into 64-bit words.  Two rows' words are equal exactly when
 * their keys are equal under GROUP BY (NULLs equal each other), which is all
 * grouping needs; the words' order is only the order groups come out in.
 *
 * One part of agg_common.hpp, which includes every part (include that).
 */
#ifndef GPUOPS_AGG_KEY_HPP
#define GPUOPS_AGG_KEY_HPP

#include <cmath>
#include <cstdint>
#include <cstring>

#include "gpuops_device.h"
#include "key_normalize.hpp"

namespace gpuops {

/* the packed key of the widest GROUP BY the planner sends */
constexpr int kAggMaxKeyWords = 16;

/* Value bits of a key kind in the packed group key. */
GPUOPS_HD int
agg_value_bits(GpuopsKeyKind kind)
{
	switch (kind)
	{
		case GPUOPS_KEY_BOOL:
			return 1;
		case GPUOPS_KEY_INT2:
			return 16;
		case GPUOPS_KEY_INT4:
		case GPUOPS_KEY_FLOAT4:
			return 32;
		case GPUOPS_KEY_UUID:
		case GPUOPS_KEY_INTERVAL:
		case GPUOPS_KEY_BYTES16:
			return 128;
		default:
			return 64;
	}
}

/* Bits of a spec's packed group key. */
inline int
agg_key_bits(const GpuopsAggSpec &spec)
{
	int bits = 0;

	for (int k = 0; k < spec.nkeys; k++)
		bits += 1 + agg_value_bits(spec.keys[k]);
	return bits;
}

inline int
agg_key_words(const GpuopsAggSpec &spec)
{
	return (agg_key_bits(spec) + 63) / 64;
}

/*
 * The ordered aggregates' sub-key (gpuops_device.h), after the group key's
 * words: a validity bit (1: NULL or FILTER rejected, so counted rows come
 * first) above the normalized value.  Values of fewer than 64 bits share
 * the bit's word; wider ones follow it, most significant word first.
 */
GPUOPS_HD int
agg_order_words_of(GpuopsKeyKind kind)
{
	int bits = agg_value_bits(kind);

	return bits < 64 ? 1 : 1 + bits / 64;
}

inline int
agg_order_words(const GpuopsAggSpec &spec)
{
	return spec.order_agg >= 0 ? agg_order_words_of(spec.value_kinds[spec.order_agg]) : 0;
}

/* Words the radix sort orders: the group key's, then the sub-key's. */
inline int
agg_sort_words(const GpuopsAggSpec &spec)
{
	return agg_key_words(spec) + agg_order_words(spec);
}

/* Bits used in word w of the sort key (what the radix sort examines). */
inline int
agg_word_bits(const GpuopsAggSpec &spec, int w)
{
	int gw = agg_key_words(spec);

	if (w < gw)
	{
		int left = agg_key_bits(spec) - 64 * w;

		return left >= 64 ? 64 : left;
	}
	int vbits = agg_value_bits(spec.value_kinds[spec.order_agg]);

	if (vbits < 64)
		return vbits + 1;
	return w == gw ? 1 : 64;
}

/* A row's sub-key words; raw is its value, null when it is not counted. */
GPUOPS_HD void
agg_pack_order(GpuopsKeyKind kind, bool desc, const uint8_t *raw, uint64_t *w)
{
	int bits = agg_value_bits(kind);
	uint64_t v[2] = {0, 0};

	if (raw == nullptr)
	{
		/* not counted: after every counted row, in one run */
		w[0] = bits < 64 ? uint64_t(1) << bits : 1;
		if (bits >= 64)
			w[1] = 0;
		if (bits == 128)
			w[2] = 0;
		return;
	}
	value_words(kind, raw, v);
	if (desc)
	{
		v[0] = bits < 64 ? ~v[0] & ((uint64_t(1) << bits) - 1) : ~v[0];
		v[1] = ~v[1];
	}
	if (bits < 64)
		w[0] = v[0];
	else
	{
		w[0] = 0;
		w[1] = v[0];
		if (bits == 128)
			w[2] = v[1];
	}
}

/*
 * Positions, among a group's n counted rows in value order, of a
 * percentile's rows: percentile_disc's ceil(f * n)-th row (the first when
 * that is 0), percentile_cont's floor and ceil of f * (n - 1), computed as
 * PostgreSQL's orderedsetaggs.c does.
 */
GPUOPS_HD void
agg_percentile_rows(GpuopsAggKind kind, double f, uint64_t n, uint64_t *lo, uint64_t *hi)
{
	if (kind == GPUOPS_AGG_PERCENTILE_DISC)
	{
		int64_t rownum = static_cast<int64_t>(ceil(f * static_cast<double>(n)));

		*lo = *hi = rownum > 1 ? static_cast<uint64_t>(rownum - 1) : 0;
		return;
	}
	*lo = static_cast<uint64_t>(floor(f * static_cast<double>(n - 1)));
	*hi = static_cast<uint64_t>(ceil(f * static_cast<double>(n - 1)));
}

/* Appends fields of up to 64 bits to a row's key words (zeroed by the caller). */
struct KeyPacker
{
	uint64_t *w;
	int pos;

	GPUOPS_HD void put(uint64_t v, int bits)
	{
		int word = pos >> 6;
		int off = pos & 63;

		w[word] |= v << off;
		if (off + bits > 64)
			w[word + 1] |= v >> (64 - off);
		pos += bits;
	}
};

/*
 * The packed key of row i.  keys[k] is key k's raw column, nulls[k] its
 * bitmap or null.
 */
GPUOPS_HD void
agg_pack_key(const GpuopsKeyKind *kinds, int nkeys, const uint8_t *const *keys,
			 const uint8_t *const *nulls, uint64_t i, uint64_t *w, int nwords)
{
	KeyPacker p = {w, 0};

	for (int j = 0; j < nwords; j++)
		w[j] = 0;
	for (int k = 0; k < nkeys; k++)
	{
		int bits = agg_value_bits(kinds[k]);
		bool null = nulls[k] && (nulls[k][i >> 3] >> (i & 7)) & 1;
		uint64_t v[2] = {0, 0};

		p.put(null ? 1 : 0, 1);
		if (!null)
			value_words(kinds[k], keys[k] + i * gpuops_key_raw_width(kinds[k]), v);
		if (bits == 128)
		{
			p.put(v[0], 64);
			p.put(v[1], 64);
		}
		else
			p.put(v[0], bits);
	}
}

GPUOPS_HD bool
agg_null(const uint8_t *nulls, uint64_t i)
{
	return nulls && (nulls[i >> 3] >> (i & 7)) & 1;
}

} /* namespace gpuops */

#endif /* GPUOPS_AGG_KEY_HPP */
