/*
 * gpu_sort_exec.h
 *    GpuSort's executor state, shared by its parts: the node
 *    (gpu_sort_exec.cpp), key staging (gpu_sort_stage.cpp), the device sort
 *    (gpu_sort_device.cpp), tie resolution (gpu_sort_ties.cpp) and EXPLAIN
 *    (gpu_sort_explain.cpp).  Calls go one way: the node calls the parts;
 *    the device sort calls staging; tie resolution reads staging's marks.
 */
#ifndef GPUOPS_GPU_SORT_EXEC_H
#define GPUOPS_GPU_SORT_EXEC_H

extern "C" {
#include "postgres.h"

#include "access/detoast.h"
#include "access/parallel.h"
#include "catalog/pg_type_d.h"
#include "pg_compat.h"
#include "executor/executor.h"
#include "nodes/nodeFuncs.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/sortsupport.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "portability/instr_time.h"
#include "utils/memutils.h"
#include "utils/ruleutils.h"
#include "utils/tuplestore.h"
}

#include "batch.h"
#include "boundary.h"
#include "device_expr.h"
#include "guarded_scan.h"
#include "device.h"
#include "device_session.h"
#include "explain_device.h"
#include "gpu_sort.h"
#include "gpu_stage.h"
#include "guc.h"
#include "node.h"
#include "sort_park.h"
#include "sort_spill.h"

/* the sort's device session, and the staging buffer being filled */
struct GpuSortDevice : DeviceSession<GpuopsBackend, GpuopsSort, &GpuopsBackend::sort_end>
{
	GpuopsStageBuffer buf;
	uint32 buf_rows; /* rows written into buf so far */
	bool have_buf;
};

typedef struct GpuSortKeyInfo
{
	int col; /* index in the scan tuple */
	GpuopsKeyKind kind;
	bool descending;
	bool nulls_first;
	bool prefix_only; /* device sees a prefix: ties need the comparator */
	bool bpchar;	  /* trailing spaces do not count */
	Oid sortop;
	Oid collation;
	GpuopsExprProgram *program; /* a computed key's program, else NULL */
	ExprState *check;			/* PostgreSQL's evaluation of it, for a stopped row */
} GpuSortKeyInfo;

/*
 * The node (node.h): one input, whose store holds the child's columns and
 * after them the computed keys'.
 */
typedef struct GpuSortState : GpuopsNode
{
	int nkeys;
	GpuSortKeyInfo keys[GPUOPS_MAX_SORT_KEYS];
	int key_cols[GPUOPS_MAX_SORT_KEYS];
	uint64 bound;				  /* LIMIT + OFFSET: the rows asked for; 0 = all */
	uint64 compact_rows;		  /* bounded: keep the best `bound` rows from this many */
	uint64 first_compact_rows;	  /* the same, before the cut is set */
	GpuopsRowCut cut;			  /* bounded: rows the source drops as it reads */
	MemoryContext cut_cxt;		  /* the cut's value */
	GpuSortPlacement placement;	  /* where the plan asks it to sort */
	const GpuopsBackend *primary; /* the backend this process sorts on */
	Size mem_limit;				  /* rows held on the host before a run is spilled */
	bool random_access;			  /* backward scans may come */
	bool has_prefix_keys;
	bool has_abbrev_keys; /* lossy keys: every tie run is resolved */
	int ncomputed;		  /* computed keys: the store's last columns */
	List *checks;		  /* the plan's computed keys, for their checks */
	int prog_ncols;		  /* the columns their programs read */
	int prog_cols[GPUOPS_EXPR_MAX_COLS];
	Oid prog_types[GPUOPS_EXPR_MAX_COLS];
	TupleTableSlot *check_slot; /* a child row, for the keys' check */
	SortSupport ssup;			/* per key, prepared when ties need resolving */
	SortSupport abbrev;			/* per key, abbreviation for NUMERIC_ABBREV keys */

	GpuSortDevice *dev;
	bool healthy;			 /* the device has not failed during this sort */
	int staged_batches;		 /* leading store batches staged on the device */
	MemoryContext tmp_cxt;	 /* detoasted text while staging, reset per batch */
	MemoryContext sort_cxt;	 /* comparators and spill files, for the node's life */
	TupleTableSlot *scratch; /* virtual slot for compaction */
	GpuopsSortRuns *spill;	 /* sorted runs written to temporary files, or NULL */
	GpuSortPark *park;		 /* rows parked with the device sort (sort_park.h), or NULL */
	bool park_failed;		 /* the device failed with rows parked: read the input again */
	bool park_refused;		 /* staged input: the device had no room to start parking */
	bool cpu_only;			 /* since then the sort runs on the CPU backend */
	Tuplestorestate *replay; /* the merged spilled runs, for backward scans */
	TupleTableSlot *replay_slot;

	/* rows whose text key is longer than the device's prefix */
	uint8 *truncated;
	uint64 truncated_bytes;
	bool any_truncated;

	bool sorted;
	uint64 norder;
	uint64 pos; /* next row forward */
	bool eof;	/* ran off the end going forward */

	/* EXPLAIN ANALYZE */
	int runs;
	GpuopsStats stats;
	double staging_ms;
	double reorder_ms;	   /* laying the columns out in output order */
	instr_time emit_start; /* when the first row could go out (DEBUG1) */
	Size host_memory;
	uint64 tie_runs;	/* runs re-sorted with the comparator */
	uint64 compactions; /* bounded: times the store was cut to `bound` rows */
	int spilled_runs;
	uint64 spilled_bytes;
	uint64 parked_rows; /* parked with the device sort */
	uint64 parked_bytes;
	int device_runs;	   /* device sorts of parked rows (more than one: spilled) */
	double device_sort_ms; /* waiting for them */
} GpuSortState;

extern const CustomExecMethods gpu_sort_exec_methods;

/* staging the keys (gpu_sort_stage.cpp) */
extern GpuopsStatus GpuSortStageBatch(GpuSortState *st, GpuopsBatch *batch, uint64 batch_first_row);
extern bool GpuSortIsTruncated(GpuSortState *st, uint64 row);

/* the device sort (gpu_sort_device.cpp) */
extern void GpuSortDeviceRelease(void *arg);
extern GpuopsStatus GpuSortDeviceFinish(GpuSortState *st, uint32 *order, uint8 **ties);
extern void GpuSortStoredOnCpu(GpuSortState *st, uint32 *order, uint8 **ties);
extern void GpuSortDeviceFailedMidway(GpuSortState *st, GpuopsStatus rc);
extern void GpuSortStartDevice(GpuSortState *st, bool primary);
extern void GpuSortStagePending(GpuSortState *st, bool all);
extern void GpuSortAddStats(GpuopsStats *sum, const GpuopsStats *one);

/* ties and comparisons with PostgreSQL's comparators (gpu_sort_ties.cpp) */
extern void GpuSortEnsureComparators(GpuSortState *st);
extern void GpuSortResolveTies(GpuSortState *st, uint32 *order, const uint8 *ties);

/* EXPLAIN (gpu_sort_explain.cpp) */
extern void GpuSortExplain(CustomScanState *node, List *ancestors, ExplainState *es);

#endif /* GPUOPS_GPU_SORT_EXEC_H */
