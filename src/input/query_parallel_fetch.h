/*
 * query_parallel_fetch.h
 *    The parallel read's second phase (query_parallel.h's fetch): once the
 *    leader knows which rows it wants and in which order (GpuTopN's TIDs),
 *    the workers that walked the pages fetch those rows by TID and copy
 *    their tuples into shared memory, and the leader returns them in
 *    order from there.
 *
 * Why: the leader alone fetches about one row a microsecond (a buffer
 * lookup, a pin, the page faulted into its own page tables: most of the
 * rows sit in pages the workers walked, not the leader), 100 ms for
 * LIMIT 100000, a third of the query; the idle workers do it in parallel.
 *
 * The rows go in chunks of QF_CHUNK_ROWS through a ring of slots in the
 * parallel context's shared memory, so its size does not depend on the
 * bound: the leader issues chunk c into slot c % nslots (the chunk's TIDs)
 * once it has returned the rows of chunk c - nslots; a worker takes an
 * issued chunk, fetches its rows under the read's snapshot and copies
 * each tuple (its header and data, as on the page) into the slot while
 * they fit; the leader fetches the rest itself, and a chunk no worker has
 * taken when the leader reaches it.  A slot: ISSUED -> FETCHING -> DONE
 * (or ISSUED -> LEADER) -> EMPTY, under a spinlock; the leader waits on
 * `done`, the workers on `issued`, both interruptibly.
 *
 * Internal to query_parallel.cpp: its leader API is query_parallel.h's
 * QueryParallelFetchBegin / QueryParallelFetchRow.
 */
#ifndef GPUOPS_QUERY_PARALLEL_FETCH_H
#define GPUOPS_QUERY_PARALLEL_FETCH_H

extern "C" {
#include "postgres.h"

#include "access/htup_details.h"
#include "utils/rel.h"
#include "utils/snapshot.h"
}

#define QF_CHUNK_ROWS 1024

typedef struct QFShared QFShared;

/* The leader's view of the phase (in its own memory). */
typedef struct QueryFetch
{
	QFShared *sh;
	const uint64 *tids; /* the leader's, valid for the phase */
	uint64 ntids;
	uint64 issued; /* chunks issued so far */
	int64 cur;	   /* the chunk being returned, or -1 */
	bool cur_leader;
	uint32 cur_done; /* rows of cur in its slot */
} QueryFetch;

/* Shared memory for the phase with nworkers workers and rows of about row_bytes. */
extern Size QueryFetchShmemSize(int nworkers, uint32 row_bytes);
extern QFShared *QueryFetchShmemInit(void *mem, int nworkers, uint32 row_bytes);

/* The leader: issues the first chunks of tids (ntids rows, in order). */
extern void QueryFetchStart(QueryFetch *f, QFShared *sh, const uint64 *tids, uint64 ntids);

/*
 * The leader: row i (i going up by one from 0) as copied by a worker, or
 * NULL: the caller fetches it itself.  workers_stopped says whether no
 * worker is left to finish a chunk it took (one that failed raised its
 * error in the leader already, through the waits' interrupts).
 */
extern HeapTupleHeader QueryFetchRow(QueryFetch *f, uint64 i, uint32 *len,
									 bool (*workers_stopped)(void *), void *arg);

/* The leader: no more chunks; the workers return. */
extern void QueryFetchStop(QFShared *sh);

/* A worker: fetches issued chunks under snapshot until every chunk is issued and taken, or stop. */
extern void QueryFetchWork(QFShared *sh, Relation rel, Snapshot snapshot);

#endif /* GPUOPS_QUERY_PARALLEL_FETCH_H */
