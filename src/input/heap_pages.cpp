/*
 * heap_pages.cpp
 *    A heap scan's pages in the scan's order (heap_pages.h).
 */
extern "C" {
#include "postgres.h"

#include "access/heapam.h"
#include "access/relscan.h"
#include "access/syncscan.h"
#include "access/tableam.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"
#include "pg_compat.h"
}

#include "heap_pages.h"

bool
HeapPageWalkUsable(TableScanDesc sd)
{
	return sd->rs_rd->rd_tableam == GetHeapamTableAmRoutine() &&
		(sd->rs_flags & SO_ALLOW_PAGEMODE) != 0 && sd->rs_nkeys == 0 &&
		!((HeapScanDesc) sd)->rs_inited;
}

void
HeapPageWalkInit(HeapPageWalk *walk, TableScanDesc sd)
{
	walk->scan = (HeapScanDesc) sd;
	walk->on_page = false;
	walk->started = false;
	walk->exhausted = false;
	walk->last = InvalidBlockNumber;
	walk->nahead = 0;
	walk->head = 0;
}

/* The scan's next page in its order (InvalidBlockNumber: none left). */
static BlockNumber
NextInOrder(HeapPageWalk *walk)
{
	HeapScanDesc scan = walk->scan;
	Relation rel = scan->rs_base.rs_rd;
	ParallelBlockTableScanDesc pbscan = (ParallelBlockTableScanDesc) scan->rs_base.rs_parallel;
	BlockNumber page;

	if (!walk->started)
	{
		walk->started = true;
		if (scan->rs_nblocks == 0 || scan->rs_numblocks == 0)
			return InvalidBlockNumber;
		if (pbscan != NULL)
		{
			table_block_parallelscan_startblock_init(rel, scan->rs_parallelworkerdata, pbscan);
			/* InvalidBlockNumber: other processes took every page */
			return table_block_parallelscan_nextpage(rel, scan->rs_parallelworkerdata, pbscan);
		}
		return scan->rs_startblock;
	}
	if (pbscan != NULL)
		return table_block_parallelscan_nextpage(rel, scan->rs_parallelworkerdata, pbscan);
	page = walk->last + 1;
	if (page >= scan->rs_nblocks)
		page = 0;
	if (page == scan->rs_startblock ||
		(scan->rs_numblocks != InvalidBlockNumber && --scan->rs_numblocks == 0))
		return InvalidBlockNumber;
	if (scan->rs_base.rs_flags & SO_ALLOW_SYNC)
		ss_report_location(rel, page);
	return page;
}

/*
 * Takes pages ahead until the ring is full or the order is over, and
 * prefetches the start of each one that shared buffers hold (for one they
 * do not, PrefetchBuffer asks the kernel to read it ahead).  No pin: the
 * buffer may hold another page by the time the walk comes to it, which
 * only wastes the prefetch.
 */
static void
TakeAhead(HeapPageWalk *walk)
{
	Relation rel = walk->scan->rs_base.rs_rd;

	while (!walk->exhausted && walk->nahead < HEAP_PAGE_WALK_AHEAD)
	{
		BlockNumber page = NextInOrder(walk);
		PrefetchBufferResult pf;

		if (page == InvalidBlockNumber)
		{
			walk->exhausted = true;
			break;
		}
		walk->last = page;
		walk->ahead[(walk->head + walk->nahead++) % HEAP_PAGE_WALK_AHEAD] = page;
		pf = PrefetchBuffer(rel, MAIN_FORKNUM, page);
		if (BufferIsValid(pf.recent_buffer) && pf.recent_buffer > 0)
		{
			/* the header and the first 122 line pointers (TPC-H's lineitem has ~52 a page) */
			const char *p = (const char *) BufferGetBlock(pf.recent_buffer);

			for (int off = 0; off < 512; off += 64)
				__builtin_prefetch(p + off);
		}
	}
}

bool
HeapPageWalkNext(HeapPageWalk *walk)
{
	HeapScanDesc scan = walk->scan;
	BlockNumber page;

	TakeAhead(walk);
	if (walk->nahead == 0)
	{
		/* the scan is over: the last page released, as heapgettup_pagemode does */
		if (walk->on_page)
		{
			if (BufferIsValid(scan->rs_cbuf))
				ReleaseBuffer(scan->rs_cbuf);
			scan->rs_cbuf = InvalidBuffer;
			scan->rs_cblock = InvalidBlockNumber;
			walk->on_page = false;
		}
		return false;
	}
	page = walk->ahead[walk->head];
	walk->head = (walk->head + 1) % HEAP_PAGE_WALK_AHEAD;
	walk->nahead--;
	CHECK_FOR_INTERRUPTS();
	GpuopsHeapPreparePage(scan, page);
	walk->on_page = true;
	return true;
}
