/*
 * gpu_mergejoin_state.h
 *    GpuMergeJoin's executor state, shared by the node
 *    (gpu_mergejoin_exec.cpp) and its device side
 *    (gpu_mergejoin_device.cpp).  Calls go one way: the node calls the
 *    device side.
 */
#ifndef GPUOPS_GPU_MERGEJOIN_STATE_H
#define GPUOPS_GPU_MERGEJOIN_STATE_H

extern "C" {
#include "postgres.h"

#include "nodes/execnodes.h"
}

#include "batch.h"
#include "device_session.h"
#include "gpuops_device.h"
#include "join_exec.h"

typedef DeviceSession<GpuopsMergeJoinBackend, GpuopsMergeJoin, &GpuopsMergeJoinBackend::mj_end>
	GpuMergeJoinDevice;

typedef struct GpuMergeJoinState : GpuopsJoinNode
{
	JoinType jointype;
	bool fill_outer;   /* LEFT, FULL, ANTI */
	bool fill_inner;   /* RIGHT, FULL */
	bool decides_once; /* SEMI, ANTI */
	int nkeys;
	int outer_col[GPUOPS_MAX_JOIN_KEYS];
	int inner_col[GPUOPS_MAX_JOIN_KEYS];
	Oid outer_type[GPUOPS_MAX_JOIN_KEYS];
	Oid inner_type[GPUOPS_MAX_JOIN_KEYS];

	int count_cols; /* counting: the scan tuple's last columns are count(*) */
	bool counted;	/* counting: the row has been returned */
	GpuMergeJoinDevice *dev;
	MemoryContext key_cxt; /* both sides' merge words */
	GpuopsJoinKeys keys[2];
	bool built;

	const uint32 *order; /* outer rows in key order */
	uint64 opos;		 /* the outer row being walked, in that order */
	GpuopsJoinPairs pairs;
	GpuopsJoinGathered gathered[2]; /* the window's needed columns in pair order */
	uint64 cursor;
	uint64 pairs_before;
	bool matched;
	bool *inner_matched;
	uint64 inner_pos;
	List *filter_plan; /* the pair filter's plan storage (join_filter.h) */
	uint64 filtered;

	/* EXPLAIN ANALYZE: where the time before the first row went (ms) */
	double read_ms[2]; /* reading a side (or collecting its staged chunks) */
	double keys_ms;	   /* making both sides' merge words */
	double join_ms;	   /* the device join, waiting for the device included */
	GpuopsMergeJoinStats stats;
} GpuMergeJoinState;

/* gpu_mergejoin_device.cpp */
extern void GpuMergeJoinInitGathered(GpuMergeJoinState *st);
extern void GpuMergeJoinGatherFrom(GpuMergeJoinState *st, uint64 pair);
extern void GpuMergeJoinBuild(GpuMergeJoinState *st);
extern void GpuMergeJoinNextWindow(GpuMergeJoinState *st);
extern void GpuMergeJoinRejoin(GpuMergeJoinState *st);

#endif /* GPUOPS_GPU_MERGEJOIN_STATE_H */
