/*
 * sort_spill.h
 *    GpuSort's runs in temporary files, for inputs larger than its host
 *    memory limit, and the merge that reads them back in order.
 *
 * GPUTeraSort's two phases: each time the rows held on the host reach the
 * limit, they are sorted (on the device) and written out, in order, as
 * minimal tuples to a temporary file of PostgreSQL's (BufFile; removed at
 * the end of the transaction, so also on error and cancel).  The last run
 * stays in memory.  The merge keeps one current row per run in a binary
 * heap ordered by PostgreSQL's comparators for the sort keys.
 */
#ifndef GPUOPS_SORT_SPILL_H
#define GPUOPS_SORT_SPILL_H

extern "C" {
#include "postgres.h"

#include "executor/tuptable.h"
#include "utils/sortsupport.h"
}

#include "batch.h"

typedef struct GpuopsSortRuns GpuopsSortRuns;

/*
 * keys[k] is the 0-based column of sort key k; ssup[k] its comparator
 * (prepared without abbreviation).  Everything lives in cxt.
 */
extern GpuopsSortRuns *GpuopsSortRunsCreate(TupleDesc desc, int nkeys, const int *keys,
											SortSupport ssup, MemoryContext cxt);

/* Writes output rows 0..n-1 of a permuted store as one sorted run. */
extern void GpuopsSortRunsWrite(GpuopsSortRuns *runs, GpuopsRowStore *store, uint64 n);

/*
 * A run's rows from elsewhere (parked rows, sort_park.h): the next row into
 * slot (valid until the next call), false at the end.
 */
typedef bool (*GpuopsSortRunsStream)(void *arg, TupleTableSlot *slot);

/* Writes the rows a stream returns, in order, as one sorted run. */
extern void GpuopsSortRunsWriteStream(GpuopsSortRuns *runs, GpuopsSortRunsStream next, void *arg);

extern int GpuopsSortRunsCount(const GpuopsSortRuns *runs);
extern uint64 GpuopsSortRunsBytes(const GpuopsSortRuns *runs);

/*
 * Starts (or restarts, for a rescan) the merge of the written runs and
 * output rows 0..nlast-1 of `last`, a permuted store; at most `limit` rows
 * come out (0: all).
 */
extern void GpuopsSortRunsBeginMerge(GpuopsSortRuns *runs, GpuopsRowStore *last, uint64 nlast,
									 uint64 limit);

/* The same with the last run a stream, which the caller starts (or rewinds) first. */
extern void GpuopsSortRunsBeginMergeStream(GpuopsSortRuns *runs, GpuopsSortRunsStream next,
										   void *arg, uint64 limit);

/* The next merged row into slot; false at the end.  Valid until the next call. */
extern bool GpuopsSortRunsNext(GpuopsSortRuns *runs, TupleTableSlot *slot);

/* Closes (and so deletes) the files. */
extern void GpuopsSortRunsClose(GpuopsSortRuns *runs);

#endif
