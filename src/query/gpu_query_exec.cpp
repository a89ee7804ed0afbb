/*
 * gpu_query_exec.cpp
 *    GpuQuery execution: the node's callbacks (gpu_query.h).
 *
 * The first call reads the whole table into the query backend
 * (gpu_query_run.cpp) and gets the groups back; each call then fills the
 * scan tuple of the next group (gpu_query_final.cpp) and ExecScan applies
 * HAVING and the projection.  When the run escapes, the escape plan (the
 * node's child: PostgreSQL's aggregation of the block, same target list,
 * HAVING applied) returns the rows instead, as they are.
 */
extern "C" {
#include "postgres.h"

#include "access/tableam.h"
#include "executor/executor.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "utils/memutils.h"
#include "utils/ruleutils.h"
#include "pg_compat.h"
}

#include "boundary.h"
#include "device.h"
#include "device_expr.h"
#include "guarded_scan.h"
#include "gpu_query_exec.h"
#include "query_text_test.h"
#include "guc.h"

extern const CustomExecMethods gpu_query_exec_methods;

static TupleTableSlot *
GpuQueryNext(ScanState *ss)
{
	GpuQueryState *st = (GpuQueryState *) ss;
	TupleTableSlot *slot = ss->ss_ScanTupleSlot;

	if (st->next_group < st->ngroups)
		return GpuQueryGroupRow(st, (int64) st->next_group++, slot);
	/* without GROUP BY an aggregate returns one row, also over no rows */
	if (st->plan->nkeys == 0 && st->ngroups == 0 && !st->empty_row_done)
	{
		st->empty_row_done = true;
		return GpuQueryGroupRow(st, -1, slot);
	}
	return ExecClearTuple(slot);
}

static TupleTableSlot *
ExecGpuQueryImpl(CustomScanState *node)
{
	GpuQueryState *st = (GpuQueryState *) node;

	GpuopsNodeCountRun(st);
	if (!st->done)
		GpuQueryRun(st);
	if (st->escaping)
		return GpuopsNodeCountRow(st, ExecProcNode(st->escape_ps));
	return GpuopsExecScan<GpuQueryNext>(node);
}

static GpuopsExprProgram *
ProgramOrNull(List *l)
{
	GpuopsExprProgram *prog;

	if (l == NIL)
		return NULL;
	prog = (GpuopsExprProgram *) palloc(sizeof(GpuopsExprProgram));
	DeviceExprProgramFromList(l, prog);
	return prog;
}

static Node *
CreateGpuQueryStateImpl(CustomScan *cscan)
{
	GpuQueryState *st = NewCustomScanState<GpuQueryState>(cscan, &gpu_query_exec_methods);
	GpuQueryPlan *plan = (GpuQueryPlan *) palloc0(sizeof(GpuQueryPlan));
	PlanFields fields(cscan->custom_private, GPUQUERY_NAME);

	GpuQueryPlanFields(fields, plan);
	st->plan = plan;
	st->read_pages = -1;
	st->qual = ProgramOrNull(plan->qual_prog);
	st->join_qual = ProgramOrNull(plan->join_qual_prog);
	for (int k = 0; k < plan->nkeys; k++)
		st->key_progs[k] = ProgramOrNull((List *) list_nth(plan->key_progs, k));
	for (int a = 0; a < plan->naggs; a++)
	{
		st->arg_progs[a] = ProgramOrNull((List *) list_nth(plan->arg_progs, a));
		st->filter_progs[a] = ProgramOrNull((List *) list_nth(plan->filter_progs, a));
	}
	for (int c = 0; c < plan->ncols; c++)
	{
		st->cols[c].attnum = (AttrNumber) plan->attnums[c];
		st->cols[c].form = (QueryColumnForm) plan->forms[c];
	}
	for (int d = 0; d < plan->ndims; d++)
	{
		const GpuQueryDimPlan *dim = &plan->dims[d];

		if (!OidIsValid(dim->read_relid))
			continue;
		st->dim_read_cols[d] = (QueryReadColumn *) palloc0(sizeof(QueryReadColumn) *
														   GPUOPS_QUERY_MAX_COLS);
		for (int c = 0; c < dim->read_ncols; c++)
		{
			st->dim_read_cols[d][c].attnum = (AttrNumber) dim->read_attnums[c];
			st->dim_read_cols[d][c].form = (QueryColumnForm) dim->read_forms[c];
		}
		for (int i = 0; i < list_length(dim->read_test_cols); i++)
		{
			int c = list_nth_int(dim->read_test_cols, i);
			Var *var;

			if (c < 0 || c >= dim->read_ncols || dim->read_forms[c] != QCOL_TEXT_TEST ||
				!QueryTextTestOf((Node *) list_nth(dim->read_test_exprs, i), &var,
								 &st->dim_read_cols[d][c].test))
				elog(ERROR, "gpuops: malformed %s plan: dimension text test", GPUQUERY_NAME);
		}
		st->dim_read_qual[d] = ProgramOrNull(dim->read_qual);
	}
	/* text tests: the fact table's read by the reader, a dimension's staged */
	for (int i = 0; i < list_length(plan->test_cols); i++)
	{
		int c = list_nth_int(plan->test_cols, i);
		QueryTextTest *t = c < plan->ncols
			? &st->cols[c].test
			: (st->pay_tests[c - plan->ncols] = (QueryTextTest *) palloc(sizeof(QueryTextTest)));
		Var *var;

		if (c < 0 || c >= plan->ncols + plan->npayload ||
			(c < plan->ncols && plan->forms[c] != QCOL_TEXT_TEST) ||
			!QueryTextTestOf((Node *) list_nth(plan->test_exprs, i), &var, t))
			elog(ERROR, "gpuops: malformed %s plan: text test", GPUQUERY_NAME);
	}
	st->aggs = (GpuAggDesc *) palloc0(sizeof(GpuAggDesc) * Max(plan->naggs, 1));
	for (int a = 0; a < plan->naggs; a++)
	{
		GpuAggDesc *d = &st->aggs[a];
		const GpuQueryAggPlan *p = &plan->aggs[a];

		d->final = p->final;
		d->final_fn = p->final_fn;
		d->arg_col = -1;
		d->filter_col = -1;
		d->notnull_col = -1;
		d->arg_type = p->arg_pgtype;
		d->value_kind = GPUOPS_KEY_INT8;
		d->scale = p->num_scale;
		if (OidIsValid(d->final_fn))
			fmgr_info(d->final_fn, &d->final_flinfo);
	}
	return (Node *) st;
}

/*
 * The range table index of the table a dimension's child plan scans, if it
 * is relid (the planner's index moved when setrefs flattened the range
 * table), or 0: the dimension is staged through its plan.
 */
static Index
DimScanRti(EState *estate, Plan *child, Oid relid)
{
	Index rti = 0;

	/* the rel's cheapest path may be a Gather of its parallel scan */
	while (child != NULL && (IsA(child, Gather) || IsA(child, GatherMerge)))
		child = outerPlan(child);
	if (child == NULL)
		return 0;
	switch (nodeTag(child))
	{
		case T_SeqScan:
		case T_IndexScan:
		case T_IndexOnlyScan:
		case T_BitmapHeapScan:
		case T_TidScan:
		case T_TidRangeScan:
			rti = ((Scan *) child)->scanrelid;
			break;
		default:
			return 0;
	}
	if (rti == 0 || rti > (Index) list_length(estate->es_range_table) ||
		exec_rt_fetch(rti, estate)->relid != relid)
		return 0;
	return rti;
}

static void
BeginGpuQueryImpl(CustomScanState *node, EState *estate, int eflags)
{
	GpuQueryState *st = (GpuQueryState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	/* the escape plan is read once, forward */
	int child_flags = eflags & ~(EXEC_FLAG_REWIND | EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK);
	ListCell *lc;

	st->ninputs = 0;
	st->device_shared = IsInParallelMode();
	st->escape_ps = ExecInitNode((Plan *) linitial(cscan->custom_plans), estate, child_flags);
	node->custom_ps = list_make1(st->escape_ps);
	if (list_length(cscan->custom_plans) != 1 + st->plan->ndims)
		elog(ERROR, "gpuops: malformed %s plan: dimensions", GPUQUERY_NAME);
	/* the dimensions: each read to its end once per run (rescanned for new Params) */
	for (int d = 0; d < st->plan->ndims; d++)
	{
		Plan *child = (Plan *) list_nth(cscan->custom_plans, 1 + d);

		st->dim_ps[d] = ExecInitNode(child, estate, child_flags);
		node->custom_ps = lappend(node->custom_ps, st->dim_ps[d]);
		st->dim_read_rti[d] = OidIsValid(st->plan->dims[d].read_relid)
			? DimScanRti(estate, child, st->plan->dims[d].read_relid)
			: 0;
	}
	foreach (lc, st->plan->params)
	{
		Param *p = lfirst_node(Param, lc);

		st->param_states = lappend(st->param_states, ExecInitExpr((Expr *) p, &node->ss.ps));
		st->param_types = lappend_oid(st->param_types, p->paramtype);
	}
	st->param_slots = st->plan->param_slots;
	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		return;
	GpuopsNodePrewarm(st, eflags);
	st->run_cxt = AllocSetContextCreate(estate->es_query_cxt, "GpuQuery reader",
										ALLOCSET_DEFAULT_SIZES);
	st->dims_cxt = AllocSetContextCreate(estate->es_query_cxt, "GpuQuery dimensions",
										 ALLOCSET_DEFAULT_SIZES);
	st->dev = GpuopsNodeDevice<GpuQueryDevice>(st, estate);
}

static void
EndGpuQueryImpl(CustomScanState *node)
{
	GpuQueryState *st = (GpuQueryState *) node;

	if (st->dev != NULL)
		GpuQueryEndRun(st);
	GpuopsNodeStatDevice(st, st->rstats.rows, st->stats.copy_ms, st->stats.kernel_ms,
						 st->stats.bytes_from_device);
	GpuopsNodeEnd(st);
	ExecEndNode(st->escape_ps);
	for (int d = 0; d < st->plan->ndims; d++)
		ExecEndNode(st->dim_ps[d]);
}

static void
ReScanGpuQueryImpl(CustomScanState *node)
{
	GpuQueryState *st = (GpuQueryState *) node;
	Bitmapset *changed = node->ss.ps.chgParam;

	st->stat.running = false; /* gpuops.stat: the next row asked for starts a run */
	if (changed != NULL)
	{
		UpdateChangedParamSet(st->escape_ps, changed);
		for (int d = 0; d < st->plan->ndims; d++)
			UpdateChangedParamSet(st->dim_ps[d], changed);
		st->dims_staged = false; /* read again: they may read the Params */
	}
	if (st->escaping)
	{
		/* the escape plan runs again (with new Params: the device may take them) */
		ExecReScan(st->escape_ps);
		if (changed == NULL)
			return;
	}
	if (st->done && !st->escaping && changed == NULL)
	{
		/* the same groups again */
		st->next_group = 0;
		st->empty_row_done = false;
		return;
	}
	st->dev->end();
	st->done = false;
	st->escaping = false;
	st->ngroups = st->next_group = 0;
	st->group_keys = NULL;
	st->results = NULL;
}

static void
ExplainGpuQueryImpl(CustomScanState *node, List *ancestors, ExplainState *es)
{
	GpuQueryState *st = (GpuQueryState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	const GpuQueryPlan *plan = st->plan;
	bool prefix = GpuopsExplainUsePrefix(es);
	List *context;
	List *items = NIL;

	int nquals = list_length(cscan->custom_exprs) - plan->njoin_quals - plan->ndims;

	context = set_deparse_context_plan(es->deparse_cxt, node->ss.ps.plan, ancestors);
	if (nquals > 0)
		ExplainPropertyText("Device Filter",
							deparse_expression((Node *) make_ands_explicit(
												   list_copy_head(cscan->custom_exprs, nquals)),
											   context, prefix, false),
							es);
	/*
	 * each dimension's lookup, "pages read" where the reader reads it
	 * (gpu_query_dim_read.cpp), with ANALYZE the rows it staged and why its
	 * plan read them instead
	 */
	for (int d = 0; d < plan->ndims; d++)
	{
		char *clause = deparse_expression((Node *) list_nth(cscan->custom_exprs,
															nquals + plan->njoin_quals + d),
										  context, true, false);
		bool read = OidIsValid(plan->dims[d].read_relid);
		int nw = plan->dims[d].read_workers;
		GpuopsQueryDimKind kind = plan->dims[d].kind;
		StringInfoData how;

		initStringInfo(&how);
		if (kind != GPUOPS_QDIM_INNER)
			appendStringInfoString(&how, kind == GPUOPS_QDIM_SEMI ? "semi join" : "anti join");
		if (read && es->analyze && st->dims_ran && st->dim_read_why[d] != NULL)
			appendStringInfo(&how, "%splan read: %s", how.len > 0 ? ", " : "", st->dim_read_why[d]);
		else if (read)
			appendStringInfo(&how, "%spages read", how.len > 0 ? ", " : "");
		if (read && nw > 0 && !(es->analyze && st->dims_ran && st->dim_read_why[d] != NULL))
			appendStringInfo(&how, ", %d worker%s", nw, nw > 1 ? "s" : "");
		if (es->analyze && st->dims_ran)
			appendStringInfo(&how, "%s%llu rows", how.len > 0 ? ", " : "",
							 (unsigned long long) st->dim_rows[d].nrows);
		if (how.len > 0)
			clause = psprintf("%s (%s)", clause, how.data);
		items = lappend(items, clause);
	}
	if (items != NIL)
		ExplainPropertyList("Lookups", items, es);
	items = NIL;
	if (plan->njoin_quals > 0)
		ExplainPropertyText(
			"Join Filter",
			deparse_expression((Node *) make_ands_explicit(list_copy_tail(
								   list_copy_head(cscan->custom_exprs, nquals + plan->njoin_quals),
								   nquals)),
							   context, prefix, false),
			es);
	for (int k = 0; k < plan->nkeys; k++)
		items = lappend(items,
						deparse_expression(
							(Node *) ((TargetEntry *) list_nth(cscan->custom_scan_tlist, k))->expr,
							context, prefix, false));
	if (items != NIL)
		ExplainPropertyList("Group Key", items, es);
	items = NIL;
	for (int a = 0; a < plan->naggs - plan->nhidden; a++)
		items = lappend(items,
						deparse_expression((Node *) ((TargetEntry *) list_nth(
														 cscan->custom_scan_tlist, plan->nkeys + a))
											   ->expr,
										   context, prefix, false));
	if (items != NIL)
		ExplainPropertyList("Aggregates", items, es);
	ExplainPropertyInteger("Columns Read", NULL, plan->ncols, es);
	if (plan->nworkers > 0)
		ExplainPropertyInteger("Workers Planned", NULL, plan->nworkers, es);
	if (!es->analyze || !st->done)
		return;
	if (plan->nworkers > 0)
		ExplainPropertyInteger("Workers Launched", NULL, st->workers_launched, es);
	if (st->escaped_ever)
		ExplainPropertyText("Escaped", st->escape_why ? st->escape_why : "yes", es);
	GpuopsNodeExplainBackend(st, es);
	ExplainPropertyInteger("Rows Read", NULL, (int64) st->rstats.rows, es);
	ExplainPropertyInteger("Rows Passed", NULL, (int64) st->stats.passed, es);
	ExplainPropertyInteger("Groups", NULL, (int64) st->stats.groups, es);
	ExplainPropertyInteger("Batches", NULL, (int64) st->rstats.batches, es);
	ExplainPropertyInteger("Heap Pages", NULL, (int64) st->rstats.pages, es);
	ExplainPropertyInteger("Reader Threads", NULL, st->rstats.threads, es);
	/* the pages form: whole pages to the backend, which deforms them */
	ExplainPropertyText("Deformed By", st->read_pages == 1 ? "backend" : "host", es);
	if (st->read_pages == 1)
		ExplainPropertyText("Pages Read",
							st->in_place		  ? "in place"
								: st->map_started ? "copied (shared buffers being mapped)"
												  : "copied",
							es);
	if (es->timing)
	{
		ExplainPropertyFloat("Read Time", "ms", st->rstats.read_ms, 3, es);
		if (st->workers_launched > 0)
		{
			ExplainPropertyFloat("Workers Read Time", "ms", st->workers_read_ms, 3, es);
			ExplainPropertyBool("Slots Pinned", st->slots_pinned, es);
		}
		ExplainPropertyFloat("Walk Time", "ms", st->rstats.walk_ms, 3, es);
		if (plan->ndims > 0)
			ExplainPropertyFloat("Lookup Staging Time", "ms", st->dims_ms, 3, es);
		ExplainPropertyFloat("Backend Begin Time", "ms", st->begin_ms, 3, es);
		/* once mapped, in the background before: how long that took */
		if (st->map_ms > 0)
			ExplainPropertyFloat("Shared Buffers Mapped In", "ms", st->map_ms, 3, es);
		/* in place through the page service: its round trips (their gathers and waits) */
		if (st->stats.service_requests > 0)
		{
			ExplainPropertyInteger("Page Service Requests", NULL,
								   (int64) st->stats.service_requests, es);
			ExplainPropertyFloat("Page Service Time", "ms", st->stats.service_ms, 3, es);
			/* of the pages gathered, those copied from the service's device cache */
			ExplainPropertyInteger("Page Service Pages", NULL, (int64) st->stats.service_pages, es);
			ExplainPropertyInteger("Page Service Cached Pages", NULL,
								   (int64) st->stats.service_cached, es);
		}
		ExplainPropertyFloat("Copy Time", "ms", st->stats.copy_ms, 3, es);
		ExplainPropertyFloat("Kernel Time", "ms", st->stats.kernel_ms, 3, es);
		ExplainPropertyFloat("Finish Time", "ms", st->finish_ms, 3, es);
	}
	if (st->stats.grows > 0)
		ExplainPropertyInteger("Group Table Grows", NULL, st->stats.grows, es);
	/* the backend's peak: batches, group table, lookups (0 on the CPU engine) */
	ExplainPropertyInteger("Device Memory", "kB", (int64) (st->stats.device_bytes / 1024), es);
}

const CustomExecMethods gpu_query_exec_methods = {
	GPUQUERY_NAME,
	GuardedBegin<BeginGpuQueryImpl>,
	GuardedExec<ExecGpuQueryImpl>,
	GuardedEnd<EndGpuQueryImpl>,
	GuardedReScan<ReScanGpuQueryImpl>,
	NULL, /* MarkPosCustomScan */
	NULL, /* RestrPosCustomScan */
	NULL, /* EstimateDSMCustomScan */
	NULL, /* InitializeDSMCustomScan */
	NULL, /* ReInitializeDSMCustomScan */
	NULL, /* InitializeWorkerCustomScan */
	NULL, /* ShutdownCustomScan */
	GuardedExplain<ExplainGpuQueryImpl>,
};

const CustomScanMethods gpu_query_scan_methods = {
	GPUQUERY_NAME,
	GuardedCreateState<CreateGpuQueryStateImpl>,
};

void
GpuQueryRegister(void)
{
	RegisterCustomScanMethods(&gpu_query_scan_methods);
}
