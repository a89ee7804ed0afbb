/*
 * pg_compat.h
 *    What differs between the PostgreSQL versions gpuops builds against
 *    (15, 16, 17 and 18), each difference once, as a macro or an inline
 *    function named for what it does, so that the code using it has no
 *    version check of its own.  It includes postgres.h and wraps the headers
 *    it needs in extern "C" itself (it may also be included inside an
 *    extern "C" block, where the files including commands/explain.h had it).
 *
 *    Each item says in which version PostgreSQL changed and what gpuops
 *    needs of it.  A difference no macro can express stays as an #if in
 *    place, with a comment naming the version (grep PG_VERSION_NUM src/).
 */
#ifndef GPUOPS_PG_COMPAT_H
#define GPUOPS_PG_COMPAT_H

extern "C" {
#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "commands/explain.h"
#include "nodes/pathnodes.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "utils/pg_locale.h"
#include "utils/rel.h"
#if PG_VERSION_NUM >= 160000
/* 16 moved the varlena macros (VARSIZE_ANY, VARDATA_ANY, ...) out of postgres.h */
#include "varatt.h"
#endif
#if PG_VERSION_NUM >= 180000
/* 18 split ExplainState and the ExplainProperty* functions out of explain.h */
#include "commands/explain_format.h"
#include "commands/explain_state.h"
#endif
}

#if PG_VERSION_NUM < 150000 || PG_VERSION_NUM >= 190000
#error "gpuops supports PostgreSQL 15, 16, 17 and 18"
#endif

/*
 * The tuples-returned counter of a relation's statistics, as the heap's own
 * scans count it (pgstat_count_heap_getnext), for a batch of rows at once.
 * 16 renamed PgStat_TableStatus.t_counts.t_tuples_returned to
 * counts.tuples_returned.
 */
#if PG_VERSION_NUM >= 160000
#define GpuopsPgstatTuplesReturned(rel) ((rel)->pgstat_info->counts.tuples_returned)
#else
#define GpuopsPgstatTuplesReturned(rel) ((rel)->pgstat_info->t_counts.t_tuples_returned)
#endif

/*
 * Makes the page the heap scan holds pinned (rs_cbuf, for rs_cblock) its
 * current page, pruned, with the offsets of its tuples visible to the
 * scan's snapshot in rs_vistuples, as a page-at-a-time sequential scan
 * does.  17 has it: heap_prepare_pagescan (the scan reads its buffers
 * through a read stream; 17 also removed old_snapshot_threshold and with
 * it TestForOldSnapshot).  15 and 16 have only heapgetpage, which drops
 * the pin and looks the block up again; below is its body after that
 * read, as it is in 15 and 16 (the 17 function is the same code).
 */
static inline void
GpuopsHeapPreparePinnedPage(HeapScanDesc scan)
{
#if PG_VERSION_NUM >= 170000
	heap_prepare_pagescan(&scan->rs_base);
#else
	Relation rel = scan->rs_base.rs_rd;
	Snapshot snapshot = scan->rs_base.rs_snapshot;
	Buffer buffer = scan->rs_cbuf;
	Page page;
	OffsetNumber lines;
	ItemId lpp;
	bool all_visible;
	int ntup = 0;

	heap_page_prune_opt(rel, buffer);
	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buffer);
	TestForOldSnapshot(snapshot, rel, page);
	lines = PageGetMaxOffsetNumber(page);
	all_visible = PageIsAllVisible(page) && !snapshot->takenDuringRecovery;
	lpp = PageGetItemId(page, FirstOffsetNumber);
	for (OffsetNumber off = FirstOffsetNumber; off <= lines; off++, lpp++)
	{
		HeapTupleData loctup;
		bool valid;

		if (!ItemIdIsNormal(lpp))
			continue;
		loctup.t_tableOid = RelationGetRelid(rel);
		loctup.t_data = (HeapTupleHeader) PageGetItem(page, lpp);
		loctup.t_len = ItemIdGetLength(lpp);
		ItemPointerSet(&loctup.t_self, scan->rs_cblock, off);
		valid = all_visible || HeapTupleSatisfiesVisibility(&loctup, snapshot, buffer);
		HeapCheckForSerializableConflictOut(valid, rel, &loctup, buffer, snapshot);
		if (valid)
			scan->rs_vistuples[ntup++] = off;
	}
	LockBuffer(buffer, BUFFER_LOCK_UNLOCK);
	scan->rs_ntuples = ntup;
#endif
}

/* The old-snapshot test of a page read under snapshot (none from 17: see above). */
#if PG_VERSION_NUM >= 170000
#define GpuopsTestForOldSnapshot(snapshot, rel, page) ((void) 0)
#else
#define GpuopsTestForOldSnapshot(snapshot, rel, page) TestForOldSnapshot(snapshot, rel, page)
#endif

/*
 * ReadRecentBuffer for a relation's fork: 16 changed its first argument
 * from the RelFileNode to the RelFileLocator (rd_node to rd_locator).
 */
#if PG_VERSION_NUM >= 160000
#define GpuopsReadRecentBuffer(rel, fork, block, buf) \
	ReadRecentBuffer((rel)->rd_locator, fork, block, buf)
#else
#define GpuopsReadRecentBuffer(rel, fork, block, buf) \
	ReadRecentBuffer((rel)->rd_node, fork, block, buf)
#endif

/*
 * The equalities that join inner to the rels outer (from the equivalence
 * classes), as a join of them would apply.  16 added the SpecialJoinInfo
 * of the join (NULL: an inner join).  The caller includes optimizer/paths.h.
 */
#if PG_VERSION_NUM >= 160000
#define GpuopsJoinImpliedEqualities(root, join_relids, outer_relids, inner_rel) \
	generate_join_implied_equalities(root, join_relids, outer_relids, inner_rel, NULL)
#else
#define GpuopsJoinImpliedEqualities(root, join_relids, outer_relids, inner_rel) \
	generate_join_implied_equalities(root, join_relids, outer_relids, inner_rel)
#endif

/*
 * The GROUP BY the planner groups by.  From 16 the planner leaves
 * parse->groupClause whole and drops the redundant columns (functionally
 * dependent on a primary key, or equal to a constant) from
 * root->processed_groupClause only; 15 drops them from parse->groupClause.
 */
#if PG_VERSION_NUM >= 160000
#define GpuopsGroupClause(root) ((root)->processed_groupClause)
#else
#define GpuopsGroupClause(root) ((root)->parse->groupClause)
#endif

/*
 * A relation's file as three numbers: tablespace, database, file number.
 * 16 renamed RelationData.rd_node (RelFileNode) to rd_locator
 * (RelFileLocator).
 */
#if PG_VERSION_NUM >= 160000
#define GpuopsRelFile(rel, out) \
	((out)[0] = (rel)->rd_locator.spcOid, (out)[1] = (rel)->rd_locator.dbOid, \
	 (out)[2] = (rel)->rd_locator.relNumber)
#else
#define GpuopsRelFile(rel, out) \
	((out)[0] = (rel)->rd_node.spcNode, (out)[1] = (rel)->rd_node.dbNode, \
	 (out)[2] = (rel)->rd_node.relNode)
#endif

/* The number of visible tuples of the page in hand (an int until 17, uint32 from 18). */
#define GpuopsHeapPageTuples(scan) ((int) (scan)->rs_ntuples)

/*
 * Whether EXPLAIN qualifies column names with their relation, as its own
 * nodes decide: more than one range table entry, or VERBOSE.  18 added an
 * RTE_GROUP entry to grouped queries' range tables; EXPLAIN counts without
 * it (ExplainState.rtable_size).
 */
/* 18 added ExecGetRangeTableRelation's isResultRel (gpuops opens only scanned tables) */
#if PG_VERSION_NUM >= 180000
#define GpuopsGetRangeTableRelation(estate, rti) ExecGetRangeTableRelation((estate), (rti), false)
#else
#define GpuopsGetRangeTableRelation(estate, rti) ExecGetRangeTableRelation((estate), (rti))
#endif

#if PG_VERSION_NUM >= 180000
#define GpuopsExplainUsePrefix(es) ((es)->rtable_size > 1 || (es)->verbose)
#else
#define GpuopsExplainUsePrefix(es) (list_length((es)->rtable) > 1 || (es)->verbose)
#endif

/*
 * Whether a collation sorts by bytes (C or POSIX).  18 removed
 * lc_collate_is_c: the collation's pg_locale_t says it.
 */
static inline bool
GpuopsCollationIsC(Oid collation)
{
#if PG_VERSION_NUM >= 180000
	return pg_newlocale_from_collation(collation)->collate_is_c;
#else
	return lc_collate_is_c(collation);
#endif
}

/*
 * A path key's direction as a btree strategy (BTLessStrategyNumber or
 * BTGreaterStrategyNumber).  18 replaced PathKey.pk_strategy with
 * pk_cmptype, a CompareType (COMPARE_LT or COMPARE_GT).
 */
#if PG_VERSION_NUM >= 180000
#define GpuopsPathKeyStrategy(pk) \
	((int16) ((pk)->pk_cmptype == COMPARE_GT ? BTGreaterStrategyNumber : BTLessStrategyNumber))
#else
#define GpuopsPathKeyStrategy(pk) ((int16) (pk)->pk_strategy)
#endif

/* A minimal tuple of the values; 18 added heap_form_minimal_tuple's extra bytes (none here). */
#if PG_VERSION_NUM >= 180000
#define GpuopsFormMinimalTuple(desc, values, isnull) \
	heap_form_minimal_tuple(desc, values, isnull, 0)
#else
#define GpuopsFormMinimalTuple(desc, values, isnull) heap_form_minimal_tuple(desc, values, isnull)
#endif

/*
 * The permission checks ExecutorStart makes on a plan's tables, for
 * gpuops.explain_why, which plans a query without starting an executor.
 * 16 moved them to RTEPermissionInfo: ExecCheckRTPerms became
 * ExecCheckPermissions.  The caller includes executor/executor.h.
 */
#if PG_VERSION_NUM >= 160000
#define GpuopsCheckPlanPermissions(stmt) \
	ExecCheckPermissions((stmt)->rtable, (stmt)->permInfos, true)
#else
#define GpuopsCheckPlanPermissions(stmt) ExecCheckRTPerms((stmt)->rtable, true)
#endif

#endif /* GPUOPS_PG_COMPAT_H */
