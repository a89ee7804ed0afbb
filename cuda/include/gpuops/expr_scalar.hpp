/*
 * expr_scalar.hpp
 *    The device expression interpreter's words other than numerics: the
 *    date and timestamp limits, floats kept in a word, the integer range
 *    checks, comparisons, and integer and float arithmetic and casts.
 *
 * One part of the interpreter (expr_eval.hpp includes every part; include
 * that).  Split from expr_eval.hpp so that each kind of value's rules can be
 * read, and checked against PostgreSQL's, on their own; nothing here depends
 * on the interpreter.  Every function is GPUOPS_HD: the CUDA kernels, the
 * CPU twin and src/ compile the same source.
 */
#ifndef GPUOPS_EXPR_SCALAR_HPP
#define GPUOPS_EXPR_SCALAR_HPP

#include <math.h>
#include <string.h>

#include "gpuops_device.h"
#include "hd.hpp"

namespace gpuops {

/* date.h: IS_VALID_DATE, and the infinite dates */
constexpr int64_t kDateMin = -2451545;	 /* DATETIME_MIN_JULIAN - POSTGRES_EPOCH_JDATE */
constexpr int64_t kDateEnd = 2145031949; /* DATE_END_JULIAN - POSTGRES_EPOCH_JDATE */
constexpr int64_t kDateNoBegin = -2147483647 - 1;
constexpr int64_t kDateNoEnd = 2147483647;

/* timestamp.h: IS_VALID_TIMESTAMP, and the infinite timestamps */
constexpr int64_t kTimestampMin = -211813488000000000LL;
constexpr int64_t kTimestampEnd = 9223371331200000000LL;
constexpr int64_t kTimestampNoBegin = -9223372036854775807LL - 1;
constexpr int64_t kTimestampNoEnd = 9223372036854775807LL;
constexpr int64_t kDateTimestampEnd = 106751983; /* TIMESTAMP_END_JULIAN - POSTGRES_EPOCH_JDATE */
constexpr int64_t kUsecsPerDay = 86400000000LL;

GPUOPS_HD double
expr_as_double(uint64_t w)
{
	double d;

	memcpy(&d, &w, sizeof(d));
	return d;
}

GPUOPS_HD uint64_t
expr_from_double(double d)
{
	uint64_t w;

	memcpy(&w, &d, sizeof(w));
	return w;
}

/* Does v fit an integer of `width` bytes? */
GPUOPS_HD bool
expr_fits(__int128 v, int width)
{
	switch (width)
	{
		case 2:
			return v >= -32768 && v <= 32767;
		case 4:
			return v >= -2147483647 - 1 && v <= 2147483647;
		default:
			return v >= (__int128) (-9223372036854775807LL - 1) &&
				v <= (__int128) 9223372036854775807LL;
	}
}

/* float8_cmp_internal: NaNs equal each other and sort above everything, -0 == 0 */
GPUOPS_HD int
expr_float_cmp(double a, double b)
{
	if (isnan(a))
		return isnan(b) ? 0 : 1;
	if (isnan(b))
		return -1;
	return a > b ? 1 : (a < b ? -1 : 0);
}

GPUOPS_HD bool
expr_cmp_holds(int c, int sub)
{
	switch (sub)
	{
		case GPUOPS_CMP_EQ:
			return c == 0;
		case GPUOPS_CMP_NE:
			return c != 0;
		case GPUOPS_CMP_LT:
			return c < 0;
		case GPUOPS_CMP_LE:
			return c <= 0;
		case GPUOPS_CMP_GT:
			return c > 0;
		case GPUOPS_CMP_GE:
			return c >= 0;
		default:
			return c != 0; /* DISTINCT, both sides non-NULL */
	}
}

/*
 * Float arithmetic as float.h's float8_pl/mi/mul/div (width 8) and the
 * float4_ versions (width 4, in single precision).  false: PostgreSQL
 * raises an error (overflow, underflow, division by zero).  The _rn
 * intrinsics keep nvcc from fusing a multiply into a later add.
 */
template <typename F>
GPUOPS_HD bool
expr_float_op(int op, F a, F b, F *r)
{
	switch (op)
	{
		case GPUOPS_EOP_ADD:
		case GPUOPS_EOP_SUB:
			if (op == GPUOPS_EOP_SUB)
				b = -b;
#ifdef __CUDA_ARCH__
			if constexpr (sizeof(F) == 4)
				*r = __fadd_rn(a, b);
			else
				*r = __dadd_rn(a, b);
#else
			*r = a + b;
#endif
			return !(isinf(*r) && !isinf(a) && !isinf(b));
		case GPUOPS_EOP_MUL:
#ifdef __CUDA_ARCH__
			if constexpr (sizeof(F) == 4)
				*r = __fmul_rn(a, b);
			else
				*r = __dmul_rn(a, b);
#else
			*r = a * b;
#endif
			if (isinf(*r) && !isinf(a) && !isinf(b))
				return false;
			return !(*r == 0 && a != 0 && b != 0);
		case GPUOPS_EOP_DIV:
			if (b == 0 && !isnan(a))
				return false;
#ifdef __CUDA_ARCH__
			if constexpr (sizeof(F) == 4)
				*r = __fdiv_rn(a, b);
			else
				*r = __ddiv_rn(a, b);
#else
			*r = a / b;
#endif
			if (isinf(*r) && !isinf(a))
				return false;
			return !(*r == 0 && a != 0 && !isinf(b));
		default:
			return false;
	}
}

/*
 * Integer arithmetic (int.c, int8.c): the operands widened to 64 bits, the
 * result checked against the result type's width.  false: PostgreSQL
 * raises an error (out of range, division by zero).
 */
GPUOPS_HD bool
expr_int_op(int op, int width, int64_t a, int64_t b, int64_t *r)
{
	__int128 v;

	switch (op)
	{
		case GPUOPS_EOP_ADD:
			v = (__int128) a + b;
			break;
		case GPUOPS_EOP_SUB:
			v = (__int128) a - b;
			break;
		case GPUOPS_EOP_MUL:
			v = (__int128) a * b;
			break;
		case GPUOPS_EOP_DIV:
			if (b == 0)
				return false;
			v = b == -1 ? -(__int128) a : (__int128) (a / b);
			break;
		case GPUOPS_EOP_MOD:
			if (b == 0)
				return false;
			v = b == -1 ? 0 : a % b; /* INT_MIN % -1 is 0, as int4mod says */
			break;
		case GPUOPS_EOP_NEG:
			v = -(__int128) a;
			break;
		case GPUOPS_EOP_ABS:
			v = a < 0 ? -(__int128) a : (__int128) a;
			break;
		default:
			return false;
	}
	if (!expr_fits(v, width))
		return false;
	*r = (int64_t) v;
	return true;
}

/* float8 or float4 -> integer of `width` (dtoi4 and kin: rint, then range) */
GPUOPS_HD bool
expr_float_to_int(double d, int width, int64_t *r)
{
	double x = rint(d);
	double lim = width == 2 ? 32768.0 : width == 4 ? 2147483648.0 : 9223372036854775808.0;

	if (isnan(x) || !(x >= -lim && x < lim))
		return false;
	*r = (int64_t) x;
	return true;
}

} /* namespace gpuops */

#endif /* GPUOPS_EXPR_SCALAR_HPP */
