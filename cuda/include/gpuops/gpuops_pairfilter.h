/*
 * gpuops_pairfilter.h
 *    The device engine's C interface, one part: the pair filter backend
 *    (GpuopsPairFilterBackend).
 *
 * gpuops_device.h includes every part.
 */
#ifndef GPUOPS_PAIRFILTER_H
#define GPUOPS_PAIRFILTER_H

#include "gpuops_base.h"
#include "gpuops_expr.h"

GPUOPS_C_BEGIN

/*
 * Pair filter: a device program (the join clauses that compile) tested on
 * the candidate pairs a hash or merge join produced, so that PostgreSQL
 * builds and checks only the pairs that pass.  pf_side loads one side's
 * columns, numbered as the pairs number that side's rows (and replaces
 * what was loaded for it); pf_apply gives each pair a GpuopsExprResult.
 */
typedef struct GpuopsPairFilterSpec
{
	GpuopsExprProgram program;
	int outer_ncols;
	int inner_ncols;
} GpuopsPairFilterSpec;

typedef struct GpuopsPairFilter GpuopsPairFilter;

typedef struct GpuopsPairFilterBackend
{
	const char *name;
	GpuopsStatus (*pf_begin)(const GpuopsSettings *settings, const GpuopsPairFilterSpec *spec,
							 GpuopsPairFilter **pf) GPUOPS_NOEXCEPT;
	GpuopsStatus (*pf_side)(GpuopsPairFilter *pf, int side,
							const GpuopsExprColumns *cols) GPUOPS_NOEXCEPT;
	GpuopsStatus (*pf_apply)(GpuopsPairFilter *pf, const uint32_t *outer_rows,
							 const uint32_t *inner_rows, uint64_t npairs,
							 uint8_t *results) GPUOPS_NOEXCEPT;
	void (*pf_stats)(const GpuopsPairFilter *pf, uint64_t *pairs, double *ms) GPUOPS_NOEXCEPT;
	void (*pf_end)(GpuopsPairFilter *pf) GPUOPS_NOEXCEPT;
} GpuopsPairFilterBackend;

extern const GpuopsPairFilterBackend *gpuops_cuda_pairfilter_backend(void) GPUOPS_NOEXCEPT;
extern const GpuopsPairFilterBackend *gpuops_cpu_pairfilter_backend(void) GPUOPS_NOEXCEPT;

GPUOPS_C_END

#endif /* GPUOPS_PAIRFILTER_H */
