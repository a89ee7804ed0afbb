/*
 * gpu_mergejoin.h
 *    GpuMergeJoin: what its planner and executor halves share.
 *
 * The CustomScan reads the outer child's output columns followed by the
 * inner child's as its scan tuple (custom_scan_tlist), as the other joins
 * do.  custom_private: a GpuopsEquiJoinPlan (join_plan.h: the join type,
 * the merge keys' columns and types, the device pair filter's plan
 * storage).  custom_exprs: the join clauses
 * other than the merge keys (checked on each pair of equal keys: on the
 * device where they compile), the filters of outer joins, the Params of
 * the device filter, and the clauses it holds (for EXPLAIN).
 *
 * A counting GpuMergeJoin (at the grouping step, for count(*) over the
 * join) appends its count(*) aggregates to custom_scan_tlist, after the
 * children's columns, and says how many in its plan data (count_cols).
 * Its plan qual is the query's HAVING; it returns one row.
 */
#ifndef GPUOPS_GPU_MERGEJOIN_H
#define GPUOPS_GPU_MERGEJOIN_H

extern "C" {
#include "postgres.h"

#include "nodes/extensible.h"
#include "nodes/pathnodes.h"
}

#define GPUMERGEJOIN_NAME "GpuMergeJoin"

/* planner (gpu_mergejoin_path.cpp) */
extern void GpuMergeJoinAddPaths(PlannerInfo *root, RelOptInfo *joinrel, RelOptInfo *outerrel,
								 RelOptInfo *innerrel, JoinType jointype, JoinPathExtraData *extra);

/*
 * At the grouping step: `SELECT count(*) ...` (no GROUP BY; count(*) only,
 * also in HAVING) over an inner join on merge keys alone, as one
 * GpuMergeJoin that counts the key pairs (extra: GroupPathExtraData).
 */
extern void GpuMergeJoinAddCountPaths(PlannerInfo *root, RelOptInfo *input_rel,
									  RelOptInfo *output_rel, void *extra);

/* Can keys of these two types be merged as 64-bit words (gpu_mergejoin_path.cpp)? */
extern bool GpuMergeJoinKeyTypes(Oid outer_type, Oid inner_type);

/* executor (gpu_mergejoin_exec.cpp) */
extern const CustomScanMethods gpu_mergejoin_scan_methods;
extern void GpuMergeJoinRegister(void);

#endif
