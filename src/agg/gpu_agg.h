/*
 * gpu_agg.h
 *    GpuAgg: what its planner, executor and finalization share.
 *
 * The child's output (set by the planner) is: the GROUP BY expressions, then
 * the other columns the output needs from a group's first row (columns
 * functionally dependent on the grouping key), then the aggregates' inputs:
 * argument values and boolean conditions (FILTER, and "x IS NOT NULL" for
 * count(x)).  All of them are computed below the node, on the CPU, while it
 * reads its input.  The scan tuple (custom_scan_tlist) is the group
 * expressions, the other columns, then one column per Aggref, which setrefs
 * matches to the Aggrefs in the target list and HAVING.
 *
 * custom_private: a GpuAggPlan (GpuAggPlanFields).
 *
 * Partial mode (parallel plans): GpuAgg runs in each parallel worker (and
 * the leader) below Gather and emits, per group, each aggregate's partial
 * state in PostgreSQL's own format (its transition value, serialized where
 * the aggregate serializes it), which PostgreSQL's Finalize Aggregate
 * above Gather combines and finishes.
 */
#ifndef GPUOPS_GPU_AGG_H
#define GPUOPS_GPU_AGG_H

extern "C" {
#include "postgres.h"

#include "fmgr.h"
#include "nodes/extensible.h"
#include "nodes/pathnodes.h"
}

#include "gpuops_device.h"
#include "plan_fields.h"

#define GPUAGG_NAME "GpuAgg"

/* How a group key reaches the device. */
enum GpuAggKeyEncoding
{
	GPUAGG_KEY_VALUE = 0,  /* its raw value (a fixed-width kind) */
	GPUAGG_KEY_DICTIONARY, /* text: a number per distinct byte string */
	GPUAGG_KEY_RANKED,	   /* its rank in the type's order (text or bpchar under
								 * a collation, numeric): equal values, equal ranks */
	GPUAGG_KEY_SCALED	   /* sum/avg/variance of numeric: an int64 scaled by 10^dscale
								 * (gpu_agg_numeric.cpp), or summed on the host */
};

/* How an aggregate's result is made from its device state. */
enum GpuAggFinal
{
	GPUAGG_FINAL_COUNT = 0,		  /* count(*), count(x): int8 */
	GPUAGG_FINAL_SUM_INT8,		  /* sum(int2), sum(int4): int8 */
	GPUAGG_FINAL_SUM_NUMERIC,	  /* sum(int8): numeric */
	GPUAGG_FINAL_AVG_NUMERIC,	  /* avg(int2/int4/int8): numeric */
	GPUAGG_FINAL_SUM_FLOAT4,	  /* sum(float4) */
	GPUAGG_FINAL_SUM_FLOAT8,	  /* sum(float8) */
	GPUAGG_FINAL_FLOAT_FN,		  /* avg, variance, stddev of floats: the aggregate's
								 * own final function on {N, Sx, Sxx} */
	GPUAGG_FINAL_VALUE,			  /* min, max, bool_and, bool_or, percentile_disc: the
								 * row's value */
	GPUAGG_FINAL_PERCENTILE_CONT, /* percentile_cont(float8): between two rows' values */
	GPUAGG_FINAL_POLY_FN,		  /* variance, stddev of int2/int4: the aggregate's own
								 * final function on int4_accum's state */
	GPUAGG_FINAL_SUM_SCALED,	  /* sum(numeric): the scaled 128-bit sum */
	GPUAGG_FINAL_AVG_SCALED,	  /* avg(numeric): numeric_div of it by N */
	GPUAGG_FINAL_VAR_SCALED		  /* variance, stddev of numeric: the aggregate's own
								 * final function on numeric_accum's state, from
								 * the scaled sums (or from the host) */
};

/* A group key in the plan. */
typedef struct GpuAggKeyPlan
{
	GpuopsKeyKind kind;
	GpuAggKeyEncoding enc;
	Oid type;	   /* its type (RANKED: numeric, bpchar) */
	Oid collation; /* RANKED bpchar: its collation */
} GpuAggKeyPlan;

/* An aggregate in the plan. */
typedef struct GpuAggPlanAgg
{
	GpuopsAggKind kind;
	GpuAggFinal final;
	GpuopsKeyKind value_kind;  /* of the argument */
	int arg_col;			   /* child column of the argument, -1 for none */
	int filter_col;			   /* child column of the FILTER condition, or -1 */
	int notnull_col;		   /* count(x): child column of "x IS NOT NULL", or -1 */
	Oid final_fn;			   /* GPUAGG_FINAL_FLOAT_FN: the final function */
	double fraction;		   /* percentiles: the fraction */
	bool desc;				   /* percentiles: WITHIN GROUP (ORDER BY x DESC) */
	GpuAggKeyEncoding arg_enc; /* of the argument: RANKED for min/max(text) and
								 * percentile_disc(text), DICTIONARY for
								 * count(DISTINCT text) */
	Oid collation;			   /* that collation */
	Oid arg_type;			   /* the argument's type */
} GpuAggPlanAgg;

/*
 * The plan's data (custom_private).  Computed inputs: an aggregate whose
 * argument the device computes has a program over prog_ncols child
 * columns, and its argument for the rows the program stops at (in the
 * path as written, in the plan with OUTER_VAR references to the child's
 * columns).
 */
typedef struct GpuAggPlan
{
	int nkeys;
	int nextra; /* the other columns taken from a group's first row */
	int naggs;
	bool partial;	   /* partial mode */
	int hash_capacity; /* hash strategy: its group capacity; 0: sort */
	GpuAggKeyPlan keys[GPUOPS_MAX_SORT_KEYS];
	GpuAggPlanAgg aggs[GPUOPS_MAX_AGGS];
	int prog_ncols;
	int prog_cols[GPUOPS_EXPR_MAX_COLS]; /* child columns */
	Oid prog_types[GPUOPS_EXPR_MAX_COLS];
	List *programs;	  /* per aggregate its program's list form, or NIL */
	List *prog_exprs; /* and its argument, or NULL */
} GpuAggPlan;

/* The plan's fields, in their order in custom_private (both directions; gpu_agg_plan.cpp). */
extern void GpuAggPlanFields(PlanFields &f, GpuAggPlan *plan);

/* One aggregate as the executor sees it. */
typedef struct GpuAggDesc
{
	GpuopsAggKind kind;
	GpuAggFinal final;
	GpuopsKeyKind value_kind;
	int arg_col;
	int filter_col;
	int notnull_col;
	Oid final_fn;
	FmgrInfo final_flinfo;	   /* of final_fn, when valid */
	double fraction;		   /* percentiles */
	bool desc;				   /* percentiles: values ordered descending */
	bool partial;			   /* emit the partial state, not the result */
	GpuAggKeyEncoding arg_enc; /* DICTIONARY, RANKED: the device reads numbers (int8) */
	Oid collation;			   /* of the ranks */
	Oid arg_type;
	/* SCALED (set per aggregation, gpu_agg_numeric.cpp) */
	int scale;			/* the device sums values times 10^scale */
	bool host_sum;		/* summed on the host instead (the device counts) */
	Datum *host_values; /* then per group the result */
	bool *host_nulls;
} GpuAggDesc;

/* planner (gpu_agg_path.cpp) */
extern void GpuAggAddPaths(PlannerInfo *root, RelOptInfo *input_rel, RelOptInfo *output_rel,
						   void *extra);

/* finalization (gpu_agg_final.cpp) */
extern bool GpuAggClassify(Oid aggfnoid, Oid argtype, GpuopsAggKind *kind, GpuAggFinal *final,
						   Oid *final_fn);
extern Datum GpuAggResultDatum(const GpuAggDesc *desc, const GpuopsAggResult *r, Datum row_value,
							   Datum row2_value, bool *isnull);

/* executor (gpu_agg_exec.cpp) */
extern const CustomScanMethods gpu_agg_scan_methods;
extern void GpuAggRegister(void);

#endif
