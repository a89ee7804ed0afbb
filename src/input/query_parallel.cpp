/*
 * query_parallel.cpp
 *    GpuQuery's parallel read (query_parallel.h): workers walk their share
 *    of the table into shared slots, the leader ships them.
 *
 * The dynamic shared memory holds three things: the shared state (the
 * columns to read, the slots' states under a spinlock, two condition
 * variables, the workers' figures and a stopping reason), the parallel
 * table scan (its block allocator and the serialized snapshot), and the
 * slots themselves, each one batch of columns laid out the same way in
 * every process; with a fetch phase also its ring of chunk slots
 * (query_parallel_fetch.h).  A slot goes FREE -> FILLING (a worker copies its
 * reader's batch in) -> FULL -> TAKEN (the leader hands it to the device)
 * -> FREE.  The leader waits on `filled` (a slot was filled, a worker
 * finished or stopped the read), a worker on `freed` (a slot was freed,
 * or the leader asked them to stop).
 *
 * No frame here holds an object with a destructor: ereport may leave any
 * of them (a cancel in a wait, a worker's error raised in the leader).
 */
extern "C" {
#include "postgres.h"

#include "access/parallel.h"
#include "access/relscan.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "storage/bufmgr.h"
#include "storage/condition_variable.h"
#include "storage/spin.h"
#include "utils/memutils.h"
#include "utils/wait_event.h"
}

#include "boundary.h"
#include "device.h"
#include "expr_eval.hpp"
#include "query_parallel.h"
#include "query_parallel_fetch.h"

#define QP_KEY_SHARED UINT64CONST(0x6770755100000001)
#define QP_KEY_PSCAN UINT64CONST(0x6770755100000002)
#define QP_KEY_SLOTS UINT64CONST(0x6770755100000003)
#define QP_KEY_FETCH UINT64CONST(0x6770755100000004)
#define QP_WHY_LEN 128
#define QP_POLL_MS 20 /* the leader's wait: how often it looks at the workers' status */

typedef enum QPSlotState
{
	QP_FREE = 0,
	QP_FILLING,
	QP_FULL,
	QP_TAKEN,
	QP_RETURNED, /* in place: shipped; its pages are still pinned by its owner */
	QP_UNPINNING /* in place: its owner drops their pins */
} QPSlotState;

typedef struct QPSlot
{
	QPSlotState state;
	int owner; /* in place: the worker (ParallelWorkerNumber) holding its pins */
	uint32 nrows;
	uint32 npages;	  /* the pages form: pages in the slot */
	uint32 null_mask; /* column c has NULLs (its null bytes were copied) */
} QPSlot;

typedef struct QPShared
{
	Oid relid;
	int ncols;
	QueryReadColumn cols[GPUOPS_QUERY_MAX_COLS];
	uint32 slot_rows;
	uint32 max_pages; /* > 0: slots hold pages (QueryPagesBuf), not words */
	bool in_place;	  /* ... left in shared buffers, pinned */
	int worker_threads;
	int nslots;
	Size slot_bytes;
	Size data_off[GPUOPS_QUERY_MAX_COLS]; /* words, or bytes16, within a slot */
	Size null_off[GPUOPS_QUERY_MAX_COLS];

	bool has_filter; /* the workers keep the rows filter passes */
	GpuopsExprProgram filter;
	bool has_fetch; /* the workers stay for the fetch phase (query_parallel_fetch.h) */

	slock_t mutex; /* everything below */
	ConditionVariable filled;
	ConditionVariable freed;
	int finished;		  /* workers that have ended (read to the end, or stopped) */
	bool stop;			  /* the leader wants no more batches */
	char why[QP_WHY_LEN]; /* a worker's reader stopped the read: why ("": it did not) */
	QueryReaderStats sum; /* the finished workers' reading, summed */
	QPSlot slots[FLEXIBLE_ARRAY_MEMBER];
} QPShared;

struct QueryParallel
{
	ParallelContext *pcxt; /* NULL once ended */
	QPShared *sh;
	char *slots;
	ParallelTableScanDesc pscan;
	Relation rel;
	TableScanDesc leader_scan;
	int launched;
	int held[2]; /* the slots the leader holds, oldest first */
	int nheld;
	int next; /* where the leader looks for a filled slot first */
	bool workers_gone;
	bool pinned;			  /* the slots are pinned for the CUDA engine */
	QueryPagesBuf held_pages; /* the pages form: the held slot's pages */
	QFShared *fetch_sh;		  /* the fetch phase's shared memory, or NULL */
	QueryFetch fetch;		  /* ... and the leader's view of it */
	bool fetching;			  /* ... begun */
	char why[QP_WHY_LEN];
};

/* A slot's layout for these columns and rows: its bytes; each column's offsets. */
static Size
SlotLayout(const QueryReadColumn *cols, int ncols, uint32 rows, Size *data_off, Size *null_off)
{
	Size off = 0;

	for (int c = 0; c < ncols; c++)
	{
		bool bytes = cols[c].form == QCOL_TEXT16 || cols[c].form == QCOL_BPCHAR16;

		data_off[c] = off;
		off += MAXALIGN((Size) rows * (bytes ? 16 : 8));
		null_off[c] = off;
		off += MAXALIGN((Size) rows);
	}
	return off;
}

static char *
SlotBase(char *slots, const QPShared *sh, int s)
{
	return slots + (Size) s * sh->slot_bytes;
}

bool
QueryParallelPossible(void)
{
	return IsInParallelMode() && !IsParallelWorker() && max_parallel_workers > 0;
}

int
QueryParallelSlots(int nworkers, bool pages_in_place)
{
	/*
	 * A slot per worker filling and two for the leader to ship; with
	 * pages read in place two per worker, so that it walks into one while
	 * the leader ships the other (the leader holds a slot over one more
	 * add, then the worker unpins it).  With one per worker the H100's
	 * trace (SSB SF 20 Q1.1) had each worker walking for 84-125 ms of the
	 * leader's 176 ms loop and waiting for a free slot the rest.  Such a
	 * slot is a page list and row index (QueryPagesRows: ~1 MB for 4096
	 * of SSB lineorder's pages); a slot of copied pages or of columns is
	 * tens of MB, so those stay one per worker.
	 */
	return (pages_in_place ? 2 : 1) * nworkers + 2;
}

QueryParallel *
QueryParallelBegin(Relation rel, Snapshot snapshot, const QueryReadColumn *cols, int ncols,
				   int nworkers, uint32 slot_rows, uint32 max_pages, bool in_place,
				   int worker_threads, const GpuopsExprProgram *filter, uint32 fetch_row_bytes)
{
	QueryParallel *qp = (QueryParallel *) palloc0(sizeof(QueryParallel));
	int nslots = QueryParallelSlots(nworkers, max_pages > 0 && in_place);
	Size data_off[GPUOPS_QUERY_MAX_COLS], null_off[GPUOPS_QUERY_MAX_COLS];
	Size slot_bytes = max_pages > 0 ? QueryPagesBufBytes(max_pages, slot_rows, in_place)
									: SlotLayout(cols, ncols, slot_rows, data_off, null_off);
	Size shared_bytes = add_size(offsetof(QPShared, slots), mul_size(sizeof(QPSlot), nslots));
	Size pscan_bytes = table_parallelscan_estimate(rel, snapshot);
	Size fetch_bytes = fetch_row_bytes > 0 ? QueryFetchShmemSize(nworkers, fetch_row_bytes) : 0;
	ParallelContext *pcxt;
	QPShared *sh;

	Assert(nworkers > 0 && ncols <= GPUOPS_QUERY_MAX_COLS);
	if (max_pages > 0 && filter != NULL)
		elog(ERROR, "gpuops: GpuQuery's parallel read: a filtered read of pages");
	pcxt = CreateParallelContext("gpuops", "gpuops_query_read_main", nworkers);
	shm_toc_estimate_chunk(&pcxt->estimator, shared_bytes);
	shm_toc_estimate_chunk(&pcxt->estimator, pscan_bytes);
	shm_toc_estimate_chunk(&pcxt->estimator, mul_size(slot_bytes, nslots));
	if (fetch_bytes > 0)
		shm_toc_estimate_chunk(&pcxt->estimator, fetch_bytes);
	shm_toc_estimate_keys(&pcxt->estimator, fetch_bytes > 0 ? 4 : 3);
	InitializeParallelDSM(pcxt);

	sh = (QPShared *) shm_toc_allocate(pcxt->toc, shared_bytes);
	memset(sh, 0, shared_bytes);
	sh->relid = RelationGetRelid(rel);
	sh->ncols = ncols;
	memcpy(sh->cols, cols, sizeof(QueryReadColumn) * ncols);
	sh->slot_rows = slot_rows;
	sh->max_pages = max_pages;
	sh->in_place = max_pages > 0 && in_place;
	sh->worker_threads = worker_threads;
	sh->has_filter = filter != NULL;
	if (filter != NULL)
		sh->filter = *filter;
	sh->nslots = nslots;
	for (int s = 0; s < nslots; s++)
		sh->slots[s].owner = -1;
	sh->slot_bytes = slot_bytes;
	memcpy(sh->data_off, data_off, sizeof(data_off));
	memcpy(sh->null_off, null_off, sizeof(null_off));
	SpinLockInit(&sh->mutex);
	ConditionVariableInit(&sh->filled);
	ConditionVariableInit(&sh->freed);
	shm_toc_insert(pcxt->toc, QP_KEY_SHARED, sh);

	qp->pscan = (ParallelTableScanDesc) shm_toc_allocate(pcxt->toc, pscan_bytes);
	table_parallelscan_initialize(rel, qp->pscan, snapshot);
	shm_toc_insert(pcxt->toc, QP_KEY_PSCAN, qp->pscan);
	qp->slots = (char *) shm_toc_allocate(pcxt->toc, mul_size(slot_bytes, nslots));
	shm_toc_insert(pcxt->toc, QP_KEY_SLOTS, qp->slots);
	if (fetch_bytes > 0)
	{
		qp->fetch_sh = QueryFetchShmemInit(shm_toc_allocate(pcxt->toc, fetch_bytes), nworkers,
										   fetch_row_bytes);
		shm_toc_insert(pcxt->toc, QP_KEY_FETCH, qp->fetch_sh);
		sh->has_fetch = true;
	}

	/* without dynamic shared memory none start, and the leader reads it all */
	LaunchParallelWorkers(pcxt);
	qp->pcxt = pcxt;
	qp->sh = sh;
	qp->rel = rel;
	qp->launched = pcxt->nworkers_launched;
	qp->nheld = 0;
	return qp;
}

TableScanDesc
QueryParallelLeaderScan(QueryParallel *qp)
{
	if (qp->leader_scan == NULL)
		qp->leader_scan = table_beginscan_parallel(qp->rel, qp->pscan);
	return qp->leader_scan;
}

/* on_dsm_detach: before the segment is unmapped, also at an abort */
static void
UnpinSlots(dsm_segment *, Datum arg)
{
	GpuopsUnpinHostMemory(DatumGetPointer(arg));
}

bool
QueryParallelPin(QueryParallel *qp)
{
	QPShared *sh = qp->sh;

	/* no segment (no dynamic shared memory: the leader reads alone), or no worker */
	if (qp->pinned || qp->pcxt == NULL || qp->pcxt->seg == NULL || qp->launched == 0)
		return qp->pinned;
	if (!GpuopsPinHostMemory(qp->slots, mul_size(sh->slot_bytes, sh->nslots)))
		return false;
	on_dsm_detach(qp->pcxt->seg, UnpinSlots, PointerGetDatum(qp->slots));
	qp->pinned = true;
	return true;
}

int
QueryParallelLaunched(const QueryParallel *qp)
{
	return qp->launched;
}

const char *
QueryParallelEscape(const QueryParallel *qp)
{
	return qp->why[0] != '\0' ? qp->why : NULL;
}

/* The batch in slot s, as the device takes it. */
static void
SlotBatch(QueryParallel *qp, int s, GpuopsQueryBatch *batch)
{
	const QPShared *sh = qp->sh;
	const QPSlot *slot = &sh->slots[s];
	char *base = SlotBase(qp->slots, sh, s);

	memset(batch, 0, sizeof(*batch));
	batch->nrows = slot->nrows;
	batch->cols.ncols = sh->ncols;
	batch->cols.nrows = slot->nrows;
	if (sh->max_pages > 0)
	{
		QueryPagesBufInit(&qp->held_pages, base, sh->max_pages, sh->slot_rows, sh->in_place);
		QueryPagesBufView(&qp->held_pages, slot->npages, qp->rel);
		batch->pages = &qp->held_pages.view;
		return;
	}
	for (int c = 0; c < sh->ncols; c++)
	{
		uint64 *data = (uint64 *) (base + sh->data_off[c]);

		if (sh->cols[c].form == QCOL_TEXT16 || sh->cols[c].form == QCOL_BPCHAR16)
			batch->bytes16[c] = data;
		else
			batch->cols.words[c] = data;
		batch->cols.nulls[c] = (slot->null_mask & (1u << c)) ? (uint8 *) (base + sh->null_off[c])
															 : NULL;
	}
}

/*
 * Whether every launched worker has stopped running (each one that ended
 * cleanly counted itself in `finished` first; one that failed to start, or
 * failed, did not).
 */
static bool
WorkersStopped(QueryParallel *qp)
{
	for (int i = 0; i < qp->launched; i++)
	{
		pid_t pid;

		if (GetBackgroundWorkerPid(qp->pcxt->worker[i].bgwhandle, &pid) != BGWH_STOPPED)
			return false;
	}
	return true;
}

QueryParallelNextResult
QueryParallelNext(QueryParallel *qp, GpuopsQueryBatch *batch, bool wait)
{
	QPShared *sh = qp->sh;
	QueryParallelNextResult result = QP_NONE_NOW;
	int polls = 0;

	if (qp->nheld >= 2)
		elog(ERROR, "gpuops: GpuQuery's parallel read: two batches not released");
	if (qp->pcxt == NULL)
		return QP_DONE;
	for (;;)
	{
		int found = -1, finished;

		SpinLockAcquire(&sh->mutex);
		for (int k = 0; k < sh->nslots && found < 0; k++)
		{
			int s = (qp->next + k) % sh->nslots;

			if (sh->slots[s].state == QP_FULL)
			{
				sh->slots[s].state = QP_TAKEN;
				found = s;
			}
		}
		finished = sh->finished;
		if (found < 0 && sh->why[0] != '\0')
			strlcpy(qp->why, sh->why, sizeof(qp->why));
		SpinLockRelease(&sh->mutex);
		if (found >= 0)
		{
			qp->held[qp->nheld++] = found;
			qp->next = (found + 1) % sh->nslots;
			SlotBatch(qp, found, batch);
			result = QP_BATCH;
			break;
		}
		if (qp->why[0] != '\0')
		{
			result = QP_ESCAPE;
			break;
		}
		if (finished >= qp->launched || qp->workers_gone)
		{
			result = QP_DONE;
			break;
		}
		if (!wait)
			break;
		/*
		 * A worker that failed raised its error here (the wait checks for
		 * interrupts, which handles the workers' messages); one that never
		 * started claimed no page.  Once every worker has stopped,
		 * PostgreSQL says which it was, and the rest is done.
		 */
		if (++polls % 5 == 0 && WorkersStopped(qp))
		{
			WaitForParallelWorkersToFinish(qp->pcxt);
			qp->workers_gone = true;
			continue;
		}
		ConditionVariableTimedSleep(&sh->filled, QP_POLL_MS, PG_WAIT_EXTENSION);
	}
	ConditionVariableCancelSleep();
	return result;
}

bool
QueryParallelNextBatch(QueryParallel *qp, QueryReader *leader_reader, bool *own_done,
					   GpuopsQueryBatch *batch, const char **why, bool *from_worker, bool *blocked)
{
	*why = NULL;
	*from_worker = false;
	if (blocked != NULL)
		*blocked = false;
	for (;;)
	{
		switch (QueryParallelNext(qp, batch, *own_done && blocked == NULL))
		{
			case QP_BATCH:
				*from_worker = true;
				return true;
			case QP_ESCAPE:
				*why = QueryParallelEscape(qp);
				return false;
			case QP_DONE:
				if (*own_done)
					return false;
				break;
			case QP_NONE_NOW:
				if (*own_done)
				{
					/* (only with blocked: else it waited) */
					*blocked = true;
					return false;
				}
				break;
		}
		if (QueryReaderNext(leader_reader, batch, why))
			return true;
		if (*why != NULL)
			return false;
		*own_done = true;
	}
}

int
QueryParallelHeld(const QueryParallel *qp)
{
	return qp->nheld;
}

void
QueryParallelRelease(QueryParallel *qp)
{
	QPShared *sh = qp->sh;

	if (qp->nheld == 0)
		return;
	SpinLockAcquire(&sh->mutex);
	sh->slots[qp->held[0]].state = sh->in_place ? QP_RETURNED : QP_FREE;
	SpinLockRelease(&sh->mutex);
	qp->held[0] = qp->held[1];
	qp->nheld--;
	/* in place, only its owner may free it: wake every worker */
	if (sh->in_place)
		ConditionVariableBroadcast(&sh->freed);
	else
		ConditionVariableSignal(&sh->freed);
}

void
QueryParallelEnd(QueryParallel *qp, QueryReaderStats *workers)
{
	QPShared *sh = qp->sh;

	memset(workers, 0, sizeof(*workers));
	if (qp->pcxt == NULL)
		return;
	SpinLockAcquire(&sh->mutex);
	sh->stop = true;
	SpinLockRelease(&sh->mutex);
	ConditionVariableBroadcast(&sh->freed);
	if (qp->fetch_sh != NULL)
		QueryFetchStop(qp->fetch_sh);
	WaitForParallelWorkersToFinish(qp->pcxt);
	*workers = sh->sum;
	if (qp->leader_scan != NULL)
		table_endscan(qp->leader_scan);
	qp->leader_scan = NULL;
	DestroyParallelContext(qp->pcxt);
	qp->pcxt = NULL;
	qp->nheld = 0;
	qp->fetch_sh = NULL;
	qp->fetching = false;
}

void
QueryParallelReadStats(QueryParallel *qp, QueryReaderStats *workers)
{
	memset(workers, 0, sizeof(*workers));
	if (qp->pcxt == NULL)
		return;
	SpinLockAcquire(&qp->sh->mutex);
	*workers = qp->sh->sum;
	SpinLockRelease(&qp->sh->mutex);
}

/* QueryFetchRow's workers_stopped */
static bool
FetchWorkersStopped(void *arg)
{
	return WorkersStopped((QueryParallel *) arg);
}

bool
QueryParallelFetchBegin(QueryParallel *qp, const uint64 *tids, uint64 ntids)
{
	/* fewer rows than two chunks: the workers' start would cost more than they save */
	if (qp->fetch_sh == NULL || qp->pcxt == NULL || qp->launched == 0 || qp->workers_gone ||
		qp->why[0] != '\0' || ntids < 2 * QF_CHUNK_ROWS)
		return false;
	QueryFetchStart(&qp->fetch, qp->fetch_sh, tids, ntids);
	qp->fetching = true;
	return true;
}

HeapTupleHeader
QueryParallelFetchRow(QueryParallel *qp, uint64 i, uint32 *len)
{
	if (!qp->fetching)
		return NULL;
	return QueryFetchRow(&qp->fetch, i, len, FetchWorkersStopped, qp);
}

/* ---- the workers ---- */

/*
 * In place: drops the pins of this worker's slots that the leader has
 * shipped (all of its slots when the leader stopped: it ships no more)
 * and frees them.  Returns how many of its slots are still waiting to be
 * shipped or being shipped.
 */
static int
UnpinReturned(QPShared *sh, char *slots)
{
	int mine[64], nmine = 0, waiting = 0;

	if (!sh->in_place)
		return 0;
	SpinLockAcquire(&sh->mutex);
	for (int s = 0; s < sh->nslots; s++)
	{
		QPSlot *slot = &sh->slots[s];

		if (slot->owner != ParallelWorkerNumber)
			continue;
		if ((slot->state == QP_RETURNED || (sh->stop && slot->state == QP_FULL)) &&
			nmine < (int) lengthof(mine))
		{
			slot->state = QP_UNPINNING;
			mine[nmine++] = s;
		}
		else if (slot->state == QP_FULL || slot->state == QP_TAKEN || slot->state == QP_RETURNED)
			waiting++; /* (returned ones beyond `mine`: the next call's) */
	}
	SpinLockRelease(&sh->mutex);
	for (int k = 0; k < nmine; k++)
	{
		QueryPagesBuf buf;

		QueryPagesBufInit(&buf, SlotBase(slots, sh, mine[k]), sh->max_pages, sh->slot_rows, true);
		QueryPagesUnpin(buf.index, sh->slots[mine[k]].npages);
	}
	if (nmine > 0)
	{
		SpinLockAcquire(&sh->mutex);
		for (int k = 0; k < nmine; k++)
		{
			sh->slots[mine[k]].state = QP_FREE;
			sh->slots[mine[k]].owner = -1;
		}
		SpinLockRelease(&sh->mutex);
		ConditionVariableBroadcast(&sh->freed);
	}
	return waiting;
}

/* A free slot, now the caller's (FILLING), or -1 when the leader asked to stop. */
static int
TakeFreeSlot(QPShared *sh, char *slots)
{
	int found = -1;

	ConditionVariablePrepareToSleep(&sh->freed);
	for (;;)
	{
		bool stop;

		(void) UnpinReturned(sh, slots);
		SpinLockAcquire(&sh->mutex);
		stop = sh->stop;
		for (int s = 0; s < sh->nslots && !stop && found < 0; s++)
			if (sh->slots[s].state == QP_FREE)
			{
				sh->slots[s].state = QP_FILLING;
				found = s;
			}
		SpinLockRelease(&sh->mutex);
		if (stop || found >= 0)
			break;
		ConditionVariableSleep(&sh->freed, PG_WAIT_EXTENSION);
	}
	ConditionVariableCancelSleep();
	return found;
}

/*
 * In place, at the worker's end: waits until the leader has shipped every
 * slot it filled (or stopped), dropping their pins, so that none is held
 * past the worker's transaction.
 */
static void
AwaitShipped(QPShared *sh, char *slots)
{
	if (!sh->in_place)
		return;
	ConditionVariablePrepareToSleep(&sh->freed);
	while (UnpinReturned(sh, slots) > 0)
		ConditionVariableSleep(&sh->freed, PG_WAIT_EXTENSION);
	ConditionVariableCancelSleep();
}

/* Copies the reader's batch into slot s and hands it to the leader. */
static void
FillSlot(QPShared *sh, char *slots, int s, const GpuopsQueryBatch *batch)
{
	char *base = SlotBase(slots, sh, s);
	uint32 mask = 0;

	for (int c = 0; c < sh->ncols; c++)
	{
		bool bytes = sh->cols[c].form == QCOL_TEXT16 || sh->cols[c].form == QCOL_BPCHAR16;

		if (bytes)
			memcpy(base + sh->data_off[c], batch->bytes16[c], (Size) batch->nrows * 16);
		else
			memcpy(base + sh->data_off[c], batch->cols.words[c], (Size) batch->nrows * 8);
		if (batch->cols.nulls[c] != NULL)
		{
			memcpy(base + sh->null_off[c], batch->cols.nulls[c], batch->nrows);
			mask |= 1u << c;
		}
	}
	SpinLockAcquire(&sh->mutex);
	sh->slots[s].nrows = batch->nrows;
	sh->slots[s].null_mask = mask;
	sh->slots[s].state = QP_FULL;
	SpinLockRelease(&sh->mutex);
	ConditionVariableSignal(&sh->filled);
}

/*
 * Copies the rows of the reader's batch that the filter passes into slot
 * s and hands it to the leader (or frees it: none passed).  Why it stops
 * (a row the filter cannot decide; the slot freed), or NULL.
 */
static const char *
FillSlotFiltered(QPShared *sh, char *slots, int s, const GpuopsQueryBatch *batch)
{
	const GpuopsExprProgram *f = &sh->filter;
	char *base = SlotBase(slots, sh, s);
	uint32 mask = 0;
	uint32 n = 0;
	const char *why = NULL;

	for (uint32 i = 0; i < batch->nrows; i++)
	{
		QueryBatchRow row = {batch, i};
		GpuopsExprResult res = gpuops::expr_eval(f->steps, f->nsteps, f->consts, f->const_null, row,
												 row);

		if (res == GPUOPS_EXPR_RECHECK)
		{
			why = "a row its quals' program cannot decide";
			break;
		}
		if (res != GPUOPS_EXPR_TRUE)
			continue;
		for (int c = 0; c < sh->ncols; c++)
		{
			uint64 *out = (uint64 *) (base + sh->data_off[c]);

			if (sh->cols[c].form == QCOL_TEXT16 || sh->cols[c].form == QCOL_BPCHAR16)
			{
				/* (a dimension's short text, for the leader's dictionary) */
				out[2 * n] = batch->bytes16[c][2 * (Size) i];
				out[2 * n + 1] = batch->bytes16[c][2 * (Size) i + 1];
			}
			else
				out[n] = batch->cols.words[c][i];
			if (batch->cols.nulls[c] != NULL)
			{
				((uint8 *) (base + sh->null_off[c]))[n] = batch->cols.nulls[c][i];
				mask |= 1u << c;
			}
		}
		n++;
	}
	SpinLockAcquire(&sh->mutex);
	sh->slots[s].nrows = n;
	sh->slots[s].null_mask = mask;
	sh->slots[s].state = why == NULL && n > 0 ? QP_FULL : QP_FREE;
	SpinLockRelease(&sh->mutex);
	ConditionVariableSignal(why == NULL && n > 0 ? &sh->filled : &sh->freed);
	return why;
}

static bool
StopAsked(QPShared *sh)
{
	bool stop;

	SpinLockAcquire(&sh->mutex);
	stop = sh->stop;
	SpinLockRelease(&sh->mutex);
	return stop;
}

/*
 * The pages form: each batch is read straight into a free slot (no copy
 * of the worker's own), until the table or the leader says stop.
 */
static void
ReadPages(QPShared *sh, char *slots, QueryReader *reader)
{
	while (!StopAsked(sh))
	{
		int s = TakeFreeSlot(sh, slots);
		QueryPagesBuf buf;
		uint32 n;

		if (s < 0)
			break;
		QueryPagesBufInit(&buf, SlotBase(slots, sh, s), sh->max_pages, sh->slot_rows, sh->in_place);
		n = QueryReaderNextPages(reader, &buf); /* (no rows: no page, no pin) */
		SpinLockAcquire(&sh->mutex);
		sh->slots[s].nrows = n;
		sh->slots[s].npages = buf.view.npages;
		sh->slots[s].owner = ParallelWorkerNumber;
		sh->slots[s].null_mask = 0;
		sh->slots[s].state = n > 0 ? QP_FULL : QP_FREE;
		SpinLockRelease(&sh->mutex);
		ConditionVariableSignal(n > 0 ? &sh->filled : &sh->freed);
		if (n == 0)
			break;
	}
}

static void
ReadMain(dsm_segment *, shm_toc *toc)
{
	QPShared *sh = (QPShared *) shm_toc_lookup(toc, QP_KEY_SHARED, false);
	ParallelTableScanDesc pscan = (ParallelTableScanDesc) shm_toc_lookup(toc, QP_KEY_PSCAN, false);
	char *slots = (char *) shm_toc_lookup(toc, QP_KEY_SLOTS, false);
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "GpuQuery worker reader",
											  ALLOCSET_DEFAULT_SIZES);
	Relation rel = table_open(sh->relid, AccessShareLock);
	TableScanDesc scan = table_beginscan_parallel(rel, pscan);
	QueryReader *reader = NULL;
	GpuopsQueryBatch batch;
	QueryReaderStats stats;
	const char *why = NULL;
	bool reader_done = false;

	if (!QueryReaderUsable(scan))
		why = "a scan the reader cannot take (snapshot, direction)";
	else
		reader = QueryReaderBegin(scan, sh->cols, sh->ncols, sh->worker_threads, sh->slot_rows,
								  cxt);
	if (reader != NULL && sh->max_pages > 0)
	{
		QueryReaderUsePages(reader, 0, 0, sh->in_place);
		ReadPages(sh, slots, reader);
		AwaitShipped(sh, slots);
		reader_done = true;
	}
	while (!reader_done && reader != NULL && !StopAsked(sh) &&
		   QueryReaderNext(reader, &batch, &why))
	{
		int s = TakeFreeSlot(sh, slots);

		if (s < 0)
			break;
		if (!sh->has_filter)
			FillSlot(sh, slots, s, &batch);
		else if ((why = FillSlotFiltered(sh, slots, s, &batch)) != NULL)
			break;
	}
	memset(&stats, 0, sizeof(stats));
	if (reader != NULL)
	{
		QueryReaderStatsGet(reader, &stats);
		QueryReaderEnd(reader);
	}
	SpinLockAcquire(&sh->mutex);
	if (why != NULL && sh->why[0] == '\0')
	{
		strlcpy(sh->why, why, sizeof(sh->why));
		sh->stop = true;
	}
	sh->finished++;
	sh->sum.pages += stats.pages;
	sh->sum.rows += stats.rows;
	sh->sum.batches += stats.batches;
	sh->sum.read_ms += stats.read_ms;
	sh->sum.walk_ms += stats.walk_ms;
	sh->sum.threads += stats.threads;
	SpinLockRelease(&sh->mutex);
	ConditionVariableBroadcast(&sh->filled);
	if (why != NULL)
		ConditionVariableBroadcast(&sh->freed);
	/* the fetch phase, under the snapshot the rows were read with */
	if (sh->has_fetch && why == NULL && reader != NULL)
		QueryFetchWork((QFShared *) shm_toc_lookup(toc, QP_KEY_FETCH, false), rel,
					   scan->rs_snapshot);
	table_endscan(scan);
	table_close(rel, AccessShareLock);
	MemoryContextDelete(cxt);
}

extern "C" PGDLLEXPORT void
gpuops_query_read_main(dsm_segment *seg, shm_toc *toc)
{
	GpuopsGuard("GpuQuery's parallel read", ReadMain, seg, toc);
}
