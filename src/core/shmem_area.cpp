/*
 * shmem_area.cpp
 *    gpuops' areas of shared memory (shmem_area.h): the shmem request and
 *    startup hooks, chained once for all of them.
 */
extern "C" {
#include "postgres.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
}

#include "shmem_area.h"

typedef struct ShmemArea
{
	const char *name;
	Size bytes;
	void **where;
	GpuopsShmemInit init;
} ShmemArea;

#define MAX_AREAS 8

static ShmemArea areas[MAX_AREAS];
static int nareas = 0;
static shmem_request_hook_type prev_shmem_request = NULL;
static shmem_startup_hook_type prev_shmem_startup = NULL;

static void
RequestShmem(void)
{
	if (prev_shmem_request)
		prev_shmem_request();
	for (int i = 0; i < nareas; i++)
		RequestAddinShmemSpace(MAXALIGN(areas[i].bytes));
}

static void
StartupShmem(void)
{
	if (prev_shmem_startup)
		prev_shmem_startup();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	for (int i = 0; i < nareas; i++)
	{
		bool found;
		void *p = ShmemInitStruct(areas[i].name, areas[i].bytes, &found);

		if (!found)
		{
			memset(p, 0, areas[i].bytes);
			if (areas[i].init != NULL)
				areas[i].init(p);
		}
		*areas[i].where = p;
	}
	LWLockRelease(AddinShmemInitLock);
}

void
GpuopsShmemArea(const char *name, Size bytes, void **where, GpuopsShmemInit init)
{
	if (nareas == MAX_AREAS)
		elog(ERROR, "gpuops: too many shared memory areas");
	if (nareas == 0)
	{
		prev_shmem_request = shmem_request_hook;
		shmem_request_hook = RequestShmem;
		prev_shmem_startup = shmem_startup_hook;
		shmem_startup_hook = StartupShmem;
	}
	areas[nareas++] = ShmemArea{name, bytes, where, init};
}
