/*
 * device_expr_catalog.h
 *    The compiler's view of pg_catalog (device_expr_catalog.cpp): which
 *    functions map onto which interpreter operations, and the value kind
 *    and width of each type.  Used by device_expr.cpp only.
 */
#ifndef GPUOPS_DEVICE_EXPR_CATALOG_H
#define GPUOPS_DEVICE_EXPR_CATALOG_H

extern "C" {
#include "postgres.h"
}

/* How a pg_catalog function maps onto an interpreter operation. */
typedef struct FuncMap
{
	Oid fn;
	uint8 op;	/* GpuopsExprOp */
	uint8 sub;	/* comparison, or variant */
	uint8 type; /* the operands' GpuopsExprType */
} FuncMap;

/*
 * date against timestamp (not timestamptz, whose conversion depends on the
 * time zone): the date side is promoted as date_cmp_timestamp does, then
 * compared as timestamps.
 */
typedef struct DateTimestampCmp
{
	Oid fn;
	uint8 cmp;		/* GpuopsExprCmp */
	uint8 date_arg; /* which argument is the date */
} DateTimestampCmp;

extern const FuncMap *DeviceExprLookupFunc(Oid fn);
extern const DateTimestampCmp *DeviceExprLookupDateTimestampCmp(Oid fn);
extern int DeviceExprTypeKind(Oid type);
extern int DeviceExprTypeWidth(Oid type);

#endif /* GPUOPS_DEVICE_EXPR_CATALOG_H */
