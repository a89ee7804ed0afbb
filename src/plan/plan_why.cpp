/*
 * plan_why.cpp
 *    The one place gpuops' planner says why (plan_why.h): declines printed
 *    at DEBUG1 and, while gpuops.explain_why() plans a query, collected
 *    with the paths gpuops offered and their costs.
 */
extern "C" {
#include "postgres.h"

#include "lib/stringinfo.h"
#include "nodes/pathnodes.h"
#include "nodes/extensible.h"
#include "optimizer/pathnode.h"
#include "utils/elog.h"
}

#include "device.h"
#include "guc.h"
#include "plan_why.h"

/* explain_why's collector while it plans, else NULL */
static GpuopsWhyCollector *collector = NULL;

/* where the planner is, as the hooks said last (GpuopsWhySetContext) */
static PlannerInfo *context_root = NULL;
static RelOptInfo *context_rel = NULL;
static const char *context_step = NULL;

void
GpuopsWhyCollect(GpuopsWhyCollector *c)
{
	collector = c;
	context_root = NULL;
	context_rel = NULL;
	context_step = NULL;
}

void
GpuopsWhySetContext(PlannerInfo *root, RelOptInfo *rel, const char *step)
{
	context_root = root;
	context_rel = rel;
	context_step = step;
}

/*
 * "join of a, b", "ORDER BY of t": the step and the range table entries
 * the rel covers (an upper rel covers none of its own: the query's).
 */
static char *
ContextText(void)
{
	StringInfoData buf;
	Relids relids;
	int i = -1;
	bool first = true;

	initStringInfo(&buf);
	appendStringInfoString(&buf, context_step ? context_step : "planning");
	if (context_root == NULL)
		return buf.data;
	relids = context_rel != NULL && !bms_is_empty(context_rel->relids) ? context_rel->relids
																	   : context_root->all_baserels;
	while ((i = bms_next_member(relids, i)) >= 0)
	{
		RangeTblEntry *rte;

		if (i >= context_root->simple_rel_array_size || context_root->simple_rte_array == NULL)
			break;
		rte = context_root->simple_rte_array[i];
		if (rte == NULL || rte->eref == NULL)
			continue;
		appendStringInfo(&buf, "%s%s", first ? " of " : ", ", rte->eref->aliasname);
		first = false;
	}
	return buf.data;
}

void
GpuopsDecline(const char *op, const char *fmt, ...)
{
	bool debug = message_level_is_interesting(DEBUG1);
	MemoryContext old;
	StringInfoData reason;

	if (!debug && collector == NULL)
		return;
	old = MemoryContextSwitchTo(collector != NULL ? collector->cxt : CurrentMemoryContext);
	initStringInfo(&reason);
	for (;;)
	{
		va_list args;
		int needed;

		va_start(args, fmt);
		needed = appendStringInfoVA(&reason, fmt, args);
		va_end(args);
		if (needed == 0)
			break;
		enlargeStringInfo(&reason, needed);
	}
	/* the text DEBUG1 printed before explain_why, unchanged */
	if (debug)
		elog(DEBUG1, "gpuops: %s not used: %s", op, reason.data);
	if (collector != NULL)
	{
		GpuopsWhyRow *row = (GpuopsWhyRow *) palloc(sizeof(GpuopsWhyRow));

		row->op = op;
		row->context = ContextText();
		row->decision = "declined";
		row->reason = reason.data;
		collector->rows = lappend(collector->rows, row);
	}
	else
		pfree(reason.data);
	MemoryContextSwitchTo(old);
}

bool
GpuopsPlanningAllowedFor(const char *op, bool enabled, const char *guc)
{
	if (!enabled)
	{
		GpuopsDecline(op, "%s is off", guc);
		return false;
	}
	if (!GpuopsPlanningAllowed())
	{
		GpuopsDecline(op, "%s",
					  gpuops_enabled ? "no usable GPU (gpuops.device = auto)"
									 : "gpuops.enabled is off");
		return false;
	}
	return true;
}

const char *
GpuopsPathOperator(Path *path)
{
	while (path != NULL)
	{
		if (IsA(path, CustomPath))
		{
			const char *name = ((CustomPath *) path)->methods->CustomName;

			return strncmp(name, "Gpu", 3) == 0 ? name : NULL;
		}
		if (IsA(path, ProjectionPath))
			path = ((ProjectionPath *) path)->subpath;
		else if (IsA(path, GatherMergePath))
			path = ((GatherMergePath *) path)->subpath;
		else if (IsA(path, GatherPath))
			path = ((GatherPath *) path)->subpath;
		else
			return NULL;
	}
	return NULL;
}

/* The path's operator, rel and cost, while explain_why collects. */
static void
KeepPath(RelOptInfo *rel, Path *path)
{
	MemoryContext old;
	GpuopsWhyPath *p;
	const char *op;

	if (collector == NULL || (op = GpuopsPathOperator(path)) == NULL)
		return;
	old = MemoryContextSwitchTo(collector->cxt);
	p = (GpuopsWhyPath *) palloc(sizeof(GpuopsWhyPath));
	p->op = op;
	p->context = ContextText();
	/*
	 * GEQO builds its join rels in a memory context it deletes after each
	 * tour (geqo_eval.c): such a rel cannot be looked at after planning.
	 */
	p->rel = context_root != NULL && context_root->join_search_private != NULL ? NULL : rel;
	p->path = path;
	p->startup_cost = path->startup_cost;
	p->total_cost = path->total_cost;
	collector->paths = lappend(collector->paths, p);
	MemoryContextSwitchTo(old);
}

void
GpuopsAddPath(RelOptInfo *rel, Path *path)
{
	KeepPath(rel, path);
	add_path(rel, path);
}

/*
 * Partial paths are not kept: they compete only in the rel's partial list,
 * and what wins there shows in the plan as a Gather above a gpuops node.
 */
void
GpuopsAddPartialPath(RelOptInfo *rel, Path *path)
{
	add_partial_path(rel, path);
}
