/*
 * agg_ref.h
 *    The aggregation tests' inputs and their reference: columns, the
 *    cases' recipes, the groups the test forms itself and each
 *    aggregate's expected state.
 */
#ifndef AGG_REF_H
#define AGG_REF_H

#include "device_test.h"

namespace dt {

/* A column at its kind's raw width; null empty: no NULLs (no bitmap is passed). */
struct Column
{
	GpuopsKeyKind kind;
	std::vector<uint8_t> raw;
	std::vector<uint8_t> null;

	bool is_null(uint64_t i) const { return !null.empty() && null[i]; }
	const uint8_t *at(uint64_t i) const { return &raw[i * gpuops_key_raw_width(kind)]; }
};

/* One aggregate: its kind and input column (-1: count(*)). */
struct AggDef
{
	GpuopsAggKind kind;
	int col;
	double fraction; /* the percentiles' */
};

struct AggCase
{
	std::string what;
	uint64_t n = 0;
	std::vector<Column> keys;
	std::vector<Column> cols; /* the aggregates' inputs */
	std::vector<AggDef> aggs;
	int order_agg = -1;
	int order_desc = 0;
	uint64_t hash_capacity = 0;
	int expect_hashed = -1;		 /* 1: the hash strategy must serve, 0: must not, -1: either */
	uint32_t batch_rows = 65536; /* a multiple of 8 */
};

/* How a case's keys and aggregates are made. */
struct AggRecipe
{
	std::string what;
	uint64_t n;
	enum Keys
	{
		BY_INT4,	  /* int4 in [0, groups), 5% NULL */
		BY_INT8_SKEW, /* int8: one key in half the rows, else [0, groups) */
		NO_KEYS,	  /* no GROUP BY: one group */
		MULTI,		  /* int4, int8, float8 (NaN, -0) and bool, 5% NULL each */
		ALL_NULL	  /* int4, every row NULL: one group */
	} keys;
	int64_t groups;
	enum Aggs
	{
		STANDARD,	  /* counts, sums, sums of squares, min/max, float8 */
		HASHABLE,	  /* only what the hash strategy takes */
		ORDERED_INT,  /* count(DISTINCT), percentiles of an int4, ascending */
		ORDERED_FLOAT /* the same of a float8 with NaNs and -0, descending */
	} aggs;
	uint64_t hash_capacity;
	int expect_hashed;
	uint32_t batch_rows;
};

const std::vector<AggRecipe> &agg_recipes();
AggCase make_agg_case(const AggRecipe &r, uint64_t seed);

/* The groups the test forms: rows in row order, and each row's group. */
struct RefGroup
{
	std::vector<uint32_t> rows;
};

struct RefGroups
{
	std::vector<RefGroup> groups;
	std::vector<uint32_t> group_of;
};

RefGroups reference_groups(const AggCase &c);

/*
 * The row the backends give for group g: its first row, or with ordered
 * aggregates the first in their sort order (counted rows first, by value,
 * ties in row order), which is where the group starts once sorted.
 */
uint32_t expected_first_row(const AggCase &c, const RefGroup &g);

/* Aggregate a's state over group g, computed plainly. */
GpuopsAggResult expected_state(const AggCase &c, size_t a, const RefGroup &g);

/*
 * got against want for an aggregate of kind `kind`: exact, but for the
 * float sums, which may differ by `tol` relative (per input row).
 */
std::string compare_state(GpuopsAggKind kind, const GpuopsAggResult &got,
						  const GpuopsAggResult &want, double tol);

} /* namespace dt */

#endif
