/*
 * gpuops_hashjoin.h
 *    The device engine's C interface, one part: the hash join backend
 *    (GpuopsJoinBackend).
 *
 * gpuops_device.h includes every part.
 */
#ifndef GPUOPS_HASHJOIN_H
#define GPUOPS_HASHJOIN_H

#include "gpuops_base.h"

GPUOPS_C_BEGIN

/*
 * Hash join (key-pointer, like the sort): build rows and probe rows are
 * numbered in the order their keys are added; only key words cross the bus
 * and only (probe row, build row) pairs come back.  A key column is given as
 * 64-bit words (integers sign-extended, so int2/int4/int8 compare across
 * types) plus a null bitmap; rows with a NULL key never match.  The pairs
 * are candidates with equal key hashes (64-bit): the caller re-checks the
 * join clauses, so a hash collision cannot produce a wrong row.
 *
 * Algorithm (both backends): the build side's (hash, row) pairs are radix
 * sorted, equal hashes form a directory of (hash, first, count); each probe
 * row binary-searches the directory, the counts are prefix-summed (count
 * then write: the output size is exact), and every output pair is found by
 * its own thread from the prefix sums, so one key matching half the build
 * side does not serialize on one thread (skew).
 */
#define GPUOPS_MAX_JOIN_KEYS 8

typedef struct GpuopsJoinKeys
{
	int nkeys;
	uint64_t nrows;
	const uint64_t *words[GPUOPS_MAX_JOIN_KEYS]; /* per key, nrows words */
	const uint8_t *nulls[GPUOPS_MAX_JOIN_KEYS];	 /* per key bitmap, or NULL */
} GpuopsJoinKeys;

/*
 * A probe's pairs, in probe row order, come in windows of at most the pairs
 * the budget holds: join_probe returns the first, join_next_pairs the next
 * ones while `more` is set.  A probe row's pairs may span two windows.
 */
typedef struct GpuopsJoinPairs
{
	uint64_t npairs;
	const uint32_t *probe_rows; /* valid until the next call or join_end */
	const uint32_t *build_rows;
	int more; /* 1: join_next_pairs has more of this probe */
} GpuopsJoinPairs;

typedef struct GpuopsJoinStats
{
	uint64_t build_rows;
	uint64_t probe_rows;
	uint64_t pairs;
	uint32_t probe_batches;
	uint32_t windows;	/* pair windows beyond each probe's first */
	uint64_t directory; /* distinct build hashes */
	double copy_ms;
	double kernel_ms;
	uint64_t device_bytes;		/* peak */
	uint64_t bytes_from_device; /* copied device -> host (gpuops_device.h) */
} GpuopsJoinStats;

typedef struct GpuopsJoin GpuopsJoin;

/*
 * join_begin -> join_build (any number of times) -> join_build_finish ->
 * join_probe (any number of times, each followed by join_next_pairs while
 * pairs.more) -> join_end (always).  join_capacity: the most build rows
 * (with non-NULL keys) one build holds under the device budget, 0 when
 * unlimited; larger build sides are partitioned by the caller.
 * join_probe_rows: the most rows one probe takes (a multiple of 8).  Both
 * backends derive it, and the window size, from the same budget
 * (join_hash.hpp), so they partition alike and return the same pairs in
 * the same order.
 */
typedef struct GpuopsJoinLookup GpuopsJoinLookup;

typedef struct GpuopsJoinBackend
{
	const char *name;
	GpuopsStatus (*join_begin)(const GpuopsSettings *settings, int nkeys,
							   GpuopsJoin **join) GPUOPS_NOEXCEPT;
	GpuopsStatus (*join_build)(GpuopsJoin *join, const GpuopsJoinKeys *keys) GPUOPS_NOEXCEPT;
	GpuopsStatus (*join_build_finish)(GpuopsJoin *join) GPUOPS_NOEXCEPT;
	GpuopsStatus (*join_probe)(GpuopsJoin *join, const GpuopsJoinKeys *keys,
							   GpuopsJoinPairs *pairs) GPUOPS_NOEXCEPT;
	GpuopsStatus (*join_next_pairs)(GpuopsJoin *join, GpuopsJoinPairs *pairs) GPUOPS_NOEXCEPT;
	uint64_t (*join_capacity)(const GpuopsJoin *join) GPUOPS_NOEXCEPT;
	uint32_t (*join_probe_rows)(const GpuopsJoin *join) GPUOPS_NOEXCEPT;
	void (*join_stats)(const GpuopsJoin *join, GpuopsJoinStats *stats) GPUOPS_NOEXCEPT;
	void (*join_end)(GpuopsJoin *join) GPUOPS_NOEXCEPT;

	/*
	 * Shared build (parallel plans, join_service.h): after build_finish,
	 * the directory's size and a checksum of its hashes; and lookups, which
	 * give each probe row its directory entry (or -1) and its number of
	 * build rows (0 without a match), and write no pairs.
	 * A lookup object has its own stream and buffers, allocated by
	 * lookup_begin, and only reads the directory: lookup may run on another
	 * thread while the join's other calls run, until lookup_end (which
	 * comes before join_end).  Lookups on one object are serialized.
	 */
	GpuopsStatus (*join_directory)(GpuopsJoin *join, uint64_t *ndir,
								   uint64_t *checksum) GPUOPS_NOEXCEPT;
	GpuopsStatus (*lookup_begin)(GpuopsJoin *join, uint32_t max_rows,
								 GpuopsJoinLookup **lookup) GPUOPS_NOEXCEPT;
	GpuopsStatus (*lookup)(GpuopsJoinLookup *lookup, const GpuopsJoinKeys *keys, int64_t *slots,
						   uint32_t *counts) GPUOPS_NOEXCEPT;
	void (*lookup_end)(GpuopsJoinLookup *lookup) GPUOPS_NOEXCEPT;
} GpuopsJoinBackend;

/*
 * A probe whose rows' directory entries are known (a shared build's
 * lookup): the CPU backend's join_probe without the search.  For a join of
 * gpuops_cpu_join_backend() only; its windows continue with join_next_pairs.
 */
extern GpuopsStatus gpuops_cpu_join_probe_slots(GpuopsJoin *join, const int64_t *slots,
												uint64_t nrows,
												GpuopsJoinPairs *pairs) GPUOPS_NOEXCEPT;

/*
 * A probe whose rows' match counts are known (a shared build's lookup) and
 * whose build rows are never read (no inner column is needed and unmatched
 * inner rows are not returned): pairs with build row 0, as many per probe
 * row as it has matches.  The join (of gpuops_cpu_join_backend()) needs no
 * build; its windows continue with join_next_pairs.
 */
extern GpuopsStatus gpuops_cpu_join_probe_counts(GpuopsJoin *join, const uint32_t *counts,
												 uint64_t nrows,
												 GpuopsJoinPairs *pairs) GPUOPS_NOEXCEPT;

extern const GpuopsJoinBackend *gpuops_cuda_join_backend(void) GPUOPS_NOEXCEPT;
extern const GpuopsJoinBackend *gpuops_cpu_join_backend(void) GPUOPS_NOEXCEPT;

GPUOPS_C_END

#endif /* GPUOPS_HASHJOIN_H */
