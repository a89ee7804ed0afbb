/*
 * pairfilter_cpu.cpp
 *    The CPU twin of the pair filter (gpuops_device.h): the same program
 *    on each pair, on the host.
 */
#include <chrono>
#include <memory>
#include <vector>

#include "device_common.hpp"
#include "expr_columns.hpp"

namespace gpuops {
namespace {

struct CpuPairFilter
{
	GpuopsSettings settings;
	GpuopsPairFilterSpec spec;
	HostColumns side[2];
	uint64_t	pairs = 0;
	double		ms = 0;
};

GpuopsStatus
cpu_pf_begin(const GpuopsSettings *settings, const GpuopsPairFilterSpec *spec,
			 GpuopsPairFilter **out) noexcept
{
	*out = nullptr;
	return guarded([&]() {
		const char *bad = expr_validate(&spec->program, spec->outer_ncols, spec->inner_ncols);

		if (bad)
			fail(GPUOPS_ERR_INTERNAL, "bad device program: %s", bad);
		auto		pf = std::make_unique<CpuPairFilter>();

		pf->settings = *settings;
		pf->spec = *spec;
		*out = reinterpret_cast<GpuopsPairFilter *>(pf.release());
		return GPUOPS_OK;
	});
}

GpuopsStatus
cpu_pf_side(GpuopsPairFilter *h, int which, const GpuopsExprColumns *cols) noexcept
{
	return guarded([&]() {
		auto	   *pf = reinterpret_cast<CpuPairFilter *>(h);

		pf->side[which ? 1 : 0].load(cols, which ? pf->spec.inner_ncols : pf->spec.outer_ncols);
		return GPUOPS_OK;
	});
}

GpuopsStatus
cpu_pf_apply(GpuopsPairFilter *h, const uint32_t *outer_rows, const uint32_t *inner_rows,
			 uint64_t npairs, uint8_t *results) noexcept
{
	return guarded([&]() {
		auto	   *pf = reinterpret_cast<CpuPairFilter *>(h);
		const GpuopsExprProgram &p = pf->spec.program;
		ColumnsView outer = pf->side[0].view(),
					inner = pf->side[1].view();
		auto		t0 = std::chrono::steady_clock::now();

		maybe_inject(GPUOPS_FAULT_KERNEL_ERROR, pf->settings.fault);
		for (uint64_t k = 0; k < npairs; k++)
		{
			if (outer_rows[k] >= pf->side[0].n || inner_rows[k] >= pf->side[1].n)
				fail(GPUOPS_ERR_INTERNAL, "pair filter: row out of range");
			results[k] = static_cast<uint8_t>(
				expr_eval(p.steps, p.nsteps, p.consts, p.const_null, ColumnsRow{&outer, outer_rows[k]},
						  ColumnsRow{&inner, inner_rows[k]}));
		}
		pf->pairs += npairs;
		pf->ms += ms_since(t0);
		return GPUOPS_OK;
	});
}

void
cpu_pf_stats(const GpuopsPairFilter *h, uint64_t *pairs, double *ms) noexcept
{
	auto	   *pf = reinterpret_cast<const CpuPairFilter *>(h);

	*pairs = pf->pairs;
	*ms = pf->ms;
}

void
cpu_pf_end(GpuopsPairFilter *h) noexcept
{
	delete reinterpret_cast<CpuPairFilter *>(h);
}

const GpuopsPairFilterBackend cpu_pairfilter_backend = {
	"cpu", cpu_pf_begin, cpu_pf_side, cpu_pf_apply, cpu_pf_stats, cpu_pf_end,
};

}								/* namespace */
}								/* namespace gpuops */

extern "C" const GpuopsPairFilterBackend *
gpuops_cpu_pairfilter_backend(void) noexcept
{
	return &gpuops::cpu_pairfilter_backend;
}
