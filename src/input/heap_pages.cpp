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
#include "storage/predicate.h"
#include "utils/rel.h"
#include "pg_compat.h"
}

#include "heap_pages.h"
#include "recent_buffers.h"

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
	Snapshot snapshot = sd->rs_snapshot;

	walk->scan = (HeapScanDesc) sd;
	walk->on_page = false;
	/*
	 * (a serializable transaction's need to check for conflicts can end
	 * during the walk, never begin)
	 */
	walk->list_visible = !snapshot->takenDuringRecovery &&
		!CheckForSerializableConflictOutNeeded(sd->rs_rd, snapshot);
	walk->want_lsn = false;
	walk->lsn_valid = false;
}

/*
 * Makes block the page in hand (heap_pages.h says what differs from
 * heapgetpage).
 */
static void
PreparePage(HeapPageWalk *walk, BlockNumber block)
{
	HeapScanDesc scan = walk->scan;
	Relation rel = scan->rs_base.rs_rd;
	Buffer buf;
	Page page;

	walk->lsn_valid = false;
	if (BufferIsValid(scan->rs_cbuf))
	{
		ReleaseBuffer(scan->rs_cbuf);
		scan->rs_cbuf = InvalidBuffer;
	}
	buf = RecentBufferRead(rel, block, scan->rs_strategy);
	scan->rs_cbuf = buf;
	scan->rs_cblock = block;
	page = BufferGetPage(buf);
	/* (a look without the lock first: a page that is not all-visible skips it) */
	if (walk->list_visible && PageIsAllVisible(page))
	{
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		GpuopsTestForOldSnapshot(scan->rs_base.rs_snapshot, rel, page);
		if (PageIsAllVisible(page))
		{
			OffsetNumber lines = PageGetMaxOffsetNumber(page);
			ItemId lpp = PageGetItemId(page, FirstOffsetNumber);
			int n = 0;

			for (OffsetNumber off = FirstOffsetNumber; off <= lines; off++, lpp++)
				if (ItemIdIsNormal(lpp))
					scan->rs_vistuples[n++] = off;
			scan->rs_ntuples = n;
			if (walk->want_lsn)
			{
				walk->lsn = BufferGetLSNAtomic(buf);
				walk->lsn_valid = true;
			}
			LockBuffer(buf, BUFFER_LOCK_UNLOCK);
			return;
		}
		LockBuffer(buf, BUFFER_LOCK_UNLOCK);
	}
	GpuopsHeapPreparePinnedPage(scan);
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
	PreparePage(walk, page);
	walk->on_page = true;
	return true;
}
