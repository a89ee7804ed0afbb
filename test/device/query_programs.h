/*
 * query_programs.h
 *    The device programs the query block tests use (built step by step,
 *    expr_build.h), each with the plain C++ that says what it answers,
 *    attached to a case: quals, FILTERs, key and argument programs, some
 *    of which stop (RECHECK) where PostgreSQL would raise an error.
 */
#ifndef QUERY_PROGRAMS_H
#define QUERY_PROGRAMS_H

#include <cmath>

#include "query_ref.h"

namespace dt {

/* A predicate program and its answer. */
struct QPred
{
	const GpuopsExprProgram *prog;
	PredFn fn;
};

/* A value program and its answer. */
struct QValue
{
	const GpuopsExprProgram *prog;
	ValueFn fn;
};

inline int64_t
i64(const QCase &c, int col, uint64_t i)
{
	return static_cast<int64_t>(c.cols[col].w[i]);
}

/* SQL's comparison of an int column with a constant: 1, 0, or -1 for NULL */
inline int
cmp3(const QCase &c, int col, uint64_t i, GpuopsExprCmp op, int64_t k)
{
	int64_t v = i64(c, col, i);

	if (c.cols[col].is_null(i))
		return -1;
	switch (op)
	{
		case GPUOPS_CMP_LT:
			return v < k;
		case GPUOPS_CMP_GE:
			return v >= k;
		case GPUOPS_CMP_GT:
			return v > k;
		default:
			return v == k;
	}
}

inline Verdict
verdict_of(int v3)
{
	return v3 == 1 ? V_TRUE : V_FALSE;
}

/* col op k (integers) */
inline QPred
pred_cmp(QCase &c, int col, GpuopsExprCmp op, int64_t k)
{
	ProgramBuilder p;

	p.outer(col).constant(static_cast<uint64_t>(k)).cmp(op, GPUOPS_ET_INT);
	return QPred{c.own(p.program()), [col, op, k](const QCase &cc, uint64_t i) {
					 return verdict_of(cmp3(cc, col, i, op, k));
				 }};
}

/* a < ka AND b >= kb, three-valued */
inline QPred
pred_range(QCase &c, int a, int64_t ka, int b, int64_t kb)
{
	ProgramBuilder p;

	p.outer(a).constant(static_cast<uint64_t>(ka)).cmp(GPUOPS_CMP_LT, GPUOPS_ET_INT);
	p.outer(b).constant(static_cast<uint64_t>(kb)).cmp(GPUOPS_CMP_GE, GPUOPS_ET_INT);
	p.step(GPUOPS_EOP_AND);
	return QPred{c.own(p.program()), [a, ka, b, kb](const QCase &cc, uint64_t i) {
					 return verdict_of(and3(cmp3(cc, a, i, GPUOPS_CMP_LT, ka),
											cmp3(cc, b, i, GPUOPS_CMP_GE, kb)));
				 }};
}

/* (a / b) > 0 in int8: stops where b is 0 (int8div's "division by zero") */
inline QPred
pred_div_positive(QCase &c, int a, int b)
{
	ProgramBuilder p;

	p.outer(a).outer(b).step(GPUOPS_EOP_DIV, GPUOPS_ET_INT, 8);
	p.constant(0).cmp(GPUOPS_CMP_GT, GPUOPS_ET_INT);
	return QPred{c.own(p.program()), [a, b](const QCase &cc, uint64_t i) {
					 int64_t x = i64(cc, a, i), y = i64(cc, b, i);

					 if (cc.cols[a].is_null(i) || cc.cols[b].is_null(i))
						 return V_FALSE;
					 if (y == 0 || (y == -1 && x == INT64_MIN))
						 return V_RECHECK;
					 return x / y > 0 ? V_TRUE : V_FALSE;
				 }};
}

/* a + b in int4: stops past int4 (int4pl's "integer out of range") */
inline QValue
value_add4(QCase &c, int a, int b)
{
	ProgramBuilder p;

	p.outer(a).outer(b).step(GPUOPS_EOP_ADD, GPUOPS_ET_INT, 4);
	return QValue{c.own(p.program()), [a, b](const QCase &cc, uint64_t i) {
					  Val v;
					  int64_t r = i64(cc, a, i) + i64(cc, b, i);

					  v.null = cc.cols[a].is_null(i) || cc.cols[b].is_null(i);
					  v.recheck = !v.null && (r < INT32_MIN || r > INT32_MAX);
					  v.w = v.null ? 0 : static_cast<uint64_t>(r);
					  return v;
				  }};
}

/* a * b in int8: stops past int8 */
inline QValue
value_mul8(QCase &c, int a, int b)
{
	ProgramBuilder p;

	p.outer(a).outer(b).step(GPUOPS_EOP_MUL, GPUOPS_ET_INT, 8);
	return QValue{c.own(p.program()), [a, b](const QCase &cc, uint64_t i) {
					  Val v;
					  __int128 r = static_cast<__int128>(i64(cc, a, i)) * i64(cc, b, i);

					  v.null = cc.cols[a].is_null(i) || cc.cols[b].is_null(i);
					  v.recheck = !v.null && (r < INT64_MIN || r > INT64_MAX);
					  v.w = v.null || v.recheck ? 0
												: static_cast<uint64_t>(static_cast<int64_t>(r));
					  return v;
				  }};
}

/* a / k in int8 for a constant k > 0: never stops */
inline QValue
value_div_const(QCase &c, int a, int64_t k)
{
	ProgramBuilder p;

	p.outer(a).constant(static_cast<uint64_t>(k)).step(GPUOPS_EOP_DIV, GPUOPS_ET_INT, 8);
	return QValue{c.own(p.program()), [a, k](const QCase &cc, uint64_t i) {
					  Val v;

					  v.null = cc.cols[a].is_null(i);
					  v.w = v.null ? 0 : static_cast<uint64_t>(i64(cc, a, i) / k);
					  return v;
				  }};
}

/* -f for a float8 column: gives -0 for 0 and 0 for -0 */
inline QValue
value_neg_float(QCase &c, int f)
{
	ProgramBuilder p;

	p.outer(f).step(GPUOPS_EOP_NEG, GPUOPS_ET_FLOAT, 8);
	return QValue{c.own(p.program()), [f](const QCase &cc, uint64_t i) {
					  Val v;

					  v.null = cc.cols[f].is_null(i);
					  v.w = v.null ? 0 : double_bits(-as_double(cc.cols[f].w[i]));
					  return v;
				  }};
}

} /* namespace dt */

#endif
