/*
 * page_service.h
 *    The page service's PostgreSQL side (page_service.cpp): its worker and
 *    shared area, registered by _PG_init, and a backend's channels.
 */
#ifndef GPUOPS_PAGE_SERVICE_PG_H
#define GPUOPS_PAGE_SERVICE_PG_H

#include "gpuops_page_service.h"

/* From _PG_init: the shared area and the worker, when gpuops.page_service_channels > 0. */
extern void GpuopsPageServiceInit(void);

/*
 * A free channel of a serving page service into *link (false: no service,
 * not serving yet, or every channel taken).  GpuopsPageServiceRelease gives
 * it back (abandoned to the service when a request is in flight); a process
 * that exits gives back what it still holds.
 */
extern bool GpuopsPageServiceClaim(GpuopsPageLink *link);
extern void GpuopsPageServiceRelease(GpuopsPageLink *link);

#endif /* GPUOPS_PAGE_SERVICE_PG_H */
