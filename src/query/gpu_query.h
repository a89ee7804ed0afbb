/*
 * gpu_query.h
 *    GpuQuery: one node for a whole query block, scan -> quals -> inner
 *    joins by lookups -> GROUP BY aggregates (or a plain aggregate), that
 *    returns only the groups (doc/gpuquery.md, steps 1 and 2).  What its
 *    planner and executor share.
 *
 * The plan is a CustomScan on the table (scanrelid: PostgreSQL opens and
 * locks it, EXPLAIN names it).  The node reads the table's pages itself
 * (query_reader.h) into the device's column form, and the query backend
 * (gpuops_query.h) filters, groups and aggregates them.  The columns are
 * the table's attributes the block reads; every device program (the qual,
 * key and argument programs) reads them by the same numbers.
 *
 * The scan tuple (custom_scan_tlist) is GpuAgg's: the group keys, one
 * column per Aggref (setrefs matches them to the target list's and
 * HAVING's Aggrefs), then, resjunk, the Vars of the quals, which sit in
 * custom_exprs for EXPLAIN.  HAVING is the plan's qual, over the scan
 * tuple.
 *
 * With joins the table read is the block's largest (the fact table) and
 * every other table a dimension (gpu_query_join.cpp): a child plan read
 * once per run, looked up on the device by one integer-like equality
 * (GpuQueryDimPlan); the columns every program reads are the fact table's,
 * then each dimension's payload.  custom_exprs hold, for EXPLAIN, the fact
 * quals, the join quals, then one lookup clause per dimension.
 *
 * custom_plans: first the escape plan: PostgreSQL's serial aggregation of
 * the same block, run only when the device or the reader cannot decide a
 * row (a NaN numeric, an error PostgreSQL must raise, a value to detoast,
 * a dimension's repeated key).  Its output is the node's (same target,
 * HAVING applied), so the node returns its rows as they are.  Then each
 * dimension's plan.
 *
 * custom_private: a GpuQueryPlan (GpuQueryPlanFields).
 *
 * With nworkers > 0 the node starts that many parallel workers itself to
 * walk the table's pages (query_parallel.h); no Gather is planned, the
 * plan only asks for parallel mode (parallelModeNeeded), as Gather's does.
 */
#ifndef GPUOPS_GPU_QUERY_H
#define GPUOPS_GPU_QUERY_H

extern "C" {
#include "postgres.h"

#include "nodes/extensible.h"
#include "nodes/pathnodes.h"
}

#include "device_expr.h"
#include "gpu_agg.h"
#include "gpuops_query.h"
#include "plan_fields.h"
#include "plan_why.h"
#include "query_reader.h"

#define GPUQUERY_NAME "GpuQuery"

/* A group key. */
typedef struct GpuQueryKeyPlan
{
	GpuopsQueryKeyKind kind;
	int col;	  /* the batch column holding it, or -1: a program (key_progs) */
	Oid type;	  /* its type, to turn the key's words back into a Datum */
	int32 typmod; /* bpchar(n): re-padded to n characters */
	bool dict;	  /* col is a dimension's text column: the word is its dictionary code */
} GpuQueryKeyPlan;

/*
 * A dimension (gpuops_query.h): a child plan (custom_plans[1 + d]) whose
 * rows are looked up by a key column, adding payload columns.  Its payload
 * columns are program columns ncols + first_pay .. + npayload - 1.
 */
typedef struct GpuQueryDimPlan
{
	GpuopsQueryDimKind kind; /* inner, or a semi or anti join's (no payload) */
	int key_col;   /* the program column looked up (the fact's, or an earlier dimension's) */
	int key_pos;   /* the child's output column (0-based) holding its key */
	Oid key_type;  /* that column's type */
	int first_pay; /* its first payload column among all dimensions' */
	int npayload;
	/*
	 * Read from its pages like the fact table (gpu_query_dim_read.cpp), its
	 * quals a program run as each row is staged; read_relid invalid: its
	 * child plan (the executor finds the table's range table entry there).
	 */
	Oid read_relid;	  /* the table */
	int read_workers; /* parallel workers reading it with the leader (query_parallel.h), or 0 */
	int read_ncols;	  /* columns read (query_reader.h) */
	int read_attnums[GPUOPS_QUERY_MAX_COLS];
	int read_forms[GPUOPS_QUERY_MAX_COLS]; /* QueryColumnForm */
	int key_read;						   /* the read column holding its key */
	int pay_read[GPUOPS_QUERY_MAX_COLS];   /* per payload column its read column */
	List *read_qual;					   /* the quals' program over the read columns, or NIL */
	List *read_test_cols;				   /* read columns that are text tests (ints) */
	List *read_test_exprs;				   /* and their tests */
} GpuQueryDimPlan;

/* An aggregate. */
typedef struct GpuQueryAggPlan
{
	GpuopsQueryAggKind kind;
	GpuopsExprType arg_type; /* its argument's word type */
	int arg_col;			 /* the argument's batch column, or -1 (a program, or none) */
	int num_scale;			 /* SUM_NUM: the scale every argument value has */
	GpuAggFinal final;		 /* the result from the state (gpu_agg_final.cpp) */
	Oid final_fn;			 /* GPUAGG_FINAL_FLOAT_FN: avg(float)'s final function */
	Oid arg_pgtype;			 /* the argument's type (MIN/MAX: the result's) */
	int scale_agg;			 /* SUM_NUM of a CASE of unequal scales: the hidden max of its
					* rows' display scales (gpu_query_inputs.cpp, AddScaleAgg), or -1 */
} GpuQueryAggPlan;

typedef struct GpuQueryPlan
{
	int ncols;							/* batch columns: attributes read */
	int attnums[GPUOPS_QUERY_MAX_COLS]; /* their table attributes */
	int forms[GPUOPS_QUERY_MAX_COLS];	/* QueryColumnForm: how each is read */
	int nkeys;
	GpuQueryKeyPlan keys[GPUOPS_QUERY_MAX_KEYS];
	int naggs;	 /* the scan tuple's, then the hidden ones */
	int nhidden; /* aggregates only the node reads (scale_agg) */
	GpuQueryAggPlan aggs[GPUOPS_MAX_AGGS];
	int ndims; /* dimensions (joined tables), in lookup order */
	GpuQueryDimPlan dims[GPUOPS_QUERY_MAX_DIMS];
	int npayload;						  /* payload columns, every dimension's */
	int pay_pos[GPUOPS_QUERY_MAX_COLS];	  /* per payload column its child's output column */
	Oid pay_types[GPUOPS_QUERY_MAX_COLS]; /* and its type */
	int pay_dict[GPUOPS_QUERY_MAX_COLS];  /* 1: text, held as dictionary codes; 2: the
										   * row's number (a functionally dependent column) */
	int njoin_quals;					  /* custom_exprs: quals, join quals, lookups */
	List *join_qual_prog;				  /* the join quals' program, or NIL */
	List *test_cols;					  /* program columns that are text tests (ints) */
	List *test_exprs;					  /* and their tests (query_text_test.h) */
	double groups;		/* the planner's estimate (the group table's first size) */
	int nworkers;		/* parallel workers reading the table (query_parallel.h), or 0 */
	List *qual_prog;	/* the quals' program (an int list), or NIL: every row */
	List *params;		/* the Params it reads, bound per scan */
	List *param_slots;	/* and their constant slots (ints) */
	List *key_progs;	/* per key its program, or NIL (a column) */
	List *arg_progs;	/* per aggregate its argument's program, or NIL */
	List *filter_progs; /* per aggregate its FILTER's program, or NIL */
} GpuQueryPlan;

/* The plan's fields, in their order in custom_private (gpu_query_plan.cpp). */
extern void GpuQueryPlanFields(PlanFields &f, GpuQueryPlan *plan);

/*
 * What the planner gathered about a block (gpu_query_inputs.cpp): the
 * plan's data, the scan tuple's expressions (keys, then Aggrefs), the
 * quals, and the bytes each row's columns take (for the cost).
 */
typedef struct GpuQueryBuild
{
	GpuQueryPlan *plan;
	RelOptInfo *fact;  /* the table read (the block's one table, or its largest) */
	List *dim_rels;	   /* the dimensions (joined tables), in lookup order */
	List *dim_paths;   /* per dimension its rel's cheapest path */
	List *lookups;	   /* per dimension its join clause (dimension key = column) */
	List *dim_kinds;   /* per dimension its GpuopsQueryDimKind (ints) */
	List *join_quals;  /* the other clauses over several tables */
	List *scan_exprs;  /* keys, then Aggrefs */
	List *quals;	   /* the fact table's quals, in PostgreSQL's order */
	List *qual_vars;   /* the Vars of quals, join quals and lookups (resjunk scan tuple columns) */
	List *key_exprs;   /* the group keys (GROUP BY's, then the dependent columns) */
	List *row_coded;   /* dependent columns grouped by their dimension row (Vars) */
	double row_bytes;  /* device bytes a row's columns take */
	int program_steps; /* steps of every program together */
} GpuQueryBuild;

/*
 * Fills b (zeroed by the caller) for the block grouped into output_rel
 * from input_rel (one base rel, or a join of base rels: gpu_query_join.cpp),
 * or says (DEBUG1) why the device cannot run it and returns false.
 */
extern bool GpuQueryCollect(PlannerInfo *root, RelOptInfo *input_rel, RelOptInfo *output_rel,
							GroupPathExtraData *extra, GpuQueryBuild *b);

/*
 * For a join rel: the fact table, the dimensions in lookup order with
 * their lookups and kinds, and the other join clauses into b
 * (gpu_query_join.cpp); false, with a DEBUG1 reason, when the block is not
 * a star or snowflake of inner equi-joins (and semi or anti joins of one
 * table) the device can look up.
 */
extern bool GpuQueryPlanJoin(PlannerInfo *root, RelOptInfo *input_rel, GpuQueryBuild *b);

/*
 * Parallel workers to walk rel's pages with (query_parallel.h), or 0
 * (gpu_query_path.cpp): what a Parallel Seq Scan would get, or one per
 * 64K pages where that is more, up to max_parallel_workers_per_gather.
 */
extern int GpuQueryWorkers(PlannerInfo *root, RelOptInfo *rel);

/*
 * The inputs programs read (gpu_query_inputs.cpp), for the planner files:
 * the form the reader reads a column of type in (QueryColumnForm), or -1;
 * the column an input reads (a Var, or a text test's); the inputs under
 * node (Vars, placeholders, text tests taken whole, appended to *inputs
 * once); an input's program column (added once), or -1 past the limit.
 */
extern int GpuQueryColumnForm(Oid type);
extern Var *GpuQueryInputVar(Node *input);
extern bool GpuQueryCollectInputs(Node *node, List **inputs);
extern int GpuQueryInputColumn(DeviceExprInputs *in, Node *input);

/*
 * Which dimensions are read from their pages, with their quals as a
 * program (gpu_query_dim_read.cpp): fills each GpuQueryDimPlan's read
 * fields, once the columns are numbered (in).
 */
extern void GpuQueryPlanDimReads(PlannerInfo *root, GpuQueryBuild *b, DeviceExprInputs *in);

/* Says (DEBUG1) why the block keeps PostgreSQL's plan; false. */
static inline bool
GpuQueryDecline(const char *why)
{
	GpuopsDecline(GPUQUERY_NAME, "%s", why);
	return false;
}

/* planner (gpu_query_path.cpp), before GpuAgg's paths */
extern void GpuQueryAddPaths(PlannerInfo *root, RelOptInfo *input_rel, RelOptInfo *output_rel,
							 void *extra);

/* executor (gpu_query_exec.cpp) */
extern const CustomScanMethods gpu_query_scan_methods;
extern void GpuQueryRegister(void);

#endif /* GPUOPS_GPU_QUERY_H */
