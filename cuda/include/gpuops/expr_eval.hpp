/*
 * expr_eval.hpp
 *    The device expression interpreter (gpuops_device.h describes the
 *    programs), one source for CUDA kernels and the CPU twin so both give
 *    the same answer for every row.
 *
 * Each operation does what PostgreSQL's function for it does (int.c,
 * int8.c, float.h, date.c, timestamp.c) where the result is a value; where
 * PostgreSQL would raise an error, or the operation leaves the range this
 * code reproduces exactly, evaluation stops with GPUOPS_EXPR_RECHECK and
 * PostgreSQL evaluates the row itself.
 */
#ifndef GPUOPS_EXPR_EVAL_HPP
#define GPUOPS_EXPR_EVAL_HPP

#include <math.h>
#include <string.h>

#include "gpuops_device.h"

/* (key_normalize.hpp may have defined it already, as forced inlining) */
#include "hd.hpp"

namespace gpuops {

/* date.h: IS_VALID_DATE, and the infinite dates */
constexpr int64_t kDateMin = -2451545;	/* DATETIME_MIN_JULIAN - POSTGRES_EPOCH_JDATE */
constexpr int64_t kDateEnd = 2145031949;	/* DATE_END_JULIAN - POSTGRES_EPOCH_JDATE */
constexpr int64_t kDateNoBegin = -2147483647 - 1;
constexpr int64_t kDateNoEnd = 2147483647;

/* timestamp.h: IS_VALID_TIMESTAMP, and the infinite timestamps */
constexpr int64_t kTimestampMin = -211813488000000000LL;
constexpr int64_t kTimestampEnd = 9223371331200000000LL;
constexpr int64_t kTimestampNoBegin = -9223372036854775807LL - 1;
constexpr int64_t kTimestampNoEnd = 9223372036854775807LL;
constexpr int64_t kDateTimestampEnd = 106751983;	/* TIMESTAMP_END_JULIAN - POSTGRES_EPOCH_JDATE */
constexpr int64_t kUsecsPerDay = 86400000000LL;

GPUOPS_HD double
expr_as_double(uint64_t w)
{
	double		d;

	memcpy(&d, &w, sizeof(d));
	return d;
}

GPUOPS_HD uint64_t
expr_from_double(double d)
{
	uint64_t	w;

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
			return v >= (__int128) (-9223372036854775807LL - 1) && v <= (__int128) 9223372036854775807LL;
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
			return c != 0;		/* DISTINCT, both sides non-NULL */
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
	__int128	v;

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
			v = b == -1 ? 0 : a % b;	/* INT_MIN % -1 is 0, as int4mod says */
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
	__int128	p = 1;

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
	return (int64_t) w >> kNumScaleBits;	/* arithmetic: the sign stays */
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
	int			sa = expr_num_scale(a),
				sb = expr_num_scale(b);

	*s = sa > sb ? sa : sb;
	*x = (__int128) expr_num_mantissa(a) * expr_pow10(*s - sa);
	*y = (__int128) expr_num_mantissa(b) * expr_pow10(*s - sb);
}

/* m / 10^k (k <= 18) rounded half away from zero, as numeric.c's round_var */
GPUOPS_HD int64_t
expr_num_round(int64_t m, int k)
{
	int64_t		p = (int64_t) expr_pow10(k),
				q = m / p,
				r = m % p;

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
	__int128	x,
				y,
				v;
	int			s;

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
	int64_t		m = expr_num_mantissa(w);
	int			s = expr_num_scale(w);

	if (!expr_num_known(w))
		return false;
	if (width == 4)
	{
		float		f;

		if (s == 0)
			f = (float) m;		/* one rounding of an integer */
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
	int64_t		q;

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
	int			s = expr_num_scale(w);
	__int128	m = expr_num_mantissa(w);

	if (!expr_num_known(w))
		return false;
	m = s <= scale ? m * expr_pow10(scale - s) : expr_num_round((int64_t) m, s - scale);
	if (precision < 36 && (m < 0 ? -m : m) >= expr_pow10(precision))
		return false;
	*r = expr_num_word(m, scale);
	return true;
}

/* float8 or float4 -> integer of `width` (dtoi4 and kin: rint, then range) */
GPUOPS_HD bool
expr_float_to_int(double d, int width, int64_t *r)
{
	double		x = rint(d);
	double		lim = width == 2 ? 32768.0 : width == 4 ? 2147483648.0 : 9223372036854775808.0;

	if (isnan(x) || !(x >= -lim && x < lim))
		return false;
	*r = (int64_t) x;
	return true;
}

/*
 * Evaluates program `p` for one row or pair.  Outer and Inner give a
 * column's word and null flag (word(c), null(c)).  With `value` set, the
 * program's final value (a value program, such as an indexed nested
 * loop's bound) is also returned there and in *value_null, unless the
 * result is RECHECK.
 */
template <class Outer, class Inner>
GPUOPS_HD GpuopsExprResult
expr_eval(const GpuopsExprStep *steps, int nsteps, const uint64_t *consts,
		  const uint8_t *const_null, const Outer &outer, const Inner &inner,
		  uint64_t *value = nullptr, bool *value_null = nullptr)
{
	uint64_t	w[GPUOPS_EXPR_MAX_STACK];
	bool		n[GPUOPS_EXPR_MAX_STACK];
	uint64_t	lw[GPUOPS_EXPR_MAX_LOCALS];
	bool		ln[GPUOPS_EXPR_MAX_LOCALS];
	int			sp = 0;

	for (int pc = 0; pc < nsteps; pc++)
	{
		const GpuopsExprStep s = steps[pc];

		switch (s.op)
		{
			case GPUOPS_EOP_OUTER:
				w[sp] = outer.word(s.arg);
				n[sp++] = outer.null(s.arg);
				break;
			case GPUOPS_EOP_INNER:
				w[sp] = inner.word(s.arg);
				n[sp++] = inner.null(s.arg);
				break;
			case GPUOPS_EOP_CONST:
				w[sp] = consts[s.arg];
				n[sp++] = const_null[s.arg] != 0;
				break;
			case GPUOPS_EOP_PUSH_NULL:
				w[sp] = 0;
				n[sp++] = true;
				break;
			case GPUOPS_EOP_CMP:
				{
					bool		an = n[sp - 2],
								bn = n[sp - 1];
					uint64_t	a = w[sp - 2],
								b = w[sp - 1];
					int			c;

					sp--;
					if (s.sub == GPUOPS_CMP_DISTINCT && (an || bn))
					{
						w[sp - 1] = an != bn;
						n[sp - 1] = false;
						break;
					}
					if (an || bn)
					{
						w[sp - 1] = 0;
						n[sp - 1] = true;
						break;
					}
					if (s.type == GPUOPS_ET_FLOAT)
						c = expr_float_cmp(expr_as_double(a), expr_as_double(b));
					else if (s.type == GPUOPS_ET_NUM)
					{
						__int128	x,
									y;
						int			sc;

						if (!expr_num_known(a) || !expr_num_known(b))
							return GPUOPS_EXPR_RECHECK;
						expr_num_align(a, b, &x, &y, &sc);
						c = x < y ? -1 : (x > y ? 1 : 0);
					}
					else
						c = (int64_t) a < (int64_t) b ? -1 : ((int64_t) a > (int64_t) b ? 1 : 0);
					w[sp - 1] = expr_cmp_holds(c, s.sub);
					n[sp - 1] = false;
					break;
				}
			case GPUOPS_EOP_ADD:
			case GPUOPS_EOP_SUB:
			case GPUOPS_EOP_MUL:
			case GPUOPS_EOP_DIV:
			case GPUOPS_EOP_MOD:
				sp--;
				if (n[sp - 1] || n[sp])
				{
					n[sp - 1] = true;	/* strict */
					break;
				}
				if (s.type == GPUOPS_ET_NUM)
				{
					if (!expr_num_op(s.op, w[sp - 1], w[sp], &w[sp - 1]))
						return GPUOPS_EXPR_RECHECK;
				}
				else if (s.type == GPUOPS_ET_FLOAT && s.sub == 4)
				{
					float		r;

					if (!expr_float_op<float>(s.op, (float) expr_as_double(w[sp - 1]),
											  (float) expr_as_double(w[sp]), &r))
						return GPUOPS_EXPR_RECHECK;
					w[sp - 1] = expr_from_double((double) r);
				}
				else if (s.type == GPUOPS_ET_FLOAT)
				{
					double		r;

					if (!expr_float_op<double>(s.op, expr_as_double(w[sp - 1]),
											   expr_as_double(w[sp]), &r))
						return GPUOPS_EXPR_RECHECK;
					w[sp - 1] = expr_from_double(r);
				}
				else
				{
					int64_t		r;

					if (!expr_int_op(s.op, s.sub, (int64_t) w[sp - 1], (int64_t) w[sp], &r))
						return GPUOPS_EXPR_RECHECK;
					w[sp - 1] = (uint64_t) r;
				}
				break;
			case GPUOPS_EOP_NEG:
			case GPUOPS_EOP_ABS:
				if (n[sp - 1])
					break;
				if (s.type == GPUOPS_ET_NUM)
				{
					int64_t		m = expr_num_mantissa(w[sp - 1]);

					/* the mantissa's range is symmetric; NaN and infinities stay unknown */
					if (expr_num_known(w[sp - 1]))
						w[sp - 1] = expr_num_word(s.op == GPUOPS_EOP_NEG || m < 0 ? -(__int128) m : m,
												  expr_num_scale(w[sp - 1]));
				}
				else if (s.type == GPUOPS_ET_FLOAT)
				{
					double		d = expr_as_double(w[sp - 1]);

					w[sp - 1] = expr_from_double(s.op == GPUOPS_EOP_NEG ? -d : fabs(d));
				}
				else
				{
					int64_t		r;

					if (!expr_int_op(s.op, s.sub, (int64_t) w[sp - 1], 0, &r))
						return GPUOPS_EXPR_RECHECK;
					w[sp - 1] = (uint64_t) r;
				}
				break;
			case GPUOPS_EOP_TO_INT:
				if (n[sp - 1])
					break;
				if (s.type == GPUOPS_ET_NUM)
				{
					int64_t		r;

					if (!expr_num_to_int(w[sp - 1], s.sub, &r))
						return GPUOPS_EXPR_RECHECK;
					w[sp - 1] = (uint64_t) r;
				}
				else if (s.type == GPUOPS_ET_FLOAT)
				{
					int64_t		r;

					if (!expr_float_to_int(expr_as_double(w[sp - 1]), s.sub, &r))
						return GPUOPS_EXPR_RECHECK;
					w[sp - 1] = (uint64_t) r;
				}
				else if (!expr_fits((int64_t) w[sp - 1], s.sub))
					return GPUOPS_EXPR_RECHECK;
				break;
			case GPUOPS_EOP_TO_FLOAT:
				if (n[sp - 1])
					break;
				if (s.type == GPUOPS_ET_NUM)
				{
					double		r;

					if (!expr_num_to_float(w[sp - 1], s.sub, &r))
						return GPUOPS_EXPR_RECHECK;
					w[sp - 1] = expr_from_double(r);
				}
				else if (s.type == GPUOPS_ET_INT)
				{
					int64_t		i = (int64_t) w[sp - 1];

					w[sp - 1] = expr_from_double(s.sub == 4 ? (double) (float) i : (double) i);
				}
				else if (s.sub == 4)
				{
					/* dtof: overflow and underflow are errors */
					double		d = expr_as_double(w[sp - 1]);
					float		f = (float) d;

					if ((isinf(f) && !isinf(d)) || (f == 0.0f && d != 0.0))
						return GPUOPS_EXPR_RECHECK;
					w[sp - 1] = expr_from_double((double) f);
				}
				break;
			case GPUOPS_EOP_TO_NUM:
				/* never an error: a value too wide is one the device does not hold */
				if (!n[sp - 1])
					w[sp - 1] = expr_num_word((int64_t) w[sp - 1], 0);
				break;
			case GPUOPS_EOP_NUM_ROUND:
				if (!n[sp - 1] && !expr_num_typmod(w[sp - 1], s.sub, s.arg, &w[sp - 1]))
					return GPUOPS_EXPR_RECHECK;
				break;
			case GPUOPS_EOP_DATE_PLI:
				sp--;
				if (n[sp - 1] || n[sp])
				{
					n[sp - 1] = true;
					break;
				}
				{
					int64_t		d = (int64_t) w[sp - 1];
					int64_t		r = s.sub ? d - (int64_t) w[sp] : d + (int64_t) w[sp];

					if (d == kDateNoBegin || d == kDateNoEnd)
						break;	/* infinity stays itself */
					if (r < kDateMin || r >= kDateEnd)
						return GPUOPS_EXPR_RECHECK;
					w[sp - 1] = (uint64_t) r;
				}
				break;
			case GPUOPS_EOP_TS_PL:
				/* timestamp +/- an interval of days (consts[arg]) and time (consts[arg + 1]) */
				if (n[sp - 1])
					break;
				{
					int64_t		t = (int64_t) w[sp - 1];
					__int128	r = t;
					int64_t		days = (int64_t) consts[s.arg],
								usecs = (int64_t) consts[s.arg + 1];

					if (t == kTimestampNoBegin || t == kTimestampNoEnd)
						break;
					/* PostgreSQL adds the days and then the time, checking each */
					r += s.sub ? -(__int128) days : (__int128) days;
					if (r < kTimestampMin || r >= kTimestampEnd)
						return GPUOPS_EXPR_RECHECK;
					r += s.sub ? -(__int128) usecs : (__int128) usecs;
					if (r < kTimestampMin || r >= kTimestampEnd)
						return GPUOPS_EXPR_RECHECK;
					w[sp - 1] = (uint64_t) (int64_t) r;
				}
				break;
			case GPUOPS_EOP_DATE_MI:
			case GPUOPS_EOP_TS_MI:
				sp--;
				if (n[sp - 1] || n[sp])
				{
					n[sp - 1] = true;
					break;
				}
				{
					bool		ts = s.op == GPUOPS_EOP_TS_MI;
					int64_t		no_begin = ts ? kTimestampNoBegin : kDateNoBegin,
								no_end = ts ? kTimestampNoEnd : kDateNoEnd;
					int64_t		a = (int64_t) w[sp - 1],
								b = (int64_t) w[sp];
					__int128	r = (__int128) a - b;

					/* PostgreSQL: "cannot subtract infinite dates/timestamps" */
					if (a == no_begin || a == no_end || b == no_begin || b == no_end)
						return GPUOPS_EXPR_RECHECK;
					/*
					 * Finite dates differ by less than 2^31; PostgreSQL's own
					 * timestamp difference wraps past 64 bits: let it compute that.
					 */
					if (r < INT64_MIN || r > INT64_MAX)
						return GPUOPS_EXPR_RECHECK;
					w[sp - 1] = (uint64_t) (int64_t) r;
				}
				break;
			case GPUOPS_EOP_DATE_TS:
				if (n[sp - 1])
					break;
				{
					int64_t		d = (int64_t) w[sp - 1];
					int64_t		t;

					if (d == kDateNoBegin)
						t = kTimestampNoBegin;
					else if (d == kDateNoEnd)
						t = kTimestampNoEnd;
					else if (d >= kDateTimestampEnd)
					{
						/* the cast fails; a comparison (date_cmp_timestamp) does not */
						if (!s.sub)
							return GPUOPS_EXPR_RECHECK;
						t = kTimestampNoEnd - 1;
					}
					else
						t = d * kUsecsPerDay;	/* dates start where timestamps do */
					w[sp - 1] = (uint64_t) t;
				}
				break;
			case GPUOPS_EOP_NOT:
				w[sp - 1] = !w[sp - 1];
				break;
			case GPUOPS_EOP_AND:
			case GPUOPS_EOP_OR:
				{
					bool		an = n[sp - 2],
								bn = n[sp - 1];
					bool		a = w[sp - 2] != 0,
								b = w[sp - 1] != 0;
					bool		decisive = s.op == GPUOPS_EOP_OR;	/* TRUE decides OR, FALSE AND */

					sp--;
					if ((!an && a == decisive) || (!bn && b == decisive))
					{
						w[sp - 1] = decisive;
						n[sp - 1] = false;
					}
					else if (an || bn)
						n[sp - 1] = true;
					else
						w[sp - 1] = !decisive;
					break;
				}
			case GPUOPS_EOP_JUMP_IF_FALSE:
				if (!n[sp - 1] && w[sp - 1] == 0)
					pc = s.arg - 1;
				break;
			case GPUOPS_EOP_JUMP_IF_TRUE:
				if (!n[sp - 1] && w[sp - 1] != 0)
					pc = s.arg - 1;
				break;
			case GPUOPS_EOP_JUMP_UNLESS_TRUE:
				sp--;
				if (n[sp] || w[sp] == 0)
					pc = s.arg - 1;
				break;
			case GPUOPS_EOP_JUMP:
				pc = s.arg - 1;
				break;
			case GPUOPS_EOP_IS_NULL:
				w[sp - 1] = s.sub ? !n[sp - 1] : n[sp - 1];
				n[sp - 1] = false;
				break;
			case GPUOPS_EOP_BOOL_TEST:
				{
					bool		isn = n[sp - 1],
								v = w[sp - 1] != 0;

					switch (s.sub)
					{
						case GPUOPS_BT_IS_TRUE:
							w[sp - 1] = !isn && v;
							break;
						case GPUOPS_BT_IS_NOT_TRUE:
							w[sp - 1] = isn || !v;
							break;
						case GPUOPS_BT_IS_FALSE:
							w[sp - 1] = !isn && !v;
							break;
						default:
							w[sp - 1] = isn || v;
							break;
					}
					n[sp - 1] = false;
					break;
				}
			case GPUOPS_EOP_STORE:
				lw[s.arg] = w[sp - 1];
				ln[s.arg] = n[sp - 1];
				break;
			case GPUOPS_EOP_LOAD:
				w[sp] = lw[s.arg];
				n[sp++] = ln[s.arg];
				break;
			case GPUOPS_EOP_POP:
				sp--;
				break;
			default:
				return GPUOPS_EXPR_RECHECK;
		}
	}
	uint64_t	top = 0;
	bool		top_null = true;

	if (sp > 0)
	{
		top = w[sp - 1];
		top_null = n[sp - 1];
	}
	if (value)
	{
		*value = top;
		*value_null = top_null;
	}
	return (!top_null && top != 0) ? GPUOPS_EXPR_TRUE : GPUOPS_EXPR_FALSE;
}

/*
 * Can this step stop a program with RECHECK (an operation PostgreSQL may
 * fail)?  Conservative: only reading, comparing and the logic are sure not
 * to.  The planner of the indexed nested loop uses it.
 */
inline bool
expr_step_may_recheck(const GpuopsExprStep *s)
{
	switch (s->op)
	{
		case GPUOPS_EOP_OUTER:
		case GPUOPS_EOP_INNER:
		case GPUOPS_EOP_CONST:
		case GPUOPS_EOP_CMP:
		case GPUOPS_EOP_NOT:
		case GPUOPS_EOP_AND:
		case GPUOPS_EOP_OR:
		case GPUOPS_EOP_JUMP_IF_FALSE:
		case GPUOPS_EOP_JUMP_IF_TRUE:
		case GPUOPS_EOP_JUMP_UNLESS_TRUE:
		case GPUOPS_EOP_JUMP:
		case GPUOPS_EOP_IS_NULL:
		case GPUOPS_EOP_BOOL_TEST:
		case GPUOPS_EOP_STORE:
		case GPUOPS_EOP_LOAD:
		case GPUOPS_EOP_POP:
		case GPUOPS_EOP_PUSH_NULL:
			return false;
		default:
			return true;
	}
}

/*
 * Operations whose `type` is their operands' kind (INT, FLOAT or NUM):
 * comparisons, arithmetic, and the casts to integers and floats.
 */
inline bool
expr_op_reads_kind(int op)
{
	switch (op)
	{
		case GPUOPS_EOP_CMP:
		case GPUOPS_EOP_ADD:
		case GPUOPS_EOP_SUB:
		case GPUOPS_EOP_MUL:
		case GPUOPS_EOP_DIV:
		case GPUOPS_EOP_MOD:
		case GPUOPS_EOP_NEG:
		case GPUOPS_EOP_ABS:
		case GPUOPS_EOP_TO_INT:
		case GPUOPS_EOP_TO_FLOAT:
			return true;
		default:
			return false;
	}
}

/*
 * Does this step stop a program (RECHECK) only where PostgreSQL raises an
 * error?  Not numeric steps (a value the device does not hold), nor a
 * timestamp difference past 64 bits (PostgreSQL's wraps).  A program all
 * of whose steps do can compute a value whose rows are never decided by
 * PostgreSQL but to raise that error (an aggregate's input).
 */
inline bool
expr_step_stops_with_error(const GpuopsExprStep *s)
{
	if (s->op == GPUOPS_EOP_TO_NUM || s->op == GPUOPS_EOP_NUM_ROUND || s->op == GPUOPS_EOP_TS_MI)
		return false;
	return !expr_op_reads_kind(s->op) || s->type != GPUOPS_ET_NUM;
}

/*
 * Checks a program before it runs: known operations, arguments in range,
 * forward jumps, and a stack that stays within GPUOPS_EXPR_MAX_STACK when
 * counted in program order (which never undercounts: every jump skips
 * code that leaves one value more).  Returns NULL or what is wrong.
 */
inline const char *
expr_validate(const GpuopsExprProgram *p, int outer_ncols, int inner_ncols)
{
	int			depth = 0;

	if (p->nsteps < 1 || p->nsteps > GPUOPS_EXPR_MAX_STEPS || p->nconsts < 0 ||
		p->nconsts > GPUOPS_EXPR_MAX_CONSTS)
		return "program size out of range";
	for (int pc = 0; pc < p->nsteps; pc++)
	{
		const GpuopsExprStep *s = &p->steps[pc];
		int			pops = 0,
					pushes = 0;

		switch (s->op)
		{
			case GPUOPS_EOP_OUTER:
				if (s->arg < 0 || s->arg >= outer_ncols)
					return "outer column out of range";
				pushes = 1;
				break;
			case GPUOPS_EOP_INNER:
				if (s->arg < 0 || s->arg >= inner_ncols)
					return "inner column out of range";
				pushes = 1;
				break;
			case GPUOPS_EOP_CONST:
				if (s->arg < 0 || s->arg >= p->nconsts)
					return "constant out of range";
				pushes = 1;
				break;
			case GPUOPS_EOP_TS_PL:
				if (s->arg < 0 || s->arg + 1 >= p->nconsts)
					return "constant out of range";
				pops = pushes = 1;
				break;
			case GPUOPS_EOP_PUSH_NULL:
				pushes = 1;
				break;
			case GPUOPS_EOP_CMP:
			case GPUOPS_EOP_ADD:
			case GPUOPS_EOP_SUB:
			case GPUOPS_EOP_MUL:
			case GPUOPS_EOP_DIV:
			case GPUOPS_EOP_MOD:
			case GPUOPS_EOP_DATE_PLI:
			case GPUOPS_EOP_DATE_MI:
			case GPUOPS_EOP_TS_MI:
			case GPUOPS_EOP_AND:
			case GPUOPS_EOP_OR:
				pops = 2;
				pushes = 1;
				break;
			case GPUOPS_EOP_NEG:
			case GPUOPS_EOP_ABS:
			case GPUOPS_EOP_TO_INT:
			case GPUOPS_EOP_TO_FLOAT:
			case GPUOPS_EOP_TO_NUM:
			case GPUOPS_EOP_DATE_TS:
			case GPUOPS_EOP_NOT:
			case GPUOPS_EOP_IS_NULL:
			case GPUOPS_EOP_BOOL_TEST:
			case GPUOPS_EOP_JUMP_IF_FALSE:
			case GPUOPS_EOP_JUMP_IF_TRUE:
				pops = pushes = 1;
				break;
			case GPUOPS_EOP_JUMP_UNLESS_TRUE:
			case GPUOPS_EOP_POP:
				pops = 1;
				break;
			case GPUOPS_EOP_JUMP:
				break;
			case GPUOPS_EOP_STORE:
				if (s->arg < 0 || s->arg >= GPUOPS_EXPR_MAX_LOCALS)
					return "local out of range";
				pops = pushes = 1;
				break;
			case GPUOPS_EOP_NUM_ROUND:
				if (s->sub > kNumMaxScale || s->arg < 1)
					return "numeric typmod out of range";
				pops = pushes = 1;
				break;
			case GPUOPS_EOP_LOAD:
				if (s->arg < 0 || s->arg >= GPUOPS_EXPR_MAX_LOCALS)
					return "local out of range";
				pushes = 1;
				break;
			default:
				return "unknown operation";
		}
		if (s->op == GPUOPS_EOP_JUMP || s->op == GPUOPS_EOP_JUMP_IF_FALSE ||
			s->op == GPUOPS_EOP_JUMP_IF_TRUE || s->op == GPUOPS_EOP_JUMP_UNLESS_TRUE)
		{
			if (s->arg <= pc || s->arg > p->nsteps)
				return "jump out of range";
		}
		if (depth < pops)
			return "stack underflow";
		depth += pushes - pops;
		if (depth > GPUOPS_EXPR_MAX_STACK)
			return "stack overflow";
	}
	return depth < 1 ? "no result" : nullptr;
}

}								/* namespace gpuops */

#endif
