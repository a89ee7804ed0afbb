/*
 * gpu_query_join.cpp
 *    GpuQuery planning for a join block (doc/gpuquery.md, step 2): which
 *    table is read from its pages (the fact table: the largest), which are
 *    looked up (the dimensions: every other table, each read once through
 *    its own cheapest PostgreSQL path, with its own quals), in which order,
 *    and by which clause.
 *
 * A dimension is looked up by one equality between one of its columns
 * and a column the row already has (the fact table's, or a dimension's
 * looked up before it: snowflakes), of integer-like words on both sides;
 * its keys must be distinct at run time (a primary or unique key; the
 * backend escapes otherwise).  Each lookup drops rows without a match, as
 * an inner join.  Every other clause over several tables (more equalities
 * from the equivalence classes, non-equi clauses) is the join qual, run on
 * the joined row.
 *
 * Dimensions go most selective first (the fewest of its table's rows kept
 * by its quals), so that later lookups see fewer rows; a dimension joins
 * only once a column it needs is there.
 *
 * A semi or anti join (EXISTS, IN, NOT EXISTS) of one table is a semi or
 * anti dimension (gpuops_query.h): looked up by its one clause, an
 * equality as above, it keeps or drops the row and adds no column; its
 * keys may repeat.  Its other quals are its own (PostgreSQL pushes them
 * into its scan); any other clause that names it (a non-equi condition, or
 * an anti join's condition on the outer side only, which PostgreSQL keeps
 * at the join) declines, since a lookup tests one key.  Both commute with
 * the inner joins, so the lookup goes wherever its column is at hand.
 *
 * Declined: outer joins, a semi or anti join of several tables or whose
 * inner table is the largest (the fact table is read from its pages, the
 * inner one is looked up), a table that is not a base rel (a table
 * function or VALUES: only tables and subqueries), lateral references, a
 * table no lookup can reach, more dimensions than GPUOPS_QUERY_MAX_DIMS.
 */
extern "C" {
#include "postgres.h"

#include "catalog/pg_am_d.h"
#include "catalog/pg_opfamily_d.h"
#include "catalog/pg_type_d.h"
#include "commands/defrem.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/restrictinfo.h"
#include "utils/lsyscache.h"
}

#include "device_expr_catalog.h"
#include "gpu_query.h"
#include "pg_compat.h"
#include "plan_why.h"
#include "qual_order.h"

static bool
IntegerType(Oid type)
{
	return type == INT2OID || type == INT4OID || type == INT8OID;
}

/*
 * Is opno an equality whose truth is the equality of the two sides'
 * device words?  Integers of any width (their words are the sign-extended
 * values), or one integer-like type with its own default equality (date,
 * timestamp, bool, ...).
 */
static bool
WordEquality(Oid opno, Oid ltype, Oid rtype)
{
	Oid opclass, family;

	if (IntegerType(ltype) && IntegerType(rtype))
		return get_op_opfamily_strategy(opno, INTEGER_BTREE_FAM_OID) == BTEqualStrategyNumber;
	if (ltype != rtype || DeviceExprTypeKind(ltype) != GPUOPS_ET_INT)
		return false;
	opclass = GetDefaultOpClass(ltype, BTREE_AM_OID);
	if (!OidIsValid(opclass))
		return false;
	family = get_opclass_family(opclass);
	return get_opfamily_member(family, ltype, ltype, BTEqualStrategyNumber) == opno;
}

/*
 * A clause that can look rel up: "a = b" with one side a column of rel
 * and the other a column of a table in avail (*dim_var, *col_var).
 */
static bool
LookupClause(RestrictInfo *rinfo, RelOptInfo *rel, Relids avail, Var **dim_var, Var **col_var)
{
	OpExpr *op = (OpExpr *) rinfo->clause;
	Var *l, *r;

	if (!IsA(op, OpExpr) || list_length(op->args) != 2)
		return false;
	l = (Var *) linitial(op->args);
	r = (Var *) lsecond(op->args);
	if (!IsA(l, Var) || !IsA(r, Var) || l->varlevelsup != 0 || r->varlevelsup != 0 ||
		l->varattno <= 0 || r->varattno <= 0)
		return false;
	if ((int) r->varno == (int) rel->relid)
	{
		Var *t = l;

		l = r;
		r = t;
	}
	if ((int) l->varno != (int) rel->relid || !bms_is_member((int) r->varno, avail))
		return false;
	if (!WordEquality(op->opno, exprType((Node *) linitial(op->args)),
					  exprType((Node *) lsecond(op->args))))
		return false;
	*dim_var = l;
	*col_var = r;
	return true;
}

/*
 * A lookup clause written "column = dimension key" (commuted where the
 * equivalence classes put the dimension first, as PostgreSQL 17 does), so
 * that EXPLAIN shows every lookup alike on every version.
 */
static Expr *
ColumnFirst(Expr *clause, RelOptInfo *dim)
{
	OpExpr *op = (OpExpr *) clause;
	Var *l = (Var *) linitial(op->args);
	OpExpr *c;
	Oid commutator;

	if ((int) l->varno != (int) dim->relid)
		return clause;
	commutator = get_commutator(op->opno);
	if (!OidIsValid(commutator))
		return clause;
	c = (OpExpr *) copyObject(op);
	c->opno = commutator;
	c->opfuncid = get_opcode(commutator);
	c->args = list_make2(lsecond(op->args), linitial(op->args));
	return (Expr *) c;
}

/* A table the block may look up: a base rel PostgreSQL can read alone. */
static bool
DimensionRel(RelOptInfo *rel)
{
	if (rel == NULL || rel->reloptkind != RELOPT_BASEREL)
		return GpuQueryDecline("a join with something other than tables");
	if (rel->rtekind != RTE_RELATION && rel->rtekind != RTE_SUBQUERY)
		return GpuQueryDecline("a join with a function, VALUES or CTE scan");
	if (!bms_is_empty(rel->lateral_relids) || rel->lateral_vars != NIL)
		return GpuQueryDecline("a lateral reference");
	if (rel->cheapest_total_path == NULL || PATH_REQ_OUTER(rel->cheapest_total_path))
		return GpuQueryDecline("a joined table without an unparameterized path");
	return true;
}

/* The clauses that could join rel to avail: the implied equalities and joininfo's. */
static List *
CandidateClauses(PlannerInfo *root, RelOptInfo *rel, Relids avail, List *joininfo)
{
	Relids both = bms_union(avail, rel->relids);
	List *out = GpuopsJoinImpliedEqualities(root, both, avail, rel);
	ListCell *lc;

	foreach (lc, joininfo)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);

		if (bms_is_member((int) rel->relid, rinfo->required_relids) &&
			bms_is_subset(rinfo->required_relids, both))
			out = lappend(out, rinfo);
	}
	return out;
}

/*
 * The semi and anti joins' inner tables (*semi, *anti), or false (with a
 * DEBUG1 reason) for any other special join: outer joins, and semi or
 * anti joins of several inner tables.
 */
static bool
SemiAntiRels(PlannerInfo *root, Relids *semi, Relids *anti)
{
	ListCell *lc;

	foreach (lc, root->join_info_list)
	{
		SpecialJoinInfo *sj = (SpecialJoinInfo *) lfirst(lc);
		int rhs;

		if (sj->jointype != JOIN_SEMI && sj->jointype != JOIN_ANTI)
			return GpuQueryDecline("an outer join");
		if (!bms_get_singleton_member(sj->syn_righthand, &rhs) ||
			!bms_equal(sj->min_righthand, sj->syn_righthand))
			return GpuQueryDecline("a semi or anti join of several tables");
		if (sj->jointype == JOIN_SEMI)
			*semi = bms_add_member(*semi, rhs);
		else
			*anti = bms_add_member(*anti, rhs);
	}
	return true;
}

/*
 * rinfo as a join qual, run on the joined row; false (declined) for a
 * clause of a semi or anti join (its required_relids name the tested
 * table, also where the clause reads the outer side only): it would need
 * the tested table's matching rows, and a lookup tests one key.
 */
static bool
JoinQual(GpuQueryBuild *b, RestrictInfo *rinfo, Relids tests)
{
	if (bms_overlap(rinfo->required_relids, tests))
		return GpuQueryDecline("a semi or anti join with a clause other than one equality");
	b->join_quals = lappend(b->join_quals, rinfo->clause);
	return true;
}

/* A relid of input_rel that is no table: an anti join's own (16+, a LEFT JOIN ... IS NULL). */
static bool
JoinRelid(PlannerInfo *root, int relid)
{
#if PG_VERSION_NUM >= 160000
	return bms_is_member(relid, root->outer_join_rels);
#else
	(void) root;
	(void) relid;
	return false;
#endif
}

bool
GpuQueryPlanJoin(PlannerInfo *root, RelOptInfo *input_rel, GpuQueryBuild *b)
{
	RelOptInfo *fact = NULL;
	List *remaining = NIL;
	List *joininfo = NIL; /* every clause over several tables, once */
	List *used = NIL;	  /* those taken as lookups */
	Relids avail;
	Relids semi = NULL, anti = NULL, tests;
	ListCell *lc;
	int relid = -1;

	if (!SemiAntiRels(root, &semi, &anti))
		return false;
	tests = bms_union(semi, anti);
	while ((relid = bms_next_member(input_rel->relids, relid)) >= 0)
	{
		RelOptInfo *rel = relid < root->simple_rel_array_size ? root->simple_rel_array[relid]
															  : NULL;

		if (rel == NULL && JoinRelid(root, relid))
			continue;
		if (!DimensionRel(rel))
			return false;
		if (GpuopsHasPseudoconstant(rel->baserestrictinfo) ||
			GpuopsHasPseudoconstant(rel->joininfo))
			return GpuQueryDecline("a one-time filter (a qual on no column of the block)");
		if (rel->rtekind == RTE_RELATION && (fact == NULL || rel->pages > fact->pages))
			fact = rel;
		foreach (lc, rel->joininfo)
			if (bms_is_subset(lfirst_node(RestrictInfo, lc)->required_relids, input_rel->relids))
				joininfo = list_append_unique_ptr(joininfo, lfirst(lc));
	}
	if (fact == NULL)
		return GpuQueryDecline("a join without a table to read");
	if (bms_is_member((int) fact->relid, tests))
		return GpuQueryDecline("a semi or anti join whose inner table is the largest");
	relid = -1;
	while ((relid = bms_next_member(input_rel->relids, relid)) >= 0)
		if (relid != (int) fact->relid && !JoinRelid(root, relid))
			remaining = lappend(remaining, root->simple_rel_array[relid]);
	if (list_length(remaining) > GPUOPS_QUERY_MAX_DIMS)
		return GpuQueryDecline("more joined tables than the device looks up");

	b->fact = fact;
	avail = bms_copy(fact->relids);
	while (remaining != NIL)
	{
		RelOptInfo *best = NULL;
		RestrictInfo *best_rinfo = NULL;
		List *best_clauses = NIL;
		double best_sel = 0;

		foreach (lc, remaining)
		{
			RelOptInfo *rel = (RelOptInfo *) lfirst(lc);
			List *clauses = CandidateClauses(root, rel, avail, joininfo);
			double sel = rel->rows / Max(rel->tuples, 1.0);
			ListCell *lc2;

			if (rel->rtekind != RTE_RELATION || rel->tuples <= 0)
				sel = 1.0; /* a subquery's rows are all it has */
			foreach (lc2, clauses)
			{
				Var *dv, *cv;

				if (!LookupClause(lfirst_node(RestrictInfo, lc2), rel, avail, &dv, &cv))
					continue;
				if (best == NULL || sel < best_sel)
				{
					best = rel;
					best_rinfo = lfirst_node(RestrictInfo, lc2);
					best_clauses = clauses;
					best_sel = sel;
				}
				break;
			}
		}
		if (best == NULL)
			return GpuQueryDecline(
				"a joined table that no equality of integer-like columns reaches");
		b->dim_rels = lappend(b->dim_rels, best);
		b->dim_paths = lappend(b->dim_paths, best->cheapest_total_path);
		b->lookups = lappend(b->lookups, ColumnFirst(best_rinfo->clause, best));
		b->dim_kinds = lappend_int(b->dim_kinds,
								   bms_is_member((int) best->relid, semi) ? GPUOPS_QDIM_SEMI
									   : bms_is_member((int) best->relid, anti)
									   ? GPUOPS_QDIM_ANTI
									   : GPUOPS_QDIM_INNER);
		used = lappend(used, best_rinfo);
		/* the rest of its equalities: join quals (joininfo's come below, once) */
		foreach (lc, best_clauses)
			if (lfirst(lc) != best_rinfo && !list_member_ptr(joininfo, lfirst(lc)) &&
				!JoinQual(b, lfirst_node(RestrictInfo, lc), tests))
				return false;
		/* a semi or anti join's table tests: no later lookup reads its columns */
		if (!bms_is_member((int) best->relid, tests))
			avail = bms_add_members(avail, best->relids);
		remaining = list_delete_ptr(remaining, best);
	}
	foreach (lc, joininfo)
		if (!list_member_ptr(used, lfirst(lc)) &&
			!JoinQual(b, lfirst_node(RestrictInfo, lc), tests))
			return false;
	return true;
}
