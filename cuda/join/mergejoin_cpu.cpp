/*
 * mergejoin_cpu.cpp
 *    The CPU twin of the merge join (gpuops_device.h): the same stable
 *    sort order, the same merge-path walk (in one segment) and the same
 *    pair windows as the CUDA backend.  Serves gpuops.device = cpu and the
 *    fallback.
 */
#include <algorithm>
#include <chrono>
#include <memory>
#include <numeric>
#include <vector>

#include "backend_tables.hpp"
#include "device_common.hpp"
#include "merge_common.hpp"
#include "pair_window.hpp"

namespace gpuops {
namespace {

struct Side
{
	std::vector<uint64_t> words[GPUOPS_MAX_JOIN_KEYS]; /* in sorted order */
	std::vector<uint8_t> nullmask;
	std::vector<uint32_t> order; /* sorted position -> row */
	uint64_t n = 0;
	bool loaded = false;

	MjKeys keys(int nkeys) const
	{
		MjKeys k = {};

		for (int i = 0; i < nkeys; i++)
			k.words[i] = words[i].data();
		k.nullmask = nullmask.data();
		k.nkeys = nkeys;
		return k;
	}
};

struct CpuMergeJoin
{
	GpuopsSettings settings;
	int nkeys = 0;
	Side side[2];
	std::vector<uint64_t> offsets; /* per sorted outer row: its first pair; [m] = total */
	std::vector<uint64_t> lb;
	PairWindow window;
	GpuopsMergeJoinStats stats = {};

	/* the entry points (backend_tables.hpp) */
	CpuMergeJoin(const GpuopsSettings *settings, int nkeys);
	GpuopsStatus mj_side(int which, const GpuopsJoinKeys *keys);
	GpuopsStatus mj_join(GpuopsJoinPairs *pairs);
	GpuopsStatus mj_next_pairs(GpuopsJoinPairs *pairs);
	GpuopsStatus mj_outer_order(const uint32_t **order);
	uint64_t mj_capacity() const;
	void mj_stats(GpuopsMergeJoinStats *out) const;
};

uint64_t
budget(const GpuopsSettings &s)
{
	return s.device_memory_limit / (s.device_share ? s.device_share : 1);
}

CpuMergeJoin::CpuMergeJoin(const GpuopsSettings *settings, int nkeys)
{
	maybe_inject(GPUOPS_FAULT_NO_DEVICE, settings->fault);
	if (nkeys < 1 || nkeys > GPUOPS_MAX_JOIN_KEYS)
		fail(GPUOPS_ERR_INTERNAL, "bad number of merge keys: %d", nkeys);
	this->settings = *settings;
	this->nkeys = nkeys;
	window.max_pairs = join_window_pairs_for_budget(budget(*settings));
}

GpuopsStatus
CpuMergeJoin::mj_side(int which, const GpuopsJoinKeys *keys)
{
	auto t0 = std::chrono::steady_clock::now();
	uint64_t n = keys->nrows;
	int nk = nkeys;
	Side &s = side[which ? 1 : 0];
	std::vector<uint8_t> mask(n, 0);
	MjKeys raw = {};

	maybe_inject(GPUOPS_FAULT_OUT_OF_MEMORY, settings.fault);
	if (keys->nkeys != nk || n > UINT32_MAX)
		fail(GPUOPS_ERR_INTERNAL, "merge join side: bad keys");
	for (int k = 0; k < nk; k++)
	{
		raw.words[k] = keys->words[k];
		if (keys->nulls[k])
			for (uint64_t i = 0; i < n; i++)
				mask[i] |= ((keys->nulls[k][i >> 3] >> (i & 7)) & 1) << k;
	}
	raw.nullmask = mask.data();
	raw.nkeys = nk;
	s.order.resize(n);
	std::iota(s.order.begin(), s.order.end(), 0u);
	uint64_t compared = 0;

	std::stable_sort(s.order.begin(), s.order.end(), [&](uint32_t a, uint32_t b) {
		check_interrupt_every(++compared);
		return mj_cmp(raw, a, raw, b) < 0;
	});
	for (int k = 0; k < nk; k++)
	{
		s.words[k].resize(n);
		for (uint64_t i = 0; i < n; i++)
			s.words[k][i] = keys->words[k][s.order[i]];
	}
	s.nullmask.resize(n);
	for (uint64_t i = 0; i < n; i++)
		s.nullmask[i] = mask[s.order[i]];
	s.n = n;
	s.loaded = true;
	(which ? stats.inner_rows : stats.outer_rows) = n;
	stats.kernel_ms += ms_since(t0);
	return GPUOPS_OK;
}

void
write_window(CpuMergeJoin *mj, GpuopsJoinPairs *pairs)
{
	const Side &o = mj->side[0];
	const Side &in = mj->side[1];

	mj->window.write_host(pairs,
						  [&](uint64_t from, uint64_t m, uint32_t *probe_out, uint32_t *build_out) {
							  for (uint64_t w = 0; w < m; w++)
							  {
								  uint64_t idx = from + w;
								  uint64_t i = join_owner(mj->offsets.data(), o.n, idx);

								  probe_out[w] = o.order[i];
								  build_out[w] = in.order[mj->lb[i] + (idx - mj->offsets[i])];
							  }
						  });
}

GpuopsStatus
CpuMergeJoin::mj_join(GpuopsJoinPairs *pairs)
{
	auto t0 = std::chrono::steady_clock::now();
	const Side &o = side[0];
	const Side &in = side[1];
	MjKeys ok = o.keys(nkeys), ik = in.keys(nkeys);
	std::vector<uint64_t> ub(o.n + 1);

	maybe_inject(GPUOPS_FAULT_KERNEL_ERROR, settings.fault);
	if (!o.loaded || !in.loaded)
		fail(GPUOPS_ERR_INTERNAL, "merge join: a side is missing");
	lb.assign(o.n + 1, 0);
	mj_merge_segment<false>(ok, o.n, ik, in.n, 0, o.n + in.n, lb.data());
	mj_merge_segment<true>(ok, o.n, ik, in.n, 0, o.n + in.n, ub.data());
	offsets.assign(o.n + 1, 0);
	for (uint64_t i = 0; i < o.n; i++)
		offsets[i + 1] = offsets[i] + (o.nullmask[i] ? 0 : ub[i] - lb[i]);
	window.start(offsets[o.n]);
	stats.pairs = offsets[o.n];
	if (pairs)
	{
		/* the outer order mj_outer_order hands out, as the CUDA backend copies it */
		stats.bytes_from_device += o.n * sizeof(uint32_t);
		write_window(this, pairs);
	}
	stats.kernel_ms += ms_since(t0);
	return GPUOPS_OK;
}

GpuopsStatus
CpuMergeJoin::mj_next_pairs(GpuopsJoinPairs *pairs)
{
	auto t0 = std::chrono::steady_clock::now();

	maybe_inject(GPUOPS_FAULT_KERNEL_ERROR, settings.fault);
	stats.windows++;
	write_window(this, pairs);
	stats.kernel_ms += ms_since(t0);
	return GPUOPS_OK;
}

GpuopsStatus
CpuMergeJoin::mj_outer_order(const uint32_t **order)
{
	*order = side[0].order.data();
	return GPUOPS_OK;
}

uint64_t
CpuMergeJoin::mj_capacity() const
{
	return mj_rows_for_budget(budget(settings), nkeys);
}

void
CpuMergeJoin::mj_stats(GpuopsMergeJoinStats *out) const
{
	*out = stats;
	out->bytes_from_device += window.published_bytes; /* the pairs (gpuops_device.h) */
}

constexpr GpuopsMergeJoinBackend cpu_mergejoin_backend =
	shell::make_mergejoin_backend<CpuMergeJoin>("cpu");

} /* namespace */
} /* namespace gpuops */

extern "C" const GpuopsMergeJoinBackend *
gpuops_cpu_mergejoin_backend(void) noexcept
{
	return &gpuops::cpu_mergejoin_backend;
}
