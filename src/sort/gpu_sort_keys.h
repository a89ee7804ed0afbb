/*
 * gpu_sort_keys.h
 *    GpuSort planning: the keys of a path, shared by gpu_sort_keys.cpp,
 *    which finds them, and gpu_sort_path.cpp, which costs and makes the
 *    paths.
 */
#ifndef GPUOPS_GPU_SORT_KEYS_H
#define GPUOPS_GPU_SORT_KEYS_H

extern "C" {
#include "postgres.h"

#include "nodes/pathnodes.h"
}

/* Keys the device computes, for the cost. */
typedef struct GpuSortComputed
{
	int ncols;	  /* program columns staged per row */
	Cost per_row; /* what computing the keys cost the child per row */
	Path *source; /* what the child reads the columns from */
} GpuSortComputed;

/*
 * The path storage (gpu_sort.h) of a GpuSort over `input` for the query's
 * ORDER BY: its keys as columns of the input's target, or computed by the
 * device; NIL when a key is not an input column or of a type it cannot
 * sort.  *key_words: the normalized key's words; *comp: with computed keys,
 * their cost.
 */
extern List *GpuSortPathKeys(PlannerInfo *root, Path *input, uint64 bound, int *key_words,
							 GpuSortComputed *comp);

#endif /* GPUOPS_GPU_SORT_KEYS_H */
