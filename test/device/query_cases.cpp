/*
 * query_cases.cpp
 *    The query block tests' cases: keys of every kind (NULLs, -0 and 0,
 *    NaNs, bytes), no keys, quals and FILTERs, programs that stop in each
 *    place, numeric sums and their escapes, and the sizes that exercise
 *    the CUDA backend's paths (one group over millions of rows, a handful
 *    of groups, a table grown from 16 slots to 200k groups), and
 *    dimensions looked up (direct and open-addressed lookups, a snowflake,
 *    misses and NULL keys, repeated keys, keys across all of int64).
 */
#include <algorithm>
#include <set>

#include "query_programs.h"

namespace dt {
namespace {

/* A case of n rows, with its generator seeded by its title. */
QCase
new_case(const std::string &what, uint64_t n, uint32_t batch_rows = 65536)
{
	QCase c;

	c.what = what;
	c.n = n;
	c.batch_rows = batch_rows;
	return c;
}

Rng
rng_for(const QCase &c)
{
	return Rng(std::hash<std::string>()(c.what) & 0xffffffff);
}

int
int_col(QCase &c, Rng &rng, int64_t lo, int64_t hi, double pnull)
{
	int col = c.add_col();

	for (uint64_t i = 0; i < c.n; i++)
		c.cols[col].w[i] = static_cast<uint64_t>(uniform(rng, lo, hi));
	if (pnull > 0)
	{
		c.cols[col].null.assign(c.n, 0);
		for (uint64_t i = 0; i < c.n; i++)
			c.cols[col].null[i] = chance(rng, pnull);
	}
	return col;
}

void
add_nulls(QCase &c, int col, Rng &rng, double pnull)
{
	c.cols[col].null.assign(c.n, 0);
	for (uint64_t i = 0; i < c.n; i++)
		c.cols[col].null[i] = chance(rng, pnull);
}

/* ordinary floats (no overflow in any order of addition); some infinities with inf */
int
float_col(QCase &c, Rng &rng, double pnull, bool specials)
{
	int col = c.add_col();

	for (uint64_t i = 0; i < c.n; i++)
		c.cols[col].w[i] = double_bits(
			specials ? special_double(rng)
					 : static_cast<double>(uniform(rng, -1000000, 1000000)) / 64);
	if (pnull > 0)
		add_nulls(c, col, rng, pnull);
	return col;
}

/* a bytes column of `distinct` 16-byte values (some differing only in their second word) */
int
bytes_col(QCase &c, Rng &rng, int distinct, double pnull)
{
	int col = c.add_col(true);

	for (uint64_t i = 0; i < c.n; i++)
	{
		uint64_t v = static_cast<uint64_t>(uniform(rng, 0, distinct - 1));

		c.cols[col].w[2 * i] = 0x4142434445464700ull | (v / 2);
		c.cols[col].w[2 * i + 1] = v % 2 ? 0x3132000000000000ull : 0;
	}
	if (pnull > 0)
		add_nulls(c, col, rng, pnull);
	return col;
}

/* numeric words: mantissas in [-mmax, mmax] at scales [0, smax] */
int
num_col(QCase &c, Rng &rng, int64_t mmax, int smax, double pnull)
{
	int col = c.add_col();

	for (uint64_t i = 0; i < c.n; i++)
		c.cols[col].w[i] = num_word(uniform(rng, -mmax, mmax),
									static_cast<int>(uniform(rng, 0, smax)));
	if (pnull > 0)
		add_nulls(c, col, rng, pnull);
	return col;
}

QKey
key_col(GpuopsQueryKeyKind kind, int col)
{
	QKey k;

	k.kind = kind;
	k.col = col;
	return k;
}

QKey
key_prog(GpuopsQueryKeyKind kind, const QValue &v)
{
	QKey k;

	k.kind = kind;
	k.prog = v.prog;
	k.fn = v.fn;
	return k;
}

QAgg
agg(GpuopsQueryAggKind kind, GpuopsExprType type, int col, int scale = 0)
{
	QAgg g;

	g.kind = kind;
	g.type = type;
	g.col = col;
	g.scale = scale;
	return g;
}

QAgg
count_star()
{
	return agg(GPUOPS_QAGG_COUNT, GPUOPS_ET_INT, -1);
}

QAgg
filtered(QAgg g, const QPred &f)
{
	g.filter = f.prog;
	g.filter_fn = f.fn;
	return g;
}

QAgg
agg_prog(GpuopsQueryAggKind kind, const QValue &v)
{
	QAgg g = agg(kind, GPUOPS_ET_INT, -1);

	g.arg = v.prog;
	g.arg_fn = v.fn;
	return g;
}

/* count(*), count(x), sum, min and max of int8 x, a float sum, float min/max */
void
standard_aggs(QCase &c, int ints, int floats, int specials)
{
	c.aggs.push_back(count_star());
	c.aggs.push_back(agg(GPUOPS_QAGG_COUNT, GPUOPS_ET_INT, ints));
	c.aggs.push_back(agg(GPUOPS_QAGG_SUM_INT, GPUOPS_ET_INT, ints));
	c.aggs.push_back(agg(GPUOPS_QAGG_MIN, GPUOPS_ET_INT, ints));
	c.aggs.push_back(agg(GPUOPS_QAGG_MAX, GPUOPS_ET_INT, ints));
	c.aggs.push_back(agg(GPUOPS_QAGG_SUM_FLOAT, GPUOPS_ET_FLOAT, floats));
	c.aggs.push_back(agg(GPUOPS_QAGG_MIN, GPUOPS_ET_FLOAT, specials));
	c.aggs.push_back(agg(GPUOPS_QAGG_MAX, GPUOPS_ET_FLOAT, specials));
	c.aggs.push_back(agg(GPUOPS_QAGG_COUNT, GPUOPS_ET_FLOAT, specials));
}

QCase
int_keys()
{
	QCase c = new_case("query int key: counts, 128-bit sums, min/max, NULL keys", 300000);
	Rng rng = rng_for(c);
	int k = int_col(c, rng, 0, 999, 0.05);
	int x = int_col(c, rng, -(1LL << 62), 1LL << 62, 0.1);
	int f = float_col(c, rng, 0.05, false);
	int s = float_col(c, rng, 0.1, true);

	c.keys.push_back(key_col(GPUOPS_QKEY_INT, k));
	standard_aggs(c, x, f, s);
	return c;
}

QCase
float_keys()
{
	static const uint64_t values[] = {
		0x0000000000000000ull, 0x8000000000000000ull, /* 0, -0 */
		0x7ff8000000000000ull, 0xfff8000000000000ull, /* NaN, -NaN */
		0x7ff0000000000123ull, 0x7ff8000000000001ull, /* NaN payloads */
		0x3ff8000000000000ull, 0xbff8000000000000ull, /* 1.5, -1.5 */
		0x7ff0000000000000ull, 0xfff0000000000000ull, /* inf, -inf */
	};
	QCase c = new_case("query float keys: -0 = 0, every NaN one group, NULLs", 100000, 30000);
	Rng rng = rng_for(c);
	int k = c.add_col();
	int x = int_col(c, rng, -1000, 1000, 0);

	for (uint64_t i = 0; i < c.n; i++)
		c.cols[k].w[i] = values[uniform(rng, 0, 9)];
	add_nulls(c, k, rng, 0.05);
	c.keys.push_back(key_col(GPUOPS_QKEY_FLOAT, k));
	c.aggs.push_back(count_star());
	c.aggs.push_back(agg(GPUOPS_QAGG_SUM_INT, GPUOPS_ET_INT, x));
	c.aggs.push_back(agg(GPUOPS_QAGG_MIN, GPUOPS_ET_FLOAT, k));
	c.aggs.push_back(agg(GPUOPS_QAGG_MAX, GPUOPS_ET_FLOAT, k));
	c.expect_groups = 7;
	return c;
}

QCase
bytes_keys()
{
	QCase c = new_case("query bytes16 and int keys with NULLs", 200000);
	Rng rng = rng_for(c);
	int b = bytes_col(c, rng, 40, 0.05);
	int k = int_col(c, rng, 0, 2, 0.05);
	int x = int_col(c, rng, -1000000, 1000000, 0.02);

	c.keys.push_back(key_col(GPUOPS_QKEY_BYTES16, b));
	c.keys.push_back(key_col(GPUOPS_QKEY_INT, k));
	c.aggs.push_back(count_star());
	c.aggs.push_back(agg(GPUOPS_QAGG_SUM_INT, GPUOPS_ET_INT, x));
	c.aggs.push_back(agg(GPUOPS_QAGG_MAX, GPUOPS_ET_INT, x));
	return c;
}

/* 16 keys: every kind, or every one a bytes key (33 key words) */
QCase
sixteen_keys(bool all_bytes)
{
	QCase c = new_case(all_bytes ? "query 16 bytes keys (33 key words)"
								 : "query 16 keys of every kind",
					   60000, 16384);
	Rng rng = rng_for(c);

	for (int k = 0; k < 16; k++)
	{
		int kind = all_bytes ? 2 : k % 3;
		int col = kind == 2 ? bytes_col(c, rng, 2, 0.2) : int_col(c, rng, 0, 1, 0.2);

		if (kind == 1)
			for (uint64_t i = 0; i < c.n; i++)
				c.cols[col].w[i] = double_bits(c.cols[col].w[i] ? -0.0 : 2.5);
		c.keys.push_back(key_col(kind == 0		 ? GPUOPS_QKEY_INT
									 : kind == 1 ? GPUOPS_QKEY_FLOAT
												 : GPUOPS_QKEY_BYTES16,
								 col));
	}
	c.aggs.push_back(count_star());
	return c;
}

QCase
no_keys(const std::string &what, uint64_t n, int64_t qual_below, uint32_t batch)
{
	QCase c = new_case(what, n, batch);
	Rng rng = rng_for(c);
	int q = int_col(c, rng, 0, 999, 0.01);
	int x = int_col(c, rng, -(1LL << 62), 1LL << 62, 0.1);
	int f = float_col(c, rng, 0.05, false);
	int s = float_col(c, rng, 0.1, true);
	QPred p = pred_range(c, q, qual_below, x, -(1LL << 61));

	c.qual = p.prog;
	c.qual_fn = p.fn;
	standard_aggs(c, x, f, s);
	c.expect_groups = qual_below > 0 && n > 0 ? 1 : 0;
	return c;
}

QCase
no_rows(bool keys)
{
	QCase c = new_case(keys ? "query no rows, keys" : "query no rows, no keys", 0);
	Rng rng = rng_for(c);
	int x = int_col(c, rng, 0, 9, 0);

	if (keys)
		c.keys.push_back(key_col(GPUOPS_QKEY_INT, x));
	c.aggs.push_back(count_star());
	c.aggs.push_back(agg(GPUOPS_QAGG_SUM_INT, GPUOPS_ET_INT, x));
	c.expect_groups = 0;
	return c;
}

QCase
qual_nulls()
{
	QCase c = new_case("query qual over NULLs, int key", 300000);
	Rng rng = rng_for(c);
	int k = int_col(c, rng, 0, 499, 0.05);
	int a = int_col(c, rng, 0, 999, 0.1);
	int x = int_col(c, rng, -1000, 1000, 0.1);
	int f = float_col(c, rng, 0.05, false);
	QPred p = pred_range(c, a, 600, x, -500);

	c.qual = p.prog;
	c.qual_fn = p.fn;
	c.keys.push_back(key_col(GPUOPS_QKEY_INT, k));
	standard_aggs(c, x, f, f);
	return c;
}

/* a divisor column: nonzero, but 0 in a few rows from row `from` on */
int
divisor_col(QCase &c, Rng &rng, uint64_t from)
{
	int d = int_col(c, rng, 1, 50, 0.05);

	for (uint64_t i = from; i < c.n; i++)
		if (chance(rng, 0.0005))
			c.cols[d].w[i] = 0;
	return d;
}

QCase
recheck_qual()
{
	QCase c = new_case("query qual stops: the least row over batches", 400000);
	Rng rng = rng_for(c);
	int a = int_col(c, rng, -100, 1000, 0.05);
	int d = divisor_col(c, rng, 150000);
	QPred p = pred_div_positive(c, a, d);

	c.qual = p.prog;
	c.qual_fn = p.fn;
	c.keys.push_back(key_col(GPUOPS_QKEY_INT, d));
	c.aggs.push_back(count_star());
	c.expect_escape = GPUOPS_QESC_QUAL;
	return c;
}

QCase
recheck_key()
{
	QCase c = new_case("query key program stops (int4 overflow)", 300000);
	Rng rng = rng_for(c);
	int k = int_col(c, rng, 0, 20, 0.05);
	int a = int_col(c, rng, -1000, 1000, 0.05);
	int b = int_col(c, rng, -1000, 1000, 0.05);

	for (uint64_t i = 170000; i < c.n; i++)
		if (chance(rng, 0.001))
			c.cols[b].w[i] = static_cast<uint64_t>(int64_t{INT32_MAX});
	c.keys.push_back(key_col(GPUOPS_QKEY_INT, k));
	c.keys.push_back(key_prog(GPUOPS_QKEY_INT, value_add4(c, a, b)));
	c.aggs.push_back(count_star());
	c.expect_escape = GPUOPS_QESC_KEY;
	return c;
}

QCase
recheck_filter()
{
	QCase c = new_case("query FILTER stops, behind a qual", 300000);
	Rng rng = rng_for(c);
	int k = int_col(c, rng, 0, 30, 0);
	int a = int_col(c, rng, -100, 1000, 0.05);
	int d = divisor_col(c, rng, 100000);
	QPred q = pred_cmp(c, a, GPUOPS_CMP_LT, 500);

	c.qual = q.prog;
	c.qual_fn = q.fn;
	c.keys.push_back(key_col(GPUOPS_QKEY_INT, k));
	c.aggs.push_back(count_star());
	c.aggs.push_back(agg(GPUOPS_QAGG_SUM_INT, GPUOPS_ET_INT, a));
	c.aggs.push_back(filtered(count_star(), pred_div_positive(c, a, d)));
	c.expect_escape = GPUOPS_QESC_FILTER;
	return c;
}

QCase
recheck_arg()
{
	QCase c = new_case("query argument program stops (int8 overflow)", 300000);
	Rng rng = rng_for(c);
	int k = int_col(c, rng, 0, 30, 0);
	int a = int_col(c, rng, -1000000, 1000000, 0.05);
	int b = int_col(c, rng, -1000000, 1000000, 0.05);

	for (uint64_t i = 200000; i < c.n; i++)
		if (chance(rng, 0.0005))
			c.cols[a].w[i] = static_cast<uint64_t>(INT64_MAX / 3);
	c.keys.push_back(key_col(GPUOPS_QKEY_INT, k));
	c.aggs.push_back(count_star());
	c.aggs.push_back(agg_prog(GPUOPS_QAGG_SUM_INT, value_mul8(c, a, b)));
	c.expect_escape = GPUOPS_QESC_ARG;
	return c;
}

QCase
programs_no_escape()
{
	QCase c = new_case("query key and argument programs, FILTER", 250000);
	Rng rng = rng_for(c);
	int a = int_col(c, rng, -5000, 5000, 0.05);
	int b = int_col(c, rng, -1000000, 1000000, 0.05);
	int f = c.add_col();
	static const double zs[] = {0.0, -0.0, 1.0, -2.0, NAN};

	for (uint64_t i = 0; i < c.n; i++)
		c.cols[f].w[i] = double_bits(zs[uniform(rng, 0, 4)]);
	add_nulls(c, f, rng, 0.05);
	c.keys.push_back(key_prog(GPUOPS_QKEY_INT, value_div_const(c, a, 100)));
	c.keys.push_back(key_prog(GPUOPS_QKEY_FLOAT, value_neg_float(c, f)));
	c.aggs.push_back(count_star());
	c.aggs.push_back(filtered(agg_prog(GPUOPS_QAGG_SUM_INT, value_mul8(c, a, b)),
							  pred_cmp(c, a, GPUOPS_CMP_GT, 100)));
	c.aggs.push_back(
		filtered(agg(GPUOPS_QAGG_MIN, GPUOPS_ET_INT, b), pred_cmp(c, b, GPUOPS_CMP_GE, 0)));
	c.aggs.push_back(agg(GPUOPS_QAGG_MAX, GPUOPS_ET_FLOAT, f));
	return c;
}

/*
 * Numeric sums at scales above the values': exact, and the bound 2^80
 * itself: 120892581961462917 x 10^7 < 2^80 <= 120892581961462918 x 10^7.
 * `bad` puts one word that escapes into the last column's rows from
 * 170000 on: 1 unknown, 2 a scale above S, 3 2^80 in magnitude.
 */
QCase
numerics(const std::string &what, int bad)
{
	QCase c = new_case(what, 250000);
	Rng rng = rng_for(c);
	int k = int_col(c, rng, 0, 99, 0.02);
	int x = num_col(c, rng, 1LL << 50, 4, 0.1);
	int y = c.add_col();

	for (uint64_t i = 0; i < c.n; i++)
		c.cols[y].w[i] = num_word(uniform(rng, 0, 1) ? 120892581961462917LL : -120892581961462917LL,
								  0);
	if (bad)
		for (uint64_t i = 170000; i < c.n; i += 40000)
			c.cols[y].w[i] = bad == 1 ? kNumUnknownWord
				: bad == 2			  ? num_word(5, 8)
									  : num_word(-120892581961462918LL, 0);
	c.keys.push_back(key_col(GPUOPS_QKEY_INT, k));
	c.aggs.push_back(agg(GPUOPS_QAGG_COUNT, GPUOPS_ET_NUM, y)); /* counting never escapes */
	c.aggs.push_back(agg(GPUOPS_QAGG_SUM_NUM, GPUOPS_ET_NUM, x, 4));
	c.aggs.push_back(agg(GPUOPS_QAGG_SUM_NUM, GPUOPS_ET_NUM, x, 6));
	c.aggs.push_back(agg(GPUOPS_QAGG_SUM_NUM, GPUOPS_ET_NUM, y, 7));
	c.expect_escape = bad ? GPUOPS_QESC_ARG : GPUOPS_QESC_NONE;
	return c;
}

QCase
filters_and_counts()
{
	QCase c = new_case("query FILTERs, count(*) against count(x)", 300000);
	Rng rng = rng_for(c);
	int k = int_col(c, rng, 0, 63, 0.05);
	int a = int_col(c, rng, 0, 999, 0.1);
	int x = int_col(c, rng, -1000, 1000, 0.3);
	int f = float_col(c, rng, 0.2, false);

	c.keys.push_back(key_col(GPUOPS_QKEY_INT, k));
	c.aggs.push_back(count_star());
	c.aggs.push_back(agg(GPUOPS_QAGG_COUNT, GPUOPS_ET_INT, x));
	c.aggs.push_back(filtered(count_star(), pred_cmp(c, a, GPUOPS_CMP_LT, 500)));
	c.aggs.push_back(
		filtered(agg(GPUOPS_QAGG_COUNT, GPUOPS_ET_INT, x), pred_cmp(c, a, GPUOPS_CMP_GE, 300)));
	c.aggs.push_back(
		filtered(agg(GPUOPS_QAGG_SUM_INT, GPUOPS_ET_INT, x), pred_cmp(c, a, GPUOPS_CMP_LT, 500)));
	c.aggs.push_back(
		filtered(agg(GPUOPS_QAGG_SUM_FLOAT, GPUOPS_ET_FLOAT, f), pred_cmp(c, x, GPUOPS_CMP_GT, 0)));
	c.aggs.push_back(
		filtered(agg(GPUOPS_QAGG_MAX, GPUOPS_ET_FLOAT, f), pred_cmp(c, a, GPUOPS_CMP_EQ, 7)));
	return c;
}

QCase
five_batches()
{
	QCase c = new_case("query five batches, the same groups in each", 200000, 40000);
	Rng rng = rng_for(c);
	int k = int_col(c, rng, 0, 49, 0.02);
	int b = bytes_col(c, rng, 4, 0.02);
	int x = int_col(c, rng, -(1LL << 40), 1LL << 40, 0.05);

	c.keys.push_back(key_col(GPUOPS_QKEY_BYTES16, b));
	c.keys.push_back(key_col(GPUOPS_QKEY_INT, k));
	c.aggs.push_back(count_star());
	c.aggs.push_back(agg(GPUOPS_QAGG_SUM_INT, GPUOPS_ET_INT, x));
	c.aggs.push_back(agg(GPUOPS_QAGG_MIN, GPUOPS_ET_INT, x));
	return c;
}

QCase
many_groups()
{
	QCase c = new_case("query 200k groups, the table grown from 16", 1000000, 131072);
	Rng rng = rng_for(c);
	int k = int_col(c, rng, 0, 199999, 0.001);
	int x = int_col(c, rng, -1000000, 1000000, 0.05);
	int f = float_col(c, rng, 0.05, false);

	c.group_capacity = 16;
	c.keys.push_back(key_col(GPUOPS_QKEY_INT, k));
	c.aggs.push_back(count_star());
	c.aggs.push_back(agg(GPUOPS_QAGG_SUM_INT, GPUOPS_ET_INT, x));
	c.aggs.push_back(agg(GPUOPS_QAGG_MIN, GPUOPS_ET_INT, x));
	c.aggs.push_back(agg(GPUOPS_QAGG_MAX, GPUOPS_ET_INT, x));
	c.aggs.push_back(agg(GPUOPS_QAGG_SUM_FLOAT, GPUOPS_ET_FLOAT, f));
	return c;
}

QCase
one_group_5m()
{
	QCase c = new_case("query one group x 5M rows", 5000000, 1u << 20);
	Rng rng = rng_for(c);
	int k = c.add_col();
	int x = int_col(c, rng, -(1LL << 62), 1LL << 62, 0.05);
	int f = float_col(c, rng, 0.05, false);
	int s = float_col(c, rng, 0.05, true);

	for (uint64_t i = 0; i < c.n; i++)
		c.cols[k].w[i] = 7;
	c.keys.push_back(key_col(GPUOPS_QKEY_INT, k));
	standard_aggs(c, x, f, s);
	c.expect_groups = 1;
	return c;
}

/* TPC-H Q1's shape: two one-letter keys, four groups, numeric and float sums */
QCase
four_groups()
{
	QCase c = new_case("query four groups x 2M rows (Q1 shape)", 2000000, 1u << 19);
	Rng rng = rng_for(c);
	int b1 = bytes_col(c, rng, 2, 0);
	int b2 = bytes_col(c, rng, 2, 0);
	int q = num_col(c, rng, 5000, 0, 0);
	int p = num_col(c, rng, 10000000, 2, 0);
	int d = float_col(c, rng, 0, false);
	int dt = int_col(c, rng, 8000, 10500, 0);
	QPred qual = pred_cmp(c, dt, GPUOPS_CMP_LT, 10400);

	c.qual = qual.prog;
	c.qual_fn = qual.fn;
	c.keys.push_back(key_col(GPUOPS_QKEY_BYTES16, b1));
	c.keys.push_back(key_col(GPUOPS_QKEY_BYTES16, b2));
	c.aggs.push_back(agg(GPUOPS_QAGG_SUM_NUM, GPUOPS_ET_NUM, q, 2));
	c.aggs.push_back(agg(GPUOPS_QAGG_SUM_NUM, GPUOPS_ET_NUM, p, 4));
	c.aggs.push_back(agg(GPUOPS_QAGG_SUM_FLOAT, GPUOPS_ET_FLOAT, d));
	c.aggs.push_back(agg(GPUOPS_QAGG_MIN, GPUOPS_ET_INT, dt));
	c.aggs.push_back(agg(GPUOPS_QAGG_MAX, GPUOPS_ET_INT, dt));
	c.aggs.push_back(count_star());
	c.expect_groups = 4;
	return c;
}

/* naggs aggregates of every kind over few groups: wide states */
QCase
wide_states(int naggs)
{
	QCase c = new_case("query " + std::to_string(naggs) + " aggregates", 120000, 50000);
	Rng rng = rng_for(c);
	int k = int_col(c, rng, 0, 19, 0.05);
	int x = int_col(c, rng, -(1LL << 62), 1LL << 62, 0.1);
	int f = float_col(c, rng, 0.1, true);
	int g = float_col(c, rng, 0.1, false);
	int n = num_col(c, rng, 1LL << 40, 3, 0.1);

	c.keys.push_back(key_col(GPUOPS_QKEY_INT, k));
	for (int a = 0; a < naggs; a++)
		switch (a % 7)
		{
			case 0:
				c.aggs.push_back(agg(GPUOPS_QAGG_SUM_INT, GPUOPS_ET_INT, x));
				break;
			case 1:
				c.aggs.push_back(agg(GPUOPS_QAGG_SUM_NUM, GPUOPS_ET_NUM, n, 3 + a % 5));
				break;
			case 2:
				c.aggs.push_back(agg(GPUOPS_QAGG_SUM_FLOAT, GPUOPS_ET_FLOAT, g));
				break;
			case 3:
				c.aggs.push_back(
					agg(naggs > 40 ? GPUOPS_QAGG_SUM_INT : GPUOPS_QAGG_MIN, GPUOPS_ET_INT, x));
				break;
			case 4:
				c.aggs.push_back(agg(GPUOPS_QAGG_MAX, GPUOPS_ET_FLOAT, f));
				break;
			case 5:
				c.aggs.push_back(agg(GPUOPS_QAGG_MIN, GPUOPS_ET_FLOAT, f));
				break;
			default:
				c.aggs.push_back(agg(GPUOPS_QAGG_COUNT, GPUOPS_ET_INT, x));
				break;
		}
	return c;
}

/*
 * A dimension of the given distinct keys (shuffled), looked up by key_col,
 * with `npay` int payload columns in [0, pay_hi) and a few NULLs.
 */
QDim
dimension(Rng &rng, int key_col, std::vector<uint64_t> keys, int npay, int64_t pay_hi)
{
	QDim d;

	std::shuffle(keys.begin(), keys.end(), rng);
	d.key_col = key_col;
	d.keys = std::move(keys);
	for (int p = 0; p < npay; p++)
	{
		QCol col;

		col.w.resize(d.keys.size());
		col.null.assign(d.keys.size(), 0);
		for (size_t i = 0; i < d.keys.size(); i++)
		{
			col.w[i] = static_cast<uint64_t>(uniform(rng, 0, pay_hi - 1));
			col.null[i] = chance(rng, 0.03);
		}
		d.pay.push_back(std::move(col));
	}
	return d;
}

/* n distinct keys: spread (open addressing) or k * step from 1 (direct when dense) */
std::vector<uint64_t>
dim_keys(Rng &rng, size_t n, bool spread, int64_t step = 1)
{
	std::vector<uint64_t> keys;
	std::set<uint64_t> seen;

	while (keys.size() < n)
	{
		uint64_t k = spread ? static_cast<uint64_t>(uniform(rng, INT64_MIN / 2, INT64_MAX / 2))
							: static_cast<uint64_t>(1 + static_cast<int64_t>(keys.size()) * step);

		if (seen.insert(k).second)
			keys.push_back(k);
	}
	return keys;
}

/* a batch column of keys: one of `from` (a share `hit`), else a miss, some NULL */
int
lookup_col(QCase &c, Rng &rng, const std::vector<uint64_t> &from, double hit)
{
	int col = c.add_col();

	c.cols[col].null.assign(c.n, 0);
	for (uint64_t i = 0; i < c.n; i++)
	{
		c.cols[col].w[i] = chance(rng, hit)
			? from[static_cast<size_t>(uniform(rng, 0, static_cast<int64_t>(from.size()) - 1))]
			: static_cast<uint64_t>(uniform(rng, INT64_MIN / 2, INT64_MAX / 2)) | 1;
		c.cols[col].null[i] = chance(rng, 0.02);
	}
	return col;
}

/*
 * A snowflake: the batch's key into a direct dimension (5000 dense keys),
 * whose payload column 2 is the key into an open-addressed one (400 keys
 * over all of int64); grouped by the second's payload (column 4), or with
 * by_first by the first's (column 3).
 */
QCase
snowflake(bool by_first)
{
	QCase c = new_case(std::string("query lookups: a snowflake, direct then open addressing") +
						   (by_first ? ", by the first's payload" : ""),
					   300000);
	Rng rng = rng_for(c);
	std::vector<uint64_t> k0 = dim_keys(rng, 5000, false), k1 = dim_keys(rng, 400, true);
	int key = lookup_col(c, rng, k0, 0.95);
	int x = int_col(c, rng, -1000, 1000, 0.05);

	c.dims.push_back(dimension(rng, key, k0, 2, 1000));
	/* the first's column 2: the second's keys, some missing */
	for (size_t i = 0; i < k0.size(); i++)
		c.dims[0].pay[0].w[i] = chance(rng, 0.9) ? k1[i % k1.size()] : static_cast<uint64_t>(-7);
	c.dims.push_back(dimension(rng, 2, k1, 1, 20));
	c.keys.push_back(key_col(GPUOPS_QKEY_INT, by_first ? 3 : 4));
	c.aggs.push_back(count_star());
	c.aggs.push_back(agg(GPUOPS_QAGG_SUM_INT, GPUOPS_ET_INT, x));
	c.aggs.push_back(agg(GPUOPS_QAGG_MIN, GPUOPS_ET_INT, 3));
	c.aggs.push_back(agg(GPUOPS_QAGG_MAX, GPUOPS_ET_INT, 4));
	c.aggs.push_back(agg(GPUOPS_QAGG_COUNT, GPUOPS_ET_INT, 3));
	c.group_capacity = 64;
	return c;
}

/* One large dimension, 2M keys 3 apart (direct) or spread (open addressing), 1M rows. */
QCase
large_dimension(bool spread)
{
	QCase c = new_case(std::string("query lookups: 2M keys, ") +
						   (spread ? "open addressing" : "direct, 3 apart") + ", 1M rows",
					   1000000, 1u << 18);
	Rng rng = rng_for(c);
	std::vector<uint64_t> keys = dim_keys(rng, 2000000, spread, 3);
	int key = lookup_col(c, rng, keys, 0.8);
	int x = int_col(c, rng, 0, 1 << 20, 0);

	c.dims.push_back(dimension(rng, key, keys, 1, 5000));
	c.keys.push_back(key_col(GPUOPS_QKEY_INT, 2));
	c.aggs.push_back(count_star());
	c.aggs.push_back(agg(GPUOPS_QAGG_SUM_INT, GPUOPS_ET_INT, x));
	c.group_capacity = 8192;
	return c;
}

/*
 * Semi and anti dimensions: an inner one (2000 dense keys) whose payload
 * column 2 is the key of an anti one (keys of 0..99, each up to 5 times),
 * and a semi one on a batch column (3000 keys, each up to 4 times, dense
 * or over all of int64); grouped by the inner one's payload column 3.
 */
QCase
semi_anti(bool spread)
{
	QCase c = new_case(std::string("query lookups: semi and anti, repeated keys, ") +
						   (spread ? "open addressing" : "direct"),
					   400000);
	Rng rng = rng_for(c);
	std::vector<uint64_t> k0 = dim_keys(rng, 2000, false), ks = dim_keys(rng, 3000, spread);
	int key0 = lookup_col(c, rng, k0, 0.95);
	int keys = lookup_col(c, rng, ks, 0.7);
	int x = int_col(c, rng, -1000, 1000, 0.05);
	QDim anti, semi;

	c.dims.push_back(dimension(rng, key0, k0, 2, 120));
	for (int i = 0; i < 160; i++)
		anti.keys.push_back(static_cast<uint64_t>(uniform(rng, 0, 99)));
	anti.kind = GPUOPS_QDIM_ANTI;
	anti.key_col = 3; /* the inner one's first payload column (NULL: kept) */
	c.dims.push_back(anti);
	/* a third of the keys left out, the rest up to 4 times, shuffled */
	for (size_t i = 0; i < ks.size(); i++)
		for (int r = uniform(rng, 0, 4); i % 3 != 0 && r >= 0; r--)
			semi.keys.push_back(ks[i]);
	std::shuffle(semi.keys.begin(), semi.keys.end(), rng);
	semi.kind = GPUOPS_QDIM_SEMI;
	semi.key_col = keys;
	c.dims.push_back(semi);
	c.keys.push_back(key_col(GPUOPS_QKEY_INT, 4));
	c.aggs.push_back(count_star());
	c.aggs.push_back(agg(GPUOPS_QAGG_SUM_INT, GPUOPS_ET_INT, x));
	c.aggs.push_back(agg(GPUOPS_QAGG_MIN, GPUOPS_ET_INT, 3));
	c.group_capacity = 64;
	return c;
}

/*
 * Keys the lookup cannot take: one repeated (direct or open addressing;
 * in the second of two dimensions, which escapes with index 1), or
 * keys at both ends of int64 (the twin takes them; the CUDA backend has
 * no free slot mark and escapes), or none at all (no row joins).
 */
QCase
odd_keys(int which)
{
	static const char *what[] = {"a repeated key (direct)", "a repeated key (open addressing)",
								 "keys at both ends of int64", "an empty dimension"};
	QCase c = new_case(std::string("query lookups: ") + what[which], 50000);
	Rng rng = rng_for(c);
	std::vector<uint64_t> k0 = dim_keys(rng, 300, false), k1 = dim_keys(rng, 3000, which != 0);
	int key0 = lookup_col(c, rng, k0, 0.9);
	int key1 = lookup_col(c, rng, k1, 0.9);

	if (which <= 1)
		k1.push_back(k1[1234]);
	if (which == 2)
	{
		k1[10] = static_cast<uint64_t>(INT64_MIN);
		k1[20] = static_cast<uint64_t>(INT64_MAX);
		for (uint64_t i = 0; i < c.n; i += 7)
			c.cols[key1].w[i] = k1[(i / 7) % 2 == 0 ? 10 : 20];
	}
	if (which == 3)
		k1.clear();
	c.dims.push_back(dimension(rng, key0, k0, 1, 50));
	c.dims.push_back(dimension(rng, key1, k1, 1, 50));
	c.keys.push_back(key_col(GPUOPS_QKEY_INT, 2));
	c.aggs.push_back(count_star());
	c.aggs.push_back(agg(GPUOPS_QAGG_SUM_INT, GPUOPS_ET_INT, 3));
	c.expect_escape = which <= 1 ? GPUOPS_QESC_DIM_KEY : GPUOPS_QESC_NONE;
	c.cuda_escape = which == 2 ? GPUOPS_QESC_DIM_RANGE : GPUOPS_QESC_NONE;
	if (which == 3)
		c.expect_groups = 0;
	return c;
}

} /* namespace */

std::vector<std::function<QCase()>>
query_cases()
{
	return {
		int_keys,
		float_keys,
		bytes_keys,
		[] { return sixteen_keys(false); },
		[] { return sixteen_keys(true); },
		[] { return no_keys("query no keys, a qual", 1000000, 500, 65536); },
		[] { return no_keys("query no keys, no row passes", 100000, -5, 65536); },
		[] { return no_keys("query no keys x 3M rows", 3000000, 900, 1u << 20); },
		[] { return no_rows(true); },
		[] { return no_rows(false); },
		qual_nulls,
		recheck_qual,
		recheck_key,
		recheck_filter,
		recheck_arg,
		programs_no_escape,
		[] { return numerics("query numeric sums at scale, up to 2^80", 0); },
		[] { return numerics("query numeric sum escapes: unknown word", 1); },
		[] { return numerics("query numeric sum escapes: scale above S", 2); },
		[] { return numerics("query numeric sum escapes: 2^80", 3); },
		filters_and_counts,
		five_batches,
		many_groups,
		one_group_5m,
		four_groups,
		[] { return wide_states(40); },
		[] { return wide_states(64); },
		[] { return snowflake(false); },
		[] { return snowflake(true); },
		[] { return large_dimension(false); },
		[] { return large_dimension(true); },
		[] { return semi_anti(false); },
		[] { return semi_anti(true); },
		[] { return odd_keys(0); },
		[] { return odd_keys(1); },
		[] { return odd_keys(2); },
		[] { return odd_keys(3); },
	};
}

} /* namespace dt */
