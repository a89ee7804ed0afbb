/*
 * pairfilter_test.cpp
 *    The pair filter backend (GpuopsPairFilterBackend): one program over
 *    candidate pairs, (o.a + i.b < 1000 as int4) AND (o.f <= i.f as
 *    float8), whose sum may overflow (RECHECK: PostgreSQL would raise an
 *    error) and whose floats include NaNs, -0 and infinities.  The twin's
 *    verdict per pair must be the one written out here in C++; the CUDA
 *    backend's must be the twin's, pair for pair.  One case loads the
 *    outer side twice: the second load must replace the first.
 */
#include "expr_build.h"

#include <algorithm>

namespace dt {
namespace {

enum Data
{
	MIXED, /* 5% NULLs, sums that overflow, special floats */
	ALL_NULL,
	ONE_TRUE /* a = 1, f = -0 and b = 2, f = 0: TRUE (-0 <= 0) */
};

struct PfCase
{
	std::string what;
	Data data;
	uint64_t outer_n;
	uint64_t inner_n;
	uint64_t npairs;
	double skew; /* the fraction of pairs on outer row 0 */
	bool reload; /* load a different outer side first */
};

GpuopsPairFilterSpec
spec_of()
{
	GpuopsPairFilterSpec spec;

	memset(&spec, 0, sizeof(spec));
	spec.program = ProgramBuilder()
					   .outer(0)
					   .inner(0)
					   .step(GPUOPS_EOP_ADD, GPUOPS_ET_INT, 4)
					   .constant(1000)
					   .cmp(GPUOPS_CMP_LT, GPUOPS_ET_INT)
					   .outer(1)
					   .inner(1)
					   .cmp(GPUOPS_CMP_LE, GPUOPS_ET_FLOAT)
					   .step(GPUOPS_EOP_AND)
					   .program();
	spec.outer_ncols = 2;
	spec.inner_ncols = 2;
	return spec;
}

/* Columns a (int4: small, or near either end of the range) and f (float8). */
ExprSide
make_side(uint64_t n, Data data, Rng &rng)
{
	ExprSide s;
	double null_frac = data == ALL_NULL ? 1.0 : 0.05;

	s.n = n;
	s.add_column();
	s.add_column();
	for (uint64_t i = 0; i < n; i++)
	{
		int64_t a = chance(rng, 0.6) ? uniform(rng, -1000, 1500)
			: chance(rng, 0.5)		 ? INT32_MAX - uniform(rng, 0, 1000)
									 : INT32_MIN + uniform(rng, 0, 1000);

		s.words[0][i] = static_cast<uint64_t>(a);
		s.words[1][i] = double_bits(special_double(rng));
		s.nulls[0][i] = chance(rng, null_frac);
		s.nulls[1][i] = chance(rng, null_frac);
		if (data == ONE_TRUE)
		{
			s.words[0][i] = s.n == 1 ? 1 : 2;
			s.words[1][i] = double_bits(s.n == 1 ? -0.0 : 0.0);
			s.nulls[0][i] = s.nulls[1][i] = 0;
		}
	}
	return s;
}

/* The program's answer for outer row o and inner row i. */
Verdict
verdict(const ExprSide &outer, uint64_t o, const ExprSide &inner, uint64_t i)
{
	int sum_lt, f_le;

	if (outer.null(0, o) || inner.null(0, i))
		sum_lt = -1; /* int4pl is strict: NULL, no error */
	else
	{
		int64_t s = outer.i64(0, o) + inner.i64(0, i);

		if (s < INT32_MIN || s > INT32_MAX)
			return V_RECHECK; /* evaluated first, before the AND can decide */
		sum_lt = s < 1000;
	}
	f_le = outer.null(1, o) || inner.null(1, i)
		? -1
		: pg_float_cmp(outer.f64(1, o), inner.f64(1, i)) <= 0;
	return and3(sum_lt, f_le) == 1 ? V_TRUE : V_FALSE;
}

/* begin, both sides (the outer one twice with reload), apply, end. */
std::vector<uint8_t>
run_pairfilter(const GpuopsPairFilterBackend *be, const PfCase &c, const ExprSide &outer,
			   const ExprSide &decoy, const ExprSide &inner, const std::vector<uint32_t> &orows,
			   const std::vector<uint32_t> &irows)
{
	GpuopsPairFilterSpec spec = spec_of();
	GpuopsSettings st = settings_for(64u << 20);
	EndGuard<GpuopsPairFilter> pf(be->pf_end);
	std::vector<uint8_t> results(c.npairs + 1, 0xee);
	GpuopsExprColumns cols;
	uint64_t pairs = 0;
	double ms = 0;

	DT_CALL(be->pf_begin(&st, &spec, &pf.obj));
	if (c.reload)
	{
		cols = decoy.view(0, decoy.n);
		DT_CALL(be->pf_side(pf.obj, 0, &cols));
	}
	cols = outer.view(0, outer.n);
	DT_CALL(be->pf_side(pf.obj, 0, &cols));
	cols = inner.view(0, inner.n);
	DT_CALL(be->pf_side(pf.obj, 1, &cols));
	DT_CALL(be->pf_apply(pf.obj, orows.data(), irows.data(), c.npairs, results.data()));
	be->pf_stats(pf.obj, &pairs, &ms);
	if (pairs != c.npairs)
		throw CallFailed("pf_stats counted " + std::to_string(pairs) + " pairs");
	results.resize(c.npairs);
	return results;
}

std::string
show_verdict(const uint8_t &v)
{
	return v == V_TRUE	 ? "TRUE"
		: v == V_FALSE	 ? "FALSE"
		: v == V_RECHECK ? "RECHECK"
						 : "byte " + std::to_string(v);
}

void
check_pairfilter(Outcome &out, const PfCase &c, uint64_t seed)
{
	Rng rng(seed);
	ExprSide outer = make_side(c.outer_n, c.data, rng);
	ExprSide decoy = make_side(c.outer_n, c.data, rng);
	ExprSide inner = make_side(c.inner_n, c.data, rng);
	std::vector<uint32_t> orows(c.npairs + 1, 0), irows(c.npairs + 1, 0);
	std::vector<uint8_t> want(c.npairs);
	uint64_t ntrue = 0, nrecheck = 0;

	for (uint64_t k = 0; k < c.npairs; k++)
	{
		orows[k] = chance(rng, c.skew) ? 0 : static_cast<uint32_t>(uniform(rng, 0, c.outer_n - 1));
		irows[k] = static_cast<uint32_t>(uniform(rng, 0, c.inner_n - 1));
		want[k] = static_cast<uint8_t>(verdict(outer, orows[k], inner, irows[k]));
		ntrue += want[k] == V_TRUE;
		nrecheck += want[k] == V_RECHECK;
	}
	out.info = std::to_string(ntrue) + " TRUE, " + std::to_string(nrecheck) + " RECHECK";

	std::vector<uint8_t> cpu = run_pairfilter(engines.cpu->pairfilter, c, outer, decoy, inner,
											  orows, irows);

	out.cpu = first_difference<uint8_t>(cpu, want, show_verdict);
	if (!engines.cuda)
		return;
	begin_cuda_side(out);

	std::vector<uint8_t> gpu = run_pairfilter(engines.cuda->pairfilter, c, outer, decoy, inner,
											  orows, irows);

	out.cuda = first_difference<uint8_t>(gpu, cpu, show_verdict);
}

} /* namespace */

void
pairfilter_tests()
{
	const std::vector<PfCase> cases = {
		{"no pairs", MIXED, 100, 100, 0, 0, false},
		{"one pair", ONE_TRUE, 1, 2, 1, 0, false},
		{"all NULL", ALL_NULL, 1000, 1000, 10000, 0, false},
		{"the same outer row in half the pairs", MIXED, 10000, 10000, 200000, 0.5, false},
		{"outer side loaded twice (the second replaces the first)", MIXED, 1000, 1000, 100000, 0,
		 true},
		{"large", MIXED, 100000, 100000, 2000000, 0, false},
	};
	uint64_t seed = 6000;

	for (const PfCase &c : cases)
	{
		std::string title = "pairfilter int4 sum AND float8 <=, " + c.what + ", " +
			std::to_string(c.npairs) + (c.npairs == 1 ? " pair" : " pairs") + " over " +
			std::to_string(c.outer_n) + " x " + std::to_string(c.inner_n) + " rows";
		uint64_t s = seed++;

		run_case(title, [&](Outcome &out) { check_pairfilter(out, c, s); });
	}
}

} /* namespace dt */
