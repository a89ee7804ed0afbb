/*
 * node.h
 *    The base of every gpuops executor node: what GpuSort, GpuAgg, GpuStage
 *    and the joins (through GpuopsJoinNode, join_exec.h) do alike.  A node's
 *    state derives from GpuopsNode, so its CustomScanState stays at offset
 *    0, and its callbacks call the functions below for their common part.
 *
 * The base owns:
 *  - the CustomScanState, first;
 *  - the inputs: per child its PlanState (read once, forward), its row
 *    store (batch.h: a memory context of its own under the query context),
 *    its batch source (heap pages or ExecProcNode, GpuopsChildPlanSource)
 *    and, when the child is a Gather of GpuStage, that GpuStage (whose
 *    chunks of rows the workers staged in shared memory);
 *  - Begin (children, stores, sources, stages, whether the device is
 *    shared with other processes of the query, the device's prewarm), End
 *    (the device session, children, stores) and the ReScan prologue
 *    (changed Params to the children; whether an input must be read again;
 *    starting an input over); reading an input whole;
 *  - the end of the device session at EndCustomScan: the session itself
 *    is the node's typed DeviceSession (device_session.h), in the query
 *    context, whose release callback also runs on error and cancel;
 *  - the CPU fallback: a failed device call reported once
 *    (GpuopsDeviceFailed), the first failure kept for EXPLAIN, the work
 *    redone on the CPU backend, whose failure raises; faults injected
 *    (gpuops.fault_injection) on the primary backend only; the backend
 *    that ran;
 *  - the ExecScan wrapper, and EXPLAIN's Backend and Fallback lines and
 *    those on the inputs read directly from the heap.
 *
 * Each node keeps: its plan data and CreateCustomScanState; its own memory
 * contexts (their lifetimes differ: per batch, per run, for the node's
 * life); its typed device session and how it talks to its backend; its
 * Next; the rest of its ReScan (what it keeps to replay its output); its
 * parallel callbacks (GpuStage's chunk list and GpuHashJoin's shared build
 * have nothing in common); the rest of its EXPLAIN.  Method tables stay
 * explicit in each node, as PostgreSQL's are (guarded_scan.h wraps them).
 *
 * Why input/ and not core/: the base owns row stores and batch sources
 * (batch.h) and knows GpuStage, which is a node itself (gpu_stage.cpp):
 * in core/, the floor below input/, it would be an include pointing back
 * up.
 *
 * Errors: every function here runs inside a node's guarded callback
 * (guarded_scan.h, boundary.h), and none of them, nor the lambdas the
 * fallback templates take, holds an object with a destructor, so an
 * ereport may leave any of their frames.
 */
#ifndef GPUOPS_NODE_H
#define GPUOPS_NODE_H

extern "C" {
#include "postgres.h"

#include "pg_compat.h"
#include "executor/executor.h"
#include "nodes/execnodes.h"
#include "utils/memutils.h"
}

#include "batch.h"
#include "device.h"
#include "device_session.h"
#include "guarded_scan.h"
#include "op_stats.h"

/* the joins read two children; the other nodes one */
#define GPUOPS_NODE_MAX_INPUTS 2

typedef struct GpuStageState GpuStageState;

/* One child of a node and where its rows go. */
typedef struct GpuopsNodeInput
{
	PlanState *ps;			   /* the child (also in css.custom_ps) */
	GpuopsRowStore store;	   /* its rows as the node read them */
	GpuopsBatchSource *source; /* reads them into the store */
	GpuStageState *stage;	   /* the child is a Gather of this GpuStage, else NULL */
} GpuopsNodeInput;

struct GpuopsNode
{
	CustomScanState css;
	int ninputs;
	GpuopsNodeInput input[GPUOPS_NODE_MAX_INPUTS];
	/*
	 * Whether other processes of the query may use the device too, as seen
	 * at executor start (for GpuopsSettingsFor and the prewarm): over
	 * GpuStages alone, whether their workers run gpuops nodes; otherwise,
	 * whether the process is in parallel mode then (a worker is; a leader
	 * enters it only when the plan runs).
	 */
	bool device_shared;
	/* the node's device session and its release, for EndCustomScan */
	void *dev;
	MemoryContextCallbackFunction dev_release;
	/* EXPLAIN ANALYZE */
	const char *backend_name; /* the backend that ran last, or NULL */
	char *fallback;			  /* why the node fell back to the CPU backend, or NULL */
	/*
	 * gpuops.stat: this instance's figures, flushed once at GpuopsNodeEnd
	 * (op_stats.h).  The node adds its own (rows_in, device_ms) from its
	 * EXPLAIN ANALYZE figures through GpuopsNodeStatDevice before that.
	 */
	GpuopsOpStatAcc stat;

	/* input i's row store (a node of one input: its only one) */
	GpuopsRowStore *store(int i = 0) { return &input[i].store; }
};

/* The node's name, for messages ("GpuSort", ...). */
static inline const char *
GpuopsNodeName(const GpuopsNode *n)
{
	return n->css.methods->CustomName;
}

/*
 * BeginCustomScan's common part: the plan's first `ninputs` children
 * (custom_plans) initialized to be read once, forward (no rewind, backward
 * scan or mark), each with its row store, batch source and GpuStage, and
 * device_shared.  The first store takes store_desc's columns when given
 * (GpuSort: its scan tuple, which ends with the computed keys), else each
 * store its child's.
 */
extern void GpuopsNodeBegin(GpuopsNode *n, EState *estate, int eflags, int ninputs,
							TupleDesc store_desc);

/* Begins starting the GPU while the input is read (GpuopsPrewarmDeviceFor). */
extern void GpuopsNodePrewarm(GpuopsNode *n, int eflags);

/*
 * The node's device session (Dev derives from DeviceSession) in the query
 * context: Release ends it when that context goes (also on error and
 * cancel), and GpuopsNodeEnd at EndCustomScan.
 */
template <typename Dev, MemoryContextCallbackFunction Release = EndDeviceSession<Dev>>
static Dev *
GpuopsNodeDevice(GpuopsNode *n, EState *estate)
{
	Dev *dev = NewQueryDevice<Dev, Release>(estate);

	n->dev = dev;
	n->dev_release = Release;
	return dev;
}

/*
 * EndCustomScan's common part, after the node's own: the device session
 * ended, the children ended, the stores freed.
 */
extern void GpuopsNodeEnd(GpuopsNode *n);

/* ReScanCustomScan's prologue: the node's changed Params passed to its children. */
extern void GpuopsNodeRescanParams(GpuopsNode *n);

/*
 * At a rescan: must input i be read again?  Its Params changed, or its
 * rows were staged: they live in the parallel query's shared memory, which
 * a Limit above may have released already (ExecShutdownNode).
 */
static inline bool
GpuopsNodeInputChanged(const GpuopsNode *n, int i)
{
	return n->input[i].ps->chgParam != NULL || n->input[i].stage != NULL;
}

/*
 * Reads input i's next rows into `batch` (open in its store) until the
 * batch is full or the input ends; false at the end of the input.
 */
static inline bool
GpuopsNodeFill(GpuopsNode *n, int i, GpuopsBatch *batch)
{
	return n->input[i].source->fill(n->input[i].source, &n->input[i].store, batch);
}

/* Input i is read again from its start: its store emptied, its source rescanned. */
extern void GpuopsNodeRestartInput(GpuopsNode *n, int i);

/*
 * Input i is a Gather of GpuStage: running the Gather has the workers
 * (and the leader) read every row into shared memory, and returns none;
 * the chunks then become the store's batches (GpuStageCollect).
 */
extern void GpuopsNodeCollectStaged(GpuopsNode *n, int i);

/* Reads input i whole into its store: its staged chunks, or batch by batch. */
extern void GpuopsNodeReadInput(GpuopsNode *n, int i);

/*
 * A device call failed: reported (GpuopsDeviceFailed, which raises unless
 * gpuops.cpu_fallback lets the node go on on the CPU backend), and the
 * first failure kept for EXPLAIN.
 */
extern void GpuopsNodeFailed(GpuopsNode *n, GpuopsStatus rc);

/*
 * After a failed device call: GpuopsNodeFailed, then redo(cpu) redoes the
 * node's work on the CPU backend (Slot: the node's backend in
 * GpuopsDevice, &GpuopsDevice::agg, ...); a failure there raises.
 */
template <auto Slot, typename Redo>
static void
GpuopsNodeFallBack(GpuopsNode *n, GpuopsStatus rc, Redo redo)
{
	GpuopsNodeFailed(n, rc);
	rc = redo(gpuops_cpu_device()->*Slot);
	if (rc != GPUOPS_OK)
		GpuopsDeviceFailed(GpuopsNodeName(n), rc, false);
}

/* run(backend) on the primary backend, and after its failure on the CPU backend. */
template <auto Slot, typename Run>
static void
GpuopsNodeRun(GpuopsNode *n, Run run)
{
	GpuopsStatus rc = run(GpuopsPrimaryDevice()->*Slot);

	if (rc != GPUOPS_OK)
		GpuopsNodeFallBack<Slot>(n, rc, run);
}

/*
 * `settings` for a device call on `backend`: faults are injected only into
 * the primary backend, and only until the node has fallen back.
 */
template <auto Slot, typename Backend>
static inline GpuopsSettings
GpuopsNodeSettings(const GpuopsNode *n, GpuopsSettings settings, const Backend *backend)
{
	if (backend != GpuopsPrimaryDevice()->*Slot || n->fallback != NULL)
		settings.fault = GPUOPS_FAULT_NONE;
	return settings;
}

/*
 * gpuops.stat's executions and rows_out, counted in the node's own
 * accumulator (a local increment per row; the shared counters are touched
 * once, at the node's end), by every ExecCustomScan: GpuopsExecScan, and a
 * node's own shortcut around it (GpuSort's emission, GpuQuery's escape).
 * The first row asked for since begin or a rescan starts a run.
 */
static inline TupleTableSlot *
GpuopsNodeCountRow(GpuopsNode *n, TupleTableSlot *slot)
{
	if (!TupIsNull(slot))
		n->stat.rows_out++;
	return slot;
}

static inline void
GpuopsNodeCountRun(GpuopsNode *n)
{
	if (!n->stat.running)
	{
		n->stat.running = true;
		n->stat.executions++;
	}
}

/* ExecCustomScan of a node whose rows come from Next (ExecScan filters and projects). */
template <ExecScanAccessMtd Next>
static TupleTableSlot *
GpuopsExecScan(CustomScanState *node)
{
	GpuopsNode *n = (GpuopsNode *) node;

	GpuopsNodeCountRun(n);
	return GpuopsNodeCountRow(n, ExecScan(&node->ss, Next, GpuopsScanRecheck));
}

/*
 * gpuops.stat: the rows the node's device backend took in, the device
 * time it measured (copy + kernel) and the bytes it copied back, from the
 * figures the node keeps for EXPLAIN ANALYZE, for the run that ends
 * (EndCustomScan, before GpuopsNodeEnd; and before a rescan discards them).
 */
static inline void
GpuopsNodeStatDevice(GpuopsNode *n, uint64 rows_in, double copy_ms, double kernel_ms,
					 uint64 bytes_from_device)
{
	n->stat.rows_in += rows_in;
	n->stat.device_ms += copy_ms + kernel_ms;
	n->stat.bytes_from_device += bytes_from_device;
}

/* EXPLAIN ANALYZE: the backend that ran, and why the node fell back, if it did. */
extern void GpuopsNodeExplainBackend(GpuopsNode *n, ExplainState *es);

/* EXPLAIN: the rows each input read straight from the heap (GpuopsExplainDirectRows). */
extern void GpuopsNodeExplainInputs(GpuopsNode *n, ExplainState *es);

#endif /* GPUOPS_NODE_H */
