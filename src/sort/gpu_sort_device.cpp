/*
 * gpu_sort_device.cpp
 *    GpuSort: the device sort of the stored rows, its computed keys' values,
 *    and its failures (the CPU backend sorts the store again).
 */
#include "gpu_sort_exec.h"

void
GpuSortDeviceRelease(void *arg)
{
	GpuSortDevice *dev = (GpuSortDevice *) arg;

	dev->end();
	dev->have_buf = false;
}

/* Starts a device sort; injected faults hit the first (primary) run only. */
static GpuopsStatus
DeviceBegin(GpuSortState *st, const GpuopsBackend *backend, bool primary)
{
	GpuopsSettings settings = GpuopsSettingsFor(st->device_shared);
	GpuopsSortSpec spec;

	GpuSortDeviceRelease(st->dev);
	if (!primary)
		settings.fault = GPUOPS_FAULT_NONE;
	st->dev->backend = backend;
	memset(&spec, 0, sizeof(spec));
	spec.nkeys = st->nkeys;
	for (int k = 0; k < st->nkeys; k++)
	{
		spec.keys[k].kind = st->keys[k].kind;
		spec.keys[k].descending = st->keys[k].descending;
		spec.keys[k].nulls_first = st->keys[k].nulls_first;
		spec.programs[k] = st->keys[k].program;
	}
	spec.program_ncols = st->prog_ncols;
	/*
	 * Runs to re-sort: rows equal in every word through the first key the
	 * device sees only a prefix of.  Past that key the device's order means
	 * nothing (the full values there decide first), so the comparator
	 * orders such a run by all keys.
	 */
	spec.tie_words = 0;
	for (int k = 0, words = 0; k < st->nkeys && spec.tie_words == 0; k++)
	{
		words += 1 + gpuops_key_value_words(st->keys[k].kind);
		if (st->keys[k].prefix_only)
			spec.tie_words = words;
	}
	return backend->sort_begin(&settings, &spec, &st->dev->handle);
}

/* A bounded or spilling sort sorts several times: EXPLAIN shows the totals. */
void
GpuSortAddStats(GpuopsStats *sum, const GpuopsStats *one)
{
	sum->rows += one->rows;
	sum->batches += one->batches;
	sum->key_words = one->key_words;
	sum->runs += one->runs;
	sum->sort_passes = Max(sum->sort_passes, one->sort_passes);
	sum->sort_bits = Max(sum->sort_bits, one->sort_bits);
	sum->copy_ms += one->copy_ms;
	sum->kernel_ms += one->kernel_ms;
	sum->device_bytes = Max(sum->device_bytes, one->device_bytes);
	sum->bytes_from_device += one->bytes_from_device;
}

/*
 * A row whose computed key the device stopped at: PostgreSQL evaluates the
 * keys there, in order, and raises the error the device saw.  The device
 * stops only where PostgreSQL raises one (DeviceExprCompileInput), so
 * returning is a bug, reported as such.
 */
static void
RaiseKeyError(GpuSortState *st, uint64 row)
{
	TupleTableSlot *slot = st->check_slot;
	ExprContext *econtext = st->css.ss.ps.ps_ExprContext;

	if (row >= st->store()->nrows)
		elog(ERROR, "GpuSort: the device stopped at row " UINT64_FORMAT " of " UINT64_FORMAT, row,
			 st->store()->nrows);
	GpuopsRowStoreFetchRow(st->store(), row, slot);
	econtext->ecxt_outertuple = slot;
	for (int k = 0; k < st->nkeys; k++)
	{
		bool isnull;

		if (st->keys[k].check != NULL)
			(void) ExecEvalExpr(st->keys[k].check, econtext, &isnull);
	}
	elog(ERROR, "GpuSort: the device could not compute a sort key that PostgreSQL computes");
}

/*
 * The sorted rows' computed keys: raises the error of a row the device
 * stopped at, else stores the device's values in the keys' columns.
 */
static GpuopsStatus
FetchComputed(GpuSortState *st)
{
	GpuSortDevice *dev = st->dev;
	GpuopsStatus rc;
	uint64 stop;

	if ((rc = dev->backend->sort_recheck(dev->handle, &stop)) != GPUOPS_OK)
		return rc;
	if (stop != GPUOPS_SORT_NO_RECHECK)
		RaiseKeyError(st, stop);
	for (int k = 0; k < st->nkeys; k++)
	{
		int col = st->keys[k].col;

		if (st->keys[k].program == NULL)
			continue;
		for (int b = 0; b < st->store()->nbatches; b++)
		{
			GpuopsBatch *batch = st->store()->batches[b];

			if (batch->nrows == 0)
				continue;
			if (batch->nulls[col] == NULL)
				batch->nulls[col] = (uint8 *) MemoryContextAllocZero(st->store()->cxt,
																	 (batch->capacity + 7) / 8);
			rc = dev->backend->sort_values(dev->handle, k, (uint64) b << GPUOPS_BATCH_SHIFT,
										   batch->nrows, batch->values[col], batch->nulls[col]);
			if (rc != GPUOPS_OK)
				return rc;
		}
	}
	return GPUOPS_OK;
}

/*
 * Submits the last partial buffer, sorts, and fetches the order and, when
 * text keys were truncated, which sorted rows tie with their predecessor;
 * and the computed keys' values.
 */
GpuopsStatus
GpuSortDeviceFinish(GpuSortState *st, uint32 *order, uint8 **ties)
{
	GpuSortDevice *dev = st->dev;
	GpuopsStatus rc;

	*ties = NULL;
	if (dev->have_buf)
	{
		dev->have_buf = false;
		if (dev->buf_rows > 0 &&
			(rc = dev->backend->sort_submit(dev->handle, dev->buf_rows)) != GPUOPS_OK)
			return rc;
	}
	if ((rc = dev->backend->sort_finish(dev->handle)) != GPUOPS_OK)
		return rc;
	while ((rc = dev->backend->sort_poll(dev->handle)) == GPUOPS_PENDING)
		GpuopsWaitForDevice();
	if (rc != GPUOPS_OK)
		return rc;
	if (st->ncomputed > 0 && (rc = FetchComputed(st)) != GPUOPS_OK)
		return rc;
	if ((rc = dev->backend->sort_result(dev->handle, order, st->store()->nrows)) != GPUOPS_OK)
		return rc;
	if ((st->any_truncated || st->has_abbrev_keys) && st->store()->nrows > 1)
	{
		*ties = (uint8 *) MemoryContextAllocHuge(st->store()->cxt, (st->store()->nrows + 7) / 8);
		if ((rc = dev->backend->sort_ties(dev->handle, *ties, st->store()->nrows)) != GPUOPS_OK)
			return rc;
	}
	{
		GpuopsStats one;

		memset(&one, 0, sizeof(one));
		dev->backend->sort_stats(dev->handle, &one);
		GpuSortAddStats(&st->stats, &one);
	}
	return GPUOPS_OK;
}

/* Sorts everything already in the store on the CPU backend. */
void
GpuSortStoredOnCpu(GpuSortState *st, uint32 *order, uint8 **ties)
{
	GpuopsStatus rc = DeviceBegin(st, gpuops_cpu_device()->sort, false);

	for (int b = 0; rc == GPUOPS_OK && b < st->store()->nbatches; b++)
		rc = GpuSortStageBatch(st, st->store()->batches[b], (uint64) b << GPUOPS_BATCH_SHIFT);
	if (rc == GPUOPS_OK)
		rc = GpuSortDeviceFinish(st, order, ties);
	if (rc != GPUOPS_OK)
		GpuopsDeviceFailed(GPUSORT_NAME, rc, false); /* raises */
}

/* Reports a device failure once; the rest of the sort runs on the CPU. */
void
GpuSortDeviceFailedMidway(GpuSortState *st, GpuopsStatus rc)
{
	GpuopsNodeFailed(st, rc); /* raises unless falling back */
	GpuSortDeviceRelease(st->dev);
	st->healthy = false;
}

/* Starts the device sort of the rows staged from now on. */
void
GpuSortStartDevice(GpuSortState *st, bool primary)
{
	GpuopsStatus rc;

	if (!st->healthy)
		return;
	rc = DeviceBegin(st, st->primary, primary);
	if (rc != GPUOPS_OK)
		GpuSortDeviceFailedMidway(st, rc);
}

/*
 * Stages the store's batches not yet staged for the current device sort:
 * the full ones, or with `all` the last, partial one too.  Staging offsets
 * must stay multiples of 8 rows, so a partial batch is staged only when the
 * sort is about to finish.
 */
void
GpuSortStagePending(GpuSortState *st, bool all)
{
	while (st->staged_batches < st->store()->nbatches)
	{
		GpuopsBatch *batch = st->store()->batches[st->staged_batches];

		if (!all && batch->nrows < GPUOPS_BATCH_ROWS)
			break;
		if (st->healthy && batch->nrows > 0)
		{
			GpuopsStatus rc = GpuSortStageBatch(st, batch,
												(uint64) st->staged_batches << GPUOPS_BATCH_SHIFT);

			if (rc != GPUOPS_OK)
				GpuSortDeviceFailedMidway(st, rc);
		}
		st->staged_batches++;
	}
}
