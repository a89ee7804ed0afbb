/*
 * query_parallel.h
 *    GpuQuery's parallel read: PostgreSQL parallel workers each walk their
 *    share of the fact table's pages (the parallel block allocator, under
 *    the query's snapshot) with their own reader (query_reader.h) and hand
 *    the batches to the leader through slots in the parallel context's
 *    dynamic shared memory; only the leader touches the device.
 *
 * Why: one backend walking every page (heapgetpage, a pin, the visibility
 * of each line pointer) reads about 0.6M pages a second however many
 * threads deform them (doc/gpuquery.md, "Measured"); the device takes the
 * columns far faster.  The walk is serial in one process, so the only way
 * to split it is more processes under the same snapshot, as a Parallel
 * Seq Scan does.  No Gather is planned: the node starts its workers itself
 * (CreateParallelContext) and they return no tuple, only column batches.
 *
 * The leader reads too: it ships every batch a worker has filled, and
 * reads a small batch of its own share only when none waits, so the
 * workers rarely wait for a free slot.  Blocks are handed out as each
 * process asks for them, so a worker that never starts leaves nothing
 * unread; a worker's error is raised in the leader (PostgreSQL's parallel
 * machinery), and a value a worker's reader cannot turn into words stops
 * the read with its reason, as the leader's own reader does.
 *
 * Every wait (the leader's for a filled slot, a worker's for a free one)
 * is on a condition variable and can be cancelled.  The context lives
 * from QueryParallelBegin to QueryParallelEnd, within one run of the node:
 * never past the end of the executor's parallel mode; an error leaves it
 * to the transaction's abort (AtEOXact_Parallel), which stops the workers.
 */
#ifndef GPUOPS_QUERY_PARALLEL_H
#define GPUOPS_QUERY_PARALLEL_H

extern "C" {
#include "postgres.h"

#include "access/htup_details.h"
#include "access/relscan.h"
#include "storage/dsm.h"
#include "storage/shm_toc.h"
#include "utils/rel.h"
#include "utils/snapshot.h"
}

#include "gpuops_query.h"
#include "query_reader.h"

typedef struct QueryParallel QueryParallel;

/* Whether a GpuQuery run may start workers now (parallel mode, not a worker). */
extern bool QueryParallelPossible(void);

/*
 * The slots of a read by nworkers (QueryParallelBegin's), with pages read
 * in place or not: with them, as many batches of pages may be pinned at
 * once (beside the leader's own).
 */
extern int QueryParallelSlots(int nworkers, bool pages_in_place);

/*
 * Starts up to nworkers workers reading rel's pages under `snapshot` into
 * slots of slot_rows rows, each worker with worker_threads reader threads.
 * With max_pages > 0 the slots hold pages instead (query_reader.h's
 * pages form, up to max_pages each; no filter), in place with in_place:
 * a worker then keeps its pages pinned until the leader has released
 * their slot (QueryParallelRelease: the backend has read them), and ends
 * only when none of its slots is left to ship.
 * With filter (a program over the columns: a dimension's quals), the
 * workers keep only the rows it passes, and stop the read where it cannot
 * decide a row.  With fetch_row_bytes > 0 (rows of about that many bytes
 * on the page) the workers stay after their read for the fetch phase
 * (QueryParallelFetchBegin).  Memory in the current context.  The leader
 * reads its own share through QueryParallelLeaderScan (unfiltered).
 */
extern QueryParallel *QueryParallelBegin(Relation rel, Snapshot snapshot,
										 const QueryReadColumn *cols, int ncols, int nworkers,
										 uint32 slot_rows, uint32 max_pages, bool in_place,
										 int worker_threads, const GpuopsExprProgram *filter,
										 uint32 fetch_row_bytes);

/* A scan of the same pages (the same block allocator) for the leader's own reader. */
extern TableScanDesc QueryParallelLeaderScan(QueryParallel *qp);

/*
 * Pins the slots for the CUDA engine's copies (after its first device
 * call); they are unpinned when the context's shared memory is detached,
 * at QueryParallelEnd or at an abort.  Whether they are pinned.
 */
extern bool QueryParallelPin(QueryParallel *qp);

/* Workers started. */
extern int QueryParallelLaunched(const QueryParallel *qp);

typedef enum QueryParallelNextResult
{
	QP_BATCH = 0, /* *batch is a worker's, valid until QueryParallelRelease */
	QP_NONE_NOW,  /* none waits (only without wait) */
	QP_DONE,	  /* every worker has finished and every batch was taken */
	QP_ESCAPE	  /* a worker's reader stopped: QueryParallelEscape says why */
} QueryParallelNextResult;

/*
 * The next batch a worker filled.  With wait, waits (interruptibly) until
 * one is filled or every worker has finished.  The batch is the caller's
 * until QueryParallelRelease; the caller holds at most two (the CUDA
 * engine keeps one over an add: GpuopsQueryPages.may_hold), so with two
 * held one must be released before the next call.  QueryParallelRelease
 * releases the oldest held; QueryParallelHeld counts them.
 */
extern QueryParallelNextResult QueryParallelNext(QueryParallel *qp, GpuopsQueryBatch *batch,
												 bool wait);
extern void QueryParallelRelease(QueryParallel *qp);
extern int QueryParallelHeld(const QueryParallel *qp);
extern const char *QueryParallelEscape(const QueryParallel *qp);

/*
 * The leader's next batch with workers: one a worker filled (released
 * with QueryParallelRelease, as QueryParallelNext says) or, when none waits, one
 * of the leader's own share from leader_reader (a reader over
 * QueryParallelLeaderScan; *own_done once it reached its end).  False at
 * the end, or with *why set: a worker's reason (qp's, valid until
 * QueryParallelEnd) or the leader's reader's.  With blocked, it never
 * waits for the workers: where it would (its own share done, none filled
 * yet), it returns false with *blocked set.  A caller that holds a slot
 * must pass it: a worker may be waiting for that slot before it can end.
 */
extern bool QueryParallelNextBatch(QueryParallel *qp, QueryReader *leader_reader, bool *own_done,
								   GpuopsQueryBatch *batch, const char **why, bool *from_worker,
								   bool *blocked);

/*
 * Stops the workers (when they have not finished), waits for them to exit
 * and ends the context; *workers gets their reading summed (pages, rows,
 * batches, read and walk time).  Idempotent.
 */
extern void QueryParallelEnd(QueryParallel *qp, QueryReaderStats *workers);

/*
 * The workers' reading summed (pages, rows, batches, read and walk time):
 * final once every batch was taken (QP_DONE), while the workers may stay
 * for the fetch phase.
 */
extern void QueryParallelReadStats(QueryParallel *qp, QueryReaderStats *workers);

/*
 * The fetch phase (query_parallel_fetch.h), after every batch was taken:
 * the workers fetch the rows at tids (ntids of them, the leader's memory,
 * valid until QueryParallelEnd), in that order.  False where they do not
 * (no fetch_row_bytes at the begin, no worker left, too few rows): the
 * caller fetches every row itself.
 */
extern bool QueryParallelFetchBegin(QueryParallel *qp, const uint64 *tids, uint64 ntids);

/*
 * Row i of the fetch (i going up by one from 0): its tuple as on the page,
 * *len bytes in shared memory, valid until the next call; or NULL: the
 * caller fetches it itself (no fetch phase, a chunk no worker took, a row
 * that did not fit).  Waits interruptibly for a worker's chunk.
 */
extern HeapTupleHeader QueryParallelFetchRow(QueryParallel *qp, uint64 i, uint32 *len);

/* The workers' entry point (CreateParallelContext's function). */
extern "C" PGDLLEXPORT void gpuops_query_read_main(dsm_segment *seg, shm_toc *toc);

#endif /* GPUOPS_QUERY_PARALLEL_H */
