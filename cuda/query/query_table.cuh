/*
 * query_table.cuh
 *    The CUDA query backend's group table: open addressing in device
 *    memory, a slot a group (a control word, the packed key words, the
 *    aggregates' state words), and the atomics that add a row's leaf, or a
 *    block's partial state, into a group's state.
 *
 * A slot is claimed EMPTY -> BUSY by atomicCAS, its key and starting
 * states written, and published BUSY -> FULL after a fence; a row that
 * meets a BUSY slot waits for it, then compares keys.  Slots are never
 * given back, so the first EMPTY slot on a key's probe path means the key
 * is not in the table.  The groups are counted as slots are claimed, and
 * a claim beyond the table's limit (3/4 of its slots) is refused: the row
 * is deferred, the table grows between kernels, and the row runs again.
 * So a table is never full and every probe ends.
 *
 * States are exact in any order of the atomics: counts and 128-bit sums
 * (the low word's carry added to the high word by the thread that caused
 * it), min and max of order words; only float sums round in the order the
 * atomics happen to run.
 */
#ifndef GPUOPS_QUERY_TABLE_CUH
#define GPUOPS_QUERY_TABLE_CUH

#include "query_common.hpp"

namespace gpuops {
namespace cuda {
namespace gpuquery {

typedef unsigned long long ull;

constexpr ull kSlotEmpty = 0;
constexpr ull kSlotBusy = 1;
constexpr ull kSlotFull = 2;
constexpr uint64_t kNoSlot = ~0ull;

struct QueryTable
{
	ull *slots;		 /* capacity x stride words */
	uint64_t mask;	 /* capacity - 1 (a power of two) */
	uint32_t stride; /* 1 + key_words + state_words */
	ull *groups;	 /* slots claimed (the device's group count) */
	uint64_t limit;	 /* claims allowed */
};

__device__ __forceinline__ ull
vload(const ull *p)
{
	return *reinterpret_cast<const volatile ull *>(p);
}

__device__ __forceinline__ bool
same_key(const ull *slot_key, const uint64_t *key, int kw)
{
	for (int w = 0; w < kw; w++)
		if (vload(slot_key + w) != key[w])
			return false;
	return true;
}

/*
 * The slot of key's group, claimed and started when new; kNoSlot when the
 * group is new and the table is at its limit (the caller defers the row).
 */
__device__ uint64_t
table_slot(const QueryTable &t, const QueryLayout &L, const uint64_t *key)
{
	int kw = L.key_words;
	uint64_t pos = query_hash(key, kw) & t.mask;

	for (uint64_t probe = 0; probe <= t.mask; probe++, pos = (pos + 1) & t.mask)
	{
		ull *slot = t.slots + pos * t.stride;
		ull c = vload(slot);

		if (c == kSlotEmpty)
		{
			if (atomicAdd(t.groups, 1ull) >= t.limit)
			{
				atomicAdd(t.groups, ~0ull); /* give the claim back */
				return kNoSlot;
			}
			c = atomicCAS(slot, kSlotEmpty, kSlotBusy);
			if (c == kSlotEmpty)
			{
				for (int w = 0; w < kw; w++)
					slot[1 + w] = key[w];
				query_state_init(L, reinterpret_cast<uint64_t *>(slot + 1 + kw));
				__threadfence();
				atomicExch(slot, kSlotFull);
				return pos;
			}
			atomicAdd(t.groups, ~0ull); /* another row took this slot */
		}
		while (c == kSlotBusy)
			c = vload(slot);
		__threadfence();
		if (same_key(slot + 1, key, kw))
			return pos;
	}
	return kNoSlot; /* not reached below the limit */
}

/* *p += (hi:lo) modulo 2^128 */
__device__ __forceinline__ void
atomic_add128(ull *p, ull lo, ull hi)
{
	ull old = atomicAdd(&p[0], lo);

	hi += (old + lo < old) ? 1 : 0;
	if (hi != 0)
		atomicAdd(&p[1], hi);
}

/* a float sum's add, and float8pl's overflow (finite operands, infinite sum) */
__device__ __forceinline__ void
atomic_add_float(ull *sum, ull *overflow, double v)
{
	double old = atomicAdd(reinterpret_cast<double *>(sum), v);

	if (query_float_overflow(old, v, __dadd_rn(old, v)))
		atomicOr(overflow, 1ull);
}

/* A row's leaf (query_row_leaf) into aggregate a's state s (shared or global memory). */
__device__ void
atomic_accumulate(const QueryLayout &L, int a, uint64_t lo, uint64_t hi, ull *s)
{
	switch (L.agg_kind[a])
	{
		case GPUOPS_QAGG_COUNT:
			atomicAdd(&s[0], 1ull);
			break;
		case GPUOPS_QAGG_SUM_INT:
		case GPUOPS_QAGG_SUM_NUM:
			atomic_add128(s, lo, hi);
			atomicAdd(&s[2], 1ull);
			break;
		case GPUOPS_QAGG_SUM_FLOAT:
			atomic_add_float(&s[0], &s[2], expr_as_double(lo));
			atomicAdd(&s[1], 1ull);
			break;
		case GPUOPS_QAGG_MIN:
			atomicMin(&s[0], static_cast<ull>(lo));
			atomicAdd(&s[1], 1ull);
			break;
		case GPUOPS_QAGG_MAX:
			atomicMax(&s[0], static_cast<ull>(lo));
			atomicAdd(&s[1], 1ull);
			break;
		default:
			break;
	}
}

/* A block's partial state p of aggregate a into the group's state g. */
__device__ void
atomic_combine(const QueryLayout &L, int a, const ull *p, ull *g)
{
	switch (L.agg_kind[a])
	{
		case GPUOPS_QAGG_COUNT:
			if (p[0] != 0)
				atomicAdd(&g[0], p[0]);
			break;
		case GPUOPS_QAGG_SUM_INT:
		case GPUOPS_QAGG_SUM_NUM:
			if (p[2] == 0)
				break;
			atomic_add128(g, p[0], p[1]);
			atomicAdd(&g[2], p[2]);
			break;
		case GPUOPS_QAGG_SUM_FLOAT:
			if (p[1] == 0)
				break;
			atomic_add_float(&g[0], &g[2], expr_as_double(p[0]));
			if (p[2] != 0)
				atomicOr(&g[2], 1ull);
			atomicAdd(&g[1], p[1]);
			break;
		case GPUOPS_QAGG_MIN:
		case GPUOPS_QAGG_MAX:
			if (p[1] == 0)
				break;
			if (L.agg_kind[a] == GPUOPS_QAGG_MIN)
				atomicMin(&g[0], p[0]);
			else
				atomicMax(&g[0], p[0]);
			atomicAdd(&g[1], p[1]);
			break;
		default:
			break;
	}
}

/*
 * A block's cache of the groups its rows hit (shared memory): `tags`
 * hold a group's slot in the table, or kNoTag, and each tag has a
 * partial state (started before the tags are seen).  A row adds to its
 * group's partial state with shared-memory atomics; the block adds each
 * partial state to its group's once, at its end.  So a handful of groups
 * (TPC-H Q1's four, Q6's one) over millions of rows costs one global
 * atomic per group and block, not one per row.  A group that finds no
 * tag within kCacheProbes goes to the table directly.
 */
constexpr ull kNoTag = ~0ull;
constexpr int kCacheProbes = 8;

__device__ int
cache_find(ull *tags, int ntags, uint64_t slot)
{
	int pos = static_cast<int>((slot * 0x9e3779b97f4a7c15ull) >> 40) % ntags;

	for (int p = 0; p < kCacheProbes && p < ntags; p++)
	{
		ull t = vload(&tags[pos]);

		if (t == kNoTag)
			t = atomicCAS(&tags[pos], kNoTag, static_cast<ull>(slot));
		if (t == kNoTag || t == slot)
			return pos;
		pos = pos + 1 == ntags ? 0 : pos + 1;
	}
	return -1;
}

} /* namespace gpuquery */
} /* namespace cuda */
} /* namespace gpuops */

#endif
