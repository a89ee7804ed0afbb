/*
 * query_kernels.cuh
 *    The CUDA query backend's kernels (query_cuda.cu launches them): a
 *    batch's rows through qual, key, slot and states (with the block cache
 *    of partial states while the groups are few), the rehash into a grown
 *    table, and the groups packed at finish.  Included by query_cuda.cu
 *    alone: its definitions have internal linkage.
 */
#ifndef GPUOPS_QUERY_KERNELS_CUH
#define GPUOPS_QUERY_KERNELS_CUH

#include "expr_columns.hpp"
#include "launch.cuh"
#include "page_deform.hpp"
#include "page_gather.cuh"
#include "query_common.hpp"
#include "query_table.cuh"

namespace gpuops {
namespace cuda {
namespace gpuquery {
namespace {

/* the device's counters */
enum Counter
{
	kGroups = 0, /* slots claimed (QueryTable.groups) */
	kDeferred,	 /* rows listed to run again after growth */
	kEscape,	 /* (row << kEscapeShift) | code, least wins; ~0: none */
	kPassed,	 /* rows the qual kept (first runs only) */
	kCompacted,	 /* groups written out at finish */
	kCounters
};

constexpr int kEscapeShift = 12; /* escape codes are below 2^12 */
constexpr ull kNoEscape = ~0ull;
constexpr uint64_t kCacheMaxGroups = 256; /* a block cache while the table has no more */
constexpr size_t kCacheBytes = 40 * 1024;
constexpr int kCacheMaxTags = 256;
constexpr uint64_t kMinCapacity = 64;

static_assert(sizeof(QueryLayout) % 4 == 0, "the layout is copied in 32-bit words");

/* One row of an input set as the interpreter and the key packing read it. */
struct DevRow
{
	const ColumnsView *cols;
	const uint64_t *bytes_words; /* the bytes columns, two words a row, column after column */
	const int8_t *bytes_slot;
	uint64_t i;

	GPUOPS_HD uint64_t word(int c) const { return cols->words[c * cols->n + i]; }
	GPUOPS_HD bool null(int c) const { return cols->nulls[c * cols->n + i] != 0; }
	GPUOPS_HD uint64_t bytes(int c, int j) const
	{
		return bytes_words[(static_cast<uint64_t>(bytes_slot[c]) * cols->n + i) * 2 + j];
	}
};

struct BatchArgs
{
	const QueryLayout *layout;
	const GpuopsExprProgram *progs;
	ColumnsView cols;
	const uint64_t *bytes;
	uint64_t base;			 /* the row number of the set's row 0 */
	const uint32_t *rows_in; /* the rows to run, or NULL: rows 0 .. count - 1 */
	uint64_t count;
	uint32_t *rows_out; /* rows deferred */
	QueryTable table;
	QueryDims dims; /* device pointers */
	ull *counters;
	int ntags; /* the block cache's tags (0: none) */
	int first; /* the rows' first run: count those passed */
};

__device__ void
escape(const BatchArgs &A, uint64_t i, uint32_t code)
{
	atomicMin(&A.counters[kEscape], ((A.base + i) << kEscapeShift) | code);
}

/* One row: qual, key, slot (or deferred), every aggregate's leaf into the group's state. */
template <bool Cache>
__device__ void
run_row(const BatchArgs &A, const QueryLayout &L, uint64_t i, ull *tags, ull *partial, ull *solo,
		ull &passed)
{
	DevRow row{&A.cols, A.bytes, L.bytes_slot, i};
	uint64_t key[GPUOPS_QUERY_MAX_KEY_WORDS];
	uint32_t at[GPUOPS_QUERY_MAX_DIMS];
	JoinedRow<DevRow> jr{row, L, A.dims.d, at};
	uint32_t code = query_row_join(L, A.progs, A.dims.d, row, at);
	uint64_t slot;
	ull *s;

	if (code == kQuerySkip)
		return;
	if (code == kQueryPass)
		code = query_row_key(L, A.progs, jr, key);
	if (code >= kQueryEscape)
	{
		escape(A, i, code);
		return;
	}
	passed += A.first ? 1 : 0;
	/*
	 * Without keys every row is the one group's: its slot, once a row of
	 * the block has found it, is kept in shared memory (the table does not
	 * change during a kernel), so Q6's millions of rows do not all read the
	 * same slot word in L2.
	 */
	slot = L.key_words == 0 ? static_cast<uint64_t>(vload(solo)) : kNoSlot;
	if (slot == kNoSlot)
	{
		slot = table_slot(A.table, L, key);
		if (L.key_words == 0)
			*solo = slot;
	}
	if (slot == kNoSlot)
	{
		A.rows_out[atomicAdd(&A.counters[kDeferred], 1ull)] = static_cast<uint32_t>(i);
		return;
	}
	s = A.table.slots + slot * A.table.stride + 1 + L.key_words;
	if constexpr (Cache)
	{
		int t = cache_find(tags, A.ntags, slot);

		if (t >= 0)
			s = partial + static_cast<uint64_t>(t) * L.state_words;
	}
	for (int a = 0; a < L.naggs; a++)
	{
		uint64_t lo = 0, hi = 0;

		code = query_row_leaf(L, A.progs, a, jr, &lo, &hi);
		if (code == kQuerySkip)
			continue;
		if (code >= kQueryEscape)
		{
			escape(A, i, code);
			return;
		}
		atomic_accumulate(L, a, lo, hi, s + L.state_off[a]);
	}
}


/*
 * A pages batch's rows into the set's columns (page_deform.hpp), a thread
 * a row; a value with no device form escapes at its row (base + i).
 */
__global__ void __launch_bounds__(kThreads)
	page_deform_kernel(const __grid_constant__ PageShape S, GpuopsQueryPages P, PageOut o,
					   uint32_t nrows, ull base, ull *escape)
{
	for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < nrows; i += gridDim.x * blockDim.x)
	{
		uint32_t code = page_deform_row(S, P, page_of_row(P.first_row, P.npages, i), i, o);

		if (code != kQueryPass)
			atomicMin(escape, ((base + i) << kEscapeShift) | code);
	}
}

/*
 * A batch's rows (or the deferred ones), grid-stride.  The layout is read
 * into shared memory first; with Cache, the block's partial states are
 * started there too and added to the table at the end.
 */
template <bool Cache>
__global__ void __launch_bounds__(kThreads) batch_kernel(const __grid_constant__ BatchArgs A)
{
	__shared__ QueryLayout L;
	__shared__ ull block_passed;
	__shared__ ull solo; /* without keys: the group's slot, once found */
	extern __shared__ ull cache[];
	ull *tags = cache;
	ull *partial = cache + A.ntags;
	const uint32_t *src = reinterpret_cast<const uint32_t *>(A.layout);
	uint32_t *dst = reinterpret_cast<uint32_t *>(&L);
	ull passed = 0;

	for (unsigned w = threadIdx.x; w < sizeof(QueryLayout) / 4; w += blockDim.x)
		dst[w] = src[w];
	if (threadIdx.x == 0)
	{
		block_passed = 0;
		solo = kNoSlot;
	}
	__syncthreads();
	if constexpr (Cache)
	{
		for (int t = threadIdx.x; t < A.ntags; t += blockDim.x)
		{
			tags[t] = kNoTag;
			query_state_init(L, reinterpret_cast<uint64_t *>(partial + t * L.state_words));
		}
		__syncthreads();
	}
	for (uint64_t j = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; j < A.count;
		 j += gridDim.x * static_cast<uint64_t>(blockDim.x))
		run_row<Cache>(A, L, A.rows_in ? A.rows_in[j] : j, tags, partial, &solo, passed);
	if (passed != 0)
		atomicAdd(&block_passed, passed);
	__syncthreads();
	if constexpr (Cache)
	{
		for (int t = threadIdx.x; t < A.ntags; t += blockDim.x)
		{
			ull slot = tags[t];

			if (slot == kNoTag)
				continue;

			const ull *p = partial + t * L.state_words;
			ull *g = A.table.slots + slot * A.table.stride + 1 + L.key_words;

			for (int a = 0; a < L.naggs; a++)
				atomic_combine(L, a, p + L.state_off[a], g + L.state_off[a]);
		}
	}
	if (threadIdx.x == 0 && block_passed != 0)
		atomicAdd(&A.counters[kPassed], block_passed);
}

/*
 * A dimension's lookup from its n keys (query_dims.hpp's shape, as the
 * twin builds it): row i + 1 into the key's slot; a slot claimed twice
 * (a repeated key) sets *dup.
 */
__global__ void
dim_direct_kernel(const ull *keys, uint64_t n, ull min, uint32_t *idx, unsigned *dup)
{
	for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < n;
		 i += gridDim.x * static_cast<uint64_t>(blockDim.x))
		if (atomicCAS(&idx[keys[i] - min], 0u, static_cast<uint32_t>(i + 1)) != 0u)
			*dup = 1;
}

/*
 * Open addressing: a thread claims a slot by its key word (`empty`, a
 * value no key has, marks a free one), then writes the row.  Probes read
 * idx first (query_dim_find), and no probe runs before this kernel ends.
 */
__global__ void
dim_hash_kernel(const ull *keys, uint64_t n, uint64_t mask, ull empty, uint32_t *idx,
				ull *slot_keys, unsigned *dup)
{
	for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < n;
		 i += gridDim.x * static_cast<uint64_t>(blockDim.x))
	{
		ull k = keys[i];

		for (uint64_t pos = query_dim_hash(k) & mask;; pos = (pos + 1) & mask)
		{
			ull old = atomicCAS(&slot_keys[pos], empty, k);

			if (old == empty)
			{
				idx[pos] = static_cast<uint32_t>(i + 1);
				break;
			}
			if (old == k)
			{
				*dup = 1;
				break;
			}
		}
	}
}

/* Every group of the old table into the new one (its keys are distinct: no compare). */
__global__ void
rehash_kernel(const ull *old, uint64_t old_capacity, QueryTable t, int kw)
{
	for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
		 i < old_capacity; i += gridDim.x * static_cast<uint64_t>(blockDim.x))
	{
		const ull *o = old + i * t.stride;
		uint64_t pos;

		if (o[0] != kSlotFull)
			continue;
		pos = query_hash(reinterpret_cast<const uint64_t *>(o + 1), kw) & t.mask;
		while (atomicCAS(&t.slots[pos * t.stride], kSlotEmpty, kSlotFull) != kSlotEmpty)
			pos = (pos + 1) & t.mask;
		for (uint32_t w = 1; w < t.stride; w++)
			t.slots[pos * t.stride + w] = o[w];
	}
}

/* The groups' keys and states, packed (in no particular order). */
__global__ void
compact_kernel(const ull *slots, uint64_t capacity, uint32_t stride, int kw, ull *counter,
			   ull *keys, ull *states)
{
	int sw = static_cast<int>(stride) - 1 - kw;

	for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < capacity;
		 i += gridDim.x * static_cast<uint64_t>(blockDim.x))
	{
		const ull *s = slots + i * stride;
		uint64_t g;

		if (s[0] != kSlotFull)
			continue;
		g = atomicAdd(counter, 1ull);
		for (int w = 0; w < kw; w++)
			keys[g * kw + w] = s[1 + w];
		for (int w = 0; w < sw; w++)
			states[g * sw + w] = s[1 + kw + w];
	}
}

} /* namespace */
} /* namespace gpuquery */
} /* namespace cuda */
} /* namespace gpuops */

#endif
