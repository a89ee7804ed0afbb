/*
 * gpu_query_dim_read.cpp
 *    GpuQuery planning: which dimensions are read from their pages, as the
 *    fact table is, rather than through their child plans
 *    (GpuQueryDimPlan's read fields; gpu_query_dims.cpp reads them).
 *
 * Why: a dimension's rows pass through PostgreSQL's executor in the
 * leader, one at a time, while the workers read the fact table.  TPC-H's
 * `orders` (15M rows at scale 10) took seconds that way, longer than the
 * whole fact table.  The page reader turns the same rows into words with
 * its threads, and the leader keeps the rows its quals pass.
 *
 * Taken for a plain heap table of at least gpuops.min_rows rows (smaller
 * ones cost more to set up than to read through the executor) whose quals
 * compile into one program without Params (bound per scan, which a
 * rescan's staging would need) and whose payload has a word form or is
 * short text (char(n), varchar(n), n <= 16: the staging turns the
 * reader's bytes into dictionary codes, as it does the child plan's
 * values), text tests allowed.  The child plan stays: EXPLAIN shows it,
 * and it stages the dimension when the reader cannot (a compressed text
 * value, a qual the program cannot decide).
 */
extern "C" {
#include "postgres.h"

#include "access/table.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_class_d.h"
#include "catalog/pg_type_d.h"
#include "optimizer/clauses.h"
#include "optimizer/optimizer.h"
#include "optimizer/restrictinfo.h"
#include "parser/parsetree.h"
}

#include "device_expr.h"
#include "gpu_query.h"
#include "guc.h"
#include "qual_order.h"
#include "query_text_test.h"

/* A table the reader can walk: plain heap, no RLS, no inheritance or sampling. */
static bool
ReadableTable(PlannerInfo *root, RelOptInfo *rel)
{
	RangeTblEntry *rte;
	Relation r;
	bool heap;
	ListCell *lc;

	if (rel->rtekind != RTE_RELATION || rel->tuples < gpuops_min_rows)
		return false;
	rte = planner_rt_fetch(rel->relid, root);
	if (rte->relkind != RELKIND_RELATION || rte->inh || rte->tablesample != NULL ||
		rte->securityQuals != NIL)
		return false;
	foreach (lc, rel->baserestrictinfo)
		if (lfirst_node(RestrictInfo, lc)->security_level > 0)
			return false;
	r = table_open(rte->relid, NoLock); /* the planner holds its lock */
	heap = r->rd_rel->relam == HEAP_TABLE_AM_OID;
	table_close(r, NoLock);
	return heap;
}

/*
 * A text payload the reader's 16 bytes are likely to hold: char(n) or
 * varchar(n) of at most 16 characters.  A longer value (multibyte
 * characters) still stops the read at run time, and the child plan stages
 * the dimension; text without a length is left to the child plan, where
 * that would happen often.
 */
static bool
ShortText(Node *input)
{
	Var *v = IsA(input, Var) ? (Var *) input : NULL;

	return v != NULL && (v->vartype == BPCHAROID || v->vartype == VARCHAROID) &&
		v->vartypmod >= VARHDRSZ && v->vartypmod - VARHDRSZ <= 16;
}

/* Dimension d read from its pages, if it can be (dim->read_relid set); else left as it was. */
static void
PlanDimRead(PlannerInfo *root, GpuQueryBuild *b, DeviceExprInputs *in, int d)
{
	GpuQueryPlan *plan = b->plan;
	GpuQueryDimPlan *dim = &plan->dims[d];
	RelOptInfo *rel = (RelOptInfo *) list_nth(b->dim_rels, d);
	OpExpr *lookup = (OpExpr *) list_nth(b->lookups, d);
	Var *key = (Var *) lsecond(lookup->args); /* ColumnFirst: column = dimension key */
	List *quals;
	List *inputs = NIL;
	DeviceExprInputs rin;
	GpuopsExprProgram prog;
	int key_read;
	int pay_read[GPUOPS_QUERY_MAX_COLS];
	ListCell *lc;

	if (!ReadableTable(root, rel))
		return;
	if ((int) key->varno != (int) rel->relid)
		key = (Var *) linitial(lookup->args);
	/* a one-time filter stays in the table's plan (GpuQueryPlanJoin declines such blocks) */
	if (GpuopsHasPseudoconstant(rel->baserestrictinfo))
		return;
	quals = GpuopsOrderQuals(root, get_actual_clauses(rel->baserestrictinfo));
	if (contain_volatile_functions((Node *) quals) || contain_subplans((Node *) quals))
		return;
	memset(&rin, 0, sizeof(rin));
	/* the quals' inputs, the key, the payload (numbered by the main programs' inputs) */
	GpuQueryCollectInputs((Node *) quals, &inputs);
	inputs = list_append_unique(inputs, key);
	for (int p = 0; p < dim->npayload; p++)
	{
		int pay = dim->first_pay + p;
		Node *input = (Node *) list_nth(in->outer_exprs, in->outer_cols[plan->ncols + pay]);

		if (plan->pay_dict[pay] == 2 || (plan->pay_dict[pay] == 1 && !ShortText(input)))
			return; /* whole values by row, or text that may not fit the reader's 16 bytes */
		inputs = list_append_unique(inputs, input);
	}
	foreach (lc, inputs)
		if (!IsA(lfirst(lc), Var) && GpuQueryInputVar((Node *) lfirst(lc)) == NULL)
			return; /* a placeholder */
	rin.outer_exprs = inputs;
	/* the quals' program numbers its columns first; the key and payload follow */
	if (quals != NIL && (!DeviceExprCompile(quals, &rin, &prog) || rin.params != NIL))
		return;
	key_read = GpuQueryInputColumn(&rin, (Node *) key);
	for (int p = 0; p < dim->npayload; p++)
	{
		int c = plan->ncols + dim->first_pay + p;

		pay_read[p] = GpuQueryInputColumn(&rin,
										  (Node *) list_nth(in->outer_exprs, in->outer_cols[c]));
		if (pay_read[p] < 0)
			return;
	}
	if (key_read < 0)
		return;
	for (int c = 0; c < rin.nouter; c++)
	{
		Node *input = (Node *) list_nth(rin.outer_exprs, rin.outer_cols[c]);
		Var *v = GpuQueryInputVar(input);
		int form = IsA(input, Var) ? GpuQueryColumnForm(v->vartype) : QCOL_TEXT_TEST;
		bool dict = false;

		for (int p = 0; p < dim->npayload; p++)
			dict |= pay_read[p] == c && plan->pay_dict[dim->first_pay + p] == 1;
		/*
		 * A dictionary-coded payload is read as its stored bytes (bpchar's
		 * blanks kept, as the child plan's value is), which the staging codes
		 */
		if (dict)
			form = QCOL_TEXT16;
		if (v == NULL || v->varattno <= 0 || (int) v->varno != (int) rel->relid || form < 0 ||
			(!dict && (form == QCOL_TEXT16 || form == QCOL_BPCHAR16)))
			return;
		dim->read_attnums[c] = v->varattno;
		dim->read_forms[c] = form;
		if (form == QCOL_TEXT_TEST)
		{
			dim->read_test_cols = lappend_int(dim->read_test_cols, c);
			dim->read_test_exprs = lappend(dim->read_test_exprs, input);
		}
	}
	dim->read_ncols = rin.nouter;
	dim->key_read = key_read;
	memcpy(dim->pay_read, pay_read, sizeof(int) * dim->npayload);
	dim->read_qual = quals != NIL ? DeviceExprProgramToList(&prog) : NIL;
	dim->read_relid = planner_rt_fetch(rel->relid, root)->relid;
}

void
GpuQueryPlanDimReads(PlannerInfo *root, GpuQueryBuild *b, DeviceExprInputs *in)
{
	for (int d = 0; d < b->plan->ndims; d++)
	{
		GpuQueryDimPlan *dim = &b->plan->dims[d];

		dim->read_relid = InvalidOid;
		dim->read_ncols = 0;
		dim->read_test_cols = dim->read_test_exprs = NIL;
		PlanDimRead(root, b, in, d);
		if (!OidIsValid(dim->read_relid))
		{
			/* a failed try may have filled some */
			dim->read_ncols = 0;
			dim->read_test_cols = dim->read_test_exprs = NIL;
		}
	}
}
