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

#include "device_common.hpp"
#include "merge_common.hpp"

namespace gpuops {
namespace {

struct Side
{
	std::vector<uint64_t> words[GPUOPS_MAX_JOIN_KEYS];	/* in sorted order */
	std::vector<uint8_t> nullmask;
	std::vector<uint32_t> order;	/* sorted position -> row */
	uint64_t	n = 0;
	bool		loaded = false;

	MjKeys		keys(int nkeys) const
	{
		MjKeys		k = {};

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
	int			nkeys = 0;
	Side		side[2];
	std::vector<uint64_t> offsets;	/* per sorted outer row: its first pair; [m] = total */
	std::vector<uint64_t> lb;
	uint64_t	written = 0;
	uint64_t	window = 0;
	std::vector<uint32_t> probe_out, build_out;
	GpuopsMergeJoinStats stats = {};
};

uint64_t
budget(const GpuopsSettings &s)
{
	return s.device_memory_limit / (s.device_share ? s.device_share : 1);
}

GpuopsStatus
cpu_mj_begin(const GpuopsSettings *settings, int nkeys, GpuopsMergeJoin **out) noexcept
{
	*out = nullptr;
	return guarded([&]() {
		maybe_inject(GPUOPS_FAULT_NO_DEVICE, settings->fault);
		if (nkeys < 1 || nkeys > GPUOPS_MAX_JOIN_KEYS)
			fail(GPUOPS_ERR_INTERNAL, "bad number of merge keys: %d", nkeys);
		auto		mj = std::make_unique<CpuMergeJoin>();

		mj->settings = *settings;
		mj->nkeys = nkeys;
		mj->window = join_window_pairs_for_budget(budget(*settings));
		*out = reinterpret_cast<GpuopsMergeJoin *>(mj.release());
		return GPUOPS_OK;
	});
}

GpuopsStatus
cpu_mj_side(GpuopsMergeJoin *h, int which, const GpuopsJoinKeys *keys) noexcept
{
	return guarded([&]() {
		auto	   *mj = reinterpret_cast<CpuMergeJoin *>(h);
		auto		t0 = std::chrono::steady_clock::now();
		uint64_t	n = keys->nrows;
		int			nk = mj->nkeys;
		Side	   &s = mj->side[which ? 1 : 0];
		std::vector<uint8_t> mask(n, 0);
		MjKeys		raw = {};

		maybe_inject(GPUOPS_FAULT_OUT_OF_MEMORY, mj->settings.fault);
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
		uint64_t	compared = 0;

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
		(which ? mj->stats.inner_rows : mj->stats.outer_rows) = n;
		mj->stats.kernel_ms += ms_since(t0);
		return GPUOPS_OK;
	});
}

void
write_window(CpuMergeJoin *mj, GpuopsJoinPairs *pairs)
{
	const Side &o = mj->side[0];
	const Side &in = mj->side[1];
	uint64_t	total = mj->offsets[o.n];
	uint64_t	from = mj->written;
	uint64_t	m = std::min(total - from, mj->window);

	mj->probe_out.resize(m);
	mj->build_out.resize(m);
	for (uint64_t w = 0; w < m; w++)
	{
		uint64_t	idx = from + w;
		uint64_t	i = join_owner(mj->offsets.data(), o.n, idx);

		mj->probe_out[w] = o.order[i];
		mj->build_out[w] = in.order[mj->lb[i] + (idx - mj->offsets[i])];
	}
	mj->written = from + m;
	pairs->npairs = m;
	pairs->probe_rows = mj->probe_out.data();
	pairs->build_rows = mj->build_out.data();
	pairs->more = mj->written < total;
}

GpuopsStatus
cpu_mj_join(GpuopsMergeJoin *h, GpuopsJoinPairs *pairs) noexcept
{
	return guarded([&]() {
		auto	   *mj = reinterpret_cast<CpuMergeJoin *>(h);
		auto		t0 = std::chrono::steady_clock::now();
		const Side &o = mj->side[0];
		const Side &in = mj->side[1];
		MjKeys		ok = o.keys(mj->nkeys),
					ik = in.keys(mj->nkeys);
		std::vector<uint64_t> ub(o.n + 1);

		maybe_inject(GPUOPS_FAULT_KERNEL_ERROR, mj->settings.fault);
		if (!o.loaded || !in.loaded)
			fail(GPUOPS_ERR_INTERNAL, "merge join: a side is missing");
		mj->lb.assign(o.n + 1, 0);
		mj_merge_segment<false>(ok, o.n, ik, in.n, 0, o.n + in.n, mj->lb.data());
		mj_merge_segment<true>(ok, o.n, ik, in.n, 0, o.n + in.n, ub.data());
		mj->offsets.assign(o.n + 1, 0);
		for (uint64_t i = 0; i < o.n; i++)
			mj->offsets[i + 1] = mj->offsets[i] + (o.nullmask[i] ? 0 : ub[i] - mj->lb[i]);
		mj->written = 0;
		mj->stats.pairs = mj->offsets[o.n];
		if (pairs)
			write_window(mj, pairs);
		mj->stats.kernel_ms += ms_since(t0);
		return GPUOPS_OK;
	});
}

GpuopsStatus
cpu_mj_next_pairs(GpuopsMergeJoin *h, GpuopsJoinPairs *pairs) noexcept
{
	return guarded([&]() {
		auto	   *mj = reinterpret_cast<CpuMergeJoin *>(h);
		auto		t0 = std::chrono::steady_clock::now();

		maybe_inject(GPUOPS_FAULT_KERNEL_ERROR, mj->settings.fault);
		mj->stats.windows++;
		write_window(mj, pairs);
		mj->stats.kernel_ms += ms_since(t0);
		return GPUOPS_OK;
	});
}

GpuopsStatus
cpu_mj_outer_order(GpuopsMergeJoin *h, const uint32_t **order) noexcept
{
	*order = reinterpret_cast<CpuMergeJoin *>(h)->side[0].order.data();
	return GPUOPS_OK;
}

uint64_t
cpu_mj_capacity(const GpuopsMergeJoin *h) noexcept
{
	auto	   *mj = reinterpret_cast<const CpuMergeJoin *>(h);

	return mj_rows_for_budget(budget(mj->settings), mj->nkeys);
}

void
cpu_mj_stats(const GpuopsMergeJoin *h, GpuopsMergeJoinStats *stats) noexcept
{
	*stats = reinterpret_cast<const CpuMergeJoin *>(h)->stats;
}

void
cpu_mj_end(GpuopsMergeJoin *h) noexcept
{
	delete reinterpret_cast<CpuMergeJoin *>(h);
}

const GpuopsMergeJoinBackend cpu_mergejoin_backend = {
	"cpu",
	cpu_mj_begin,
	cpu_mj_side,
	cpu_mj_join,
	cpu_mj_next_pairs,
	cpu_mj_outer_order,
	cpu_mj_capacity,
	cpu_mj_stats,
	cpu_mj_end,
};

}								/* namespace */
}								/* namespace gpuops */

extern "C" const GpuopsMergeJoinBackend *
gpuops_cpu_mergejoin_backend(void) noexcept
{
	return &gpuops::cpu_mergejoin_backend;
}
