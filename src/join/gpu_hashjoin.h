/*
 * gpu_hashjoin.h
 *    GpuHashJoin: what its planner and executor halves share.
 *
 * The CustomScan reads the outer child's output columns followed by the
 * inner child's as its scan tuple (custom_scan_tlist).  custom_private: a
 * GpuopsEquiJoinPlan (join_plan.h): the join type, per hash key its outer
 * and inner column (indexes into the children's outputs), the two
 * columns' types, and for keys other than integers the two sides' hash
 * functions and the collation: such a key's word is the value's hash from
 * its type's hash opclass (equal values hash equal, across the types of
 * one operator family), so its clause is always re-checked; and the device
 * pair filter's plan storage.  custom_exprs is a list of four lists: the
 * join clauses, which decide whether a pair matches, (outer joins only)
 * the filters applied to the joined rows, the Params of the device pair
 * filter (join_filter.h: the clauses that compile are tested on the device
 * first) and the clauses it holds, for EXPLAIN.  The join clauses are re-checked
 * on each candidate pair: all of them, the hash clauses included, when
 * there are several keys (equal hashes are candidates; the clauses decide,
 * so a collision cannot change a result); with one integer key the hash is
 * a bijection of the key, and only the other clauses are checked.
 */
#ifndef GPUOPS_GPU_HASHJOIN_H
#define GPUOPS_GPU_HASHJOIN_H

extern "C" {
#include "postgres.h"

#include "nodes/extensible.h"
#include "nodes/pathnodes.h"
}

#define GPUHASHJOIN_NAME "GpuHashJoin"

/* planner (gpu_hashjoin_path.cpp) */
extern void GpuHashJoinAddPaths(PlannerInfo *root, RelOptInfo *joinrel, RelOptInfo *outerrel,
								RelOptInfo *innerrel, JoinType jointype, JoinPathExtraData *extra);

/* executor (gpu_hashjoin_exec.cpp) */
extern const CustomScanMethods gpu_hashjoin_scan_methods;
extern void GpuHashJoinRegister(void);

#endif
