/*
 * query_reader.cpp
 *    GpuQuery's fact-table reader (query_reader.h): the backend walks the
 *    scan's pages and decides visibility; threads turn the visible tuples
 *    into column words.
 *
 * The backend takes each page with heapgetpage (which keeps one pin, on
 * the page in hand), adds a pin of its own so the page stays put while a
 * thread reads it, and fills a piece: the page, its visible line offsets
 * and the batch row its first tuple goes to (the running count of visible
 * tuples, so the batch's row order is the scan's page order whatever
 * thread takes which piece).  Pieces live in a ring of `window` slots,
 * which bounds the pins held at once.  They are handed over in runs (up to
 * READER_RUN_PIECES pieces, fewer for a small window or batch): the
 * backend fills a run without the pool's mutex, publishes it with one
 * lock and at most one wake-up, and a thread takes a whole run, deforms it
 * and marks it done under one lock, where it also takes its next run (a
 * page at a time, every page paid for lock round trips on both sides and,
 * often, a wake-up).
 * The backend releases each piece's pin once it is deformed; a batch is
 * returned when every piece is, so no pin of this reader's outlives a
 * QueryReaderNext call, except the scan's own on the page in hand.
 *
 * When it cannot publish (the ring is full, or the batch has all its rows)
 * the backend deforms a run itself, or waits on a condition variable with
 * a short timeout, checking for interrupts between waits.  With nthreads 0
 * it deforms every run.  An error raised on the backend while threads
 * hold pieces (heapgetpage, the old-snapshot test, a cancel; also between
 * two pieces of a run not yet published) first stops the threads and
 * releases the pins of every piece filled (PG_CATCH), so no thread reads a
 * page whose pin is gone; the reader is then unusable.  The threads are joined
 * by QueryReaderEnd or by the reset callback of the reader's context.
 */
extern "C" {
#include "postgres.h"

#include "access/heapam.h"
#include "access/relscan.h"
#include "access/xlog.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "portability/instr_time.h"
#include "storage/bufmgr.h"
#include "storage/latch.h"
#include "utils/wait_event.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "pg_compat.h"
}

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

#include "device.h"
#include "guc.h"
#include "heap_pages.h"
#include "query_deform.h"
#include "thread_signals.hpp"

#define READER_MAX_THREADS 64
#define READER_WAIT_MS 2	 /* the longest wait between interrupt checks */
#define READER_RUN_PIECES 32 /* the most pieces a run holds */
#define NO_PIECE (~(uint64) 0)

/* One page's visible tuples (or some of them) for the batch. */
typedef struct ReaderPiece
{
	Buffer buf; /* this reader's own pin */
	Page page;
	BlockNumber block;
	uint32 row; /* the batch row of offs[0] */
	int n;
	bool done; /* deformed (under the pool's mutex) */
	OffsetNumber offs[MaxHeapTuplesPerPage];
} ReaderPiece;

/*
 * What the backend and the threads share, under mu.  Pieces are numbered
 * from 0 in each batch: published (the backend filled them and handed
 * them over, a run at a time), taken (a thread or the backend deforms
 * them, a run at a time), released (the backend dropped their pins).
 */
struct ReaderPool
{
	std::mutex mu;
	std::condition_variable work;	  /* threads: a run was published, or quit */
	std::condition_variable progress; /* backend: a run is done, or the threads are idle */
	std::vector<std::thread> threads;
	uint64 published = 0;
	uint64 taken = 0;
	int busy = 0;				/* runs being deformed */
	int idle = 0;				/* threads waiting for work */
	uint64 wait_for = NO_PIECE; /* the piece the backend waits on */
	bool stopped = false;		/* take no more pieces */
	bool quit = false;
	QueryDeformResult merged{}; /* the batch's null mask; its first escape */
};

struct QueryReader
{
	TableScanDesc scan;
	HeapPageWalk walk;
	QueryDeformShape shape;
	QueryDeformOut out;
	uint32 batch_rows;
	int window;
	int run_pieces;	 /* the most pieces a run holds */
	uint32 run_rows; /* a run ends once it holds this many rows */
	ReaderPiece *ring;
	uint64 collected; /* pieces filled and pinned; the published ones are a prefix */
	uint64 released;
	int carry;		   /* the next rs_vistuples index of the page in hand, or -1 */
	bool walk_done;	   /* the scan has no more pages */
	bool broken;	   /* an error went through QueryReaderNext */
	bool pages_mode;   /* QueryReaderUsePages: whole pages, no deforming */
	QueryPagesBuf own; /* QueryReaderNext's pages buffer (pages mode) */
	bool own_pinned;   /* it is pinned for the CUDA engine (QueryReaderPinPages) */
	uint32 own_pins;   /* in place: its pages whose pins are still held */
	const char *escape;
	ReaderPool *pool;
	MemoryContextCallback cb;
	QueryReaderStats stats;
};

/* ---- the pool (no PostgreSQL call: these run with threads about) ---- */

/* Takes the next run of published pieces (under mu): its first piece and count. */
static int
TakeRunLocked(QueryReader *r, uint64 *first) noexcept
{
	ReaderPool *p = r->pool;
	int n = (int) Min(p->published - p->taken, (uint64) r->run_pieces);

	*first = p->taken;
	p->taken += n;
	p->busy++;
	return n;
}

/* Deforms pieces first .. first + n - 1 (taken); no lock held. */
static void
DeformRun(QueryReader *r, uint64 first, int n, QueryDeformResult *acc) noexcept
{
	*acc = QueryDeformResult{};
	for (int k = 0; k < n; k++)
	{
		const ReaderPiece *pc = &r->ring[(first + k) % r->window];
		QueryDeformResult res;

		QueryDeformPage(&r->shape, &r->out, pc->page, pc->block, pc->offs, pc->n, pc->row, &res);
		acc->null_mask |= res.null_mask;
		if (res.escape != NULL)
		{
			/* pieces go in row order: the run's first escape is its earliest */
			acc->escape = res.escape;
			acc->escape_row = res.escape_row;
			break;
		}
	}
}

/* Marks a deformed run done (under mu); whether the backend should be woken. */
static bool
FinishRunLocked(QueryReader *r, uint64 first, int n, const QueryDeformResult *res) noexcept
{
	ReaderPool *p = r->pool;

	for (int k = 0; k < n; k++)
		r->ring[(first + k) % r->window].done = true;
	p->busy--;
	p->merged.null_mask |= res->null_mask;
	if (res->escape != NULL && (p->merged.escape == NULL || res->escape_row < p->merged.escape_row))
	{
		p->merged.escape = res->escape;
		p->merged.escape_row = res->escape_row;
	}
	/* a wake-up per run would cost more than it saves: only the one the backend waits on */
	return (p->wait_for != NO_PIECE && p->wait_for >= first && p->wait_for < first + n) ||
		(p->stopped && p->busy == 0);
}

static void
ThreadMain(QueryReader *r) noexcept
{
	ReaderPool *p = r->pool;
	std::unique_lock<std::mutex> lk(p->mu);

	for (;;)
	{
		QueryDeformResult res;
		uint64 first;
		int n;

		while (!p->quit && (p->stopped || p->taken >= p->published))
		{
			p->idle++;
			p->work.wait(lk);
			p->idle--;
		}
		if (p->quit)
			return;
		n = TakeRunLocked(r, &first);
		lk.unlock();
		DeformRun(r, first, n, &res);
		lk.lock();
		/* the next run is taken under the same lock, unless the backend must be woken */
		if (FinishRunLocked(r, first, n, &res))
		{
			lk.unlock();
			p->progress.notify_one();
			lk.lock();
		}
	}
}

/* The backend deforms a run no thread has: false when there is none. */
static bool
HelpOne(QueryReader *r) noexcept
{
	ReaderPool *p = r->pool;
	QueryDeformResult res;
	uint64 first;
	int n;
	{
		std::lock_guard<std::mutex> lk(p->mu);

		if (p->stopped || p->taken >= p->published)
			return false;
		n = TakeRunLocked(r, &first);
	}
	DeformRun(r, first, n, &res);
	{
		std::lock_guard<std::mutex> lk(p->mu);

		(void) FinishRunLocked(r, first, n, &res); /* the backend itself: no wake-up */
	}
	return true;
}

/* Waits up to READER_WAIT_MS for the oldest unreleased piece to be done. */
static void
WaitProgress(QueryReader *r) noexcept
{
	ReaderPool *p = r->pool;
	std::unique_lock<std::mutex> lk(p->mu);
	const ReaderPiece *pc = &r->ring[r->released % r->window];

	p->wait_for = r->released;
	p->progress.wait_for(lk, std::chrono::milliseconds(READER_WAIT_MS), [pc] { return pc->done; });
	p->wait_for = NO_PIECE;
}

/* Before the backend stops publishing for a while: every idle thread to work. */
static void
Kick(QueryReader *r) noexcept
{
	ReaderPool *p = r->pool;
	bool wake;
	{
		std::lock_guard<std::mutex> lk(p->mu);

		wake = p->idle > 0 && p->taken < p->published;
	}
	if (wake)
		p->work.notify_all();
}

/* Pieces from the oldest unreleased one on that are done; whether a piece escaped. */
static int
DoneRun(QueryReader *r, bool *escaped) noexcept
{
	ReaderPool *p = r->pool;
	std::lock_guard<std::mutex> lk(p->mu);
	int k = 0;

	while (r->released + k < p->published && r->ring[(r->released + k) % r->window].done)
		k++;
	*escaped = p->merged.escape != NULL;
	return k;
}

/* Hands the pieces collected since the last call to the threads: one lock, one wake-up. */
static void
Publish(QueryReader *r) noexcept
{
	ReaderPool *p = r->pool;
	bool wake;
	{
		std::lock_guard<std::mutex> lk(p->mu);

		p->published = r->collected;
		wake = p->idle > 0;
	}
	if (wake)
		p->work.notify_one();
}

/* Threads take no more pieces; returns once none is deforming one. */
static void
StopTaking(QueryReader *r) noexcept
{
	ReaderPool *p = r->pool;
	std::unique_lock<std::mutex> lk(p->mu);

	p->stopped = true;
	p->progress.wait(lk, [p] { return p->busy == 0; });
}

/* A new batch: every piece released, no thread busy. */
static void
ResetBatch(QueryReader *r) noexcept
{
	ReaderPool *p = r->pool;
	std::lock_guard<std::mutex> lk(p->mu);

	p->published = p->taken = 0;
	p->merged = QueryDeformResult{};
	r->collected = 0;
	r->released = 0;
}

static int
StartThreads(QueryReader *r, int nthreads) noexcept
{
	ReaderPool *p = r->pool;

	try
	{
		gpuops::SignalsBlocked blocked; /* the threads inherit the mask */

		p->threads.reserve(nthreads);
		for (int t = 0; t < nthreads; t++)
			p->threads.emplace_back(ThreadMain, r);
	}
	catch (...)
	{
		/* fewer threads (or none): the backend deforms what they do not */
	}
	return (int) p->threads.size();
}

static void
StopThreads(QueryReader *r) noexcept
{
	ReaderPool *p = r->pool;

	if (p == NULL)
		return;
	{
		std::lock_guard<std::mutex> lk(p->mu);

		p->quit = true;
	}
	p->work.notify_all();
	for (auto &t : p->threads)
		t.join();
	delete p;
	r->pool = NULL;
}

/* ---- the backend ---- */

/* The reader's own pages buffer's memory (QueryPagesBufInit's mem). */
static void *
OwnPagesMemory(QueryReader *r)
{
	return r->own.in_place ? (void *) r->own.index : (void *) r->own.pages;
}

static void
ReaderReset(void *arg)
{
	QueryReader *r = (QueryReader *) arg;

	/*
	 * On error the pins are gone already (QueryReaderNext's PG_CATCH, or the
	 * resource owner); only the threads remain, and the pages buffer's
	 * registration with the CUDA engine, undone before the memory goes.
	 */
	StopThreads(r);
	if (r->own_pinned)
		GpuopsUnpinHostMemory(OwnPagesMemory(r));
	r->own_pinned = false;
}

bool
QueryReaderUsable(TableScanDesc scan)
{
	return HeapPageWalkUsable(scan);
}

QueryReader *
QueryReaderBegin(TableScanDesc scan, const QueryReadColumn *cols, int ncols, int nthreads,
				 uint32 batch_rows, MemoryContext cxt)
{
	MemoryContext old = MemoryContextSwitchTo(cxt);
	QueryReader *r = (QueryReader *) palloc0(sizeof(QueryReader));
	Relation rel = scan->rs_rd;

	if (!QueryReaderUsable(scan))
		elog(ERROR, "gpuops: query reader: the scan cannot be read directly");
	if (batch_rows == 0 || batch_rows % 8 != 0 || batch_rows > (uint32) (MaxAllocHugeSize / 16))
		elog(ERROR, "gpuops: query reader: batch of %u rows", batch_rows);
	QueryDeformShapeInit(&r->shape, RelationGetDescr(rel), cols, ncols);
	r->scan = scan;
	HeapPageWalkInit(&r->walk, scan);
	r->batch_rows = batch_rows;
	r->carry = -1;
	for (int c = 0; c < ncols; c++)
	{
		if (cols[c].form == QCOL_TEXT16 || cols[c].form == QCOL_BPCHAR16)
			r->out.bytes16[c] = (uint64 *) MemoryContextAllocHuge(
				cxt, (Size) batch_rows * 2 * sizeof(uint64));
		else
			r->out.words[c] = (uint64 *) MemoryContextAllocHuge(cxt,
																(Size) batch_rows * sizeof(uint64));
		r->out.nulls[c] = (uint8 *) MemoryContextAllocHuge(cxt, batch_rows);
	}
	/*
	 * Pins held at once: enough pages ahead to keep the threads busy, a small
	 * share of the buffer pool (every parallel worker holds as many).
	 */
	r->window = Min(1024, Max(16, NBuffers / 32));
	if (RelationUsesLocalBuffers(rel))
		r->window = Min(r->window, Max(4, num_temp_buffers / 8));
	r->ring = (ReaderPiece *) MemoryContextAllocHuge(cxt, sizeof(ReaderPiece) * r->window);
	r->pool = new (std::nothrow) ReaderPool();
	if (r->pool == NULL)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	r->cb.func = ReaderReset;
	r->cb.arg = r;
	MemoryContextRegisterResetCallback(cxt, &r->cb);
	r->stats.threads = StartThreads(r, Min(Max(nthreads, 0), READER_MAX_THREADS));
	/*
	 * Runs: long enough that a lock round trip and a wake-up are small next
	 * to a run's deforming, short enough that every thread (and the backend)
	 * has runs within the window, and that a small batch is still shared.
	 */
	r->run_pieces = Max(1, Min(READER_RUN_PIECES, r->window / (2 * (r->stats.threads + 1))));
	r->run_rows = Max(batch_rows / (4 * (uint32) (r->stats.threads + 1)), (uint32) 1);
	MemoryContextSwitchTo(old);
	return r;
}

/*
 * Fills (and pins) the next piece: the rest of the page in hand, or the
 * next page with visible tuples, as many as the batch has room for.  False
 * at the end of the scan.  The piece is the threads' once published.
 */
static bool
CollectPiece(QueryReader *r, uint32 *rows)
{
	HeapScanDesc scan = r->walk.scan;
	ReaderPiece *pc;

	while (r->carry < 0)
	{
		if (!HeapPageWalkNext(&r->walk))
		{
			r->walk_done = true;
			return false;
		}
		r->stats.pages++;
		if (GpuopsHeapPageTuples(scan) > 0)
			r->carry = 0;
	}
	pc = &r->ring[r->collected % r->window];
	pc->n = (int) Min((uint32) (GpuopsHeapPageTuples(scan) - r->carry), r->batch_rows - *rows);
	/* remembered by CurrentResourceOwner (IncrBufferRefCount enlarges it first) */
	IncrBufferRefCount(scan->rs_cbuf);
	pc->buf = scan->rs_cbuf;
	pc->page = BufferGetPage(scan->rs_cbuf);
	pc->block = BufferGetBlockNumber(scan->rs_cbuf);
	pc->row = *rows;
	pc->done = false;
	memcpy(pc->offs, scan->rs_vistuples + r->carry, sizeof(OffsetNumber) * pc->n);
	r->collected++;
	r->carry += pc->n;
	if (r->carry >= GpuopsHeapPageTuples(scan))
		r->carry = -1;
	*rows += pc->n;
	return true;
}

/*
 * Collects a run of pieces, as many as the window, the batch and the run's
 * limits allow, and publishes it at once.  An error between two pieces
 * leaves the collected ones pinned and unpublished: AbandonBatch releases
 * them.
 */
static void
CollectRun(QueryReader *r, uint32 *rows)
{
	instr_time start, end;
	uint32 first_row = *rows;
	int n = 0;

	INSTR_TIME_SET_CURRENT(start);
	while (n < r->run_pieces && *rows < r->batch_rows && *rows - first_row < r->run_rows &&
		   r->collected - r->released < (uint64) r->window && CollectPiece(r, rows))
		n++;
	INSTR_TIME_SET_CURRENT(end);
	INSTR_TIME_SUBTRACT(end, start);
	r->stats.walk_ms += INSTR_TIME_GET_MILLISEC(end);
	if (n > 0)
		Publish(r);
}

/* Releases the pins of the pieces done, oldest first; whether a piece escaped. */
static bool
ReleaseDone(QueryReader *r)
{
	bool escaped;

	for (int k = DoneRun(r, &escaped); k > 0; k--)
	{
		ReleaseBuffer(r->ring[r->released % r->window].buf);
		r->released++;
	}
	return escaped;
}

/* Fills the batch's buffers: its rows (or 0 at the end of the scan). */
static uint32
FillBatch(QueryReader *r)
{
	uint32 rows = 0;

	ResetBatch(r);
	for (;;)
	{
		bool escaped = ReleaseDone(r);

		if (!escaped && !r->walk_done && rows < r->batch_rows &&
			r->collected - r->released < (uint64) r->window)
		{
			CollectRun(r, &rows);
			continue;
		}
		if (r->released == r->collected)
			break;
		Kick(r);
		if (!HelpOne(r))
			WaitProgress(r);
		CHECK_FOR_INTERRUPTS();
	}
	return rows;
}

/*
 * After an error in FillBatch: no thread reads a page any more, no pin
 * stays (those of the pieces collected but not yet published included).
 */
static void
AbandonBatch(QueryReader *r)
{
	StopTaking(r);
	while (r->released < r->collected)
	{
		ReleaseBuffer(r->ring[r->released % r->window].buf);
		r->released++;
	}
}

bool
QueryReaderNext(QueryReader *r, GpuopsQueryBatch *batch, const char **escape)
{
	instr_time start, end;
	volatile uint32 rows = 0;
	Relation rel = r->scan->rs_rd;

	*escape = NULL;
	memset(batch, 0, sizeof(*batch));
	if (r->broken || r->pool == NULL)
		elog(ERROR, "gpuops: query reader used after an error or its end");
	if (r->escape != NULL)
	{
		*escape = r->escape;
		return false;
	}
	if (r->walk_done && r->carry < 0)
		return false;
	if (r->pages_mode)
	{
		uint32 n;

		QueryReaderUnpinPages(r); /* (the caller's duty; in case it did not) */
		n = QueryReaderNextPages(r, &r->own);
		if (r->own.in_place)
			r->own_pins = r->own.view.npages;

		if (n == 0)
			return false;
		batch->nrows = n;
		batch->cols.ncols = r->shape.ncols;
		batch->cols.nrows = n;
		batch->pages = &r->own.view;
		return true;
	}
	INSTR_TIME_SET_CURRENT(start);
	PG_TRY();
	{
		rows = FillBatch(r);
	}
	PG_CATCH();
	{
		r->broken = true;
		AbandonBatch(r);
		PG_RE_THROW();
	}
	PG_END_TRY();
	INSTR_TIME_SET_CURRENT(end);
	INSTR_TIME_SUBTRACT(end, start);
	r->stats.read_ms += INSTR_TIME_GET_MILLISEC(end);
	if (r->pool->merged.escape != NULL)
	{
		r->escape = r->pool->merged.escape;
		*escape = r->escape;
		return false;
	}
	if (rows == 0)
		return false;
	r->stats.rows += rows;
	r->stats.batches++;
	if (pgstat_should_count_relation(rel))
		GpuopsPgstatTuplesReturned(rel) += rows;
	batch->nrows = rows;
	batch->cols.ncols = r->shape.ncols;
	batch->cols.nrows = rows;
	for (int c = 0; c < r->shape.ncols; c++)
	{
		batch->cols.words[c] = r->out.words[c];
		batch->bytes16[c] = r->out.bytes16[c];
		batch->cols.nulls[c] = (r->pool->merged.null_mask & (1u << c)) ? r->out.nulls[c] : NULL;
	}
	return true;
}

/* ---- the pages form ---- */

uint32
QueryPagesRows(Relation rel, uint32 max_pages)
{
	double rows = (double) max_pages * MaxHeapTuplesPerPage;
	double relpages = rel->rd_rel->relpages, reltuples = rel->rd_rel->reltuples;

	if (relpages > 0 && reltuples > 0)
		rows = Min(rows, Max(1.5 * reltuples / relpages * max_pages, 16.0 * MaxHeapTuplesPerPage));
	/* (a multiple of 8: it is also a reader's batch of rows) */
	return ((uint32) rows + 7) & ~7u;
}

Size
QueryPagesBufBytes(uint32 max_pages, uint32 max_rows, bool in_place)
{
	/* in place: buffer and block numbers, LSNs (as QueryPagesBufInit lays them out) */
	Size bytes = in_place ? add_size(mul_size(2, MAXALIGN(mul_size(max_pages, sizeof(uint32)))),
									 MAXALIGN(mul_size(max_pages, sizeof(uint64))))
						  : mul_size(max_pages, BLCKSZ);

	bytes = add_size(bytes, MAXALIGN(mul_size(max_pages + 1, sizeof(uint32))));
	return add_size(bytes, MAXALIGN(mul_size(max_rows, sizeof(uint16))));
}

void
QueryPagesBufInit(QueryPagesBuf *buf, char *mem, uint32 max_pages, uint32 max_rows, bool in_place)
{
	Assert(max_pages == 0 || max_rows >= MaxHeapTuplesPerPage);
	memset(buf, 0, sizeof(*buf));
	buf->max_pages = max_pages;
	buf->max_rows = max_rows;
	buf->in_place = in_place;
	if (in_place)
	{
		buf->index = (uint32 *) mem;
		mem += MAXALIGN((Size) max_pages * sizeof(uint32));
		buf->block = (uint32 *) mem;
		mem += MAXALIGN((Size) max_pages * sizeof(uint32));
		buf->lsn = (uint64 *) mem;
		mem += MAXALIGN((Size) max_pages * sizeof(uint64));
	}
	else
	{
		buf->pages = (uint8 *) mem;
		mem += (Size) max_pages * BLCKSZ;
	}
	buf->first_row = (uint32 *) mem;
	mem += MAXALIGN((Size) (max_pages + 1) * sizeof(uint32));
	buf->lineno = (uint16 *) mem;
}

bool
QueryPagesInPlacePossible(Relation rel)
{
	return !RelationUsesLocalBuffers(rel);
}

/*
 * Whether rel's pages carry LSNs that every change to their tuples
 * advances: WAL-logged (not unlogged, nor created in this transaction
 * under wal_level minimal), and not read during recovery, whose redo the
 * device cache's argument (gpuops_page_service.h) leaves out.
 */
bool
QueryPagesCacheable(Relation rel)
{
	return RelationNeedsWAL(rel) && !RecoveryInProgress();
}

void
QueryPagesBufView(QueryPagesBuf *buf, uint32 npages, Relation rel)
{
	GpuopsQueryPages *v = &buf->view;

	v->npages = npages;
	v->page_size = BLCKSZ;
	v->pages = buf->pages;
	v->first_row = buf->first_row;
	v->lineno = buf->lineno;
	v->base = buf->in_place ? (const uint8 *) BufferBlocks : NULL;
	v->index = buf->index;
	v->block = buf->block;
	v->lsn = buf->in_place && QueryPagesCacheable(rel) ? buf->lsn : NULL;
	GpuopsRelFile(rel, v->rel);
}

void
QueryPagesUnpin(const uint32 *index, uint32 npages)
{
	for (uint32 p = 0; p < npages; p++)
		ReleaseBuffer((Buffer) index[p] + 1);
}

/* Shared buffers as the driver pins them: the whole OS pages around them. */
static void
SharedBuffersRange(void **start, Size *bytes)
{
	uintptr_t s = (uintptr_t) BufferBlocks & ~(uintptr_t) 4095;
	uintptr_t e = ((uintptr_t) BufferBlocks + (Size) NBuffers * BLCKSZ + 4095) & ~(uintptr_t) 4095;

	*start = (void *) s;
	*bytes = e - s;
}

bool
QueryPagesMapped(bool wait)
{
	void *start;
	Size bytes;

	SharedBuffersRange(&start, &bytes);
	while (wait && GpuopsHostMemoryMapPending())
	{
		CHECK_FOR_INTERRUPTS();
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 1,
						 PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
	return GpuopsHostMemoryMapped(start);
}

bool
QueryPagesMapStart(void)
{
	void *start;
	Size bytes;

	SharedBuffersRange(&start, &bytes);
	if (!GpuopsMapHostMemoryStart(start, bytes))
		return false;
	elog(DEBUG1, "gpuops: mapping shared buffers (%zu MB) for the device", bytes >> 20);
	return true;
}

void
QueryReaderUsePages(QueryReader *r, uint32 max_pages, uint32 max_rows, bool in_place)
{
	r->pages_mode = true;
	if (max_pages > 0 && r->own.max_pages == 0)
		QueryPagesBufInit(&r->own,
						  (char *) MemoryContextAllocHuge(GetMemoryChunkContext(r),
														  QueryPagesBufBytes(max_pages, max_rows,
																			 in_place)),
						  max_pages, max_rows, in_place);
}

void
QueryReaderUnpinPages(QueryReader *r)
{
	if (r->own_pins > 0)
		QueryPagesUnpin(r->own.index, r->own_pins);
	r->own_pins = 0;
}

bool
QueryReaderPinPages(QueryReader *r)
{
	if (!r->own_pinned && r->own.max_pages > 0)
		r->own_pinned = GpuopsPinHostMemory(OwnPagesMemory(r),
											QueryPagesBufBytes(r->own.max_pages, r->own.max_rows,
															   r->own.in_place));
	return r->own_pinned;
}

/*
 * Copies pages with visible tuples into buf while it has room: each page
 * whole (pinned by the walk while it is copied), its visible line
 * pointers listed.  The walk takes the next page only while there is room
 * for a full one (MaxHeapTuplesPerPage rows), so nothing carries over to
 * the next call.
 */
static uint32
FillPages(QueryReader *r, QueryPagesBuf *buf)
{
	HeapScanDesc scan = r->walk.scan;
	uint32 npages = 0, rows = 0;
	bool cacheable = buf->in_place && QueryPagesCacheable(scan->rs_base.rs_rd);
	instr_time start, end;

	INSTR_TIME_SET_CURRENT(start);
	r->walk.want_lsn = cacheable;
	while (npages < buf->max_pages && rows + MaxHeapTuplesPerPage <= buf->max_rows)
	{
		int n;

		/* (it checks for interrupts) */
		if (!HeapPageWalkNext(&r->walk))
		{
			r->walk_done = true;
			break;
		}
		r->stats.pages++;
		n = GpuopsHeapPageTuples(scan);
		if (n == 0)
			continue;
		buf->first_row[npages] = rows;
		if (buf->in_place)
		{
			Buffer pinned = scan->rs_cbuf;

			buf->index[npages] = (uint32) (pinned - 1);
			buf->block[npages] = scan->rs_cblock;
			/*
			 * The LSN that names the page for the device cache, read after
			 * its tuples were listed (a copy at this LSN holds them all)
			 * under the share lock that a change of it takes exclusively.
			 * BufferGetLSNAtomic, not PageGetLSN: with data checksums or
			 * wal_log_hints, a hint bit's full-page image sets the LSN
			 * under a share lock too (MarkBufferDirtyHint, holding the
			 * buffer header's spinlock, which this takes), and the LSN's
			 * two 4-byte halves could be read torn.
			 */
			buf->lsn[npages] = 0;
			if (cacheable && r->walk.lsn_valid)
				buf->lsn[npages] = r->walk.lsn; /* (read so by the walk) */
			else if (cacheable)
			{
				LockBuffer(pinned, BUFFER_LOCK_SHARE);
				buf->lsn[npages] = BufferGetLSNAtomic(pinned);
				LockBuffer(pinned, BUFFER_LOCK_UNLOCK);
			}
			/*
			 * The walk's pin becomes the listed page's (it would drop it at
			 * the next page): one pin a page, not a second taken and the
			 * first dropped.
			 */
			scan->rs_cbuf = InvalidBuffer;
		}
		else
			memcpy(buf->pages + (Size) npages * BLCKSZ, BufferGetPage(scan->rs_cbuf), BLCKSZ);
		StaticAssertStmt(sizeof(buf->lineno[0]) == sizeof(scan->rs_vistuples[0]),
						 "line numbers are OffsetNumbers");
		memcpy(buf->lineno + rows, scan->rs_vistuples, n * sizeof(buf->lineno[0]));
		rows += n;
		npages++;
	}
	buf->first_row[npages] = rows;
	QueryPagesBufView(buf, npages, scan->rs_base.rs_rd);
	INSTR_TIME_SET_CURRENT(end);
	INSTR_TIME_SUBTRACT(end, start);
	r->stats.read_ms += INSTR_TIME_GET_MILLISEC(end);
	r->stats.walk_ms += INSTR_TIME_GET_MILLISEC(end);
	if (rows > 0)
	{
		Relation rel = r->scan->rs_rd;

		r->stats.rows += rows;
		r->stats.batches++;
		if (pgstat_should_count_relation(rel))
			GpuopsPgstatTuplesReturned(rel) += rows;
	}
	return rows;
}

uint32
QueryReaderNextPages(QueryReader *r, QueryPagesBuf *buf)
{
	if (!r->pages_mode || r->broken || r->pool == NULL)
		elog(ERROR, "gpuops: query reader: pages asked of a reader not reading them");
	if (r->walk_done)
		return 0;
	return FillPages(r, buf);
}

uint32
QueryReaderBatchRows(const QueryReadColumn *cols, int ncols)
{
	double row_bytes = 0;
	double rows;

	for (int c = 0; c < ncols; c++)
		row_bytes += cols[c].form == QCOL_TEXT16 || cols[c].form == QCOL_BPCHAR16 ? 17 : 9;
	rows = (double) ((size_t) gpuops_batch_size_mb << 20) / Max(row_bytes, 1.0);
	rows = Max(Min(rows, 4.0 * 1024 * 1024), 1024.0);
	return (uint32) rows & ~7u;
}

void
QueryReaderRescan(QueryReader *r)
{
	/* table_rescan released the page in hand */
	QueryReaderUnpinPages(r);
	HeapPageWalkInit(&r->walk, r->scan);
	r->carry = -1;
	r->walk_done = false;
	r->escape = NULL;
}

void
QueryReaderStatsGet(const QueryReader *r, QueryReaderStats *stats)
{
	*stats = r->stats;
}

void
QueryReaderEnd(QueryReader *r)
{
	QueryReaderUnpinPages(r);
	StopThreads(r);
}
