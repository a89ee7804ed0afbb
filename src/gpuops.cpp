/*
 * gpuops.cpp
 *    Module entry point: _PG_init only.
 *
 * gpuops must be loaded through shared_preload_libraries: its custom scan
 * methods have to be registered in every backend (and parallel worker)
 * before a plan that uses them is read, and its GUCs must exist before any
 * session sets them.  No CUDA call happens here: this runs in the postmaster,
 * and CUDA state does not survive fork().  Each backend initializes CUDA on
 * first use.
 */
extern "C" {
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"

PG_MODULE_MAGIC;

extern PGDLLEXPORT void _PG_init(void);
}

#include "boundary.h"
#include "device.h"
#include "gpu_agg.h"
#include "gpu_query.h"
#include "gpu_hashjoin.h"
#include "gpu_mergejoin.h"
#include "gpu_nestloop.h"
#include "gpu_sort.h"
#include "gpu_topn.h"
#include "gpu_stage.h"
#include "guc.h"
#include "op_stats.h"
#include "page_service.h"
#include "planner_hooks.h"
#include "recent_buffers.h"

static void
InitImpl(void)
{
	if (!process_shared_preload_libraries_in_progress)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("gpuops must be loaded via shared_preload_libraries"),
				 errhint("Add gpuops to shared_preload_libraries in postgresql.conf "
						 "and restart the server.")));
	GpuopsDefineGucs();
	GpuopsDeviceSessionsInit();
	GpuopsOpStatsInit();
	GpuopsPageServiceInit();
	GpuopsRecentBuffersInit();
	GpuopsRegisterInterruptCheck();
	GpuSortRegister();
	GpuHashJoinRegister();
	GpuNestLoopRegister();
	GpuMergeJoinRegister();
	GpuAggRegister();
	GpuQueryRegister();
	GpuTopNRegister();
	GpuStageRegister();
	GpuopsInstallPlannerHooks();
}

void
_PG_init(void)
{
	GpuopsGuard("_PG_init", InitImpl);
}
