/*
 * sort_spill.cpp
 *    GpuSort's sorted runs in temporary files and their merge; see
 *    sort_spill.h.
 *
 * A run file holds, per row, its length (uint32) and a MinimalTuple.  Ties
 * between runs go to the earlier run, so equal keys keep the order in which
 * the runs were written.
 */
extern "C" {
#include "postgres.h"

#include "executor/tuptable.h"
#include "lib/binaryheap.h"
#include "miscadmin.h"
#include "storage/buffile.h"
#include "utils/memutils.h"
}

#include "sort_spill.h"
#include "pg_compat.h"

typedef struct MergeSource
{
	BufFile *file;		  /* NULL for the in-memory run */
	uint64 rows;		  /* rows in the run */
	uint64 pos;			  /* rows read so far */
	MinimalTuple tuple;	  /* file runs: the current row */
	Size tuple_size;	  /* bytes allocated at tuple */
	TupleTableSlot *slot; /* the current row, deformed */
} MergeSource;

struct GpuopsSortRuns
{
	MemoryContext cxt;
	TupleDesc desc;
	int nkeys;
	const int *keys;
	SortSupport ssup;

	MergeSource *sources; /* the file runs, then the in-memory run */
	int nfiles;
	int maxfiles;
	uint64 bytes;

	GpuopsRowStore *last;		 /* the in-memory run, while merging */
	GpuopsSortRunsStream stream; /* or the streamed one */
	void *stream_arg;
	binaryheap *heap;
	int current; /* source of the row last returned, -1 if none */
	uint64 emitted;
	uint64 limit;
};

GpuopsSortRuns *
GpuopsSortRunsCreate(TupleDesc desc, int nkeys, const int *keys, SortSupport ssup,
					 MemoryContext cxt)
{
	GpuopsSortRuns *runs = (GpuopsSortRuns *) MemoryContextAllocZero(cxt, sizeof(GpuopsSortRuns));

	runs->cxt = cxt;
	runs->desc = desc;
	runs->nkeys = nkeys;
	runs->keys = keys;
	runs->ssup = ssup;
	runs->current = -1;
	return runs;
}

/* A new run's file, its rows to come; the source slot a virtual one. */
static MergeSource *
NewRun(GpuopsSortRuns *runs)
{
	MemoryContext old = MemoryContextSwitchTo(runs->cxt);
	MergeSource *src;

	if (runs->nfiles == runs->maxfiles)
	{
		int m = Max(8, runs->maxfiles * 2);

		/* one spare slot: the in-memory run goes last when merging */
		runs->sources = (MergeSource *) (runs->sources ? repalloc(runs->sources,
																  sizeof(MergeSource) * (m + 1))
													   : palloc(sizeof(MergeSource) * (m + 1)));
		runs->maxfiles = m;
	}
	src = &runs->sources[runs->nfiles];
	memset(src, 0, sizeof(*src));
	src->file = BufFileCreateTemp(false);
	src->slot = MakeSingleTupleTableSlot(runs->desc, &TTSOpsMinimalTuple);
	runs->nfiles++;
	MemoryContextSwitchTo(old);
	return src;
}

/* Appends the slot's row to the run (in rowcxt, reset by the caller). */
static void
PutRow(GpuopsSortRuns *runs, MergeSource *src, TupleTableSlot *slot)
{
	MinimalTuple tup;
	uint32 len;

	slot_getallattrs(slot);
	tup = GpuopsFormMinimalTuple(slot->tts_tupleDescriptor, slot->tts_values, slot->tts_isnull);
	len = tup->t_len;
	BufFileWrite(src->file, &len, sizeof(len));
	BufFileWrite(src->file, tup, len);
	runs->bytes += sizeof(len) + len;
	src->rows++;
}

void
GpuopsSortRunsWrite(GpuopsSortRuns *runs, GpuopsRowStore *store, uint64 n)
{
	MergeSource *src = NewRun(runs);
	TupleTableSlot *slot = MakeSingleTupleTableSlot(runs->desc, &TTSOpsVirtual);
	MemoryContext rowcxt = AllocSetContextCreate(runs->cxt, "GpuSort run writer",
												 ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(rowcxt);

	Assert(store->permuted);
	for (uint64 i = 0; i < n; i++)
	{
		GpuopsRowStorePrefetchOutput(store, i + 64);
		GpuopsRowStoreFetchOutput(store, i, slot);
		PutRow(runs, src, slot);
		if ((i & 1023) == 1023)
		{
			MemoryContextReset(rowcxt);
			CHECK_FOR_INTERRUPTS();
		}
	}
	MemoryContextSwitchTo(old);
	MemoryContextDelete(rowcxt);
	ExecDropSingleTupleTableSlot(slot);
}

void
GpuopsSortRunsWriteStream(GpuopsSortRuns *runs, GpuopsSortRunsStream next, void *arg)
{
	MergeSource *src = NewRun(runs);
	TupleTableSlot *slot = MakeSingleTupleTableSlot(runs->desc, &TTSOpsVirtual);
	MemoryContext rowcxt = AllocSetContextCreate(runs->cxt, "GpuSort run writer",
												 ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(rowcxt);

	while (next(arg, slot))
	{
		PutRow(runs, src, slot);
		if ((src->rows & 1023) == 0)
		{
			MemoryContextReset(rowcxt);
			CHECK_FOR_INTERRUPTS();
		}
	}
	MemoryContextSwitchTo(old);
	MemoryContextDelete(rowcxt);
	ExecDropSingleTupleTableSlot(slot);
}

int
GpuopsSortRunsCount(const GpuopsSortRuns *runs)
{
	return runs->nfiles;
}

uint64
GpuopsSortRunsBytes(const GpuopsSortRuns *runs)
{
	return runs->bytes;
}

/* Reads the source's next row into its slot; false at the end of the run. */
static bool
SourceAdvance(GpuopsSortRuns *runs, MergeSource *src)
{
	if (src->pos >= src->rows)
		return false;
	if (src->file == NULL && runs->stream)
	{
		if (!runs->stream(runs->stream_arg, src->slot))
		{
			src->pos = src->rows; /* the stream's end is the run's */
			return false;
		}
	}
	else if (src->file == NULL)
	{
		GpuopsRowStorePrefetchOutput(runs->last, src->pos + 16);
		GpuopsRowStoreFetchOutput(runs->last, src->pos, src->slot);
	}
	else
	{
		uint32 len;

		if (BufFileRead(src->file, &len, sizeof(len)) != sizeof(len) ||
			len < offsetof(MinimalTupleData, t_bits))
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("gpuops: could not read from GpuSort temporary file")));
		if (len > src->tuple_size)
		{
			if (src->tuple)
				pfree(src->tuple);
			src->tuple_size = Max((Size) len, (Size) 1024);
			src->tuple = (MinimalTuple) MemoryContextAlloc(runs->cxt, src->tuple_size);
		}
		if (BufFileRead(src->file, src->tuple, len) != len)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("gpuops: could not read from GpuSort temporary file")));
		ExecStoreMinimalTuple(src->tuple, src->slot, false);
	}
	src->pos++;
	return true;
}

/*
 * binaryheap keeps the largest element first; the row that sorts first must
 * come out first, so the comparison is inverted.
 */
static int
CompareSources(Datum a, Datum b, void *arg)
{
	GpuopsSortRuns *runs = (GpuopsSortRuns *) arg;
	int ia = DatumGetInt32(a);
	int ib = DatumGetInt32(b);
	TupleTableSlot *sa = runs->sources[ia].slot;
	TupleTableSlot *sb = runs->sources[ib].slot;

	for (int k = 0; k < runs->nkeys; k++)
	{
		bool na, nb;
		Datum da = slot_getattr(sa, runs->keys[k] + 1, &na);
		Datum db = slot_getattr(sb, runs->keys[k] + 1, &nb);
		int c = ApplySortComparator(da, na, db, nb, &runs->ssup[k]);

		if (c != 0)
			return -c;
	}
	return ib - ia; /* the earlier run first */
}

static void BeginMerge(GpuopsSortRuns *runs, uint64 nlast, uint64 limit);

void
GpuopsSortRunsBeginMerge(GpuopsSortRuns *runs, GpuopsRowStore *last, uint64 nlast, uint64 limit)
{
	runs->last = last;
	runs->stream = NULL;
	BeginMerge(runs, nlast, limit);
}

void
GpuopsSortRunsBeginMergeStream(GpuopsSortRuns *runs, GpuopsSortRunsStream next, void *arg,
							   uint64 limit)
{
	runs->last = NULL;
	runs->stream = next;
	runs->stream_arg = arg;
	BeginMerge(runs, PG_UINT64_MAX, limit);
}

static void
BeginMerge(GpuopsSortRuns *runs, uint64 nlast, uint64 limit)
{
	MemoryContext old = MemoryContextSwitchTo(runs->cxt);
	int nsources = runs->nfiles + 1;
	MergeSource *mem;

	if (runs->sources == NULL)
		runs->sources = (MergeSource *) palloc0(sizeof(MergeSource));
	mem = &runs->sources[runs->nfiles];
	if (runs->heap == NULL)
	{
		memset(mem, 0, sizeof(*mem));
		mem->slot = MakeSingleTupleTableSlot(runs->desc, &TTSOpsVirtual);
		runs->heap = binaryheap_allocate(nsources, CompareSources, runs);
	}
	mem->rows = nlast;
	binaryheap_reset(runs->heap);
	for (int i = 0; i < nsources; i++)
	{
		MergeSource *src = &runs->sources[i];

		src->pos = 0;
		if (src->file && BufFileSeek(src->file, 0, 0, SEEK_SET) != 0)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("gpuops: could not rewind GpuSort temporary file")));
		if (SourceAdvance(runs, src))
			binaryheap_add_unordered(runs->heap, Int32GetDatum(i));
	}
	binaryheap_build(runs->heap);
	runs->current = -1;
	runs->emitted = 0;
	runs->limit = limit;
	MemoryContextSwitchTo(old);
}

bool
GpuopsSortRunsNext(GpuopsSortRuns *runs, TupleTableSlot *slot)
{
	MergeSource *src;

	if (runs->current >= 0)
	{
		/* the row returned last time is consumed: move its run on */
		if (SourceAdvance(runs, &runs->sources[runs->current]))
			binaryheap_replace_first(runs->heap, Int32GetDatum(runs->current));
		else
			(void) binaryheap_remove_first(runs->heap);
		runs->current = -1;
	}
	if (binaryheap_empty(runs->heap) || (runs->limit > 0 && runs->emitted >= runs->limit))
	{
		ExecClearTuple(slot);
		return false;
	}
	runs->current = DatumGetInt32(binaryheap_first(runs->heap));
	src = &runs->sources[runs->current];
	if (src->file)
		ExecForceStoreMinimalTuple(src->tuple, slot, false);
	else if (runs->stream)
		ExecCopySlot(slot, src->slot);
	else
		GpuopsRowStoreFetchOutput(runs->last, src->pos - 1, slot);
	runs->emitted++;
	return true;
}

void
GpuopsSortRunsClose(GpuopsSortRuns *runs)
{
	for (int i = 0; i < runs->nfiles; i++)
	{
		if (runs->sources[i].file)
			BufFileClose(runs->sources[i].file);
		runs->sources[i].file = NULL;
		runs->sources[i].rows = 0;
	}
	runs->nfiles = 0;
}
