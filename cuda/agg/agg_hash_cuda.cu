/*
 * agg_hash_cuda.cu
 *    Hash aggregation on the GPU, for few groups (gpuops_device.h).
 *
 * 1. Each row finds its group's slot in an open-addressing table in global
 *    memory (linear probing, two slots per expected group): a slot holds
 *    the row that claimed it (atomicCAS), and a row belongs to a slot when
 *    its packed key equals that row's.  The groups are counted as slots are
 *    claimed; more than the capacity and the caller sorts instead.
 * 2. The claimed slots are compacted and sorted by key words (a radix sort
 *    of the groups, not the rows), so groups come out in the sort
 *    strategy's order; each slot gets its group's rank.
 * 3. One pass over the rows accumulates every aggregate's state with
 *    64-bit atomics: in shared memory when all groups' states fit there
 *    (each block then adds its totals to global memory once), else in
 *    global memory directly.  128- and 192-bit sums carry between words,
 *    each wrap of a word added by the thread that caused it, so the sums
 *    are exact in any order.
 * 4. With min or max: a second pass finds, per group, the last row holding
 *    the best value (atomicMax of row + 1), as the sort strategy's tie rule
 *    does.
 */
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <algorithm>
#include <climits>

#include "agg_common.hpp"
#include "agg_hash.cuh"
#include "agg_sort.cuh"
#include "device_array.cuh"
#include "launch.cuh"

namespace gpuops {
namespace cuda {
namespace {

typedef unsigned long long ull;

constexpr uint32_t kEmpty = 0xffffffffu;

/* shared memory a block may hold states in (the default limit, no opt-in) */
constexpr size_t kSharedStateBytes = 48 * 1024;

struct HashAggParams
{
	int naggs;
	int stride; /* words per group (agg_hash_stride) */
	uint8_t kinds[GPUOPS_MAX_AGGS];
	uint8_t value_kinds[GPUOPS_MAX_AGGS];
	uint16_t offs[GPUOPS_MAX_AGGS]; /* each state's first word in the group's */
	const uint8_t *values[GPUOPS_MAX_AGGS];
	const uint8_t *nulls[GPUOPS_MAX_AGGS];
};

__device__ uint64_t
hash_key(const uint64_t *words, int nwords, uint64_t n, uint64_t row)
{
	uint64_t h = 0x9e3779b97f4a7c15ull;

	for (int w = 0; w < nwords; w++)
	{
		h ^= words[w * n + row];
		h *= 0xbf58476d1ce4e5b9ull;
		h ^= h >> 31;
	}
	return h;
}

__device__ bool
same_key(const uint64_t *words, int nwords, uint64_t n, uint64_t a, uint64_t b)
{
	for (int w = 0; w < nwords; w++)
		if (words[w * n + a] != words[w * n + b])
			return false;
	return true;
}

/*
 * Step 1.  A slot once claimed never changes, so a plain read that sees a
 * row is final; one that sees kEmpty is settled by the CAS.  Once more
 * groups than the capacity are claimed the answer is known (the caller
 * sorts), and every row stops probing: without that stop, a table filled
 * by more groups than the planner expected made each later row walk the
 * whole table (TPC-H Q18 at 24M rows and 6M groups ran for hours).
 */
__global__ void
insert_kernel(const uint64_t *words, int nwords, uint64_t n, uint32_t *table, uint64_t mask,
			  uint32_t *slot_of_row, ull *claimed, uint64_t capacity)
{
	uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x;

	if (i >= n)
		return;
	uint64_t h = hash_key(words, nwords, n, i) & mask;

	for (uint64_t probe = 0; probe <= mask; probe++)
	{
		uint32_t owner;

		if ((probe & 15) == 15 && *reinterpret_cast<volatile ull *>(claimed) > capacity)
		{
			slot_of_row[i] = 0;
			return;
		}
		owner = table[h];

		if (owner == kEmpty)
		{
			owner = atomicCAS(&table[h], kEmpty, static_cast<uint32_t>(i));
			if (owner == kEmpty)
			{
				atomicAdd(claimed, 1ull);
				slot_of_row[i] = static_cast<uint32_t>(h);
				return;
			}
		}
		if (same_key(words, nwords, n, owner, i))
		{
			slot_of_row[i] = static_cast<uint32_t>(h);
			return;
		}
		h = (h + 1) & mask;
	}
	/* a full table: more groups than slots, which the count already shows */
	atomicAdd(claimed, static_cast<ull>(mask) + 2);
	slot_of_row[i] = 0;
}

struct Claimed
{
	const uint32_t *table;
	__device__ bool operator()(uint32_t s) const { return table[s] != kEmpty; }
};

/* the radix pass's keys: word w of the groups' first claimers, in their current order */
__global__ void
group_word_kernel(const uint64_t *words, uint64_t n, int w, const uint32_t *table,
				  const uint32_t *slots, const uint32_t *perm, uint64_t ngroups, uint64_t *out)
{
	uint64_t j = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x;

	if (j < ngroups)
		out[j] = words[w * n + table[slots[perm[j]]]];
}

__global__ void
rank_kernel(const uint32_t *slots, const uint32_t *perm, uint64_t ngroups, uint32_t *rank)
{
	uint64_t k = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x;

	if (k < ngroups)
		rank[slots[perm[k]]] = static_cast<uint32_t>(k);
}

/* A state word's starting value: the first row and a min's best start high. */
__device__ ull
init_word(const HashAggParams &p, int word)
{
	if (word == 0)
		return ULLONG_MAX;
	for (int a = 0; a < p.naggs; a++)
		if (word == p.offs[a])
			return p.kinds[a] == GPUOPS_AGG_MIN ? ULLONG_MAX : 0;
	return 0;
}

__global__ void
init_states_kernel(HashAggParams p, uint64_t ngroups, ull *states)
{
	uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x;

	if (i < ngroups * p.stride)
		states[i] = init_word(p, static_cast<int>(i % p.stride));
}

/* *p += (hi:lo) modulo 2^128 */
__device__ void
add128(ull *p, ull lo, ull hi)
{
	ull old = atomicAdd(&p[0], lo);

	hi += (old + lo < old) ? 1 : 0;
	if (hi != 0)
		atomicAdd(&p[1], hi);
}

/* *p += (top:mid:lo) modulo 2^192 */
__device__ void
add192(ull *p, ull lo, ull mid, ull top)
{
	ull old = atomicAdd(&p[0], lo);
	ull m = mid + ((old + lo < old) ? 1 : 0);

	top += (m < mid) ? 1 : 0;
	old = atomicAdd(&p[1], m);
	top += (old + m < old) ? 1 : 0;
	if (top != 0)
		atomicAdd(&p[2], top);
}

__device__ const uint8_t *
raw_value(const HashAggParams &p, int a, uint64_t i)
{
	if (agg_null(p.nulls[a], i))
		return nullptr;
	return p.values[a] + i * gpuops_key_raw_width(static_cast<GpuopsKeyKind>(p.value_kinds[a]));
}

/* Row i into aggregate a's state s (step 3). */
__device__ void
accumulate(const HashAggParams &p, int a, uint64_t i, ull *s)
{
	GpuopsKeyKind vkind = static_cast<GpuopsKeyKind>(p.value_kinds[a]);

	if (p.kinds[a] == GPUOPS_AGG_COUNT)
	{
		if (!agg_null(p.nulls[a], i))
			atomicAdd(&s[0], 1ull);
		return;
	}
	const uint8_t *raw = raw_value(p, a, i);

	if (raw == nullptr)
		return;
	switch (p.kinds[a])
	{
		case GPUOPS_AGG_SUM_INT:
		case GPUOPS_AGG_SUMSQ_INT:
			{
				int64_t v = agg_int_value(vkind, raw);

				add128(s, static_cast<ull>(v), v < 0 ? ULLONG_MAX : 0);
				atomicAdd(&s[2], 1ull);
				if (p.kinds[a] == GPUOPS_AGG_SUMSQ_INT)
				{
					unsigned __int128 m = v < 0
						? static_cast<unsigned __int128>(-static_cast<__int128>(v))
						: static_cast<unsigned __int128>(v);
					unsigned __int128 sq = m * m;

					add192(s + 3, static_cast<ull>(sq), static_cast<ull>(sq >> 64), 0);
				}
				break;
			}
		case GPUOPS_AGG_MIN:
		case GPUOPS_AGG_MAX:
			{
				uint64_t w[2] = {0, 0};

				value_words(vkind, raw, w);
				if (p.kinds[a] == GPUOPS_AGG_MIN)
					atomicMin(&s[0], static_cast<ull>(w[0]));
				else
					atomicMax(&s[0], static_cast<ull>(w[0]));
				break;
			}
		default:
			break;
	}
}

/* A block's state of aggregate a, s, added to the global state g. */
__device__ void
combine(const HashAggParams &p, int a, const ull *s, ull *g)
{
	switch (p.kinds[a])
	{
		case GPUOPS_AGG_COUNT:
			if (s[0] != 0)
				atomicAdd(&g[0], s[0]);
			break;
		case GPUOPS_AGG_SUM_INT:
		case GPUOPS_AGG_SUMSQ_INT:
			if (s[2] == 0)
				break;
			add128(g, s[0], s[1]);
			atomicAdd(&g[2], s[2]);
			if (p.kinds[a] == GPUOPS_AGG_SUMSQ_INT)
				add192(g + 3, s[3], s[4], s[5]);
			break;
		case GPUOPS_AGG_MIN:
			atomicMin(&g[0], s[0]);
			break;
		case GPUOPS_AGG_MAX:
			atomicMax(&g[0], s[0]);
			break;
		default:
			break;
	}
}

/*
 * Steps 3 (Rows = false) and 4 (Rows = true), over a grid-stride range of
 * rows, into shared memory (Shared) or global memory directly.
 */
template <bool Shared, bool Rows>
__global__ void
accumulate_kernel(HashAggParams p, const uint32_t *slot_of_row, const uint32_t *rank, uint64_t n,
				  uint64_t ngroups, ull *gstates)
{
	extern __shared__ ull shared_states[];
	ull *states = Shared ? shared_states : gstates;
	uint64_t nwords = ngroups * p.stride;

	if (Shared)
	{
		for (uint64_t w = threadIdx.x; w < nwords; w += blockDim.x)
			shared_states[w] = Rows ? 0 : init_word(p, static_cast<int>(w % p.stride));
		__syncthreads();
	}
	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < n;
		 i += gridDim.x * (uint64_t) blockDim.x)
	{
		uint64_t g = rank[slot_of_row[i]];
		ull *s = states + g * p.stride;

		/* if constexpr: the other pass's loop is not compiled in (nvcc warns that it is unreachable) */
		if constexpr (!Rows)
		{
			atomicMin(&s[0], static_cast<ull>(i));
			for (int a = 0; a < p.naggs; a++)
				accumulate(p, a, i, s + p.offs[a]);
		}
		else
		{
			for (int a = 0; a < p.naggs; a++)
			{
				const uint8_t *raw;
				uint64_t w[2] = {0, 0};

				if (p.kinds[a] != GPUOPS_AGG_MIN && p.kinds[a] != GPUOPS_AGG_MAX)
					continue;
				raw = raw_value(p, a, i);
				if (raw == nullptr)
					continue;
				value_words(static_cast<GpuopsKeyKind>(p.value_kinds[a]), raw, w);
				if (w[0] == gstates[g * p.stride + p.offs[a]])
					atomicMax(&s[p.offs[a] + 1], static_cast<ull>(i + 1));
			}
		}
	}
	if (!Shared)
		return;
	__syncthreads();
	for (uint64_t g = threadIdx.x; g < ngroups; g += blockDim.x)
	{
		const ull *s = shared_states + g * p.stride;
		ull *gs = gstates + g * p.stride;

		if constexpr (!Rows)
		{
			if (s[0] == ULLONG_MAX)
				continue; /* no row of this block */
			atomicMin(&gs[0], s[0]);
			for (int a = 0; a < p.naggs; a++)
				combine(p, a, s + p.offs[a], gs + p.offs[a]);
		}
		else
		{
			for (int a = 0; a < p.naggs; a++)
				if ((p.kinds[a] == GPUOPS_AGG_MIN || p.kinds[a] == GPUOPS_AGG_MAX) &&
					s[p.offs[a] + 1] != 0)
					atomicMax(&gs[p.offs[a] + 1], s[p.offs[a] + 1]);
		}
	}
}

/* One state, as the caller sees it (the sort strategy's to_result). */
void
hash_result(GpuopsAggKind kind, const ull *s, GpuopsAggResult *r)
{
	memset(r, 0, sizeof(*r));
	switch (kind)
	{
		case GPUOPS_AGG_COUNT:
			r->count = s[0];
			break;
		case GPUOPS_AGG_SUM_INT:
		case GPUOPS_AGG_SUMSQ_INT:
			r->sum_lo = s[0];
			r->sum_hi = static_cast<int64_t>(s[1]);
			r->count = s[2];
			if (kind == GPUOPS_AGG_SUMSQ_INT)
			{
				r->sum2_lo = s[3];
				r->sum2_hi = s[4];
				r->sum2_top = s[5];
			}
			break;
		default:
			/* MIN, MAX: the winning row, if any value was counted */
			r->count = s[1] != 0 ? 1 : 0;
			r->row = s[1] != 0 ? s[1] - 1 : 0;
			break;
	}
}

void
launch_accumulate(bool rows, bool shared, unsigned grid, size_t shmem, cudaStream_t s,
				  const HashAggParams &p, const uint32_t *slot_of_row, const uint32_t *rank,
				  uint64_t n, uint64_t ngroups, ull *states)
{
	if (shared && rows)
		accumulate_kernel<true, true>
			<<<grid, kThreads, shmem, s>>>(p, slot_of_row, rank, n, ngroups, states);
	else if (shared)
		accumulate_kernel<true, false>
			<<<grid, kThreads, shmem, s>>>(p, slot_of_row, rank, n, ngroups, states);
	else if (rows)
		accumulate_kernel<false, true>
			<<<grid, kThreads, 0, s>>>(p, slot_of_row, rank, n, ngroups, states);
	else
		accumulate_kernel<false, false>
			<<<grid, kThreads, 0, s>>>(p, slot_of_row, rank, n, ngroups, states);
	GPUOPS_CUDA_CHECK_LAUNCH("hash aggregate");
}

} /* namespace */

bool
hash_aggregate(const HashAggInput &in, std::vector<uint64_t> &group_rows,
			   std::vector<GpuopsAggResult> &results, uint64_t *ngroups_out, uint64_t *device_bytes,
			   uint64_t *bytes_from_device)
{
	Runtime *rt = in.rt;
	cudaStream_t s = in.stream;
	const GpuopsAggSpec &spec = *in.spec;
	uint64_t n = in.n;
	int nwords = agg_key_words(spec);
	uint64_t slots = 64;
	uint64_t ngroups;
	bool minmax = false;
	HashAggParams p = {};
	DeviceArray table, slot_of_row, counter, gslots, nsel, perm, rank, states, temp;
	size_t temp_bytes = 0;
	int device = 0, sms = 0;
	unsigned grid;
	size_t shmem;

	while (slots < 2 * in.capacity)
		slots *= 2;
	/* step 1 */
	table.get(rt, slots * 4, s);
	GPUOPS_CUDA_TRY(cudaMemsetAsync(table.as<void>(), 0xff, slots * 4, s));
	slot_of_row.get(rt, n * 4 + 4, s);
	counter.get(rt, 8, s);
	GPUOPS_CUDA_TRY(cudaMemsetAsync(counter.as<void>(), 0, 8, s));
	insert_kernel<<<blocks(n), kThreads, 0, s>>>(in.words, nwords, n, table.as<uint32_t>(),
												 slots - 1, slot_of_row.as<uint32_t>(),
												 counter.as<ull>(), in.capacity);
	GPUOPS_CUDA_CHECK_LAUNCH("hash insert");
	GPUOPS_CUDA_TRY(
		cudaMemcpyAsync(rt->pinned_scalar(), counter.as<void>(), 8, cudaMemcpyDeviceToHost, s));
	*bytes_from_device += 8;
	::gpuops::cuda::sync_stream(s);
	ngroups = rt->pinned_scalar()[0];
	if (ngroups > in.capacity)
		return false;

	/* step 2 */
	gslots.get(rt, ngroups * 4 + 4, s);
	nsel.get(rt, 8, s);
	GPUOPS_CUDA_TRY(cub::DeviceSelect::If(
		nullptr, temp_bytes, thrust::counting_iterator<uint32_t>(0), gslots.as<uint32_t>(),
		nsel.as<uint64_t>(), static_cast<int64_t>(slots), Claimed{table.as<uint32_t>()}, s));
	temp.get(rt, temp_bytes + 8, s);
	GPUOPS_CUDA_TRY(cub::DeviceSelect::If(
		temp.as<void>(), temp_bytes, thrust::counting_iterator<uint32_t>(0), gslots.as<uint32_t>(),
		nsel.as<uint64_t>(), static_cast<int64_t>(slots), Claimed{table.as<uint32_t>()}, s));
	perm.get(rt, ngroups * 4 + 4, s);
	iota_kernel<<<blocks(ngroups), kThreads, 0, s>>>(perm.as<uint32_t>(), ngroups);
	GPUOPS_CUDA_CHECK_LAUNCH("iota");
	sort_by_words(rt, s, spec, nwords, ngroups, perm, [&](int w, const uint32_t *p, uint64_t *out) {
		group_word_kernel<<<blocks(ngroups), kThreads, 0, s>>>(in.words, n, w, table.as<uint32_t>(),
															   gslots.as<uint32_t>(), p, ngroups,
															   out);
		GPUOPS_CUDA_CHECK_LAUNCH("group word");
	});
	temp.reset();
	rank.get(rt, slots * 4, s);
	rank_kernel<<<blocks(ngroups), kThreads, 0, s>>>(gslots.as<uint32_t>(), perm.as<uint32_t>(),
													 ngroups, rank.as<uint32_t>());
	GPUOPS_CUDA_CHECK_LAUNCH("rank");

	/* steps 3 and 4 */
	p.naggs = spec.naggs;
	p.stride = agg_hash_stride(spec);
	for (int a = 0, off = 1; a < spec.naggs; a++)
	{
		p.kinds[a] = static_cast<uint8_t>(spec.kinds[a]);
		p.value_kinds[a] = static_cast<uint8_t>(spec.value_kinds[a]);
		p.offs[a] = static_cast<uint16_t>(off);
		p.values[a] = in.values[a];
		p.nulls[a] = in.nulls[a];
		off += agg_hash_state_words(spec.kinds[a]);
		minmax |= spec.kinds[a] == GPUOPS_AGG_MIN || spec.kinds[a] == GPUOPS_AGG_MAX;
	}
	states.get(rt, ngroups * p.stride * 8 + 8, s);
	init_states_kernel<<<blocks(ngroups * p.stride), kThreads, 0, s>>>(p, ngroups,
																	   states.as<ull>());
	GPUOPS_CUDA_CHECK_LAUNCH("init states");
	shmem = ngroups * p.stride * 8;
	GPUOPS_CUDA_TRY(cudaGetDevice(&device));
	GPUOPS_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
	/* enough blocks to fill the device; each shared-memory block adds its totals once */
	grid = std::max(1u, std::min(blocks(n), static_cast<unsigned>(sms) * 8));
	launch_accumulate(false, shmem <= kSharedStateBytes, grid, shmem, s, p,
					  slot_of_row.as<uint32_t>(), rank.as<uint32_t>(), n, ngroups,
					  states.as<ull>());
	if (minmax)
		launch_accumulate(true, shmem <= kSharedStateBytes, grid, shmem, s, p,
						  slot_of_row.as<uint32_t>(), rank.as<uint32_t>(), n, ngroups,
						  states.as<ull>());
	*device_bytes = std::max<uint64_t>(*device_bytes, rt->used());

	std::vector<ull> h(ngroups * p.stride);

	::gpuops::cuda::copy_to_host(h.data(), states.as<ull>(), ngroups * p.stride * 8, s,
								 bytes_from_device);
	group_rows.resize(ngroups);
	results.resize(ngroups * spec.naggs);
	for (uint64_t g = 0; g < ngroups; g++)
	{
		const ull *gs = &h[g * p.stride];

		::gpuops::check_interrupt_every(g);
		group_rows[g] = gs[0];
		for (int a = 0; a < spec.naggs; a++)
			hash_result(spec.kinds[a], gs + p.offs[a], &results[g * spec.naggs + a]);
	}
	*ngroups_out = ngroups;
	return true;
}

} /* namespace cuda */
} /* namespace gpuops */
