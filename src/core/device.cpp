/*
 * device.cpp
 *    Backend choice and device status reporting.
 *
 * The CUDA backend is never touched in the postmaster: the first call that
 * needs it (planning with gpuops.device = auto, or running a node) probes the
 * device in the backend process itself, since CUDA state does not survive
 * fork().
 */
extern "C" {
#include "postgres.h"

#include "access/xact.h"

#include "executor/executor.h"
#include "miscadmin.h"
#include "postmaster/postmaster.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "utils/wait_event.h"
}

#include "device.h"
#include "guc.h"

static int gpu_present = -1; /* -1 unknown, 0 no, 1 yes */

/*
 * The device layer's interrupt check (gpuops_set_interrupt_check): nonzero
 * when CHECK_FOR_INTERRUPTS would raise an error now (a cancel, timeout or
 * termination, outside any holdoff), so the device call stops and its
 * caller raises it once the call has returned.  Reads flags only: the
 * device layer calls it from inside C++ frames.
 */
static int
InterruptDue(void)
{
	return InterruptPending && InterruptHoldoffCount == 0 && CritSectionCount == 0 &&
		(ProcDiePending || (QueryCancelPending && QueryCancelHoldoffCount == 0));
}

/*
 * Registers the check for this process (its main thread): at load, and
 * again in a process that did not run _PG_init itself.
 */
void
GpuopsRegisterInterruptCheck(void)
{
	static int registered_pid = 0;

	if (registered_pid == MyProcPid)
		return;
	gpuops_set_interrupt_check(InterruptDue);
	registered_pid = MyProcPid;
}

/*
 * A device call stopped for an interrupt: raises it (the call's C++ frames
 * are gone).  If processing it raised nothing, the statement still stops.
 */
static void
RaiseIfCanceled(GpuopsStatus status)
{
	if (status != GPUOPS_ERR_CANCELED)
		return;
	CHECK_FOR_INTERRUPTS();
	ereport(ERROR,
			(errcode(ERRCODE_QUERY_CANCELED),
			 errmsg("gpuops: device work stopped by an interrupt")));
}

/*
 * With GPUOPS_LOG_SLOW_MS=N in the server's environment, a process whose
 * exit waited N ms or more for the helper thread or for the CUDA runtime's
 * teardown says so in the server log: a parallel query's cancel ends only
 * when its workers have exited.
 */
static int exit_slow_ms = -1;
static instr_time exit_teardown_start;

static double
MsSince(const instr_time *start)
{
	instr_time now;

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, *start);
	return INSTR_TIME_GET_MILLISEC(now);
}

/*
 * Registered before the process's first CUDA call, so it runs after the
 * exit handlers registered later, the CUDA runtime's included where it
 * registers them as it starts (where it uses a static destructor instead,
 * this measures nothing of it).  Only write(2) here: the server's logging
 * is gone.
 */
static void
TeardownTimeAtExit(void)
{
	double ms;
	char line[160];
	int n;

	if (INSTR_TIME_IS_ZERO(exit_teardown_start))
		return;
	ms = MsSince(&exit_teardown_start);
	if (ms < exit_slow_ms)
		return;
	n = snprintf(line, sizeof(line),
				 "gpuops [%d]: the CUDA runtime's teardown at process exit took %.0f ms\n",
				 (int) getpid(), ms);
	if (n > 0)
		(void) !write(2, line, Min((size_t) n, sizeof(line) - 1));
}

/*
 * exit()'s first handler (registered last) when the process ends while its
 * helper thread is still inside the driver: the process ends at once,
 * without the CUDA runtime's teardown, which would run under that thread
 * (seen on the H100: a segmentation fault of the exiting worker).  The
 * kernel frees the context with the process.
 */
static int exit_code = 0;

static void
EndWithoutTeardown(void)
{
	if (gpuops_cuda_prewarm_pending() || gpuops_cuda_host_map_pending())
		_exit(exit_code);
}

/*
 * At process exit the helper thread may still be inside the driver (a
 * parallel worker told to stop while its context was being made, or its
 * pool trimmed).  Waiting for it took 1.4-4.3 s in a stress run with 53
 * processes on the GPU (H200), and a cancelled parallel query ends only
 * when its workers have exited: a process whose helper is busy leaves
 * without waiting (EndWithoutTeardown); one whose helper is done joins it.
 */
static void
JoinHelperAtExit(int code, Datum)
{
	/* (the thread mapping shared buffers, too: it is in the driver for seconds) */
	if (gpuops_cuda_prewarm_pending() || gpuops_cuda_host_map_pending())
	{
		exit_code = code;
		if (atexit(EndWithoutTeardown) == 0)
		{
			if (exit_slow_ms > 0)
				elog(
					LOG,
					"gpuops: at process exit, the helper thread is still in the driver: leaving without the CUDA runtime's teardown");
			return;
		}
	}
	gpuops_cuda_prewarm_wait();
	if (exit_slow_ms > 0)
		INSTR_TIME_SET_CURRENT(exit_teardown_start);
}

bool
GpuopsGpuPresent(void)
{
	static bool exit_hook = false;

	if (gpu_present < 0)
	{
		int answer;

		if (!IsUnderPostmaster && IsPostmasterEnvironment)
			return false; /* never initialize CUDA in the postmaster */
		if (!exit_hook)
		{
			const char *v = getenv("GPUOPS_LOG_SLOW_MS");

			exit_slow_ms = v ? atoi(v) : 0;
			if (exit_slow_ms > 0)
				atexit(TeardownTimeAtExit);
			on_proc_exit(JoinHelperAtExit, (Datum) 0);
			exit_hook = true;
		}

		/*
		 * No CUDA context yet: a backend pays for one only when a node
		 * runs.  The probe starts the driver (seconds when many processes
		 * do so at once, where no interrupt check runs) on a helper
		 * thread; this waits for it where a cancel or a timeout ends the
		 * wait, and a later call takes the answer.
		 */
		while ((answer = gpuops_cuda_present_poll()) < 0)
		{
			CHECK_FOR_INTERRUPTS();
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 1,
							 PG_WAIT_EXTENSION);
			ResetLatch(MyLatch);
		}
		gpu_present = answer;
		if (!gpu_present)
			elog(DEBUG1, "gpuops: no usable GPU: %s", gpuops_last_error());
	}
	return gpu_present == 1;
}

bool
GpuopsPlanningAllowed(void)
{
	if (!gpuops_enabled)
		return false;
	switch (gpuops_device_mode)
	{
		case GPUOPS_DEVICE_CPU:
		case GPUOPS_DEVICE_GPU:
			return true;
		default:
			return GpuopsGpuPresent();
	}
}

bool
GpuopsPinHostMemory(void *p, Size bytes)
{
	/* no CUDA context (the CPU engine, none made yet): nothing to pin for */
	return gpuops_cuda_host_register(p, bytes) != 0;
}

void
GpuopsUnpinHostMemory(void *p)
{
	gpuops_cuda_host_unregister(p);
}

bool
GpuopsMapHostMemoryStart(void *p, Size bytes)
{
	return gpuops_cuda_host_map_start(p, bytes) != 0;
}

bool
GpuopsHostMemoryMapped(const void *p)
{
	return gpuops_cuda_host_mapped(p) != 0;
}

bool
GpuopsHostMemoryMapPending(void)
{
	return gpuops_cuda_host_map_pending() != 0;
}

double
GpuopsHostMemoryMapMs(void)
{
	return gpuops_cuda_host_map_ms();
}

bool
GpuopsUseCuda(void)
{
	if (gpuops_device_mode == GPUOPS_DEVICE_CPU)
		return false;
	/* without a GPU the CUDA backend reports why, as it always has */
	if (!GpuopsGpuPresent())
		return true;
	if (!GpuopsDeviceSessionAcquire())
		return false;

	/*
	 * The first device call would join the prewarm thread, which may still
	 * be creating the context (seconds, when many processes do at once):
	 * wait for it here instead, where a cancel or a timeout ends the wait.
	 */
	while (gpuops_cuda_prewarm_pending())
	{
		CHECK_FOR_INTERRUPTS();
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 5,
						 PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
	return true;
}

/*
 * The engine a query runs on first: CUDA when GpuopsUseCuda() says so, else
 * the CPU twin.  Every node takes its operator from this one choice.
 */
const GpuopsDevice *
GpuopsPrimaryDevice(void)
{
	GpuopsRegisterInterruptCheck();
	return GpuopsUseCuda() ? gpuops_cuda_device() : gpuops_cpu_device();
}

static int
StatusSqlstate(GpuopsStatus status)
{
	switch (status)
	{
		case GPUOPS_ERR_NO_DEVICE:
			return ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE;
		case GPUOPS_ERR_OUT_OF_MEMORY:
			return ERRCODE_OUT_OF_MEMORY;
		case GPUOPS_ERR_DEVICE:
			return ERRCODE_SYSTEM_ERROR;
		case GPUOPS_ERR_UNSUPPORTED:
			return ERRCODE_FEATURE_NOT_SUPPORTED;
		case GPUOPS_ERR_CANCELED:
			return ERRCODE_QUERY_CANCELED;
		default:
			return ERRCODE_INTERNAL_ERROR;
	}
}

static const char *
StatusText(GpuopsStatus status)
{
	switch (status)
	{
		case GPUOPS_ERR_NO_DEVICE:
			return "no GPU device";
		case GPUOPS_ERR_OUT_OF_MEMORY:
			return "out of device memory";
		case GPUOPS_ERR_DEVICE:
			return "device error";
		case GPUOPS_ERR_UNSUPPORTED:
			return "not supported by the device";
		case GPUOPS_ERR_CANCELED:
			return "canceled";
		default:
			return "internal error";
	}
}

void
GpuopsDeviceFailed(const char *node, GpuopsStatus status, bool fallback_possible)
{
	const char *detail = gpuops_last_error();

	RaiseIfCanceled(status); /* an interrupt is not a device failure */
	if (fallback_possible && gpuops_cpu_fallback != GPUOPS_FALLBACK_OFF)
	{
		ereport(gpuops_cpu_fallback == GPUOPS_FALLBACK_NOTICE ? NOTICE : DEBUG1,
				(errmsg("gpuops: %s failed on the device; finishing on the CPU", node),
				 errdetail("%s", detail)));
		return;
	}
	GpuopsRaiseStatus(node, status);
}

/*
 * The one place where a device-layer status becomes a PostgreSQL error, with
 * the SQLSTATE that fits the failure and the layer's own message as detail.
 */
void
GpuopsRaiseStatus(const char *what, GpuopsStatus status)
{
	bool hint = status == GPUOPS_ERR_NO_DEVICE || status == GPUOPS_ERR_OUT_OF_MEMORY ||
		status == GPUOPS_ERR_DEVICE;

	RaiseIfCanceled(status);
	ereport(
		ERROR,
		(errcode(StatusSqlstate(status)), errmsg("gpuops: %s failed: %s", what, StatusText(status)),
		 errdetail("%s", gpuops_last_error()),
		 hint ? errhint("Set gpuops.cpu_fallback = on to finish such queries on the CPU.") : 0));
}

void
GpuopsWaitForDevice(void)
{
	CHECK_FOR_INTERRUPTS();
	pg_usleep(20L);
}

/*
 * A node that will use the CUDA backend starts it on a helper thread
 * (gpuops_cuda_prewarm) at executor start: the context and pinned pool are
 * then made while the node reads its input, not after.  Not for EXPLAIN
 * without ANALYZE, the CPU backend, or without a GPU.
 */
void
GpuopsPrewarmDeviceFor(int eflags, bool shared)
{
	GpuopsSettings settings;

	/* GpuopsGpuPresent set the exit hook that joins the helper */
	if ((eflags & EXEC_FLAG_EXPLAIN_ONLY) || gpuops_device_mode == GPUOPS_DEVICE_CPU ||
		!GpuopsGpuPresent() || !GpuopsDeviceSessionAcquire())
		return;
	settings = GpuopsSettingsFor(shared);
	gpuops_cuda_prewarm(&settings);
}

/* The boundary's error slot (boundary.h). */
static char cpp_error[1024];

void
GpuopsRememberCppError(const char *what) noexcept
{
	strlcpy(cpp_error, what ? what : "", sizeof(cpp_error));
}

void
GpuopsRaiseCppError(const char *where)
{
	ereport(ERROR,
			(errcode(ERRCODE_INTERNAL_ERROR),
			 errmsg("gpuops: unexpected C++ exception in %s: %s", where, cpp_error)));
}
