/*
 * batch.cpp
 *    Column batches and row stores (batch.h): a store's life, its batches,
 *    and rows appended to them.  Their sources are in batch_sources.cpp;
 *    a store's rows going out in an order are in batch_output.cpp.
 */
extern "C" {
#include "postgres.h"

#include "access/detoast.h"
#include "access/tupmacs.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "utils/expandeddatum.h"
#include "utils/memutils.h"
}

#include "batch.h"
#include "device.h"
#include "gpuops_device.h"

#define ARENA_CHUNK (1024 * 1024)
#define FIRST_CAPACITY 1024

void
GpuopsRowStoreInit(GpuopsRowStore *store, TupleDesc desc, MemoryContext parent)
{
	memset(store, 0, sizeof(*store));
	store->cxt = AllocSetContextCreate(parent, "gpuops row store", ALLOCSET_DEFAULT_SIZES);
	store->ncols = desc->natts;
	store->ninput = desc->natts;
	store->cols = (GpuopsColumnDesc *) MemoryContextAllocZero(
		parent, sizeof(GpuopsColumnDesc) * Max(desc->natts, 1));
	for (int c = 0; c < desc->natts; c++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, c);
		GpuopsColumnDesc *col = &store->cols[c];

		col->typlen = att->attlen;
		col->typbyval = att->attbyval;
		col->typalign = att->attalign;
		if (att->attlen > 0)
		{
			col->width = att->attbyval ? att->attlen
									   : att_align_nominal(att->attlen, att->attalign);
			col->by_pointer = false;
		}
		else
		{
			col->width = sizeof(char *);
			col->by_pointer = true;
		}
	}
}

void
GpuopsRowStoreSetInputColumns(GpuopsRowStore *store, int n)
{
	Assert(n >= 0 && n <= store->ncols && store->nrows == 0);
	store->ninput = n;
}

void
GpuopsRowStoreReset(GpuopsRowStore *store)
{
	MemoryContextReset(store->cxt);
	store->batches = NULL;
	store->nbatches = store->maxbatches = 0;
	store->nrows = 0;
	store->arena = NULL;
	store->arena_used = store->arena_size = 0;
	store->arena_chunks = NULL;
	store->arena_sizes = NULL;
	store->arena_nchunks = store->arena_maxchunks = store->arena_current = 0;
	store->foreign_bytes = 0;
	store->permuted = false;
	store->out_rows = 0;
	store->out_values = NULL;
	store->out_nulls = NULL;
}

void
GpuopsRowStoreRecycle(GpuopsRowStore *store)
{
	if (store->nbatches > 1 || (store->nbatches == 1 && store->batches[0]->foreign) ||
		store->permuted)
		elog(ERROR, "gpuops: only a store of one batch of its own can be recycled");
	if (store->nbatches == 1)
	{
		GpuopsBatch *batch = store->batches[0];

		for (int c = 0; c < store->ncols; c++)
			if (batch->nulls[c])
				memset(batch->nulls[c], 0, (batch->capacity + 7) / 8);
		batch->nrows = 0;
	}
	store->nrows = 0;
	store->arena_current = 0;
	store->arena = store->arena_nchunks > 0 ? store->arena_chunks[0] : NULL;
	store->arena_size = store->arena_nchunks > 0 ? store->arena_sizes[0] : 0;
	store->arena_used = 0;
}

void
GpuopsRowStoreFree(GpuopsRowStore *store)
{
	if (store->cxt)
		MemoryContextDelete(store->cxt);
	store->cxt = NULL;
}

Size
GpuopsRowStoreMemory(GpuopsRowStore *store)
{
	return MemoryContextMemAllocated(store->cxt, true);
}

static GpuopsBatch *NewBatch(GpuopsRowStore *store);

static void
BatchGrow(GpuopsRowStore *store, GpuopsBatch *batch, uint32 capacity)
{
	for (int c = 0; c < store->ncols; c++)
	{
		Size bytes = (Size) capacity * store->cols[c].width;

		batch->values[c] = (char *) (batch->values[c] ? repalloc_huge(batch->values[c], bytes)
													  : MemoryContextAllocHuge(store->cxt, bytes));
		if (batch->nulls[c])
		{
			Size old = (batch->capacity + 7) / 8;
			Size now = (capacity + 7) / 8;

			batch->nulls[c] = (uint8 *) repalloc(batch->nulls[c], now);
			memset(batch->nulls[c] + old, 0, now - old);
		}
	}
	batch->capacity = capacity;
}

GpuopsBatch *
GpuopsRowStoreOpenBatch(GpuopsRowStore *store)
{
	GpuopsBatch *batch;

	if (store->nbatches > 0)
	{
		batch = store->batches[store->nbatches - 1];
		if (batch->nrows < GPUOPS_BATCH_ROWS)
			return batch;
	}
	batch = NewBatch(store);
	/* the first batch grows from small, so tiny inputs stay tiny */
	BatchGrow(store, batch, store->nbatches == 1 ? FIRST_CAPACITY : GPUOPS_BATCH_ROWS);
	return batch;
}

/* A new slot in the batch array. */
static GpuopsBatch *
NewBatch(GpuopsRowStore *store)
{
	GpuopsBatch *batch;

	if (store->nbatches == store->maxbatches)
	{
		int n = Max(16, store->maxbatches * 2);

		store->batches = (GpuopsBatch **) (store->batches
											   ? repalloc(store->batches, n * sizeof(GpuopsBatch *))
											   : MemoryContextAlloc(store->cxt,
																	n * sizeof(GpuopsBatch *)));
		store->maxbatches = n;
	}
	batch = (GpuopsBatch *) MemoryContextAllocZero(store->cxt, sizeof(GpuopsBatch));
	batch->values = (char **) MemoryContextAllocZero(store->cxt,
													 sizeof(char *) * Max(store->ncols, 1));
	batch->nulls = (uint8 **) MemoryContextAllocZero(store->cxt,
													 sizeof(uint8 *) * Max(store->ncols, 1));
	store->batches[store->nbatches++] = batch;
	return batch;
}

void
GpuopsRowStoreAdoptBatch(GpuopsRowStore *store, char **values, uint8 **nulls, Size bytes)
{
	GpuopsBatch *batch;

	/* an empty batch opened for rows that never came takes no place */
	if (store->nbatches > 0 && store->batches[store->nbatches - 1]->nrows == 0)
		store->nbatches--;
	if (store->nbatches > 0 && store->batches[store->nbatches - 1]->nrows < GPUOPS_BATCH_ROWS)
		elog(ERROR, "gpuops: a full batch adopted after a partial one");
	if (store->ninput != store->ncols)
		elog(ERROR, "gpuops: a batch adopted into a store with computed columns");
	batch = NewBatch(store);
	for (int c = 0; c < store->ncols; c++)
	{
		batch->values[c] = values[c];
		batch->nulls[c] = nulls[c];
	}
	batch->nrows = batch->capacity = GPUOPS_BATCH_ROWS;
	batch->foreign = true;
	store->nrows += GPUOPS_BATCH_ROWS;
	store->foreign_bytes += bytes;
}

void
GpuopsRowStoreAppendColumns(GpuopsRowStore *store, char *const *values, uint8 *const *nulls,
							uint32 n)
{
	for (uint32 done = 0; done < n;)
	{
		GpuopsBatch *batch = GpuopsRowStoreOpenBatch(store);
		uint32 at = batch->nrows;
		uint32 take = Min(n - done, GPUOPS_BATCH_ROWS - at);

		if (at + take > batch->capacity)
			BatchGrow(store, batch, GPUOPS_BATCH_ROWS);
		for (int c = 0; c < store->ninput; c++)
		{
			Size w = store->cols[c].width;

			memcpy(batch->values[c] + (Size) at * w, values[c] + (Size) done * w, (Size) take * w);
			if (nulls[c] == NULL)
				continue;
			for (uint32 i = 0; i < take; i++)
			{
				uint32 src = done + i;
				uint32 dst = at + i;

				if ((nulls[c][src >> 3] & (1 << (src & 7))) == 0)
					continue;
				if (batch->nulls[c] == NULL)
					batch->nulls[c] = (uint8 *) MemoryContextAllocZero(store->cxt,
																	   (batch->capacity + 7) / 8);
				batch->nulls[c][dst >> 3] |= (uint8) (1 << (dst & 7));
			}
		}
		batch->nrows += take;
		store->nrows += take;
		done += take;
	}
}

static char *
ArenaAlloc(GpuopsRowStore *store, Size len)
{
	Size need = MAXALIGN(len);
	char *p;

	/* after a recycle: the next chunk already there, when it is large enough */
	if (store->arena != NULL && store->arena_used + need > store->arena_size &&
		store->arena_current + 1 < store->arena_nchunks &&
		store->arena_sizes[store->arena_current + 1] >= need)
	{
		store->arena_current++;
		store->arena = store->arena_chunks[store->arena_current];
		store->arena_size = store->arena_sizes[store->arena_current];
		store->arena_used = 0;
	}
	if (store->arena == NULL || store->arena_used + need > store->arena_size)
	{
		Size size = Max((Size) ARENA_CHUNK, need);

		if (store->arena_nchunks == store->arena_maxchunks)
		{
			int n = Max(16, store->arena_maxchunks * 2);

			store->arena_chunks = (char **) (store->arena_chunks
												 ? repalloc(store->arena_chunks, n * sizeof(char *))
												 : MemoryContextAlloc(store->cxt,
																	  n * sizeof(char *)));
			store->arena_sizes = (Size *) (store->arena_sizes
											   ? repalloc(store->arena_sizes, n * sizeof(Size))
											   : MemoryContextAlloc(store->cxt, n * sizeof(Size)));
			store->arena_maxchunks = n;
		}
		store->arena = (char *) MemoryContextAllocHuge(store->cxt, size);
		store->arena_size = size;
		store->arena_used = 0;
		/* a chunk not reused goes at the end: later recycles reach it last */
		store->arena_chunks[store->arena_nchunks] = store->arena;
		store->arena_sizes[store->arena_nchunks] = size;
		store->arena_current = store->arena_nchunks++;
	}
	p = store->arena + store->arena_used;
	store->arena_used += need;
	return p;
}

/* Copies a by-reference variable-length datum into the arena. */
static char *
CopyVarlen(GpuopsRowStore *store, const GpuopsColumnDesc *col, Datum d)
{
	char *src = DatumGetPointer(d);
	char *dst;

	if (col->typlen == -2)
	{
		Size len = strlen(src) + 1;

		dst = ArenaAlloc(store, len);
		memcpy(dst, src, len);
		return dst;
	}
	if (VARATT_IS_EXTERNAL_EXPANDED(src))
	{
		/* flatten expanded objects; they live in memory that goes away */
		ExpandedObjectHeader *eoh = DatumGetEOHP(d);
		Size len = EOH_get_flat_size(eoh);

		dst = ArenaAlloc(store, len);
		EOH_flatten_into(eoh, dst, len);
		return dst;
	}
	if (VARATT_IS_EXTERNAL_INDIRECT(src))
	{
		struct varlena *flat = detoast_external_attr((struct varlena *) src);
		Size len = VARSIZE_ANY(flat);

		dst = ArenaAlloc(store, len);
		memcpy(dst, flat, len);
		pfree(flat);
		return dst;
	}
	/* plain, compressed or on-disk TOAST pointer: copy as is, like tuplesort */
	{
		Size len = VARSIZE_ANY(src);

		dst = ArenaAlloc(store, len);
		memcpy(dst, src, len);
		return dst;
	}
}

void
GpuopsBatchAppendValues(GpuopsRowStore *store, GpuopsBatch *batch, const Datum *values,
						const bool *isnull)
{
	uint32 i;

	Assert(batch->nrows < GPUOPS_BATCH_ROWS);
	if (batch->nrows == batch->capacity)
		BatchGrow(store, batch, Min(batch->capacity * 2, GPUOPS_BATCH_ROWS));
	i = batch->nrows;
	for (int c = 0; c < store->ninput; c++)
	{
		const GpuopsColumnDesc *col = &store->cols[c];
		char *dst = batch->values[c] + (Size) i * col->width;
		Datum d = values[c];

		if (isnull[c])
		{
			if (batch->nulls[c] == NULL)
				batch->nulls[c] = (uint8 *) MemoryContextAllocZero(store->cxt,
																   (batch->capacity + 7) / 8);
			batch->nulls[c][i >> 3] |= (uint8) (1 << (i & 7));
			memset(dst, 0, col->width); /* staged keys of NULL rows are zero */
			continue;
		}
		if (col->typbyval)
			store_att_byval(dst, d, col->typlen);
		else if (!col->by_pointer)
			memcpy(dst, DatumGetPointer(d), col->typlen);
		else
		{
			char *p = CopyVarlen(store, col, d);

			memcpy(dst, &p, sizeof(char *));
		}
	}
	batch->nrows++;
	store->nrows++;
}

void
GpuopsBatchAppendSlot(GpuopsRowStore *store, GpuopsBatch *batch, TupleTableSlot *slot)
{
	slot_getallattrs(slot);
	GpuopsBatchAppendValues(store, batch, slot->tts_values, slot->tts_isnull);
}

const char **
GpuopsRowStoreColumnBatches(const GpuopsRowStore *store, int col)
{
	const char **bv = (const char **) palloc(sizeof(char *) * Max(store->nbatches, 1));

	for (int b = 0; b < store->nbatches; b++)
		bv[b] = store->batches[b]->values[col];
	return bv;
}
