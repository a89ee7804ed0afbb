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
	bool emitting;		  /* rows have gone out: a failure cannot start over */
	GpuopsParkBuffer buf; /* the buffer being filled, when have_buf */
	bool have_buf;
	uint64 buf_bytes;
	uint32 buf_rows;
	uint64 rows; /* parked in the current device sort */
	uint64 bytes;
	uint32 *lens;  /* per store row: its tuple's length */
	uint64 *dest;  /* per store row: its offset in the park buffer */
	bool *on_main; /* per store row: formed by this thread (an expanded value) */
	uint64 nlens;  /* capacity of the three */

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
 * A device failure with rows parked on it: they are gone.  Before any row
 * went out the sort can start over on the CPU backend, reading its input
 * again (st->park_failed; not in parallel mode, where a parallel-aware
 * scan cannot be read twice); otherwise, or without gpuops.cpu_fallback,
 * it raises.  Returns whether rc is GPUOPS_OK.
 */
static bool
Ok(GpuSortState *st, GpuopsStatus rc)
{
	if (rc == GPUOPS_OK)
		return true;
	if (st->park == NULL || st->park->emitting || IsInParallelMode())
	{
		if (rc == GPUOPS_ERR_OUT_OF_MEMORY)
			GpuopsOpStatsCountOom(GpuopsOpKindOf(GPUSORT_NAME));
		GpuopsDeviceFailed(GPUSORT_NAME, rc, false); /* raises */
	}
	GpuopsNodeFailed(st, rc); /* raises unless falling back */
	st->healthy = false;
	st->park_failed = true;
	return false;
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
	(void) Ok(st, st->dev->backend->sort_park_submit(st->dev->handle, p->buf_bytes, p->buf_rows));
}

/* A buffer with room for a row of len bytes (rounded to 8); false after a device failure. */
static bool
EnsureRoom(GpuSortState *st, GpuSortPark *p, Size len)
{
	GpuopsStatus rc;

	if (p->have_buf && p->buf_bytes + len <= p->buf.capacity && p->buf_rows < p->buf.capacity_rows)
		return true;
	SubmitBuffer(st, p);
	if (st->park_failed)
		return false;
	while ((rc = st->dev->backend->sort_park_stage(st->dev->handle, &p->buf)) == GPUOPS_PENDING)
		GpuopsWaitForDevice();
	if (!Ok(st, rc))
		return false;
	if (len > p->buf.capacity)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("gpuops: a GpuSort row of %zu bytes exceeds the staging buffer", len),
				 errhint("Raise gpuops.batch_size, or set gpuops.enable_sort = off.")));
	p->have_buf = true;
	p->buf_bytes = 0;
	p->buf_rows = 0;
	return true;
}

/* A row the helper threads leave to this one: an expanded value needs PostgreSQL to flatten it. */
#define FORM_ON_MAIN PG_UINT32_MAX

/* What the threads forming tuples read: pure data (gpuops_host_parallel_rows). */
typedef struct FormJob
{
	const GpuopsRowStore *store;
	TupleDesc desc;
	GpuSortPark *p;
	uint8 *base;  /* the park buffer, for the fill */
	uint64 first; /* the fill's first row */
} FormJob;

/* Row `row`'s values; false when one of them is an expanded object. */
static inline bool
RowValues(const FormJob *job, uint64 row, Datum *values, bool *isnull, bool *hasnull)
{
	TupleDesc desc = job->desc;

	*hasnull = false;
	for (int c = 0; c < desc->natts; c++)
	{
		values[c] = GpuopsRowStoreDatum(job->store, row, c, &isnull[c]);
		*hasnull |= isnull[c];
		if (!isnull[c] && TupleDescAttr(desc, c)->attlen == -1 &&
			VARATT_IS_EXTERNAL_EXPANDED(DatumGetPointer(values[c])))
			return false;
	}
	return true;
}

static inline Size
TupleHoff(TupleDesc desc, bool hasnull)
{
	return MAXALIGN(SizeofMinimalTupleHeader + (hasnull ? BITMAPLEN(desc->natts) : 0));
}

/*
 * The layout heap_form_minimal_tuple makes, written in place at dst
 * (len bytes, rounded up to 8 and zeroed first).
 */
static inline void
FillTuple(TupleDesc desc, Datum *values, bool *isnull, bool hasnull, char *dst, Size len)
{
	MinimalTuple tup = (MinimalTuple) dst;
	Size hoff = TupleHoff(desc, hasnull);

	memset(dst, 0, TYPEALIGN(8, len));
	tup->t_len = (uint32) len;
	HeapTupleHeaderSetNatts(tup, desc->natts);
	tup->t_hoff = (uint8) (hoff + MINIMAL_TUPLE_OFFSET);
	heap_fill_tuple(desc, values, isnull, dst + hoff, len - hoff, &tup->t_infomask,
					hasnull ? tup->t_bits : NULL);
}

/* Threads: each row's tuple length, or FORM_ON_MAIN. */
static void
MeasureRows(void *arg, uint64_t begin, uint64_t end)
{
	FormJob *job = (FormJob *) arg;
	Datum values[MaxTupleAttributeNumber];
	bool isnull[MaxTupleAttributeNumber];
	bool hasnull;

	for (uint64 r = begin; r < end; r++)
		job->p->lens[r] = RowValues(job, r, values, isnull, &hasnull)
			? (uint32) (TupleHoff(job->desc, hasnull) +
						heap_compute_data_size(job->desc, values, isnull))
			: FORM_ON_MAIN;
}

/* Threads: each row's tuple at its place in the buffer (not FORM_ON_MAIN's). */
static void
FillRows(void *arg, uint64_t begin, uint64_t end)
{
	FormJob *job = (FormJob *) arg;
	Datum values[MaxTupleAttributeNumber];
	bool isnull[MaxTupleAttributeNumber];
	bool hasnull;

	for (uint64 r = job->first + begin; r < job->first + end; r++)
		if (!job->p->on_main[r] && RowValues(job, r, values, isnull, &hasnull))
			FillTuple(job->desc, values, isnull, hasnull, (char *) job->base + job->p->dest[r],
					  job->p->lens[r]);
}

/* Row `row` into slot on this thread, which may flatten expanded values; whether a value is NULL. */
static bool
FetchHere(FormJob *job, uint64 row, TupleTableSlot *slot)
{
	bool hasnull = false;

	GpuopsRowStoreFetchRow(job->store, row, slot);
	for (int c = 0; c < job->desc->natts; c++)
		hasnull |= slot->tts_isnull[c];
	return hasnull;
}

static Size
MeasureRowHere(FormJob *job, uint64 row, TupleTableSlot *slot)
{
	bool hasnull = FetchHere(job, row, slot);

	return TupleHoff(job->desc, hasnull) +
		heap_compute_data_size(job->desc, slot->tts_values, slot->tts_isnull);
}

static void
FillRowHere(FormJob *job, uint64 row, TupleTableSlot *slot)
{
	bool hasnull = FetchHere(job, row, slot);

	FillTuple(job->desc, slot->tts_values, slot->tts_isnull, hasnull,
			  (char *) job->base + job->p->dest[row], job->p->lens[row]);
}

/*
 * Every row of the store as a MinimalTuple in park buffers: their lengths
 * measured, places assigned buffer by buffer, and the tuples formed on the
 * host helpers' threads (an executor-speed loop otherwise: about 70 ns a
 * row on one core, as long as reading them).
 */
static void
ParkRows(GpuSortState *st, GpuSortPark *p)
{
	GpuopsRowStore *store = st->store();
	uint64 n = store->nrows;
	FormJob job = {store, p->desc, p, NULL, 0};
	uint64 row = 0;
	uint64 nmain = 0;

	if (n == 0)
		return;
	if (n > p->nlens)
	{
		p->nlens = Max(n, (uint64) GPUOPS_BATCH_ROWS);
		if (p->lens)
			pfree(p->lens);
		if (p->dest)
			pfree(p->dest);
		if (p->on_main)
			pfree(p->on_main);
		p->lens = (uint32 *) MemoryContextAllocHuge(p->cxt, p->nlens * sizeof(uint32));
		p->dest = (uint64 *) MemoryContextAllocHuge(p->cxt, p->nlens * sizeof(uint64));
		p->on_main = (bool *) MemoryContextAllocHuge(p->cxt, p->nlens * sizeof(bool));
	}
	if (!Ok(st, gpuops_host_parallel_rows(n, 4096, MeasureRows, &job)))
		return;
	for (uint64 r = 0; r < n; r++)
	{
		p->on_main[r] = p->lens[r] == FORM_ON_MAIN;
		if (p->on_main[r])
		{
			p->lens[r] = (uint32) MeasureRowHere(&job, r, st->scratch);
			nmain++;
		}
	}
	while (row < n)
	{
		uint64 first = row;

		if (!EnsureRoom(st, p, TYPEALIGN(8, p->lens[row])))
			return;
		while (row < n && p->buf_rows < p->buf.capacity_rows &&
			   p->buf_bytes + TYPEALIGN(8, p->lens[row]) <= p->buf.capacity)
		{
			Size padded = TYPEALIGN(8, p->lens[row]);

			p->dest[row] = p->buf_bytes;
			p->buf.offsets[p->buf_rows++] = (uint32) p->buf_bytes;
			p->buf_bytes += padded;
			p->bytes += padded;
			row++;
		}
		p->rows += row - first;
		job.base = p->buf.data;
		job.first = first;
		if (!Ok(st, gpuops_host_parallel_rows(row - first, 4096, FillRows, &job)))
			return;
		for (uint64 r = first; nmain > 0 && r < row; r++)
			if (p->on_main[r])
				FillRowHere(&job, r, st->scratch);
		CHECK_FOR_INTERRUPTS();
	}
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
	if (st->park_failed)
		return;
	if (dev->have_buf)
	{
		dev->have_buf = false;
		if (dev->buf_rows > 0 && !Ok(st, dev->backend->sort_submit(dev->handle, dev->buf_rows)))
			return;
	}
	if (!Ok(st, dev->backend->sort_finish(dev->handle)))
		return;
	while ((rc = dev->backend->sort_poll(dev->handle)) == GPUOPS_PENDING)
		GpuopsWaitForDevice();
	if (!Ok(st, rc))
		return;
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
	if (st->park_failed)
		return;
	GpuSortEnsureComparators(st);
	if (st->spill == NULL)
		st->spill = GpuopsSortRunsCreate(st->css.ss.ss_ScanTupleSlot->tts_tupleDescriptor,
										 st->nkeys, st->key_cols, st->ssup, st->sort_cxt);
	ReadStart(p);
	GpuopsSortRunsWriteStream(st->spill, ParkStream, p);
	if (st->park_failed)
		return;
	st->spilled_runs = GpuopsSortRunsCount(st->spill);
	st->spilled_bytes = GpuopsSortRunsBytes(st->spill);
	p->rows = 0;
	p->bytes = 0;
	GpuSortStartDevice(st, false);
	st->park_failed = !st->healthy;
}

/*
 * The store's rows need about the memory they take in it (adopted staged
 * chunks included), plus a tuple header each.
 */
static uint64
StoreParkBytes(GpuopsRowStore *store)
{
	return GpuopsRowStoreMemory(store) + store->foreign_bytes + store->nrows * 24;
}

bool
GpuSortParkBegin(GpuSortState *st)
{
	GpuopsRowStore *store = st->store();
	int fits = 0;

	if (!st->healthy || !GpuSortMayPark(st) || st->dev->handle == NULL)
		return false;
	/* a failure here finds every row still in the store: no parking, the CPU sorts them */
	if (st->dev->backend->sort_park_room(st->dev->handle, StoreParkBytes(store),
										 (uint32) Min(store->nrows, (uint64) UINT32_MAX),
										 &fits) != GPUOPS_OK ||
		!fits)
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
	if (st->park_failed)
		return;
	if (p->rows > 0 && store->nrows > 0 &&
		!Ok(st,
			st->dev->backend->sort_park_room(st->dev->handle, StoreParkBytes(store),
											 (uint32) Min(store->nrows, (uint64) UINT32_MAX),
											 &fits)))
		return;
	if (!fits)
		SpillDeviceRun(st, p);
	if (st->park_failed)
		return;
	GpuSortStagePending(st, last);
	if (!st->healthy)
	{
		st->park_failed = true; /* GpuSortDeviceFailedMidway reported it */
		return;
	}
	p->any_inexact |= st->any_truncated || st->has_abbrev_keys;
	ParkRows(st, p);
	if (st->park_failed)
		return;
	st->host_memory = Max(st->host_memory, GpuopsRowStoreMemory(store));
	if (store->nbatches == 0 || (store->nbatches == 1 && !store->batches[0]->foreign))
		GpuopsRowStoreRecycle(store);
	else
		GpuopsRowStoreReset(store);
	st->staged_batches = 0;
	st->truncated = NULL;
	st->truncated_bytes = 0;
	st->any_truncated = false;
}

/*
 * GpuStage's consumer: takes full chunks waiting, about the host memory
 * limit's worth at a time, and parks once past the limit.  All those
 * waiting at once (a chunk from each worker) could exceed the device's
 * budget for parking, which then refuses to start.
 */
static void
TakeStaged(void *arg)
{
	GpuSortState *st = (GpuSortState *) arg;
	GpuStageState *stage = st->input[0].stage;
	GpuopsRowStore *store = st->store();

	if (st->park_failed || st->park_refused)
		return; /* nothing more is taken: GpuSortExecute reads the input again, or collects */
	GpuStageTake(stage, store, st->mem_limit);
	if (st->park == NULL)
	{
		if (GpuopsRowStoreMemory(store) + GpuStageTakenBytes(stage) <= st->mem_limit)
			return;
		/* the device starts after the workers (GpuSortExecute says why) */
		if (st->dev->handle == NULL)
			GpuSortStartDevice(st, true);
		if (!GpuSortParkBegin(st))
		{
			/* the rows stay in shared memory, as without streaming: the workers stop waiting */
			st->park_refused = true;
			GpuStageStream(stage, NULL, NULL, 0);
			return;
		}
	}
	else
		GpuSortParkStore(st, false);
	if (!st->park_failed)
		GpuStageRelease(stage);
}

void
GpuSortParkStreamBegin(GpuSortState *st)
{
	st->park_refused = false;
	if (st->input[0].stage != NULL && GpuSortMayPark(st) && !st->cpu_only)
	{
		/*
		 * The workers publish chunks while those not yet freed stay within
		 * the host memory limit (and one more each): the leader takes them,
		 * holds them up to the limit, then parks them, freeing them, while
		 * the workers read their next batch.
		 */
		GpuStageStream(st->input[0].stage, TakeStaged, st, st->mem_limit);
	}
}

void
GpuSortParkStreamEnd(GpuSortState *st)
{
	if (st->input[0].stage != NULL)
		GpuStageStream(st->input[0].stage, NULL, NULL, 0);
}

/* The next chunk; false at the end. */
static bool
NextChunk(GpuSortPark *p)
{
	GpuSortState *st = p->st;

	if (p->ended)
		return false;
	if (!Ok(st, st->dev->backend->sort_park_next(st->dev->handle, &p->chunk)))
	{
		p->ended = true;
		return false;
	}
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
	if (st->park_failed)
		return;
	SortParked(st, p);
	if (st->park_failed)
		return;
	if (p->any_inexact)
		GpuSortEnsureComparators(st);
	ReadStart(p);
	if (st->spill)
		GpuopsSortRunsBeginMergeStream(st->spill, ParkStream, p, 0);
	p->emitting = !st->park_failed;
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

	(void) Ok(st, st->dev->backend->sort_park_rewind(st->dev->handle));
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
