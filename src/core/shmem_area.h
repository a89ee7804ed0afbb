/*
 * shmem_area.h
 *    gpuops' areas of PostgreSQL's shared memory (shmem_area.cpp): each
 *    asked for once from _PG_init, made once by the postmaster, whose
 *    pointer every process it forks inherits.
 */
#ifndef GPUOPS_SHMEM_AREA_H
#define GPUOPS_SHMEM_AREA_H

#include "postgres.h"

/* Sets up an area's contents the first time it is made (zeroed before). */
typedef void (*GpuopsShmemInit)(void *area);

/*
 * From _PG_init: `bytes` of shared memory named `name`.  *where is set
 * when the server makes its shared memory (and after a crash restart, to
 * the new area); init, when not NULL, runs on it once, zeroed.
 */
extern void GpuopsShmemArea(const char *name, Size bytes, void **where, GpuopsShmemInit init);

#endif /* GPUOPS_SHMEM_AREA_H */
