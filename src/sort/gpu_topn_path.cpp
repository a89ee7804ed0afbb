/*
 * gpu_topn_path.cpp
 *    GpuTopN planning (gpu_topn.h): at UPPERREL_ORDERED, for ORDER BY
 *    column keys with a constant LIMIT over one plain heap table without
 *    quals, a CustomPath on the table that competes on cost with
 *    PostgreSQL's bounded sorts and GpuSort's.
 *
 * Cost.  The pages are read as GpuQuery reads a table (gpu_query_path.cpp:
 * the disk term, gpuops.query_page_cost a page for the walk, half an
 * operator a value turned into a word, shared among the processes), the
 * keys and TIDs copied to the device (gpuops.transfer_cost a MB), where
 * keeping the n first costs a twentieth of an operator a row (the
 * device's rate, as GpuQuery's kernels).  Then the n rows are fetched by
 * TID, each a buffer lookup, a pin, a visibility check and a copy into the
 * scan tuple: measured on the H200 (table in shared buffers) at 1.5 us a
 * row in a session that had fetched before, 2.5 us in a new one (its first
 * touch of each shared buffer page), about fifteen cpu_tuple_costs.
 */
extern "C" {
#include "postgres.h"

#include "access/stratnum.h"
#include "access/table.h"
#include "catalog/pg_am.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "nodes/makefuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/planmain.h"
#include "parser/parsetree.h"
#include "utils/rel.h"
#include "utils/lsyscache.h"
#include "utils/spccache.h"
#include "pg_compat.h"
}

#include "boundary.h"
#include "gpu_query.h"
#include "gpu_sort.h"
#include "gpu_topn.h"
#include "guc.h"
#include "plan_why.h"
#include "query_reader.h"

/* a row fetched by TID, in cpu_tuple_costs (above) */
#define GPUTOPN_FETCH_TUPLE_COSTS 15.0

static Plan *PlanGpuTopNPath(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path, List *tlist,
							 List *clauses, List *custom_plans);

static const CustomPathMethods gpu_topn_path_methods = {
	GPUTOPN_NAME, PlanGpuTopNPath, NULL, /* ReparameterizeCustomPathByChild */
};

static bool
Decline(const char *why)
{
	GpuopsDecline(GPUTOPN_NAME, "%s", why);
	return false;
}

/* The reader's form for a sort key of this type, or -1. */
static int
KeyForm(Oid type)
{
	switch (type)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case DATEOID:
		case TIMEOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
		case BOOLOID:
			return QCOL_INT;
		case FLOAT4OID:
			return QCOL_FLOAT4;
		case FLOAT8OID:
			return QCOL_FLOAT8;
		default:
			return -1;
	}
}

/* The table: one plain heap table, no quals, no row-level security. */
static bool
PlainTableWithoutQuals(PlannerInfo *root, RelOptInfo *rel)
{
	RangeTblEntry *rte;
	Relation r;
	bool heap;

	if (rel->reloptkind != RELOPT_BASEREL || rel->rtekind != RTE_RELATION)
		return Decline("not one base table");
	rte = planner_rt_fetch(rel->relid, root);
	if (rte->relkind != RELKIND_RELATION || rte->inh || rte->tablesample != NULL)
		return Decline("not a plain table (inheritance, partitions, views, TABLESAMPLE)");
	if (rte->securityQuals != NIL)
		return Decline("row-level security");
	if (rel->baserestrictinfo != NIL)
		return Decline("a WHERE clause on the table (only a whole table is read by row position)");
	if (!bms_is_empty(rel->lateral_relids))
		return Decline("a lateral reference");
	r = table_open(rte->relid, NoLock); /* the planner holds its lock */
	heap = r->rd_rel->relam == HEAP_TABLE_AM_OID;
	table_close(r, NoLock);
	return heap ? true : Decline("a table access method other than heap");
}

/* Sort key k (a pathkey): a column of the table in its type's default btree order. */
static bool
KeyOf(PathKey *pk, RelOptInfo *rel, GpuTopNPlan *plan, List **key_vars)
{
	EquivalenceClass *ec = pk->pk_eclass;
	Var *var = NULL;
	ListCell *lc;
	Oid opclass;
	int form;
	int k = plan->nkeys;

	if (ec->ec_has_volatile)
		return Decline("a volatile sort key");
	foreach (lc, ec->ec_members)
	{
		EquivalenceMember *em = (EquivalenceMember *) lfirst(lc);
		Expr *e = em->em_expr;

		while (IsA(e, RelabelType))
			e = ((RelabelType *) e)->arg;
		if (IsA(e, Var) && ((Var *) e)->varno == (int) rel->relid &&
			((Var *) e)->varlevelsup == 0 && ((Var *) e)->varattno > 0 && !em->em_is_child)
		{
			var = (Var *) e;
			break;
		}
	}
	if (var == NULL)
		return Decline("a sort key that is not a column of the table");
	form = KeyForm(var->vartype);
	if (form < 0)
		return Decline("a sort key of a type other than integers, dates, times and floats");
	opclass = GetDefaultOpClass(var->vartype, BTREE_AM_OID);
	if (!OidIsValid(opclass) || get_opclass_family(opclass) != pk->pk_opfamily ||
		(GpuopsPathKeyStrategy(pk) != BTLessStrategyNumber &&
		 GpuopsPathKeyStrategy(pk) != BTGreaterStrategyNumber))
		return Decline("a sort key in an order other than its type's default");
	if (k >= GPUOPS_TOPN_MAX_KEYS)
		return Decline("more sort keys than the top-N backend takes");
	plan->attnums[k] = var->varattno;
	plan->forms[k] = form;
	plan->descending[k] = GpuopsPathKeyStrategy(pk) == BTGreaterStrategyNumber;
	plan->nulls_first[k] = pk->pk_nulls_first;
	plan->nkeys++;
	*key_vars = lappend(*key_vars, var);
	return true;
}

static void
GpuTopNAddOrderedPathsImpl(PlannerInfo *root, RelOptInfo *input_rel, RelOptInfo *ordered_rel)
{
	Query *parse = root->parse;
	uint64 bound = GpuSortBound(root);
	PathTarget *final_target = root->upper_targets[UPPERREL_ORDERED];
	GpuTopNPlan *plan;
	List *key_vars = NIL;
	ListCell *lc;
	double tuples, pages, rows_out, seq_page_cost_spc, deform, read, copy, device, fetch;
	CustomPath *cpath;
	Path *path;
	PlanFields fields;

	if (bound == 0 || root->sort_pathkeys == NIL || parse->rowMarks != NIL || parse->hasTargetSRFs)
		return; /* not a top-N; GpuSort says why it declines the rest */
	if (bound > GPUTOPN_MAX_BOUND)
	{
		Decline("a bound over the top-N backend's");
		return;
	}
	if (!PlainTableWithoutQuals(root, input_rel))
		return;
	tuples = Max(input_rel->tuples, 0.0);
	pages = input_rel->pages;
	if (tuples < gpuops_min_rows)
	{
		GpuopsDecline(GPUTOPN_NAME, "%.0f rows, under gpuops.min_rows (%d)", tuples,
					  gpuops_min_rows);
		return;
	}
	plan = (GpuTopNPlan *) palloc0(sizeof(GpuTopNPlan));
	foreach (lc, root->sort_pathkeys)
		if (!KeyOf((PathKey *) lfirst(lc), input_rel, plan, &key_vars))
			return;
	plan->bound = (int) bound;
	plan->nworkers = GpuQueryWorkers(root, input_rel);

	rows_out = Min((double) bound, Max(input_rel->rows, 1.0));
	get_tablespace_page_costs(input_rel->reltablespace, NULL, &seq_page_cost_spc);
	/* each key and the TID a word */
	deform = tuples * (plan->nkeys + 1) * cpu_operator_cost * 0.5;
	if (plan->nworkers > 0)
		read = pages * seq_page_cost_spc + parallel_setup_cost +
			(pages * gpuops_query_page_cost + deform) / (plan->nworkers + 1);
	else
		read = pages * (seq_page_cost_spc + gpuops_query_page_cost) +
			deform / Max(Min(gpuops_reader_threads, 16), 1);
	copy = tuples * (plan->nkeys * 9 + 8) / (1024.0 * 1024.0) * gpuops_transfer_cost;
	device = tuples * 0.05 * cpu_operator_cost;
	fetch = rows_out * GPUTOPN_FETCH_TUPLE_COSTS * cpu_tuple_cost;

	cpath = makeNode(CustomPath);
	cpath->path.pathtype = T_CustomScan;
	cpath->path.parent = ordered_rel;
	cpath->path.pathtarget = input_rel->reltarget;
	cpath->path.param_info = NULL;
	/* one device session (its workers only walk): never in a worker */
	cpath->path.parallel_aware = false;
	cpath->path.parallel_safe = false;
	cpath->path.parallel_workers = 0;
	cpath->path.pathkeys = root->sort_pathkeys;
	cpath->path.rows = rows_out;
	cpath->path.startup_cost = gpuops_startup_cost + read + copy + device + fetch;
	cpath->path.total_cost = cpath->path.startup_cost + rows_out * cpu_tuple_cost;
	cpath->flags = CUSTOMPATH_SUPPORT_PROJECTION;
	cpath->custom_paths = NIL;
	GpuTopNPlanFields(fields, plan);
	cpath->custom_private = list_make3(fields.list(), key_vars,
									   makeInteger((int) input_rel->relid));
	cpath->methods = &gpu_topn_path_methods;
	path = &cpath->path;
	/* as GpuSort's path: projected to the final target */
	if (final_target != NULL && path->pathtarget != final_target)
		path = (Path *) create_projection_path(root, ordered_rel, path, final_target);
	GpuopsAddPath(ordered_rel, path);
}

void
GpuTopNAddOrderedPaths(PlannerInfo *root, RelOptInfo *input_rel, RelOptInfo *ordered_rel)
{
	if (!GpuopsPlanningAllowedFor(GPUTOPN_NAME, gpuops_enable_topn, "gpuops.enable_topn"))
		return;
	GpuTopNAddOrderedPathsImpl(root, input_rel, ordered_rel);
}

static Plan *
PlanGpuTopNPathImpl(PlannerInfo *root, RelOptInfo *, CustomPath *best_path, List *tlist, List *,
					List *)
{
	CustomScan *cscan = makeNode(CustomScan);
	List *priv = best_path->custom_private;
	GpuTopNPlan plan;
	PlanFields reader((List *) linitial(priv), GPUTOPN_NAME);

	GpuTopNPlanFields(reader, &plan);
	/* the node starts its own workers (query_parallel.h): parallel mode, as for a Gather */
	if (plan.nworkers > 0)
		root->glob->parallelModeNeeded = true;
	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = NIL;
	cscan->scan.scanrelid = (Index) intVal(lthird(priv));
	cscan->flags = best_path->flags;
	cscan->custom_plans = NIL;
	cscan->custom_exprs = (List *) copyObject(lsecond(priv));
	cscan->custom_private = (List *) copyObject(linitial(priv));
	cscan->custom_scan_tlist = NIL;
	cscan->custom_relids = NULL;
	cscan->methods = &gpu_topn_scan_methods;
	return &cscan->scan.plan;
}

static Plan *
PlanGpuTopNPath(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path, List *tlist,
				List *clauses, List *custom_plans)
{
	return GpuopsGuard("PlanCustomPath", PlanGpuTopNPathImpl, root, rel, best_path, tlist, clauses,
					   custom_plans);
}
