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
 * The key kind of a fixed-width type whose normalized words are exact: the
 * device orders and compares its values exactly as PostgreSQL's default
 * btree opclass does (ints, float, date/time types, bool, uuid, interval).
 */
extern bool GpuopsFixedKeyKind(Oid type, GpuopsKeyKind *kind);

/*
 * Maps a sort on (type, btree opfamily, collation) to a device key kind.
 * Returns false when the device cannot order it exactly as PostgreSQL does
 * (unsupported type, a non-default ordering, a collation other than C for
 * text).  *prefix_only is set when the device sees only a prefix of the
 * value, so ties on the prefix must be resolved with PostgreSQL's comparator
 * (*sortop, the ordering operator, serves it).
 */
extern bool GpuopsSortKeyKind(Oid type, Oid opfamily, Oid collation, int16 strategy,
							  GpuopsKeyKind *kind, bool *prefix_only, Oid *sortop);

#endif
