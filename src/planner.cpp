/*
 * planner.cpp
 *    gpuops' planner hooks: each operator's path generator is called from
 *    here, after the previously installed hook.
 */
extern "C" {
#include "postgres.h"

#include "optimizer/planner.h"
}

#include "boundary.h"
#include "gpu_sort.h"
#include "guc.h"
#include "planner_hooks.h"

static create_upper_paths_hook_type prev_create_upper_paths_hook = NULL;

static void
UpperPathsImpl(PlannerInfo *root, UpperRelationKind stage, RelOptInfo *input_rel,
			   RelOptInfo *output_rel, void *extra)
{
	if (!gpuops_enabled)
		return;
	switch (stage)
	{
		case UPPERREL_ORDERED:
			GpuSortAddOrderedPaths(root, input_rel, output_rel);
			break;
		default:
			break;
	}
}

static void
GpuopsUpperPaths(PlannerInfo *root, UpperRelationKind stage, RelOptInfo *input_rel,
				 RelOptInfo *output_rel, void *extra)
{
	if (prev_create_upper_paths_hook)
		prev_create_upper_paths_hook(root, stage, input_rel, output_rel, extra);
	GpuopsGuard("create_upper_paths_hook", UpperPathsImpl, root, stage, input_rel,
				output_rel, extra);
}

void
GpuopsInstallPlannerHooks(void)
{
	prev_create_upper_paths_hook = create_upper_paths_hook;
	create_upper_paths_hook = GpuopsUpperPaths;
}
