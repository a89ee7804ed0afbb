/*
 * gpu_sort_path.cpp
 *    GpuSort planning: offers a CustomPath for ORDER BY that competes on cost
 *    with PostgreSQL's Sort.
 *
 * Called from the create_upper_paths_hook at UPPERREL_ORDERED.  The path
 * sorts the cheapest input path, and in parallel the cheapest partial path
 * below a Gather Merge; PostgreSQL's add_path keeps whichever of its sorts
 * and GpuSort is cheaper; and one GpuSort over the rows parallel workers
 * staged into shared memory (GpuStage).  With a constant LIMIT the sort is
 * bounded (top-N).  Anything gpuops cannot sort exactly as
 * PostgreSQL would (types, orderings) is left alone.
 *
 * A key that is an expression of integers or floats the device evaluator
 * compiles is computed by the device (gpu_sort.h, "computed keys"): the
 * child outputs the columns it reads instead of its value, so a plain scan
 * is read from its heap pages directly and not projected row by row.
 *
 * This file places, costs and makes the paths (serial, in parallel under a
 * Gather Merge, staged over GpuStage) and the plan; the keys are found in
 * gpu_sort_keys.cpp.
 */
extern "C" {
#include "postgres.h"

#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/planmain.h"
#include "optimizer/restrictinfo.h"
#include "utils/lsyscache.h"
}

#include "batch.h"
#include "boundary.h"
#include "gpu_sort.h"
#include "gpu_sort_keys.h"
#include "gpu_stage.h"
#include "guc.h"
#include "plan_why.h"
#include "device.h"
#include "join_plan.h"

#include <cmath>

static Plan *PlanGpuSortPath(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path, List *tlist,
							 List *clauses, List *custom_plans);

static const CustomPathMethods gpu_sort_path_methods = {
	GPUSORT_NAME, PlanGpuSortPath, NULL, /* ReparameterizeCustomPathByChild: not partitionwise */
};

/*
 * Cost of a GpuSort over `rows` input rows with a key of `key_width` bytes.
 * Everything happens before the first row comes out: a fixed start-up
 * (device and streams), staging each row into column batches (the
 * executor's tuple rate, not the device, bounds the operator), and the bytes
 * that cross the bus (key out, row number back); the device sort itself is
 * milliseconds for 10^8 keys.  Emitting a row costs about what PostgreSQL
 * charges for a tuple.  The staging default (gpuops.tuple_cost = 0.04) sits
 * above PostgreSQL's own bounded (top-N) sort cost for small LIMITs, which
 * the bounded heap sort wins, and well below its full sort cost
 * (2 * cpu_operator_cost * log2(N) per row: 0.12 at 10M rows).
 */
/*
 * Spilling (rows held beyond gpuops.host_memory_limit are sorted, written to
 * a temporary file and merged back with PostgreSQL's comparators): on the
 * benchmark machine (50M rows, 1 GB limit) it added 22 s to a 14 s sort,
 * about 4 times the staging cost of each row.  Charged as 3 staging costs
 * per spilled row (writing, reading back) plus one per output row (the
 * merge), so that PostgreSQL's own external sort wins where it is faster.
 */
#define GPUSORT_SPILL_WRITE_FACTOR 3.0
#define GPUSORT_SPILL_MERGE_FACTOR 1.0

/*
 * An unbounded sort without computed keys parks the rows over the limit in
 * device memory instead (sort_park.h): each is formed into a tuple (about
 * half of a row's staging) and crosses the bus twice; no file is written
 * unless the device's budget is exceeded too, which a plan does not
 * foresee (the budget is tens of gigabytes).
 */
#define GPUSORT_PARK_FACTOR 0.5
/* bytes the row store holds per row beyond the data: pointers, bitmaps */
#define GPUSORT_ROW_OVERHEAD 16

/*
 * Over GpuStage, parallel workers have read and copied the rows (their cost
 * is the Gather's); the leader still takes the chunks, copies the key
 * columns into pinned buffers and reorders every column for emission, about
 * this share of a serial GpuSort's staging per row.
 */
#define GPUSORT_STAGED_LEADER_SHARE 0.25

/*
 * A bounded sort in a parallel worker sorts on the CPU backend (no CUDA
 * context: 120-300 ms each on an H100, about what a worker's share of a
 * 50M-row top-N takes to read) while its bound keeps each compaction this
 * small: at most 2M rows, which the host radix sort orders in tens of
 * milliseconds, a few times per worker.
 */
#define GPUSORT_HOST_WORKER_MAX_BOUND (16 * GPUOPS_BATCH_ROWS)

/* Where a sort with this bound runs, serial or in parallel workers. */
static GpuSortPlacement
SortPlacement(uint64 bound, bool partial)
{
	if (bound > 0 && bound < (uint64) gpuops_topn_device_min_bound)
		return GPUSORT_ON_HOST;
	if (partial && bound > 0 && bound <= GPUSORT_HOST_WORKER_MAX_BOUND)
		return GPUSORT_WORKERS_ON_HOST;
	return GPUSORT_ON_DEVICE;
}

/*
 * Rows a bounded sort copies into its store: all of the first
 * max(2 x bound, 64K) (the first compaction sets the cut), then those whose
 * first key beats the current bound-th one, about bound * ln(rows / first)
 * more on input in random order.  The others cost one comparison each.
 */
static double
BoundedRowsKept(double rows, uint64 bound)
{
	double first = Max(2.0 * bound, (double) GPUOPS_BATCH_ROWS);

	if (bound == 0 || rows <= first)
		return rows;
	return Min(rows, first + bound * std::log(rows / first));
}

/*
 * `rows` input rows read through `input` (the child's total cost);
 * `staging_share` of the per-row staging cost falls on this process, which
 * cuts them as it reads them unless other processes staged them (`staged`).
 */
static void
CostGpuSort(Path *path, Path *input, double input_rows, int key_width, uint64 bound,
			double staging_share, bool staged, GpuSortPlacement placement,
			const GpuSortComputed *comp)
{
	double rows = Max(input_rows, 1.0);
	double out = bound > 0 ? Min(rows, (double) bound) : rows;
	/*
	 * A bounded sort compacts rather than spills while 2 x bound rows fit;
	 * where they do not, it spills before any compaction sets the cut, and
	 * every row is copied.
	 */
	double held = bound > 0 ? Min(rows, 2.0 * bound) : rows;
	double row_bytes = input->pathtarget->width + GPUSORT_ROW_OVERHEAD;
	double limit_rows = GpuopsHostMemoryLimit() / row_bytes;
	bool spills = held > limit_rows;
	/* no cut before computed keys are known: every row is kept until compacted */
	double kept = spills || staged || comp ? rows : BoundedRowsKept(rows, bound);
	double mb = kept * (key_width + sizeof(uint32)) / (1024.0 * 1024.0);
	double spilled = spills ? rows - limit_rows : 0.0;
	bool parks = gpuops_enable_sort_park && spills && bound == 0 && comp == NULL;
	Cost reading = kept * gpuops_tuple_cost * staging_share + (rows - kept) * cpu_operator_cost;

	/*
	 * A bounded sort reading heap pages itself (heap_source.cpp) and
	 * cutting also skips the scan's per-tuple charge for every row (in the
	 * child's cost), as the shared hash join's rows do: no tuple passes
	 * through the executor.
	 */
	if (bound > 0 && !spills)
		reading -= GpuopsDirectReadSaving(comp ? comp->source : input, rows, 0.0);

	/*
	 * Computed keys: their columns are turned into words and copied (as
	 * GpuAgg's computed inputs), and the child no longer computes the keys.
	 */
	if (comp)
	{
		reading += rows * comp->ncols * cpu_operator_cost * 0.5 - rows * comp->per_row;
		mb += kept * comp->ncols * (sizeof(uint64) + 1) / (1024.0 * 1024.0);
	}
	path->rows = input_rows;
	path->startup_cost = input->total_cost + reading +
		(placement == GPUSORT_ON_HOST ? 0.0 : gpuops_startup_cost) + mb * gpuops_transfer_cost;
	if (parks)
		path->startup_cost += spilled * GPUSORT_PARK_FACTOR * gpuops_tuple_cost +
			2.0 * spilled * row_bytes / (1024.0 * 1024.0) * gpuops_transfer_cost;
	else if (spilled > 0)
		path->startup_cost += (spilled * GPUSORT_SPILL_WRITE_FACTOR +
							   out * GPUSORT_SPILL_MERGE_FACTOR) *
			gpuops_tuple_cost;
	path->total_cost = path->startup_cost + out * cpu_tuple_cost;
}

/*
 * The rows the query can ever take from the sort: LIMIT + OFFSET when both
 * are constants; 0 when unknown.  Not for FETCH FIRST ... WITH TIES, which
 * needs the rows that tie with the last one.
 */
uint64
GpuSortBound(PlannerInfo *root)
{
	Query *parse = root->parse;
	Const *count = (Const *) parse->limitCount;
	Const *offset = (Const *) parse->limitOffset;
	int64 bound;

	if (count == NULL || !IsA(count, Const) || count->constisnull ||
		parse->limitOption == LIMIT_OPTION_WITH_TIES)
		return 0;
	if (offset != NULL && (!IsA(offset, Const) || offset->constisnull))
		return 0;
	bound = DatumGetInt64(count->constvalue);
	if (bound <= 0)
		return 0;
	if (offset != NULL)
	{
		if (DatumGetInt64(offset->constvalue) < 0)
			return 0;
		bound += DatumGetInt64(offset->constvalue);
	}
	/* custom_private holds ints; a bound this large saves nothing anyway */
	return bound > 0 && bound < INT_MAX ? (uint64) bound : 0;
}

/*
 * A GpuSort over `input`, projected to the ordered rel's target, sorting
 * where `placement` says.
 */
static Path *
MakeGpuSortPath(PlannerInfo *root, RelOptInfo *ordered_rel, Path *input, double input_rows,
				List *priv, int key_words, uint64 bound, double staging_share, bool staged,
				GpuSortPlacement placement, const GpuSortComputed *comp)
{
	CustomPath *cpath = makeNode(CustomPath);
	GpuSortPlan *plan = GpuSortReadPlan((List *) linitial(priv));
	PlanFields writer;

	plan->placement = placement;
	GpuSortPlanFields(writer, plan);
	pfree(plan);
	priv = list_make3(writer.list(), lsecond(priv), lthird(priv));

	cpath->path.pathtype = T_CustomScan;
	cpath->path.parent = ordered_rel;
	cpath->path.pathtarget = input->pathtarget;
	cpath->path.param_info = NULL;
	cpath->path.parallel_aware = false;
	cpath->path.parallel_safe = input->parallel_safe;
	cpath->path.parallel_workers = input->parallel_workers;
	cpath->path.pathkeys = root->sort_pathkeys;
	CostGpuSort(&cpath->path, input, input_rows, key_words * (int) sizeof(uint64), bound,
				staging_share, staged, placement, comp);
	cpath->flags = CUSTOMPATH_SUPPORT_BACKWARD_SCAN | CUSTOMPATH_SUPPORT_PROJECTION;
	cpath->custom_paths = list_make1(input);
	cpath->custom_private = priv;
	cpath->methods = &gpu_sort_path_methods;
	return &cpath->path;
}

/*
 * One GpuSort over the rows that parallel workers (and the leader) read into
 * shared memory (gpu_stage.h): GpuSort -> Gather -> GpuStage -> the cheapest
 * partial path, computing the serial input's columns, so that the key
 * columns found for the serial path hold.  The executor's tuple rate no
 * longer bounds the reading; one device context sorts every row, and no
 * Gather Merge compares rows.  Staged rows cannot be spilled, so the path
 * is offered only when the estimated input fits gpuops.host_memory_limit,
 * or when the sort parks its rows: the leader then takes the chunks as they
 * come and parks them, freeing them (sort_park.h), which needs the leader
 * to take part in the Gather (parallel_leader_participation).
 */
static void
AddStagedGpuSortPath(PlannerInfo *root, RelOptInfo *input_rel, RelOptInfo *ordered_rel, Path *input,
					 List *priv, int key_words, uint64 bound)
{
	PathTarget *final_target = root->upper_targets[UPPERREL_ORDERED];
	double rows = Max(input->rows, 1.0);
	Path *gather;
	Path *path;
	bool streams = gpuops_enable_sort_park && bound == 0 && parallel_leader_participation;

	if (!gpuops_enable_parallel_staging || input_rel->partial_pathlist == NIL)
		return;
	if (!streams &&
		rows * (input->pathtarget->width + GPUSORT_ROW_OVERHEAD) > GpuopsHostMemoryLimit())
		return;
	gather = GpuStageGatherPath(root, input_rel, (Path *) linitial(input_rel->partial_pathlist),
								input->pathtarget->exprs);
	if (gather == NULL)
		return;
	/* on the device even when bounded: the leader sorts every staged row, uncut */
	path = MakeGpuSortPath(root, ordered_rel, gather, input->rows, priv, key_words, bound,
						   GPUSORT_STAGED_LEADER_SHARE, true, GPUSORT_ON_DEVICE, NULL);
	/* it has a Gather below: it cannot run in a worker itself */
	path->parallel_safe = false;
	path->parallel_workers = 0;
	path->pathtarget = input->pathtarget;
	if (final_target != NULL && path->pathtarget != final_target)
		path = (Path *) create_projection_path(root, ordered_rel, path, final_target);
	GpuopsAddPath(ordered_rel, path);
}

void
GpuSortAddOrderedPaths(PlannerInfo *root, RelOptInfo *input_rel, RelOptInfo *ordered_rel)
{
	Query *parse = root->parse;
	Path *input = input_rel->cheapest_total_path;
	List *priv;
	GpuSortComputed comp = {0, 0.0, NULL};
	int key_words = 0;
	uint64 bound = GpuSortBound(root);
	Path *path;
	PathTarget *final_target = root->upper_targets[UPPERREL_ORDERED];

	if (!GpuopsPlanningAllowedFor(GPUSORT_NAME, gpuops_enable_sort, "gpuops.enable_sort"))
		return;
	if (input == NULL || root->sort_pathkeys == NIL)
		return;
	/* row locks need EvalPlanQual through the sort; SRFs are projected above */
	if (parse->rowMarks != NIL || parse->hasTargetSRFs)
	{
		GpuopsDecline(GPUSORT_NAME, "%s",
					  parse->rowMarks != NIL ? "row locks (FOR UPDATE, FOR SHARE)"
											 : "a set-returning function in the target");
		return;
	}
	if (pathkeys_contained_in(root->sort_pathkeys, input->pathkeys))
	{
		GpuopsDecline(GPUSORT_NAME, "the input is in order already: no sort is needed");
		return;
	}
	if (input->rows < gpuops_min_rows)
	{
		GpuopsDecline(GPUSORT_NAME, "%.0f input rows, under gpuops.min_rows (%d)", input->rows,
					  gpuops_min_rows);
		return;
	}
	if (list_length(root->sort_pathkeys) > GPUOPS_MAX_SORT_KEYS)
	{
		GpuopsDecline(GPUSORT_NAME, "more than %d sort keys", GPUOPS_MAX_SORT_KEYS);
		return;
	}
	priv = GpuSortPathKeys(root, input, bound, &key_words, &comp);
	if (priv == NIL)
		return;

	path = MakeGpuSortPath(root, ordered_rel, input, input->rows, priv, key_words, bound, 1.0,
						   false, SortPlacement(bound, false), lthird(priv) != NIL ? &comp : NULL);
	/*
	 * As create_ordered_paths does for its Sort: project to the final target
	 * (kept in upper_targets; the upper rel's own reltarget is not set).
	 */
	if (final_target != NULL && path->pathtarget != final_target)
		path = (Path *) create_projection_path(root, ordered_rel, path, final_target);
	GpuopsAddPath(ordered_rel, path);
	/* staged chunks hold the child's columns only: no room for computed keys */
	if (lthird(priv) == NIL)
		AddStagedGpuSortPath(root, input_rel, ordered_rel, input, priv, key_words, bound);

	/*
	 * In parallel: every worker (and the leader) sorts its share of the
	 * cheapest partial path on the device, and Gather Merge merges the
	 * sorted streams, as PostgreSQL does with its own Sort.
	 */
	if (ordered_rel->consider_parallel && input_rel->partial_pathlist != NIL)
	{
		Path *partial = (Path *) linitial(input_rel->partial_pathlist);
		double total_groups;
		GpuSortPlacement placement = SortPlacement(bound, true);

		if (pathkeys_contained_in(root->sort_pathkeys, partial->pathkeys))
			return;
		priv = GpuSortPathKeys(root, partial, bound, &key_words, &comp);
		if (priv == NIL)
			return;
		path = MakeGpuSortPath(root, ordered_rel, partial, partial->rows, priv, key_words, bound,
							   1.0, false, placement, lthird(priv) != NIL ? &comp : NULL);
		/* every worker opening a CUDA context, unless workers sort on the host */
		if (placement == GPUSORT_ON_DEVICE)
		{
			path->startup_cost += gpuops_parallel_startup_cost;
			path->total_cost += gpuops_parallel_startup_cost;
		}
		total_groups = partial->rows * partial->parallel_workers;
		path = (Path *) create_gather_merge_path(root, ordered_rel, path, path->pathtarget,
												 root->sort_pathkeys, NULL, &total_groups);
		if (final_target != NULL && path->pathtarget != final_target)
			path = apply_projection_to_path(root, ordered_rel, path, final_target);
		GpuopsAddPath(ordered_rel, path);
	}
}

/*
 * The plan: a CustomScan with the child plan in custom_plans, reading the
 * child's output as its scan tuple (custom_scan_tlist), so setrefs turns our
 * targetlist into INDEX_VAR references to it.
 */
static Plan *
PlanGpuSortPathImpl(PlannerInfo *, RelOptInfo *, CustomPath *best_path, List *tlist, List *clauses,
					List *custom_plans)
{
	CustomScan *cscan = makeNode(CustomScan);
	Plan *child = (Plan *) linitial(custom_plans);
	Path *input = (Path *) linitial(best_path->custom_paths);
	List *computed = (List *) lthird(best_path->custom_private);
	GpuSortPlan *plan = GpuSortReadPlan((List *) linitial(best_path->custom_private));
	PlanFields fields;
	List *scan_tlist = NIL;
	ListCell *lc;

	/*
	 * Computed keys: the child outputs the columns they read instead (a
	 * Result if it cannot project), and they follow the child's columns in
	 * the scan tuple, where the executor stores the device's values.
	 */
	if (computed != NIL)
	{
		List *child_exprs = (List *) lsecond(best_path->custom_private);
		List *checks = NIL;

		child = change_plan_targetlist(child, GpuopsExprTlist(child_exprs), input->parallel_safe);
		custom_plans = list_make1(child);
		foreach (lc, computed)
			checks = lappend(checks,
							 GpuopsOuterVarRefs((Node *) copyObject(lfirst(lc)), child_exprs));
		plan->checks = checks;
	}
	foreach (lc, child->targetlist)
	{
		TargetEntry *tle = (TargetEntry *) lfirst(lc);

		scan_tlist = lappend(scan_tlist,
							 makeTargetEntry((Expr *) copyObject(tle->expr),
											 list_length(scan_tlist) + 1, tle->resname, false));
	}
	if (computed != NIL)
		foreach (lc, computed)
			scan_tlist = lappend(scan_tlist,
								 makeTargetEntry((Expr *) copyObject(lfirst(lc)),
												 list_length(scan_tlist) + 1, NULL, false));
	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = extract_actual_clauses(clauses, false);
	cscan->scan.scanrelid = 0;
	cscan->flags = best_path->flags;
	cscan->custom_plans = custom_plans;
	cscan->custom_exprs = NIL;
	GpuSortPlanFields(fields, plan);
	pfree(plan);
	cscan->custom_private = (List *) copyObject(fields.list());
	cscan->custom_scan_tlist = scan_tlist;
	cscan->custom_relids = NULL;
	cscan->methods = &gpu_sort_scan_methods;
	return &cscan->scan.plan;
}

static Plan *
PlanGpuSortPath(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path, List *tlist,
				List *clauses, List *custom_plans)
{
	return GpuopsGuard("PlanCustomPath", PlanGpuSortPathImpl, root, rel, best_path, tlist, clauses,
					   custom_plans);
}
