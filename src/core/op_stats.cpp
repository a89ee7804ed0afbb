/*
 * op_stats.cpp
 *    gpuops.stat's shared counters (op_stats.h) and its SQL functions,
 *    gpuops.stat_counters() (the view gpuops.stat reads it) and
 *    gpuops.stat_reset().
 */
extern "C" {
#include "postgres.h"

#include "access/htup_details.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(gpuops_stat_counters);
PG_FUNCTION_INFO_V1(gpuops_stat_reset);
}

#include "boundary.h"
#include "op_stats.h"
#include "shmem_area.h"

#define GPUOPS_STAT_REASON_LEN 256

static const char *const op_names[GPUOPS_OP_NKINDS] = {
	"GpuSort", "GpuHashJoin", "GpuMergeJoin", "GpuNestLoop",
	"GpuAgg",  "GpuQuery",	  "GpuStage",	  "GpuTopN",
};

typedef struct OpCounters
{
	uint64 plans;
	uint64 executions;
	uint64 rows_in;
	uint64 rows_out;
	uint64 bytes_to_device;
	uint64 bytes_from_device;
	double device_ms;
	uint64 fallbacks;
	uint64 device_oom;
	char last_fallback[GPUOPS_STAT_REASON_LEN];
} OpCounters;

typedef struct OpStatsShared
{
	slock_t mutex; /* held for one flush: a few additions and a short copy */
	TimestampTz reset_time;
	OpCounters ops[GPUOPS_OP_NKINDS];
} OpStatsShared;

static OpStatsShared *shared = NULL;

static void
InitShared(void *area)
{
	OpStatsShared *s = (OpStatsShared *) area;

	SpinLockInit(&s->mutex);
	s->reset_time = GetCurrentTimestamp();
}

void
GpuopsOpStatsInit(void)
{
	GpuopsShmemArea("gpuops operator statistics", sizeof(OpStatsShared), (void **) &shared,
					InitShared);
}

int
GpuopsOpKindOf(const char *custom_name)
{
	for (int k = 0; k < GPUOPS_OP_NKINDS; k++)
		if (strcmp(custom_name, op_names[k]) == 0)
			return k;
	return -1;
}

void
GpuopsOpStatsFlush(int kind, const GpuopsOpStatAcc *acc, const char *fallback)
{
	OpCounters *c;

	if (shared == NULL || kind < 0 || kind >= GPUOPS_OP_NKINDS)
		return;
	c = &shared->ops[kind];
	SpinLockAcquire(&shared->mutex);
	c->plans++;
	c->executions += acc->executions;
	c->rows_in += acc->rows_in;
	c->rows_out += acc->rows_out;
	c->bytes_to_device += acc->bytes_to_device;
	c->bytes_from_device += acc->bytes_from_device;
	c->device_ms += acc->device_ms;
	if (fallback != NULL)
	{
		c->fallbacks++;
		strlcpy(c->last_fallback, fallback, sizeof(c->last_fallback));
	}
	SpinLockRelease(&shared->mutex);
}

void
GpuopsOpStatsCountOom(int kind)
{
	if (shared == NULL || kind < 0 || kind >= GPUOPS_OP_NKINDS)
		return;
	SpinLockAcquire(&shared->mutex);
	shared->ops[kind].device_oom++;
	SpinLockRelease(&shared->mutex);
}

static void
RequireShared(const char *fn)
{
	if (shared == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("%s needs gpuops to be loaded via shared_preload_libraries", fn),
				 errhint("Add gpuops to shared_preload_libraries in postgresql.conf "
						 "and restart the server.")));
}

#define STAT_COLS 12

static Datum
CountersImpl(FunctionCallInfo fcinfo)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	OpStatsShared snap;

	RequireShared("gpuops.stat");
	InitMaterializedSRF(fcinfo, 0);

	/* a copy, so that the lock is not held while the rows are built */
	SpinLockAcquire(&shared->mutex);
	memcpy(&snap, shared, sizeof(snap));
	SpinLockRelease(&shared->mutex);

	for (int k = 0; k < GPUOPS_OP_NKINDS; k++)
	{
		const OpCounters *c = &snap.ops[k];
		Datum values[STAT_COLS];
		bool nulls[STAT_COLS] = {false};

		values[0] = CStringGetTextDatum(op_names[k]);
		values[1] = Int64GetDatum((int64) c->plans);
		values[2] = Int64GetDatum((int64) c->executions);
		values[3] = Int64GetDatum((int64) c->rows_in);
		values[4] = Int64GetDatum((int64) c->rows_out);
		values[5] = Int64GetDatum((int64) c->bytes_to_device);
		values[6] = Int64GetDatum((int64) c->bytes_from_device);
		values[7] = Float8GetDatum(c->device_ms);
		values[8] = Int64GetDatum((int64) c->fallbacks);
		if (c->last_fallback[0] != '\0')
			values[9] = CStringGetTextDatum(c->last_fallback);
		else
			nulls[9] = true;
		values[10] = Int64GetDatum((int64) c->device_oom);
		values[11] = TimestampTzGetDatum(snap.reset_time);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

extern "C" Datum
gpuops_stat_counters(PG_FUNCTION_ARGS)
{
	return GpuopsGuard("gpuops.stat_counters()", CountersImpl, fcinfo);
}

static Datum
ResetImpl(FunctionCallInfo)
{
	TimestampTz now = GetCurrentTimestamp();

	RequireShared("gpuops.stat_reset()");
	SpinLockAcquire(&shared->mutex);
	memset(shared->ops, 0, sizeof(shared->ops));
	shared->reset_time = now;
	SpinLockRelease(&shared->mutex);
	PG_RETURN_VOID();
}

extern "C" Datum
gpuops_stat_reset(PG_FUNCTION_ARGS)
{
	return GpuopsGuard("gpuops.stat_reset()", ResetImpl, fcinfo);
}
