/*
 * join_plan.cpp
 *    Planning helpers every gpuops join shares (join_plan.h).
 */
extern "C" {
#include "postgres.h"

#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
}

#include "guc.h"
#include "join_plan.h"

/* As costsize.c's get_parallel_divisor: the leader helps less with more workers. */
double
GpuopsParallelDivisor(Path *path)
{
	double divisor = path->parallel_workers;

	if (parallel_leader_participation)
	{
		double leader = 1.0 - (0.3 * path->parallel_workers);

		if (leader > 0)
			divisor += leader;
	}
	return Max(divisor, 1.0);
}

/* custom_scan_tlist: a copy of each child's output, outer first */
static List *
ChildColumns(List *scan_tlist, Plan *child)
{
	ListCell *lc;

	foreach (lc, child->targetlist)
	{
		TargetEntry *tle = (TargetEntry *) lfirst(lc);

		scan_tlist = lappend(scan_tlist,
							 makeTargetEntry((Expr *) copyObject(tle->expr),
											 list_length(scan_tlist) + 1, NULL, false));
	}
	return scan_tlist;
}

int
GpuopsFindColumn(List *exprs, Node *expr)
{
	int i = 0;
	ListCell *lc;

	foreach (lc, exprs)
	{
		if (equal(lfirst(lc), expr))
			return i;
		i++;
	}
	return -1;
}

CustomPath *
GpuopsNewJoinPath(RelOptInfo *joinrel, Path *outer, Path *inner, bool partial,
				  const CustomPathMethods *methods)
{
	CustomPath *cpath = makeNode(CustomPath);

	cpath->path.pathtype = T_CustomScan;
	cpath->path.parent = joinrel;
	cpath->path.pathtarget = joinrel->reltarget;
	cpath->path.param_info = NULL;
	cpath->path.parallel_aware = false;
	cpath->path.parallel_safe = joinrel->consider_parallel && outer->parallel_safe &&
		inner->parallel_safe;
	cpath->path.parallel_workers = partial ? outer->parallel_workers : 0;
	cpath->flags = CUSTOMPATH_SUPPORT_PROJECTION;
	cpath->custom_paths = list_make2(outer, inner);
	cpath->methods = methods;
	return cpath;
}

CustomScan *
GpuopsNewJoinScan(RelOptInfo *rel, CustomPath *best_path, List *tlist, List *custom_plans,
				  const CustomScanMethods *methods)
{
	CustomScan *cscan = makeNode(CustomScan);
	List *scan_tlist = NIL;

	scan_tlist = ChildColumns(scan_tlist, (Plan *) linitial(custom_plans));
	scan_tlist = ChildColumns(scan_tlist, (Plan *) lsecond(custom_plans));
	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = NIL;
	cscan->scan.scanrelid = 0;
	cscan->flags = best_path->flags;
	cscan->custom_plans = custom_plans;
	cscan->custom_scan_tlist = scan_tlist;
	cscan->custom_relids = rel->relids;
	cscan->methods = methods;
	return cscan;
}

CustomScan *
GpuopsNewEquiJoinScan(RelOptInfo *rel, CustomPath *best_path, List *tlist, List *custom_plans,
					  const CustomScanMethods *methods)
{
	CustomScan *cscan = GpuopsNewJoinScan(rel, best_path, tlist, custom_plans, methods);
	List *priv = best_path->custom_private;
	List *extra = (List *) lfourth(priv);

	cscan->custom_exprs = list_make4(copyObject(lsecond(priv)), copyObject(lthird(priv)),
									 copyObject(linitial(extra)), copyObject(lsecond(extra)));
	cscan->custom_private = (List *) copyObject(linitial(priv));
	return cscan;
}

void
GpuopsEquiJoinPlanFields(PlanFields &f, GpuopsEquiJoinPlan *plan, const char *node)
{
	f.enum_field(&plan->jointype);
	f.field(&plan->nkeys);
	if (plan->nkeys < 1 || plan->nkeys > GPUOPS_MAX_JOIN_KEYS)
		elog(ERROR, "gpuops: malformed %s plan: %d keys", node, plan->nkeys);
	for (int k = 0; k < plan->nkeys; k++)
	{
		GpuopsJoinKeyPlan *key = &plan->keys[k];

		f.field(&key->outer_col);
		f.field(&key->inner_col);
		f.oid_field(&key->outer_type);
		f.oid_field(&key->inner_type);
		f.oid_field(&key->outer_hash);
		f.oid_field(&key->inner_hash);
		f.oid_field(&key->collation);
	}
	f.field(&plan->filter);
	f.field(&plan->count_cols);
	f.done();
}

GpuopsEquiJoinPlan *
GpuopsReadEquiJoinPlan(List *custom_private, const char *node)
{
	GpuopsEquiJoinPlan *plan = (GpuopsEquiJoinPlan *) palloc0(sizeof(GpuopsEquiJoinPlan));
	PlanFields f(custom_private, node);

	GpuopsEquiJoinPlanFields(f, plan, node);
	return plan;
}

List *
GpuopsIntList(const int *v, int n)
{
	List *l = NIL;

	for (int i = 0; i < n; i++)
		l = lappend_int(l, v[i]);
	return l;
}

bool
GpuopsDirectReadable(Path *path)
{
	RelOptInfo *rel = path->parent;

	return gpuops_enable_direct_scan && path->pathtype == T_SeqScan && path->param_info == NULL &&
		rel->reloptkind == RELOPT_BASEREL && rel->rtekind == RTE_RELATION &&
		rel->baserestrictinfo == NIL;
}

Cost
GpuopsDirectReadSaving(Path *path, double rows, Cost per_row)
{
	if (!GpuopsDirectReadable(path))
		return 0.0;
	return rows * (per_row + Max(cpu_tuple_cost - cpu_operator_cost, 0.0));
}

#if PG_VERSION_NUM >= 160000
/* PostgreSQL 16's varnullingrels (join_plan.h): no macro can say this */

/* The Vars and PlaceHolderVars of node, not those inside an aggregate (matched whole). */
static bool
CollectVars(Node *node, List **vars)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var) || IsA(node, PlaceHolderVar))
	{
		*vars = lappend(*vars, node);
		return false;
	}
	if (IsA(node, Aggref))
		return false;
	return expression_tree_walker(node, (bool (*)())(void (*)(void)) CollectVars, (void *) vars);
}

/* The Var or PlaceHolderVar of vars that setrefs would match node with (the first). */
static Node *
FindSameVar(List *vars, Node *node)
{
	ListCell *lc;

	foreach (lc, vars)
	{
		Node *v = (Node *) lfirst(lc);

		if (IsA(node, Var) && IsA(v, Var) && ((Var *) v)->varno == ((Var *) node)->varno &&
			((Var *) v)->varattno == ((Var *) node)->varattno &&
			((Var *) v)->varlevelsup == ((Var *) node)->varlevelsup)
			return v;
		if (IsA(node, PlaceHolderVar) && IsA(v, PlaceHolderVar) &&
			((PlaceHolderVar *) v)->phid == ((PlaceHolderVar *) node)->phid)
			return v;
	}
	return NULL;
}

/* Gives node (a Var or PlaceHolderVar) the nullingrels of from, if there is one. */
static void
TakeNullingRels(Node *node, Node *from)
{
	if (from == NULL)
		return;
	if (IsA(node, Var))
		((Var *) node)->varnullingrels = bms_copy(((Var *) from)->varnullingrels);
	else
		((PlaceHolderVar *) node)->phnullingrels = bms_copy(
			((PlaceHolderVar *) from)->phnullingrels);
}

void
GpuopsMatchScanNullingRels(CustomScan *cscan, CustomPath *best_path)
{
	List *above = NIL, *scan_vars = NIL, *expr_vars = NIL;
	ListCell *lc;

	CollectVars((Node *) best_path->path.pathtarget->exprs, &above);
	CollectVars((Node *) cscan->scan.plan.targetlist, &above);
	CollectVars((Node *) cscan->scan.plan.qual, &above);
	foreach (lc, cscan->custom_scan_tlist)
	{
		Node *expr = (Node *) ((TargetEntry *) lfirst(lc))->expr;

		if (IsA(expr, Var) || IsA(expr, PlaceHolderVar))
		{
			TakeNullingRels(expr, FindSameVar(above, expr));
			scan_vars = lappend(scan_vars, expr);
		}
	}
	CollectVars((Node *) cscan->custom_exprs, &expr_vars);
	foreach (lc, expr_vars)
		TakeNullingRels((Node *) lfirst(lc), FindSameVar(scan_vars, (Node *) lfirst(lc)));
}
#else
void
GpuopsMatchScanNullingRels(CustomScan *, CustomPath *)
{
}
#endif

Node *
GpuopsOuterVarRefs(Node *node, List *child_exprs)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Var))
	{
		Var *v = (Var *) node;
		int col = GpuopsFindColumn(child_exprs, node);

		if (col < 0)
			elog(ERROR, "gpuops: a computed value's column is not the child's");
		return (Node *) makeVar(OUTER_VAR, (AttrNumber) (col + 1), v->vartype, v->vartypmod,
								v->varcollid, 0);
	}
	return expression_tree_mutator(node, (Node * (*) ())(void (*)(void)) GpuopsOuterVarRefs,
								   (void *) child_exprs);
}
