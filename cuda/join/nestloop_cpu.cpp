/*
 * nestloop_cpu.cpp
 *    The CPU twin of the nested-loop join (gpuops_device.h): the same
 *    program, the same chunks and the same pair order as the CUDA backend,
 *    generated on the host window by window.  Serves gpuops.device = cpu
 *    and the fallback.
 */
#include <algorithm>
#include <chrono>
#include <memory>
#include <vector>

#include "backend_tables.hpp"
#include "device_common.hpp"
#include "expr_columns.hpp"
#include "nestloop_common.hpp"
#include "pair_window.hpp"

namespace gpuops {
namespace {

struct CpuNestLoop
{
	GpuopsSettings settings;
	GpuopsNestLoopSpec spec;
	HostColumns inner;
	HostColumns outer;
	/* indexed: the block sorted on the column (perm: sorted position -> row) */
	std::vector<uint64_t> keys;
	std::vector<uint32_t> perm;
	/* where the current probe's pair generation stands */
	uint64_t o = 0;
	uint64_t j = 0;
	bool skip_chunk = false;
	bool have_range = false; /* [range_start, range_end) is o's */
	uint64_t range_start = 0;
	uint64_t range_end = 0;
	PairWindow window; /* its pairs are generated, not counted: no total */
	GpuopsNestLoopStats stats = {};

	/* the entry points (backend_tables.hpp) */
	CpuNestLoop(const GpuopsSettings *settings, const GpuopsNestLoopSpec *spec);
	GpuopsStatus nl_inner(const GpuopsExprColumns *cols);
	GpuopsStatus nl_probe(const GpuopsExprColumns *outer_cols, GpuopsJoinPairs *pairs);
	GpuopsStatus nl_next_pairs(GpuopsJoinPairs *pairs);
	uint64_t nl_capacity() const;
	uint32_t nl_probe_rows() const;
	void nl_stats(GpuopsNestLoopStats *out) const;
};

uint64_t
budget(const GpuopsSettings &s)
{
	return s.device_memory_limit / (s.device_share ? s.device_share : 1);
}

/*
 * Tests pair (o, inner position j) and keeps it when it passes or needs a
 * recheck, as inner row `row`; a first_only TRUE pair ends its chunk.
 */
void
test_pair(CpuNestLoop *nl, const ColumnsView &outer, const ColumnsView &inner, uint64_t j,
		  uint32_t row)
{
	const GpuopsExprProgram &p = nl->spec.program;
	GpuopsExprResult r = expr_eval(p.steps, p.nsteps, p.consts, p.const_null,
								   ColumnsRow{&outer, nl->o}, ColumnsRow{&inner, j});

	nl->stats.pairs_tested++;
	if (r == GPUOPS_EXPR_FALSE)
		return;
	nl->window.probe_out.push_back(static_cast<uint32_t>(nl->o));
	nl->window.build_out.push_back(row | (r == GPUOPS_EXPR_RECHECK ? GPUOPS_NL_RECHECK : 0));
	nl->stats.pairs++;
	nl->stats.rechecks += r == GPUOPS_EXPR_RECHECK;
	if (r == GPUOPS_EXPR_TRUE && nl->spec.first_only)
		nl->skip_chunk = true;
}

/*
 * The next window: pairs in nested-loop order until the window is full.
 * Each outer row walks its candidates in chunks of nl_chunk_rows from its
 * range's start: every inner row for the blocked loop, its range of the
 * sorted block for the indexed one.
 */
void
next_window(CpuNestLoop *nl, GpuopsJoinPairs *pairs)
{
	const bool indexed = nl->spec.index.column >= 0;
	uint64_t chunk = nl_chunk_rows(nl->inner.n);
	ColumnsView outer = nl->outer.view(), inner = nl->inner.view();
	uint64_t steps = 0;

	nl->window.probe_out.clear();
	nl->window.build_out.clear();
	while (nl->window.probe_out.size() < nl->window.max_pairs && nl->o < nl->outer.n)
	{
		uint64_t chunk_end;

		/* a window may test every pair of the batch: stop on an interrupt */
		check_interrupt_every(++steps);
		if (!nl->have_range)
		{
			nl->range_start = 0;
			nl->range_end = nl->inner.n;
			if (indexed)
				nl_index_range(&nl->spec.index, ColumnsRow{&outer, nl->o}, nl->keys.data(),
							   nl->keys.size(), nl->inner.n, &nl->range_start, &nl->range_end);
			nl->j = nl->range_start;
			nl->have_range = true;
			nl->skip_chunk = false;
		}
		if (nl->j >= nl->range_end)
		{
			nl->o++;
			nl->have_range = false;
			continue;
		}
		chunk_end = std::min(nl->range_end,
							 nl->range_start + ((nl->j - nl->range_start) / chunk + 1) * chunk);
		if (nl->skip_chunk)
		{
			/* first_only: this chunk has had its TRUE pair */
			nl->j = chunk_end;
			nl->skip_chunk = false;
			continue;
		}
		test_pair(nl, outer, inner, nl->j,
				  indexed ? nl->perm[nl->j] : static_cast<uint32_t>(nl->j));
		nl->j++;
	}
	nl->window.publish(pairs, nl->o < nl->outer.n);
}

/*
 * Sorts an inner block on the index column, as the CUDA backend does: rows
 * with the column non-NULL by key (stable, so ties keep row order), then
 * the NULL ones in row order; every column is laid out in that order.
 */
void
sort_inner(CpuNestLoop *nl, const GpuopsExprColumns *cols)
{
	const GpuopsNestLoopIndex &ix = nl->spec.index;
	const int ncols = nl->spec.inner_ncols;
	HostColumns raw;
	uint64_t n;
	std::vector<uint32_t> nulls;
	std::vector<uint64_t> key;

	raw.load(cols, ncols);
	n = raw.n;
	key.assign(n, 0);
	nl->perm.clear();
	for (uint64_t i = 0; i < n; i++)
	{
		if (raw.nulls[ix.column * n + i])
			nulls.push_back(static_cast<uint32_t>(i));
		else
		{
			key[i] = nl_index_key(raw.words[ix.column * n + i], ix.is_float);
			nl->perm.push_back(static_cast<uint32_t>(i));
		}
	}
	uint64_t compared = 0;

	std::stable_sort(nl->perm.begin(), nl->perm.end(), [&](uint32_t a, uint32_t b) {
		check_interrupt_every(++compared);
		return key[a] < key[b];
	});
	nl->keys.resize(nl->perm.size());
	for (size_t i = 0; i < nl->perm.size(); i++)
		nl->keys[i] = key[nl->perm[i]];
	nl->perm.insert(nl->perm.end(), nulls.begin(), nulls.end());
	nl->inner.n = n;
	nl->inner.words.assign(n * ncols, 0);
	nl->inner.nulls.assign(n * ncols, 0);
	for (int c = 0; c < ncols; c++)
		for (uint64_t i = 0; i < n; i++)
		{
			nl->inner.words[c * n + i] = raw.words[c * n + nl->perm[i]];
			nl->inner.nulls[c * n + i] = raw.nulls[c * n + nl->perm[i]];
		}
}

CpuNestLoop::CpuNestLoop(const GpuopsSettings *settings, const GpuopsNestLoopSpec *spec)
{
	maybe_inject(GPUOPS_FAULT_NO_DEVICE, settings->fault);
	const char *bad = nl_validate(spec);

	if (bad)
		fail(GPUOPS_ERR_INTERNAL, "bad device program: %s", bad);
	this->settings = *settings;
	this->spec = *spec;
	window.max_pairs = join_window_pairs_for_budget(budget(*settings));
}

GpuopsStatus
CpuNestLoop::nl_inner(const GpuopsExprColumns *cols)
{
	auto t0 = std::chrono::steady_clock::now();

	if (cols->nrows >= GPUOPS_NL_RECHECK)
		fail(GPUOPS_ERR_UNSUPPORTED, "inner block over %u rows", GPUOPS_NL_RECHECK - 1);
	if (spec.index.column >= 0)
		sort_inner(this, cols);
	else
		inner.load(cols, spec.inner_ncols);
	stats.inner_rows += cols->nrows;
	stats.blocks++;
	stats.copy_ms += ms_since(t0);
	return GPUOPS_OK;
}

GpuopsStatus
CpuNestLoop::nl_probe(const GpuopsExprColumns *outer_cols, GpuopsJoinPairs *pairs)
{
	auto t0 = std::chrono::steady_clock::now();

	maybe_inject(GPUOPS_FAULT_KERNEL_ERROR, settings.fault);
	outer.load(outer_cols, spec.outer_ncols);
	o = j = 0;
	skip_chunk = false;
	have_range = false;
	next_window(this, pairs);
	stats.outer_rows += outer_cols->nrows;
	stats.probes++;
	stats.kernel_ms += ms_since(t0);
	return GPUOPS_OK;
}

GpuopsStatus
CpuNestLoop::nl_next_pairs(GpuopsJoinPairs *pairs)
{
	auto t0 = std::chrono::steady_clock::now();

	maybe_inject(GPUOPS_FAULT_KERNEL_ERROR, settings.fault);
	stats.windows++;
	next_window(this, pairs);
	stats.kernel_ms += ms_since(t0);
	return GPUOPS_OK;
}

uint64_t
CpuNestLoop::nl_capacity() const
{
	return nl_inner_rows_for_budget(budget(settings), spec.inner_ncols, spec.index.column >= 0);
}

uint32_t
CpuNestLoop::nl_probe_rows() const
{
	return nl_probe_rows_for_budget(budget(settings), spec.outer_ncols);
}

void
CpuNestLoop::nl_stats(GpuopsNestLoopStats *out) const
{
	*out = stats;
	out->bytes_from_device = window.published_bytes; /* the pairs (gpuops_device.h) */
}

constexpr GpuopsNestLoopBackend cpu_nestloop_backend = shell::make_nestloop_backend<CpuNestLoop>(
	"cpu");

} /* namespace */
} /* namespace gpuops */

extern "C" const GpuopsNestLoopBackend *
gpuops_cpu_nestloop_backend(void) noexcept
{
	return &gpuops::cpu_nestloop_backend;
}
