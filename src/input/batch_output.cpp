/*
 * batch_output.cpp
 *    A row store's rows going out (batch.h): every column laid out in an
 *    order (GpuopsRowStorePermute, with variable-length values packed in
 *    that order), the rows emitted from that layout, a stored row read back,
 *    and a store cut to its best rows (a bounded sort's compaction).  Split
 *    from batch.cpp, which fills stores: reordering for output is a job of
 *    its own.
 */
extern "C" {
#include "postgres.h"

#include "executor/executor.h"
#include "utils/memutils.h"
}

#include <sys/mman.h>

#include "batch.h"
#include "device.h"
#include "gpuops_device.h"

/*
 * Allocates an output array of `bytes` and, where the kernel makes huge pages
 * only on request (transparent_hugepage = madvise, the usual default), asks
 * for them before the gather first touches it: a 50M-row sort lays out
 * gigabytes here, and with 4 kB pages the threads spend the reorder in page
 * faults, emission in TLB misses, and the end in unmapping.
 */
static char *
AllocOutput(GpuopsRowStore *store, Size bytes)
{
	char *p = (char *) MemoryContextAllocHuge(store->cxt, Max(bytes, 8));

#ifdef MADV_HUGEPAGE
	{
		const uintptr_t huge = 2 * 1024 * 1024;
		uintptr_t start = TYPEALIGN(huge, (uintptr_t) p);
		uintptr_t end = ((uintptr_t) p + bytes) & ~(huge - 1);

		if (end > start)
			(void) madvise((void *) start, end - start, MADV_HUGEPAGE);
	}
#endif
	return p;
}

/* Sizes of a varlena and of a cstring value, for the packing threads: pure. */
static size_t
VarlenaValueSize(const char *p)
{
	return VARSIZE_ANY(p);
}

static size_t
CstringValueSize(const char *p)
{
	return strlen(p) + 1;
}

/*
 * Copies the variable-length values of an output column (pointers already
 * in output order) into one new arena in that order, so that emitting rows
 * reads them sequentially.  The old copies stay where they are (arena
 * chunks, or staged shared memory) until the store is reset.
 */
static void
PackValues(GpuopsRowStore *store, int c, uint64 n)
{
	GpuopsValueSize size = store->cols[c].typlen == -2 ? CstringValueSize : VarlenaValueSize;
	GpuopsValuePack pack;
	char *arena;
	GpuopsStatus rc;

	if (n == 0)
		return;
	rc = gpuops_host_value_bytes((char *const *) store->out_values[c], store->out_nulls[c], n, size,
								 &pack);
	if (rc == GPUOPS_OK)
	{
		arena = AllocOutput(store, pack.bytes);
		rc = gpuops_host_pack_values((char **) store->out_values[c], store->out_nulls[c], n, size,
									 &pack, arena);
	}
	if (rc != GPUOPS_OK)
		GpuopsRaiseStatus("reordering result values", rc);
}

void
GpuopsRowStorePermute(GpuopsRowStore *store, const uint32 *order, uint64 n)
{
	Assert(!store->permuted && n <= store->nrows);
	store->out_values = (char **) MemoryContextAllocZero(store->cxt,
														 sizeof(char *) * Max(store->ncols, 1));
	store->out_nulls = (uint8 **) MemoryContextAllocZero(store->cxt,
														 sizeof(uint8 *) * Max(store->ncols, 1));
	{
		GpuopsGatherColumn *gc = (GpuopsGatherColumn *) palloc(sizeof(GpuopsGatherColumn) *
															   Max(store->ncols, 1));
		GpuopsStatus rc;

		for (int c = 0; c < store->ncols; c++)
		{
			gc[c].batch_values = GpuopsRowStoreColumnBatches(store, c);
			gc[c].width = store->cols[c].width;
			gc[c].out = AllocOutput(store, Max(n, 1) * store->cols[c].width);
			store->out_values[c] = gc[c].out;
		}
		rc = gpuops_host_gather(gc, store->ncols, order, n, GPUOPS_BATCH_SHIFT);
		if (rc != GPUOPS_OK)
			GpuopsRaiseStatus("reordering result columns", rc);
		for (int c = 0; c < store->ncols; c++)
			pfree((void *) gc[c].batch_values);
		pfree(gc);
	}
	for (int c = 0; c < store->ncols; c++)
	{
		bool any_null = false;

		for (int b = 0; b < store->nbatches; b++)
			any_null |= store->batches[b]->nulls[c] != NULL;
		if (any_null)
		{
			uint8 *bm = (uint8 *) MemoryContextAllocHuge(store->cxt, (Max(n, 1) + 7) / 8);

			memset(bm, 0, (n + 7) / 8);
			for (uint64 i = 0; i < n; i++)
			{
				uint32 r = order[i];

				if (GpuopsBatchIsNull(store->batches[r >> GPUOPS_BATCH_SHIFT], c,
									  r & (GPUOPS_BATCH_ROWS - 1)))
					bm[i >> 3] |= (uint8) (1 << (i & 7));
			}
			store->out_nulls[c] = bm;
		}
		if (store->cols[c].by_pointer)
			PackValues(store, c, n);
		/* the batch arrays of this column are not needed any more */
		for (int b = 0; b < store->nbatches; b++)
		{
			GpuopsBatch *batch = store->batches[b];

			if (!batch->foreign)
			{
				pfree(batch->values[c]);
				if (batch->nulls[c])
					pfree(batch->nulls[c]);
			}
			batch->values[c] = NULL;
			batch->nulls[c] = NULL;
		}
	}
	store->permuted = true;
	store->out_rows = n;
}

/*
 * Not inline: GCC 12 drops __builtin_prefetch from this loop once it is
 * inlined into a caller (checked in the generated code).
 */
void
GpuopsRowStorePrefetchOutput(const GpuopsRowStore *store, uint64 i)
{
	if (i >= store->out_rows)
		return;
	for (int c = 0; c < store->ncols; c++)
	{
		if (store->cols[c].by_pointer)
			__builtin_prefetch(((char *const *) store->out_values[c])[i]);
	}
}

void
GpuopsRowStoreFetchOutput(GpuopsRowStore *store, uint64 i, TupleTableSlot *slot)
{
	/* locals: the bool stores below would make the compiler reload store's fields */
	const int ncols = store->ncols;
	const GpuopsColumnDesc *cols = store->cols;
	char *const *out_values = store->out_values;
	uint8 *const *out_nulls = store->out_nulls;
	Datum *values = slot->tts_values;
	bool *isnull = slot->tts_isnull;

	ExecClearTuple(slot);
	for (int c = 0; c < ncols; c++)
	{
		const GpuopsColumnDesc *col = &cols[c];
		const uint8 *bm = out_nulls[c];

		if (bm && (bm[i >> 3] & (1 << (i & 7))))
		{
			values[c] = (Datum) 0;
			isnull[c] = true;
			continue;
		}
		isnull[c] = false;
		values[c] = GpuopsColumnDatum(col, out_values[c] + i * col->width);
	}
	ExecStoreVirtualTuple(slot);
}

void
GpuopsRowStoreFetchRow(const GpuopsRowStore *store, uint64 row, TupleTableSlot *slot)
{
	ExecClearTuple(slot);
	for (int c = 0; c < slot->tts_tupleDescriptor->natts && c < store->ncols; c++)
		slot->tts_values[c] = GpuopsRowStoreDatum(store, row, c, &slot->tts_isnull[c]);
	ExecStoreVirtualTuple(slot);
}

void
GpuopsRowStoreKeep(GpuopsRowStore *store, const uint32 *order, uint64 n, TupleTableSlot *scratch)
{
	GpuopsRowStore kept = *store;

	Assert(!store->permuted);
	kept.cxt = AllocSetContextCreate(MemoryContextGetParent(store->cxt), "gpuops row store",
									 ALLOCSET_DEFAULT_SIZES);
	kept.batches = NULL;
	kept.nbatches = kept.maxbatches = 0;
	kept.nrows = 0;
	kept.arena = NULL;
	kept.arena_used = kept.arena_size = 0;
	kept.arena_chunks = NULL;
	kept.arena_sizes = NULL;
	kept.arena_nchunks = kept.arena_maxchunks = kept.arena_current = 0;
	for (uint64 i = 0; i < n; i++)
	{
		uint64 row = order[i];

		GpuopsRowStoreFetchRow(store, row, scratch);
		GpuopsBatchAppendSlot(&kept, GpuopsRowStoreOpenBatch(&kept), scratch);
	}
	ExecClearTuple(scratch);
	MemoryContextDelete(store->cxt);
	*store = kept;
}
