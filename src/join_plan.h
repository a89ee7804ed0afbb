/*
 * join_plan.h
 *    Planning helpers every gpuops join shares.
 */
#ifndef GPUOPS_JOIN_PLAN_H
#define GPUOPS_JOIN_PLAN_H

extern "C" {
#include "postgres.h"

#include "nodes/pathnodes.h"
#include "nodes/plannodes.h"
}

/* As costsize.c's get_parallel_divisor: the leader helps less with more workers. */
extern double GpuopsParallelDivisor(Path *path);

/* custom_scan_tlist: appends a copy of each of child's outputs */
extern List *GpuopsChildColumns(List *scan_tlist, Plan *child);

#endif
