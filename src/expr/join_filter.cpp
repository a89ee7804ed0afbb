/*
 * join_filter.cpp
 *    The device pair filter of the hash and merge joins (join_filter.h).
 *
 * A device failure in the filter is met like any other (an ERROR, or with
 * gpuops.cpu_fallback the join goes on); the filter then switches itself
 * off and PostgreSQL checks every pair, as it does without one.
 */
extern "C" {
#include "postgres.h"

#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "utils/memutils.h"
}

#include "device.h"
#include "device_expr.h"
#include "guc.h"
#include "join_filter.h"
#include "join_plan.h"

List *
GpuopsJoinFilterPlan(List *clauses, PathTarget *outer, PathTarget *inner, List **params,
					 List **device_clauses)
{
	DeviceExprInputs in;
	GpuopsExprProgram *prog = (GpuopsExprProgram *) palloc(sizeof(GpuopsExprProgram));
	List *device = NIL;
	bool all = true;
	ListCell *lc;

	memset(&in, 0, sizeof(in));
	in.outer_exprs = outer->exprs;
	in.inner_exprs = inner->exprs;
	foreach (lc, clauses)
	{
		if (DeviceExprCompile(list_make1(lfirst(lc)), &in, prog))
			device = lappend(device, lfirst(lc));
		else
			all = false;
	}
	if (device == NIL || !DeviceExprCompile(device, &in, prog))
		return NIL;
	*params = list_concat(*params, in.params);
	*device_clauses = device;
	return list_make2(list_make4(list_make1_int((int) all), GpuopsIntList(in.outer_cols, in.nouter),
								 GpuopsIntList(in.inner_cols, in.ninner), in.param_slots),
					  DeviceExprProgramToList(prog));
}

static void
FilterRelease(void *arg)
{
	GpuopsJoinFilter *f = (GpuopsJoinFilter *) arg;

	if (f->pf)
		f->backend->pf_end(f->pf);
	f->pf = NULL;
}

/* After a failed device call: an ERROR, or the filter off for good. */
static void
FilterFailed(GpuopsJoinFilter *f, GpuopsStatus rc)
{
	GpuopsDeviceFailed("device join filter", rc, true);
	FilterRelease(f);
	f->off = true;
}

GpuopsJoinFilter *
GpuopsJoinFilterBegin(CustomScanState *node, EState *estate, List *storage, List *params,
					  TupleDesc outer, TupleDesc inner)
{
	GpuopsJoinFilter *f;
	List *info;
	List *cols;
	int i;
	ListCell *lc;

	if (storage == NIL)
		return NULL;
	f = (GpuopsJoinFilter *) MemoryContextAllocZero(estate->es_query_cxt, sizeof(GpuopsJoinFilter));
	info = (List *) linitial(storage);
	f->all_compiled = linitial_int((List *) linitial(info)) != 0;
	cols = (List *) lsecond(info);
	f->spec.outer_ncols = list_length(cols);
	i = 0;
	foreach (lc, cols)
	{
		f->ocols[i] = lfirst_int(lc);
		f->otypes[i] = TupleDescAttr(outer, f->ocols[i])->atttypid;
		i++;
	}
	cols = (List *) lthird(info);
	f->spec.inner_ncols = list_length(cols);
	i = 0;
	foreach (lc, cols)
	{
		f->icols[i] = lfirst_int(lc);
		f->itypes[i] = TupleDescAttr(inner, f->icols[i])->atttypid;
		i++;
	}
	f->param_slots = (List *) lfourth(info);
	foreach (lc, params)
	{
		f->param_states = lappend(f->param_states, ExecInitExpr((Expr *) lfirst(lc), &node->ss.ps));
		f->param_types = lappend_oid(f->param_types, exprType((Node *) lfirst(lc)));
	}
	DeviceExprProgramFromList((List *) lsecond(storage), &f->spec.program);
	f->econtext = node->ss.ps.ps_ExprContext;
	f->cxt = AllocSetContextCreate(estate->es_query_cxt, "gpuops join filter columns",
								   ALLOCSET_DEFAULT_SIZES);
	f->cb.func = FilterRelease;
	f->cb.arg = f;
	MemoryContextRegisterResetCallback(estate->es_query_cxt, &f->cb);
	return f;
}

static void LoadSide(GpuopsJoinFilter *f, int side, const GpuopsRowStore *store,
					 bool first_batch_only, uint32 first, uint32 n);

/* The device filter, begun at first use (its Params bound then: not in a plain EXPLAIN). */
static bool
Started(GpuopsJoinFilter *f)
{
	GpuopsSettings settings;
	GpuopsStatus rc;

	if (f->off)
		return false;
	if (f->pf)
		return true;
	DeviceExprBindParams(&f->spec.program, f->param_states, f->param_slots, f->param_types,
						 f->econtext);
	settings = GpuopsCurrentSettings();
	f->backend = GpuopsPrimaryDevice()->pairfilter;
	rc = f->backend->pf_begin(&settings, &f->spec, &f->pf);
	if (rc != GPUOPS_OK)
		FilterFailed(f, rc);
	for (int side = 0; side < 2 && !f->off; side++)
		if (f->whole[side])
			LoadSide(f, side, f->whole[side], false, 0, 0);
	return !f->off;
}

/* Stages and loads a side (see GpuopsJoinFilterLoad) on the begun filter. */
static void
LoadSide(GpuopsJoinFilter *f, int side, const GpuopsRowStore *store, bool first_batch_only,
		 uint32 first, uint32 n)
{
	MemoryContext cxt;
	GpuopsExprColumns cols;
	const int *c = side ? f->icols : f->ocols;
	const Oid *t = side ? f->itypes : f->otypes;
	int ncols = side ? f->spec.inner_ncols : f->spec.outer_ncols;
	GpuopsStatus rc;

	cxt = AllocSetContextCreate(f->cxt, "side", ALLOCSET_DEFAULT_SIZES);
	if (!first_batch_only)
	{
		first = 0;
		n = store->nrows;
	}
	DeviceExprStageRows(store, first, n, c, t, ncols, cxt, &cols);
	rc = f->backend->pf_side(f->pf, side, &cols);
	MemoryContextDelete(cxt);
	if (rc != GPUOPS_OK)
		FilterFailed(f, rc);
}

void
GpuopsJoinFilterLoad(GpuopsJoinFilter *f, int side, const GpuopsRowStore *store,
					 bool first_batch_only, uint32 first, uint32 n)
{
	if (f == NULL)
		return;
	/* a whole store is loaded again by itself when the filter begins anew */
	f->whole[side ? 1 : 0] = first_batch_only ? NULL : store;
	if (Started(f))
		LoadSide(f, side, store, first_batch_only, first, n);
}

void
GpuopsJoinFilterRescan(GpuopsJoinFilter *f, bool new_params)
{
	/* new Param values: a new program, begun (and loaded) at the next use */
	if (f != NULL && new_params)
		FilterRelease(f);
}


void
GpuopsJoinFilterApply(GpuopsJoinFilter *f, const GpuopsJoinPairs *pairs)
{
	GpuopsStatus rc;

	if (f == NULL || !Started(f))
		return;
	if (pairs->npairs > f->capacity)
	{
		if (f->results)
			pfree(f->results);
		f->capacity = pairs->npairs;
		f->results = (uint8 *) MemoryContextAllocHuge(GetMemoryChunkContext(f), f->capacity);
	}
	rc = f->backend->pf_apply(f->pf, pairs->probe_rows, pairs->build_rows, pairs->npairs,
							  f->results);
	if (rc != GPUOPS_OK)
		FilterFailed(f, rc);
}

void
GpuopsJoinFilterEnd(GpuopsJoinFilter *f)
{
	if (f)
		FilterRelease(f);
}
