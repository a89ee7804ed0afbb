/*
 * agg_state.hpp
 *    The per-aggregate states of the CUDA aggregation and its CPU twin: each
 *    kind's state, its combine operator and its leaf (one row's state), and
 *    the conversions to and from GpuopsAggResult, through which the host
 *    merge of chunks (src/agg/gpu_agg_merge.cpp) combines states with the
 *    device's own operators.
 *
 * States combine in any grouping of the rows: that is what lets the GPU
 * reduce a group in a tree.  The float state is float8_accum's (N, Sx, Sxx)
 * and combines as float8_combine does (Youngs-Cramer), so the rounding is
 * that of PostgreSQL's own parallel aggregation, not of its serial loop.
 *
 * One part of agg_common.hpp, which includes every part (include that).
 */
#ifndef GPUOPS_AGG_STATE_HPP
#define GPUOPS_AGG_STATE_HPP

#include <cmath>
#include <cstdint>
#include <cstring>

#include "gpuops_device.h"
#include "key_normalize.hpp"

namespace gpuops {

/* count(x), count(*) */
struct CountState
{
	uint64_t n;
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
	__int128 s;
	uint64_t n;
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
	__int128 s;
	unsigned __int128 s2; /* the sum of squares, low 128 bits */
	uint64_t s2_top;	  /* and the bits above */
	uint64_t n;
};

struct SumSqIntOp
{
	GPUOPS_HD SumSqIntState operator()(const SumSqIntState &a, const SumSqIntState &b) const
	{
		unsigned __int128 lo = a.s2 + b.s2;

		return SumSqIntState{a.s + b.s, lo, a.s2_top + b.s2_top + (lo < a.s2 ? 1u : 0u), a.n + b.n};
	}
};

GPUOPS_HD int64_t
agg_int_value(GpuopsKeyKind kind, const uint8_t *raw)
{
	switch (kind)
	{
		case GPUOPS_KEY_INT2:
			{
				int16_t v;

				memcpy(&v, raw, 2);
				return v;
			}
		case GPUOPS_KEY_INT4:
			{
				int32_t v;

				memcpy(&v, raw, 4);
				return v;
			}
		default:
			{
				int64_t v;

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
	kOverflowSx = 1, /* a finite Sx became infinite */
	kOverflowSxx = 2 /* a finite Sxx became infinite */
};

struct FloatState
{
	double n;
	double sx;
	double sxx;
	uint32_t overflow;
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
		FloatState r;
		double tmp;

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
		float v;

		memcpy(&v, raw, 4);
		return v;
	}
	double v;

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
	uint64_t w0;
	uint64_t w1;
	uint64_t row;
	uint32_t valid;
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
	int64_t v = agg_int_value(kind, raw);
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
	uint64_t v[2] = {0, 0};

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
	return static_cast<__int128>((static_cast<unsigned __int128>(static_cast<uint64_t>(hi)) << 64) |
								 lo);
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
						 (static_cast<unsigned __int128>(r.sum2_hi) << 64) | r.sum2_lo, r.sum2_top,
						 r.count};
}

inline FloatState
float_from(const GpuopsAggResult &r)
{
	return FloatState{static_cast<double>(r.count), r.sx, r.sxx, r.overflow};
}

} /* namespace gpuops */

#endif /* GPUOPS_AGG_STATE_HPP */
