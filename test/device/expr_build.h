/*
 * expr_build.h
 *    Device programs (gpuops_expr.h) and program columns for the nested
 *    loop and pair filter tests: a few predicates written step by step,
 *    each with the plain C++ that says what it must answer.
 */
#ifndef EXPR_BUILD_H
#define EXPR_BUILD_H

#include "device_test.h"

namespace dt {

/* Appends steps and constants to a program (postfix: operands first). */
class ProgramBuilder
{
  public:
	ProgramBuilder() { memset(&p_, 0, sizeof(p_)); }

	ProgramBuilder &step(GpuopsExprOp op, GpuopsExprType type = GPUOPS_ET_INT, int sub = 0,
						 int arg = 0)
	{
		GpuopsExprStep &s = p_.steps[p_.nsteps++];

		s.op = static_cast<uint8_t>(op);
		s.type = static_cast<uint8_t>(type);
		s.sub = static_cast<uint8_t>(sub);
		s.arg = arg;
		return *this;
	}
	ProgramBuilder &outer(int col) { return step(GPUOPS_EOP_OUTER, GPUOPS_ET_INT, 0, col); }
	ProgramBuilder &inner(int col) { return step(GPUOPS_EOP_INNER, GPUOPS_ET_INT, 0, col); }
	ProgramBuilder &cmp(GpuopsExprCmp c, GpuopsExprType type)
	{
		return step(GPUOPS_EOP_CMP, type, c);
	}
	ProgramBuilder &constant(uint64_t w)
	{
		p_.consts[p_.nconsts] = w;
		p_.const_null[p_.nconsts] = 0;
		return step(GPUOPS_EOP_CONST, GPUOPS_ET_INT, 0, p_.nconsts++);
	}
	const GpuopsExprProgram &program() const { return p_; }

  private:
	GpuopsExprProgram p_;
};

/* What a predicate answers for a pair (GpuopsExprResult's values). */
enum Verdict
{
	V_FALSE = GPUOPS_EXPR_FALSE, /* FALSE or NULL */
	V_TRUE = GPUOPS_EXPR_TRUE,
	V_RECHECK = GPUOPS_EXPR_RECHECK
};

/* One side's program columns: words (sign-extended integers or double bits) and null flags. */
struct ExprSide
{
	int ncols = 0;
	uint64_t n = 0;
	std::vector<uint64_t> words[4];
	std::vector<uint8_t> nulls[4];

	bool null(int c, uint64_t i) const { return nulls[c][i] != 0; }
	int64_t i64(int c, uint64_t i) const { return static_cast<int64_t>(words[c][i]); }
	double f64(int c, uint64_t i) const { return as_double(words[c][i]); }

	/* Rows [from, from + m) as the ABI takes them. */
	GpuopsExprColumns view(uint64_t from, uint64_t m) const
	{
		GpuopsExprColumns cols;

		memset(&cols, 0, sizeof(cols));
		cols.ncols = ncols;
		cols.nrows = m;
		for (int c = 0; c < ncols; c++)
		{
			cols.words[c] = words[c].data() + from;
			cols.nulls[c] = nulls[c].data() + from;
		}
		return cols;
	}
	/* A column of n rows (+ 1 padding row: valid pointers also for 0 rows). */
	void add_column()
	{
		words[ncols].assign(n + 1, 0);
		nulls[ncols].assign(n + 1, 0);
		ncols++;
	}
};

/* SQL's three-valued AND of two comparison results (-1: NULL, 0, 1). */
inline int
and3(int a, int b)
{
	if (a == 0 || b == 0)
		return 0;
	return (a < 0 || b < 0) ? -1 : 1;
}

} /* namespace dt */

#endif
