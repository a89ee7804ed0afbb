/*
 * gpuops_device.h
 *    The one interface between the PostgreSQL side (src/) and the device
 *    layer (cuda/).
 *
 * Plain C structs, status codes and noexcept entry points only: the device
 * layer never includes a PostgreSQL header and never raises a PostgreSQL
 * error, and the PostgreSQL side never sees a C++ exception or a CUDA type.
 * Turning a status into an ereport happens in exactly one place on the
 * PostgreSQL side (src/core/device.cpp).
 *
 * Two engines implement the same operations: CUDA, and a CPU twin that runs
 * the same batch algorithms on the host (used for gpuops.device = cpu and as
 * the fallback when the device fails).  Each operator is reached through a
 * table of function pointers (its backend), and an engine's backends
 * through one GpuopsDevice table, chosen by the caller.
 *
 * One header per part, all included here: gpuops_base.h (status, settings),
 * gpuops_expr.h (device expression programs), gpuops_keys.h (key kinds),
 * gpuops_sort.h, gpuops_hashjoin.h, gpuops_agg.h, gpuops_nestloop.h,
 * gpuops_pairfilter.h, gpuops_mergejoin.h, gpuops_query.h, gpuops_topn.h
 * (the operators),
 * gpuops_cuda.h (the CUDA engine's process lifecycle) and gpuops_host.h
 * (host-side helpers).
 *
 * bytes_from_device, in every operator's stats (gpuops.stat's column): on
 * the CUDA engine, the bytes of every device -> host copy the operation
 * issued (row numbers, pairs, group keys and states, and the small reads
 * of counts and flags the host needs to go on).  The CPU twin copies
 * nothing; it reports the bytes of the results it hands the caller (row
 * numbers, ties, pairs, group rows and results, group keys), which the CUDA
 * backend has to bring back too, without the CUDA backend's small reads and
 * in the caller's layout rather than the device's: the same figure where
 * the layouts agree (a sort's row numbers, a join's pairs), otherwise of
 * the same order, and never 0 when there were results.  The pair filter
 * (gpuops_pairfilter.h) reports no bytes: its node's figures are the join's.
 */
#ifndef GPUOPS_DEVICE_H
#define GPUOPS_DEVICE_H

#include "gpuops_base.h"
#include "gpuops_expr.h"
#include "gpuops_keys.h"
#include "gpuops_sort.h"
#include "gpuops_hashjoin.h"
#include "gpuops_agg.h"
#include "gpuops_nestloop.h"
#include "gpuops_pairfilter.h"
#include "gpuops_mergejoin.h"
#include "gpuops_query.h"
#include "gpuops_topn.h"
#include "gpuops_cuda.h"
#include "gpuops_host.h"
#include "gpuops_page_service.h"

GPUOPS_C_BEGIN

/*
 * One engine, CUDA or its CPU twin: every operator's backend of that
 * implementation in one table, so that the PostgreSQL side chooses an
 * engine once (gpuops.device, a device session) and every node takes its
 * operator from the same choice.
 */
typedef struct GpuopsDevice
{
	const char *name; /* "cuda" or "cpu" */
	const GpuopsBackend *sort;
	const GpuopsJoinBackend *hashjoin;
	const GpuopsNestLoopBackend *nestloop;
	const GpuopsMergeJoinBackend *mergejoin;
	const GpuopsAggBackend *agg;
	const GpuopsPairFilterBackend *pairfilter;
	const GpuopsQueryBackend *query; /* NULL until the engine has one */
	const GpuopsTopnBackend *topn;
} GpuopsDevice;

extern const GpuopsDevice *gpuops_cuda_device(void) GPUOPS_NOEXCEPT;
extern const GpuopsDevice *gpuops_cpu_device(void) GPUOPS_NOEXCEPT;

GPUOPS_C_END

#endif /* GPUOPS_DEVICE_H */
