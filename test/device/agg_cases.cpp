/*
 * agg_cases.cpp
 *    The aggregation tests' inputs: each recipe made into key columns,
 *    input columns and aggregates, from the case's seed.
 */
#include "agg_ref.h"

#include <cmath>

namespace dt {

namespace {

/* The aggregates' input columns, by index (AggDef.col). */
enum
{
	COL_X, /* int8 up to 2^62: sums pass 64 bits */
	COL_Y, /* int4, full range */
	COL_F, /* float8: NaNs, -0, infinities, ties */
	COL_G, /* float8, finite */
	COL_D  /* int4 in [-20, 20]: many ties */
};

Column
int_column(GpuopsKeyKind kind, uint64_t n, int64_t lo, int64_t hi, double null_frac, Rng &rng)
{
	Column c;
	uint32_t w = gpuops_key_raw_width(kind);

	c.kind = kind;
	c.raw.resize(n * w + 8);
	if (null_frac > 0)
		c.null.resize(n);
	for (uint64_t i = 0; i < n; i++)
	{
		/* a NULL keeps a value: a backend that read it would count it */
		int64_t v = uniform(rng, lo, hi);

		if (w == 1)
			c.raw[i] = static_cast<uint8_t>(v);
		else if (w == 4)
		{
			int32_t v4 = static_cast<int32_t>(v);

			memcpy(&c.raw[i * 4], &v4, 4);
		}
		else
			memcpy(&c.raw[i * 8], &v, 8);
		if (null_frac > 0)
			c.null[i] = chance(rng, null_frac);
	}
	return c;
}

Column
float_column(uint64_t n, bool special, double null_frac, Rng &rng)
{
	Column c;

	c.kind = GPUOPS_KEY_FLOAT8;
	c.raw.resize(n * 8 + 8);
	if (null_frac > 0)
		c.null.resize(n);
	for (uint64_t i = 0; i < n; i++)
	{
		double d = special ? special_double(rng)
						   : std::uniform_real_distribution<double>(-1000, 1000)(rng);

		memcpy(&c.raw[i * 8], &d, 8);
		if (null_frac > 0)
			c.null[i] = chance(rng, null_frac);
	}
	return c;
}

/* One key in half the rows, else uniform in [0, groups) */
Column
skewed_int8(uint64_t n, int64_t groups, Rng &rng)
{
	Column c = int_column(GPUOPS_KEY_INT8, n, 0, groups - 1, 0, rng);

	for (uint64_t i = 0; i < n; i++)
		if (chance(rng, 0.5))
		{
			int64_t hot = 42;

			memcpy(&c.raw[i * 8], &hot, 8);
		}
	return c;
}

std::vector<AggDef>
aggs_of(AggRecipe::Aggs set)
{
	switch (set)
	{
		case AggRecipe::STANDARD:
			return {{GPUOPS_AGG_COUNT, -1, 0},		  {GPUOPS_AGG_COUNT, COL_X, 0},
					{GPUOPS_AGG_SUM_INT, COL_X, 0},	  {GPUOPS_AGG_SUM_INT, COL_Y, 0},
					{GPUOPS_AGG_SUMSQ_INT, COL_Y, 0}, {GPUOPS_AGG_MIN, COL_Y, 0},
					{GPUOPS_AGG_MAX, COL_Y, 0},		  {GPUOPS_AGG_MIN, COL_F, 0},
					{GPUOPS_AGG_MAX, COL_F, 0},		  {GPUOPS_AGG_FLOAT, COL_G, 0}};
		case AggRecipe::HASHABLE:
			return {{GPUOPS_AGG_COUNT, -1, 0},		{GPUOPS_AGG_COUNT, COL_X, 0},
					{GPUOPS_AGG_SUM_INT, COL_X, 0}, {GPUOPS_AGG_SUMSQ_INT, COL_Y, 0},
					{GPUOPS_AGG_MIN, COL_Y, 0},		{GPUOPS_AGG_MAX, COL_F, 0}};
		case AggRecipe::ORDERED_INT:
			return {{GPUOPS_AGG_COUNT, -1, 0},
					{GPUOPS_AGG_COUNT_DISTINCT, COL_D, 0},
					{GPUOPS_AGG_PERCENTILE_DISC, COL_D, 0.5},
					{GPUOPS_AGG_PERCENTILE_CONT, COL_D, 0.25},
					{GPUOPS_AGG_PERCENTILE_DISC, COL_D, 1.0},
					{GPUOPS_AGG_PERCENTILE_CONT, COL_D, 0.0},
					{GPUOPS_AGG_SUM_INT, COL_X, 0},
					{GPUOPS_AGG_MIN, COL_Y, 0}};
		case AggRecipe::ORDERED_FLOAT:
			return {{GPUOPS_AGG_COUNT_DISTINCT, COL_F, 0},
					{GPUOPS_AGG_PERCENTILE_DISC, COL_F, 0.9},
					{GPUOPS_AGG_PERCENTILE_CONT, COL_F, 0.5},
					{GPUOPS_AGG_COUNT, COL_F, 0}};
	}
	return {};
}

} /* namespace */

const std::vector<AggRecipe> &
agg_recipes()
{
	static const std::vector<AggRecipe> recipes = {
		{"by int4, empty", 0, AggRecipe::BY_INT4, 10, AggRecipe::STANDARD, 0, -1, 64},
		{"by int4, one row", 1, AggRecipe::BY_INT4, 10, AggRecipe::STANDARD, 0, -1, 64},
		{"by int4, all keys NULL (one group), 10000 rows", 10000, AggRecipe::ALL_NULL, 1,
		 AggRecipe::STANDARD, 0, -1, 4096},
		{"by int4, duplicates (100 groups), batches of 10000, 200000 rows", 200000,
		 AggRecipe::BY_INT4, 100, AggRecipe::STANDARD, 0, -1, 10000},
		{"by int8, skew (one key in half the rows), 200000 rows", 200000, AggRecipe::BY_INT8_SKEW,
		 5000, AggRecipe::STANDARD, 0, -1, 65536},
		{"no GROUP BY, 100000 rows", 100000, AggRecipe::NO_KEYS, 1, AggRecipe::STANDARD, 0, -1,
		 65536},
		{"by int4 + int8 + float8 (NaN, -0) + bool with NULLs, 200000 rows", 200000,
		 AggRecipe::MULTI, 10, AggRecipe::STANDARD, 0, -1, 65536},
		{"by int4, hash strategy (100 groups, capacity 256), 200000 rows", 200000,
		 AggRecipe::BY_INT4, 100, AggRecipe::HASHABLE, 256, 1, 65536},
		{"by int4, hash strategy overflow (1000 groups, capacity 64), 200000 rows", 200000,
		 AggRecipe::BY_INT4, 1000, AggRecipe::HASHABLE, 64, 0, 65536},
		{"by int4, count(DISTINCT) and percentiles of int4, 100000 rows", 100000,
		 AggRecipe::BY_INT4, 50, AggRecipe::ORDERED_INT, 0, -1, 65536},
		{"by int4, count(DISTINCT) and percentiles of float8 (NaN, -0) desc, 50000 rows", 50000,
		 AggRecipe::BY_INT4, 20, AggRecipe::ORDERED_FLOAT, 0, -1, 65536},
		{"by int8, large (50000 groups), 1000000 rows", 1000000, AggRecipe::BY_INT8_SKEW, 50000,
		 AggRecipe::STANDARD, 0, -1, 65536},
	};

	return recipes;
}

AggCase
make_agg_case(const AggRecipe &r, uint64_t seed)
{
	AggCase c;
	Rng rng(seed);
	uint64_t n = r.n;

	c.what = r.what;
	c.n = n;
	switch (r.keys)
	{
		case AggRecipe::BY_INT4:
			c.keys.push_back(int_column(GPUOPS_KEY_INT4, n, 0, r.groups - 1, 0.05, rng));
			break;
		case AggRecipe::BY_INT8_SKEW:
			c.keys.push_back(skewed_int8(n, r.groups, rng));
			break;
		case AggRecipe::NO_KEYS:
			break;
		case AggRecipe::MULTI:
			c.keys.push_back(int_column(GPUOPS_KEY_INT4, n, 0, r.groups - 1, 0.05, rng));
			c.keys.push_back(int_column(GPUOPS_KEY_INT8, n, 0, r.groups - 1, 0.05, rng));
			c.keys.push_back(float_column(n, true, 0.05, rng));
			c.keys.push_back(int_column(GPUOPS_KEY_BOOL, n, 0, 1, 0.05, rng));
			break;
		case AggRecipe::ALL_NULL:
			c.keys.push_back(int_column(GPUOPS_KEY_INT4, n, 0, 9, 1.0, rng));
			break;
	}
	c.cols.push_back(int_column(GPUOPS_KEY_INT8, n, -(1ll << 62), 1ll << 62, 0.1, rng));
	c.cols.push_back(int_column(GPUOPS_KEY_INT4, n, INT32_MIN, INT32_MAX, 0.1, rng));
	c.cols.push_back(float_column(n, true, 0.1, rng));
	c.cols.push_back(float_column(n, false, 0.1, rng));
	c.cols.push_back(int_column(GPUOPS_KEY_INT4, n, -20, 20, 0.1, rng));
	c.aggs = aggs_of(r.aggs);
	if (r.aggs == AggRecipe::ORDERED_INT)
		c.order_agg = 1;
	else if (r.aggs == AggRecipe::ORDERED_FLOAT)
	{
		c.order_agg = 0;
		c.order_desc = 1;
	}
	c.hash_capacity = r.hash_capacity;
	c.expect_hashed = r.expect_hashed;
	c.batch_rows = r.batch_rows;
	return c;
}

} /* namespace dt */
