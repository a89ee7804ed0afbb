/*
 * agg_common.hpp
 *    What the CUDA aggregation and its CPU twin share, so both group and
 *    aggregate identically: the packed group key, the per-aggregate states
 *    and their combine functions (gpuops_device.h describes the algorithm).
 *
 * Group key: per key column a null bit and its normalized value bits
 * (key_normalize.hpp: -0 = 0, every NaN one value, intervals by span), packed
 * back to back into 64-bit words.  Two rows' words are equal exactly when
 * their keys are equal under GROUP BY (NULLs equal each other), which is all
 * grouping needs; the words' order is only the order groups come out in.
 *
 * States combine in any grouping of the rows: that is what lets the GPU
 * reduce a group in a tree.  The float state is float8_accum's (N, Sx, Sxx)
 * and combines as float8_combine does (Youngs-Cramer), so the rounding is
 * that of PostgreSQL's own parallel aggregation, not of its serial loop.
 */
#ifndef GPUOPS_AGG_COMMON_HPP
#define GPUOPS_AGG_COMMON_HPP

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
	int			bits = 0;

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
	int			bits = agg_value_bits(kind);

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
	int			gw = agg_key_words(spec);

	if (w < gw)
	{
		int			left = agg_key_bits(spec) - 64 * w;

		return left >= 64 ? 64 : left;
	}
	int			vbits = agg_value_bits(spec.value_kinds[spec.order_agg]);

	if (vbits < 64)
		return vbits + 1;
	return w == gw ? 1 : 64;
}

/* A row's sub-key words; raw is its value, null when it is not counted. */
GPUOPS_HD void
agg_pack_order(GpuopsKeyKind kind, bool desc, const uint8_t *raw, uint64_t *w)
{
	int			bits = agg_value_bits(kind);
	uint64_t	v[2] = {0, 0};

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
		int64_t		rownum = static_cast<int64_t>(ceil(f * static_cast<double>(n)));

		*lo = *hi = rownum > 1 ? static_cast<uint64_t>(rownum - 1) : 0;
		return;
	}
	*lo = static_cast<uint64_t>(floor(f * static_cast<double>(n - 1)));
	*hi = static_cast<uint64_t>(ceil(f * static_cast<double>(n - 1)));
}

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
	uint64_t	per_row = 8 * agg_sort_words(spec) + 16 + 8 + 16 + 8 + 8 + 48;
	uint64_t	rows;

	if (budget == 0)
		return UINT32_MAX;
	for (int k = 0; k < spec.nkeys; k++)
		per_row += gpuops_key_raw_width(spec.keys[k]) + 1;
	for (int g = 0; g < spec.naggs; g++)
		per_row += (spec.kinds[g] == GPUOPS_AGG_COUNT ? 0 : gpuops_key_raw_width(spec.value_kinds[g])) + 1;
	rows = budget > fixed + min_rows * per_row ? (budget - fixed) / per_row : min_rows;
	rows &= ~uint64_t(7);		/* chunks start at multiples of 8 rows (null bitmaps) */
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
	int			words = 1;

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
	uint64_t	cap;

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

/* Appends fields of up to 64 bits to a row's key words (zeroed by the caller). */
struct KeyPacker
{
	uint64_t   *w;
	int			pos;

	GPUOPS_HD void put(uint64_t v, int bits)
	{
		int			word = pos >> 6;
		int			off = pos & 63;

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
	KeyPacker	p = {w, 0};

	for (int j = 0; j < nwords; j++)
		w[j] = 0;
	for (int k = 0; k < nkeys; k++)
	{
		int			bits = agg_value_bits(kinds[k]);
		bool		null = nulls[k] && (nulls[k][i >> 3] >> (i & 7)) & 1;
		uint64_t	v[2] = {0, 0};

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

/* count(x), count(*) */
struct CountState
{
	uint64_t	n;
};

struct CountOp
{
	GPUOPS_HD CountState operator()(const CountState &a, const CountState &b) const
	{
		return CountState{a.n + b.n};
	}
};

/* sum and avg of integers: exact in 128 bits */
struct SumIntState
{
	__int128	s;
	uint64_t	n;
};

struct SumIntOp
{
	GPUOPS_HD SumIntState operator()(const SumIntState &a, const SumIntState &b) const
	{
		return SumIntState{a.s + b.s, a.n + b.n};
	}
};

/*
 * variance and stddev of integers: N, the sum, and the sum of squares in
 * 192 bits (an int8's square takes 126, and 2^32 of them 158).
 */
struct SumSqIntState
{
	__int128	s;
	unsigned __int128 s2;		/* the sum of squares, low 128 bits */
	uint64_t	s2_top;			/* and the bits above */
	uint64_t	n;
};

struct SumSqIntOp
{
	GPUOPS_HD SumSqIntState operator()(const SumSqIntState &a, const SumSqIntState &b) const
	{
		unsigned __int128 lo = a.s2 + b.s2;

		return SumSqIntState{a.s + b.s, lo, a.s2_top + b.s2_top + (lo < a.s2 ? 1u : 0u),
			a.n + b.n};
	}
};

GPUOPS_HD int64_t
agg_int_value(GpuopsKeyKind kind, const uint8_t *raw)
{
	switch (kind)
	{
		case GPUOPS_KEY_INT2:
			{
				int16_t		v;

				memcpy(&v, raw, 2);
				return v;
			}
		case GPUOPS_KEY_INT4:
			{
				int32_t		v;

				memcpy(&v, raw, 4);
				return v;
			}
		default:
			{
				int64_t		v;

				memcpy(&v, raw, 8);
				return v;
			}
	}
}

/* isinf/isnan on either side of nvcc and in g++ */
GPUOPS_HD bool
agg_isinf(double v)
{
#ifdef __CUDA_ARCH__
	return ::isinf(v);
#else
	return std::isinf(v);
#endif
}

GPUOPS_HD bool
agg_isnan(double v)
{
#ifdef __CUDA_ARCH__
	return ::isnan(v);
#else
	return std::isnan(v);
#endif
}

/* float aggregates: float8_accum's transition values */
enum
{
	kOverflowSx = 1,			/* a finite Sx became infinite */
	kOverflowSxx = 2			/* a finite Sxx became infinite */
};

struct FloatState
{
	double		n;
	double		sx;
	double		sxx;
	uint32_t	overflow;
};

/* float8_accum on an empty state: Sxx is NaN after an infinite or NaN input */
GPUOPS_HD FloatState
float_leaf(double v)
{
	return FloatState{1.0, v, (agg_isinf(v) || agg_isnan(v)) ? NAN : 0.0, 0};
}

/*
 * float8_combine.  Where PostgreSQL raises "value out of range: overflow"
 * an overflow bit is kept instead; the caller raises it for the aggregates
 * that would have (sum checks Sx only).
 */
struct FloatOp
{
	GPUOPS_HD FloatState operator()(const FloatState &a, const FloatState &b) const
	{
		FloatState	r;
		double		tmp;

		if (a.n == 0.0)
			return b;
		if (b.n == 0.0)
			return a;
		r.n = a.n + b.n;
		r.sx = a.sx + b.sx;
		r.overflow = a.overflow | b.overflow;
		if (agg_isinf(r.sx) && !agg_isinf(a.sx) && !agg_isinf(b.sx))
			r.overflow |= kOverflowSx;
		tmp = a.sx / a.n - b.sx / b.n;
		r.sxx = a.sxx + b.sxx + a.n * b.n * tmp * tmp / r.n;
		if (agg_isinf(r.sxx) && !agg_isinf(a.sxx) && !agg_isinf(b.sxx))
			r.overflow |= kOverflowSxx;
		return r;
	}
};

GPUOPS_HD double
agg_float_value(GpuopsKeyKind kind, const uint8_t *raw)
{
	if (kind == GPUOPS_KEY_FLOAT4)
	{
		float		v;

		memcpy(&v, raw, 4);
		return v;
	}
	double		v;

	memcpy(&v, raw, 8);
	return v;
}

/*
 * min and max: the value's normalized words and its row.  Of equal values
 * (an interval of 1 day and one of 24 hours, -0 and 0) the last row's wins,
 * as PostgreSQL's smaller/larger functions return their second argument
 * (the newer value) on a tie.
 */
struct MinMaxState
{
	uint64_t	w0;
	uint64_t	w1;
	uint64_t	row;
	uint32_t	valid;
};

template <bool Max>
struct MinMaxOp
{
	GPUOPS_HD MinMaxState operator()(const MinMaxState &a, const MinMaxState &b) const
	{
		if (!a.valid)
			return b;
		if (!b.valid)
			return a;
		if (a.w0 != b.w0)
			return ((a.w0 < b.w0) != Max) ? a : b;
		if (a.w1 != b.w1)
			return ((a.w1 < b.w1) != Max) ? a : b;
		return a.row >= b.row ? a : b;
	}
};

/* The leaf state of row `row` for each kind; `raw` is its value, null when NULL. */
GPUOPS_HD CountState
count_leaf(bool null)
{
	return CountState{null ? 0u : 1u};
}

GPUOPS_HD SumIntState
sum_int_leaf(GpuopsKeyKind kind, const uint8_t *raw)
{
	if (raw == nullptr)
		return SumIntState{0, 0};
	return SumIntState{static_cast<__int128>(agg_int_value(kind, raw)), 1};
}

GPUOPS_HD SumSqIntState
sumsq_int_leaf(GpuopsKeyKind kind, const uint8_t *raw)
{
	if (raw == nullptr)
		return SumSqIntState{0, 0, 0, 0};
	int64_t		v = agg_int_value(kind, raw);
	unsigned __int128 m = v < 0 ? static_cast<unsigned __int128>(-static_cast<__int128>(v))
		: static_cast<unsigned __int128>(v);

	return SumSqIntState{v, m * m, 0, 1};
}

GPUOPS_HD FloatState
float_value_leaf(GpuopsKeyKind kind, const uint8_t *raw)
{
	if (raw == nullptr)
		return FloatState{0.0, 0.0, 0.0, 0};
	return float_leaf(agg_float_value(kind, raw));
}

GPUOPS_HD MinMaxState
minmax_leaf(GpuopsKeyKind kind, const uint8_t *raw, uint64_t row)
{
	uint64_t	v[2] = {0, 0};

	if (raw == nullptr)
		return MinMaxState{0, 0, row, 0};
	value_words(kind, raw, v);
	return MinMaxState{v[0], v[1], row, 1};
}

/* States as the caller sees them. */
inline void
to_result(const CountState &s, GpuopsAggResult *r)
{
	memset(r, 0, sizeof(*r));
	r->count = s.n;
}

inline void
to_result(const SumIntState &s, GpuopsAggResult *r)
{
	memset(r, 0, sizeof(*r));
	r->count = s.n;
	r->sum_lo = static_cast<uint64_t>(static_cast<unsigned __int128>(s.s));
	r->sum_hi = static_cast<int64_t>(s.s >> 64);
}

inline void
to_result(const SumSqIntState &s, GpuopsAggResult *r)
{
	memset(r, 0, sizeof(*r));
	r->count = s.n;
	r->sum_lo = static_cast<uint64_t>(static_cast<unsigned __int128>(s.s));
	r->sum_hi = static_cast<int64_t>(s.s >> 64);
	r->sum2_lo = static_cast<uint64_t>(s.s2);
	r->sum2_hi = static_cast<uint64_t>(s.s2 >> 64);
	r->sum2_top = s.s2_top;
}

inline void
to_result(const FloatState &s, GpuopsAggResult *r)
{
	memset(r, 0, sizeof(*r));
	r->count = static_cast<uint64_t>(s.n);
	r->sx = s.sx;
	r->sxx = s.sxx;
	r->overflow = s.overflow;
}

inline void
to_result(const MinMaxState &s, GpuopsAggResult *r)
{
	memset(r, 0, sizeof(*r));
	r->count = s.valid ? 1 : 0;
	r->row = s.row;
}

/*
 * Results back into states, so the host merge of chunks combines them with
 * the device's own operators.
 */
inline CountState
count_from(const GpuopsAggResult &r)
{
	return CountState{r.count};
}

inline __int128
agg_int128(int64_t hi, uint64_t lo)
{
	return static_cast<__int128>((static_cast<unsigned __int128>(static_cast<uint64_t>(hi)) << 64) | lo);
}

inline SumIntState
sum_int_from(const GpuopsAggResult &r)
{
	return SumIntState{agg_int128(r.sum_hi, r.sum_lo), r.count};
}

inline SumSqIntState
sumsq_int_from(const GpuopsAggResult &r)
{
	return SumSqIntState{agg_int128(r.sum_hi, r.sum_lo),
		(static_cast<unsigned __int128>(r.sum2_hi) << 64) | r.sum2_lo, r.sum2_top, r.count};
}

inline FloatState
float_from(const GpuopsAggResult &r)
{
	return FloatState{static_cast<double>(r.count), r.sx, r.sxx, r.overflow};
}

}								/* namespace gpuops */

#endif
