/*
 * gpu_stage.h
 *    GpuStage: parallel workers read an operator's input into shared
 *    memory, for one device operation in the leader.
 *
 * One backend's executor moves 10-20M rows a second; the device aggregates
 * 50M rows in a quarter of a second.  Partial aggregation in each worker
 * would need a CUDA context per worker (about a second each with several
 * starting at once) and hands the finalize step one partial state per group
 * and worker.  Instead the plan is
 *
 *     GpuAgg -> Gather -> GpuStage -> (partial input computing the columns)
 *
 * Every process running the Gather's subplan (the workers, and the leader
 * when it participates) reads its share of the input into column batches
 * and copies each full batch into a chunk of the parallel query's DSA area;
 * GpuStage returns no tuple, so Gather carries none.  Once Gather is
 * exhausted, the operator above takes the chunks into its row store
 * (GpuStageCollect): full chunks in place, without a copy, and each
 * process's partial last chunk by a copy.  Only the leader touches the GPU.
 *
 * Unless the operator above streams them (GpuStageStream, below: taken
 * and freed as they come), the chunks live until Gather shuts down its
 * parallel context: at the end of the query (parallel mode only runs plans
 * to completion), at its end node, or when Gather is rescanned with new
 * workers (ReInitializeDSM frees them); the operator above resets its
 * store before that.  Without parallel
 * mode (Gather then runs the subplan in the leader alone) the chunks are
 * kept in the leader's memory instead.
 */
#ifndef GPUOPS_GPU_STAGE_H
#define GPUOPS_GPU_STAGE_H

extern "C" {
#include "postgres.h"

#include "nodes/execnodes.h"
#include "nodes/extensible.h"
#include "nodes/pathnodes.h"
}

#include "batch.h"

#define GPUSTAGE_NAME "GpuStage"

typedef struct GpuStageState GpuStageState;

/*
 * A Gather over a GpuStage over `input` (a partial path of input_rel) that
 * computes `exprs`, for an operator that collects the staged rows; NULL when
 * that cannot run in parallel.  Gather's cost includes staging the rows in
 * parallel; the caller adds what the leader does with them.
 */
extern Path *GpuStageGatherPath(PlannerInfo *root, RelOptInfo *input_rel, Path *input, List *exprs);

/* A target list computing exprs, in order (copies). */
extern List *GpuopsExprTlist(List *exprs);

/* The GpuStage under `child` when child is such a Gather, else NULL. */
extern GpuStageState *GpuStageBelow(PlanState *child);

/*
 * Tells stage which Gather is above it (the node that collects its rows
 * calls it at its Begin): whether that Gather runs the leader's share
 * decides whether the workers may wait for the leader (streaming).
 */
extern void GpuStageSetGather(GpuStageState *stage, GatherState *gather);

/* After Gather is exhausted: moves every staged row into store (empty or unused). */
extern void GpuStageCollect(GpuStageState *stage, GpuopsRowStore *store);

/*
 * Whether a node over `stage` (NULL: over no GpuStage) shares the device
 * with other processes of its query, for GpuopsSettingsFor: in parallel
 * mode, unless it is above a GpuStage whose subplan holds no gpuops node
 * that may use the device in the workers.
 */
extern bool GpuStageDeviceShared(GpuStageState *stage);

/*
 * Streaming, for an operator above that can let go of rows as they come (a
 * GpuSort that parks them in device memory, sort_park.h): the leader's
 * GpuStage calls consume(arg) whenever full chunks wait, before reading
 * more of its own share, and the workers wait while the chunks not yet
 * freed (GpuStageRelease) exceed `cap` bytes, so that the shared memory
 * held stays within cap and a chunk per process however large the input.
 * Without streaming every chunk stays until Gather shuts down.  Set by the
 * operator above before it first runs the Gather (the workers then wait
 * from their first chunk, however late the leader's share starts); consume
 * NULL turns it off (from the consumer too: the workers then stop
 * waiting).  When the leader's own share ends it stops taking (the
 * workers then finish unhindered, their last chunks collected by
 * GpuStageCollect).  With
 * parallel_leader_participation off nobody takes, and the workers never
 * wait: the rows then stay until the end, as without streaming.
 */
typedef void (*GpuStageConsumer)(void *arg);
extern void GpuStageStream(GpuStageState *stage, GpuStageConsumer consume, void *arg, Size cap);

/*
 * In the consumer: moves full chunks published so far into store (in
 * place, as GpuStageCollect does), at least one and, past the first, while
 * the bytes taken stay under limit; returns the bytes they take.  The rest
 * wait for the next call: with several workers a chunk each may wait, more
 * than the consumer may hold at once.  A store that takes them must hold
 * only full batches.  They stay allocated until GpuStageRelease.
 */
extern Size GpuStageTake(GpuStageState *stage, GpuopsRowStore *store, Size limit);

/* Bytes of the chunks taken and not yet released. */
extern Size GpuStageTakenBytes(GpuStageState *stage);

/* Frees the chunks taken, once the store no longer holds their rows. */
extern void GpuStageRelease(GpuStageState *stage);

/* Bytes of the chunks staged so far (shared or local), for EXPLAIN. */
extern Size GpuStageBytes(GpuStageState *stage);

/* executor (gpu_stage.cpp) */
extern const CustomScanMethods gpu_stage_scan_methods;
extern void GpuStageRegister(void);

#endif
