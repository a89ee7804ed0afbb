/*
 * topn_cpu.cpp
 *    The CPU twin of the top-N backend (gpuops_topn.h): the same candidates,
 *    cuts and order as topn_cuda.cu, on the host.
 */
#include <algorithm>
#include <chrono>
#include <numeric>
#include <vector>

#include "backend_tables.hpp"
#include "topn_common.hpp"

namespace gpuops {
namespace {

struct CpuTopn
{
	GpuopsSettings settings;
	GpuopsTopnSpec spec;
	TopnKeys keys;
	int nw;
	uint64_t capacity;
	std::vector<uint64_t> words; /* per candidate nw key words, then its payload (compared last) */
	uint64_t count = 0;
	bool has_cut = false;
	uint64_t cut[kTopnMaxWords + 1];
	std::vector<uint64_t> result;
	GpuopsTopnStats stats{};

	/* the entry points (backend_tables.hpp) */
	CpuTopn(const GpuopsSettings *settings, const GpuopsTopnSpec *spec);
	GpuopsStatus topn_add(const GpuopsTopnBatch *batch);
	GpuopsStatus topn_finish(uint64_t *nrows);
	GpuopsStatus topn_result(const uint64_t **payload);
	void topn_stats(GpuopsTopnStats *out) const;

	uint64_t *row(uint64_t i) { return &words[i * (nw + 1)]; }
	void order_and_cut(uint64_t keep);
};

CpuTopn::CpuTopn(const GpuopsSettings *settings, const GpuopsTopnSpec *spec)
	: settings(*settings), spec(*spec), keys(topn_keys(*spec))
{
	nw = keys.words();
	capacity = topn_capacity(*spec);
}

/* Orders the candidates and keeps the first `keep`; the cut is then the last one kept. */
void
CpuTopn::order_and_cut(uint64_t keep)
{
	std::vector<uint64_t> idx(count);
	std::vector<uint64_t> kept;
	auto before = [this](uint64_t a, uint64_t b) { return topn_before(row(a), row(b), nw + 1); };

	std::iota(idx.begin(), idx.end(), uint64_t(0));
	keep = std::min(keep, count);
	if (keep < count)
		std::nth_element(idx.begin(), idx.begin() + keep, idx.end(), before);
	idx.resize(keep);
	std::sort(idx.begin(), idx.end(), before);
	kept.resize(keep * (nw + 1));
	for (uint64_t i = 0; i < keep; i++)
		std::copy(row(idx[i]), row(idx[i]) + nw + 1, &kept[i * (nw + 1)]);
	words.swap(kept);
	count = keep;
	stats.cuts++;
	if (keep == spec.bound)
	{
		std::copy(row(keep - 1), row(keep - 1) + nw + 1, cut);
		has_cut = true;
	}
}

GpuopsStatus
CpuTopn::topn_add(const GpuopsTopnBatch *b)
{
	auto t0 = std::chrono::steady_clock::now();
	uint64_t w[kTopnMaxWords + 1];

	maybe_inject(GPUOPS_FAULT_KERNEL_ERROR, settings.fault);
	for (uint32_t i = 0; i < b->nrows; i++)
	{
		check_interrupt_every(i);
		for (int k = 0; k < keys.nkeys; k++)
			topn_key_words(keys, k, b->words[k][i], b->nulls[k] != nullptr && b->nulls[k][i] != 0,
						   &w[2 * k]);
		w[nw] = b->payload[i];
		if (has_cut && !topn_before(w, cut, nw + 1))
			continue;
		if (count == capacity)
			order_and_cut(spec.bound);
		if (has_cut && !topn_before(w, cut, nw + 1))
			continue;
		words.resize((count + 1) * (nw + 1));
		std::copy(w, w + nw + 1, row(count));
		count++;
		stats.kept++;
	}
	stats.rows += b->nrows;
	stats.kernel_ms += ms_since(t0);
	return GPUOPS_OK;
}

GpuopsStatus
CpuTopn::topn_finish(uint64_t *nrows)
{
	auto t0 = std::chrono::steady_clock::now();

	order_and_cut(spec.bound);
	result.resize(count);
	for (uint64_t i = 0; i < count; i++)
		result[i] = row(i)[nw];
	*nrows = count;
	stats.bytes_from_device += count * sizeof(uint64_t);
	stats.kernel_ms += ms_since(t0);
	return GPUOPS_OK;
}

GpuopsStatus
CpuTopn::topn_result(const uint64_t **payload)
{
	*payload = result.data();
	return GPUOPS_OK;
}

void
CpuTopn::topn_stats(GpuopsTopnStats *out) const
{
	*out = stats;
}

constexpr GpuopsTopnBackend cpu_topn_backend = shell::make_topn_backend<CpuTopn>("cpu");

} /* namespace */
} /* namespace gpuops */

extern "C" const GpuopsTopnBackend *
gpuops_cpu_topn_backend(void) noexcept
{
	return &gpuops::cpu_topn_backend;
}
