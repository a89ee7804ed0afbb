/*
 * gpu_agg_exec.h
 *    GpuAgg's executor state, shared by the node (gpu_agg_exec.cpp), its
 *    device side (gpu_agg_device.cpp), the dictionaries and group keys
 *    (gpu_agg_dict.cpp), numeric sums (gpu_agg_numeric.cpp) and the
 *    host-side merge of chunked aggregation (gpu_agg_merge.cpp).
 *
 * An input larger than one device aggregation may take (the device budget)
 * is aggregated in chunks of consecutive rows; each chunk's groups (first
 * row and states) are merged on the host by their packed group key, states
 * combined as the device combines them.  A group may so span chunks: one
 * key in half the rows is no problem.
 */
#ifndef GPUOPS_GPU_AGG_EXEC_H
#define GPUOPS_GPU_AGG_EXEC_H

extern "C" {
#include "postgres.h"

#include "nodes/execnodes.h"
#include "utils/hsearch.h"
}

#include "batch.h"
#include "device_session.h"
#include "gpu_agg.h"
#include "gpuops_device.h"
#include "node.h"

typedef struct GpuAggMerge GpuAggMerge;

typedef DeviceSession<GpuopsAggBackend, GpuopsAgg, &GpuopsAggBackend::agg_end> GpuAggDevice;

/* a text group key's dictionary: distinct byte strings -> numbers */
typedef struct DictKey
{
	const char *data;
	Size len;
} DictKey;

typedef struct DictEntry
{
	DictKey key;
	uint64 id;
} DictEntry;

/* the node (node.h): one input, the child's rows in its store */
typedef struct GpuAggState : GpuopsNode
{
	int nkeys;
	int nextra; /* other columns from a group's first row */
	int naggs;
	bool partial;		  /* partial mode (gpu_agg.h) */
	uint64 hash_capacity; /* the planner chose the hash strategy (0: sort) */
	GpuopsKeyKind key_kind[GPUOPS_MAX_SORT_KEYS];
	GpuAggKeyEncoding key_enc[GPUOPS_MAX_SORT_KEYS];
	Oid key_type[GPUOPS_MAX_SORT_KEYS];
	Oid key_collation[GPUOPS_MAX_SORT_KEYS];
	HTAB *dict[GPUOPS_MAX_SORT_KEYS];		 /* dictionary keys: their dictionary */
	uint64 **dict_ids[GPUOPS_MAX_SORT_KEYS]; /* and per batch its rows' numbers */
	uint64 **arg_ids[GPUOPS_MAX_AGGS];		 /* ranked text arguments: per batch their ranks */
	GpuAggDesc *aggs;

	/* computed inputs (gpu_agg.h): per aggregate its program, or NULL */
	GpuopsExprProgram *programs[GPUOPS_MAX_AGGS];
	List *prog_exprs;						   /* the plan's arguments of computed inputs */
	ExprState *program_exprs[GPUOPS_MAX_AGGS]; /* its argument, PostgreSQL's */
	int prog_ncols;							   /* the programs' columns: child columns, types */
	int prog_cols[GPUOPS_EXPR_MAX_COLS];
	Oid prog_types[GPUOPS_EXPR_MAX_COLS];
	TupleTableSlot *recheck_slot; /* a child row, for program_exprs */

	GpuAggDevice *dev;
	MemoryContext scratch_cxt; /* a batch's key numbers and bitmaps */
	MemoryContext dict_cxt;	   /* dictionaries and their row numbers */
	MemoryContext merge_cxt;   /* chunked: the merged groups */

	bool aggregated;
	uint64 ngroups;
	uint64 next_group;
	bool empty_row_done;			/* no GROUP BY, no input: the one row emitted */
	const uint64 *group_rows;		/* per group its first row */
	const GpuopsAggResult *results; /* per group naggs states */
	GpuAggMerge *merge;				/* chunked: the groups merged on the host */

	/* EXPLAIN ANALYZE */
	GpuopsAggStats stats; /* summed over chunks */
	uint32 chunks;
	uint32 hashed_chunks;	/* chunks the hash strategy aggregated */
	uint32 overflow_chunks; /* and those with more groups than it took */
	double read_ms;
	Size host_memory;
} GpuAggState;

/* gpu_agg_dict.cpp: text keys numbered, text arguments ranked (dict_cxt) */
extern void GpuAggEncode(GpuAggState *st);
extern const char *GpuAggKeyColumn(GpuAggState *st, int k, int batch);
extern const char *GpuAggValueColumn(GpuAggState *st, int agg, int batch);

/* gpu_agg_numeric.cpp: sum/avg(numeric) on the device as scaled integers, or on the host */
extern void GpuAggNumericPrepare(GpuAggState *st);
extern void GpuAggNumericHost(GpuAggState *st);

/* gpu_agg_dict.cpp: the 64-bit words of a packed group key (0 without GROUP BY) */
extern int GpuAggKeyWords(GpuAggState *st);

/* gpu_agg_dict.cpp: the packed group key of a stored row */
extern void GpuAggRowKey(GpuAggState *st, uint64 row, uint64 *words, int nwords);

/* gpu_agg_device.cpp: reads the whole input and aggregates it (the CPU backend after a failure) */
extern void GpuAggReadAndAggregate(GpuAggState *st);

/* gpu_agg_merge.cpp */
extern GpuAggMerge *GpuAggMergeCreate(GpuAggState *st, MemoryContext cxt);
extern void GpuAggMergeChunk(GpuAggState *st, uint64 first_row, uint64 ngroups,
							 const uint64 *group_rows, const GpuopsAggResult *results);
extern uint64 GpuAggMergeGroups(GpuAggState *st, const uint64 **group_rows,
								const GpuopsAggResult **results);

#endif
