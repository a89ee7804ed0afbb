/*
 * agg_ref.cpp
 *    The aggregation tests' reference: groups and states computed the
 *    plain way, a hash map of canonical keys, then each group's rows in
 *    row order.
 */
#include "agg_ref.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <unordered_set>

namespace dt {

namespace {

/* A value's canonical bytes under GROUP BY equality: -0 is 0, every NaN one NaN. */
void
append_canonical(std::string &s, const Column &col, uint64_t i)
{
	if (col.is_null(i))
	{
		s.push_back('N');
		return;
	}
	s.push_back('V');
	if (col.kind == GPUOPS_KEY_FLOAT8)
	{
		double d;

		memcpy(&d, col.at(i), 8);
		if (std::isnan(d))
			d = std::nan("");
		else if (d == 0)
			d = 0.0;
		s.append(reinterpret_cast<const char *>(&d), 8);
	}
	else
		s.append(reinterpret_cast<const char *>(col.at(i)), gpuops_key_raw_width(col.kind));
}

int64_t
int_value(const Column &col, uint64_t i)
{
	switch (col.kind)
	{
		case GPUOPS_KEY_INT4:
			{
				int32_t v;

				memcpy(&v, col.at(i), 4);
				return v;
			}
		default:
			{
				int64_t v;

				memcpy(&v, col.at(i), 8);
				return v;
			}
	}
}

double
float_value(const Column &col, uint64_t i)
{
	double d;

	memcpy(&d, col.at(i), 8);
	return d;
}

/* PostgreSQL's comparison of two values of an input column (int4, int8 or float8). */
int
cmp_input(const Column &col, uint64_t a, uint64_t b)
{
	if (col.kind == GPUOPS_KEY_FLOAT8)
		return pg_float_cmp(float_value(col, a), float_value(col, b));

	int64_t x = int_value(col, a), y = int_value(col, b);

	return x < y ? -1 : (x > y ? 1 : 0);
}

/* The rows of g whose input counts (not NULL), in row order. */
std::vector<uint32_t>
counted_rows(const Column *col, const RefGroup &g)
{
	std::vector<uint32_t> rows;

	for (uint32_t r : g.rows)
		if (!col || !col->is_null(r))
			rows.push_back(r);
	return rows;
}

/* min or max: the best row, the last of equal values (PostgreSQL keeps the newer one). */
uint32_t
best_row(const Column &col, const std::vector<uint32_t> &rows, bool max)
{
	uint32_t best = rows[0];

	for (size_t i = 1; i < rows.size(); i++)
	{
		int c = cmp_input(col, rows[i], best);

		if (max ? c >= 0 : c <= 0)
			best = rows[i];
	}
	return best;
}

/* float8_accum's N, Sx and Sxx: the sum in row order, the squared deviations in two passes. */
void
float_state(const Column &col, const std::vector<uint32_t> &rows, GpuopsAggResult *r)
{
	double sx = 0, sxx = 0;

	for (uint32_t i : rows)
		sx += float_value(col, i);
	for (uint32_t i : rows)
	{
		double dev = float_value(col, i) - sx / rows.size();

		sxx += dev * dev;
	}
	r->sx = sx;
	r->sxx = sxx;
}

/* The percentile's rows among the counted rows in value order (ties in row order). */
void
percentile_rows(const Column &col, std::vector<uint32_t> rows, bool desc, GpuopsAggKind kind,
				double f, GpuopsAggResult *r)
{
	uint64_t n = rows.size(), lo, hi;

	std::stable_sort(rows.begin(), rows.end(), [&](uint32_t a, uint32_t b) {
		int c = cmp_input(col, a, b);

		return desc ? c > 0 : c < 0;
	});
	if (kind == GPUOPS_AGG_PERCENTILE_DISC)
	{
		/* orderedsetaggs.c: the ceil(f * n)-th row, the first when that is 0 */
		int64_t rownum = static_cast<int64_t>(std::ceil(f * n));

		lo = hi = rownum > 1 ? rownum - 1 : 0;
	}
	else
	{
		lo = static_cast<uint64_t>(std::floor(f * (n - 1)));
		hi = static_cast<uint64_t>(std::ceil(f * (n - 1)));
	}
	r->row = rows[lo];
	r->row2 = rows[hi];
}

} /* namespace */

RefGroups
reference_groups(const AggCase &c)
{
	RefGroups ref;
	std::unordered_map<std::string, uint32_t> index;
	std::string key;

	ref.group_of.resize(c.n);
	for (uint64_t i = 0; i < c.n; i++)
	{
		key.clear();
		for (const Column &k : c.keys)
			append_canonical(key, k, i);

		auto it = index.emplace(key, static_cast<uint32_t>(ref.groups.size())).first;

		if (it->second == ref.groups.size())
			ref.groups.emplace_back();
		ref.groups[it->second].rows.push_back(static_cast<uint32_t>(i));
		ref.group_of[i] = it->second;
	}
	return ref;
}

uint32_t
expected_first_row(const AggCase &c, const RefGroup &g)
{
	if (c.order_agg < 0)
		return g.rows[0];

	const Column &col = c.cols[c.aggs[c.order_agg].col];
	std::vector<uint32_t> rows = counted_rows(&col, g);
	uint32_t best;

	if (rows.empty())
		return g.rows[0];
	best = rows[0];
	for (uint32_t r : rows)
	{
		int cmp = cmp_input(col, r, best);

		if (c.order_desc ? cmp > 0 : cmp < 0)
			best = r;
	}
	return best;
}

GpuopsAggResult
expected_state(const AggCase &c, size_t a, const RefGroup &g)
{
	const AggDef &def = c.aggs[a];
	const Column *col = def.col >= 0 ? &c.cols[def.col] : nullptr;
	std::vector<uint32_t> rows = counted_rows(col, g);
	GpuopsAggResult r;

	memset(&r, 0, sizeof(r));
	r.count = rows.size();
	switch (def.kind)
	{
		case GPUOPS_AGG_COUNT:
			break;
		case GPUOPS_AGG_SUM_INT:
		case GPUOPS_AGG_SUMSQ_INT:
			{
				__int128 sum = 0;
				unsigned __int128 sq_lo = 0;
				uint64_t sq_top = 0;

				for (uint32_t i : rows)
				{
					__int128 v = int_value(*col, i);
					unsigned __int128 sq = static_cast<unsigned __int128>(v * v);

					sum += v;
					sq_lo += sq;
					sq_top += sq_lo < sq ? 1 : 0; /* the carry out of 128 bits */
				}
				r.sum_lo = static_cast<uint64_t>(static_cast<unsigned __int128>(sum));
				r.sum_hi = static_cast<int64_t>(sum >> 64);
				if (def.kind == GPUOPS_AGG_SUMSQ_INT)
				{
					r.sum2_lo = static_cast<uint64_t>(sq_lo);
					r.sum2_hi = static_cast<uint64_t>(sq_lo >> 64);
					r.sum2_top = sq_top;
				}
				break;
			}
		case GPUOPS_AGG_MIN:
		case GPUOPS_AGG_MAX:
			r.count = rows.empty() ? 0 : 1;
			if (!rows.empty())
				r.row = best_row(*col, rows, def.kind == GPUOPS_AGG_MAX);
			break;
		case GPUOPS_AGG_FLOAT:
			if (!rows.empty())
				float_state(*col, rows, &r);
			break;
		case GPUOPS_AGG_COUNT_DISTINCT:
			{
				std::unordered_set<std::string> values;
				std::string v;

				for (uint32_t i : rows)
				{
					v.clear();
					append_canonical(v, *col, i);
					values.insert(v);
				}
				r.count = values.size();
				break;
			}
		case GPUOPS_AGG_PERCENTILE_DISC:
		case GPUOPS_AGG_PERCENTILE_CONT:
			if (!rows.empty())
				percentile_rows(*col, rows, c.order_desc != 0, def.kind, def.fraction, &r);
			break;
	}
	return r;
}

namespace {

bool
close_enough(double got, double want, double tol, uint64_t n)
{
	if (std::isnan(got) || std::isnan(want))
		return std::isnan(got) && std::isnan(want);
	return std::fabs(got - want) <= tol * std::max(1.0, std::fabs(want)) * std::max<uint64_t>(n, 1);
}

std::string
field(const char *name, uint64_t got, uint64_t want)
{
	return std::string(name) + " " + std::to_string(got) + ", expected " + std::to_string(want);
}

} /* namespace */

std::string
compare_state(GpuopsAggKind kind, const GpuopsAggResult &got, const GpuopsAggResult &want,
			  double tol)
{
	if (got.count != want.count)
		return field("count", got.count, want.count);
	switch (kind)
	{
		case GPUOPS_AGG_SUMSQ_INT:
			if (got.sum2_lo != want.sum2_lo || got.sum2_hi != want.sum2_hi ||
				got.sum2_top != want.sum2_top)
				return field("sum of squares (low word)", got.sum2_lo, want.sum2_lo);
			/* FALLTHROUGH */
		case GPUOPS_AGG_SUM_INT:
			if (got.sum_lo != want.sum_lo || got.sum_hi != want.sum_hi)
				return field("sum (low word)", got.sum_lo, want.sum_lo) + ", high " +
					std::to_string(got.sum_hi) + " vs " + std::to_string(want.sum_hi);
			break;
		case GPUOPS_AGG_MIN:
		case GPUOPS_AGG_MAX:
			if (got.count && got.row != want.row)
				return field("row", got.row, want.row);
			break;
		case GPUOPS_AGG_PERCENTILE_DISC:
		case GPUOPS_AGG_PERCENTILE_CONT:
			if (got.count && (got.row != want.row || got.row2 != want.row2))
				return field("row", got.row, want.row) + "; " + field("row2", got.row2, want.row2);
			break;
		case GPUOPS_AGG_FLOAT:
			if (!close_enough(got.sx, want.sx, tol, want.count) ||
				!close_enough(got.sxx, want.sxx, tol, want.count) || got.overflow != want.overflow)
				return "sx " + std::to_string(got.sx) + ", sxx " + std::to_string(got.sxx) +
					"; expected " + std::to_string(want.sx) + ", " + std::to_string(want.sxx);
			break;
		default:
			break;
	}
	return "";
}

} /* namespace dt */
