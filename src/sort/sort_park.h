/*
 * sort_park.h
 *    GpuSort's rows parked with the device sort once they outgrow its host
 *    memory limit, and read back in sorted order.
 *
 * PostgreSQL's sort writes sorted runs of work_mem to temporary files and
 * merges them.  The device holds tens of gigabytes: once the rows held on
 * the host reach gpuops.host_memory_limit (work_mem by default), every row
 * goes, as a MinimalTuple, to the device sort beside its keys
 * (gpuops_sort.h, sort_park_*), and the host keeps one batch at a time.
 * After the device sort the rows come back in order, in chunks laid out in
 * a pinned buffer, and go out without a copy.  Only when the rows outgrow
 * the device budget too are they written to temporary files, in runs as
 * large as that budget, and merged (sort_spill.h).
 *
 * Rows whose keys the device sees only a prefix of (text) or an
 * abbreviation of (numeric) and that tie on the device's words come back
 * next to each other; each such run is ordered with PostgreSQL's
 * comparators: within its chunk, or in a tuplesort (which spills by
 * PostgreSQL's rules) when it is longer than a chunk.
 */
#ifndef GPUOPS_SORT_PARK_H
#define GPUOPS_SORT_PARK_H

extern "C" {
#include "postgres.h"

#include "executor/tuptable.h"
}

struct GpuSortState;
typedef struct GpuSortPark GpuSortPark;

/* Whether the sort may park its rows: unbounded, no computed keys, forward scans only. */
extern bool GpuSortMayPark(GpuSortState *st);

/*
 * The store has outgrown the host memory limit: starts parking with its
 * rows (GpuSortParkStore) and returns true, or false when the sort may not
 * park or the device has no room even for them.
 */
extern bool GpuSortParkBegin(GpuSortState *st);

/*
 * Moves every row of the store (its batches full, or `last`) to the device
 * sort, staging their keys first, and empties the store.  When the device
 * has no room for them, the rows parked so far are sorted and written to a
 * temporary file as a run first.
 */
extern void GpuSortParkStore(GpuSortState *st, bool last);

/*
 * After the last rows: sorts the parked rows and starts reading them (and
 * merging any runs).  A device failure before any row went out leaves
 * st->park_failed set (with gpuops.cpu_fallback): the caller sorts again
 * on the CPU; after rows went out, or without fallback, it raises.
 */
extern void GpuSortParkFinish(GpuSortState *st);

/*
 * Staged input (GpuSort -> Gather -> GpuStage): once the rows taken
 * outgrow the host memory limit, the workers' chunks are parked as they
 * come (gpu_stage.h's streaming), so that the shared memory they take stays
 * bounded; the chunks left when the Gather ends are collected as before.
 * Around GpuopsNodeCollectStaged; a no-op for a sort that may not park.
 */
extern void GpuSortParkStreamBegin(GpuSortState *st);
extern void GpuSortParkStreamEnd(GpuSortState *st);

/* The next sorted row into the scan slot; false at the end. */
extern bool GpuSortParkNext(GpuSortState *st, TupleTableSlot *slot);

/* Reads the sorted rows again from the first (a rescan with the same input). */
extern void GpuSortParkRewind(GpuSortState *st);

/* Drops the parked rows and the runs (a rescan with new input, the node's end). */
extern void GpuSortParkForget(GpuSortState *st);

#endif
