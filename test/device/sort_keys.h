/*
 * sort_keys.h
 *    Sort key columns for the sort tests: their generation, and the
 *    reference comparison written from each type's rules (PostgreSQL's
 *    order, not the engine's normalized key words).
 */
#ifndef SORT_KEYS_H
#define SORT_KEYS_H

#include "device_test.h"

namespace dt {

/* How a key column's values are drawn. */
enum Dist
{
	UNIFORM,	/* wide: few ties */
	DUPLICATES, /* a handful of distinct values */
	SKEW,		/* one value in half the rows, the rest uniform */
	SPECIAL		/* the kind's edge values (NaN, -0, extremes) */
};

struct KeyCol
{
	GpuopsKeyKind kind;
	int desc;
	int nulls_first;
	std::vector<uint8_t> raw;  /* n values at the kind's raw width */
	std::vector<uint8_t> null; /* a flag per row */
};

/* n rows of a key column; a NULL row keeps a drawn value (a backend must ignore it). */
KeyCol make_key(GpuopsKeyKind kind, int desc, int nulls_first, uint64_t n, Dist dist,
				double null_frac, Rng &rng);

/* PostgreSQL's comparison of two non-NULL values of a kind. */
int cmp_value(GpuopsKeyKind kind, const uint8_t *a, const uint8_t *b);

/* Rows x and y under the first nkeys keys: NULLS FIRST/LAST, then the value, DESC inverted. */
int cmp_rows(const std::vector<KeyCol> &keys, int nkeys, uint32_t x, uint32_t y);

const char *kind_name(GpuopsKeyKind kind);

} /* namespace dt */

#endif
