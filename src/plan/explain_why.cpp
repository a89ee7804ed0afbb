/*
 * explain_why.cpp
 *    gpuops.explain_why(query text): why a query does (not) use the GPU.
 *
 * The query is parsed, analyzed, rewritten and planned, never run (as
 * EXPLAIN without ANALYZE, whose permission checks it makes too), while
 * plan_why.cpp collects what gpuops' planner code says: each decline, with
 * the text DEBUG1 prints, and each path offered, with its cost.  Then:
 *  - chosen: every gpuops node in the final plan (and its subplans);
 *  - lost on cost: a path offered at a rel whose cheapest path (by total
 *    cost, what set_cheapest keeps; the ordered rel has no set_cheapest, so
 *    its path list is searched the same way) is not gpuops': both costs.
 *    add_path may have freed the losing path: only its cost, kept when it
 *    was offered, is read, and the rel, which the planner never frees
 *    (except GEQO's join rels: plan_why.cpp keeps no rel for those);
 *  - lost: cheapest at its rel but not in the final plan, which chose
 *    above it by other criteria (a LIMIT's fractional cost, pathkeys a
 *    merge join wanted, a parallel plan);
 *  - declined: the collected declines.
 * Rows are unique; gpuops' join code runs once per pair of input rels, and
 * says the same thing each time.
 */
extern "C" {
#include "postgres.h"

#include "access/htup_details.h"
#include "executor/executor.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/plannodes.h"
#include "parser/parsetree.h"
#include "tcop/cmdtag.h"
#include "tcop/tcopprot.h"
#include "tcop/utility.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"

#include "pg_compat.h"

PG_FUNCTION_INFO_V1(gpuops_explain_why);
}

#include "boundary.h"
#include "guc.h"
#include "plan_why.h"

/* the order of the rows: what ran first, then what lost, then what was never offered */
static const char *const decision_order[] = {"chosen",	 "lost on cost", "lost", "offered",
											 "declined", "not planned",	 "none"};

typedef struct WhyOut
{
	List *rows; /* GpuopsWhyRow *, unique */
} WhyOut;

static void
AddRow(WhyOut *out, const char *op, const char *context, const char *decision, const char *reason)
{
	ListCell *lc;
	GpuopsWhyRow *row;

	foreach (lc, out->rows)
	{
		GpuopsWhyRow *r = (GpuopsWhyRow *) lfirst(lc);

		if (strcmp(r->decision, decision) == 0 && strcmp(r->reason, reason) == 0 &&
			(r->op == NULL ? op == NULL : op != NULL && strcmp(r->op, op) == 0) &&
			(r->context == NULL ? context == NULL
								: context != NULL && strcmp(r->context, context) == 0))
			return;
	}
	row = (GpuopsWhyRow *) palloc(sizeof(GpuopsWhyRow));
	row->op = op ? pstrdup(op) : NULL;
	row->context = context ? pstrdup(context) : NULL;
	row->decision = decision;
	row->reason = pstrdup(reason);
	out->rows = lappend(out->rows, row);
}

/* A plan's children, in EXPLAIN's order. */
static List *
PlanChildren(Plan *plan)
{
	List *kids = NIL;

	if (plan->lefttree)
		kids = lappend(kids, plan->lefttree);
	if (plan->righttree)
		kids = lappend(kids, plan->righttree);
	switch (nodeTag(plan))
	{
		case T_Append:
			kids = list_concat(kids, ((Append *) plan)->appendplans);
			break;
		case T_MergeAppend:
			kids = list_concat(kids, ((MergeAppend *) plan)->mergeplans);
			break;
		case T_BitmapAnd:
			kids = list_concat(kids, ((BitmapAnd *) plan)->bitmapplans);
			break;
		case T_BitmapOr:
			kids = list_concat(kids, ((BitmapOr *) plan)->bitmapplans);
			break;
		case T_SubqueryScan:
			kids = lappend(kids, ((SubqueryScan *) plan)->subplan);
			break;
		case T_CustomScan:
			kids = list_concat(kids, ((CustomScan *) plan)->custom_plans);
			break;
		default:
			break;
	}
	return kids;
}

/* The names of the tables (range table entries) scanned under plan, into buf. */
static void
ScannedNames(Plan *plan, PlannedStmt *stmt, StringInfo buf)
{
	ListCell *lc;

	switch (nodeTag(plan))
	{
		case T_SeqScan:
		case T_SampleScan:
		case T_IndexScan:
		case T_IndexOnlyScan:
		case T_BitmapHeapScan:
		case T_TidScan:
		case T_TidRangeScan:
		case T_SubqueryScan:
		case T_FunctionScan:
		case T_ValuesScan:
		case T_CteScan:
		case T_WorkTableScan:
		case T_ForeignScan:
			{
				Index rti = ((Scan *) plan)->scanrelid;

				if (rti > 0 && rti <= (Index) list_length(stmt->rtable))
				{
					RangeTblEntry *rte = rt_fetch(rti, stmt->rtable);

					if (rte->eref != NULL)
						appendStringInfo(buf, "%s%s", buf->len > 0 ? ", " : "",
										 rte->eref->aliasname);
				}
				if (!IsA(plan, SubqueryScan))
					return;
				break;
			}
		default:
			break;
	}
	foreach (lc, PlanChildren(plan))
		ScannedNames((Plan *) lfirst(lc), stmt, buf);
}

/* Every gpuops node of plan: chosen; the operators found added to *ops. */
static void
WalkPlan(Plan *plan, PlannedStmt *stmt, WhyOut *out, List **ops)
{
	ListCell *lc;

	if (plan == NULL)
		return;
	if (IsA(plan, CustomScan))
	{
		const char *name = ((CustomScan *) plan)->methods->CustomName;

		if (strncmp(name, "Gpu", 3) == 0)
		{
			StringInfoData names;

			initStringInfo(&names);
			ScannedNames(plan, stmt, &names);
			AddRow(out, name,
				   names.len > 0 ? psprintf("plan node over %s", names.data) : "plan node",
				   "chosen",
				   psprintf("in the final plan (cost %.2f..%.2f, %.0f rows)", plan->startup_cost,
							plan->total_cost, plan->plan_rows));
			*ops = lappend(*ops, (void *) name);
		}
	}
	foreach (lc, PlanChildren(plan))
		WalkPlan((Plan *) lfirst(lc), stmt, out, ops);
}

/* A path's node, as EXPLAIN names it (through projections). */
static const char *
PathNodeName(Path *path)
{
	while (IsA(path, ProjectionPath))
		path = ((ProjectionPath *) path)->subpath;
	if (IsA(path, CustomPath))
		return ((CustomPath *) path)->methods->CustomName;
	switch (path->pathtype)
	{
		case T_SeqScan:
			return "Seq Scan";
		case T_IndexScan:
			return "Index Scan";
		case T_IndexOnlyScan:
			return "Index Only Scan";
		case T_BitmapHeapScan:
			return "Bitmap Heap Scan";
		case T_Sort:
			return "Sort";
		case T_IncrementalSort:
			return "Incremental Sort";
		case T_HashJoin:
			return "Hash Join";
		case T_MergeJoin:
			return "Merge Join";
		case T_NestLoop:
			return "Nested Loop";
		case T_Agg:
			return "Aggregate";
		case T_Group:
			return "Group";
		case T_Gather:
			return "Gather";
		case T_GatherMerge:
			return "Gather Merge";
		case T_Append:
			return "Append";
		case T_MergeAppend:
			return "Merge Append";
		case T_Result:
			return "Result";
		case T_Unique:
			return "Unique";
		case T_Material:
			return "Materialize";
		case T_Memoize:
			return "Memoize";
		case T_Limit:
			return "Limit";
		default:
			return "PostgreSQL's path";
	}
}

/* The rel's cheapest path by total cost (set_cheapest's cheapest_total_path, unparameterized). */
static Path *
CheapestTotal(RelOptInfo *rel)
{
	Path *best = NULL;
	ListCell *lc;

	foreach (lc, rel->pathlist)
	{
		Path *p = (Path *) lfirst(lc);

		if (p->param_info == NULL && (best == NULL || p->total_cost < best->total_cost))
			best = p;
	}
	return best;
}

static bool
OpIn(List *ops, const char *op)
{
	ListCell *lc;

	foreach (lc, ops)
		if (strcmp((const char *) lfirst(lc), op) == 0)
			return true;
	return false;
}

/* Each operator's cheapest path offered at each rel, against the rel's winner. */
static void
ReportPaths(GpuopsWhyCollector *c, List *chosen_ops, WhyOut *out)
{
	ListCell *lc;

	foreach (lc, c->paths)
	{
		GpuopsWhyPath *p = (GpuopsWhyPath *) lfirst(lc);
		ListCell *lc2;
		bool cheaper_offered = false;
		Path *best;
		const char *best_op;

		/* the cheapest of this operator's paths at this rel speaks for them */
		foreach (lc2, c->paths)
		{
			GpuopsWhyPath *q = (GpuopsWhyPath *) lfirst(lc2);

			if (q != p && q->rel == p->rel && strcmp(q->op, p->op) == 0 &&
				strcmp(q->context, p->context) == 0 &&
				(q->total_cost < p->total_cost ||
				 (q->total_cost == p->total_cost &&
				  foreach_current_index(lc2) < foreach_current_index(lc))))
				cheaper_offered = true;
		}
		if (cheaper_offered)
			continue;
		if (p->rel == NULL)
		{
			AddRow(out, p->op, p->context, "offered",
				   psprintf("cost %.2f..%.2f, in GEQO's join search (the winner at its rel is not "
							"kept)",
							p->startup_cost, p->total_cost));
			continue;
		}
		best = CheapestTotal(p->rel);
		if (best == NULL)
			continue;
		best_op = GpuopsPathOperator(best);
		if (best_op != NULL && strcmp(best_op, p->op) == 0)
		{
			if (!OpIn(chosen_ops, p->op))
				AddRow(
					out, p->op, p->context, "lost",
					psprintf("cheapest at its rel (cost %.2f..%.2f), but the plan above it chose "
							 "another path",
							 p->startup_cost, p->total_cost));
			continue;
		}
		AddRow(out, p->op, p->context, "lost on cost",
			   psprintf("cost %.2f..%.2f; %s won at cost %.2f..%.2f", p->startup_cost,
						p->total_cost, PathNodeName(best), best->startup_cost, best->total_cost));
	}
}

/* Plans one query while collecting; its rows into out. */
static void
PlanOne(Query *query, const char *sql, WhyOut *out)
{
	GpuopsWhyCollector c;
	PlannedStmt *stmt;
	List *chosen_ops = NIL;
	ListCell *lc;

	memset(&c, 0, sizeof(c));
	c.cxt = CurrentMemoryContext;
	GpuopsWhyCollect(&c);
	PG_TRY();
	{
		stmt = pg_plan_query(query, sql, CURSOR_OPT_PARALLEL_OK, NULL);
	}
	PG_CATCH();
	{
		GpuopsWhyCollect(NULL);
		PG_RE_THROW();
	}
	PG_END_TRY();
	GpuopsWhyCollect(NULL);

	/* what EXPLAIN would check before showing the plan */
	GpuopsCheckPlanPermissions(stmt);

	WalkPlan(stmt->planTree, stmt, out, &chosen_ops);
	foreach (lc, stmt->subplans)
		WalkPlan((Plan *) lfirst(lc), stmt, out, &chosen_ops);
	ReportPaths(&c, chosen_ops, out);
	foreach (lc, c.rows)
	{
		GpuopsWhyRow *r = (GpuopsWhyRow *) lfirst(lc);

		AddRow(out, r->op, r->context, r->decision, r->reason);
	}
}

static void
NotPlanned(WhyOut *out, Node *stmt)
{
	AddRow(out, NULL, NULL, "not planned",
		   psprintf("%s is a utility statement: PostgreSQL does not plan it",
					GetCommandTagName(CreateCommandTag(stmt))));
}

static int
DecisionRank(const char *decision)
{
	for (int i = 0; i < (int) lengthof(decision_order); i++)
		if (strcmp(decision, decision_order[i]) == 0)
			return i;
	return lengthof(decision_order);
}

static Datum
ExplainWhyImpl(FunctionCallInfo fcinfo)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char *sql = text_to_cstring(PG_GETARG_TEXT_PP(0));
	List *raw;
	RawStmt *rs;
	WhyOut out = {NIL};
	ListCell *lc;

	InitMaterializedSRF(fcinfo, 0);

	raw = pg_parse_query(sql);
	if (list_length(raw) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("gpuops.explain_why() takes exactly one SQL statement, not %d",
						list_length(raw))));
	rs = linitial_node(RawStmt, raw);
	switch (nodeTag(rs->stmt))
	{
		case T_SelectStmt:
		case T_InsertStmt:
		case T_UpdateStmt:
		case T_DeleteStmt:
		case T_MergeStmt:
			{
				/*
			 * No parameter types: a $1 is PostgreSQL's own error ("there is
			 * no parameter $1"); a query with parameters is planned per
			 * value, and there is none to plan it for.
			 */
				List *queries = pg_analyze_and_rewrite_fixedparams(rs, sql, NULL, 0, NULL);

				if (!gpuops_enabled)
					/* said here: the planner hooks return before any operator's code runs */
					AddRow(&out, "gpuops", NULL, "declined", "gpuops.enabled is off");
				else
					foreach (lc, queries)
					{
						Query *q = lfirst_node(Query, lc);

						if (q->commandType == CMD_UTILITY)
							NotPlanned(&out, q->utilityStmt);
						else
							PlanOne(q, sql, &out);
					}
				break;
			}
		default:
			NotPlanned(&out, rs->stmt);
			break;
	}
	if (out.rows == NIL)
		AddRow(&out, NULL, NULL, "none",
			   "gpuops considered no operator: no ORDER BY, GROUP BY, aggregate or join it "
			   "takes, or one PostgreSQL plans without one");

	for (int rank = 0; rank <= (int) lengthof(decision_order); rank++)
		foreach (lc, out.rows)
		{
			GpuopsWhyRow *r = (GpuopsWhyRow *) lfirst(lc);
			Datum values[4];
			bool nulls[4] = {false};

			if (DecisionRank(r->decision) != rank)
				continue;
			values[0] = r->op ? CStringGetTextDatum(r->op) : (Datum) 0;
			nulls[0] = r->op == NULL;
			values[1] = r->context ? CStringGetTextDatum(r->context) : (Datum) 0;
			nulls[1] = r->context == NULL;
			values[2] = CStringGetTextDatum(r->decision);
			values[3] = CStringGetTextDatum(r->reason);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	return (Datum) 0;
}

extern "C" Datum
gpuops_explain_why(PG_FUNCTION_ARGS)
{
	return GpuopsGuard("gpuops.explain_why()", ExplainWhyImpl, fcinfo);
}
