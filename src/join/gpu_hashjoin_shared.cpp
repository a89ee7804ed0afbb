/*
 * gpu_hashjoin_shared.cpp
 *    GpuHashJoin's shared build in parallel plans (cuda/include/gpuops/join_service.h):
 *    the leader builds the directory on the device and serves the workers'
 *    lookups from a thread; the workers read the inner side as before but
 *    build only a host copy of the directory (to turn entries into pairs),
 *    and create no CUDA context.
 *
 * The shared build is an optimisation that no participant depends on: no
 * process ever waits for another that is not known to be making progress
 * inside this node (PostgreSQL's Parallel Hash keeps the same rule).  The
 * leader may reach the node late or never (it may be busy above the Gather,
 * in another branch of a Parallel Append, or not participate), so:
 *  - InitializeDSM (leader): the request slots, one per planned worker, and
 *    a control block: phase OPEN, or DONE with the service UNAVAILABLE where
 *    the leader will not run the node (parallel_leader_participation = off)
 *    or the GUC is off.
 *  - The leader, on entering Build, claims the build (OPEN -> BUILDING).
 *    From then until it publishes, its main thread is inside this node
 *    reading its (non-partial, purely local) inner side and building: it
 *    waits for nobody, so it is making progress or raising an error (which
 *    ends the parallel query and terminates the workers).  It then starts
 *    the service (READY), or, for a partitioned (grace) build, a fallback or
 *    any failure, makes it UNAVAILABLE; the phase becomes DONE and waiting
 *    workers are woken (a condition variable).
 *  - A worker decides when it needs the directory: phase OPEN (the leader
 *    has not begun) -> it builds its own at once; BUILDING -> it waits on
 *    the condition variable (interruptibly) for the verdict; DONE -> it
 *    takes the service if READY, else builds its own.  On READY it builds
 *    the CPU backend's directory from its rows and checks it against the
 *    leader's (size and checksum), or, when it reads no inner column, uses
 *    the leader's match counts alone.  Each probe batch's keys then go to
 *    its slot; the service thread answers them whatever the leader's main
 *    thread is doing.  If the service fails or closes, the worker builds its
 *    own directory on its primary backend and probes the batch again, so a
 *    result never depends on the service.
 *  - The service is stopped before the shared memory is unmapped (an
 *    on_dsm_detach callback, which also runs on abort, before the query's
 *    memory goes) and before the leader's join ends (GpuHashJoinRelease).
 *
 * What is therefore guaranteed: every result equals the join's without
 * sharing; a worker that took the service (its account says "attached")
 * probes only through it unless the service closes under it ("left");
 * workers that find the leader building wait only for that build.  Which
 * workers attach depends on when they start, and is not guaranteed.
 */
extern "C" {
#include "postgres.h"

#include "access/parallel.h"
#include "pg_compat.h"
#include "miscadmin.h"
#include "optimizer/optimizer.h"
#include "pgstat.h"
#include "port/atomics.h"
#include "storage/condition_variable.h"
#include "storage/dsm.h"
#include "storage/ipc.h"
#include "storage/pmsignal.h"
#include "utils/wait_event.h"
}

#include "device.h"
#include "gpu_hashjoin_state.h"
#include "guc.h"
#include "join_filter.h"
#include "join_service.h"

/* The most rows one lookup carries: the executor's batch (join_hash.hpp). */
#define SHARED_SLOT_ROWS 65536

/* The control block's phase: who, if anyone, a worker may wait for. */
#define BUILD_OPEN 0	 /* the leader has not begun: nobody waits */
#define BUILD_BUILDING 1 /* the leader is inside Build: workers may wait */
#define BUILD_DONE 2	 /* the service's state is the verdict */

/* In the DSM before the service's area (whose layout cuda/ owns). */
typedef struct GpuHashJoinSharedControl
{
	ConditionVariable cv; /* the leader broadcasts when the phase becomes DONE */
	pg_atomic_uint32 phase;
} GpuHashJoinSharedControl;

/* The control block's size: the service's area keeps its alignment. */
#define CONTROL_BYTES TYPEALIGN(64, sizeof(GpuHashJoinSharedControl))

static void
ServiceDetach(dsm_segment *, Datum arg)
{
	GpuHashJoinDevice *dev = (GpuHashJoinDevice *) DatumGetPointer(arg);

	GpuHashJoinStopSharing(dev);
	/* the workers have ended (the parallel query waited for them): keep their accounts */
	for (uint32 i = 0; dev->shared != NULL && i < dev->nworkers; i++)
		gpuops_join_service_worker_stats(dev->shared, i, &dev->workers[i]);
	dev->shared = NULL; /* unmapped next */
	dev->control = NULL;
}

Size
GpuHashJoinEstimateDSM(GpuHashJoinState *st, ParallelContext *pcxt)
{
	return CONTROL_BYTES +
		gpuops_join_service_size(Max(pcxt->nworkers, 1), st->nkeys, SHARED_SLOT_ROWS);
}

/* Whether the leader may serve a build in this parallel query. */
static bool
SharingPossible(void)
{
	return gpuops_enable_shared_build && parallel_leader_participation;
}

/* Sets the phase (a full barrier: the service's state is visible first). */
static void
SetPhase(GpuHashJoinSharedControl *ctl, uint32 phase)
{
	(void) pg_atomic_exchange_u32(&ctl->phase, phase);
}

void
GpuHashJoinInitializeDSM(GpuHashJoinState *st, ParallelContext *pcxt, void *coordinate)
{
	GpuHashJoinSharedControl *ctl = (GpuHashJoinSharedControl *) coordinate;
	void *shm = (char *) coordinate + CONTROL_BYTES;
	bool can = SharingPossible();

	ConditionVariableInit(&ctl->cv);
	pg_atomic_init_u32(&ctl->phase, can ? BUILD_OPEN : BUILD_DONE);
	gpuops_join_service_init(shm, Max(pcxt->nworkers, 1), st->nkeys, SHARED_SLOT_ROWS,
							 can ? GPUOPS_SERVICE_PENDING : GPUOPS_SERVICE_UNAVAILABLE);
	st->dev->shared = shm;
	st->dev->control = ctl;
	st->dev->leader_of_shared = true;
	st->dev->nworkers = Max(pcxt->nworkers, 1);
	st->dev->workers = (GpuopsJoinWorkerStats *) MemoryContextAllocZero(
		GetMemoryChunkContext(st), st->dev->nworkers * sizeof(GpuopsJoinWorkerStats));
	on_dsm_detach(pcxt->seg, ServiceDetach, PointerGetDatum(st->dev));
}

/*
 * Before workers are launched again (the previous ones have ended): free
 * slots, and the state they will find.  A service still running (the build
 * was kept) serves them at once; else the leader builds again only if its
 * build was dropped.
 */
void
GpuHashJoinReInitializeDSM(GpuHashJoinState *st, void *coordinate)
{
	GpuHashJoinSharedControl *ctl = (GpuHashJoinSharedControl *) coordinate;
	void *shm = (char *) coordinate + CONTROL_BYTES;
	bool again = st->dev->svc == NULL && !st->built && SharingPossible();

	gpuops_join_service_reset_slots(shm);
	st->build_claimed = false;
	if (st->dev->svc == NULL)
		gpuops_join_service_set_state(shm,
									  again ? GPUOPS_SERVICE_PENDING : GPUOPS_SERVICE_UNAVAILABLE);
	SetPhase(ctl, again ? BUILD_OPEN : BUILD_DONE);
}

void
GpuHashJoinInitializeWorker(GpuHashJoinState *st, void *coordinate)
{
	st->dev->control = (GpuHashJoinSharedControl *) coordinate;
	st->dev->shared = (char *) coordinate + CONTROL_BYTES;
}

/*
 * Leader, entering Build: claims the build when no one has, so that workers
 * arriving from now on wait for its verdict instead of building their own.
 */
void
GpuHashJoinClaimBuild(GpuHashJoinState *st)
{
	GpuHashJoinSharedControl *ctl = st->dev->control;
	uint32 expected = BUILD_OPEN;

	if (ctl == NULL || IsParallelWorker() || st->dev->svc != NULL)
		return;
	st->build_claimed = pg_atomic_compare_exchange_u32(&ctl->phase, &expected, BUILD_BUILDING);
}

/*
 * Leader, at the end of Build: serves its build, or tells the workers to
 * build their own; either way the phase becomes DONE and waiters wake.
 */
void
GpuHashJoinShareBuild(GpuHashJoinState *st)
{
	void *shm = st->dev->shared;
	GpuopsStatus rc = GPUOPS_ERR_UNSUPPORTED;

	if (!st->build_claimed)
		return;
	st->build_claimed = false;
	if (st->grace == NULL && st->fallback == NULL && st->dev->handle != NULL &&
		st->dev->backend == GpuopsPrimaryDevice()->hashjoin)
		rc = gpuops_join_service_start(shm, st->dev->backend, st->dev->handle, &st->dev->svc);
	if (rc != GPUOPS_OK)
		gpuops_join_service_set_state(shm, GPUOPS_SERVICE_UNAVAILABLE);
	SetPhase(st->dev->control, BUILD_DONE);
	ConditionVariableBroadcast(&st->dev->control->cv);
}

/*
 * Worker: whether the leader serves a build.  Waits only while the leader
 * is inside its Build (BUILDING); never for a leader that has not begun.
 */
static bool
WaitForLeader(GpuHashJoinState *st)
{
	GpuHashJoinSharedControl *ctl = st->dev->control;
	bool ready = false;
	bool slept = false;

	for (;;)
	{
		uint32 phase = pg_atomic_read_u32(&ctl->phase);

		pg_read_barrier();
		if (phase == BUILD_DONE)
		{
			ready = gpuops_join_service_state(st->dev->shared) == GPUOPS_SERVICE_READY;
			break;
		}
		if (phase != BUILD_BUILDING)
			break;
		/* a timeout only re-reads the phase: the broadcast is the wake-up */
		slept = true;
		(void) ConditionVariableTimedSleep(&ctl->cv, 100, PG_WAIT_EXTENSION);
	}
	if (slept)
		ConditionVariableCancelSleep();
	return ready;
}

/* Worker: whether it may take part in a shared build at all. */
static bool
MayShare(GpuHashJoinState *st)
{
	return st->dev->shared != NULL && st->dev->control != NULL && IsParallelWorker() &&
		ParallelWorkerNumber >= 0 &&
		(uint32) ParallelWorkerNumber < gpuops_join_service_nslots(st->dev->shared) &&
		!st->no_service;
}

/*
 * Worker: whether the leader is building or serves (a worker then prepares
 * to use the service); false when it has not begun or will not serve.
 */
static bool
LeaderServes(GpuHashJoinState *st)
{
	uint32 phase = pg_atomic_read_u32(&st->dev->control->phase);

	pg_read_barrier();
	if (phase == BUILD_BUILDING)
		return true;
	return phase == BUILD_DONE &&
		gpuops_join_service_state(st->dev->shared) == GPUOPS_SERVICE_READY;
}

/*
 * Worker, with its inner rows read: true when it will probe through the
 * leader's service, its host copy of the directory built and checked.
 */
bool
GpuHashJoinJoinShared(GpuHashJoinState *st)
{
	void *shm = st->dev->shared;
	uint64 ndir, sum, my_ndir, my_sum;
	GpuopsStatus rc;
	instr_time t0;
	bool ready;

	if (!MayShare(st))
		return false;
	if (!LeaderServes(st))
	{
		st->no_service = true; /* the leader has not begun, or will not serve */
		return false;
	}

	/*
	 * The host copy first, while the leader may still be building: it needs
	 * only this worker's rows, and the leader's verdict only to be used.
	 */
	INSTR_TIME_SET_CURRENT(t0);
	st->shared_probe = true; /* no injected faults in the host copy */
	rc = GpuHashJoinBegin(st, gpuops_cpu_device()->hashjoin);
	if (rc == GPUOPS_OK)
		rc = GpuHashJoinBuildAll(st);
	if (rc == GPUOPS_OK)
		rc = st->dev->backend->join_directory(st->dev->handle, &my_ndir, &my_sum);
	st->mine.directory_ms += GpuHashJoinMsSince(&t0);
	INSTR_TIME_SET_CURRENT(t0);
	ready = WaitForLeader(st);
	st->mine.leader_wait_ms += GpuHashJoinMsSince(&t0);
	if (!ready)
	{
		st->no_service = true;
		st->shared_probe = false;
		GpuHashJoinBegin(st, NULL);
		return false;
	}
	gpuops_join_service_directory(shm, &ndir, &sum);
	if (rc != GPUOPS_OK || my_ndir != ndir || my_sum != sum)
	{
		/* not the leader's rows (or no memory for them): build alone */
		st->shared_probe = false;
		GpuHashJoinBegin(st, NULL);
		return false;
	}
	st->mine.attached = 1;
	st->probe_limit = Min(SHARED_SLOT_ROWS, st->dev->backend->join_probe_rows(st->dev->handle));
	GpuopsJoinFilterEnd(st->filter); /* the filter's clauses are re-checked instead */
	st->filter = NULL;
	return true;
}

/*
 * Worker, before reading its inner rows: true when the join needs none of
 * them (no inner column is read above or by a clause, and unmatched inner
 * rows are not returned: count(*), semi and anti joins, outer columns
 * only) and the leader serves lookups.  Then each probe row's match count
 * is all it needs, the leader's count: the inner side is the same plan
 * under the same snapshot in every process (PostgreSQL's Parallel Hash
 * shares one table the same way), so the worker neither reads it nor
 * builds a directory.
 */
bool
GpuHashJoinJoinSharedCounts(GpuHashJoinState *st)
{
	instr_time t0;
	bool ready;
	GpuopsStatus rc;

	if (!MayShare(st) || st->fill_inner)
		return false;
	for (int c = st->outer_ncols; c < st->css.ss.ss_ScanTupleSlot->tts_tupleDescriptor->natts; c++)
		if (st->needed[c])
			return false;
	INSTR_TIME_SET_CURRENT(t0);
	ready = WaitForLeader(st);
	st->mine.leader_wait_ms += GpuHashJoinMsSince(&t0);
	if (!ready)
	{
		st->no_service = true; /* the leader has not begun, or will not serve */
		return false;
	}
	st->shared_probe = true; /* no injected faults in the host join */
	rc = GpuHashJoinBegin(st, gpuops_cpu_device()->hashjoin);
	if (rc != GPUOPS_OK)
	{
		st->shared_probe = false;
		GpuHashJoinBegin(st, NULL);
		return false;
	}
	st->counts_only = true;
	st->mine.counts_only = 1;
	st->mine.attached = 1;
	st->probe_limit = Min(SHARED_SLOT_ROWS, st->dev->backend->join_probe_rows(st->dev->handle));
	GpuopsJoinFilterEnd(st->filter); /* the filter's clauses are re-checked instead */
	st->filter = NULL;
	return true;
}

/*
 * Worker: the first window of a probe batch's pairs through the service;
 * not OK when the service failed or closed (the caller builds its own).
 */
static GpuopsStatus
ServiceProbe(GpuHashJoinState *st, const GpuopsJoinKeys *keys, GpuopsJoinPairs *pairs)
{
	void *shm = st->dev->shared;
	uint32 slot = (uint32) ParallelWorkerNumber;
	const int64_t *slots = NULL;
	const uint32_t *counts = NULL;
	instr_time t0;
	int r;

	INSTR_TIME_SET_CURRENT(t0);
	r = gpuops_join_service_submit(shm, slot, keys);
	while (r == GPUOPS_SERVICE_WAITING)
	{
		r = gpuops_join_service_wait(shm, slot, 5, &slots, &counts);
		CHECK_FOR_INTERRUPTS();
		if (!PostmasterIsAlive())
			proc_exit(1);
	}
	st->mine.lookup_ms += GpuHashJoinMsSince(&t0);
	if (r != GPUOPS_SERVICE_DONE)
		return GPUOPS_ERR_DEVICE;
	st->mine.lookups++;
	st->mine.shared = 1;
	if (st->counts_only)
		return gpuops_cpu_join_probe_counts(st->dev->handle, counts, keys->nrows, pairs);
	return gpuops_cpu_join_probe_slots(st->dev->handle, slots, keys->nrows, pairs);
}

/*
 * A worker whose shared probe failed (the leader's service failed or
 * closed): it builds its own directory, as it would have without the
 * service, and goes on in streaming mode.
 */
static void
LeaveShared(GpuHashJoinState *st)
{
	GpuopsStatus rc;

	st->shared_probe = false;
	st->counts_only = false;
	st->mine.left = 1;
	st->mode = &gpu_hashjoin_stream_mode;
	GpuHashJoinReadInner(st); /* a counts-only worker has not read it yet */
	rc = GpuHashJoinBegin(st, GpuopsPrimaryDevice()->hashjoin);
	if (rc == GPUOPS_OK)
		rc = GpuHashJoinBuildAll(st);
	if (rc != GPUOPS_OK)
		GpuHashJoinFallBack(st, rc);
}

/* The shared mode's probe: through the service while it serves, then alone. */
static GpuopsStatus
SharedProbe(GpuHashJoinState *st, const GpuopsJoinKeys *keys, GpuopsJoinPairs *pairs)
{
	if (ServiceProbe(st, keys, pairs) == GPUOPS_OK)
		return GPUOPS_OK;
	LeaveShared(st);
	return st->mode->probe(st, keys, pairs);
}

/*
 * After a device failure of a worker's host join (the CPU backend begun
 * again by GpuHashJoinFallBack): its own directory, in streaming mode.
 */
static GpuopsStatus
SharedRebuild(GpuHashJoinState *st)
{
	st->counts_only = false;
	st->mine.left = 1;
	st->mode = &gpu_hashjoin_stream_mode;
	GpuHashJoinReadInner(st); /* a counts-only worker has not read it yet */
	return GpuHashJoinBuildAll(st);
}

/*
 * A worker probing through the leader's service walks its outer side as
 * in streaming mode (a batch is at most a slot's rows: probe_limit).
 */
const GpuHashJoinMode gpu_hashjoin_shared_mode = {
	"shared",	   GpuHashJoinStreamNextBatch, GpuHashJoinStreamProbeKeys, SharedProbe,
	SharedRebuild, GpuHashJoinStreamRescan,	   GpuHashJoinStreamEnd,
};

/*
 * Once the outer side is done: a worker of a parallel plan writes its
 * account into its slot for the leader's EXPLAIN; the leader keeps its own.
 */
void
GpuHashJoinReportShared(GpuHashJoinState *st)
{
	GpuopsJoinWorkerStats *m = &st->mine;

	if (m->reported)
		return;
	m->reported = 1;
	m->probe_rows = st->done_stats.probe_rows + st->stats.probe_rows;
	if (!INSTR_TIME_IS_ZERO(st->started))
		m->total_ms = GpuHashJoinMsSince(&st->started);
	if (st->dev->shared != NULL && IsParallelWorker() && ParallelWorkerNumber >= 0)
		gpuops_join_service_report(st->dev->shared, (uint32) ParallelWorkerNumber, m);
}

/* One process's account, as EXPLAIN shows it. */
static void
ExplainAccount(const char *who, int n, const GpuopsJoinWorkerStats *m, ExplainState *es)
{
	if (es->format == EXPLAIN_FORMAT_TEXT)
	{
		StringInfoData b;

		initStringInfo(&b);
		appendStringInfo(&b, "%s%s probe rows=%llu lookups=%llu",
						 m->counts_only	   ? "shared, counts only"
							 : m->attached ? "shared"
										   : "own build",
						 m->left ? ", left the service" : "", (unsigned long long) m->probe_rows,
						 (unsigned long long) m->lookups);
		if (es->timing)
			appendStringInfo(&b,
							 " inner=%.3f wait leader=%.3f directory=%.3f outer=%.3f"
							 " lookup wait=%.3f total=%.3f",
							 m->inner_ms, m->leader_wait_ms, m->directory_ms, m->outer_ms,
							 m->lookup_ms, m->total_ms);
		ExplainPropertyText(n < 0 ? who : psprintf("%s %d", who, n), b.data, es);
		return;
	}
	ExplainOpenGroup(who, NULL, true, es);
	if (n >= 0)
		ExplainPropertyInteger("Worker Number", NULL, n, es);
	ExplainPropertyBool("Attached", m->attached != 0, es);
	ExplainPropertyBool("Left Service", m->left != 0, es);
	ExplainPropertyBool("Shared", m->shared != 0, es);
	ExplainPropertyBool("Counts Only", m->counts_only != 0, es);
	ExplainPropertyInteger("Probe Rows", NULL, (int64) m->probe_rows, es);
	ExplainPropertyInteger("Lookups", NULL, (int64) m->lookups, es);
	if (es->timing)
	{
		ExplainPropertyFloat("Inner Time", "ms", m->inner_ms, 3, es);
		ExplainPropertyFloat("Leader Wait Time", "ms", m->leader_wait_ms, 3, es);
		ExplainPropertyFloat("Directory Time", "ms", m->directory_ms, 3, es);
		ExplainPropertyFloat("Outer Time", "ms", m->outer_ms, 3, es);
		ExplainPropertyFloat("Lookup Wait Time", "ms", m->lookup_ms, 3, es);
		ExplainPropertyFloat("Total Time", "ms", m->total_ms, 3, es);
	}
	ExplainCloseGroup(who, NULL, true, es);
}

/*
 * The leader's EXPLAIN ANALYZE: lookups served, and under VERBOSE each
 * process's account (a worker's own EXPLAIN output is not shown).
 */
void
GpuHashJoinExplainShared(GpuHashJoinState *st, ExplainState *es)
{
	GpuHashJoinDevice *dev = st->dev;

	if (!es->analyze || !dev->leader_of_shared)
		return;
	/* the service stops (and counts) when the parallel query ends; else count now */
	if (dev->svc != NULL)
		gpuops_join_service_counts(dev->shared, &dev->shared_requests, &dev->shared_rows);
	ExplainPropertyInteger("Shared Lookups", NULL, (int64) dev->shared_requests, es);
	ExplainPropertyInteger("Shared Lookup Rows", NULL, (int64) dev->shared_rows, es);
	if (!es->verbose)
		return;
	if (es->format != EXPLAIN_FORMAT_TEXT)
		ExplainOpenGroup("Processes", "Processes", false, es);
	ExplainAccount("Leader", -1, &st->mine, es);
	for (uint32 i = 0; i < dev->nworkers; i++)
		if (dev->workers[i].reported)
			ExplainAccount("Worker", (int) i, &dev->workers[i], es);
	if (es->format != EXPLAIN_FORMAT_TEXT)
		ExplainCloseGroup("Processes", "Processes", false, es);
}
