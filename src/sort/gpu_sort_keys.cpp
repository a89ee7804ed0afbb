/*
 * gpu_sort_keys.cpp
 *    GpuSort planning, the keys: each ORDER BY key found as a column of the
 *    input's target and given a key kind the device sorts exactly as
 *    PostgreSQL does, or computed by the device from the columns it reads
 *    (gpu_sort.h, "computed keys"); and the path storage they make.
 *    gpu_sort_path.cpp costs and makes the paths from it (gpu_sort_keys.h):
 *    finding the keys is a job of its own.
 */
extern "C" {
#include "postgres.h"

#include "access/stratnum.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/paths.h"
#include "utils/builtins.h"
}

#include "device_expr.h"
#include "gpu_sort.h"
#include "gpu_sort_keys.h"
#include "guc.h"
#include "plan_why.h"
#include "join_plan.h"
#include "pg_compat.h"
#include "types.h"

/* Finds the input column that is the pathkey's expression; -1 if none. */
static int
FindSortColumn(PathKey *pk, PathTarget *target, Oid *type)
{
	int i = 0;
	ListCell *lc;

	foreach (lc, target->exprs)
	{
		Expr *expr = (Expr *) lfirst(lc);

		if (find_ec_member_matching_expr(pk->pk_eclass, expr, NULL) != NULL)
		{
			*type = exprType((Node *) expr);
			return i;
		}
		i++;
	}
	return -1;
}

/* A sort key as found in the input's target. */
typedef struct SortKeyFound
{
	Expr *expr; /* the input column's expression */
	GpuopsKeyKind kind;
	bool prefix_only;
	Oid sortop;
	bool computed; /* the device computes it */
} SortKeyFound;

/* The path the input's columns come from: below its projection, if any. */
static Path *
ProjectedPath(Path *input)
{
	return IsA(input, ProjectionPath) ? ((ProjectionPath *) input)->subpath : input;
}

/*
 * Every Var of expr is a column of source's output (so the child can
 * output it in place of expr), and nothing else is (no aggregates, window
 * functions or placeholders).
 */
static bool
ColumnsAvailable(Expr *expr, Path *source)
{
	ListCell *lc;

	foreach (lc,
			 pull_var_clause((Node *) expr,
							 PVC_INCLUDE_AGGREGATES | PVC_INCLUDE_WINDOWFUNCS |
								 PVC_INCLUDE_PLACEHOLDERS))
		if (!IsA(lfirst(lc), Var) || !list_member(source->pathtarget->exprs, lfirst(lc)))
			return false;
	return true;
}

static bool
ComputableKind(GpuopsKeyKind kind)
{
	return kind == GPUOPS_KEY_INT2 || kind == GPUOPS_KEY_INT4 || kind == GPUOPS_KEY_INT8 ||
		kind == GPUOPS_KEY_FLOAT4 || kind == GPUOPS_KEY_FLOAT8;
}

/*
 * Computed keys (gpu_sort.h): each expression key of an integer or float
 * kind whose value program compiles (DeviceExprCompileInput: it stops only
 * where PostgreSQL raises an error) over the columns the input's source
 * gives.  The child then outputs the input's columns less those keys, plus
 * the columns they read (*child_exprs); the keys follow as computed columns
 * (*computed, in key order).  Returns the path storage (gpu_sort.h), or NIL
 * when no key is computed.
 */
static List *
ComputedKeys(PlannerInfo *root, Path *input, SortKeyFound *keys, int nkeys, List **child_exprs,
			 GpuSortComputed *comp)
{
	Path *source = ProjectedPath(input);
	List *child = list_copy(input->pathtarget->exprs);
	List *computed = NIL;
	List *programs = NIL;
	List *cols = NIL;
	DeviceExprInputs in;
	int ncand = 0;
	QualCost cost;

	if (!gpuops_enable_device_exprs)
		return NIL;
	for (int k = 0; k < nkeys; k++)
	{
		SortKeyFound *key = &keys[k];

		if (IsA(key->expr, Var) || !ComputableKind(key->kind) ||
			!ColumnsAvailable(key->expr, source))
			continue;
		key->computed = true;
		child = list_delete(child, key->expr);
		ncand++;
	}
	if (ncand == 0)
		return NIL;
	/*
	 * Each program reads the child's columns by position: a key that does
	 * not compile goes back at the end, where it moves no column read so far.
	 */
	memset(&in, 0, sizeof(in));
	in.outer_exprs = child;
	for (int k = 0; k < nkeys; k++)
	{
		SortKeyFound *key = &keys[k];
		GpuopsExprProgram prog;
		List *cand;
		ListCell *lc;

		if (!key->computed)
		{
			programs = lappend(programs, NIL);
			continue;
		}
		cand = list_copy(child);
		foreach (lc, pull_var_clause((Node *) key->expr, PVC_INCLUDE_PLACEHOLDERS))
			cand = list_append_unique(cand, lfirst(lc));
		in.outer_exprs = cand;
		if (!DeviceExprCompileInput(key->expr, &in, &prog))
		{
			key->computed = false;
			child = lappend(child, key->expr);
			in.outer_exprs = child;
			programs = lappend(programs, NIL);
			continue;
		}
		child = cand;
		computed = lappend(computed, key->expr);
		programs = lappend(programs, DeviceExprProgramToList(&prog));
	}
	if (computed == NIL)
		return NIL;
	for (int c = 0; c < in.nouter; c++)
	{
		cols = lappend_int(cols, in.outer_cols[c]);
		cols = lappend_int(cols, (int) in.outer_types[c]);
	}
	*child_exprs = child;
	cost_qual_eval(&cost, computed, root);
	comp->ncols = in.nouter;
	comp->per_row = cost.per_tuple;
	comp->source = source;
	return list_make4(child, computed, cols, programs);
}

/*
 * The path storage (gpu_sort.h) of a GpuSort over `input` for the query's
 * ORDER BY: its keys as columns of the input's target, or computed by the
 * device; NIL when a key is not an input column or of a type it cannot
 * sort.  *key_words: the normalized key's words; *comp: with computed keys,
 * their cost.
 */
List *
GpuSortPathKeys(PlannerInfo *root, Path *input, uint64 bound, int *key_words, GpuSortComputed *comp)
{
	SortKeyFound keys[GPUOPS_MAX_SORT_KEYS];
	int nkeys = list_length(root->sort_pathkeys);
	int ncomputed = 0;
	List *child_exprs = NIL;
	List *computed;
	GpuSortPlan *plan = (GpuSortPlan *) palloc0(sizeof(GpuSortPlan));
	PlanFields fields;

	memset(keys, 0, sizeof(keys));
	for (int k = 0; k < nkeys; k++)
	{
		PathKey *pk = (PathKey *) list_nth(root->sort_pathkeys, k);
		Oid type;
		int col = FindSortColumn(pk, input->pathtarget, &type);

		if (col < 0)
		{
			GpuopsDecline(GPUSORT_NAME, "a sort key is not an input column");
			return NIL;
		}
		if (!GpuopsSortKeyKind(type, pk->pk_opfamily, pk->pk_eclass->ec_collation,
							   GpuopsPathKeyStrategy(pk), &keys[k].kind, &keys[k].prefix_only,
							   &keys[k].sortop))
		{
			GpuopsDecline(GPUSORT_NAME, "sort key of type %s (collation %u) not supported",
						  format_type_be(type), pk->pk_eclass->ec_collation);
			return NIL;
		}
		keys[k].expr = (Expr *) list_nth(input->pathtarget->exprs, col);
	}
	computed = ComputedKeys(root, input, keys, nkeys, &child_exprs, comp);
	if (computed == NIL)
		child_exprs = input->pathtarget->exprs;

	plan->nkeys = nkeys;
	plan->bound = (int) bound;
	plan->placement = GPUSORT_ON_DEVICE;
	*key_words = 0;
	for (int k = 0; k < nkeys; k++)
	{
		PathKey *pk = (PathKey *) list_nth(root->sort_pathkeys, k);
		/* a computed key's column follows the child's */
		int col = keys[k].computed ? list_length(child_exprs) + ncomputed++
								   : GpuopsFindColumn(child_exprs, (Node *) keys[k].expr);

		plan->keys[k].col = col;
		plan->keys[k].kind = keys[k].kind;
		plan->keys[k].descending = GpuopsPathKeyStrategy(pk) == BTGreaterStrategyNumber;
		plan->keys[k].nulls_first = pk->pk_nulls_first;
		plan->keys[k].prefix_only = keys[k].prefix_only;
		plan->keys[k].sortop = keys[k].sortop;
		plan->keys[k].collation = pk->pk_eclass->ec_collation;
		*key_words += 1 + gpuops_key_value_words(keys[k].kind);
	}
	if (computed != NIL)
	{
		List *cols = (List *) lthird(computed);

		plan->prog_ncols = list_length(cols) / 2;
		for (int c = 0; c < plan->prog_ncols; c++)
		{
			plan->prog_cols[c] = list_nth_int(cols, 2 * c);
			plan->prog_types[c] = (Oid) list_nth_int(cols, 2 * c + 1);
		}
		plan->programs = (List *) lfourth(computed);
	}
	GpuSortPlanFields(fields, plan);
	pfree(plan);
	/* the plan's data, then the child's expressions and the computed keys (or NIL) */
	if (computed == NIL)
		return list_make3(fields.list(), NIL, NIL);
	return list_make3(fields.list(), linitial(computed), lsecond(computed));
}
