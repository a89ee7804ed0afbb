/*
 * page_service.cpp
 *    The page service's PostgreSQL side: its shared area, its background
 *    worker, and a backend's claim of a channel (gpuops_page_service.h says
 *    what the service does and why).
 *
 * The worker ("gpuops page service" in pg_stat_activity) is registered by
 * _PG_init when gpuops.page_service_channels > 0, and makes the only CUDA
 * calls of its process (never the postmaster's).  It first maps shared buffers for the
 * GPU in pieces (seconds: meanwhile GpuQuery copies its pages as before),
 * then answers requests until shutdown.  Without a GPU it exits for good;
 * after a device failure it exits with 1 and the postmaster starts it again
 * 10 s later, with a new generation: backends holding a channel of the old
 * one fail their next request with a device error (GpuQuery then runs on
 * the CPU, as after any device failure) and claim a new one next query.
 *
 * A backend claims a channel for a GpuQuery node whose pages are read in
 * place (GpuopsPageServiceClaim), and gives it back when the node's memory
 * goes: at the executor's end or at an abort (a memory context callback),
 * or when the process exits (before_shmem_exit).
 */
extern "C" {
#include "postgres.h"

#include "access/htup_details.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"

#include "miscadmin.h"
#include "postmaster/bgworker.h"
#include "portability/instr_time.h"
#include "postmaster/interrupt.h"
#include "storage/bufmgr.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/guc.h"
#include "utils/wait_event.h"
}

#include "boundary.h"
#include "device.h"
#include "guc.h"
#include "page_service.h"
#include "shmem_area.h"

extern "C" PGDLLEXPORT void gpuops_page_service_main(Datum arg);
extern "C" {
PG_FUNCTION_INFO_V1(gpuops_page_service);
}

static GpuopsPageService *service = NULL;
static bool exit_hook = false; /* this backend releases its channels at exit */

static void
InitShared(void *area)
{
	GpuopsPageService *svc = (GpuopsPageService *) area;

	svc->nchannels = (uint32) gpuops_page_service_channels;
	svc->page_size = BLCKSZ;
}

void
GpuopsPageServiceInit(void)
{
	BackgroundWorker worker;

	if (gpuops_page_service_channels <= 0)
		return;
	GpuopsShmemArea("gpuops page service",
					gpuops_page_service_bytes((uint32) gpuops_page_service_channels),
					(void **) &service, InitShared);

	memset(&worker, 0, sizeof(worker));
	/* (a connection to no database: it shows in pg_stat_activity) */
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_ConsistentState;
	worker.bgw_restart_time = 10;
	strlcpy(worker.bgw_library_name, "gpuops", BGW_MAXLEN);
	strlcpy(worker.bgw_function_name, "gpuops_page_service_main", BGW_MAXLEN);
	strlcpy(worker.bgw_name, "gpuops page service", BGW_MAXLEN);
	strlcpy(worker.bgw_type, "gpuops page service", BGW_MAXLEN);
	RegisterBackgroundWorker(&worker);
}

/* The service leaves: backends stop asking (their waits see it and fail). */
static void
ServiceExit(int, Datum)
{
	__atomic_store_n(&service->state, (int32) GPUOPS_PAGE_SERVICE_OFF, __ATOMIC_RELEASE);
	__atomic_store_n(&service->pid, 0, __ATOMIC_RELEASE);
}

void
gpuops_page_service_main(Datum)
{
	instr_time last, now;
	int rc;

	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();
	if (service == NULL)
		proc_exit(0);
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	on_shmem_exit(ServiceExit, 0);
	service->pid = MyProcPid;
	service->latch = &MyProc->procLatch;
	service->base = BufferBlocks;
	service->bytes = (uint64) NBuffers * BLCKSZ;
	/*
	 * Requests a service before this one left unanswered get no answer:
	 * their owners see the new generation and fail them.
	 */
	for (uint32 c = 0; c < service->nchannels; c++)
	{
		GpuopsPageChannel *ch = &service->channels[c];

		ch->status = GPUOPS_ERR_DEVICE;
		__atomic_store_n(&ch->done_seq, __atomic_load_n(&ch->req_seq, __ATOMIC_ACQUIRE),
						 __ATOMIC_RELEASE);
	}
	__atomic_store_n(&service->state, (int32) GPUOPS_PAGE_SERVICE_MAPPING, __ATOMIC_RELEASE);

	service->cache_want = gpuops_page_cache_size < 0 ? -1 : (int64) gpuops_page_cache_size << 20;
	rc = gpuops_page_service_open(service);
	if (rc == 0)
	{
		ereport(LOG, (errmsg("gpuops page service: no GPU; GpuQuery copies its pages")));
		proc_exit(0); /* never started again */
	}
	if (rc < 0)
		ereport(FATAL,
				(errmsg("gpuops page service: could not set up the device: %s",
						gpuops_last_error())));
	while ((rc = gpuops_page_service_map_step(service)) == 0)
	{
		CHECK_FOR_INTERRUPTS();
		if (ShutdownRequestPending)
			proc_exit(0);
	}
	if (rc < 0)
	{
		/* (exit 0: mapping again every 10 s would fail the same way) */
		ereport(LOG,
				(errmsg("gpuops page service: could not map shared buffers (%zu MB) for the "
						"GPU; GpuQuery copies its pages",
						(size_t) (service->bytes >> 20))));
		proc_exit(0);
	}
	__atomic_add_fetch(&service->generation, 1u, __ATOMIC_ACQ_REL);
	__atomic_store_n(&service->state, (int32) GPUOPS_PAGE_SERVICE_SERVING, __ATOMIC_RELEASE);
	ereport(LOG,
			(errmsg("gpuops page service: shared buffers (%zu MB) mapped in %.0f ms; %u "
					"channels; a device page cache of %zu MB",
					(size_t) (service->bytes >> 20), service->map_ms, service->nchannels,
					(size_t) (service->cache_bytes >> 20))));

	INSTR_TIME_SET_ZERO(last);
	while (!ShutdownRequestPending)
	{
		int served;

		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		served = gpuops_page_service_serve(service);
		if (served < 0)
			ereport(FATAL, (errmsg("gpuops page service: a device failure; restarting")));
		INSTR_TIME_SET_CURRENT(now);
		if (served > 0)
		{
			last = now;
			continue;
		}
		/*
		 * A query asks every millisecond or so while it reads: the service
		 * polls for 2 ms after an answer rather than sleep and be woken
		 * (tens of microseconds a request).  A second's timeout frees
		 * channels abandoned while it slept.
		 */
		INSTR_TIME_SUBTRACT(now, last);
		if (!INSTR_TIME_IS_ZERO(last) && INSTR_TIME_GET_MICROSEC(now) < 2000)
			continue;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 1000,
						 PG_WAIT_EXTENSION);
	}
	proc_exit(0);
}

/* GpuopsPageLink.wake: the service's latch (its PGPROC's, in shared memory). */
static void
Wake(void)
{
	Latch *latch = (Latch *) __atomic_load_n(&service->latch, __ATOMIC_ACQUIRE);

	if (latch != NULL)
		SetLatch(latch);
}

/* At exit: every channel this process still holds (a FATAL mid-query). */
static void
ReleaseAll(int, Datum)
{
	for (uint32 c = 0; c < service->nchannels; c++)
		if (__atomic_load_n(&service->channels[c].owner, __ATOMIC_ACQUIRE) == (uint32) MyProcPid)
		{
			GpuopsPageLink link = {service, c, 0, Wake};

			gpuops_page_service_release(&link);
		}
}

bool
GpuopsPageServiceClaim(GpuopsPageLink *link)
{
	if (service == NULL || !gpuops_page_service_claim(service, (uint32) MyProcPid, link))
		return false;
	link->wake = Wake;
	if (!exit_hook)
	{
		before_shmem_exit(ReleaseAll, 0);
		exit_hook = true;
	}
	return true;
}

void
GpuopsPageServiceRelease(GpuopsPageLink *link)
{
	if (link->service != NULL)
		gpuops_page_service_release(link);
	link->service = NULL;
}

/* gpuops.page_service(): what the service is doing, for monitoring. */
static Datum
StatusImpl(FunctionCallInfo fcinfo)
{
	static const char *const states[] = {"off", "mapping", "serving"};
	TupleDesc desc;
	Datum values[10];
	bool nulls[10] = {false};
	int32 state = service ? __atomic_load_n(&service->state, __ATOMIC_ACQUIRE) : 0;
	int32 pid = service ? __atomic_load_n(&service->pid, __ATOMIC_ACQUIRE) : 0;
	int in_use = 0;

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("gpuops.page_service() must return a record")));
	desc = BlessTupleDesc(desc);
	for (uint32 c = 0; service != NULL && c < service->nchannels; c++)
		in_use += __atomic_load_n(&service->channels[c].owner, __ATOMIC_ACQUIRE) != 0;
	values[0] = CStringGetTextDatum(states[state >= 0 && state <= 2 ? state : 0]);
	values[1] = Int32GetDatum(pid);
	nulls[1] = pid == 0;
	values[2] = Int32GetDatum(service ? (int32) service->nchannels : 0);
	values[3] = Int32GetDatum(in_use);
	values[4] = Int32GetDatum(
		service ? (int32) __atomic_load_n(&service->generation, __ATOMIC_ACQUIRE) : 0);
	values[5] = Float8GetDatum(service ? service->map_ms : 0);
	nulls[5] = service == NULL || service->map_ms <= 0;
	values[6] = Int64GetDatum(
		service ? (int64) __atomic_load_n(&service->requests, __ATOMIC_RELAXED) : 0);
	values[7] = Int64GetDatum(service ? (int64) (service->cache_bytes >> 20) : 0);
	values[8] = Int64GetDatum(service ? (int64) __atomic_load_n(&service->pages, __ATOMIC_RELAXED)
									  : 0);
	values[9] = Int64GetDatum(service ? (int64) __atomic_load_n(&service->cached, __ATOMIC_RELAXED)
									  : 0);
	return HeapTupleGetDatum(heap_form_tuple(desc, values, nulls));
}

extern "C" Datum
gpuops_page_service(PG_FUNCTION_ARGS)
{
	return GpuopsGuard("gpuops.page_service()", StatusImpl, fcinfo);
}
