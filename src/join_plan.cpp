/*
 * join_plan.cpp
 *    Planning helpers every gpuops join shares (join_plan.h).
 */
extern "C" {
#include "postgres.h"

#include "nodes/makefuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
}

#include "join_plan.h"

/* As costsize.c's get_parallel_divisor: the leader helps less with more workers. */
double
GpuopsParallelDivisor(Path *path)
{
	double		divisor = path->parallel_workers;

	if (parallel_leader_participation)
	{
		double		leader = 1.0 - (0.3 * path->parallel_workers);

		if (leader > 0)
			divisor += leader;
	}
	return Max(divisor, 1.0);
}

/* custom_scan_tlist: a copy of each child's output, outer first */
List *
GpuopsChildColumns(List *scan_tlist, Plan *child)
{
	ListCell   *lc;

	foreach(lc, child->targetlist)
	{
		TargetEntry *tle = (TargetEntry *) lfirst(lc);

		scan_tlist = lappend(scan_tlist,
							 makeTargetEntry((Expr *) copyObject(tle->expr),
											 list_length(scan_tlist) + 1, NULL, false));
	}
	return scan_tlist;
}
