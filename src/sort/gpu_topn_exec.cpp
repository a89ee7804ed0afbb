/*
 * gpu_topn_exec.cpp
 *    GpuTopN execution (gpu_topn.h).  The first call reads the keys and
 *    TIDs of every visible row of the table (parallel workers walking the
 *    pages where the plan has them, else the leader alone; through the
 *    heap AM's slots where the page reader cannot take the scan) into the
 *    top-N backend, which keeps the bound first; then each call fetches the
 *    next of them by TID under the query's snapshot, and ExecScan projects.
 *    A failed device call falls back to the CPU backend, which reads the
 *    table again, alone.
 */
extern "C" {
#include "postgres.h"

#include "access/tableam.h"
#include "executor/executor.h"
#include "nodes/extensible.h"
#include "utils/memutils.h"
#include "utils/ruleutils.h"
#include "utils/snapmgr.h"
#include "pg_compat.h"
}

#include "boundary.h"
#include "device.h"
#include "device_session.h"
#include "explain_device.h"
#include "gpu_topn.h"
#include "guarded_scan.h"
#include "guc.h"
#include "node.h"
#include "query_parallel.h"
#include "query_parallel_fetch.h"
#include "query_reader.h"

/* rows a slot-by-slot batch holds (the heap AM's path) */
#define GPUTOPN_SLOT_BATCH 8192
/* the rows of a worker's slot at most (ParallelBegin says why) */
#define GPUTOPN_SLOT_ROWS (256 * 1024)

typedef DeviceSession<GpuopsTopnBackend, GpuopsTopn, &GpuopsTopnBackend::topn_end> GpuTopNDevice;

typedef struct GpuTopNState : GpuopsNode
{
	GpuTopNPlan plan;
	int ncols; /* the keys, then the TID */
	QueryReadColumn cols[GPUOPS_TOPN_MAX_KEYS + 1];
	GpuTopNDevice *dev;
	TableScanDesc scan;
	MemoryContext run_cxt; /* readers, workers and the TIDs: one run */
	QueryReader *reader;   /* the leader's (its own share beside workers) */
	QueryParallel *par;
	bool own_done;
	bool by_slots; /* the heap AM's slots: the page reader cannot take the scan */
	/*
	 * the rows fetched by TID: the table's own slot type, whose values the
	 * scan tuple slot points at (it is virtual: PostgreSQL 15's custom
	 * scans have no other, and the projection's steps are compiled for
	 * its type)
	 */
	TupleTableSlot *fetch_slot;
	/* a row a worker fetched (query_parallel.h's fetch phase): its tuple in shared memory */
	TupleTableSlot *shared_slot;
	HeapTupleData shared_tuple;
	bool workers_read_counted; /* rstats has the workers' reading */
	/* the result: TIDs in order */
	bool done;
	uint64 *tids;
	uint64 ntids;
	uint64 next;
	/* EXPLAIN ANALYZE */
	int workers_launched;
	GpuopsTopnStats stats;
	QueryReaderStats rstats;
	double start_ms;  /* the readers and workers started */
	double begin_ms;  /* the backend's begin */
	double read_ms;	  /* the leader's loop: reading and adding */
	double end_ms;	  /* the readers and workers ended */
	double finish_ms; /* the backend's finish: the TIDs in order */
	double fetch_ms;  /* the rows fetched by TID */
	uint64 fetched_by_workers;
} GpuTopNState;

extern const CustomExecMethods gpu_topn_exec_methods;

void
GpuTopNPlanFields(PlanFields &f, GpuTopNPlan *plan)
{
	f.field(&plan->nkeys);
	if (plan->nkeys < 1 || plan->nkeys > GPUOPS_TOPN_MAX_KEYS)
		elog(ERROR, "gpuops: malformed %s plan: %d keys", GPUTOPN_NAME, plan->nkeys);
	for (int k = 0; k < plan->nkeys; k++)
	{
		f.field(&plan->attnums[k]);
		f.field(&plan->forms[k]);
		f.field(&plan->descending[k]);
		f.field(&plan->nulls_first[k]);
	}
	f.field(&plan->bound);
	f.field(&plan->nworkers);
	if (plan->bound < 1 || plan->bound > GPUTOPN_MAX_BOUND)
		elog(ERROR, "gpuops: malformed %s plan: bound %d", GPUTOPN_NAME, plan->bound);
	f.done();
}

static void
FillSpec(const GpuTopNState *st, GpuopsTopnSpec *spec)
{
	memset(spec, 0, sizeof(*spec));
	spec->nkeys = st->plan.nkeys;
	for (int k = 0; k < st->plan.nkeys; k++)
	{
		spec->keys[k].kind = st->plan.forms[k] == QCOL_INT ? GPUOPS_KEY_INT8 : GPUOPS_KEY_FLOAT8;
		spec->keys[k].descending = st->plan.descending[k];
		spec->keys[k].nulls_first = st->plan.nulls_first[k];
	}
	spec->bound = (uint64) st->plan.bound;
}

/* A reader batch (the keys' columns, then the TIDs) as the backend's. */
static void
ToTopnBatch(const GpuTopNState *st, const GpuopsQueryBatch *b, GpuopsTopnBatch *t)
{
	memset(t, 0, sizeof(*t));
	t->nrows = b->nrows;
	for (int k = 0; k < st->plan.nkeys; k++)
	{
		t->words[k] = b->cols.words[k];
		t->nulls[k] = b->cols.nulls[k];
	}
	t->payload = b->cols.words[st->plan.nkeys];
}

/* The reader's word of a key value (query_deform.cpp's, from a Datum). */
static uint64
KeyWord(const GpuTopNState *st, int k, Datum d)
{
	Form_pg_attribute att = TupleDescAttr(RelationGetDescr(st->css.ss.ss_currentRelation),
										  st->plan.attnums[k] - 1);
	double v;
	uint64 w;

	switch (st->plan.forms[k])
	{
		case QCOL_FLOAT4:
			v = (double) DatumGetFloat4(d);
			memcpy(&w, &v, sizeof(w));
			return w;
		case QCOL_FLOAT8:
			v = DatumGetFloat8(d);
			memcpy(&w, &v, sizeof(w));
			return w;
		default:
			switch (att->attlen)
			{
				case 1:
					return (uint64) (int64) DatumGetChar(d);
				case 2:
					return (uint64) (int64) DatumGetInt16(d);
				case 4:
					return (uint64) (int64) DatumGetInt32(d);
				default:
					return (uint64) DatumGetInt64(d);
			}
	}
}

/* Rows per batch: gpuops.batch_size worth of the keys' and TIDs' words, a multiple of 8. */
static uint32
BatchRows(const GpuTopNState *st)
{
	double rows = (double) ((size_t) gpuops_batch_size_mb << 20) / (9.0 * st->ncols);

	rows = Max(Min(rows, 4.0 * 1024 * 1024), 1024.0);
	return (uint32) rows & ~7u;
}

/*
 * The bytes of a row on the table's pages (the workers' fetch phase sizes
 * its room by it), or 0: no fetch phase, the bound is too small for it
 * (fewer than two of its chunks, QueryParallelFetchBegin).
 */
static uint32
FetchRowBytes(GpuTopNState *st)
{
	Relation rel = st->css.ss.ss_currentRelation;
	double tuples = rel->rd_rel->reltuples;
	double pages = (double) RelationGetNumberOfBlocks(rel);

	if (st->plan.bound < 2 * QF_CHUNK_ROWS)
		return 0;
	/* never analyzed: a guess; a row that does not fit is fetched by the leader */
	if (tuples <= 0 || pages <= 0)
		return 256;
	return (uint32) Min(Max(pages * BLCKSZ / tuples, 32.0), 8192.0);
}

/* Starts the run's workers when the plan has them and the executor is in parallel mode. */
static void
ParallelBegin(GpuTopNState *st)
{
	EState *estate = st->css.ss.ps.state;
	int nworkers = st->plan.nworkers;
	double reltuples = st->css.ss.ss_currentRelation->rd_rel->reltuples;
	uint32 slot_rows = BatchRows(st);
	MemoryContext old;

	st->workers_launched = 0;
	if (nworkers <= 0 || !estate->es_use_parallel_mode || !QueryParallelPossible() ||
		!IsMVCCSnapshot(estate->es_snapshot))
		return;
	/*
	 * Slots of GPUTOPN_SLOT_ROWS at most: the CUDA engine registers them
	 * with the driver each run (new shared memory: faulted in and pinned,
	 * about 0.45 ms a MB on the H200, 70 ms for ten slots of 16 MB), and
	 * batches of that size already keep each add's fixed cost small.
	 */
	slot_rows = Min(slot_rows, (uint32) GPUTOPN_SLOT_ROWS);
	/* every process gets some of a small table */
	if (reltuples > 0)
		slot_rows = (uint32) Min((double) slot_rows,
								 Max(1024.0, reltuples / (2.0 * (nworkers + 1))));
	slot_rows = (slot_rows + 7) & ~7u;
	old = MemoryContextSwitchTo(st->run_cxt);
	st->par = QueryParallelBegin(st->css.ss.ss_currentRelation, estate->es_snapshot, st->cols,
								 st->ncols, nworkers, slot_rows, 0, false,
								 gpuops_reader_threads > 0
									 ? Max(gpuops_reader_threads / (nworkers + 1), 1)
									 : 0,
								 NULL, FetchRowBytes(st));
	/* the leader's own batches are small: it ships the workers' first */
	st->reader = QueryReaderBegin(QueryParallelLeaderScan(st->par), st->cols, st->ncols, 0,
								  Max(slot_rows / 4, 1024u) & ~7u, st->run_cxt);
	MemoryContextSwitchTo(old);
	st->workers_launched = QueryParallelLaunched(st->par);
	st->own_done = false;
}

/* Adds a reader's figures to the run's (EXPLAIN's Heap Pages, Walk Time). */
static void
AddReadStats(GpuTopNState *st, const QueryReaderStats *r)
{
	st->rstats.pages += r->pages;
	st->rstats.rows += r->rows;
	st->rstats.walk_ms += r->walk_ms;
}

/*
 * The read is over: ends the leader's reader and adds its reading and the
 * workers' to rstats; the workers stay for the fetch phase.
 */
static void
ReadDone(GpuTopNState *st)
{
	QueryReaderStats r;

	if (st->reader != NULL)
	{
		QueryReaderStatsGet(st->reader, &r);
		AddReadStats(st, &r);
		QueryReaderEnd(st->reader);
		st->reader = NULL;
	}
	if (st->par != NULL && !st->workers_read_counted)
	{
		QueryParallelReadStats(st->par, &r);
		AddReadStats(st, &r);
		st->workers_read_counted = true;
	}
}

/* Ends the run's workers (after their read, or their fetch). */
static void
WorkersEnd(GpuTopNState *st)
{
	if (st->par != NULL)
	{
		QueryReaderStats w;

		QueryParallelEnd(st->par, &w);
		st->par = NULL;
	}
}

/* Ends the run's readers and workers, their reading in rstats. */
static void
ReadersEnd(GpuTopNState *st)
{
	ReadDone(st);
	WorkersEnd(st);
}

/* Every row through the heap AM's slots (a scan the page reader cannot take). */
static GpuopsStatus
AddBySlots(GpuTopNState *st, const GpuopsTopnBackend *backend)
{
	TupleTableSlot *slot = table_slot_create(st->css.ss.ss_currentRelation, NULL);
	int nk = st->plan.nkeys;
	uint64 *words = (uint64 *) palloc(sizeof(uint64) * GPUTOPN_SLOT_BATCH * (nk + 1));
	uint8 *nulls = (uint8 *) palloc(GPUTOPN_SLOT_BATCH * nk);
	GpuopsTopnBatch b;
	GpuopsStatus rc = GPUOPS_OK;
	uint32 n = 0;
	bool more = true;

	memset(&b, 0, sizeof(b));
	for (int k = 0; k < nk; k++)
	{
		b.words[k] = words + (Size) k * GPUTOPN_SLOT_BATCH;
		b.nulls[k] = nulls + (Size) k * GPUTOPN_SLOT_BATCH;
	}
	b.payload = words + (Size) nk * GPUTOPN_SLOT_BATCH;
	while (more && rc == GPUOPS_OK)
	{
		CHECK_FOR_INTERRUPTS();
		more = table_scan_getnextslot(st->scan, ForwardScanDirection, slot);
		if (more)
		{
			for (int k = 0; k < nk; k++)
			{
				bool isnull;
				Datum d = slot_getattr(slot, st->plan.attnums[k], &isnull);

				nulls[(Size) k * GPUTOPN_SLOT_BATCH + n] = isnull;
				words[(Size) k * GPUTOPN_SLOT_BATCH + n] = isnull ? 0 : KeyWord(st, k, d);
			}
			words[(Size) nk * GPUTOPN_SLOT_BATCH + n] = QueryTidWord(
				ItemPointerGetBlockNumber(&slot->tts_tid),
				ItemPointerGetOffsetNumber(&slot->tts_tid));
			n++;
			st->rstats.rows++;
		}
		if (n == GPUTOPN_SLOT_BATCH || (!more && n > 0))
		{
			b.nrows = n;
			rc = backend->topn_add(st->dev->handle, &b);
			n = 0;
		}
	}
	ExecDropSingleTupleTableSlot(slot);
	pfree(words);
	pfree(nulls);
	return rc;
}

/* Every row through the page reader: the workers' batches and the leader's own. */
static GpuopsStatus
AddByPages(GpuTopNState *st, const GpuopsTopnBackend *backend)
{
	GpuopsQueryBatch batch;
	GpuopsTopnBatch b;
	const char *why = NULL;
	bool from_worker;

	for (;;)
	{
		GpuopsStatus rc;
		bool got;

		CHECK_FOR_INTERRUPTS();
		if (st->par != NULL)
			got = QueryParallelNextBatch(st->par, st->reader, &st->own_done, &batch, &why,
										 &from_worker, NULL);
		else
			got = QueryReaderNext(st->reader, &batch, &why);
		if (!got)
			break;
		ToTopnBatch(st, &batch, &b);
		rc = backend->topn_add(st->dev->handle, &b);
		if (st->par != NULL)
			while (QueryParallelHeld(st->par) > 0)
				QueryParallelRelease(st->par);
		if (rc != GPUOPS_OK)
			return rc;
	}
	/* integers and floats always have words: a reason here is a bug */
	if (why != NULL)
		elog(ERROR, "gpuops: %s: the page reader stopped: %s", GPUTOPN_NAME, why);
	return GPUOPS_OK;
}

/* Milliseconds since start. */
static double
MsSince(instr_time start)
{
	instr_time now;

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, start);
	return INSTR_TIME_GET_MILLISEC(now);
}

/*
 * The readers: the run's workers, and the leader's own reader (over their
 * shared scan, or alone: no workers, or restart, a fallback reading the
 * table again).  start_ms: the time they took to start.
 */
static void
StartReaders(GpuTopNState *st, bool restart)
{
	instr_time start;

	INSTR_TIME_SET_CURRENT(start);
	st->workers_read_counted = false;
	if (!st->by_slots && st->reader == NULL && st->par == NULL)
	{
		if (!restart)
			ParallelBegin(st);
		if (st->par == NULL)
			st->reader = QueryReaderBegin(st->scan, st->cols, st->ncols, gpuops_reader_threads,
										  BatchRows(st), st->run_cxt);
	}
	st->start_ms = MsSince(start);
}

/*
 * One run on `backend`, its readers started (Run); with restart, the table
 * read again from its start, alone.
 */
static GpuopsStatus
RunOn(GpuTopNState *st, const GpuopsTopnBackend *backend, bool restart)
{
	GpuopsSettings settings = GpuopsNodeSettings<&GpuopsDevice::topn>(
		st, GpuopsSettingsFor(st->device_shared), backend);
	GpuopsTopnSpec spec;
	GpuopsStatus rc;
	const uint64 *payload;
	uint64 n = 0;
	instr_time start;

	st->dev->end();
	if (restart)
	{
		ReadersEnd(st);
		table_rescan(st->scan, NULL);
		StartReaders(st, true);
	}
	memset(&st->rstats, 0, sizeof(st->rstats));
	FillSpec(st, &spec);
	st->dev->backend = backend;
	st->backend_name = backend->name;
	INSTR_TIME_SET_CURRENT(start);
	rc = backend->topn_begin(&settings, &spec, &st->dev->handle);
	if (rc != GPUOPS_OK)
		return rc;
	/* the CUDA engine's context is up now: the workers' slots copy at pinned speed */
	if (st->par != NULL && backend == gpuops_cuda_device()->topn)
		(void) QueryParallelPin(st->par);
	st->begin_ms += MsSince(start);
	INSTR_TIME_SET_CURRENT(start);
	rc = st->by_slots ? AddBySlots(st, backend) : AddByPages(st, backend);
	st->read_ms = MsSince(start);
	INSTR_TIME_SET_CURRENT(start);
	/* the workers stay for the fetch, unless the read failed */
	if (rc == GPUOPS_OK)
		ReadDone(st);
	else
		ReadersEnd(st);
	st->end_ms = MsSince(start);
	if (rc != GPUOPS_OK)
		return rc;
	INSTR_TIME_SET_CURRENT(start);
	rc = backend->topn_finish(st->dev->handle, &n);
	if (rc == GPUOPS_OK)
		rc = backend->topn_result(st->dev->handle, &payload);
	if (rc != GPUOPS_OK)
		return rc;
	backend->topn_stats(st->dev->handle, &st->stats);
	st->tids = (uint64 *) MemoryContextAlloc(st->run_cxt, sizeof(uint64) * Max(n, 1));
	memcpy(st->tids, payload, sizeof(uint64) * n);
	st->ntids = n;
	/* the device's memory goes now: only the TIDs are needed */
	st->dev->end();
	/* the workers fetch the rows in parallel, or leave it to the leader */
	if (st->par != NULL && !QueryParallelFetchBegin(st->par, st->tids, n))
		WorkersEnd(st);
	st->finish_ms = MsSince(start);
	return GPUOPS_OK;
}

static void
Run(GpuTopNState *st)
{
	EState *estate = st->css.ss.ps.state;
	const GpuopsTopnBackend *backend;
	GpuopsStatus rc;
	instr_time start;

	GpuopsNodeStatDevice(st, st->rstats.rows, st->stats.copy_ms, st->stats.kernel_ms,
						 st->stats.bytes_from_device);
	memset(&st->stats, 0, sizeof(st->stats));
	st->done = true;
	st->ntids = st->next = 0;
	st->fetch_ms = 0;
	st->fetched_by_workers = 0;
	MemoryContextReset(st->run_cxt);
	st->tids = NULL;
	if (st->scan == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(estate->es_query_cxt);

		st->scan = table_beginscan(st->css.ss.ss_currentRelation, estate->es_snapshot, 0, NULL);
		MemoryContextSwitchTo(old);
	}
	else
		table_rescan(st->scan, NULL);
	st->by_slots = !QueryReaderUsable(st->scan);
	/*
	 * The workers first: they walk while the device is made ready (in a
	 * new session the prewarm's CUDA context and pinned pool, which
	 * GpuopsPrimaryDevice waits for: about 190 ms on the H200)
	 */
	StartReaders(st, false);
	INSTR_TIME_SET_CURRENT(start);
	backend = GpuopsPrimaryDevice()->topn;
	st->begin_ms = MsSince(start);
	rc = RunOn(st, backend, false);
	/* the CPU backend reads the table again, alone; its failure raises */
	if (rc != GPUOPS_OK)
		GpuopsNodeFallBack<&GpuopsDevice::topn>(st, rc, [st](const GpuopsTopnBackend *cpu) {
			return RunOn(st, cpu, true);
		});
}

/*
 * The scan tuple: from's values, not a copy (ExecCopySlot's would allocate
 * and copy each by-reference one).  They point into the page, which the
 * fetch slot keeps pinned until the next row is fetched, or into the
 * workers' shared memory, valid as long (QueryParallelFetchRow): as long
 * as a scan's tuple must stay valid (a SeqScan's is the same).
 */
static TupleTableSlot *
StoreValues(TupleTableSlot *slot, TupleTableSlot *from)
{
	slot_getallattrs(from);
	ExecClearTuple(slot);
	memcpy(slot->tts_values, from->tts_values, sizeof(Datum) * slot->tts_tupleDescriptor->natts);
	memcpy(slot->tts_isnull, from->tts_isnull, sizeof(bool) * slot->tts_tupleDescriptor->natts);
	return ExecStoreVirtualTuple(slot);
}

static TupleTableSlot *
GpuTopNNext(ScanState *ss)
{
	GpuTopNState *st = (GpuTopNState *) ss;
	TupleTableSlot *slot = ss->ss_ScanTupleSlot;
	HeapTupleHeader shared = NULL;
	ItemPointerData tid;
	uint32 len = 0;
	/* timed for EXPLAIN ANALYZE only: two clock reads a row otherwise wasted */
	bool timed = ss->ps.instrument != NULL;
	instr_time start, end;

	if (timed)
		INSTR_TIME_SET_CURRENT(start);
	if (st->next >= st->ntids)
	{
		/* the last row's values are no longer needed: its workers may go */
		WorkersEnd(st);
		slot = ExecClearTuple(slot);
	}
	else
	{
		if (st->par != NULL)
			shared = QueryParallelFetchRow(st->par, st->next, &len);
		QueryTidFromWord(st->tids[st->next++], &tid);
		if (shared != NULL)
		{
			st->shared_tuple.t_len = len;
			st->shared_tuple.t_self = tid;
			st->shared_tuple.t_tableOid = RelationGetRelid(ss->ss_currentRelation);
			st->shared_tuple.t_data = shared;
			ExecStoreHeapTuple(&st->shared_tuple, st->shared_slot, false);
			st->fetched_by_workers++;
			slot = StoreValues(slot, st->shared_slot);
		}
		else
		{
			/*
			 * Visible when it was read, under the same MVCC snapshot: it is
			 * visible now (a snapshot's rows are neither pruned nor removed)
			 */
			if (!table_tuple_fetch_row_version(ss->ss_currentRelation, &tid,
											   ss->ps.state->es_snapshot, st->fetch_slot))
				elog(ERROR, "gpuops: %s: the row at (%u,%u) is no longer visible", GPUTOPN_NAME,
					 ItemPointerGetBlockNumber(&tid), ItemPointerGetOffsetNumber(&tid));
			slot = StoreValues(slot, st->fetch_slot);
		}
	}
	if (timed)
	{
		INSTR_TIME_SET_CURRENT(end);
		INSTR_TIME_SUBTRACT(end, start);
		st->fetch_ms += INSTR_TIME_GET_MILLISEC(end);
	}
	return slot;
}

static TupleTableSlot *
ExecGpuTopNImpl(CustomScanState *node)
{
	GpuTopNState *st = (GpuTopNState *) node;

	GpuopsNodeCountRun(st);
	if (!st->done)
		Run(st);
	return GpuopsExecScan<GpuTopNNext>(node);
}

static Node *
CreateGpuTopNStateImpl(CustomScan *cscan)
{
	GpuTopNState *st = NewCustomScanState<GpuTopNState>(cscan, &gpu_topn_exec_methods);
	PlanFields fields(cscan->custom_private, GPUTOPN_NAME);

	GpuTopNPlanFields(fields, &st->plan);
	for (int k = 0; k < st->plan.nkeys; k++)
	{
		st->cols[k].attnum = (AttrNumber) st->plan.attnums[k];
		st->cols[k].form = (QueryColumnForm) st->plan.forms[k];
	}
	st->cols[st->plan.nkeys].attnum = SelfItemPointerAttributeNumber;
	st->cols[st->plan.nkeys].form = QCOL_TID;
	st->ncols = st->plan.nkeys + 1;
	return (Node *) st;
}

static void
BeginGpuTopNImpl(CustomScanState *node, EState *estate, int eflags)
{
	GpuTopNState *st = (GpuTopNState *) node;

	st->ninputs = 0;
	st->device_shared = IsInParallelMode();
	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		return;
	GpuopsNodePrewarm(st, eflags);
	st->fetch_slot = ExecAllocTableSlot(&estate->es_tupleTable,
										RelationGetDescr(node->ss.ss_currentRelation),
										table_slot_callbacks(node->ss.ss_currentRelation));
	st->shared_slot = ExecAllocTableSlot(&estate->es_tupleTable,
										 RelationGetDescr(node->ss.ss_currentRelation),
										 &TTSOpsHeapTuple);
	st->run_cxt = AllocSetContextCreate(estate->es_query_cxt, "GpuTopN run",
										ALLOCSET_DEFAULT_SIZES);
	st->dev = GpuopsNodeDevice<GpuTopNDevice>(st, estate);
}

static void
EndGpuTopNImpl(CustomScanState *node)
{
	GpuTopNState *st = (GpuTopNState *) node;

	if (st->dev != NULL)
	{
		st->dev->end();
		ReadersEnd(st);
	}
	if (st->scan != NULL)
		table_endscan(st->scan);
	st->scan = NULL;
	GpuopsNodeStatDevice(st, st->rstats.rows, st->stats.copy_ms, st->stats.kernel_ms,
						 st->stats.bytes_from_device);
	GpuopsNodeEnd(st);
}

static void
ReScanGpuTopNImpl(CustomScanState *node)
{
	GpuTopNState *st = (GpuTopNState *) node;

	st->stat.running = false; /* gpuops.stat: the next row asked for starts a run */
	/* no Params (no quals, column keys): the same rows again, fetched by the leader */
	WorkersEnd(st);
	st->next = 0;
}

/*
 * The executor is done with the node's rows (its parallel mode ends next:
 * ExecutePlan, or a Limit above at the end of its window): the workers,
 * which may still be waiting to fetch, go now, as a Gather's do.  Rows
 * asked for after a rescan are fetched by the leader.
 */
static void
ShutdownGpuTopNImpl(CustomScanState *node)
{
	WorkersEnd((GpuTopNState *) node);
}

static void
ExplainGpuTopNImpl(CustomScanState *node, List *ancestors, ExplainState *es)
{
	GpuTopNState *st = (GpuTopNState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List *context = set_deparse_context_plan(es->deparse_cxt, node->ss.ps.plan, ancestors);
	List *items = NIL;
	int k = 0;
	ListCell *lc;

	foreach (lc, cscan->custom_exprs)
	{
		char *key = deparse_expression((Node *) lfirst(lc), context, GpuopsExplainUsePrefix(es),
									   false);

		if (st->plan.descending[k])
			key = psprintf("%s DESC", key);
		if (st->plan.nulls_first[k] != st->plan.descending[k])
			key = psprintf("%s NULLS %s", key, st->plan.nulls_first[k] ? "FIRST" : "LAST");
		items = lappend(items, key);
		k++;
	}
	ExplainPropertyList("Sort Key", items, es);
	ExplainPropertyInteger("Bound", NULL, st->plan.bound, es);
	ExplainPropertyText("Read", "keys and TIDs from the pages, rows fetched by TID", es);
	if (st->plan.nworkers > 0)
		ExplainPropertyInteger("Workers Planned", NULL, st->plan.nworkers, es);
	if (!es->analyze || !st->done)
		return;
	if (st->plan.nworkers > 0)
		ExplainPropertyInteger("Workers Launched", NULL, st->workers_launched, es);
	GpuopsNodeExplainBackend(st, es);
	ExplainPropertyInteger("Rows Read", NULL, (int64) st->stats.rows, es);
	ExplainPropertyInteger("Rows Kept", NULL, (int64) st->stats.kept, es);
	ExplainPropertyInteger("Cuts", NULL, (int64) st->stats.cuts, es);
	ExplainPropertyInteger("Heap Pages", NULL, (int64) st->rstats.pages, es);
	if (st->by_slots)
		ExplainPropertyText("Read By", "the table's slots (the page reader cannot take the scan)",
							es);
	if (es->timing)
	{
		ExplainPropertyFloat("Start Time", "ms", st->start_ms, 3, es);
		ExplainPropertyFloat("Backend Begin Time", "ms", st->begin_ms, 3, es);
		ExplainPropertyFloat("Read Time", "ms", st->read_ms, 3, es);
		ExplainPropertyFloat("Readers End Time", "ms", st->end_ms, 3, es);
		ExplainPropertyFloat("Finish Time", "ms", st->finish_ms, 3, es);
		ExplainPropertyFloat("Walk Time", "ms", st->rstats.walk_ms, 3, es);
		ExplainPropertyFloat("Copy Time", "ms", st->stats.copy_ms, 3, es);
		ExplainPropertyFloat("Kernel Time", "ms", st->stats.kernel_ms, 3, es);
		ExplainPropertyFloat("Fetch Time", "ms", st->fetch_ms, 3, es);
	}
	if (st->workers_launched > 0)
		ExplainPropertyInteger("Rows Fetched By Workers", NULL, (int64) st->fetched_by_workers, es);
	ExplainPropertyInteger("Device Memory", "kB", (int64) (st->stats.device_bytes / 1024), es);
}

const CustomExecMethods gpu_topn_exec_methods = {
	GPUTOPN_NAME,
	GuardedBegin<BeginGpuTopNImpl>,
	GuardedExec<ExecGpuTopNImpl>,
	GuardedEnd<EndGpuTopNImpl>,
	GuardedReScan<ReScanGpuTopNImpl>,
	NULL, /* MarkPosCustomScan */
	NULL, /* RestrPosCustomScan */
	NULL, /* EstimateDSMCustomScan */
	NULL, /* InitializeDSMCustomScan */
	NULL, /* ReInitializeDSMCustomScan */
	NULL, /* InitializeWorkerCustomScan */
	GuardedShutdown<ShutdownGpuTopNImpl>,
	GuardedExplain<ExplainGpuTopNImpl>,
};

const CustomScanMethods gpu_topn_scan_methods = {
	GPUTOPN_NAME,
	GuardedCreateState<CreateGpuTopNStateImpl>,
};

void
GpuTopNRegister(void)
{
	RegisterCustomScanMethods(&gpu_topn_scan_methods);
}
