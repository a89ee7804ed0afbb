/*
 * device_session.h
 *    A node's device session: the operator backend it runs on and that
 *    backend's open handle, kept in the query context and ended when that
 *    context goes (at the end of the query, and on error and cancel), with
 *    the time the ending took in the server log when it was long.
 */
#ifndef GPUOPS_DEVICE_SESSION_H
#define GPUOPS_DEVICE_SESSION_H

extern "C" {
#include "postgres.h"

#include "nodes/execnodes.h"
#include "portability/instr_time.h"
#include "utils/memutils.h"
}

/*
 * The session: the operator backend (CUDA or the CPU twin, which may
 * change when the node falls back) and that backend's open handle, or
 * NULL.  End is the backend's member that frees a handle (sort_end,
 * join_end, ...).  Every node's device state is one, or derives from one
 * (GpuSortDevice adds its staging buffer, GpuHashJoinDevice its shared
 * build).  Plain data: it lives in palloc'd memory, zeroed.
 */
template <typename Backend, typename Handle, void (*Backend::*End)(Handle *) noexcept>
struct DeviceSession
{
	const Backend *backend;
	Handle *handle;
	MemoryContextCallback cb;

	/* ends the open handle, if any */
	void end()
	{
		if (handle != NULL)
			(backend->*End)(handle);
		handle = NULL;
	}
};

/* The release of a session that needs nothing more than end(). */
template <typename Dev>
static void
EndDeviceSession(void *arg)
{
	((Dev *) arg)->end();
}

/*
 * Runs a node's device release, and says in the server log when it took
 * long (over 200 ms): a release runs where nothing can cancel it (at the
 * end of the query, and on error and cancel, where it waits for the
 * node's last device work), so its time is part of how long a cancel
 * takes.
 */
template <MemoryContextCallbackFunction Release>
static void
TimedRelease(void *arg)
{
	instr_time start, took;

	INSTR_TIME_SET_CURRENT(start);
	Release(arg);
	INSTR_TIME_SET_CURRENT(took);
	INSTR_TIME_SUBTRACT(took, start);
	if (INSTR_TIME_GET_MILLISEC(took) > 200.0)
		elog(LOG, "gpuops: releasing device state took %.0f ms (%s)", INSTR_TIME_GET_MILLISEC(took),
			 __PRETTY_FUNCTION__);
}

/*
 * A node's device session (Dev has a MemoryContextCallback cb) in the query
 * context, released by Release when that context goes: at the end of the
 * query, and on error and cancel.
 */
template <typename Dev, MemoryContextCallbackFunction Release = EndDeviceSession<Dev>>
static Dev *
NewQueryDevice(EState *estate)
{
	Dev *dev = (Dev *) MemoryContextAllocZero(estate->es_query_cxt, sizeof(Dev));

	dev->cb.func = TimedRelease<Release>;
	dev->cb.arg = dev;
	MemoryContextRegisterResetCallback(estate->es_query_cxt, &dev->cb);
	return dev;
}

#endif /* GPUOPS_DEVICE_SESSION_H */
