/*
 * planner.cpp
 *    gpuops' planner hooks: each operator's path generator is called from
 *    here, after the previously installed hook.
 */
extern "C" {
#include "postgres.h"

#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "optimizer/restrictinfo.h"
#include "optimizer/paths.h"
#include "optimizer/planner.h"
}

#include "boundary.h"
#include "gpu_agg.h"
#include "gpu_hashjoin.h"
#include "gpu_mergejoin.h"
#include "gpu_nestloop.h"
#include "gpu_query.h"
#include "gpu_sort.h"
#include "gpu_topn.h"
#include "guc.h"
#include "plan_why.h"
#include "planner_hooks.h"

static create_upper_paths_hook_type prev_create_upper_paths_hook = NULL;
static set_join_pathlist_hook_type prev_set_join_pathlist_hook = NULL;

/*
 * Whether a target holds a Var of no range table entry: varno 0 (the result
 * columns of a set operation, prepunion.c) or ROWID_VAR (the row identity of
 * an inherited UPDATE, DELETE or MERGE target, appendinfo.c).  PostgreSQL's
 * own nodes refer to such Vars only by position (setrefs turns them into
 * OUTER_VAR and INNER_VAR references), but a custom scan's custom_scan_tlist
 * keeps them as they are, and setrefs and EXPLAIN then cannot resolve them
 * ("bogus varno: 0" after UNION ... ORDER BY, "bogus varno: -4" in a MERGE
 * over a partitioned target).  gpuops keeps PostgreSQL's plan for such rels.
 */
static bool
NamesNoRelation(List *exprs)
{
	ListCell *lc;

	foreach (lc,
			 pull_var_clause((Node *) exprs,
							 PVC_RECURSE_AGGREGATES | PVC_RECURSE_WINDOWFUNCS |
								 PVC_INCLUDE_PLACEHOLDERS))
	{
		Var *v = (Var *) lfirst(lc);

		if (IsA(v, Var) && (v->varno == 0 || IS_SPECIAL_VARNO(v->varno)))
			return true;
	}
	return false;
}

static bool
RelNamesNoRelation(RelOptInfo *rel)
{
	if (rel == NULL)
		return false;
	if (rel->reltarget != NULL && NamesNoRelation(rel->reltarget->exprs))
		return true;
	return rel->cheapest_total_path != NULL &&
		NamesNoRelation(rel->cheapest_total_path->pathtarget->exprs);
}

/*
 * Whether an expression selects a field of a Var of a subquery or CTE
 * (FieldSelect over such a Var: a recursive CTE's SEARCH or CYCLE column, a
 * subquery's ROW() column).  EXPLAIN VERBOSE names the field by looking
 * into the plan node that scans the subquery or CTE (ruleutils.c,
 * get_name_for_var_field); through a custom scan's custom_scan_tlist it
 * finds the custom scan instead: an assertion failure with assertions on
 * (found by PostgreSQL's suite, "with recursive ... search breadth first"),
 * a made-up name ("f1") without.  gpuops keeps PostgreSQL's plan there.
 */
static bool
SelectsSubqueryFieldWalker(Node *node, PlannerInfo *root)
{
	if (node == NULL)
		return false;
	if (IsA(node, FieldSelect) && IsA(((FieldSelect *) node)->arg, Var))
	{
		Var *v = (Var *) ((FieldSelect *) node)->arg;

		if (v->varlevelsup == 0 && v->varno > 0 && v->varno < root->simple_rel_array_size &&
			root->simple_rte_array[v->varno] != NULL &&
			(root->simple_rte_array[v->varno]->rtekind == RTE_SUBQUERY ||
			 root->simple_rte_array[v->varno]->rtekind == RTE_CTE))
			return true;
	}
	return expression_tree_walker(node, (bool (*)())(void (*)(void)) SelectsSubqueryFieldWalker,
								  root);
}

static bool
SelectsSubqueryField(PlannerInfo *root, Node *exprs)
{
	return SelectsSubqueryFieldWalker(exprs, root);
}

/*
 * The rel's own target, and the query's final one: PostgreSQL puts the
 * final projection on the topmost node that can project, ours included
 * (the recursive term's ROW((sg.seq).depth + 1, ...) of a SEARCH clause).
 */
static bool
RelSelectsSubqueryField(PlannerInfo *root, RelOptInfo *rel)
{
	return (rel != NULL && rel->reltarget != NULL &&
			SelectsSubqueryField(root, (Node *) rel->reltarget->exprs)) ||
		SelectsSubqueryField(root, (Node *) root->processed_tlist);
}

/*
 * At UPPERREL_ORDERED, PostgreSQL has already handed the input rel's paths
 * that are sorted as asked to the ordered rel as they are
 * (create_ordered_paths), and add_path frees one it rejects, so the input
 * rel's pathlist and cheapest paths may point at freed memory: reading
 * cheapest_total_path crashed a backend in PostgreSQL's suite with parallel
 * plans (a sorted Gather Merge of the join rel, cheapest, that the ordered
 * rel dropped).  Only sorted paths are handed over; the cheapest total path
 * that is not sorted (the one GpuSort wants) got a Sort on top and is
 * alive whatever became of that Sort.
 *
 * So the cheapest total path is kept when it is reachable from the ordered
 * rel's own paths, or when its memory still holds that rel's path; else
 * the cheapest input path reachable from the ordered rel takes its place
 * (PostgreSQL reads the input rel no more), or none.  Reading a freed small
 * chunk is safe within the planner's context (the block stays); only its
 * pointers may not be followed.  A freed chunk no longer names its context
 * in its header (PostgreSQL 15: the header holds the freelist link) or no
 * longer starts with a node tag (16 and later: its first bytes hold the
 * link); no path the planner makes after this rel's has it as parent.
 * Partial paths are never handed over as they are.
 */
static bool
ReachableFromOrdered(Path *target, RelOptInfo *input_rel, RelOptInfo *ordered_rel, Path **best)
{
	bool found = false;
	ListCell *lc;

	*best = NULL;
	foreach (lc, ordered_rel->pathlist)
	{
		Path *p = (Path *) lfirst(lc);

		while (p != NULL && p->parent != input_rel)
		{
			if (IsA(p, SortPath) || IsA(p, IncrementalSortPath))
				p = ((SortPath *) p)->subpath;
			else if (IsA(p, ProjectionPath))
				p = ((ProjectionPath *) p)->subpath;
			else
				p = NULL; /* a Gather Merge of a partial path, a Limit, ... */
		}
		if (p == NULL)
			continue;
		found = found || p == target;
		if (p->param_info == NULL && (*best == NULL || p->total_cost < (*best)->total_cost))
			*best = p;
	}
	return found;
}

static bool
StillPathOf(Path *p, RelOptInfo *rel)
{
#if PG_VERSION_NUM < 160000
	/* AllocSet's chunk header: its context, or once freed the freelist link */
	if (*(void **) ((char *) p - sizeof(void *)) != *(void **) ((char *) rel - sizeof(void *)))
		return false;
#endif
	return (uint32) nodeTag(p) > 0 && (uint32) nodeTag(p) < 0x10000 && p->parent == rel;
}

static void
RepairOrderedInput(RelOptInfo *input_rel, RelOptInfo *ordered_rel)
{
	Path *cheapest = input_rel->cheapest_total_path;
	Path *best;

	if (cheapest == NULL || ReachableFromOrdered(cheapest, input_rel, ordered_rel, &best) ||
		StillPathOf(cheapest, input_rel))
		return;
	input_rel->cheapest_total_path = best;
}

static void
UpperPathsImpl(PlannerInfo *root, UpperRelationKind stage, RelOptInfo *input_rel,
			   RelOptInfo *output_rel, void *extra)
{
	/*
	 * Only these two stages plan gpuops nodes.  At the others the input
	 * rel's cheapest path may be freed memory, as at UPPERREL_ORDERED:
	 * grouping_planner hands the scan/join rel's paths to the final rel as
	 * they are, and add_path frees those it rejects (a SIGSEGV in
	 * PostgreSQL's suite with parallel plans, psql's \d under a UNION).
	 */
	if (stage != UPPERREL_GROUP_AGG && stage != UPPERREL_ORDERED)
		return;
	if (stage == UPPERREL_ORDERED && gpuops_enabled)
		RepairOrderedInput(input_rel, output_rel);
	if (!gpuops_enabled || RelNamesNoRelation(input_rel) ||
		RelSelectsSubqueryField(root, input_rel) || RelSelectsSubqueryField(root, output_rel) ||
		SelectsSubqueryField(root, root->parse->havingQual))
		return;
	switch (stage)
	{
		case UPPERREL_GROUP_AGG:
			GpuopsWhySetContext(root, input_rel, "GROUP BY or aggregate");
			GpuQueryAddPaths(root, input_rel, output_rel, extra);
			GpuAggAddPaths(root, input_rel, output_rel, extra);
			GpuMergeJoinAddCountPaths(root, input_rel, output_rel, extra);
			break;
		case UPPERREL_ORDERED:
			GpuopsWhySetContext(root, input_rel, "ORDER BY");
			GpuSortAddOrderedPaths(root, input_rel, output_rel);
			GpuTopNAddOrderedPaths(root, input_rel, output_rel);
			break;
		default:
			break;
	}
}

static void
GpuopsUpperPaths(PlannerInfo *root, UpperRelationKind stage, RelOptInfo *input_rel,
				 RelOptInfo *output_rel, void *extra)
{
	if (prev_create_upper_paths_hook)
		prev_create_upper_paths_hook(root, stage, input_rel, output_rel, extra);
	GpuopsGuard("create_upper_paths_hook", UpperPathsImpl, root, stage, input_rel, output_rel,
				extra);
}

static void
JoinPathsImpl(PlannerInfo *root, RelOptInfo *joinrel, RelOptInfo *outerrel, RelOptInfo *innerrel,
			  JoinType jointype, JoinPathExtraData *extra)
{
	if (!gpuops_enabled || RelNamesNoRelation(joinrel) || RelNamesNoRelation(outerrel) ||
		RelNamesNoRelation(innerrel) || RelSelectsSubqueryField(root, joinrel) ||
		SelectsSubqueryField(
			root,
			(Node *) list_concat(extract_actual_clauses(extra->restrictlist, false),
								 extract_actual_clauses(extra->restrictlist, true))))
		return;
	GpuopsWhySetContext(root, joinrel, "join");
	GpuHashJoinAddPaths(root, joinrel, outerrel, innerrel, jointype, extra);
	GpuNestLoopAddPaths(root, joinrel, outerrel, innerrel, jointype, extra);
	GpuMergeJoinAddPaths(root, joinrel, outerrel, innerrel, jointype, extra);
}

static void
GpuopsJoinPaths(PlannerInfo *root, RelOptInfo *joinrel, RelOptInfo *outerrel, RelOptInfo *innerrel,
				JoinType jointype, JoinPathExtraData *extra)
{
	if (prev_set_join_pathlist_hook)
		prev_set_join_pathlist_hook(root, joinrel, outerrel, innerrel, jointype, extra);
	GpuopsGuard("set_join_pathlist_hook", JoinPathsImpl, root, joinrel, outerrel, innerrel,
				jointype, extra);
}

void
GpuopsInstallPlannerHooks(void)
{
	prev_set_join_pathlist_hook = set_join_pathlist_hook;
	set_join_pathlist_hook = GpuopsJoinPaths;
	prev_create_upper_paths_hook = create_upper_paths_hook;
	create_upper_paths_hook = GpuopsUpperPaths;
}
