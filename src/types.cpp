/*
 * types.cpp
 *    SQL type -> device key type mapping.
 */
extern "C" {
#include "postgres.h"

#include "catalog/pg_am_d.h"
#include "catalog/pg_type_d.h"
#include "commands/defrem.h"
#include "utils/lsyscache.h"
}

#include "types.h"

bool
GpuopsSortKeyType(Oid type, Oid opfamily, GpuopsKeyType *key)
{
	Oid			opclass;

	switch (type)
	{
		case INT4OID:
			*key = GPUOPS_KEY_INT4;
			break;
		case INT8OID:
			*key = GPUOPS_KEY_INT8;
			break;
		case FLOAT8OID:
			*key = GPUOPS_KEY_FLOAT8;
			break;
		default:
			return false;
	}
	/* only the type's own default ordering: a USING clause may mean another */
	opclass = GetDefaultOpClass(type, BTREE_AM_OID);
	return OidIsValid(opclass) && get_opclass_family(opclass) == opfamily;
}
