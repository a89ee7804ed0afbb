/*
 * pairfilter_cpu.cpp
 *    The CPU twin of the pair filter (gpuops_device.h): the same program
 *    on each pair, on the host.
 */
#include <chrono>
#include <memory>
#include <vector>

#include "backend_tables.hpp"
#include "device_common.hpp"
#include "expr_columns.hpp"

namespace gpuops {
namespace {

struct CpuPairFilter
{
	GpuopsSettings settings;
	GpuopsPairFilterSpec spec;
	HostColumns side[2];
	uint64_t pairs = 0;
	double ms = 0;

	/* the entry points (backend_tables.hpp) */
	CpuPairFilter(const GpuopsSettings *settings, const GpuopsPairFilterSpec *spec);
	GpuopsStatus pf_side(int which, const GpuopsExprColumns *cols);
	GpuopsStatus pf_apply(const uint32_t *outer_rows, const uint32_t *inner_rows, uint64_t npairs,
						  uint8_t *results);
	void pf_stats(uint64_t *pairs_out, double *ms_out) const;
};

CpuPairFilter::CpuPairFilter(const GpuopsSettings *settings, const GpuopsPairFilterSpec *spec)
{
	const char *bad = expr_validate(&spec->program, spec->outer_ncols, spec->inner_ncols);

	if (bad)
		fail(GPUOPS_ERR_INTERNAL, "bad device program: %s", bad);
	this->settings = *settings;
	this->spec = *spec;
}

GpuopsStatus
CpuPairFilter::pf_side(int which, const GpuopsExprColumns *cols)
{
	side[which ? 1 : 0].load(cols, which ? spec.inner_ncols : spec.outer_ncols);
	return GPUOPS_OK;
}

GpuopsStatus
CpuPairFilter::pf_apply(const uint32_t *outer_rows, const uint32_t *inner_rows, uint64_t npairs,
						uint8_t *results)
{
	const GpuopsExprProgram &p = spec.program;
	ColumnsView outer = side[0].view(), inner = side[1].view();
	auto t0 = std::chrono::steady_clock::now();

	maybe_inject(GPUOPS_FAULT_KERNEL_ERROR, settings.fault);
	for (uint64_t k = 0; k < npairs; k++)
	{
		if (outer_rows[k] >= side[0].n || inner_rows[k] >= side[1].n)
			fail(GPUOPS_ERR_INTERNAL, "pair filter: row out of range");
		results[k] = static_cast<uint8_t>(expr_eval(p.steps, p.nsteps, p.consts, p.const_null,
													ColumnsRow{&outer, outer_rows[k]},
													ColumnsRow{&inner, inner_rows[k]}));
	}
	pairs += npairs;
	ms += ms_since(t0);
	return GPUOPS_OK;
}

void
CpuPairFilter::pf_stats(uint64_t *pairs_out, double *ms_out) const
{
	*pairs_out = pairs;
	*ms_out = ms;
}

constexpr GpuopsPairFilterBackend cpu_pairfilter_backend =
	shell::make_pairfilter_backend<CpuPairFilter>("cpu");

} /* namespace */
} /* namespace gpuops */

extern "C" const GpuopsPairFilterBackend *
gpuops_cpu_pairfilter_backend(void) noexcept
{
	return &gpuops::cpu_pairfilter_backend;
}
