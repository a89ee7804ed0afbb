/*
 * types.h
 *    Which SQL types and orderings the device layer can sort.
 */
#ifndef GPUOPS_TYPES_H
#define GPUOPS_TYPES_H

extern "C" {
#include "postgres.h"
}

#include "gpuops_device.h"

/*
 * Maps a sort on (type, btree opfamily) to a device key type.  Returns false
 * when the device cannot sort it exactly as PostgreSQL would (unsupported
 * type, or an ordering other than the type's default btree one).
 */
extern bool GpuopsSortKeyType(Oid type, Oid opfamily, GpuopsKeyType *key);

#endif
