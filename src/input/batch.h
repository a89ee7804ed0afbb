/*
 * batch.h
 *    Columnar batches of rows pulled from a child plan, and the batch-source
 *    interface that produces them.
 *
 * A GpuopsRowStore holds an operator's input as a sequence of column batches
 * of GPUOPS_BATCH_ROWS rows each: fixed-width values packed at their native
 * width (so a key column is one contiguous array that a single memcpy stages
 * into a pinned buffer), a null bitmap per column, and a variable-length
 * arena for varlena and cstring values.  Rows are numbered 0..n-1 in arrival
 * order; row r lives in batch r >> GPUOPS_BATCH_SHIFT.  Rows are turned back
 * into tuples by filling a virtual slot whose datums point into the store.
 *
 * A GpuopsBatchSource fills batches: from a child plan through the
 * executor, from a sequential scan's heap pages directly (heap_source.cpp),
 * or from parallel workers' staged chunks (gpu_stage.cpp).
 */
#ifndef GPUOPS_BATCH_H
#define GPUOPS_BATCH_H

extern "C" {
#include "postgres.h"

#include "access/tupdesc.h"
#include "access/tupmacs.h"
#include "executor/tuptable.h"
#include "nodes/execnodes.h"
#include "utils/sortsupport.h"
}

#define GPUOPS_BATCH_SHIFT 16
#define GPUOPS_BATCH_ROWS (1U << GPUOPS_BATCH_SHIFT)

typedef struct GpuopsColumnDesc
{
	int16 typlen;
	bool typbyval;
	char typalign;
	int width;		 /* bytes per row in values[] */
	bool by_pointer; /* values[] holds pointers into the arena */
} GpuopsColumnDesc;

typedef struct GpuopsBatch
{
	uint32 nrows;
	uint32 capacity; /* grows to GPUOPS_BATCH_ROWS */
	char **values;	 /* per column: capacity * width bytes */
	uint8 **nulls;	 /* per column: bitmap, bit set = NULL; NULL if none yet */
	bool foreign;	 /* values and nulls live in memory the store does not
								 * own (GpuopsRowStoreAdoptBatch): never freed by it */
} GpuopsBatch;

typedef struct GpuopsRowStore
{
	MemoryContext cxt; /* owns every batch and the arena */
	int ncols;
	/*
	 * Columns rows are appended with: the first ninput.  The others
	 * (GpuSort's computed keys) are allocated but filled by their owner,
	 * after the fact, for every row (GpuopsRowStoreKeep does not copy them).
	 */
	int ninput;
	GpuopsColumnDesc *cols;
	GpuopsBatch **batches;
	int nbatches;
	int maxbatches;
	uint64 nrows;
	char *arena; /* current arena chunk */
	Size arena_used;
	Size arena_size;
	/* every arena chunk, in order, for GpuopsRowStoreRecycle to fill again */
	char **arena_chunks;
	Size *arena_sizes;
	int arena_nchunks;
	int arena_maxchunks;
	int arena_current;	/* index of `arena` in arena_chunks */
	Size foreign_bytes; /* what the adopted batches take where they live */

	/*
	 * After GpuopsRowStorePermute: every column as one contiguous array in
	 * output order (row i of the output at index i), so rows are emitted by
	 * sequential reads.  The batches' own arrays are freed by then.
	 */
	bool permuted;
	uint64 out_rows;   /* rows in output order */
	char **out_values; /* per column */
	uint8 **out_nulls; /* per column bitmap, NULL when no NULLs */
} GpuopsRowStore;

extern void GpuopsRowStoreInit(GpuopsRowStore *store, TupleDesc desc, MemoryContext parent);
extern void GpuopsRowStoreReset(GpuopsRowStore *store);

/* Rows are appended with the first n columns only (batch.h, ninput). */
extern void GpuopsRowStoreSetInputColumns(GpuopsRowStore *store, int n);
extern void GpuopsRowStoreFree(GpuopsRowStore *store);

/*
 * Empties a store of at most one batch (its own, not adopted) but keeps that
 * batch's arrays and the arena's chunks for the rows that follow: a staging
 * buffer filled and flushed many times allocates (and faults in) its memory
 * once, not once per fill.
 */
extern void GpuopsRowStoreRecycle(GpuopsRowStore *store);

/* The batch rows are appended to, starting a new one when the last is full. */
extern GpuopsBatch *GpuopsRowStoreOpenBatch(GpuopsRowStore *store);

/*
 * Adds a full batch (GPUOPS_BATCH_ROWS rows) whose column arrays and null
 * bitmaps live elsewhere (shared memory that outlives the store's use),
 * without copying: values[c] and nulls[c] (NULL for no NULLs) per column, in
 * the store's layout; `bytes`: what they take there (foreign_bytes).  Only
 * while the last batch is full (or none exists).
 */
extern void GpuopsRowStoreAdoptBatch(GpuopsRowStore *store, char **values, uint8 **nulls,
									 Size bytes);

/*
 * Appends n rows given as column arrays in the store's layout (by_pointer
 * columns: pointers that stay valid as long as the store is used), copying
 * them into the store's own batches.
 */
extern void GpuopsRowStoreAppendColumns(GpuopsRowStore *store, char *const *values,
										uint8 *const *nulls, uint32 n);

/* Appends the (fully deformed) slot as the next row of batch. */
extern void GpuopsBatchAppendSlot(GpuopsRowStore *store, GpuopsBatch *batch, TupleTableSlot *slot);

/* Appends one row given as a value and a null flag per column. */
extern void GpuopsBatchAppendValues(GpuopsRowStore *store, GpuopsBatch *batch, const Datum *values,
									const bool *isnull);

/*
 * Reorders every column into output order: output row i is input row
 * order[i], for the first n (<= nrows) output rows.  One gather pass per
 * column, tight enough that many cache misses are in flight at once;
 * afterwards use GpuopsRowStoreFetchOutput.
 */
extern void GpuopsRowStorePermute(GpuopsRowStore *store, const uint32 *order, uint64 n);

/*
 * Keeps only rows order[0..n), in that order, as rows 0..n-1 of a new set of
 * batches (a bounded sort's compaction); the old rows' memory is freed.
 * scratch is a virtual slot of the store's descriptor.
 */
extern void GpuopsRowStoreKeep(GpuopsRowStore *store, const uint32 *order, uint64 n,
							   TupleTableSlot *scratch);

/*
 * Stores row `row` (before GpuopsRowStorePermute) into the virtual slot:
 * its first natts columns (a slot of the child's columns may have fewer
 * than the store).
 */
extern void GpuopsRowStoreFetchRow(const GpuopsRowStore *store, uint64 row, TupleTableSlot *slot);

/* Stores output row i (after GpuopsRowStorePermute) into the virtual slot. */
extern void GpuopsRowStoreFetchOutput(GpuopsRowStore *store, uint64 i, TupleTableSlot *slot);

static inline bool
GpuopsBatchIsNull(const GpuopsBatch *batch, int col, uint32 i)
{
	const uint8 *bm = batch->nulls[col];

	return bm != NULL && (bm[i >> 3] & (1 << (i & 7))) != 0;
}

/* The datum stored at `src` for a column: by value, inline, or in the arena. */
static inline Datum
GpuopsColumnDatum(const GpuopsColumnDesc *col, const char *src)
{
	char *p;

	if (col->typbyval)
		return fetch_att(src, true, col->typlen);
	if (!col->by_pointer)
		return PointerGetDatum(src);
	memcpy(&p, src, sizeof(char *));
	return PointerGetDatum(p);
}

/* Column `col` of row i of a batch (before GpuopsRowStorePermute). */
static inline Datum
GpuopsBatchDatum(const GpuopsRowStore *store, const GpuopsBatch *batch, int col, uint32 i,
				 bool *isnull)
{
	*isnull = GpuopsBatchIsNull(batch, col, i);
	if (*isnull)
		return (Datum) 0;
	return GpuopsColumnDatum(&store->cols[col],
							 batch->values[col] + (Size) i * store->cols[col].width);
}

/*
 * Starts loading the variable-length values of output row i into the cache:
 * after the permutation they sit in the arena in input order, so reading
 * them in output order misses the cache on every row unless fetched ahead.
 */
extern void GpuopsRowStorePrefetchOutput(const GpuopsRowStore *store, uint64 i);

/* Column `col` of row `row` (before GpuopsRowStorePermute). */
static inline Datum
GpuopsRowStoreDatum(const GpuopsRowStore *store, uint64 row, int col, bool *isnull)
{
	return GpuopsBatchDatum(store, store->batches[row >> GPUOPS_BATCH_SHIFT], col,
							(uint32) (row & (GPUOPS_BATCH_ROWS - 1)), isnull);
}

/*
 * Column `col` of every batch, in batch order (palloc'd): the form the
 * host helpers (gpuops_host_gather, gpuops_host_merge_words) read.
 */
extern const char **GpuopsRowStoreColumnBatches(const GpuopsRowStore *store, int col);

/* Bytes of memory the store holds. */
extern Size GpuopsRowStoreMemory(GpuopsRowStore *store);

/*
 * A bounded sort's cut: once it holds `bound` rows whose first key is at
 * most `value`, a row whose first key sorts after `value` can never be
 * among the rows it returns.  The source tests that key as it reads a row
 * (before copying the row's other columns) and drops such rows.  Rows
 * equal to `value` are kept: later keys may still put them first.
 */
typedef struct GpuopsRowCut
{
	bool active;	  /* `value` is set */
	int col;		  /* the first sort key's column */
	SortSupport ssup; /* its comparator: order, NULLS FIRST/LAST */
	Datum value;
	bool isnull;
	uint64 dropped; /* rows dropped by the cut */
} GpuopsRowCut;

static inline bool
GpuopsRowCutDrops(GpuopsRowCut *cut, Datum d, bool isnull)
{
	if (ApplySortComparator(d, isnull, cut->value, cut->isnull, cut->ssup) <= 0)
		return false;
	cut->dropped++;
	return true;
}

typedef struct GpuopsBatchSource GpuopsBatchSource;

struct GpuopsBatchSource
{
	/*
	 * Appends rows to batch until it is full or the input ends.  Returns
	 * false once the input is exhausted.
	 */
	bool (*fill)(GpuopsBatchSource *src, GpuopsRowStore *store, GpuopsBatch *batch);
	void (*rescan)(GpuopsBatchSource *src);
	uint64 direct_rows; /* rows read from heap pages (heap_source.cpp) */
	GpuopsRowCut *cut;	/* rows not to append, when active; NULL = none */
};

/*
 * A source reading a child plan's rows: a plain sequential scan's heap
 * pages directly where heap_source.cpp can, else through ExecProcNode.
 */
extern GpuopsBatchSource *GpuopsChildPlanSource(PlanState *child);

/* A source reading the tuples of a child plan through ExecProcNode. */
extern GpuopsBatchSource *GpuopsExecSource(PlanState *child);

/*
 * heap_source.cpp: a source reading the heap pages of a child that is a
 * plain sequential scan (no quals, only column references), or NULL.
 */
extern GpuopsBatchSource *GpuopsHeapScanSource(PlanState *child);

/*
 * EXPLAIN ANALYZE VERBOSE: rows this process read from heap pages directly
 * through the node's sources (b may be NULL).
 */
struct ExplainState;
extern void GpuopsExplainDirectRows(struct ExplainState *es, const GpuopsBatchSource *a,
									const GpuopsBatchSource *b);

#endif
