/*
 * types.cpp
 *    SQL type -> device key kind mapping.
 *
 * Fixed-width types map to their storage: date is an int4 of days, time,
 * timestamp and timestamptz are int8 microseconds, so the integer orders are
 * theirs (infinities included).  Text, varchar and bpchar under the C
 * collation compare by bytes (varstr_cmp is memcmp then length there;
 * bpchar ignores trailing spaces), so a byte prefix orders them up to ties.
 * Numeric uses PostgreSQL's abbreviated key, exact up to ties.
 */
extern "C" {
#include "postgres.h"

#include "catalog/pg_am_d.h"
#include "catalog/pg_type_d.h"
#include "commands/defrem.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/pg_locale.h"
#include "utils/sortsupport.h"
}

#include "types.h"
#include "pg_compat.h"

/*
 * Does PostgreSQL abbreviate this ordering into keys it compares as unsigned
 * integers?  Then the device can sort the abbreviations and PostgreSQL's
 * comparator settle their ties.  For text this is so under ICU collations
 * (PostgreSQL does not trust libc's strxfrm), which is what makes their
 * exact order reachable here.
 */
static bool
HasUnsignedAbbreviation(Oid sortop, Oid collation)
{
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "gpuops abbreviation probe",
											  ALLOCSET_SMALL_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	SortSupportData ssup;
	bool ok;

	memset(&ssup, 0, sizeof(ssup));
	ssup.ssup_cxt = cxt;
	ssup.ssup_collation = collation;
	ssup.abbreviate = true;
	PrepareSortSupportFromOrderingOp(sortop, &ssup);
	ok = ssup.abbrev_converter != NULL && ssup.comparator == ssup_datum_unsigned_cmp;
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
	return ok;
}

bool
GpuopsFixedKeyKind(Oid type, GpuopsKeyKind *kind)
{
	switch (type)
	{
		case INT2OID:
			*kind = GPUOPS_KEY_INT2;
			return true;
		case INT4OID:
		case DATEOID:
			*kind = GPUOPS_KEY_INT4;
			return true;
		case INT8OID:
		case TIMEOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			*kind = GPUOPS_KEY_INT8;
			return true;
		case FLOAT4OID:
			*kind = GPUOPS_KEY_FLOAT4;
			return true;
		case FLOAT8OID:
			*kind = GPUOPS_KEY_FLOAT8;
			return true;
		case BOOLOID:
			*kind = GPUOPS_KEY_BOOL;
			return true;
		case UUIDOID:
			*kind = GPUOPS_KEY_UUID;
			return true;
		case INTERVALOID:
			*kind = GPUOPS_KEY_INTERVAL;
			return true;
		default:
			return false;
	}
}

bool
GpuopsSortKeyKind(Oid type, Oid opfamily, Oid collation, int16 strategy, GpuopsKeyKind *kind,
				  bool *prefix_only, Oid *sortop)
{
	Oid opclass;
	Oid optype;

	*prefix_only = false;
	if (!GpuopsFixedKeyKind(type, kind))
	{
		switch (type)
		{
			case NUMERICOID:
				/* PostgreSQL's own 64-bit abbreviation, then its full comparator */
				if (SIZEOF_DATUM != 8)
					return false;
				*kind = GPUOPS_KEY_NUMERIC_ABBREV;
				*prefix_only = true;
				break;
			case TEXTOID:
			case VARCHAROID:
			case BPCHAROID:
				/* bytes under C; elsewhere PostgreSQL's abbreviation, where it has one */
				if (!OidIsValid(collation))
					return false;
				*kind = GpuopsCollationIsC(collation) ? GPUOPS_KEY_BYTES16
													  : GPUOPS_KEY_ABBREV_UNSIGNED;
				*prefix_only = true;
				break;
			default:
				return false;
		}
	}
	/* only the type's own default ordering: a USING clause may mean another */
	opclass = GetDefaultOpClass(type, BTREE_AM_OID);
	if (!OidIsValid(opclass) || get_opclass_family(opclass) != opfamily)
		return false;
	/* varchar sorts with text's operators: look them up by the opclass's type */
	optype = get_opclass_input_type(opclass);
	*sortop = get_opfamily_member(opfamily, optype, optype, strategy);
	if (!OidIsValid(*sortop))
		return false;
	if (*kind == GPUOPS_KEY_ABBREV_UNSIGNED && !HasUnsignedAbbreviation(*sortop, collation))
		return false;
	return true;
}
