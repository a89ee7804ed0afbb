/*
 * heap_pages.h
 *    Walking a heap scan's pages as heapgettup_pagemode does going forward:
 *    the scan's own order (parallel block allocation, or the synchronized
 *    start block), heapgetpage under the scan's snapshot, the old-snapshot
 *    test and interrupts between pages.  After each step the scan's
 *    rs_cbuf (pinned), rs_cblock, rs_vistuples and rs_ntuples describe the
 *    page in hand.
 *
 * Two steps of heapgetpage cost less here, with the same outcome:
 * - Each page is pinned through the recent-buffer table (recent_buffers.h)
 *   rather than the buffer mapping table, where the table knows its buffer.
 * - A page whose PD_ALL_VISIBLE flag is set has every normal line pointer
 *   visible (heapgetpage's own rule, outside recovery), so they are listed
 *   under the share lock without a visibility call per tuple, and no
 *   pruning is tried (such a page has nothing dead to prune).  A
 *   serializable transaction that must check each tuple for a conflict
 *   takes heapgetpage's path for every page.
 *
 * Used by the batch source that reads a Seq Scan's pages (heap_source.cpp)
 * and by the page reader of GpuQuery and GpuTopN (query_reader.h).
 */
#ifndef GPUOPS_HEAP_PAGES_H
#define GPUOPS_HEAP_PAGES_H

extern "C" {
#include "postgres.h"

#include "access/heapam.h"
#include "access/relscan.h"
#include "access/xlogdefs.h"
}

typedef struct HeapPageWalk
{
	HeapScanDesc scan;
	bool on_page;	   /* a page is in hand (the scan's rs_cbuf) */
	bool list_visible; /* all-visible pages listed here (see above) */
	bool want_lsn;	   /* set by the caller: read lsn where the share lock is held anyway */
	bool lsn_valid;	   /* lsn is the page in hand's, read under its share lock after
						  * its tuples were listed */
	XLogRecPtr lsn;
} HeapPageWalk;

/*
 * Whether this scan's pages can be walked here: a heap scan in
 * page-at-a-time mode (an MVCC snapshot), without scan keys, that nothing
 * has read yet.
 */
extern bool HeapPageWalkUsable(TableScanDesc sd);

/* Starts (or, after the scan's rescan, restarts) a walk of sd's pages. */
extern void HeapPageWalkInit(HeapPageWalk *walk, TableScanDesc sd);

/*
 * Moves to the scan's next page: false (and the last page released) when
 * the scan is over.  May raise errors (heapgetpage, the old-snapshot test,
 * interrupts).
 */
extern bool HeapPageWalkNext(HeapPageWalk *walk);

#endif /* GPUOPS_HEAP_PAGES_H */
