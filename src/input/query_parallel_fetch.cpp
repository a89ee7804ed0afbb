/*
 * query_parallel_fetch.cpp
 *    The parallel read's fetch phase (query_parallel_fetch.h): the ring of
 *    chunk slots in shared memory, the leader's side (issue, return in
 *    order, take what no worker took) and the workers' (fetch by TID).
 *
 * No frame here holds an object with a destructor: ereport may leave any
 * of them (a cancel in a wait, a worker's error raised in the leader).
 */
extern "C" {
#include "postgres.h"

#include "access/heapam.h"
#include "access/tableam.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "storage/condition_variable.h"
#include "storage/spin.h"
#include "utils/wait_event.h"
}

#include "query_parallel_fetch.h"
#include "query_reader.h"

#define QF_POLL_MS 20 /* the leader's wait: how often it looks at the workers' status */

typedef enum QFSlotState
{
	QF_EMPTY = 0,
	QF_ISSUED,	 /* its chunk's TIDs are in; a worker may take it */
	QF_FETCHING, /* a worker copies its rows in */
	QF_DONE,	 /* ndone rows copied; the leader fetches the rest */
	QF_LEADER	 /* the leader fetches every row itself */
} QFSlotState;

typedef struct QFSlot
{
	QFSlotState state;
	uint64 chunk;
	uint32 nrows;
	uint32 ndone;
} QFSlot;

struct QFShared
{
	int nslots;
	Size data_bytes; /* a slot's room for tuples */
	Size slot_bytes; /* a slot: TIDs, offsets, lengths, tuples */

	slock_t mutex; /* everything below */
	ConditionVariable issued;
	ConditionVariable done;
	bool all_issued; /* the leader has issued its last chunk */
	bool stop;
	QFSlot slots[FLEXIBLE_ARRAY_MEMBER];
};

/* A slot's parts, from its base. */
typedef struct QFSlotView
{
	uint64 *tids;
	uint32 *off;
	uint32 *len;
	char *data;
} QFSlotView;

static Size
HeaderBytes(int nslots)
{
	return MAXALIGN(offsetof(QFShared, slots) + sizeof(QFSlot) * nslots);
}

/*
 * Room for a chunk of rows of row_bytes and a quarter more, within 64 kB
 * and 2 MB a slot: rows beyond it are fetched by the leader, so a guess
 * that is too small costs time, never a result.
 */
static Size
DataBytes(uint32 row_bytes)
{
	double bytes = (double) row_bytes * QF_CHUNK_ROWS * 1.25;

	return MAXALIGN((Size) Min(Max(bytes, 64.0 * 1024), 2.0 * 1024 * 1024));
}

static int
SlotCount(int nworkers)
{
	/* two a worker: each has one to fill while the leader returns another */
	return Max(2 * nworkers, 2);
}

static Size
SlotBytes(Size data_bytes)
{
	return MAXALIGN(sizeof(uint64) * QF_CHUNK_ROWS) + MAXALIGN(sizeof(uint32) * QF_CHUNK_ROWS) * 2 +
		data_bytes;
}

Size
QueryFetchShmemSize(int nworkers, uint32 row_bytes)
{
	int nslots = SlotCount(nworkers);

	return add_size(HeaderBytes(nslots), mul_size(SlotBytes(DataBytes(row_bytes)), nslots));
}

QFShared *
QueryFetchShmemInit(void *mem, int nworkers, uint32 row_bytes)
{
	QFShared *sh = (QFShared *) mem;
	int nslots = SlotCount(nworkers);

	memset(sh, 0, HeaderBytes(nslots));
	sh->nslots = nslots;
	sh->data_bytes = DataBytes(row_bytes);
	sh->slot_bytes = SlotBytes(sh->data_bytes);
	SpinLockInit(&sh->mutex);
	ConditionVariableInit(&sh->issued);
	ConditionVariableInit(&sh->done);
	return sh;
}

static QFSlotView
SlotView(const QFShared *sh, int s)
{
	char *base = (char *) sh + HeaderBytes(sh->nslots) + (Size) s * sh->slot_bytes;
	QFSlotView v;

	v.tids = (uint64 *) base;
	base += MAXALIGN(sizeof(uint64) * QF_CHUNK_ROWS);
	v.off = (uint32 *) base;
	base += MAXALIGN(sizeof(uint32) * QF_CHUNK_ROWS);
	v.len = (uint32 *) base;
	base += MAXALIGN(sizeof(uint32) * QF_CHUNK_ROWS);
	v.data = base;
	return v;
}

/* ---- the leader ---- */

static uint64
ChunkCount(const QueryFetch *f)
{
	return (f->ntids + QF_CHUNK_ROWS - 1) / QF_CHUNK_ROWS;
}

/* Issues the next chunk into its slot (empty: its rows were returned). */
static void
IssueNext(QueryFetch *f)
{
	QFShared *sh = f->sh;
	uint64 c = f->issued;
	int s = (int) (c % sh->nslots);
	uint64 first = c * QF_CHUNK_ROWS;
	uint32 n = (uint32) Min((uint64) QF_CHUNK_ROWS, f->ntids - first);

	/* an empty slot is the leader's alone: the TIDs go in without the lock */
	memcpy(SlotView(sh, s).tids, f->tids + first, sizeof(uint64) * n);
	SpinLockAcquire(&sh->mutex);
	sh->slots[s].chunk = c;
	sh->slots[s].nrows = n;
	sh->slots[s].ndone = 0;
	sh->slots[s].state = QF_ISSUED;
	sh->all_issued = c + 1 == ChunkCount(f);
	SpinLockRelease(&sh->mutex);
	f->issued++;
}

void
QueryFetchStart(QueryFetch *f, QFShared *sh, const uint64 *tids, uint64 ntids)
{
	memset(f, 0, sizeof(*f));
	f->sh = sh;
	f->tids = tids;
	f->ntids = ntids;
	f->cur = -1;
	while (f->issued < ChunkCount(f) && f->issued < (uint64) sh->nslots)
		IssueNext(f);
	ConditionVariableBroadcast(&sh->issued);
}

/*
 * Moves to chunk c: frees the slot of the one returned (the values of its
 * last row are no longer needed: the next row was asked for) and issues
 * the chunk that goes there; takes c when no worker has, else waits for
 * the worker that has.
 */
static void
EnterChunk(QueryFetch *f, uint64 c, bool (*workers_stopped)(void *), void *arg)
{
	QFShared *sh = f->sh;
	int s = (int) (c % sh->nslots);
	QFSlotState state;
	uint32 ndone;

	if (f->cur >= 0)
	{
		int prev = (int) (f->cur % sh->nslots);

		SpinLockAcquire(&sh->mutex);
		sh->slots[prev].state = QF_EMPTY;
		SpinLockRelease(&sh->mutex);
		if (f->issued < ChunkCount(f))
		{
			IssueNext(f);
			ConditionVariableBroadcast(&sh->issued);
		}
	}
	f->cur = (int64) c;
	SpinLockAcquire(&sh->mutex);
	if (sh->slots[s].chunk != c)
		elog(ERROR, "gpuops: the parallel fetch: chunk %llu is not in its slot",
			 (unsigned long long) c);
	if (sh->slots[s].state == QF_ISSUED)
		sh->slots[s].state = QF_LEADER;
	state = sh->slots[s].state;
	ndone = sh->slots[s].ndone;
	SpinLockRelease(&sh->mutex);
	if (state == QF_FETCHING)
	{
		ConditionVariablePrepareToSleep(&sh->done);
		for (;;)
		{
			/* (the lock's barrier: the worker's copies are seen) */
			SpinLockAcquire(&sh->mutex);
			state = sh->slots[s].state;
			ndone = sh->slots[s].ndone;
			SpinLockRelease(&sh->mutex);
			if (state != QF_FETCHING)
				break;
			/*
			 * A worker that failed raised its error here (the wait checks
			 * for interrupts); one that stopped otherwise left the chunk
			 * to the leader.
			 */
			if (ConditionVariableTimedSleep(&sh->done, QF_POLL_MS, PG_WAIT_EXTENSION) &&
				workers_stopped(arg))
			{
				SpinLockAcquire(&sh->mutex);
				if (sh->slots[s].state == QF_FETCHING)
					sh->slots[s].state = QF_LEADER;
				SpinLockRelease(&sh->mutex);
			}
		}
		ConditionVariableCancelSleep();
	}
	f->cur_leader = state == QF_LEADER;
	f->cur_done = ndone;
}

HeapTupleHeader
QueryFetchRow(QueryFetch *f, uint64 i, uint32 *len, bool (*workers_stopped)(void *), void *arg)
{
	uint64 c = i / QF_CHUNK_ROWS;
	uint32 r = (uint32) (i % QF_CHUNK_ROWS);
	QFSlotView v;

	if (i >= f->ntids)
		return NULL;
	if ((int64) c != f->cur)
		EnterChunk(f, c, workers_stopped, arg);
	if (f->cur_leader || r >= f->cur_done)
		return NULL;
	v = SlotView(f->sh, (int) (c % f->sh->nslots));
	*len = v.len[r];
	return (HeapTupleHeader) (v.data + v.off[r]);
}

void
QueryFetchStop(QFShared *sh)
{
	SpinLockAcquire(&sh->mutex);
	sh->stop = true;
	SpinLockRelease(&sh->mutex);
	ConditionVariableBroadcast(&sh->issued);
	ConditionVariableBroadcast(&sh->done);
}

/* ---- the workers ---- */

/* Copies the rows of the chunk in slot s while they fit; how many did. */
static uint32
FetchChunk(QFShared *sh, int s, Relation rel, Snapshot snapshot, TupleTableSlot *slot)
{
	QFSlotView v = SlotView(sh, s);
	uint32 nrows = sh->slots[s].nrows; /* (set before the worker took it) */
	Size used = 0;
	uint32 r;

	for (r = 0; r < nrows; r++)
	{
		ItemPointerData tid;
		HeapTuple tuple;
		bool should_free;
		Size need;
		bool fits;

		CHECK_FOR_INTERRUPTS();
		QueryTidFromWord(v.tids[r], &tid);
		/* visible when it was read, under this snapshot (GpuTopNNext says why) */
		if (!table_tuple_fetch_row_version(rel, &tid, snapshot, slot))
			elog(ERROR, "gpuops: the parallel fetch: the row at (%u,%u) is no longer visible",
				 ItemPointerGetBlockNumber(&tid), ItemPointerGetOffsetNumber(&tid));
		tuple = ExecFetchSlotHeapTuple(slot, false, &should_free);
		need = MAXALIGN(tuple->t_len);
		fits = used + need <= sh->data_bytes;
		if (fits)
		{
			memcpy(v.data + used, tuple->t_data, tuple->t_len);
			v.off[r] = (uint32) used;
			v.len[r] = tuple->t_len;
			used += need;
		}
		if (should_free)
			heap_freetuple(tuple);
		if (!fits)
			break;
	}
	return r;
}

void
QueryFetchWork(QFShared *sh, Relation rel, Snapshot snapshot)
{
	TupleTableSlot *slot = table_slot_create(rel, NULL);

	for (;;)
	{
		int s = -1;
		bool finished;

		SpinLockAcquire(&sh->mutex);
		/* the lowest chunk first: the leader returns them in order */
		for (int k = 0; k < sh->nslots && !sh->stop; k++)
			if (sh->slots[k].state == QF_ISSUED &&
				(s < 0 || sh->slots[k].chunk < sh->slots[s].chunk))
				s = k;
		if (s >= 0)
			sh->slots[s].state = QF_FETCHING;
		finished = sh->stop || (s < 0 && sh->all_issued);
		SpinLockRelease(&sh->mutex);
		if (finished)
			break;
		if (s < 0)
		{
			ConditionVariableSleep(&sh->issued, PG_WAIT_EXTENSION);
			continue;
		}
		{
			uint32 n = FetchChunk(sh, s, rel, snapshot, slot);

			SpinLockAcquire(&sh->mutex);
			sh->slots[s].ndone = n;
			sh->slots[s].state = QF_DONE;
			SpinLockRelease(&sh->mutex);
			ConditionVariableBroadcast(&sh->done);
		}
	}
	ConditionVariableCancelSleep();
	ExecDropSingleTupleTableSlot(slot);
}
