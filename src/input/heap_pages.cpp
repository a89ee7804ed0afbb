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
}

bool
HeapPageWalkNext(HeapPageWalk *walk)
{
	HeapScanDesc scan = walk->scan;
	Relation rel = scan->rs_base.rs_rd;
	ParallelBlockTableScanDesc pbscan = (ParallelBlockTableScanDesc) scan->rs_base.rs_parallel;
	BlockNumber page;
	bool finished;

	if (!walk->on_page)
	{
		if (scan->rs_nblocks == 0 || scan->rs_numblocks == 0)
			return false;
		if (pbscan != NULL)
		{
			table_block_parallelscan_startblock_init(rel, scan->rs_parallelworkerdata, pbscan);
			page = table_block_parallelscan_nextpage(rel, scan->rs_parallelworkerdata, pbscan);
			if (page == InvalidBlockNumber)
				return false; /* other processes took every page */
		}
		else
			page = scan->rs_startblock;
	}
	else
	{
		page = scan->rs_cblock;
		if (pbscan != NULL)
		{
			page = table_block_parallelscan_nextpage(rel, scan->rs_parallelworkerdata, pbscan);
			finished = page == InvalidBlockNumber;
		}
		else
		{
			if (++page >= scan->rs_nblocks)
				page = 0;
			finished = page == scan->rs_startblock ||
				(scan->rs_numblocks != InvalidBlockNumber && --scan->rs_numblocks == 0);
			if (scan->rs_base.rs_flags & SO_ALLOW_SYNC)
				ss_report_location(rel, page);
		}
		if (finished)
		{
			if (BufferIsValid(scan->rs_cbuf))
				ReleaseBuffer(scan->rs_cbuf);
			scan->rs_cbuf = InvalidBuffer;
			scan->rs_cblock = InvalidBlockNumber;
			walk->on_page = false;
			return false;
		}
	}
	CHECK_FOR_INTERRUPTS();
	GpuopsHeapPreparePage(scan, page);
	walk->on_page = true;
	return true;
}
