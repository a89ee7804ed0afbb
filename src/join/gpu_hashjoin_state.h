/*
 * gpu_hashjoin_state.h
 *    GpuHashJoin's executor state, and the table of its modes: shared by the
 *    node (gpu_hashjoin_exec.cpp), its modes (gpu_hashjoin_stream.cpp,
 *    gpu_hashjoin_grace.cpp, gpu_hashjoin_shared.cpp) and its device
 *    session (gpu_hashjoin_device.cpp).
 *
 * Three modes.  Streaming, when one build holds the inner side's keys: every
 * inner row goes into one directory and the outer side is read and probed
 * one batch at a time.  Partitioned (grace), when the inner side is larger
 * than the device budget lets one build hold: both sides are partitioned on
 * the host by the key hash, and partition pairs are joined one build at a
 * time; a partition still too large (skew) is built in chunks, each probed
 * with the partition's outer rows.  Shared, a worker of a parallel plan
 * probing through the leader's directory: streaming, with the lookups done
 * by the leader's service.
 *
 * Either way the node walks "probe batches": up to 64K outer rows probed
 * against the current build, whose pairs come grouped by probe row.
 *
 * Calls go one way: the node calls a mode through its GpuHashJoinMode, the
 * modes call the device session, and the device session calls a mode only
 * through st->mode.
 */
#ifndef GPUOPS_GPU_HASHJOIN_STATE_H
#define GPUOPS_GPU_HASHJOIN_STATE_H

extern "C" {
#include "postgres.h"

#include "pg_compat.h"
#include "executor/instrument.h"
#include "fmgr.h"
#include "nodes/execnodes.h"
}

#include "batch.h"
#include "device_session.h"
#include "gpuops_device.h"
#include "join_exec.h"
#include "join_service.h"

/* the join's device session, and its part in a shared build */
struct GpuHashJoinDevice
	: DeviceSession<GpuopsJoinBackend, GpuopsJoin, &GpuopsJoinBackend::join_end>
{
	/* parallel plans (gpu_hashjoin_shared.cpp): the shared build's slots */
	void *shared;							  /* in the parallel query's DSM, or NULL */
	struct GpuHashJoinSharedControl *control; /* ... and who is building, or NULL */
	bool leader_of_shared;					  /* the leader of a parallel plan (EXPLAIN) */
	GpuopsJoinService *svc;					  /* leader: the running service, or NULL */
	uint64 shared_requests;					  /* leader: lookups served, rows looked up */
	uint64 shared_rows;
	GpuopsJoinWorkerStats *workers; /* leader: each worker's account, at the end */
	uint32 nworkers;
};

typedef struct GpuHashJoinGrace GpuHashJoinGrace;
typedef struct GpuHashJoinState GpuHashJoinState;

/* A mode: what differs between streaming, partitioned and shared joins. */
typedef struct GpuHashJoinMode
{
	const char *name;
	/* the next probe batch, probed (its first window); false when the outer side is done */
	bool (*next_batch)(GpuHashJoinState *st);
	/* the current probe batch's keys */
	void (*probe_keys)(GpuHashJoinState *st, GpuopsJoinKeys *keys);
	/* the first window of their pairs */
	GpuopsStatus (*probe)(GpuHashJoinState *st, const GpuopsJoinKeys *keys, GpuopsJoinPairs *pairs);
	/* after a device failure: the current build again, into the begun CPU join */
	GpuopsStatus (*rebuild)(GpuHashJoinState *st);
	/* a rescan that keeps the inner side */
	void (*rescan)(GpuHashJoinState *st);
	/* the mode's memory goes (a rescan that reads the inner side again) */
	void (*end)(GpuHashJoinState *st);
} GpuHashJoinMode;

extern const GpuHashJoinMode gpu_hashjoin_stream_mode;
extern const GpuHashJoinMode gpu_hashjoin_grace_mode;
extern const GpuHashJoinMode gpu_hashjoin_shared_mode;

struct GpuHashJoinState : GpuopsJoinNode
{
	const GpuHashJoinMode *mode; /* streaming until the build decides */
	JoinType jointype;			 /* INNER, LEFT, RIGHT, FULL, SEMI or ANTI */
	bool fill_outer;			 /* LEFT, FULL, ANTI: unmatched outer rows are returned */
	bool fill_inner;			 /* RIGHT, FULL: unmatched inner rows are returned */
	int nkeys;
	int outer_col[GPUOPS_MAX_JOIN_KEYS];
	int inner_col[GPUOPS_MAX_JOIN_KEYS];
	Oid outer_type[GPUOPS_MAX_JOIN_KEYS];
	Oid inner_type[GPUOPS_MAX_JOIN_KEYS];
	bool hashed[GPUOPS_MAX_JOIN_KEYS]; /* the key's word is its hash */
	FmgrInfo outer_hash[GPUOPS_MAX_JOIN_KEYS];
	FmgrInfo inner_hash[GPUOPS_MAX_JOIN_KEYS];
	Oid collation[GPUOPS_MAX_JOIN_KEYS];

	GpuHashJoinDevice *dev;
	MemoryContext key_cxt;		 /* widened key words, reset per batch */
	MemoryContext probe_key_cxt; /* streaming: the outer batch's key words */
	GpuopsJoinKeys batch_keys;	 /* streaming: the outer batch's keys */
	uint32 batch_rows;			 /* streaming: rows in the outer batch */
	uint32 probe_limit;			 /* most rows one probe takes (device budget) */
	bool shared_probe;			 /* worker: probes go through the leader's service */
	bool counts_only;			 /* worker: ... and needs only match counts (inner side unread) */
	bool inner_read;			 /* the inner side is in its store */
	bool no_service;			 /* worker: the leader's service will not serve it */
	bool build_claimed;			 /* leader: inside Build, workers may wait for it */
	bool built;
	bool outer_done;

	/* partitioned mode (gpu_hashjoin_grace.cpp), NULL when streaming */
	GpuHashJoinGrace *grace;

	/* the probe batch being walked */
	uint32 probe_base;		 /* streaming: its first row in the outer batch */
	uint32 probe_rows;		 /* rows in it */
	uint32 probe_pos;		 /* the probe row being joined */
	const uint64 *probe_map; /* grace: probe row -> outer store row (else: batch 0) */
	const uint64 *build_map; /* grace: build row -> inner store row (else: itself) */
	bool *outer_flags;		 /* grace: per probe row, matched by an earlier chunk */
	bool emit_unmatched;	 /* unmatched probe rows are final after this batch */
	GpuopsJoinPairs pairs;	 /* the current window of pairs */
	uint64 cursor;			 /* next pair in the window */
	uint64 pairs_before;	 /* pairs of this probe in earlier windows */
	bool matched;			 /* probe_pos has had a matching pair */
	bool *inner_matched;	 /* fill_inner: per inner row, has it matched? */
	uint64 inner_pos;		 /* fill_inner: next inner row to check at the end */
	List *filter_plan;		 /* the pair filter's plan storage (join_filter.h) */
	/* (the pair filter itself, GpuopsJoinNode's, is ended when partitioned) */
	uint64 filtered; /* candidate pairs the join clauses rejected */

	/* EXPLAIN ANALYZE */
	GpuopsJoinStats stats;		/* the current build's */
	GpuopsJoinStats done_stats; /* earlier builds' (grace) */
	uint32 partitions;
	uint32 builds;
	double build_ms;
	Size host_memory;
	GpuopsJoinWorkerStats mine; /* parallel plans: this process's account */
	instr_time started;			/* its first row asked for */
};

/* Milliseconds since *start, for the accounts above. */
static inline double
GpuHashJoinMsSince(const instr_time *start)
{
	instr_time now;

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, *start);
	return INSTR_TIME_GET_MILLISEC(now);
}

/* gpu_hashjoin_device.cpp: the device session, for every mode */
extern void GpuHashJoinRelease(void *arg);
extern void GpuHashJoinStopSharing(GpuHashJoinDevice *dev);
extern void GpuHashJoinBatchKeys(GpuHashJoinState *st, GpuopsRowStore *store, GpuopsBatch *batch,
								 bool outer, MemoryContext cxt, GpuopsJoinKeys *keys);
extern void GpuHashJoinReadInner(GpuHashJoinState *st);
extern uint64 GpuHashJoinBuildableRows(GpuHashJoinState *st);
extern void GpuHashJoinResetInnerMatches(GpuHashJoinState *st);
extern GpuopsStatus GpuHashJoinBegin(GpuHashJoinState *st, const GpuopsJoinBackend *backend);
extern void GpuHashJoinBeginPrimary(GpuHashJoinState *st);
extern GpuopsStatus GpuHashJoinBuildAll(GpuHashJoinState *st);
extern void GpuHashJoinFallBack(GpuHashJoinState *st, GpuopsStatus rc);
extern GpuopsStatus GpuHashJoinOwnProbe(GpuHashJoinState *st, const GpuopsJoinKeys *keys,
										GpuopsJoinPairs *pairs);
extern void GpuHashJoinProbe(GpuHashJoinState *st);
extern void GpuHashJoinNextWindow(GpuHashJoinState *st);
extern void GpuHashJoinTotalStats(GpuHashJoinState *st, GpuopsJoinStats *total);

/* gpu_hashjoin_stream.cpp: streaming mode, whose walk shared mode borrows */
extern bool GpuHashJoinStreamNextBatch(GpuHashJoinState *st);
extern void GpuHashJoinStreamProbeKeys(GpuHashJoinState *st, GpuopsJoinKeys *keys);
extern void GpuHashJoinStreamRescan(GpuHashJoinState *st);
extern void GpuHashJoinStreamEnd(GpuHashJoinState *st);

/* gpu_hashjoin_grace.cpp: partitioned mode, entered by the build */
extern void GpuHashJoinGraceStart(GpuHashJoinState *st, uint64 rows);

/* gpu_hashjoin_shared.cpp: the shared build of parallel plans */
struct ParallelContext;
extern Size GpuHashJoinEstimateDSM(GpuHashJoinState *st, struct ParallelContext *pcxt);
extern void GpuHashJoinInitializeDSM(GpuHashJoinState *st, struct ParallelContext *pcxt,
									 void *coordinate);
extern void GpuHashJoinReInitializeDSM(GpuHashJoinState *st, void *coordinate);
extern void GpuHashJoinInitializeWorker(GpuHashJoinState *st, void *coordinate);
extern void GpuHashJoinClaimBuild(GpuHashJoinState *st);
extern void GpuHashJoinShareBuild(GpuHashJoinState *st);
extern void GpuHashJoinReportShared(GpuHashJoinState *st);
extern void GpuHashJoinExplainShared(GpuHashJoinState *st, ExplainState *es);
extern bool GpuHashJoinJoinShared(GpuHashJoinState *st);
extern bool GpuHashJoinJoinSharedCounts(GpuHashJoinState *st);

#endif
