/*
 * mergejoin_test.cpp
 *    The merge join backend (GpuopsMergeJoinBackend): both sides at once,
 *    pairs in windows, the outer order, and the count-only form (mj_join
 *    with no pairs).  Keys are words whose unsigned order is the keys'
 *    (integers offset by 2^63, as the caller maps them), a NULL's word 0,
 *    which is also the word of INT64_MIN: a backend that read a NULL's
 *    word would match it.
 *
 * The twin must give exactly what the header documents: the outer order
 * is a stable sort with NULLs after every value of their key, and the
 * pairs come in that order, each outer row's equal inner rows in row
 * order, NULL keys matching nothing.  The CUDA backend must give the same
 * outer order and the same pairs as a multiset (a different order is
 * noted).
 */
#include "join_common.h"

#include <algorithm>
#include <numeric>

namespace dt {
namespace {

struct MergeCase
{
	std::string what;
	std::vector<KeyDist> keys; /* the outer side's */
	std::vector<KeyDist> inner_keys;
	uint64_t outer_n;
	uint64_t inner_n;
	size_t budget;
	bool count_only; /* also run mj_join without pairs */
	bool expect_windows;
};

struct MergeRun : PairWindows
{
	std::vector<uint32_t> outer_order;
	GpuopsMergeJoinStats stats;
	uint64_t counted = 0; /* pairs of the count-only run */
};

/* An integer key as a merge word: its unsigned order is the signed order. */
void
to_merge_words(JoinSide &s)
{
	for (int k = 0; k < s.nkeys; k++)
		for (uint64_t i = 0; i < s.n; i++)
			if (s.null[k].empty() || !s.null[k][i])
				s.words[k][i] ^= 0x8000000000000000ull;
}

/* One merge join: begin, both sides, the join (with or without pairs), windows, end. */
void
merge_once(const GpuopsMergeJoinBackend *be, const MergeCase &c, const JoinSide &outer,
		   const JoinSide &inner, bool with_pairs, MergeRun &r)
{
	GpuopsSettings st = settings_for(c.budget);
	EndGuard<GpuopsMergeJoin> mj(be->mj_end);
	std::vector<std::vector<uint8_t>> hold;
	GpuopsJoinKeys keys;
	GpuopsJoinPairs p;
	GpuopsMergeJoinStats stats;

	DT_CALL(be->mj_begin(&st, outer.nkeys, &mj.obj));
	if (be->mj_capacity(mj.obj) && outer.n + inner.n > be->mj_capacity(mj.obj))
		throw std::runtime_error("test input over mj_capacity " +
								 std::to_string(be->mj_capacity(mj.obj)));
	keys = join_keys(outer, 0, outer.n, hold);
	DT_CALL(be->mj_side(mj.obj, 0, &keys));
	keys = join_keys(inner, 0, inner.n, hold);
	DT_CALL(be->mj_side(mj.obj, 1, &keys));
	if (!with_pairs)
	{
		DT_CALL(be->mj_join(mj.obj, nullptr));
		be->mj_stats(mj.obj, &stats);
		r.counted = stats.pairs;
		return;
	}
	memset(&p, 0, sizeof(p));
	DT_CALL(be->mj_join(mj.obj, &p));
	collect_windows(
		p, 0, [&](GpuopsJoinPairs *next) { return be->mj_next_pairs(mj.obj, next); },
		"mj_next_pairs", r);

	const uint32_t *order = nullptr;

	DT_CALL(be->mj_outer_order(mj.obj, &order));
	if (outer.n > 0 && order == nullptr)
		throw CallFailed("mj_outer_order gave no order");
	r.outer_order.assign(order, order + outer.n);
	be->mj_stats(mj.obj, &r.stats);
}

MergeRun
run_mergejoin(const GpuopsMergeJoinBackend *be, const MergeCase &c, const JoinSide &outer,
			  const JoinSide &inner)
{
	MergeRun r;

	merge_once(be, c, outer, inner, true, r);
	if (c.count_only)
		merge_once(be, c, outer, inner, false, r);
	return r;
}

/* Outer rows x and y key by key, a NULL after every value and equal to another NULL. */
int
cmp_merge_rows(const JoinSide &s, uint32_t x, uint32_t y)
{
	for (int k = 0; k < s.nkeys; k++)
	{
		bool nx = !s.null[k].empty() && s.null[k][x];
		bool ny = !s.null[k].empty() && s.null[k][y];

		if (nx != ny)
			return nx ? 1 : -1;
		if (!nx && s.words[k][x] != s.words[k][y])
			return s.words[k][x] < s.words[k][y] ? -1 : 1;
	}
	return 0;
}

std::string
show_row(const uint32_t &r)
{
	return "row " + std::to_string(r);
}

std::string
check_twin(const MergeCase &c, const MergeRun &r, const std::vector<uint32_t> &want_order,
		   const std::vector<uint64_t> &want)
{
	std::string d = first_difference<uint32_t>(r.outer_order, want_order, show_row);

	if (!d.empty())
		return "outer order: " + d;
	d = first_difference<uint64_t>(r.pairs, want, show_pair);
	if (!d.empty())
		return "pairs: " + d;
	if (r.largest > window_pairs_for_budget(c.budget))
		return "a window of " + std::to_string(r.largest) + " pairs";
	if (c.expect_windows && r.stats.windows == 0)
		return "the budget did not cut windows";
	if (r.stats.pairs != want.size() || r.stats.outer_rows != c.outer_n ||
		r.stats.inner_rows != c.inner_n)
		return "stats: " + std::to_string(r.stats.pairs) + " pairs";
	if (c.count_only && r.counted != want.size())
		return "count-only join counted " + std::to_string(r.counted) + " pairs";
	/* bytes_from_device (gpuops_device.h): the outer order and the pairs handed out */
	if (r.stats.bytes_from_device != c.outer_n * 4 + r.pairs.size() * 8)
		return "stats: bytes_from_device " + std::to_string(r.stats.bytes_from_device) + " for " +
			std::to_string(r.pairs.size()) + " pairs";
	return "";
}

void
check_mergejoin(Outcome &out, const MergeCase &c, uint64_t seed)
{
	Rng rng(seed);
	JoinSide outer = make_side(c.outer_n, c.keys, rng, 0);
	JoinSide inner = make_side(c.inner_n, c.inner_keys, rng, 0);
	std::vector<uint32_t> want_order(c.outer_n);

	to_merge_words(outer);
	to_merge_words(inner);
	std::iota(want_order.begin(), want_order.end(), 0u);
	std::stable_sort(want_order.begin(), want_order.end(),
					 [&](uint32_t x, uint32_t y) { return cmp_merge_rows(outer, x, y) < 0; });

	std::vector<uint64_t> want = reference_join(inner, outer, &want_order);
	MergeRun cpu = run_mergejoin(engines.cpu->mergejoin, c, outer, inner);

	out.info = std::to_string(want.size()) + " pairs in " + std::to_string(cpu.windows) +
		" windows";
	out.cpu = check_twin(c, cpu, want_order, want);
	if (!engines.cuda)
		return;
	begin_cuda_side(out);

	MergeRun gpu = run_mergejoin(engines.cuda->mergejoin, c, outer, inner);

	out.cuda = first_difference<uint32_t>(gpu.outer_order, cpu.outer_order, show_row);
	if (!out.cuda.empty())
		out.cuda = "outer order: " + out.cuda;
	else
		out.cuda = compare_multisets(gpu.pairs, cpu.pairs);
	if (out.cuda.empty() && c.count_only && gpu.counted != cpu.pairs.size())
		out.cuda = "count-only join counted " + std::to_string(gpu.counted) + " pairs";
	if (out.cuda.empty() && gpu.largest > window_pairs_for_budget(c.budget))
		out.cuda = "a window of " + std::to_string(gpu.largest) + " pairs";
	/* the same copies, and the pair count read back */
	if (out.cuda.empty() && gpu.stats.bytes_from_device < c.outer_n * 4 + gpu.pairs.size() * 8 + 8)
		out.cuda = "stats: bytes_from_device " + std::to_string(gpu.stats.bytes_from_device) +
			" for " + std::to_string(gpu.pairs.size()) + " pairs";
	if (out.cuda.empty() && gpu.pairs != cpu.pairs)
		out.note = "same pairs in another order: " +
			first_difference<uint64_t>(gpu.pairs, cpu.pairs, show_pair);
}

KeyDist
dist(KeyDist::Kind kind, int64_t range, double null_frac, int64_t hot = 7, double hot_frac = 0.5)
{
	KeyDist d;

	d.kind = kind;
	d.range = range;
	d.null_frac = null_frac;
	d.hot = hot;
	d.hot_frac = hot_frac;
	return d;
}

} /* namespace */

void
mergejoin_tests()
{
	const size_t MB = 1u << 20;
	const KeyDist k1000 = dist(KeyDist::UNIFORM, 1000, 0);
	const KeyDist all_null = dist(KeyDist::UNIFORM, 1000, 1.0);
	const KeyDist u100 = dist(KeyDist::UNIFORM, 100, 0.02);
	const std::vector<MergeCase> cases = {
		{"empty sides", {k1000}, {k1000}, 0, 0, 64 * MB, true, false},
		{"empty outer", {k1000}, {k1000}, 0, 1000, 64 * MB, false, false},
		{"empty inner", {k1000}, {k1000}, 1000, 0, 64 * MB, false, false},
		{"one row each",
		 {dist(KeyDist::UNIFORM, 1, 0)},
		 {dist(KeyDist::UNIFORM, 1, 0)},
		 1,
		 1,
		 64 * MB,
		 true,
		 false},
		{"all keys NULL", {all_null}, {all_null}, 5000, 5000, 64 * MB, true, false},
		{"duplicates (100 keys), 4 MB budget (windows)",
		 {u100},
		 {u100},
		 20000,
		 5000,
		 4 * MB,
		 true,
		 true},
		{"skew (one key in half the outer rows)",
		 {dist(KeyDist::SKEW, 1000000, 0.01)},
		 {dist(KeyDist::SKEW, 1000000, 0.01, 7, 0.0002)},
		 100000,
		 100000,
		 64 * MB,
		 false,
		 false},
		{"two keys with 5% NULLs",
		 {dist(KeyDist::UNIFORM, 1000, 0.05), dist(KeyDist::UNIFORM, 7, 0.05)},
		 {dist(KeyDist::UNIFORM, 1000, 0.05), dist(KeyDist::UNIFORM, 7, 0.05)},
		 100000,
		 100000,
		 64 * MB,
		 true,
		 false},
		{"int8 extremes (INT64_MIN's word is a NULL's)",
		 {dist(KeyDist::EXTREMES, 0, 0.1)},
		 {dist(KeyDist::EXTREMES, 0, 0.1)},
		 2000,
		 2000,
		 64 * MB,
		 true,
		 false},
		{"large",
		 {dist(KeyDist::UNIFORM, 2000000, 0.01)},
		 {dist(KeyDist::UNIFORM, 2000000, 0.01)},
		 1000000,
		 1000000,
		 1024 * MB,
		 false,
		 false},
	};
	uint64_t seed = 3000;

	for (const MergeCase &c : cases)
	{
		std::string title = "mergejoin " + std::to_string(c.keys.size()) +
			(c.keys.size() == 1 ? " key, " : " keys, ") + c.what + ", " +
			std::to_string(c.outer_n) + " outer x " + std::to_string(c.inner_n) + " inner rows";
		uint64_t s = seed++;

		run_case(title, [&](Outcome &out) { check_mergejoin(out, c, s); });
	}
}

} /* namespace dt */
