/*
 * heap_pages.h
 *    Walking a heap scan's pages as heapgettup_pagemode does going forward:
 *    the scan's own order (parallel block allocation, or the synchronized
 *    start block), heapgetpage under the scan's snapshot, the old-snapshot
 *    test and interrupts between pages.  After each step the scan's
 *    rs_cbuf (pinned), rs_cblock, rs_vistuples and rs_ntuples describe the
 *    page in hand.
 *
 * Used by the batch source that reads a Seq Scan's pages (heap_source.cpp)
 * and by GpuQuery's fact-table reader (src/query/).
 */
#ifndef GPUOPS_HEAP_PAGES_H
#define GPUOPS_HEAP_PAGES_H

extern "C" {
#include "postgres.h"

#include "access/heapam.h"
#include "access/relscan.h"
}

typedef struct HeapPageWalk
{
	HeapScanDesc scan;
	bool on_page; /* a page is in hand (the scan's rs_cbuf) */
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
