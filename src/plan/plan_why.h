/*
 * plan_why.h
 *    Why gpuops did or did not put an operator in a plan, said in one place:
 *    every planner decline goes through GpuopsDecline, which prints it at
 *    DEBUG1 ("gpuops: GpuSort not used: ...", as before) and, while
 *    gpuops.explain_why() plans a query, keeps it for that function's rows.
 *    Every path gpuops offers goes through GpuopsAddPath, which keeps its
 *    cost then, so that explain_why can tell a path that lost on cost
 *    (explain_why.cpp).
 */
#ifndef GPUOPS_PLAN_WHY_H
#define GPUOPS_PLAN_WHY_H

extern "C" {
#include "postgres.h"

#include "nodes/pathnodes.h"
}

/*
 * Operator `op` ("GpuSort", ...) is not offered here, for the reason
 * fmt says (no trailing period): DEBUG1 "gpuops: <op> not used: <reason>",
 * and a "declined" row of explain_why while it collects.
 */
extern void GpuopsDecline(const char *op, const char *fmt, ...) pg_attribute_printf(2, 3);

/*
 * Whether `op` may be planned: its gpuops.enable_* parameter (`enabled`,
 * named `guc`) is on, and a backend to run it exists
 * (GpuopsPlanningAllowed); otherwise declined, saying which.
 */
extern bool GpuopsPlanningAllowedFor(const char *op, bool enabled, const char *guc);

/*
 * add_path and add_partial_path for gpuops' paths: the same, after keeping
 * the path's operator, rel and cost while explain_why collects (add_path
 * may free a path it rejects).
 */
extern void GpuopsAddPath(RelOptInfo *rel, Path *path);
extern void GpuopsAddPartialPath(RelOptInfo *rel, Path *path);

/*
 * The planner hooks say where the planner is (the rel being planned, what
 * kind of step): the context of the declines and paths that follow.
 */
extern void GpuopsWhySetContext(PlannerInfo *root, RelOptInfo *rel, const char *step);

/* gpuops' operator at the top of a path (through projections and Gathers), or NULL. */
extern const char *GpuopsPathOperator(Path *path);

/* What explain_why collects while it plans (explain_why.cpp reads it). */
typedef struct GpuopsWhyRow
{
	const char *op;
	char *context;
	const char *decision; /* "declined" here; explain_why adds the others */
	char *reason;
} GpuopsWhyRow;

typedef struct GpuopsWhyPath
{
	const char *op;
	char *context;
	RelOptInfo *rel; /* NULL: offered in GEQO's join search, whose rels are freed */
	Path *path;		 /* compared by address only: add_path may have freed it */
	Cost startup_cost;
	Cost total_cost;
} GpuopsWhyPath;

typedef struct GpuopsWhyCollector
{
	MemoryContext cxt; /* the rows' and paths' memory */
	List *rows;		   /* GpuopsWhyRow *, in the order declined */
	List *paths;	   /* GpuopsWhyPath *, in the order offered */
} GpuopsWhyCollector;

/* Starts (collector) or stops (NULL) collecting. */
extern void GpuopsWhyCollect(GpuopsWhyCollector *collector);

#endif
