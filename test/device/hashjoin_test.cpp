/*
 * hashjoin_test.cpp
 *    The hash join backend (GpuopsJoinBackend): build in several calls,
 *    probe in batches of join_probe_rows, pairs in windows through
 *    join_next_pairs.  The twin's pairs must be the reference equi-join's
 *    as a multiset (NULL keys never match), in probe row order, in windows
 *    no larger than the budget's; the CUDA backend's must be the twin's as
 *    a multiset (a different order is noted: the header promises the same
 *    order).
 */
#include "join_common.h"

#include <algorithm>

namespace dt {
namespace {

struct HashCase
{
	std::string what;
	std::vector<KeyDist> build_keys;
	std::vector<KeyDist> probe_keys;
	uint64_t build_n;
	uint64_t probe_n;
	size_t budget;		  /* device_memory_limit (never 0: both backends alike) */
	uint64_t build_chunk; /* rows per join_build call (a multiple of 8) */
	bool expect_windows;  /* the budget must cut the pairs into several windows */
};

struct HashRun : PairWindows
{
	GpuopsJoinStats stats;
};

HashRun
run_hashjoin(const GpuopsJoinBackend *be, const HashCase &c, const JoinSide &build,
			 const JoinSide &probe)
{
	GpuopsSettings st = settings_for(c.budget);
	EndGuard<GpuopsJoin> j(be->join_end);
	std::vector<std::vector<uint8_t>> hold;
	HashRun r;
	uint64_t nonnull = 0;

	DT_CALL(be->join_begin(&st, build.nkeys, &j.obj));
	for (uint64_t i = 0; i < build.n; i++)
		nonnull += build.any_null(i) ? 0 : 1;
	if (be->join_capacity(j.obj) && nonnull > be->join_capacity(j.obj))
		throw std::runtime_error("test input over join_capacity " +
								 std::to_string(be->join_capacity(j.obj)));
	for (uint64_t from = 0; from < build.n; from += c.build_chunk)
	{
		uint64_t m = std::min(c.build_chunk, build.n - from);
		GpuopsJoinKeys keys = join_keys(build, from, m, hold);

		DT_CALL(be->join_build(j.obj, &keys));
	}
	DT_CALL(be->join_build_finish(j.obj));

	uint32_t batch = be->join_probe_rows(j.obj);

	if (batch == 0 || batch % 8 != 0)
		throw CallFailed("join_probe_rows is " + std::to_string(batch));
	for (uint64_t from = 0; from < probe.n; from += batch)
	{
		uint64_t m = std::min<uint64_t>(batch, probe.n - from);
		GpuopsJoinKeys keys = join_keys(probe, from, m, hold);
		GpuopsJoinPairs p;

		memset(&p, 0, sizeof(p));
		DT_CALL(be->join_probe(j.obj, &keys, &p));
		collect_windows(
			p, from, [&](GpuopsJoinPairs *next) { return be->join_next_pairs(j.obj, next); },
			"join_next_pairs", r);
	}
	be->join_stats(j.obj, &r.stats);
	return r;
}

/* What the twin must satisfy beyond the multiset: order, windows, stats. */
std::string
check_twin_shape(const HashCase &c, const HashRun &r)
{
	for (size_t i = 1; i < r.pairs.size(); i++)
		if ((r.pairs[i] >> 32) < (r.pairs[i - 1] >> 32))
			return "pairs not in probe row order at " + std::to_string(i) + ": " +
				show_pair(r.pairs[i - 1]) + " then " + show_pair(r.pairs[i]);
	if (r.largest > window_pairs_for_budget(c.budget))
		return "a window of " + std::to_string(r.largest) + " pairs, over the budget's " +
			std::to_string(window_pairs_for_budget(c.budget));
	if (c.expect_windows && r.stats.windows == 0)
		return "the budget did not cut windows";
	if (r.stats.pairs != r.pairs.size() || r.stats.build_rows != c.build_n ||
		r.stats.probe_rows != c.probe_n)
		return "stats: " + std::to_string(r.stats.pairs) + " pairs, " +
			std::to_string(r.stats.build_rows) + " build rows, " +
			std::to_string(r.stats.probe_rows) + " probe rows";
	/* bytes_from_device (gpuops_device.h): the twin counts the pairs it handed out */
	if (r.stats.bytes_from_device != r.pairs.size() * 8)
		return "stats: bytes_from_device " + std::to_string(r.stats.bytes_from_device) + " for " +
			std::to_string(r.pairs.size()) + " pairs";
	return "";
}

void
check_hashjoin(Outcome &out, const HashCase &c, uint64_t seed)
{
	Rng rng(seed);
	JoinSide build = make_side(c.build_n, c.build_keys, rng);
	JoinSide probe = make_side(c.probe_n, c.probe_keys, rng);
	std::vector<uint64_t> want = reference_join(build, probe);
	HashRun cpu = run_hashjoin(engines.cpu->hashjoin, c, build, probe);

	out.info = std::to_string(want.size()) + " pairs in " + std::to_string(cpu.windows) +
		" windows";
	out.cpu = compare_multisets(cpu.pairs, want);
	if (out.cpu.empty())
		out.cpu = check_twin_shape(c, cpu);
	if (!engines.cuda)
		return;
	begin_cuda_side(out);

	HashRun gpu = run_hashjoin(engines.cuda->hashjoin, c, build, probe);

	out.cuda = compare_multisets(gpu.pairs, cpu.pairs);
	if (out.cuda.empty() && gpu.largest > window_pairs_for_budget(c.budget))
		out.cuda = "a window of " + std::to_string(gpu.largest) + " pairs";
	/* the pairs copied back, and each probe's pair count */
	if (out.cuda.empty() &&
		gpu.stats.bytes_from_device < gpu.pairs.size() * 8 + 8 * gpu.stats.probe_batches)
		out.cuda = "stats: bytes_from_device " + std::to_string(gpu.stats.bytes_from_device) +
			" for " + std::to_string(gpu.pairs.size()) + " pairs";
	if (out.cuda.empty() && gpu.pairs != cpu.pairs)
		out.note = "same pairs in another order: " +
			first_difference<uint64_t>(gpu.pairs, cpu.pairs, show_pair);
}

KeyDist
uniform_key(int64_t range, double null_frac = 0)
{
	KeyDist d;

	d.range = range;
	d.null_frac = null_frac;
	return d;
}

KeyDist
skew_key(int64_t range, int64_t hot, double hot_frac)
{
	KeyDist d;

	d.kind = KeyDist::SKEW;
	d.range = range;
	d.hot = hot;
	d.hot_frac = hot_frac;
	return d;
}

KeyDist
extreme_key(double null_frac)
{
	KeyDist d;

	d.kind = KeyDist::EXTREMES;
	d.null_frac = null_frac;
	return d;
}

} /* namespace */

void
hashjoin_tests()
{
	const size_t MB = 1u << 20;
	const KeyDist k1000 = uniform_key(1000);
	const KeyDist all_null = uniform_key(1000, 1.0);
	const std::vector<HashCase> cases = {
		{"empty build and probe", {k1000}, {k1000}, 0, 0, 64 * MB, 65536, false},
		{"empty build", {k1000}, {k1000}, 0, 1000, 64 * MB, 65536, false},
		{"empty probe", {k1000}, {k1000}, 1000, 0, 64 * MB, 65536, false},
		{"one row each", {uniform_key(1)}, {uniform_key(1)}, 1, 1, 64 * MB, 65536, false},
		{"one row each, NULL keys", {all_null}, {all_null}, 1, 1, 64 * MB, 65536, false},
		{"all keys NULL", {all_null}, {all_null}, 5000, 5000, 64 * MB, 1000, false},
		{"all keys NULL on the probe side", {k1000}, {all_null}, 5000, 5000, 64 * MB, 1000, false},
		{"duplicates (100 keys), 1 MB budget (probe batches, windows)",
		 {uniform_key(100)},
		 {uniform_key(100)},
		 5000,
		 20000,
		 1 * MB,
		 1024,
		 true},
		{"skew (one key in half the build rows), 64 MB budget (windows)",
		 {skew_key(1000000, 7, 0.5)},
		 {skew_key(1000000, 7, 0.0008)},
		 200000,
		 50000,
		 64 * MB,
		 65536,
		 true},
		{"three keys with 5% NULLs",
		 {uniform_key(50, 0.05), uniform_key(40, 0.05), uniform_key(7, 0.05)},
		 {uniform_key(50, 0.05), uniform_key(40, 0.05), uniform_key(7, 0.05)},
		 100000,
		 100000,
		 64 * MB,
		 30000,
		 false},
		{"int8 extremes", {extreme_key(0.1)}, {extreme_key(0.1)}, 2000, 2000, 64 * MB, 512, false},
		{"large",
		 {uniform_key(2000000)},
		 {uniform_key(2000000)},
		 1000000,
		 2000000,
		 512 * MB,
		 100000,
		 false},
	};
	uint64_t seed = 2000;

	for (const HashCase &c : cases)
	{
		std::string title = "hashjoin " + std::to_string(c.build_keys.size()) +
			(c.build_keys.size() == 1 ? " key, " : " keys, ") + c.what + ", " +
			std::to_string(c.build_n) + " build x " + std::to_string(c.probe_n) + " probe rows";
		uint64_t s = seed++;

		run_case(title, [&](Outcome &out) { check_hashjoin(out, c, s); });
	}
}

} /* namespace dt */
