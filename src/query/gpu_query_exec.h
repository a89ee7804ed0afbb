/*
 * gpu_query_exec.h
 *    GpuQuery's executor state, shared by the node (gpu_query_exec.cpp),
 *    its run over the table and the backend (gpu_query_run.cpp) and its
 *    results (gpu_query_final.cpp).
 */
#ifndef GPUOPS_GPU_QUERY_EXEC_H
#define GPUOPS_GPU_QUERY_EXEC_H

extern "C" {
#include "postgres.h"

#include "access/relscan.h"
#include "nodes/execnodes.h"
}

#include "device_session.h"
#include "gpu_agg.h"
#include "gpu_query.h"
#include "node.h"
#include "query_parallel.h"
#include "query_reader.h"

typedef DeviceSession<GpuopsQueryBackend, GpuopsQuery, &GpuopsQueryBackend::query_end>
	GpuQueryDevice;

/*
 * A dimension's text column as dictionary codes: each distinct value (by
 * its bytes; bpchar's trailing blanks aside) gets the next code, and the
 * group rows turn codes back into the values.  By row (a functionally
 * dependent column, pay_dict 2): the code is the row's number, each row's
 * value kept as it is (no hashing, no sharing).
 */
typedef struct GpuQueryDict
{
	uint32 n;		/* codes given (by row: 1 + the last row with a value) */
	uint32 cap;		/* slots (a power of two, at most half full); by row: values' room */
	uint32 *slots;	/* code + 1, 0: empty */
	uint32 *hashes; /* per code its bytes' hash */
	Datum *values;	/* per code its value (detoasted, in the dimensions' context) */
	bool bpchar;
	bool by_row;
	int16 typlen; /* by row: the type's, to copy its values */
	bool typbyval;
	char *arena; /* where the next value's copy goes (DictKeep) */
	Size arena_left;
	uint64 *memo; /* DictCodeBytes' recent codes: (two words, code + 1) by the words' hash */
} GpuQueryDict;

/* A dimension staged for the backend (gpu_query_dims.cpp). */
typedef struct GpuQueryDimRows
{
	uint64 nrows;
	uint64 cap; /* rows the arrays hold */
	uint64 *keys;
	uint64 *words[GPUOPS_QUERY_MAX_COLS]; /* per payload column of this dimension */
	uint8 *nulls[GPUOPS_QUERY_MAX_COLS];  /* or NULL: none yet */
} GpuQueryDimRows;

/* the node (node.h): no input read through the base; the escape plan is its own */
typedef struct GpuQueryState : GpuopsNode
{
	GpuQueryPlan *plan;
	GpuopsExprProgram *qual; /* NULL: every row */
	GpuopsExprProgram *key_progs[GPUOPS_QUERY_MAX_KEYS];
	GpuopsExprProgram *arg_progs[GPUOPS_MAX_AGGS];
	GpuopsExprProgram *filter_progs[GPUOPS_MAX_AGGS];
	List *param_states; /* the qual's Params: ExprStates, slots, types */
	List *param_slots;
	List *param_types;
	GpuAggDesc *aggs; /* per aggregate its final step (gpu_agg_final.cpp) */
	QueryReadColumn cols[GPUOPS_QUERY_MAX_COLS];

	GpuQueryDevice *dev;
	TableScanDesc scan;		  /* the table's pages, under the query's snapshot */
	QueryReader *reader;	  /* made when a run reads alone (serially) */
	int read_pages;			  /* the pages form (query_reader.h): -1 not decided yet, 0, 1 */
	GpuopsQueryTuple tuple;	  /* and its tuple shape */
	bool in_place;			  /* ... read in place (decided with read_pages) */
	double map_ms;			  /* in place on the GPU: the time shared buffers took to map */
	bool map_started;		  /* a run started mapping them (for later queries) */
	GpuopsPageLink page_link; /* in place on the GPU: the page service's channel (service
							   * NULL: this process's own mapping) */
	MemoryContextCallback page_link_cb; /* releases it with run_cxt */
	MemoryContext run_cxt;				/* the reader's buffers */

	/* a run with workers (query_parallel.h): they read, the leader ships */
	QueryParallel *par;
	QueryReader *leader_reader; /* the leader's own share, small batches */
	MemoryContext par_cxt;		/* both, for one run */
	bool own_done;				/* the leader's reader reached the end */
	int workers_launched;		/* EXPLAIN ANALYZE: the last run's */
	bool slots_pinned;			/* and whether their slots were pinned */
	double workers_read_ms;		/* and their time reading, summed */
	char par_why[128];			/* a worker's reason to escape */
	PlanState *escape_ps;		/* PostgreSQL's plan of the block */

	/* the dimensions: their plans, rows and dictionaries (gpu_query_dims.cpp) */
	PlanState *dim_ps[GPUOPS_QUERY_MAX_DIMS];
	GpuQueryDimRows dim_rows[GPUOPS_QUERY_MAX_DIMS];
	GpuQueryDict *dicts[GPUOPS_QUERY_MAX_COLS];		 /* per payload column, or NULL */
	QueryTextTest *pay_tests[GPUOPS_QUERY_MAX_COLS]; /* per payload column its test, or NULL */
	GpuopsExprProgram *join_qual;					 /* NULL: every joined row */
	/*
	 * a dimension read from its pages (read_relid): its range table index
	 * (its child plan's, 0: none), columns and quals' program
	 */
	Index dim_read_rti[GPUOPS_QUERY_MAX_DIMS];
	QueryReadColumn *dim_read_cols[GPUOPS_QUERY_MAX_DIMS];
	GpuopsExprProgram *dim_read_qual[GPUOPS_QUERY_MAX_DIMS];
	const char *dim_read_why[GPUOPS_QUERY_MAX_DIMS]; /* why the last staging read its plan */
	MemoryContext dims_cxt;
	bool dims_staged; /* for this run's Params */
	bool dims_ran;	  /* the children ran once: rescan them first */
	double dims_ms;	  /* EXPLAIN ANALYZE: reading and staging them */
	double begin_ms;  /* and the backend's begin (the lookups built and uploaded) */
	double finish_ms; /* and its finish (the groups back) */

	bool done;				/* the groups are here (or escaping) */
	bool escaping;			/* the escape plan returns the rows */
	bool escaped_ever;		/* EXPLAIN ANALYZE */
	const char *escape_why; /* why (a constant string) */
	uint64 ngroups;
	uint64 next_group;
	bool empty_row_done; /* no GROUP BY, no passing row: the one row emitted */
	int key_words;		 /* words per packed key */
	const uint64 *group_keys;
	const GpuopsAggResult *results;

	/* EXPLAIN ANALYZE */
	GpuopsQueryStats stats;
	QueryReaderStats rstats;
} GpuQueryState;

/* gpu_query_run.cpp: reads the table into the backend; groups, or escaping */
extern void GpuQueryRun(GpuQueryState *st);
extern void GpuQueryEndRun(GpuQueryState *st);

/* gpu_query_dims.cpp: the dimensions' rows read and staged (once per run's Params) */
extern void GpuQueryStageDims(GpuQueryState *st);
/* and put into a spec */
extern void GpuQueryDimSpec(GpuQueryState *st, GpuopsQuerySpec *spec);
/* a dictionary code of payload column pay back into its value */
extern Datum GpuQueryDictValue(const GpuQueryState *st, int pay, uint64 code);

/* gpu_query_final.cpp: the scan tuple of group g (g < 0: the empty plain aggregate's row) */
extern TupleTableSlot *GpuQueryGroupRow(GpuQueryState *st, int64 g, TupleTableSlot *slot);

#endif /* GPUOPS_GPU_QUERY_EXEC_H */
