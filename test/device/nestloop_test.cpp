/*
 * nestloop_test.cpp
 *    The nested-loop join backend (GpuopsNestLoopBackend), blocked and
 *    indexed, with predicates written as device programs: an integer range
 *    (i.x BETWEEN o.lo AND o.hi), a float range with strict bounds (NaN
 *    above everything, -0 = 0), and an int4 sum that overflows (pairs to
 *    recheck).  The inner side is loaded in blocks of nl_capacity rows,
 *    the outer side probed in batches of nl_probe_rows, pairs taken in
 *    windows.
 *
 * The twin must return exactly the documented sequence: per block, per
 * batch, outer row by outer row, the inner rows that pass (or need a
 * recheck, flagged) ascending, or for the indexed form in the column's
 * order with ties in row order; with first_only, each chunk of inner rows
 * stops at its first TRUE pair.  The CUDA backend must return the twin's
 * pairs as a multiset (a different order is noted).
 */
#include "expr_build.h"
#include "join_common.h"

#include <algorithm>
#include <numeric>

namespace dt {
namespace {

enum Pred
{
	INT_RANGE,	 /* i.x >= o.lo AND i.x <= o.hi */
	FLOAT_RANGE, /* i.f > o.lo AND i.f < o.hi, float8 */
	INT4_SUM	 /* o.a + i.b < 100, int4: overflow rechecks */
};

enum Data
{
	ONE_MATCH,
	UNIFORM,
	DUPLICATES,
	SKEW,
	ALL_NULL
};

struct NlCase
{
	std::string what;
	Pred pred;
	Data data;
	bool indexed;
	bool first_only;
	uint64_t outer_n;
	uint64_t inner_n;
	size_t budget;
};

GpuopsNestLoopSpec
spec_of(const NlCase &c)
{
	GpuopsNestLoopSpec spec;
	ProgramBuilder p;
	GpuopsExprType t = c.pred == FLOAT_RANGE ? GPUOPS_ET_FLOAT : GPUOPS_ET_INT;
	bool strict = c.pred == FLOAT_RANGE;

	memset(&spec, 0, sizeof(spec));
	if (c.pred == INT4_SUM)
		p.outer(0)
			.inner(0)
			.step(GPUOPS_EOP_ADD, GPUOPS_ET_INT, 4)
			.constant(100)
			.cmp(GPUOPS_CMP_LT, t);
	else
		p.inner(0)
			.outer(0)
			.cmp(strict ? GPUOPS_CMP_GT : GPUOPS_CMP_GE, t)
			.inner(0)
			.outer(1)
			.cmp(strict ? GPUOPS_CMP_LT : GPUOPS_CMP_LE, t)
			.step(GPUOPS_EOP_AND);
	spec.program = p.program();
	spec.outer_ncols = c.pred == INT4_SUM ? 1 : 2;
	spec.inner_ncols = 1;
	spec.first_only = c.first_only;
	spec.index.column = -1;
	if (c.indexed)
	{
		/* the bounds of inner column 0: outer column 0 below, outer column 1 above */
		spec.index.column = 0;
		spec.index.is_float = c.pred == FLOAT_RANGE;
		spec.index.has_lower = spec.index.has_upper = 1;
		spec.index.lower_strict = spec.index.upper_strict = strict;
		spec.index.lower = ProgramBuilder().outer(0).program();
		spec.index.upper = ProgramBuilder().outer(1).program();
	}
	return spec;
}

/* One value for a column of the case's data. */
uint64_t
draw(const NlCase &c, Rng &rng, bool hot_ok)
{
	if (c.pred == FLOAT_RANGE)
		return double_bits(chance(rng, 0.5) ? special_double(rng)
											: std::uniform_real_distribution<double>(-2, 2)(rng));
	if (c.pred == INT4_SUM)
		return static_cast<uint64_t>(chance(rng, 0.5)
										 ? uniform(rng, -100, 300)
										 : (chance(rng, 0.5) ? INT32_MAX - uniform(rng, 0, 1000)
															 : INT32_MIN + uniform(rng, 0, 1000)));
	switch (c.data)
	{
		case DUPLICATES:
			return uniform(rng, 0, 9);
		case SKEW:
			return hot_ok && chance(rng, 0.5) ? 500 : uniform(rng, 0, 99999);
		default:
			return uniform(rng, 0, 999999);
	}
}

void
make_sides(const NlCase &c, uint64_t seed, ExprSide &outer, ExprSide &inner)
{
	Rng rng(seed);
	double null_frac = c.data == ALL_NULL ? 1.0 : 0.02;
	int64_t width = c.data == DUPLICATES ? 2 : 1000;

	outer.n = c.outer_n;
	inner.n = c.inner_n;
	for (int k = 0; k < (c.pred == INT4_SUM ? 1 : 2); k++)
		outer.add_column();
	inner.add_column();
	for (uint64_t i = 0; i < inner.n; i++)
	{
		inner.words[0][i] = c.data == ONE_MATCH ? 5 : draw(c, rng, true);
		inner.nulls[0][i] = chance(rng, null_frac);
	}
	for (uint64_t i = 0; i < outer.n; i++)
	{
		outer.words[0][i] = c.data == ONE_MATCH ? 0 : draw(c, rng, false);
		if (outer.ncols > 1 && c.pred == INT_RANGE)
			/* a range of up to `width`, empty (hi < lo) in one row of 20 */
			outer.words[1][i] = outer.words[0][i] +
				(c.data == ONE_MATCH	 ? 10
					 : chance(rng, 0.05) ? -1
										 : uniform(rng, 0, width));
		else if (outer.ncols > 1)
			outer.words[1][i] = draw(c, rng, false);
		for (int k = 0; k < outer.ncols; k++)
			outer.nulls[k][i] = chance(rng, null_frac);
	}
}

/* What the predicate answers for outer row o and inner row i, written plainly. */
Verdict
verdict(const NlCase &c, const ExprSide &outer, uint64_t o, const ExprSide &inner, uint64_t i)
{
	if (c.pred == INT4_SUM)
	{
		if (outer.null(0, o) || inner.null(0, i))
			return V_FALSE;

		int64_t s = outer.i64(0, o) + inner.i64(0, i);

		if (s < INT32_MIN || s > INT32_MAX)
			return V_RECHECK; /* int4pl raises "integer out of range" */
		return s < 100 ? V_TRUE : V_FALSE;
	}

	int lower, upper;

	if (c.pred == FLOAT_RANGE)
	{
		lower = inner.null(0, i) || outer.null(0, o)
			? -1
			: pg_float_cmp(inner.f64(0, i), outer.f64(0, o)) > 0;
		upper = inner.null(0, i) || outer.null(1, o)
			? -1
			: pg_float_cmp(inner.f64(0, i), outer.f64(1, o)) < 0;
	}
	else
	{
		lower = inner.null(0, i) || outer.null(0, o) ? -1 : inner.i64(0, i) >= outer.i64(0, o);
		upper = inner.null(0, i) || outer.null(1, o) ? -1 : inner.i64(0, i) <= outer.i64(1, o);
	}
	return and3(lower, upper) == 1 ? V_TRUE : V_FALSE;
}

/* Inner rows per first_only chunk, as nestloop_common.hpp cuts a block of n rows. */
uint64_t
chunk_rows(uint64_t n)
{
	uint64_t per = std::max<uint64_t>((n + 63) / 64, 2048);

	return (per + 255) / 256 * 256;
}

/* The rows of block [from, from + n) in the order the outer rows meet them. */
std::vector<uint32_t>
candidate_order(const NlCase &c, const ExprSide &inner, uint64_t from, uint64_t n)
{
	std::vector<uint32_t> rows(n);

	std::iota(rows.begin(), rows.end(), static_cast<uint32_t>(from));
	if (!c.indexed)
		return rows;
	/* the indexed form: rows with the column non-NULL by the column, ties in row order */
	rows.erase(std::remove_if(rows.begin(), rows.end(),
							  [&](uint32_t r) { return inner.null(0, r); }),
			   rows.end());
	std::stable_sort(rows.begin(), rows.end(), [&](uint32_t a, uint32_t b) {
		if (c.pred == FLOAT_RANGE)
			return pg_float_cmp(inner.f64(0, a), inner.f64(0, b)) < 0;
		return inner.i64(0, a) < inner.i64(0, b);
	});
	return rows;
}

/* The pairs of outer rows [o0, o0 + m) against a block, as the twin documents them. */
void
expected_pairs(const NlCase &c, const ExprSide &outer, uint64_t o0, uint64_t m,
			   const ExprSide &inner, uint64_t b0, uint64_t bn, std::vector<uint64_t> &want)
{
	std::vector<uint32_t> cand = candidate_order(c, inner, b0, bn);
	uint64_t chunk = chunk_rows(bn);

	for (uint64_t o = o0; o < o0 + m; o++)
		for (uint64_t j = 0; j < cand.size(); j++)
		{
			Verdict v = verdict(c, outer, o, inner, cand[j]);

			if (v == V_FALSE)
				continue;
			want.push_back(pair_of(o, cand[j] | (v == V_RECHECK ? GPUOPS_NL_RECHECK : 0)));
			if (v == V_TRUE && c.first_only)
				j = (j / chunk + 1) * chunk - 1; /* this chunk has its TRUE pair */
		}
}

struct NlRun : PairWindows
{
	std::vector<uint64_t> want; /* what the twin must return, made alongside */
	GpuopsNestLoopStats stats;
};

/* nl_begin, then per inner block nl_inner and per outer batch nl_probe and its windows. */
NlRun
run_nestloop(const GpuopsNestLoopBackend *be, const NlCase &c, const ExprSide &outer,
			 const ExprSide &inner, bool with_reference)
{
	GpuopsNestLoopSpec spec = spec_of(c);
	GpuopsSettings st = settings_for(c.budget);
	EndGuard<GpuopsNestLoop> nl(be->nl_end);
	NlRun r;

	DT_CALL(be->nl_begin(&st, &spec, &nl.obj));

	uint64_t block = be->nl_capacity(nl.obj);
	uint32_t batch = be->nl_probe_rows(nl.obj);

	if (block == 0 || batch == 0)
		throw CallFailed("nl_capacity or nl_probe_rows is 0");
	for (uint64_t b0 = 0; b0 == 0 || b0 < inner.n; b0 += block)
	{
		uint64_t bn = std::min(block, inner.n - b0);
		GpuopsExprColumns in = inner.view(b0, bn);

		DT_CALL(be->nl_inner(nl.obj, &in));
		for (uint64_t o0 = 0; o0 < outer.n; o0 += batch)
		{
			uint64_t m = std::min<uint64_t>(batch, outer.n - o0);
			GpuopsExprColumns out = outer.view(o0, m);
			GpuopsJoinPairs p;
			PairWindows w;

			memset(&p, 0, sizeof(p));
			DT_CALL(be->nl_probe(nl.obj, &out, &p));
			collect_windows(
				p, o0, [&](GpuopsJoinPairs *next) { return be->nl_next_pairs(nl.obj, next); },
				"nl_next_pairs", w);
			/* inner rows are the block's: make them the side's, keeping the recheck flag */
			for (uint64_t pr : w.pairs)
				r.pairs.push_back(pr + b0);
			r.windows += w.windows;
			r.largest = std::max(r.largest, w.largest);
			if (with_reference)
				expected_pairs(c, outer, o0, m, inner, b0, bn, r.want);
		}
	}
	be->nl_stats(nl.obj, &r.stats);
	return r;
}

std::string
show_nl_pair(const uint64_t &p)
{
	return show_pair(p & ~uint64_t(GPUOPS_NL_RECHECK)) +
		((p & GPUOPS_NL_RECHECK) ? " recheck" : "");
}

void
check_nestloop(Outcome &out, const NlCase &c, uint64_t seed)
{
	ExprSide outer, inner;

	make_sides(c, seed, outer, inner);

	NlRun cpu = run_nestloop(engines.cpu->nestloop, c, outer, inner, true);
	uint64_t rechecks = std::count_if(cpu.want.begin(), cpu.want.end(),
									  [](uint64_t p) { return (p & GPUOPS_NL_RECHECK) != 0; });

	out.info = std::to_string(cpu.want.size()) + " pairs (" + std::to_string(rechecks) +
		" to recheck) in " + std::to_string(cpu.windows) + " windows";
	out.cpu = first_difference<uint64_t>(cpu.pairs, cpu.want, show_nl_pair);
	if (out.cpu.empty() && cpu.largest > window_pairs_for_budget(c.budget))
		out.cpu = "a window of " + std::to_string(cpu.largest) + " pairs";
	if (out.cpu.empty() && (cpu.stats.pairs != cpu.want.size() || cpu.stats.rechecks != rechecks))
		out.cpu = "stats: " + std::to_string(cpu.stats.pairs) + " pairs, " +
			std::to_string(cpu.stats.rechecks) + " rechecks";
	/* bytes_from_device (gpuops_device.h): the twin counts the pairs it handed out */
	if (out.cpu.empty() && cpu.stats.bytes_from_device != cpu.pairs.size() * 8)
		out.cpu = "stats: bytes_from_device " + std::to_string(cpu.stats.bytes_from_device) +
			" for " + std::to_string(cpu.pairs.size()) + " pairs";
	if (!engines.cuda)
		return;
	begin_cuda_side(out);

	NlRun gpu = run_nestloop(engines.cuda->nestloop, c, outer, inner, false);

	out.cuda = compare_multisets(gpu.pairs, cpu.pairs);
	if (out.cuda.empty() && gpu.largest > window_pairs_for_budget(c.budget))
		out.cuda = "a window of " + std::to_string(gpu.largest) + " pairs";
	/* the pairs copied back, and each probe's pair count */
	if (out.cuda.empty() &&
		gpu.stats.bytes_from_device < gpu.pairs.size() * 8 + 8 * gpu.stats.probes)
		out.cuda = "stats: bytes_from_device " + std::to_string(gpu.stats.bytes_from_device) +
			" for " + std::to_string(gpu.pairs.size()) + " pairs";
	if (out.cuda.empty() && gpu.pairs != cpu.pairs)
		out.note = "same pairs in another order: " +
			first_difference<uint64_t>(gpu.pairs, cpu.pairs, show_nl_pair);
}

} /* namespace */

void
nestloop_tests()
{
	const size_t MB = 1u << 20;
	const std::vector<NlCase> cases = {
		{"int range, empty inner", INT_RANGE, UNIFORM, false, false, 100, 0, 64 * MB},
		{"int range, empty outer", INT_RANGE, UNIFORM, false, false, 0, 100, 64 * MB},
		{"int range, one row each", INT_RANGE, ONE_MATCH, false, false, 1, 1, 64 * MB},
		{"int range, indexed, one row each", INT_RANGE, ONE_MATCH, true, false, 1, 1, 64 * MB},
		{"int range, all NULL", INT_RANGE, ALL_NULL, false, false, 2000, 2000, 64 * MB},
		{"int range, indexed, all NULL", INT_RANGE, ALL_NULL, true, false, 2000, 2000, 64 * MB},
		{"int range, duplicates, 1 MB budget (batches, windows)", INT_RANGE, DUPLICATES, false,
		 false, 2000, 2000, 1 * MB},
		{"int range, indexed, duplicates, 1 MB budget", INT_RANGE, DUPLICATES, true, false, 2000,
		 2000, 1 * MB},
		{"int range, skew (one value in half the inner rows)", INT_RANGE, SKEW, false, false, 2000,
		 5000, 64 * MB},
		{"int range, indexed, skew", INT_RANGE, SKEW, true, false, 2000, 5000, 64 * MB},
		{"int range, first_only, one chunk", INT_RANGE, DUPLICATES, false, true, 2000, 2000,
		 64 * MB},
		{"int range, first_only, three chunks", INT_RANGE, DUPLICATES, false, true, 2000, 5000,
		 64 * MB},
		{"float range (NaN, -0, inf)", FLOAT_RANGE, UNIFORM, false, false, 2000, 3000, 64 * MB},
		{"float range (NaN, -0, inf), indexed", FLOAT_RANGE, UNIFORM, true, false, 2000, 3000,
		 64 * MB},
		{"int4 sum with overflow rechecks", INT4_SUM, UNIFORM, false, false, 1000, 1000, 64 * MB},
		{"int range, large, 1 MB budget (two inner blocks)", INT_RANGE, UNIFORM, false, false, 500,
		 60000, 1 * MB},
		{"int range, indexed, large, 1 MB budget (four inner blocks)", INT_RANGE, UNIFORM, true,
		 false, 3000, 20000, 1 * MB},
	};
	uint64_t seed = 5000;

	for (const NlCase &c : cases)
	{
		std::string title = "nestloop " + c.what + ", " + std::to_string(c.outer_n) + " outer x " +
			std::to_string(c.inner_n) + " inner rows";
		uint64_t s = seed++;

		run_case(title, [&](Outcome &out) { check_nestloop(out, c, s); });
	}
}

} /* namespace dt */
