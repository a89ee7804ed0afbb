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
 *
 * The interpreter's helpers are in parts, each with its own header, all
 * included here so that including expr_eval.hpp gives the whole of it:
 *   expr_scalar.hpp   integer, float, date and timestamp words: limits,
 *                     comparisons, arithmetic and casts
 *   expr_numeric.hpp  numerics as scaled integers and their operations
 *   expr_check.hpp    a program's validation, and which steps may RECHECK
 * This file holds the interpreter itself (expr_eval), whose one switch
 * dispatches on every operation.
 */
#ifndef GPUOPS_EXPR_EVAL_HPP
#define GPUOPS_EXPR_EVAL_HPP

#include <math.h>
#include <string.h>

#include "gpuops_device.h"
#include "hd.hpp"

#include "expr_scalar.hpp"
#include "expr_numeric.hpp"
#include "expr_check.hpp"

namespace gpuops {

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
	uint64_t w[GPUOPS_EXPR_MAX_STACK];
	bool n[GPUOPS_EXPR_MAX_STACK];
	uint64_t lw[GPUOPS_EXPR_MAX_LOCALS];
	bool ln[GPUOPS_EXPR_MAX_LOCALS];
	int sp = 0;

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
					bool an = n[sp - 2], bn = n[sp - 1];
					uint64_t a = w[sp - 2], b = w[sp - 1];
					int c;

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
						__int128 x, y;
						int sc;

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
					n[sp - 1] = true; /* strict */
					break;
				}
				if (s.type == GPUOPS_ET_NUM)
				{
					if (!expr_num_op(s.op, w[sp - 1], w[sp], &w[sp - 1]))
						return GPUOPS_EXPR_RECHECK;
				}
				else if (s.type == GPUOPS_ET_FLOAT && s.sub == 4)
				{
					float r;

					if (!expr_float_op<float>(s.op, (float) expr_as_double(w[sp - 1]),
											  (float) expr_as_double(w[sp]), &r))
						return GPUOPS_EXPR_RECHECK;
					w[sp - 1] = expr_from_double((double) r);
				}
				else if (s.type == GPUOPS_ET_FLOAT)
				{
					double r;

					if (!expr_float_op<double>(s.op, expr_as_double(w[sp - 1]),
											   expr_as_double(w[sp]), &r))
						return GPUOPS_EXPR_RECHECK;
					w[sp - 1] = expr_from_double(r);
				}
				else
				{
					int64_t r;

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
					int64_t m = expr_num_mantissa(w[sp - 1]);

					/* the mantissa's range is symmetric; NaN and infinities stay unknown */
					if (expr_num_known(w[sp - 1]))
						w[sp - 1] = expr_num_word(s.op == GPUOPS_EOP_NEG || m < 0 ? -(__int128) m
																				  : m,
												  expr_num_scale(w[sp - 1]));
				}
				else if (s.type == GPUOPS_ET_FLOAT)
				{
					double d = expr_as_double(w[sp - 1]);

					w[sp - 1] = expr_from_double(s.op == GPUOPS_EOP_NEG ? -d : fabs(d));
				}
				else
				{
					int64_t r;

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
					int64_t r;

					if (!expr_num_to_int(w[sp - 1], s.sub, &r))
						return GPUOPS_EXPR_RECHECK;
					w[sp - 1] = (uint64_t) r;
				}
				else if (s.type == GPUOPS_ET_FLOAT)
				{
					int64_t r;

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
					double r;

					if (!expr_num_to_float(w[sp - 1], s.sub, &r))
						return GPUOPS_EXPR_RECHECK;
					w[sp - 1] = expr_from_double(r);
				}
				else if (s.type == GPUOPS_ET_INT)
				{
					int64_t i = (int64_t) w[sp - 1];

					w[sp - 1] = expr_from_double(s.sub == 4 ? (double) (float) i : (double) i);
				}
				else if (s.sub == 4)
				{
					/* dtof: overflow and underflow are errors */
					double d = expr_as_double(w[sp - 1]);
					float f = (float) d;

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
					int64_t d = (int64_t) w[sp - 1];
					int64_t r = s.sub ? d - (int64_t) w[sp] : d + (int64_t) w[sp];

					if (d == kDateNoBegin || d == kDateNoEnd)
						break; /* infinity stays itself */
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
					int64_t t = (int64_t) w[sp - 1];
					__int128 r = t;
					int64_t days = (int64_t) consts[s.arg], usecs = (int64_t) consts[s.arg + 1];

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
					bool ts = s.op == GPUOPS_EOP_TS_MI;
					int64_t no_begin = ts ? kTimestampNoBegin : kDateNoBegin,
							no_end = ts ? kTimestampNoEnd : kDateNoEnd;
					int64_t a = (int64_t) w[sp - 1], b = (int64_t) w[sp];
					__int128 r = (__int128) a - b;

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
					int64_t d = (int64_t) w[sp - 1];
					int64_t t;

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
						t = d * kUsecsPerDay; /* dates start where timestamps do */
					w[sp - 1] = (uint64_t) t;
				}
				break;
			case GPUOPS_EOP_NOT:
				w[sp - 1] = !w[sp - 1];
				break;
			case GPUOPS_EOP_AND:
			case GPUOPS_EOP_OR:
				{
					bool an = n[sp - 2], bn = n[sp - 1];
					bool a = w[sp - 2] != 0, b = w[sp - 1] != 0;
					bool decisive = s.op == GPUOPS_EOP_OR; /* TRUE decides OR, FALSE AND */

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
					bool isn = n[sp - 1], v = w[sp - 1] != 0;

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
	uint64_t top = 0;
	bool top_null = true;

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

} /* namespace gpuops */

#endif /* GPUOPS_EXPR_EVAL_HPP */
