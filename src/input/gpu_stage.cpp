/*
 * gpu_stage.cpp
 *    GpuStage: its execution in each process, and the collection of its
 *    chunks by the leader (gpu_stage.h); its path and plan are in
 *    gpu_stage_path.cpp.
 *
 * A chunk is one batch of rows in the row store's column layout, flattened
 * into one allocation: a header, per column its values (fixed-width values
 * inline; variable-length ones as offsets from the chunk's start into its
 * tail, turned into pointers by the leader, which maps the chunk at an
 * address of its own) and its null bitmap.
 */
extern "C" {
#include "postgres.h"

#include "access/parallel.h"
#include "access/xact.h"
#include "pg_compat.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/nodeFuncs.h"
#include "storage/condition_variable.h"
#include "storage/spin.h"
#include "utils/dsa.h"
#include "utils/memutils.h"
#include "utils/wait_event.h"
}

#include "batch.h"
#include "boundary.h"
#include "gpu_stage.h"
#include "guarded_scan.h"
#include "node.h"

/* in shared memory (the parallel query's DSM), one per GpuStage */
typedef struct GpuStageShared
{
	slock_t mutex;
	dsa_pointer head; /* the chunks, newest first */
	uint64 rows;
	uint64 bytes;
	uint32 chunks;
	/* streaming (GpuStageStream): full chunks in the list, not yet taken */
	uint32 pending_full;
	bool streaming; /* the leader takes chunks: workers wait while held > cap */
	uint64 cap;
	uint64 held; /* bytes of chunks allocated and not yet freed, and their peak */
	uint64 peak;
	ConditionVariable freed; /* broadcast when the leader frees chunks or stops taking */
} GpuStageShared;

typedef struct GpuStageChunk
{
	dsa_pointer next;
	uint32 nrows;
	int32 ncols;
	bool resolved; /* the leader turned offsets into pointers */
	Size size;
	Size offsets[FLEXIBLE_ARRAY_MEMBER]; /* per column: values, then nulls (0: none) */
} GpuStageChunk;

/* the node (node.h): one input, whose store holds the batch being filled */
struct GpuStageState : GpuopsNode
{
	bool done;
	GpuStageShared *shared;	 /* NULL without parallel mode */
	dsa_area *area;			 /* leader: the area its chunks are in */
	MemoryContext local_cxt; /* without parallel mode: the chunks */
	List *local_chunks;
	/* totals, kept for EXPLAIN when the shared memory goes away */
	uint64 rows;
	uint64 bytes;
	uint32 chunks;
	/* streaming (leader): the consumer, and the chunks it took and holds */
	GpuStageConsumer consume;
	void *consume_arg;
	Size cap;
	uint64 *taken; /* dsa_pointers, or local chunk addresses (taken_local) */
	bool taken_local;
	int ntaken;
	int maxtaken;
	Size taken_bytes;
	uint64 streamed;	 /* chunks taken while the input was being read, for EXPLAIN */
	GatherState *gather; /* the Gather above (GpuStageSetGather), for its leader's share */
	uint64 peak;		 /* the shared peak, kept when the shared memory goes away */
};

extern const CustomExecMethods gpu_stage_exec_methods;

static const Size CHUNK_ALIGN = 16;

static Size
VarlenSize(const GpuopsColumnDesc *col, const char *p)
{
	return col->typlen == -2 ? strlen(p) + 1 : VARSIZE_ANY(p);
}

/*
 * A worker, after publishing a chunk: while the leader streams and the
 * chunks not yet freed (taken or not) exceed the cap, wait for it to park
 * and free them (interruptible: the leader's error or cancel ends the
 * workers).  Each process adds at most the chunk it fills meanwhile.
 */
static void
WaitForTaker(GpuStageShared *shared)
{
	for (;;)
	{
		bool wait;

		SpinLockAcquire(&shared->mutex);
		wait = shared->streaming && shared->held > shared->cap;
		SpinLockRelease(&shared->mutex);
		if (!wait)
			break;
		ConditionVariableSleep(&shared->freed, PG_WAIT_EXTENSION);
	}
	ConditionVariableCancelSleep();
}

/* Copies a batch into a new chunk: shared (area) or local. */
static void
Flush(GpuStageState *st, GpuopsBatch *batch)
{
	GpuopsRowStore *store = st->store();
	int ncols = store->ncols;
	uint32 n = batch->nrows;
	Size off = TYPEALIGN(CHUNK_ALIGN,
						 offsetof(GpuStageChunk, offsets) + sizeof(Size) * 2 * Max(ncols, 1));
	Size tail;
	Size size;
	dsa_area *area = st->shared ? st->css.ss.ps.state->es_query_dsa : NULL;
	dsa_pointer dp = InvalidDsaPointer;
	char *base;
	GpuStageChunk *ch;
	Size offsets[2 * 64];
	Size *offs = ncols <= 64 ? offsets : (Size *) palloc(sizeof(Size) * 2 * ncols);

	for (int c = 0; c < ncols; c++)
	{
		offs[2 * c] = off;
		off += TYPEALIGN(CHUNK_ALIGN, (Size) n * store->cols[c].width);
		offs[2 * c + 1] = batch->nulls[c] ? off : 0;
		if (batch->nulls[c])
			off += TYPEALIGN(CHUNK_ALIGN, (n + 7) / 8);
	}
	tail = off;
	for (int c = 0; c < ncols; c++)
	{
		const GpuopsColumnDesc *col = &store->cols[c];

		if (!col->by_pointer)
			continue;
		for (uint32 i = 0; i < n; i++)
		{
			const char *p;

			if (GpuopsBatchIsNull(batch, c, i))
				continue;
			memcpy(&p, batch->values[c] + (Size) i * sizeof(p), sizeof(p));
			off += MAXALIGN(VarlenSize(col, p));
		}
	}
	size = off;

	if (area != NULL)
	{
		dp = dsa_allocate_extended(area, size, DSA_ALLOC_HUGE);
		base = (char *) dsa_get_address(area, dp);
	}
	else
		base = (char *) MemoryContextAllocHuge(st->local_cxt, size);
	ch = (GpuStageChunk *) base;
	ch->next = InvalidDsaPointer;
	ch->nrows = n;
	ch->ncols = ncols;
	ch->resolved = false;
	ch->size = size;
	memcpy(ch->offsets, offs, sizeof(Size) * 2 * ncols);
	off = tail;
	for (int c = 0; c < ncols; c++)
	{
		const GpuopsColumnDesc *col = &store->cols[c];
		char *values = base + offs[2 * c];

		if (offs[2 * c + 1] != 0)
			memcpy(base + offs[2 * c + 1], batch->nulls[c], (n + 7) / 8);
		if (!col->by_pointer)
		{
			memcpy(values, batch->values[c], (Size) n * col->width);
			continue;
		}
		/* variable-length values: copied to the tail, the slot holds the offset */
		for (uint32 i = 0; i < n; i++)
		{
			const char *p;
			Size len;

			if (GpuopsBatchIsNull(batch, c, i))
			{
				memset(values + (Size) i * sizeof(Size), 0, sizeof(Size));
				continue;
			}
			memcpy(&p, batch->values[c] + (Size) i * sizeof(p), sizeof(p));
			len = VarlenSize(col, p);
			memcpy(base + off, p, len);
			memcpy(values + (Size) i * sizeof(Size), &off, sizeof(Size));
			off += MAXALIGN(len);
		}
	}
	if (offs != offsets)
		pfree(offs);

	if (area != NULL)
	{
		SpinLockAcquire(&st->shared->mutex);
		ch->next = st->shared->head;
		st->shared->head = dp;
		st->shared->rows += n;
		st->shared->bytes += size;
		st->shared->chunks++;
		st->shared->pending_full += n == GPUOPS_BATCH_ROWS;
		st->shared->held += size;
		st->shared->peak = Max(st->shared->peak, st->shared->held);
		SpinLockRelease(&st->shared->mutex);
		if (IsParallelWorker())
			WaitForTaker(st->shared);
	}
	else
	{
		MemoryContext old = MemoryContextSwitchTo(st->local_cxt);

		st->local_chunks = lappend(st->local_chunks, ch);
		MemoryContextSwitchTo(old);
		st->rows += n;
		st->bytes += size;
		st->chunks++;
	}
}

/* The leader starts or stops taking chunks as they come; workers wake to look again. */
static void
SetStreaming(GpuStageState *st, bool on)
{
	if (st->shared == NULL)
		return;
	SpinLockAcquire(&st->shared->mutex);
	st->shared->streaming = on;
	st->shared->cap = st->cap;
	SpinLockRelease(&st->shared->mutex);
	if (!on)
		ConditionVariableBroadcast(&st->shared->freed);
}

/* Whether full chunks wait to be taken. */
static bool
FullChunksWait(GpuStageState *st)
{
	bool any;

	if (st->shared == NULL)
	{
		ListCell *lc;

		foreach (lc, st->local_chunks)
			if (((GpuStageChunk *) lfirst(lc))->nrows == GPUOPS_BATCH_ROWS)
				return true;
		return false;
	}
	SpinLockAcquire(&st->shared->mutex);
	any = st->shared->pending_full > 0;
	SpinLockRelease(&st->shared->mutex);
	return any;
}

static TupleTableSlot *
ExecGpuStageImpl(CustomScanState *node)
{
	GpuStageState *st = (GpuStageState *) node;
	bool streaming = st->consume != NULL && !IsParallelWorker();

	if (streaming)
		SetStreaming(st, true);
	while (!st->done)
	{
		GpuopsBatch *batch;

		/* the consumer may stop taking (GpuStageStream with NULL) */
		if (streaming && st->consume == NULL)
		{
			SetStreaming(st, false);
			streaming = false;
		}
		/*
		 * Streaming: the workers' chunks first (they wait on the leader),
		 * the leader's own share of the input when none waits.
		 */
		if (streaming && FullChunksWait(st))
		{
			uint64 before = st->streamed;

			st->consume(st->consume_arg);
			CHECK_FOR_INTERRUPTS();
			if (st->streamed != before)
				continue;
		}
		batch = GpuopsRowStoreOpenBatch(st->store());

		st->done = !GpuopsNodeFill(st, 0, batch);
		if (batch->nrows == GPUOPS_BATCH_ROWS || (st->done && batch->nrows > 0))
		{
			Flush(st, batch);
			GpuopsRowStoreRecycle(st->store());
		}
		CHECK_FOR_INTERRUPTS();
	}
	/* the workers' last chunks stay for GpuStageCollect */
	if (streaming)
		SetStreaming(st, false);
	/* the rows went to shared memory: Gather carries none */
	return NULL;
}

void
GpuStageStream(GpuStageState *st, GpuStageConsumer consume, void *arg, Size cap)
{
	st->consume = consume;
	st->consume_arg = arg;
	st->cap = cap;
}

/* Remembers a taken chunk (a dsa_pointer, or a local chunk's address). */
static void
Remember(GpuStageState *st, uint64 chunk, Size bytes)
{
	if (st->ntaken == st->maxtaken)
	{
		int n = Max(64, st->maxtaken * 2);
		MemoryContext cxt = st->css.ss.ps.state->es_query_cxt;

		st->taken = (uint64 *) (st->taken ? repalloc(st->taken, sizeof(uint64) * n)
										  : MemoryContextAlloc(cxt, sizeof(uint64) * n));
		st->maxtaken = n;
	}
	st->taken_local = st->shared == NULL;
	st->taken[st->ntaken++] = chunk;
	st->taken_bytes += bytes;
	st->streamed++;
}

static void ChunkIntoStore(GpuopsRowStore *store, GpuStageChunk *ch);

/*
 * Whether GpuStageTake takes ch: a full chunk (a partial one is still
 * being filled), at least one, and more only while the bytes taken since
 * `before` stay under limit.
 */
static bool
TakesChunk(const GpuStageState *st, const GpuStageChunk *ch, uint32 full, Size before, Size limit)
{
	return ch->nrows == GPUOPS_BATCH_ROWS && (full == 0 || st->taken_bytes - before < limit);
}

Size
GpuStageTake(GpuStageState *st, GpuopsRowStore *store, Size limit)
{
	Size before = st->taken_bytes;

	if (st->shared != NULL && st->area != NULL)
	{
		dsa_pointer dp;
		dsa_pointer keep = InvalidDsaPointer;
		GpuStageChunk *keep_tail = NULL;
		uint32 full = 0;

		/*
		 * The list is taken whole under the lock and split outside it
		 * (dsa_get_address may map a segment); the partial chunks, and the
		 * full ones past the limit, go back.
		 */
		SpinLockAcquire(&st->shared->mutex);
		dp = st->shared->head;
		st->shared->head = InvalidDsaPointer;
		SpinLockRelease(&st->shared->mutex);
		while (DsaPointerIsValid(dp))
		{
			GpuStageChunk *ch = (GpuStageChunk *) dsa_get_address(st->area, dp);
			dsa_pointer next = ch->next;

			if (TakesChunk(st, ch, full, before, limit))
			{
				ChunkIntoStore(store, ch);
				Remember(st, (uint64) dp, ch->size);
				full++;
			}
			else
			{
				ch->next = keep;
				if (keep_tail == NULL)
					keep_tail = ch;
				keep = dp;
			}
			dp = next;
		}
		SpinLockAcquire(&st->shared->mutex);
		if (keep_tail != NULL)
		{
			keep_tail->next = st->shared->head;
			st->shared->head = keep;
		}
		st->shared->pending_full -= full;
		SpinLockRelease(&st->shared->mutex);
	}
	else if (st->shared == NULL)
	{
		List *keep = NIL;
		ListCell *lc;
		uint32 full = 0;
		MemoryContext old = MemoryContextSwitchTo(st->local_cxt);

		foreach (lc, st->local_chunks)
		{
			GpuStageChunk *ch = (GpuStageChunk *) lfirst(lc);

			if (TakesChunk(st, ch, full, before, limit))
			{
				ChunkIntoStore(store, ch);
				Remember(st, (uint64) (uintptr_t) ch, ch->size);
				full++;
			}
			else
				keep = lappend(keep, ch);
		}
		list_free(st->local_chunks);
		st->local_chunks = keep;
		MemoryContextSwitchTo(old);
	}
	return st->taken_bytes - before;
}

Size
GpuStageTakenBytes(GpuStageState *st)
{
	return st->taken_bytes;
}

void
GpuStageRelease(GpuStageState *st)
{
	for (int i = 0; i < st->ntaken; i++)
	{
		if (st->taken_local)
			pfree((void *) (uintptr_t) st->taken[i]);
		else if (st->area != NULL)
			dsa_free(st->area, (dsa_pointer) st->taken[i]);
	}
	if (st->shared != NULL && st->ntaken > 0)
	{
		SpinLockAcquire(&st->shared->mutex);
		st->shared->held -= st->taken_bytes;
		SpinLockRelease(&st->shared->mutex);
		ConditionVariableBroadcast(&st->shared->freed);
	}
	st->ntaken = 0;
	st->taken_bytes = 0;
}

/* A chunk's columns as the row store holds them: offsets become pointers. */
static void
ChunkColumns(GpuopsRowStore *store, GpuStageChunk *ch, char **values, uint8 **nulls)
{
	char *base = (char *) ch;

	if (ch->ncols != store->ncols)
		elog(ERROR, "GpuStage: a chunk of %d columns for a store of %d", ch->ncols, store->ncols);
	for (int c = 0; c < ch->ncols; c++)
	{
		values[c] = base + ch->offsets[2 * c];
		nulls[c] = ch->offsets[2 * c + 1] ? (uint8 *) base + ch->offsets[2 * c + 1] : NULL;
		if (!store->cols[c].by_pointer || ch->resolved)
			continue;
		for (uint32 i = 0; i < ch->nrows; i++)
		{
			Size off;
			char *p;

			if (nulls[c] && (nulls[c][i >> 3] & (1 << (i & 7))))
				continue;
			memcpy(&off, values[c] + (Size) i * sizeof(Size), sizeof(Size));
			p = base + off;
			memcpy(values[c] + (Size) i * sizeof(char *), &p, sizeof(char *));
		}
	}
	ch->resolved = true;
}

/* A chunk's rows into the store: a full one as a batch in place, a partial one copied. */
static void
ChunkIntoStore(GpuopsRowStore *store, GpuStageChunk *ch)
{
	char **values = (char **) palloc(sizeof(char *) * Max(ch->ncols, 1));
	uint8 **nulls = (uint8 **) palloc(sizeof(uint8 *) * Max(ch->ncols, 1));

	ChunkColumns(store, ch, values, nulls);
	if (ch->nrows == GPUOPS_BATCH_ROWS)
		GpuopsRowStoreAdoptBatch(store, values, nulls, ch->size);
	else
		GpuopsRowStoreAppendColumns(store, values, nulls, ch->nrows);
	pfree(values);
	pfree(nulls);
}

static void
Take(GpuopsRowStore *store, GpuStageChunk *ch, List **partial)
{
	if (ch->nrows == GPUOPS_BATCH_ROWS)
		ChunkIntoStore(store, ch);
	else
		*partial = lappend(*partial, ch);
}

void
GpuStageCollect(GpuStageState *st, GpuopsRowStore *store)
{
	List *partial = NIL;
	ListCell *lc;

	if (st->shared != NULL && st->area != NULL)
	{
		for (dsa_pointer dp = st->shared->head; DsaPointerIsValid(dp);)
		{
			GpuStageChunk *ch = (GpuStageChunk *) dsa_get_address(st->area, dp);

			Take(store, ch, &partial);
			dp = ch->next;
		}
	}
	foreach (lc, st->local_chunks)
		Take(store, (GpuStageChunk *) lfirst(lc), &partial);
	/* each process's last chunk is partial: copied, after the full ones */
	foreach (lc, partial)
	{
		ChunkIntoStore(store, (GpuStageChunk *) lfirst(lc));
		CHECK_FOR_INTERRUPTS();
	}
	list_free(partial);
}

static bool
FindDeviceNode(PlanState *ps, void *context)
{
	if (ps == NULL)
		return false;
	if (IsA(ps, CustomScanState))
	{
		const char *name = ((CustomScanState *) ps)->methods->CustomName;

		if (strncmp(name, "Gpu", 3) == 0 && strcmp(name, GPUSTAGE_NAME) != 0)
			return true;
	}
	/* PostgreSQL 15 declares walkers without prototypes */
	return planstate_tree_walker(ps, (bool (*)())(void (*)(void)) FindDeviceNode, context);
}

bool
GpuStageDeviceShared(GpuStageState *st)
{
	return IsInParallelMode() && (st == NULL || FindDeviceNode(st->input[0].ps, NULL));
}

Size
GpuStageBytes(GpuStageState *st)
{
	return (Size) (st->shared ? st->shared->bytes : st->bytes);
}

GpuStageState *
GpuStageBelow(PlanState *child)
{
	PlanState *below;

	if (child == NULL || !IsA(child, GatherState))
		return NULL;
	below = outerPlanState(child);
	if (below == NULL || !IsA(below, CustomScanState) ||
		((CustomScanState *) below)->methods != &gpu_stage_exec_methods)
		return NULL;
	return (GpuStageState *) below;
}

void
GpuStageSetGather(GpuStageState *stage, GatherState *gather)
{
	stage->gather = gather;
}

/* Frees the chunks kept in the leader's memory (no parallel mode), and their totals. */
static void
ForgetLocalChunks(GpuStageState *st)
{
	if (st->taken_local)
	{
		/* the taken ones are in local_cxt too */
		st->ntaken = 0;
		st->taken_bytes = 0;
	}
	MemoryContextReset(st->local_cxt);
	st->local_chunks = NIL;
	st->rows = st->bytes = 0;
	st->chunks = 0;
}

/* Frees the chunks of an earlier scan (rescan). */
static void
ForgetChunks(GpuStageState *st)
{
	GpuStageRelease(st);
	if (st->shared != NULL && st->area != NULL)
	{
		dsa_pointer dp = st->shared->head;

		while (DsaPointerIsValid(dp))
		{
			dsa_pointer next = ((GpuStageChunk *) dsa_get_address(st->area, dp))->next;

			dsa_free(st->area, dp);
			dp = next;
		}
		st->shared->head = InvalidDsaPointer;
		st->shared->rows = st->shared->bytes = 0;
		st->shared->chunks = 0;
		st->shared->pending_full = 0;
		st->shared->streaming = false;
		st->shared->held = 0;
	}
	ForgetLocalChunks(st);
}

static Node *
CreateGpuStageStateImpl(CustomScan *cscan)
{
	return (Node *) NewCustomScanState<GpuStageState>(cscan, &gpu_stage_exec_methods);
}

static void
BeginGpuStageImpl(CustomScanState *node, EState *estate, int eflags)
{
	GpuStageState *st = (GpuStageState *) node;

	GpuopsNodeBegin(st, estate, eflags, 1, NULL);
	st->local_cxt = AllocSetContextCreate(estate->es_query_cxt, "GpuStage chunks",
										  ALLOCSET_DEFAULT_SIZES);
}

static void
EndGpuStageImpl(CustomScanState *node)
{
	GpuopsNodeEnd((GpuStageState *) node);
}

static void
ReScanGpuStageImpl(CustomScanState *node)
{
	GpuStageState *st = (GpuStageState *) node;

	GpuopsNodeRescanParams(st);
	st->done = false;
	/* shared chunks are freed in ReInitializeDSM, before workers start again */
	ForgetLocalChunks(st);
	GpuopsNodeRestartInput(st, 0);
}

/*
 * Before the workers start: when the leader will take chunks, the workers
 * wait for it from their first chunk on.  Were streaming set only when the
 * leader first runs its own share (ExecGpuStageImpl), workers that started
 * earlier (the leader busy or descheduled) would fill chunks past the cap
 * unhindered, and the consumer's first take could exceed what it may park:
 * the rows then stayed in shared memory.  Only where Gather runs the
 * leader's share (need_to_scan_locally, from parallel_leader_participation
 * at its start): otherwise nobody takes, and the workers would wait forever.
 * On a rescan Gather sets need_to_scan_locally again only after the shared
 * memory (it is false once the leader's share ended): streaming then starts
 * with the leader's share, and the consumer's bounded takes (GpuStageTake)
 * still keep each park within its budget.
 */
static void
StreamFromStart(GpuStageState *st)
{
	if (st->consume != NULL && st->gather != NULL && st->gather->need_to_scan_locally)
		SetStreaming(st, true);
}

static Size
EstimateDSMGpuStageImpl(CustomScanState *, ParallelContext *)
{
	return sizeof(GpuStageShared);
}

static void
InitializeDSMGpuStageImpl(CustomScanState *node, ParallelContext *, void *coordinate)
{
	GpuStageState *st = (GpuStageState *) node;
	GpuStageShared *shared = (GpuStageShared *) coordinate;

	SpinLockInit(&shared->mutex);
	shared->head = InvalidDsaPointer;
	shared->rows = shared->bytes = 0;
	shared->chunks = 0;
	shared->pending_full = 0;
	shared->streaming = false;
	shared->cap = 0;
	shared->held = shared->peak = 0;
	ConditionVariableInit(&shared->freed);
	st->shared = shared;
	st->area = node->ss.ps.state->es_query_dsa;
	StreamFromStart(st);
}

static void
ReInitializeDSMGpuStageImpl(CustomScanState *node, ParallelContext *, void *)
{
	GpuStageState *st = (GpuStageState *) node;

	st->area = node->ss.ps.state->es_query_dsa;
	ForgetChunks(st);
	StreamFromStart(st);
}

static void
InitializeWorkerGpuStageImpl(CustomScanState *node, shm_toc *, void *coordinate)
{
	((GpuStageState *) node)->shared = (GpuStageShared *) coordinate;
}

/* Before Gather destroys the shared memory: keep the totals for EXPLAIN. */
static void
ShutdownGpuStageImpl(CustomScanState *node)
{
	GpuStageState *st = (GpuStageState *) node;

	if (st->shared != NULL && !IsParallelWorker())
	{
		st->rows = st->shared->rows;
		st->bytes = st->shared->bytes;
		st->chunks = st->shared->chunks;
		st->peak = st->shared->peak;
		st->shared = NULL;
		st->area = NULL;
		/* chunks taken and not freed go with the area */
		if (!st->taken_local)
		{
			st->ntaken = 0;
			st->taken_bytes = 0;
		}
	}
}

static void
ExplainGpuStageImpl(CustomScanState *node, List *, ExplainState *es)
{
	GpuStageState *st = (GpuStageState *) node;
	uint64 rows = st->shared ? st->shared->rows : st->rows;
	uint64 bytes = st->shared ? st->shared->bytes : st->bytes;
	uint32 chunks = st->shared ? st->shared->chunks : st->chunks;

	if (!es->analyze)
		return;
	/* every process's rows (EXPLAIN shows the leader's node only) */
	ExplainPropertyInteger("Staged Rows", NULL, (int64) rows, es);
	ExplainPropertyInteger("Staged Chunks", NULL, chunks, es);
	ExplainPropertyInteger("Shared Memory", "kB", (int64) (bytes / 1024), es);
	/* how many the consumer took early depends on the workers' timing */
	if (es->verbose && st->streamed > 0)
	{
		ExplainPropertyInteger("Streamed Chunks", NULL, (int64) st->streamed, es);
		uint64 peak = st->shared ? st->shared->peak : st->peak;

		if (peak > 0)
			ExplainPropertyInteger("Peak Shared Memory", "kB", (int64) (peak / 1024), es);
	}
	GpuopsNodeExplainInputs(st, es);
}

const CustomExecMethods gpu_stage_exec_methods = {
	GPUSTAGE_NAME,
	GuardedBegin<BeginGpuStageImpl>,
	GuardedExec<ExecGpuStageImpl>,
	GuardedEnd<EndGpuStageImpl>,
	GuardedReScan<ReScanGpuStageImpl>,
	NULL, /* MarkPosCustomScan */
	NULL, /* RestrPosCustomScan */
	GuardedEstimateDSM<EstimateDSMGpuStageImpl>,
	GuardedInitializeDSM<InitializeDSMGpuStageImpl>,
	GuardedInitializeDSM<ReInitializeDSMGpuStageImpl>,
	GuardedInitializeWorker<InitializeWorkerGpuStageImpl>,
	GuardedShutdown<ShutdownGpuStageImpl>,
	GuardedExplain<ExplainGpuStageImpl>,
};

const CustomScanMethods gpu_stage_scan_methods = {
	GPUSTAGE_NAME,
	GuardedCreateState<CreateGpuStageStateImpl>,
};

void
GpuStageRegister(void)
{
	RegisterCustomScanMethods(&gpu_stage_scan_methods);
}
