/*
 * join_common.cpp
 *    Key generation and the reference equi-join of the join tests.
 */
#include "join_common.h"

#include <algorithm>

namespace dt {

namespace {

int64_t
draw_key(const KeyDist &d, Rng &rng)
{
	static const int64_t edges[] = {INT64_MIN, INT64_MAX, INT64_MIN + 1, INT64_MAX - 1, -1, 0, 1};

	switch (d.kind)
	{
		case KeyDist::SKEW:
			if (chance(rng, d.hot_frac))
				return d.hot;
			return uniform(rng, 0, d.range - 1);
		case KeyDist::EXTREMES:
			return edges[uniform(rng, 0, 6)];
		default:
			return uniform(rng, 0, d.range - 1);
	}
}

} /* namespace */

JoinSide
make_side(uint64_t n, const std::vector<KeyDist> &dists, Rng &rng, int64_t null_word)
{
	JoinSide s;

	s.nkeys = static_cast<int>(dists.size());
	s.n = n;
	for (int k = 0; k < s.nkeys; k++)
	{
		s.words[k].resize(n + 1); /* + 1: a valid pointer also for 0 rows */
		if (dists[k].null_frac > 0)
			s.null[k].resize(n);
		for (uint64_t i = 0; i < n; i++)
		{
			bool isnull = dists[k].null_frac > 0 && chance(rng, dists[k].null_frac);

			/*
			 * A NULL keeps a key drawn like the others, so that a backend
			 * that read it would find matches
			 */
			s.words[k][i] = static_cast<uint64_t>(draw_key(dists[k], rng));
			if (isnull)
			{
				s.null[k][i] = 1;
				if (null_word != -1)
					s.words[k][i] = static_cast<uint64_t>(null_word);
			}
		}
	}
	return s;
}

GpuopsJoinKeys
join_keys(const JoinSide &s, uint64_t from, uint64_t m, std::vector<std::vector<uint8_t>> &hold)
{
	GpuopsJoinKeys keys;

	memset(&keys, 0, sizeof(keys));
	keys.nkeys = s.nkeys;
	keys.nrows = m;
	hold.assign(s.nkeys, {});
	for (int k = 0; k < s.nkeys; k++)
	{
		keys.words[k] = s.words[k].data() + from;
		if (!s.null[k].empty())
		{
			hold[k] = bitmap_of(s.null[k], from, m);
			hold[k].push_back(0); /* a valid pointer also for 0 rows */
			keys.nulls[k] = hold[k].data();
		}
	}
	return keys;
}

std::string
show_pair(const uint64_t &p)
{
	return "(" + std::to_string(p >> 32) + ", " + std::to_string(p & 0xffffffffu) + ")";
}

void
collect_windows(GpuopsJoinPairs &p, uint64_t probe_base,
				const std::function<GpuopsStatus(GpuopsJoinPairs *)> &next, const char *call,
				PairWindows &w)
{
	for (;;)
	{
		w.windows++;
		w.largest = std::max(w.largest, p.npairs);
		for (uint64_t i = 0; i < p.npairs; i++)
			w.pairs.push_back(pair_of(probe_base + p.probe_rows[i], p.build_rows[i]));
		if (!p.more)
			break;
		/* a backend that keeps saying "more" with nothing in it would never end */
		if (p.npairs == 0)
			throw CallFailed(std::string(call) + ": an empty window said there was more");
		check_call(next(&p), call);
	}
}

std::vector<uint64_t>
reference_join(const JoinSide &build, const JoinSide &probe,
			   const std::vector<uint32_t> *probe_order)
{
	using Key = std::array<uint64_t, kMaxTestKeys>;
	std::vector<std::pair<Key, uint32_t>> dir;
	std::vector<uint64_t> pairs;

	for (uint64_t i = 0; i < build.n; i++)
		if (!build.any_null(i))
			dir.emplace_back(build.key(i), static_cast<uint32_t>(i));
	std::sort(dir.begin(), dir.end());
	for (uint64_t pos = 0; pos < probe.n; pos++)
	{
		uint64_t i = probe_order ? (*probe_order)[pos] : pos;

		if (probe.any_null(i))
			continue;
		Key k = probe.key(i);
		auto lo = std::lower_bound(dir.begin(), dir.end(), std::make_pair(k, uint32_t(0)));

		for (auto it = lo; it != dir.end() && it->first == k; ++it)
			pairs.push_back(pair_of(i, it->second));
	}
	return pairs;
}

std::string
compare_multisets(std::vector<uint64_t> got, std::vector<uint64_t> want)
{
	std::sort(got.begin(), got.end());
	std::sort(want.begin(), want.end());
	if (got.size() != want.size())
		return std::to_string(got.size()) + " pairs, expected " + std::to_string(want.size());
	for (size_t i = 0; i < got.size(); i++)
		if (got[i] != want[i])
			return "pair " + show_pair(got[i]) + " where " + show_pair(want[i]) +
				" was expected (in sorted order)";
	return "";
}

uint64_t
window_pairs_for_budget(uint64_t budget)
{
	const uint64_t most = 64ull << 20;
	uint64_t pairs = budget == 0 ? most : budget / 4 / 8;

	return pairs < 4096 ? 4096 : pairs > most ? most : pairs;
}

} /* namespace dt */
