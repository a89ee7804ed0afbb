/*
 * expr_numeric.hpp
 *    The device expression interpreter's numerics: a numeric as a scaled
 *    integer in one word, and numeric_add/_sub/_mul/_mod, the casts to
 *    floats and integers and the typmod check on that form, exactly as
 *    numeric.c computes them.
 *
 * One part of the interpreter (expr_eval.hpp includes every part; include
 * that).  src/ reads and writes the same word format when it stages a
 * numeric column or constant (src/expr/device_expr_values.cpp).
 */
#ifndef GPUOPS_EXPR_NUMERIC_HPP
#define GPUOPS_EXPR_NUMERIC_HPP

#include <math.h>
#include <string.h>

#include "gpuops_device.h"
#include "hd.hpp"
#include "expr_scalar.hpp"

namespace gpuops {

/*
 * Numerics.  A word holds an integer mantissa m (59 bits, signed) and a
 * scale s (0..18) in its low 5 bits: the value m / 10^s, exactly.  Scale
 * 31 marks a value the device does not hold (NaN, an infinity, more digits
 * than fit); every operation that reads one asks PostgreSQL (RECHECK),
 * while IS NULL and the like, which do not read it, need not.  A word
 * carries the value, not PostgreSQL's display scale: nothing the device
 * computes shows a display scale (comparisons, casts to integers and
 * floats, and typmod checks look only at the value), so a result may drop
 * trailing zeros to fit.
 */
constexpr int kNumScaleBits = 5;
constexpr int kNumMaxScale = 18;
constexpr uint64_t kNumUnknown = 31;
constexpr int64_t kNumMaxMantissa = (1LL << 58) - 1;

GPUOPS_HD __int128
expr_pow10(int k)
{
	__int128 p = 1;

	for (int i = 0; i < k; i++)
		p *= 10;
	return p;
}

GPUOPS_HD bool
expr_num_known(uint64_t w)
{
	return (w & kNumUnknown) != kNumUnknown;
}

GPUOPS_HD int64_t
expr_num_mantissa(uint64_t w)
{
	return (int64_t) w >> kNumScaleBits; /* arithmetic: the sign stays */
}

GPUOPS_HD int
expr_num_scale(uint64_t w)
{
	return (int) (w & kNumUnknown);
}

/* m / 10^s as a word; trailing zeros dropped where it does not fit as is */
GPUOPS_HD uint64_t
expr_num_word(__int128 m, int s)
{
	while ((s > kNumMaxScale || m > kNumMaxMantissa || m < -kNumMaxMantissa) && s > 0 &&
		   m % 10 == 0)
	{
		m /= 10;
		s--;
	}
	if (s < 0 || s > kNumMaxScale || m > kNumMaxMantissa || m < -kNumMaxMantissa)
		return kNumUnknown;
	return ((uint64_t) (int64_t) m << kNumScaleBits) | (uint64_t) s;
}

/* a and b at their common scale *s (exact: 2^58 * 10^18 fits in 128 bits) */
GPUOPS_HD void
expr_num_align(uint64_t a, uint64_t b, __int128 *x, __int128 *y, int *s)
{
	int sa = expr_num_scale(a), sb = expr_num_scale(b);

	*s = sa > sb ? sa : sb;
	*x = (__int128) expr_num_mantissa(a) * expr_pow10(*s - sa);
	*y = (__int128) expr_num_mantissa(b) * expr_pow10(*s - sb);
}

/* m / 10^k (k <= 18) rounded half away from zero, as numeric.c's round_var */
GPUOPS_HD int64_t
expr_num_round(int64_t m, int k)
{
	int64_t p = (int64_t) expr_pow10(k), q = m / p, r = m % p;

	if (2 * (r < 0 ? -r : r) >= p)
		q += m < 0 ? -1 : 1;
	return q;
}

/*
 * numeric_add, _sub, _mul, _mod exactly.  false: PostgreSQL must decide
 * (an operand the device does not hold, a result too wide for a word, or
 * the division by zero it raises).
 */
GPUOPS_HD bool
expr_num_op(int op, uint64_t a, uint64_t b, uint64_t *r)
{
	__int128 x, y, v;
	int s;

	if (!expr_num_known(a) || !expr_num_known(b))
		return false;
	switch (op)
	{
		case GPUOPS_EOP_ADD:
		case GPUOPS_EOP_SUB:
			expr_num_align(a, b, &x, &y, &s);
			v = op == GPUOPS_EOP_ADD ? x + y : x - y;
			break;
		case GPUOPS_EOP_MUL:
			/* the exact product, at the sum of the scales (mul_var's) */
			v = (__int128) expr_num_mantissa(a) * expr_num_mantissa(b);
			s = expr_num_scale(a) + expr_num_scale(b);
			break;
		case GPUOPS_EOP_MOD:
			/* mod_var: x - trunc(x / y) * y, the sign of x's */
			expr_num_align(a, b, &x, &y, &s);
			if (y == 0)
				return false;
			v = x % y;
			break;
		default:
			return false;
	}
	*r = expr_num_word(v, s);
	return expr_num_known(*r);
}

/*
 * numeric -> float8 or float4 (numeric_float8: the decimal text read by
 * strtod, correctly rounded).  m and 10^s both exact as floating point
 * make one IEEE division the correctly rounded quotient; otherwise false.
 */
GPUOPS_HD bool
expr_num_to_float(uint64_t w, int width, double *r)
{
	int64_t m = expr_num_mantissa(w);
	int s = expr_num_scale(w);

	if (!expr_num_known(w))
		return false;
	if (width == 4)
	{
		float f;

		if (s == 0)
			f = (float) m; /* one rounding of an integer */
		else if (m > -(1LL << 24) && m < (1LL << 24) && s <= 10)
#ifdef __CUDA_ARCH__
			f = __fdiv_rn((float) m, (float) (int64_t) expr_pow10(s));
#else
			f = (float) m / (float) (int64_t) expr_pow10(s);
#endif
		else
			return false;
		*r = (double) f;
		return true;
	}
	if (m <= -(1LL << 53) || m >= (1LL << 53))
		return false;
#ifdef __CUDA_ARCH__
	*r = __ddiv_rn((double) m, (double) (int64_t) expr_pow10(s));
#else
	*r = (double) m / (double) (int64_t) expr_pow10(s);
#endif
	return true;
}

/* numeric -> integer of `width` (numeric_int4 and kin: rounded, then range) */
GPUOPS_HD bool
expr_num_to_int(uint64_t w, int width, int64_t *r)
{
	int64_t q;

	if (!expr_num_known(w))
		return false;
	q = expr_num_round(expr_num_mantissa(w), expr_num_scale(w));
	if (!expr_fits(q, width))
		return false;
	*r = (int64_t) q;
	return true;
}

/*
 * numeric -> numeric(precision, scale) (apply_typmod): rounded to `scale`
 * digits, then an error (false) when the integer part has more than
 * precision - scale digits.
 */
GPUOPS_HD bool
expr_num_typmod(uint64_t w, int scale, int precision, uint64_t *r)
{
	int s = expr_num_scale(w);
	__int128 m = expr_num_mantissa(w);

	if (!expr_num_known(w))
		return false;
	m = s <= scale ? m * expr_pow10(scale - s) : expr_num_round((int64_t) m, s - scale);
	if (precision < 36 && (m < 0 ? -m : m) >= expr_pow10(precision))
		return false;
	*r = expr_num_word(m, scale);
	return true;
}

} /* namespace gpuops */

#endif /* GPUOPS_EXPR_NUMERIC_HPP */
