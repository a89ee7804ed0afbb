/*
 * gpu_sort_exec.cpp
 *    GpuSort execution: a key-pointer sort.
 *
 * The child's rows are pulled into column batches (batch.h) that stay on the
 * host.  As each batch fills, its key column (one contiguous array) is
 * copied into a pinned staging buffer and submitted to the device, so the
 * copy and the normalize kernel of one batch overlap the pulling of the
 * next.  The device sorts (normalized key, row number) pairs and returns the
 * row numbers in order; rows are emitted from the store in that order.
 * NULL keys never take part in the sort: they are emitted first or last, in
 * input order.
 *
 * Device failures: the failing call is reported once (GpuopsDeviceFailed);
 * with gpuops.cpu_fallback the store, which still holds every row, is sorted
 * again by the CPU backend.  Device resources are released through a
 * memory-context callback on the query context, since EndCustomScan is not
 * called when the query errors or is cancelled.
 */
extern "C" {
#include "postgres.h"

#include "commands/explain.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "portability/instr_time.h"
#include "utils/memutils.h"
#include "utils/ruleutils.h"
}

#include "batch.h"
#include "boundary.h"
#include "device.h"
#include "explain_device.h"
#include "gpu_sort.h"
#include "guc.h"

extern const CustomExecMethods gpu_sort_exec_methods;

/* The device sort in flight, freed by the callback if the query aborts. */
typedef struct GpuSortDevice
{
	const GpuopsBackend *backend;
	GpuopsSort *sort;
	GpuopsStageBuffer buf;
	uint32		buf_rows;		/* rows written into buf so far */
	bool		have_buf;
	MemoryContextCallback cb;
} GpuSortDevice;

typedef struct GpuSortState
{
	CustomScanState css;
	int			key_col;
	GpuopsKeyType key_type;
	int			key_width;
	bool		descending;
	bool		nulls_first;

	GpuopsBatchSource *source;
	GpuopsRowStore store;
	GpuSortDevice *dev;

	bool		sorted;
	uint32	   *order;			/* emission order: row numbers (until permuted) */
	uint64		norder;
	uint64		pos;			/* next row forward */
	bool		eof;			/* ran off the end going forward */

	/* EXPLAIN ANALYZE */
	int			runs;
	const char *backend_name;
	char	   *fallback;		/* why it fell back, or NULL */
	GpuopsStats stats;
	double		staging_ms;
	Size		host_memory;
} GpuSortState;

static void
DeviceRelease(void *arg)
{
	GpuSortDevice *dev = (GpuSortDevice *) arg;

	if (dev->sort)
		dev->backend->sort_end(dev->sort);
	dev->sort = NULL;
	dev->have_buf = false;
}

/* Starts a device sort; injected faults hit the first (primary) run only. */
static GpuopsStatus
DeviceBegin(GpuSortState *st, const GpuopsBackend *backend, bool primary)
{
	GpuopsSettings settings = GpuopsCurrentSettings();
	GpuopsSortSpec spec;

	DeviceRelease(st->dev);
	if (!primary)
		settings.fault = GPUOPS_FAULT_NONE;
	st->dev->backend = backend;
	spec.key_type = st->key_type;
	spec.descending = st->descending;
	return backend->sort_begin(&settings, &spec, &st->dev->sort);
}

/* Copies the key column of one batch into staging buffers, submitting full ones. */
static GpuopsStatus
DeviceStageBatch(GpuSortState *st, GpuopsBatch *batch)
{
	GpuSortDevice *dev = st->dev;
	const char *keys = batch->values[st->key_col];
	uint32		done = 0;
	GpuopsStatus rc;

	while (done < batch->nrows)
	{
		uint32		n;

		if (!dev->have_buf)
		{
			while ((rc = dev->backend->sort_stage(dev->sort, &dev->buf)) == GPUOPS_PENDING)
				GpuopsWaitForDevice();
			if (rc != GPUOPS_OK)
				return rc;
			dev->have_buf = true;
			dev->buf_rows = 0;
		}
		n = Min(batch->nrows - done, dev->buf.capacity_rows - dev->buf_rows);
		memcpy((char *) dev->buf.values + (Size) dev->buf_rows * st->key_width,
			   keys + (Size) done * st->key_width, (Size) n * st->key_width);
		dev->buf_rows += n;
		done += n;
		if (dev->buf_rows == dev->buf.capacity_rows)
		{
			dev->have_buf = false;
			if ((rc = dev->backend->sort_submit(dev->sort, dev->buf_rows)) != GPUOPS_OK)
				return rc;
		}
	}
	return GPUOPS_OK;
}

/* Submits the last partial buffer, sorts, and fetches the order. */
static GpuopsStatus
DeviceFinish(GpuSortState *st, uint32 *order)
{
	GpuSortDevice *dev = st->dev;
	GpuopsStatus rc;

	if (dev->have_buf)
	{
		dev->have_buf = false;
		if (dev->buf_rows > 0 &&
			(rc = dev->backend->sort_submit(dev->sort, dev->buf_rows)) != GPUOPS_OK)
			return rc;
	}
	if ((rc = dev->backend->sort_finish(dev->sort)) != GPUOPS_OK)
		return rc;
	while ((rc = dev->backend->sort_poll(dev->sort)) == GPUOPS_PENDING)
		GpuopsWaitForDevice();
	if (rc != GPUOPS_OK)
		return rc;
	if ((rc = dev->backend->sort_result(dev->sort, order, st->store.nrows)) != GPUOPS_OK)
		return rc;
	dev->backend->sort_stats(dev->sort, &st->stats);
	return GPUOPS_OK;
}

/* Sorts everything already in the store on the CPU backend. */
static void
SortStoredOnCpu(GpuSortState *st, uint32 *order)
{
	GpuopsStatus rc = DeviceBegin(st, gpuops_cpu_backend(), false);

	for (int b = 0; rc == GPUOPS_OK && b < st->store.nbatches; b++)
		rc = DeviceStageBatch(st, st->store.batches[b]);
	if (rc == GPUOPS_OK)
		rc = DeviceFinish(st, order);
	if (rc != GPUOPS_OK)
		GpuopsDeviceFailed(GPUSORT_NAME, rc, false);	/* raises */
}

/* Emission order: NULL keys apart, in input order, first or last. */
static void
BuildEmissionOrder(GpuSortState *st, uint32 *sorted)
{
	GpuopsRowStore *store = &st->store;
	uint64		n = store->nrows;
	uint64		nnull = 0,
				out = 0;
	bool		any_null = false;

	for (int b = 0; b < store->nbatches; b++)
		any_null |= store->batches[b]->nulls[st->key_col] != NULL;
	if (!any_null)
	{
		st->order = sorted;
		st->norder = n;
		return;
	}
	st->order = (uint32 *) MemoryContextAllocHuge(store->cxt, Max(n, 1) * sizeof(uint32));
	for (uint64 r = 0; r < n; r++)
		nnull += GpuopsBatchIsNull(store->batches[r >> GPUOPS_BATCH_SHIFT], st->key_col,
								   (uint32) (r & (GPUOPS_BATCH_ROWS - 1)));
	if (st->nulls_first)
		for (uint64 r = 0; r < n; r++)
			if (GpuopsBatchIsNull(store->batches[r >> GPUOPS_BATCH_SHIFT], st->key_col,
								  (uint32) (r & (GPUOPS_BATCH_ROWS - 1))))
				st->order[out++] = (uint32) r;
	for (uint64 i = 0; i < n; i++)
	{
		uint32		r = sorted[i];

		if (!GpuopsBatchIsNull(store->batches[r >> GPUOPS_BATCH_SHIFT], st->key_col,
							   r & (GPUOPS_BATCH_ROWS - 1)))
			st->order[out++] = r;
	}
	if (!st->nulls_first)
		for (uint64 r = 0; r < n; r++)
			if (GpuopsBatchIsNull(store->batches[r >> GPUOPS_BATCH_SHIFT], st->key_col,
								  (uint32) (r & (GPUOPS_BATCH_ROWS - 1))))
				st->order[out++] = (uint32) r;
	Assert(out == n);
	(void) nnull;
	pfree(sorted);
	st->norder = n;
}

static void
GpuSortExecute(GpuSortState *st)
{
	GpuopsStatus rc;
	bool		healthy;
	bool		more = true;
	uint32	   *sorted;
	instr_time	t0,
				t1;

	INSTR_TIME_SET_CURRENT(t0);
	rc = DeviceBegin(st, GpuopsPrimaryBackend(), true);
	healthy = (rc == GPUOPS_OK);
	if (!healthy)
	{
		GpuopsDeviceFailed(GPUSORT_NAME, rc, true);
		st->fallback = pstrdup(gpuops_last_error());
		DeviceRelease(st->dev);
	}
	while (more)
	{
		GpuopsBatch *batch = GpuopsRowStoreOpenBatch(&st->store);

		more = st->source->fill(st->source, &st->store, batch);
		if (healthy && batch->nrows > 0 && (batch->nrows == GPUOPS_BATCH_ROWS || !more))
		{
			rc = DeviceStageBatch(st, batch);
			if (rc != GPUOPS_OK)
			{
				GpuopsDeviceFailed(GPUSORT_NAME, rc, true);
				st->fallback = pstrdup(gpuops_last_error());
				DeviceRelease(st->dev);
				healthy = false;
			}
		}
		CHECK_FOR_INTERRUPTS();
	}
	if (st->store.nrows > UINT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("gpuops: GpuSort cannot sort more than %u rows", UINT32_MAX)));
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	st->staging_ms += INSTR_TIME_GET_MILLISEC(t1);

	sorted = (uint32 *) MemoryContextAllocHuge(st->store.cxt,
											   Max(st->store.nrows, 1) * sizeof(uint32));
	if (healthy)
	{
		rc = DeviceFinish(st, sorted);
		if (rc != GPUOPS_OK)
		{
			GpuopsDeviceFailed(GPUSORT_NAME, rc, true);
			st->fallback = pstrdup(gpuops_last_error());
			healthy = false;
		}
	}
	if (!healthy)
		SortStoredOnCpu(st, sorted);
	st->backend_name = st->dev->backend->name;
	DeviceRelease(st->dev);		/* free device memory before emitting */
	BuildEmissionOrder(st, sorted);
	st->host_memory = Max(st->host_memory, GpuopsRowStoreMemory(&st->store));
	/* rows go out in order: lay the columns out in that order first */
	GpuopsRowStorePermute(&st->store, st->order, st->norder);
	pfree(st->order);
	st->order = NULL;
	st->runs++;
	st->sorted = true;
	st->pos = 0;
	st->eof = false;
}

static TupleTableSlot *
GpuSortNext(ScanState *ss)
{
	GpuSortState *st = (GpuSortState *) ss;
	TupleTableSlot *slot = ss->ss_ScanTupleSlot;
	uint64		row;

	if (!st->sorted)
		GpuSortExecute(st);
	if (ScanDirectionIsForward(ss->ps.state->es_direction))
	{
		if (st->pos >= st->norder)
		{
			st->eof = true;
			return ExecClearTuple(slot);
		}
		row = st->pos++;
	}
	else
	{
		/* as tuplesort: after EOF the last row, else the one before the last returned */
		if (st->pos == 0)
			return ExecClearTuple(slot);
		if (st->eof)
			st->eof = false;
		else if (--st->pos == 0)
			return ExecClearTuple(slot);
		row = st->pos - 1;
	}
	GpuopsRowStoreFetchOutput(&st->store, row, slot);
	return slot;
}

static bool
GpuSortRecheck(ScanState *ss, TupleTableSlot *slot)
{
	return true;
}

static Node *
CreateGpuSortStateImpl(CustomScan *cscan)
{
	GpuSortState *st = (GpuSortState *) palloc0(sizeof(GpuSortState));
	List	   *priv = cscan->custom_private;

	NodeSetTag(st, T_CustomScanState);
	st->css.methods = &gpu_sort_exec_methods;
	st->css.flags = cscan->flags;
#if PG_VERSION_NUM >= 160000
	st->css.slotOps = &TTSOpsVirtual;	/* PostgreSQL 15 always uses a virtual slot */
#endif
	st->key_col = list_nth_int(priv, GPUSORT_KEY_COLUMN);
	st->key_type = (GpuopsKeyType) list_nth_int(priv, GPUSORT_KEY_TYPE);
	st->key_width = st->key_type == GPUOPS_KEY_INT4 ? 4 : 8;
	st->descending = list_nth_int(priv, GPUSORT_DESCENDING) != 0;
	st->nulls_first = list_nth_int(priv, GPUSORT_NULLS_FIRST) != 0;
	return (Node *) st;
}

static void
BeginGpuSortImpl(CustomScanState *node, EState *estate, int eflags)
{
	GpuSortState *st = (GpuSortState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	PlanState  *child;

	/* the store holds every row: the child never needs to go backward */
	child = ExecInitNode((Plan *) linitial(cscan->custom_plans), estate,
						 eflags & ~(EXEC_FLAG_REWIND | EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK));
	node->custom_ps = list_make1(child);
	st->source = GpuopsChildPlanSource(child);
	GpuopsRowStoreInit(&st->store, node->ss.ss_ScanTupleSlot->tts_tupleDescriptor,
					   estate->es_query_cxt, "GpuSort row store");
	st->dev = (GpuSortDevice *) MemoryContextAllocZero(estate->es_query_cxt,
													   sizeof(GpuSortDevice));
	st->dev->cb.func = DeviceRelease;
	st->dev->cb.arg = st->dev;
	MemoryContextRegisterResetCallback(estate->es_query_cxt, &st->dev->cb);
}

static TupleTableSlot *
ExecGpuSortImpl(CustomScanState *node)
{
	return ExecScan(&node->ss, GpuSortNext, GpuSortRecheck);
}

static void
EndGpuSortImpl(CustomScanState *node)
{
	GpuSortState *st = (GpuSortState *) node;

	DeviceRelease(st->dev);
	ExecEndNode((PlanState *) linitial(node->custom_ps));
	GpuopsRowStoreFree(&st->store);
}

static void
ReScanGpuSortImpl(CustomScanState *node)
{
	GpuSortState *st = (GpuSortState *) node;
	PlanState  *child = (PlanState *) linitial(node->custom_ps);

	if (node->ss.ps.chgParam != NULL)
		UpdateChangedParamSet(child, node->ss.ps.chgParam);
	if (!st->sorted)
		return;
	if (child->chgParam == NULL)
	{
		/* same input: replay the sorted rows */
		st->pos = 0;
		st->eof = false;
		return;
	}
	/* the input changes with the new parameters: sort again */
	DeviceRelease(st->dev);
	GpuopsRowStoreReset(&st->store);
	st->source->rescan(st->source);
	st->order = NULL;
	st->norder = 0;
	st->sorted = false;
}

static void
ExplainGpuSortImpl(CustomScanState *node, List *ancestors, ExplainState *es)
{
	GpuSortState *st = (GpuSortState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	TargetEntry *tle = (TargetEntry *) list_nth(cscan->custom_scan_tlist, st->key_col);
	List	   *context;
	StringInfoData key;

	context = set_deparse_context_plan(es->deparse_cxt, node->ss.ps.plan, ancestors);
	initStringInfo(&key);
	appendStringInfoString(&key, deparse_expression((Node *) tle->expr, context,
													list_length(es->rtable) > 1 || es->verbose,
													false));
	if (st->descending)
		appendStringInfoString(&key, " DESC");
	if (st->nulls_first && !st->descending)
		appendStringInfoString(&key, " NULLS FIRST");
	else if (!st->nulls_first && st->descending)
		appendStringInfoString(&key, " NULLS LAST");
	ExplainPropertyList("Sort Key", list_make1(key.data), es);

	if (es->analyze && st->runs > 0)
		GpuopsExplainDeviceRun(es, st->backend_name, st->fallback, &st->stats,
							   st->staging_ms, st->host_memory);
}

/* The boundary: every callback PostgreSQL calls runs through GpuopsGuard. */
static Node *
CreateGpuSortState(CustomScan *cscan)
{
	return GpuopsGuard("CreateCustomScanState", CreateGpuSortStateImpl, cscan);
}

static void
BeginGpuSort(CustomScanState *node, EState *estate, int eflags)
{
	GpuopsGuard("BeginCustomScan", BeginGpuSortImpl, node, estate, eflags);
}

static TupleTableSlot *
ExecGpuSort(CustomScanState *node)
{
	return GpuopsGuard("ExecCustomScan", ExecGpuSortImpl, node);
}

static void
EndGpuSort(CustomScanState *node)
{
	GpuopsGuard("EndCustomScan", EndGpuSortImpl, node);
}

static void
ReScanGpuSort(CustomScanState *node)
{
	GpuopsGuard("ReScanCustomScan", ReScanGpuSortImpl, node);
}

static void
ExplainGpuSort(CustomScanState *node, List *ancestors, ExplainState *es)
{
	GpuopsGuard("ExplainCustomScan", ExplainGpuSortImpl, node, ancestors, es);
}

const CustomExecMethods gpu_sort_exec_methods = {
	GPUSORT_NAME,
	BeginGpuSort,
	ExecGpuSort,
	EndGpuSort,
	ReScanGpuSort,
	NULL,						/* MarkPosCustomScan */
	NULL,						/* RestrPosCustomScan */
	NULL,						/* EstimateDSMCustomScan */
	NULL,						/* InitializeDSMCustomScan */
	NULL,						/* ReInitializeDSMCustomScan */
	NULL,						/* InitializeWorkerCustomScan */
	NULL,						/* ShutdownCustomScan */
	ExplainGpuSort,
};

const CustomScanMethods gpu_sort_scan_methods = {
	GPUSORT_NAME,
	CreateGpuSortState,
};

void
GpuSortRegister(void)
{
	RegisterCustomScanMethods(&gpu_sort_scan_methods);
}
