/*
 * gpu_hashjoin_shared.cpp
 *    GpuHashJoin's shared build in parallel plans (cuda/join_service.h):
 *    the leader builds the directory on the device and serves the workers'
 *    lookups from a thread; the workers read the inner side as before but
 *    build only a host copy of the directory (to turn entries into pairs),
 *    and create no CUDA context.
 *
 * Who does what:
 *  - InitializeDSM (leader): the request slots, one per planned worker; the
 *    service starts PENDING, or UNAVAILABLE where the leader will not run
 *    the node (parallel_leader_participation = off) or the GUC is off.
 *  - The leader, after a streaming build on its primary backend, starts
 *    the service (READY); a partitioned (grace) build, a fallback or any
 *    failure makes it UNAVAILABLE, and workers build their own, as without
 *    the service.
 *  - A worker, once its inner rows are read, waits for the leader's
 *    verdict; on READY it builds the CPU backend's directory from its rows
 *    and checks it against the leader's (size and checksum).  Each probe
 *    batch's keys then go to its slot, and the entries that come back are
 *    expanded into pairs on the host.  If the service fails or closes, the
 *    worker builds its own directory on its primary backend and probes the
 *    batch again, so a result never depends on the service.
 *  - The service is stopped before the shared memory is unmapped (an
 *    on_dsm_detach callback, which also runs on abort, before the query's
 *    memory goes) and before the leader's join ends (JoinRelease).
 */
extern "C" {
#include "postgres.h"

#include "access/parallel.h"
#include "commands/explain.h"
#include "miscadmin.h"
#include "optimizer/optimizer.h"
#include "pgstat.h"
#include "storage/dsm.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/pmsignal.h"
#include "utils/wait_event.h"
}

#include "device.h"
#include "gpu_hashjoin_exec.h"
#include "guc.h"
#include "join_filter.h"
#include "join_service.h"

/* The most rows one lookup carries: the executor's batch (join_hash.hpp). */
#define SHARED_SLOT_ROWS 65536

/* How long a worker waits for the leader's build before building its own. */
#define LEADER_WAIT_MS 10000

static void
ServiceDetach(dsm_segment *seg, Datum arg)
{
	GpuHashJoinDevice *dev = (GpuHashJoinDevice *) DatumGetPointer(arg);

	GpuHashJoinStopSharing(dev);
	/* the workers have ended (the parallel query waited for them): keep their accounts */
	for (uint32 i = 0; dev->shared != NULL && i < dev->nworkers; i++)
		gpuops_join_service_worker_stats(dev->shared, i, &dev->workers[i]);
	dev->shared = NULL;			/* unmapped next */
}

void
GpuHashJoinStopSharing(GpuHashJoinDevice *dev)
{
	if (dev->shared != NULL)
		gpuops_join_service_counts(dev->shared, &dev->shared_requests, &dev->shared_rows);
	if (dev->svc == NULL)
		return;
	gpuops_join_service_stop(dev->svc);
	dev->svc = NULL;
}

Size
GpuHashJoinEstimateDSM(GpuHashJoinState *st, ParallelContext *pcxt)
{
	return gpuops_join_service_size(Max(pcxt->nworkers, 1), st->nkeys, SHARED_SLOT_ROWS);
}

void
GpuHashJoinInitializeDSM(GpuHashJoinState *st, ParallelContext *pcxt, void *coordinate)
{
	int			state = gpuops_enable_shared_build && parallel_leader_participation
		? GPUOPS_SERVICE_PENDING : GPUOPS_SERVICE_UNAVAILABLE;

	gpuops_join_service_init(coordinate, Max(pcxt->nworkers, 1), st->nkeys, SHARED_SLOT_ROWS,
							 state);
	st->dev->shared = coordinate;
	st->dev->leader_of_shared = true;
	st->dev->nworkers = Max(pcxt->nworkers, 1);
	st->dev->workers = (GpuopsJoinWorkerStats *)
		MemoryContextAllocZero(GetMemoryChunkContext(st), st->dev->nworkers * sizeof(GpuopsJoinWorkerStats));
	on_dsm_detach(pcxt->seg, ServiceDetach, PointerGetDatum(st->dev));
}

/*
 * Before workers are launched again: free slots, and the state they will
 * find (the leader builds again only if its build was dropped).
 */
void
GpuHashJoinReInitializeDSM(GpuHashJoinState *st, void *coordinate)
{
	gpuops_join_service_reset_slots(coordinate);
	if (st->dev->svc == NULL)
		gpuops_join_service_set_state(coordinate, st->built || !gpuops_enable_shared_build ||
									  !parallel_leader_participation
									  ? GPUOPS_SERVICE_UNAVAILABLE : GPUOPS_SERVICE_PENDING);
}

void
GpuHashJoinInitializeWorker(GpuHashJoinState *st, void *coordinate)
{
	st->dev->shared = coordinate;
}

/* Leader, after its build: serve it, or tell the workers to build their own. */
void
GpuHashJoinShareBuild(GpuHashJoinState *st)
{
	void	   *shm = st->dev->shared;
	GpuopsStatus rc = GPUOPS_ERR_UNSUPPORTED;

	if (shm == NULL || IsParallelWorker() ||
		gpuops_join_service_state(shm) != GPUOPS_SERVICE_PENDING)
		return;
	if (st->grace == NULL && st->fallback == NULL && st->dev->join != NULL &&
		st->dev->backend == GpuopsPrimaryJoinBackend())
		rc = gpuops_join_service_start(shm, st->dev->backend, st->dev->join, &st->dev->svc);
	if (rc != GPUOPS_OK)
		gpuops_join_service_set_state(shm, GPUOPS_SERVICE_UNAVAILABLE);
}

/* Worker: waits until the leader has built (or will not); READY or not. */
static bool
WaitForLeader(void *shm)
{
	TimestampTz start = GetCurrentTimestamp();

	for (;;)
	{
		int			state = gpuops_join_service_state(shm);

		if (state != GPUOPS_SERVICE_PENDING)
			return state == GPUOPS_SERVICE_READY;
		if (TimestampDifferenceExceeds(start, GetCurrentTimestamp(), LEADER_WAIT_MS))
			return false;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 1,
						 PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * Worker, with its inner rows read: true when it will probe through the
 * leader's service, its host copy of the directory built and checked.
 */
bool
GpuHashJoinJoinShared(GpuHashJoinState *st)
{
	void	   *shm = st->dev->shared;
	uint64		ndir,
				sum,
				my_ndir,
				my_sum;
	GpuopsStatus rc;
	instr_time	t0;
	bool		ready;
	int			state;

	if (shm == NULL || !IsParallelWorker() || ParallelWorkerNumber < 0 ||
		(uint32) ParallelWorkerNumber >= gpuops_join_service_nslots(shm) || st->no_service)
		return false;
	state = gpuops_join_service_state(shm);
	if (state != GPUOPS_SERVICE_PENDING && state != GPUOPS_SERVICE_READY)
		return false;

	/*
	 * The host copy first, while the leader may still be building: it needs
	 * only this worker's rows, and the leader's verdict only to be used.
	 */
	INSTR_TIME_SET_CURRENT(t0);
	st->shared_probe = true;	/* no injected faults in the host copy */
	rc = GpuHashJoinBegin(st, gpuops_cpu_join_backend());
	if (rc == GPUOPS_OK)
		rc = GpuHashJoinBuildAll(st);
	if (rc == GPUOPS_OK)
		rc = st->dev->backend->join_directory(st->dev->join, &my_ndir, &my_sum);
	st->mine.directory_ms += GpuHashJoinMsSince(&t0);
	INSTR_TIME_SET_CURRENT(t0);
	ready = WaitForLeader(shm);
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
	st->probe_limit = Min(SHARED_SLOT_ROWS, st->dev->backend->join_probe_rows(st->dev->join));
	GpuopsJoinFilterEnd(st->filter);	/* the filter's clauses are re-checked instead */
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
	void	   *shm = st->dev->shared;
	instr_time	t0;
	bool		ready;
	GpuopsStatus rc;

	if (shm == NULL || !IsParallelWorker() || ParallelWorkerNumber < 0 ||
		(uint32) ParallelWorkerNumber >= gpuops_join_service_nslots(shm) || st->fill_inner ||
		st->no_service)
		return false;
	for (int c = st->outer_ncols; c < st->css.ss.ss_ScanTupleSlot->tts_tupleDescriptor->natts; c++)
		if (st->needed[c])
			return false;
	INSTR_TIME_SET_CURRENT(t0);
	ready = WaitForLeader(shm);
	st->mine.leader_wait_ms += GpuHashJoinMsSince(&t0);
	if (!ready)
	{
		st->no_service = true;	/* UNAVAILABLE, or no build within the wait */
		return false;
	}
	st->shared_probe = true;	/* no injected faults in the host join */
	rc = GpuHashJoinBegin(st, gpuops_cpu_join_backend());
	if (rc != GPUOPS_OK)
	{
		st->shared_probe = false;
		GpuHashJoinBegin(st, NULL);
		return false;
	}
	st->counts_only = true;
	st->mine.counts_only = 1;
	st->probe_limit = Min(SHARED_SLOT_ROWS, st->dev->backend->join_probe_rows(st->dev->join));
	GpuopsJoinFilterEnd(st->filter);	/* the filter's clauses are re-checked instead */
	st->filter = NULL;
	return true;
}

/*
 * Worker: the first window of a probe batch's pairs through the service;
 * not OK when the service failed or closed (the caller builds its own).
 */
GpuopsStatus
GpuHashJoinSharedProbe(GpuHashJoinState *st, const GpuopsJoinKeys *keys, GpuopsJoinPairs *pairs)
{
	void	   *shm = st->dev->shared;
	uint32		slot = (uint32) ParallelWorkerNumber;
	const int64_t *slots = NULL;
	const uint32_t *counts = NULL;
	instr_time	t0;
	int			r;

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
		return gpuops_cpu_join_probe_counts(st->dev->join, counts, keys->nrows, pairs);
	return gpuops_cpu_join_probe_slots(st->dev->join, slots, keys->nrows, pairs);
}

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
		appendStringInfo(&b, "%s probe rows=%llu lookups=%llu",
						 m->counts_only ? "shared, counts only" : m->shared ? "shared" : "own build",
						 (unsigned long long) m->probe_rows, (unsigned long long) m->lookups);
		if (es->timing)
			appendStringInfo(&b, " inner=%.3f wait leader=%.3f directory=%.3f outer=%.3f"
							 " lookup wait=%.3f total=%.3f",
							 m->inner_ms, m->leader_wait_ms, m->directory_ms, m->outer_ms,
							 m->lookup_ms, m->total_ms);
		ExplainPropertyText(n < 0 ? who : psprintf("%s %d", who, n), b.data, es);
		return;
	}
	ExplainOpenGroup(who, NULL, true, es);
	if (n >= 0)
		ExplainPropertyInteger("Worker Number", NULL, n, es);
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
