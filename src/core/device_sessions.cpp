/*
 * device_sessions.cpp
 *    How many backends may hold a CUDA context at once, and what a backend
 *    gives back between transactions.
 *
 * Each process that uses the GPU pays for a CUDA context (several hundred
 * MB of device memory) and a pinned pool, whether it runs a query or sits
 * idle in a connection pool: a few hundred connections would exhaust the
 * device.  So the processes that hold a context are counted in shared
 * memory, up to gpuops.max_device_sessions.  A query that finds every
 * session taken waits up to gpuops.device_session_wait for one (the wait
 * is a condition variable: cancellable), then runs on the CPU backend,
 * with PostgreSQL's results, as after any device failure (NOTICE per
 * gpuops.cpu_fallback; with cpu_fallback = off the statement fails with
 * SQLSTATE 53200).
 *
 * At the end of each transaction a holder gives back the pool's cached
 * device memory and, when another process is waiting, its whole context
 * and its session (an idle backend runs no code of ours until its next
 * statement, so it must let go at the end of the last one).  Only then:
 * creating a context takes 0.3 s alone, more when many processes do at
 * once (on the H100, 32 sessions that released their contexts at every
 * commit averaged seconds a statement on 300K-row queries).  A
 * process gives its session back when it exits, also on FATAL.
 */
extern "C" {
#include "postgres.h"

#include "access/parallel.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "storage/condition_variable.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/wait_event.h"
}

#include "device.h"
#include "guc.h"
#include "shmem_area.h"

typedef struct DeviceSessions
{
	slock_t mutex;
	int holders;			 /* processes counted as holding a context */
	int waiters;			 /* processes waiting for one */
	ConditionVariable freed; /* a session was given back */
} DeviceSessions;

static DeviceSessions *sessions = NULL;

static bool holding = false;  /* this process counts as a holder */
static bool waiting = false;  /* ... as a waiter */
static bool denied = false;	  /* this transaction runs on the CPU */
static int session_limit = 0; /* the limit in force, once computed */

static void
InitShared(void *area)
{
	DeviceSessions *s = (DeviceSessions *) area;

	SpinLockInit(&s->mutex);
	ConditionVariableInit(&s->freed);
}

/* gpuops.max_device_sessions, -1 resolved: one session per 2 GB of the GPU, at least 2. */
static int
Limit(void)
{
	if (gpuops_max_device_sessions >= 0)
		return gpuops_max_device_sessions;
	if (session_limit == 0)
		session_limit = Max((int) (gpuops_cuda_total_memory() >> 31), 2);
	return session_limit;
}

static void
StopWaiting(void)
{
	if (!waiting)
		return;
	SpinLockAcquire(&sessions->mutex);
	sessions->waiters--;
	SpinLockRelease(&sessions->mutex);
	waiting = false;
}

/* Gives this process's session back (its context must be gone). */
static void
GiveBack(void)
{
	if (!holding)
		return;
	SpinLockAcquire(&sessions->mutex);
	sessions->holders--;
	SpinLockRelease(&sessions->mutex);
	holding = false;
	ConditionVariableBroadcast(&sessions->freed);
}

/*
 * End of a transaction: the pool's cache goes back; the context too when
 * others want one.  Also after an error or a cancel (abort), when no query
 * holds device memory any more.
 */
static void
XactEnd(XactEvent event, void *)
{
	bool committed, release, idle;
	instr_time start, took;

	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PARALLEL_ABORT:
			break;
		default:
			return;
	}
	StopWaiting();
	denied = false;
	if (!holding)
		return;
	/*
	 * At an abort the failed query's nodes are cleaned up later (with the
	 * portal), and may still hold device objects, and its kernels may still
	 * run: only the pool's unused blocks go back now, without waiting for
	 * the device (a cancel must end the statement promptly), the rest at
	 * the end of a later transaction.
	 */
	committed = event == XACT_EVENT_COMMIT || event == XACT_EVENT_PARALLEL_COMMIT;
	/*
	 * A released context is torn down on a helper thread while this
	 * process goes on (its client is waiting for the commit): the session
	 * is given back at once, so for that moment one more context may exist
	 * than the limit counts.
	 */
	release = committed && sessions->waiters > 0;
	INSTR_TIME_SET_CURRENT(start);
	idle = gpuops_cuda_idle(release, committed);
	INSTR_TIME_SET_CURRENT(took);
	INSTR_TIME_SUBTRACT(took, start);
	/* where nothing can cancel it: in the server log when it took long */
	if (INSTR_TIME_GET_MILLISEC(took) > 200.0)
		elog(LOG,
			 "gpuops: giving device memory back at the end of a transaction took %.0f ms (%s%s)",
			 INSTR_TIME_GET_MILLISEC(took), committed ? "commit" : "abort",
			 release ? ", context released" : "");
	if (idle && release)
		GiveBack();
}

static void
ProcessExit(int, Datum)
{
	/*
	 * The context goes with the process, and the count with it (without
	 * waiting for a helper thread still making or dropping the context:
	 * device.cpp's exit hook deals with that thread).
	 */
	StopWaiting();
	GiveBack();
}

void
GpuopsDeviceSessionsInit(void)
{
	GpuopsShmemArea("gpuops device sessions", sizeof(DeviceSessions), (void **) &sessions,
					InitShared);
	RegisterXactCallback(XactEnd, NULL);
}

bool
GpuopsDeviceSessionAcquire(void)
{
	static bool exit_hook = false;
	TimestampTz start;

	if (holding)
		return true;
	if (denied)
		return false;
	if (sessions == NULL)
		return true; /* not preloaded: nothing is counted */
	if (!exit_hook)
	{
		before_shmem_exit(ProcessExit, (Datum) 0);
		exit_hook = true;
	}
	start = GetCurrentTimestamp();
	for (;;)
	{
		long left;

		SpinLockAcquire(&sessions->mutex);
		if (sessions->holders < Limit())
		{
			sessions->holders++;
			if (waiting)
				sessions->waiters--;
			SpinLockRelease(&sessions->mutex);
			waiting = false;
			holding = true;
			break;
		}
		if (!waiting)
			sessions->waiters++;
		SpinLockRelease(&sessions->mutex);
		waiting = true;
		left = gpuops_device_session_wait - (long) ((GetCurrentTimestamp() - start) / 1000);
		if (left <= 0)
		{
			StopWaiting();
			denied = true;
			break;
		}
		/* cancellable: the sleep checks for interrupts */
		ConditionVariableTimedSleep(&sessions->freed, Min(left, 100), PG_WAIT_EXTENSION);
	}
	ConditionVariableCancelSleep();
	if (denied)
	{
		if (gpuops_cpu_fallback == GPUOPS_FALLBACK_OFF)
			ereport(
				ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY), errmsg("gpuops: every device session is in use"),
				 errdetail(
					 "%d processes hold the GPU (gpuops.max_device_sessions); none was free within gpuops.device_session_wait (%d ms).",
					 Limit(), gpuops_device_session_wait),
				 errhint("Set gpuops.cpu_fallback = on to run such queries on the CPU.")));
		ereport(gpuops_cpu_fallback == GPUOPS_FALLBACK_NOTICE ? NOTICE : DEBUG1,
				(errmsg("gpuops: every device session is in use; this transaction runs on the CPU"),
				 errdetail("%d processes hold the GPU (gpuops.max_device_sessions).", Limit())));
	}
	return holding;
}
