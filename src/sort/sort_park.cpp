/*
 * sort_park.cpp
 *    GpuSort's parked rows: writing them to the device sort, and reading
 *    them back in order with their tie runs resolved; see sort_park.h.
 */
#include "gpu_sort_exec.h"
#include "op_stats.h"
#include "sort_park.h"

extern "C" {
#include "utils/tuplesort.h"
}

struct GpuSortPark
{
	MemoryContext cxt;
	TupleDesc desc;
	bool any_inexact;	  /* rows whose words may tie where the values do not */
	GpuopsParkBuffer buf; /* the buffer being filled, when have_buf */
	bool have_buf;
	uint64 buf_bytes;
	uint32 buf_rows;
	uint64 rows; /* parked in the current device sort */
	uint64 bytes;

	/* reading */
	GpuopsParkChunk chunk;
	uint32 pos;		 /* next row of the chunk */
	const char *ptr; /* where it is */
	bool ended;
	MinimalTuple *group; /* a tie run within the chunk, sorted */
	uint32 group_cap;
	uint32 group_n;
	uint32 group_pos;
	Tuplesortstate *long_run; /* a tie run longer than a chunk, sorted */
	TupleTableSlot *cmp_a, *cmp_b, *ts_slot;
	GpuSortState *st;
};

bool
GpuSortMayPark(GpuSortState *st)
{
	return gpuops_enable_sort_park && st->bound == 0 && st->ncomputed == 0 && !st->random_access;
}

/*
 * A device failure with rows parked on it raises: the rows are gone, and
 * the CPU backend has nothing to sort again.
 */
static void
Check(GpuSortState *st, GpuopsStatus rc)
{
	if (rc == GPUOPS_OK)
		return;
	if (rc == GPUOPS_ERR_OUT_OF_MEMORY)
		GpuopsOpStatsCountOom(GpuopsOpKindOf(GPUSORT_NAME));
	GpuopsDeviceFailed(GPUSORT_NAME, rc, false); /* raises */
	(void) st;
}

static GpuSortPark *
ParkCreate(GpuSortState *st)
{
	GpuSortPark *p = (GpuSortPark *) MemoryContextAllocZero(st->sort_cxt, sizeof(GpuSortPark));
	TupleDesc desc = st->css.ss.ss_ScanTupleSlot->tts_tupleDescriptor;

	p->cxt = AllocSetContextCreate(st->sort_cxt, "GpuSort parked rows", ALLOCSET_DEFAULT_SIZES);
	p->desc = desc;
	p->st = st;
	p->cmp_a = MakeSingleTupleTableSlot(desc, &TTSOpsMinimalTuple);
	p->cmp_b = MakeSingleTupleTableSlot(desc, &TTSOpsMinimalTuple);
	p->ts_slot = MakeSingleTupleTableSlot(desc, &TTSOpsMinimalTuple);
	return p;
}

/* Sends the filled park buffer. */
static void
SubmitBuffer(GpuSortState *st, GpuSortPark *p)
{
	if (!p->have_buf)
		return;
	p->have_buf = false;
	Check(st, st->dev->backend->sort_park_submit(st->dev->handle, p->buf_bytes, p->buf_rows));
}

/* A buffer with room for a row of len bytes (rounded to 8). */
static void
EnsureRoom(GpuSortState *st, GpuSortPark *p, Size len)
{
	GpuopsStatus rc;

	if (p->have_buf && p->buf_bytes + len <= p->buf.capacity && p->buf_rows < p->buf.capacity_rows)
		return;
	SubmitBuffer(st, p);
	while ((rc = st->dev->backend->sort_park_stage(st->dev->handle, &p->buf)) == GPUOPS_PENDING)
		GpuopsWaitForDevice();
	Check(st, rc);
	if (len > p->buf.capacity)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("gpuops: a GpuSort row of %zu bytes exceeds the staging buffer", len),
				 errhint("Raise gpuops.batch_size, or set gpuops.enable_sort = off.")));
	p->have_buf = true;
	p->buf_bytes = 0;
	p->buf_rows = 0;
}

/*
 * Row `row` of the store as a MinimalTuple in the park buffer: the layout
 * heap_form_minimal_tuple makes, written in place.
 */
static void
ParkRow(GpuSortState *st, GpuSortPark *p, uint64 row)
{
	TupleTableSlot *slot = st->scratch;
	TupleDesc desc = p->desc;
	bool hasnull = false;
	Size hoff, data_len, len;
	MinimalTuple tup;

	GpuopsRowStoreFetchRow(st->store(), row, slot);
	for (int i = 0; i < desc->natts && !hasnull; i++)
		hasnull = slot->tts_isnull[i];
	hoff = SizeofMinimalTupleHeader + (hasnull ? BITMAPLEN(desc->natts) : 0);
	hoff = MAXALIGN(hoff);
	data_len = heap_compute_data_size(desc, slot->tts_values, slot->tts_isnull);
	len = hoff + data_len;
	EnsureRoom(st, p, TYPEALIGN(8, len));
	tup = (MinimalTuple) (p->buf.data + p->buf_bytes);
	memset(tup, 0, TYPEALIGN(8, len));
	tup->t_len = (uint32) len;
	HeapTupleHeaderSetNatts(tup, desc->natts);
	tup->t_hoff = (uint8) (hoff + MINIMAL_TUPLE_OFFSET);
	heap_fill_tuple(desc, slot->tts_values, slot->tts_isnull, (char *) tup + hoff, data_len,
					&tup->t_infomask, hasnull ? tup->t_bits : NULL);
	p->buf.offsets[p->buf_rows++] = (uint32) p->buf_bytes;
	p->buf_bytes += TYPEALIGN(8, len);
	p->bytes += TYPEALIGN(8, len);
	p->rows++;
}

static bool ParkStream(void *arg, TupleTableSlot *slot);
static void ReadStart(GpuSortPark *p);

/* Sorts the parked rows of the current device sort (the last key buffer sent first). */
static void
SortParked(GpuSortState *st, GpuSortPark *p)
{
	GpuSortDevice *dev = st->dev;
	GpuopsStatus rc;
	GpuopsStats one;
	instr_time t0, t1;

	INSTR_TIME_SET_CURRENT(t0);
	SubmitBuffer(st, p);
	if (dev->have_buf)
	{
		dev->have_buf = false;
		if (dev->buf_rows > 0)
			Check(st, dev->backend->sort_submit(dev->handle, dev->buf_rows));
	}
	Check(st, dev->backend->sort_finish(dev->handle));
	while ((rc = dev->backend->sort_poll(dev->handle)) == GPUOPS_PENDING)
		GpuopsWaitForDevice();
	Check(st, rc);
	memset(&one, 0, sizeof(one));
	dev->backend->sort_stats(dev->handle, &one);
	GpuSortAddStats(&st->stats, &one);
	st->backend_name = dev->backend->name;
	st->parked_rows += p->rows;
	st->parked_bytes += p->bytes;
	st->device_runs++;
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	st->device_sort_ms += INSTR_TIME_GET_MILLISEC(t1);
}

/*
 * The device has no room for more rows: sort those it has, write them out
 * as a run, and start a new device sort.
 */
static void
SpillDeviceRun(GpuSortState *st, GpuSortPark *p)
{
	SortParked(st, p);
	GpuSortEnsureComparators(st);
	if (st->spill == NULL)
		st->spill = GpuopsSortRunsCreate(st->css.ss.ss_ScanTupleSlot->tts_tupleDescriptor,
										 st->nkeys, st->key_cols, st->ssup, st->sort_cxt);
	ReadStart(p);
	GpuopsSortRunsWriteStream(st->spill, ParkStream, p);
	st->spilled_runs = GpuopsSortRunsCount(st->spill);
	st->spilled_bytes = GpuopsSortRunsBytes(st->spill);
	p->rows = 0;
	p->bytes = 0;
	GpuSortStartDevice(st, false);
	if (!st->healthy)
		elog(ERROR, "GpuSort: the device failed between parked runs");
}

/* The store's rows need about the memory they take in it, plus a tuple header each. */
static uint64
StoreParkBytes(GpuopsRowStore *store)
{
	return GpuopsRowStoreMemory(store) + store->nrows * 24;
}

bool
GpuSortParkBegin(GpuSortState *st)
{
	GpuopsRowStore *store = st->store();
	int fits = 0;

	if (!st->healthy || !GpuSortMayPark(st) || st->dev->handle == NULL)
		return false;
	Check(st,
		  st->dev->backend->sort_park_room(st->dev->handle, StoreParkBytes(store),
										   (uint32) Min(store->nrows, (uint64) UINT32_MAX), &fits));
	if (!fits)
		return false;
	st->park = ParkCreate(st);
	GpuSortParkStore(st, false);
	return true;
}

void
GpuSortParkStore(GpuSortState *st, bool last)
{
	GpuopsRowStore *store = st->store();
	GpuSortPark *p = st->park;
	int fits = 1;

	/* without room for the store's rows, the device's go to a file first */
	if (p->rows > 0 && store->nrows > 0)
		Check(st,
			  st->dev->backend->sort_park_room(st->dev->handle, StoreParkBytes(store),
											   (uint32) Min(store->nrows, (uint64) UINT32_MAX),
											   &fits));
	if (!fits)
		SpillDeviceRun(st, p);
	GpuSortStagePending(st, last);
	if (!st->healthy)
		elog(ERROR, "GpuSort: the device failed with parked rows");
	p->any_inexact |= st->any_truncated || st->has_abbrev_keys;
	for (uint64 row = 0; row < store->nrows; row++)
	{
		ParkRow(st, p, row);
		if ((row & 1023) == 1023)
			CHECK_FOR_INTERRUPTS();
	}
	st->host_memory = Max(st->host_memory, GpuopsRowStoreMemory(store));
	if (store->nbatches <= 1)
		GpuopsRowStoreRecycle(store);
	else
		GpuopsRowStoreReset(store);
	st->staged_batches = 0;
	st->truncated = NULL;
	st->truncated_bytes = 0;
	st->any_truncated = false;
}

/* The next chunk; false at the end. */
static bool
NextChunk(GpuSortPark *p)
{
	GpuSortState *st = p->st;

	if (p->ended)
		return false;
	Check(st, st->dev->backend->sort_park_next(st->dev->handle, &p->chunk));
	p->pos = 0;
	p->ptr = (const char *) p->chunk.data;
	/* the sort's figures were taken before its rows came back: these count here */
	st->stats.bytes_from_device += p->chunk.bytes;
	if (p->chunk.rows == 0)
		p->ended = true;
	return !p->ended;
}

static void
ReadStart(GpuSortPark *p)
{
	p->ended = false;
	p->chunk.rows = 0;
	p->pos = 0;
	p->group_n = p->group_pos = 0;
	if (p->long_run)
		tuplesort_end(p->long_run);
	p->long_run = NULL;
}

/* Whether chunk row i ties with the row before it. */
static inline bool
Tied(const GpuSortPark *p, uint32 i)
{
	uint64 b = (uint64) p->chunk.ties_bit0 + i;

	return p->chunk.ties != NULL && ((p->chunk.ties[b >> 5] >> (b & 31)) & 1) != 0;
}

/* The chunk's next row, advancing. */
static inline MinimalTuple
TakeRow(GpuSortPark *p)
{
	MinimalTuple tup = (MinimalTuple) p->ptr;

	p->ptr += TYPEALIGN(8, tup->t_len);
	p->pos++;
	return tup;
}

static int
CompareTuples(const void *a, const void *b, void *arg)
{
	GpuSortPark *p = (GpuSortPark *) arg;
	GpuSortState *st = p->st;

	ExecStoreMinimalTuple(*(MinimalTuple *) a, p->cmp_a, false);
	ExecStoreMinimalTuple(*(MinimalTuple *) b, p->cmp_b, false);
	for (int k = 0; k < st->nkeys; k++)
	{
		bool na, nb;
		Datum da = slot_getattr(p->cmp_a, st->key_cols[k] + 1, &na);
		Datum db = slot_getattr(p->cmp_b, st->key_cols[k] + 1, &nb);
		int c = ApplySortComparator(da, na, db, nb, &st->ssup[k]);

		if (c != 0)
			return c;
	}
	return 0;
}

/*
 * A tie run longer than the chunk (it fills the chunk, and may go on in
 * the next): every row of it into a tuplesort with the keys' comparators.
 */
static void
SortLongRun(GpuSortPark *p, MinimalTuple first)
{
	GpuSortState *st = p->st;
	AttrNumber attnums[GPUOPS_MAX_SORT_KEYS];
	Oid ops[GPUOPS_MAX_SORT_KEYS], colls[GPUOPS_MAX_SORT_KEYS];
	bool nf[GPUOPS_MAX_SORT_KEYS];
	MemoryContext old = MemoryContextSwitchTo(p->cxt);

	for (int k = 0; k < st->nkeys; k++)
	{
		attnums[k] = (AttrNumber) (st->key_cols[k] + 1);
		ops[k] = st->keys[k].sortop;
		colls[k] = st->keys[k].collation;
		nf[k] = st->keys[k].nulls_first;
	}
	p->long_run = tuplesort_begin_heap(p->desc, st->nkeys, attnums, ops, colls, nf, work_mem, NULL,
									   TUPLESORT_NONE);
	ExecStoreMinimalTuple(first, p->ts_slot, false);
	tuplesort_puttupleslot(p->long_run, p->ts_slot);
	for (;;)
	{
		while (p->pos < p->chunk.rows)
		{
			ExecStoreMinimalTuple(TakeRow(p), p->ts_slot, false);
			tuplesort_puttupleslot(p->long_run, p->ts_slot);
		}
		CHECK_FOR_INTERRUPTS();
		/* the run goes on only where the next chunk's first row ties */
		if (!NextChunk(p) || !Tied(p, 0))
			break;
		while (p->pos < p->chunk.rows && (p->pos == 0 || Tied(p, p->pos)))
		{
			ExecStoreMinimalTuple(TakeRow(p), p->ts_slot, false);
			tuplesort_puttupleslot(p->long_run, p->ts_slot);
		}
		if (p->pos < p->chunk.rows)
			break; /* it ended inside this chunk */
	}
	tuplesort_performsort(p->long_run);
	MemoryContextSwitchTo(old);
	st->tie_runs++;
}

/* The next row in order: as a MinimalTuple valid until the next call, or NULL. */
static MinimalTuple
ParkNextTuple(GpuSortPark *p)
{
	GpuSortState *st = p->st;
	uint32 start, end;

	if (p->long_run)
	{
		if (tuplesort_gettupleslot(p->long_run, true, false, p->ts_slot, NULL))
			return ExecFetchSlotMinimalTuple(p->ts_slot, NULL);
		tuplesort_end(p->long_run);
		p->long_run = NULL;
	}
	if (p->group_pos < p->group_n)
		return p->group[p->group_pos++];
	p->group_n = p->group_pos = 0;
	if (p->pos >= p->chunk.rows && !NextChunk(p))
		return NULL;
	if (p->chunk.ties == NULL || !p->any_inexact)
		return TakeRow(p);
	/* a run of rows tying on the device's words: order it with the comparators */
	start = p->pos;
	end = start + 1;
	while (end < p->chunk.rows && Tied(p, end))
		end++;
	if (end == start + 1 && (end < p->chunk.rows || start > 0))
		return TakeRow(p);
	if (start == 0 && end == p->chunk.rows)
	{
		/* the whole chunk ties: it may go on in the next */
		SortLongRun(p, TakeRow(p));
		return ParkNextTuple(p);
	}
	if (end - start > p->group_cap)
	{
		p->group_cap = Max(end - start, p->group_cap * 2);
		if (p->group)
			pfree(p->group);
		p->group = (MinimalTuple *) MemoryContextAllocHuge(p->cxt,
														   sizeof(MinimalTuple) * p->group_cap);
	}
	for (uint32 i = start; i < end; i++)
		p->group[p->group_n++] = TakeRow(p);
	qsort_arg(p->group, p->group_n, sizeof(MinimalTuple), CompareTuples, p);
	st->tie_runs++;
	return p->group[p->group_pos++];
}

/* GpuopsSortRunsStream over the parked rows. */
static bool
ParkStream(void *arg, TupleTableSlot *slot)
{
	MinimalTuple tup = ParkNextTuple((GpuSortPark *) arg);

	if (tup == NULL)
	{
		ExecClearTuple(slot);
		return false;
	}
	ExecForceStoreMinimalTuple(tup, slot, false);
	return true;
}

void
GpuSortParkFinish(GpuSortState *st)
{
	GpuSortPark *p = st->park;

	GpuSortParkStore(st, true);
	SortParked(st, p);
	if (p->any_inexact)
		GpuSortEnsureComparators(st);
	ReadStart(p);
	if (st->spill)
		GpuopsSortRunsBeginMergeStream(st->spill, ParkStream, p, 0);
}

bool
GpuSortParkNext(GpuSortState *st, TupleTableSlot *slot)
{
	if (st->spill)
		return GpuopsSortRunsNext(st->spill, slot);
	return ParkStream(st->park, slot);
}

void
GpuSortParkRewind(GpuSortState *st)
{
	GpuSortPark *p = st->park;

	Check(st, st->dev->backend->sort_park_rewind(st->dev->handle));
	ReadStart(p);
	if (st->spill)
		GpuopsSortRunsBeginMergeStream(st->spill, ParkStream, p, 0);
}

void
GpuSortParkForget(GpuSortState *st)
{
	GpuSortPark *p = st->park;

	if (p == NULL)
		return;
	if (p->long_run)
		tuplesort_end(p->long_run);
	ExecDropSingleTupleTableSlot(p->cmp_a);
	ExecDropSingleTupleTableSlot(p->cmp_b);
	ExecDropSingleTupleTableSlot(p->ts_slot);
	MemoryContextDelete(p->cxt);
	pfree(p);
	st->park = NULL;
}
