/*
 * join_common.h
 *    What the hash and merge join tests share: key columns as the join ABI
 *    takes them (64-bit words and null flags), their generation, and the
 *    reference join (equal non-NULL key tuples, NULLs never matching).
 */
#ifndef JOIN_COMMON_H
#define JOIN_COMMON_H

#include "device_test.h"

#include <array>

namespace dt {

constexpr int kMaxTestKeys = 3;

/* How one key's values are drawn. */
struct KeyDist
{
	enum Kind
	{
		UNIFORM, /* in [0, range) */
		SKEW,	 /* `hot` in a fraction hot_frac of the rows, else uniform */
		EXTREMES /* INT64_MIN, INT64_MAX and small values around 0 */
	} kind = UNIFORM;
	int64_t range = 1000;
	int64_t hot = 7;
	double hot_frac = 0.5;
	double null_frac = 0;
};

/* One side's keys; null[k] empty: key k has no NULLs (no bitmap is passed). */
struct JoinSide
{
	int nkeys = 1;
	uint64_t n = 0;
	std::vector<uint64_t> words[kMaxTestKeys];
	std::vector<uint8_t> null[kMaxTestKeys];

	bool any_null(uint64_t i) const
	{
		for (int k = 0; k < nkeys; k++)
			if (!null[k].empty() && null[k][i])
				return true;
		return false;
	}
	std::array<uint64_t, kMaxTestKeys> key(uint64_t i) const
	{
		std::array<uint64_t, kMaxTestKeys> t = {};

		for (int k = 0; k < nkeys; k++)
			t[k] = words[k][i];
		return t;
	}
};

/*
 * Generates a side of n rows.  A NULL's word is `null_word` when that is
 * not -1 (the merge join wants 0), else a key drawn like the others (one
 * that would match if the backend read it).
 */
JoinSide make_side(uint64_t n, const std::vector<KeyDist> &dists, Rng &rng, int64_t null_word = -1);

/* Rows [from, from + m) of a side as the ABI takes them; bitmaps are kept in `hold`. */
GpuopsJoinKeys join_keys(const JoinSide &s, uint64_t from, uint64_t m,
						 std::vector<std::vector<uint8_t>> &hold);

/* A (probe or outer row, build or inner row) pair, probe row in the high half. */
inline uint64_t
pair_of(uint64_t probe, uint64_t build)
{
	return (probe << 32) | build;
}

std::string show_pair(const uint64_t &p);

/* The pairs of one or more probes, window after window. */
struct PairWindows
{
	std::vector<uint64_t> pairs; /* in the order returned, probe rows made global */
	uint32_t windows = 0;		 /* every probe's windows, first ones included */
	uint64_t largest = 0;		 /* the largest window */
};

/*
 * The window walk of one probe: takes the first window p, then calls next
 * (a backend's *_next_pairs) while p.more.  probe_base is added to the
 * probe rows (the probe batch's first row); build rows are kept as given.
 */
void collect_windows(GpuopsJoinPairs &p, uint64_t probe_base,
					 const std::function<GpuopsStatus(GpuopsJoinPairs *)> &next, const char *call,
					 PairWindows &w);

/*
 * The reference equi-join: for each probe row (no NULL key) in row order,
 * or in probe_order when given, the build rows with the same key tuple in
 * row order.
 */
std::vector<uint64_t> reference_join(const JoinSide &build, const JoinSide &probe,
									 const std::vector<uint32_t> *probe_order = nullptr);

/* got and want as multisets: empty when equal, else the first difference. */
std::string compare_multisets(std::vector<uint64_t> got, std::vector<uint64_t> want);

/* The window size bound both join backends derive from a budget (join_hash.hpp). */
uint64_t window_pairs_for_budget(uint64_t budget);

} /* namespace dt */

#endif
