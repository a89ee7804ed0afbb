/*
 * join_hash.hpp
 *    The hash both join backends give a row's key words, and the directory
 *    search, shared by host and device code so the backends agree.
 */
#ifndef GPUOPS_JOIN_HASH_HPP
#define GPUOPS_JOIN_HASH_HPP

#include "gpuops_device.h"

#include "hd.hpp"
#include "sorted_search.hpp"

namespace gpuops {

/* splitmix64's finalizer: every input bit reaches every output bit */
GPUOPS_HD uint64_t
mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

/*
 * Hash of row i's key words (words[k][i] for each key k).  For one key it is
 * a bijection of the word (xor and add with constants, then mix64, each
 * invertible): different keys never collide, which GpuHashJoin relies on
 * to skip re-checking a single-key equality.
 */
GPUOPS_HD uint64_t
join_hash(const uint64_t *const *words, int nkeys, uint64_t i)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL;

	for (int k = 0; k < nkeys; k++)
		h = mix64(h ^ (words[k][i] + 0x9e3779b97f4a7c15ULL + (h << 6)));
	return h;
}

/* Is any key of row i NULL? */
GPUOPS_HD bool
join_key_null(const uint8_t *const *nulls, int nkeys, uint64_t i)
{
	for (int k = 0; k < nkeys; k++)
		if (nulls[k] && (nulls[k][i >> 3] & (1u << (i & 7))))
			return true;
	return false;
}

/* Index of h in the sorted directory dir[0..n), or -1. */
GPUOPS_HD int64_t
join_find(const uint64_t *dir, uint64_t n, uint64_t h)
{
	uint64_t lo = 0, hi = n;

	while (lo < hi)
	{
		uint64_t mid = lo + (hi - lo) / 2;

		if (dir[mid] < h)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (lo < n && dir[lo] == h) ? (int64_t) lo : -1;
}

/* Row i's directory entry: the entry of its key hash, or -1 (no match, or a NULL key). */
GPUOPS_HD int64_t
join_slot(const uint64_t *const *words, const uint8_t *const *nulls, int nkeys, uint64_t i,
		  const uint64_t *dir, uint64_t ndir)
{
	return join_key_null(nulls, nkeys, i) ? -1 : join_find(dir, ndir, join_hash(words, nkeys, i));
}

/* The probe row output pair i belongs to: the last p with offsets[p] <= i. */
GPUOPS_HD uint64_t
join_owner(const uint64_t *offsets, uint64_t nprobe, uint64_t i)
{
	return run_of(offsets, nprobe, i);
}

/*
 * A checksum of a directory's hashes, in order: two processes that built
 * from the same rows have the same directory, entry for entry (a shared
 * build relies on it; a different checksum means the rows differed).
 */
inline uint64_t
join_directory_checksum(const uint64_t *dir, uint64_t n)
{
	uint64_t h = mix64(n);

	for (uint64_t i = 0; i < n; i++)
		h = mix64(h ^ dir[i]);
	return h;
}

/*
 * Budgets, the same for both backends.  A build of n rows takes, on the
 * device, each key's words, the (hash, row) pairs before and after the
 * radix sort and its temporary storage, the head flags and the directory:
 * about 8 * nkeys + 80 bytes a row.  Half the budget goes to the build, the
 * rest to probes: a probe batch's key words, directory slots, counts and
 * offsets (about 8 * nkeys + 48 bytes a row) a quarter, and a window of
 * pairs (8 bytes each) a quarter.  0: no budget (no limit).
 */
inline uint64_t
join_build_rows_for_budget(uint64_t budget, int nkeys)
{
	if (budget == 0)
		return 0;
	uint64_t rows = budget / 2 / (8ull * nkeys + 80);

	return rows < 1024 ? 1024 : rows;
}

inline uint32_t
join_probe_rows_for_budget(uint64_t budget, int nkeys)
{
	const uint64_t most = 65536; /* the executor's batch */
	uint64_t rows = budget == 0 ? most : budget / 4 / (8ull * nkeys + 48) / 8 * 8;

	return (uint32_t) (rows < 256 ? 256 : rows > most ? most : rows);
}

inline uint64_t
join_window_pairs_for_budget(uint64_t budget)
{
	const uint64_t most = 64ull << 20; /* 512 MB of pairs on the host */
	uint64_t pairs = budget == 0 ? most : budget / 4 / 8;

	return pairs < 4096 ? 4096 : pairs > most ? most : pairs;
}

} /* namespace gpuops */

#endif
