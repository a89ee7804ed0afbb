/*
 * functions.cpp
 *    SQL-callable functions: gpuops.version() and gpuops.device_info().
 */
extern "C" {
#include "postgres.h"

#include "access/htup_details.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(gpuops_version);
PG_FUNCTION_INFO_V1(gpuops_device_info);
}

#include "boundary.h"
#include "device.h"
#include "guc.h"

#define GPUOPS_VERSION "0.1.0"

static Datum
VersionImpl(FunctionCallInfo)
{
	PG_RETURN_TEXT_P(
		cstring_to_text(psprintf("gpuops %s (%s)", GPUOPS_VERSION, gpuops_build_info())));
}

extern "C" Datum
gpuops_version(PG_FUNCTION_ARGS)
{
	return GpuopsGuard("gpuops.version()", VersionImpl, fcinfo);
}

static char *
CudaVersionText(int v)
{
	return v > 0 ? psprintf("%d.%d", v / 1000, (v % 1000) / 10) : NULL;
}

static Datum
DeviceInfoImpl(FunctionCallInfo fcinfo)
{
	TupleDesc desc;
	GpuopsDeviceInfo info;
	Datum values[10];
	bool nulls[10] = {false};
	const char *backend;
	bool present;

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("gpuops.device_info() must return a record")));
	desc = BlessTupleDesc(desc);
	/* the probe makes a CUDA context: it needs a device session like a query */
	if (GpuopsGpuPresent() && !GpuopsDeviceSessionAcquire())
	{
		memset(&info, 0, sizeof(info));
		info.gpu_available = 1;
		strlcpy(info.reason, "every device session is in use (gpuops.max_device_sessions)",
				sizeof(info.reason));
	}
	else if (gpuops_cuda_device()->sort->probe(&info) != GPUOPS_OK)
	{
		memset(&info, 0, sizeof(info));
		strlcpy(info.reason, gpuops_last_error(), sizeof(info.reason));
	}
	present = info.gpu_available != 0;
	if (gpuops_device_mode == GPUOPS_DEVICE_CPU)
		backend = "cpu";
	else
		backend = present ? "cuda" : "none";

	values[0] = CStringGetTextDatum(backend);
	values[1] = BoolGetDatum(present);
	if (info.name[0])
		values[2] = CStringGetTextDatum(info.name);
	else
		nulls[2] = true;
	if (info.cc_major > 0)
		values[3] = CStringGetTextDatum(psprintf("%d.%d", info.cc_major, info.cc_minor));
	else
		nulls[3] = true;
	values[4] = Int64GetDatum((int64) (info.total_memory >> 20));
	nulls[4] = info.total_memory == 0;
	values[5] = Int64GetDatum((int64) (info.free_memory >> 20));
	nulls[5] = info.free_memory == 0;
	values[6] = Int32GetDatum(info.multiprocessors);
	nulls[6] = info.multiprocessors == 0;
	{
		char *drv = CudaVersionText(info.driver_version);
		char *rt = CudaVersionText(info.runtime_version);

		if (drv)
			values[7] = CStringGetTextDatum(drv);
		else
			nulls[7] = true;
		if (rt)
			values[8] = CStringGetTextDatum(rt);
		else
			nulls[8] = true;
	}
	if (!present && info.reason[0])
		values[9] = CStringGetTextDatum(info.reason);
	else
		nulls[9] = true;
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}

extern "C" Datum
gpuops_device_info(PG_FUNCTION_ARGS)
{
	return GpuopsGuard("gpuops.device_info()", DeviceInfoImpl, fcinfo);
}
