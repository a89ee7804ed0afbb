/*
 * query_ref.cpp
 *    The query block tests' reference (a std::map from each row's packed
 *    key, rows in row order, sums in __int128, the numeric scaling done by
 *    repeated multiplication), the backend protocol, and the comparison of
 *    two answers.
 */
#include "query_ref.h"

#include <algorithm>
#include <cmath>

namespace dt {
namespace {

constexpr uint64_t kCanonicalNaN = 0x7ff8000000000000ull;

/* A float key's word: every NaN one NaN, -0 made 0 (the test's own reading of the rule). */
uint64_t
canonical_float(uint64_t w)
{
	double d = as_double(w);

	if (std::isnan(d))
		return kCanonicalNaN;
	return d == 0.0 ? 0 : w;
}

/* MIN/MAX of floats: PostgreSQL's order, and -0 below 0 */
bool
float_less(uint64_t a, uint64_t b)
{
	double x = as_double(a), y = as_double(b);
	int c = pg_float_cmp(x, y);

	if (c != 0)
		return c < 0;
	return x == 0.0 && std::signbit(x) && !std::signbit(y);
}

struct RefState
{
	uint64_t count = 0;
	__int128 sum = 0;
	double sx = 0;
	double abs_sum = 0;
	bool overflow = false;
	uint64_t best = 0;
};

/* the value x 10^S of a numeric word, or false where it escapes */
bool
scaled_numeric(uint64_t w, int S, __int128 *out)
{
	const __int128 limit = static_cast<__int128>(1) << 80;
	int s = static_cast<int>(w & 31);
	__int128 x = static_cast<int64_t>(w) >> 5;

	if (s == 31 || s > S)
		return false;
	for (int i = 0; i < S - s; i++)
	{
		x *= 10;
		if (x >= limit || x <= -limit)
			return false;
	}
	*out = x;
	return true;
}

void
add_leaf(const QAgg &g, uint64_t w, RefState &st)
{
	st.count++;
	switch (g.kind)
	{
		case GPUOPS_QAGG_SUM_INT:
			st.sum += static_cast<int64_t>(w);
			break;
		case GPUOPS_QAGG_SUM_FLOAT:
			{
				double v = as_double(w), r = st.sx + v;

				if (std::isinf(r) && !std::isinf(st.sx) && !std::isinf(v))
					st.overflow = true;
				st.sx = r;
				st.abs_sum += std::fabs(v);
				break;
			}
		case GPUOPS_QAGG_MIN:
		case GPUOPS_QAGG_MAX:
			{
				bool is_float = g.type == GPUOPS_ET_FLOAT;
				uint64_t v = is_float && std::isnan(as_double(w)) ? kCanonicalNaN : w;
				bool less = is_float ? float_less(v, st.best)
									 : static_cast<int64_t>(v) < static_cast<int64_t>(st.best);
				bool more = is_float ? float_less(st.best, v)
									 : static_cast<int64_t>(v) > static_cast<int64_t>(st.best);

				if (st.count == 1 || (g.kind == GPUOPS_QAGG_MIN ? less : more))
					st.best = v;
				break;
			}
		default:
			break;
	}
}

GpuopsAggResult
result_of(const QAgg &g, const RefState &st)
{
	GpuopsAggResult r;

	memset(&r, 0, sizeof(r));
	r.count = st.count;
	switch (g.kind)
	{
		case GPUOPS_QAGG_SUM_INT:
		case GPUOPS_QAGG_SUM_NUM:
			r.sum_lo = static_cast<uint64_t>(st.sum);
			r.sum_hi = static_cast<int64_t>(st.sum >> 64);
			break;
		case GPUOPS_QAGG_SUM_FLOAT:
			r.sx = st.sx;
			r.overflow = st.overflow ? 1 : 0;
			break;
		case GPUOPS_QAGG_MIN:
		case GPUOPS_QAGG_MAX:
			r.row = st.best;
			break;
		default:
			break;
	}
	return r;
}

/* Row i's packed key, or false (with the escape set) where a key program stops. */
bool
row_key(const QCase &c, uint64_t i, std::vector<uint64_t> &key, QResult &r)
{
	key.clear();
	if (c.keys.empty())
		return true;
	key.push_back(0);
	for (size_t k = 0; k < c.keys.size(); k++)
	{
		const QKey &qk = c.keys[k];
		Val v = qk.prog ? qk.fn(c, i) : c.col(qk.col, i);

		if (v.recheck)
		{
			r.escape_row = i;
			r.escape_what = GPUOPS_QESC_KEY;
			r.escape_index = static_cast<int>(k);
			return false;
		}
		if (v.null)
			key[0] |= 1ull << k;
		if (qk.kind == GPUOPS_QKEY_BYTES16)
		{
			key.push_back(v.null ? 0 : c.cols[qk.col].w[2 * i]);
			key.push_back(v.null ? 0 : c.cols[qk.col].w[2 * i + 1]);
		}
		else if (qk.kind == GPUOPS_QKEY_FLOAT)
			key.push_back(v.null ? 0 : canonical_float(v.w));
		else
			key.push_back(v.null ? 0 : v.w);
	}
	return true;
}

void
escape(QResult &r, uint64_t row, GpuopsQueryEscape what, int index)
{
	r.escape_row = row;
	r.escape_what = what;
	r.escape_index = index;
}

/* Row i into its group's states; false where it escapes. */
bool
row_aggregates(const QCase &c, uint64_t i, std::vector<RefState> &states, QResult &r)
{
	for (size_t a = 0; a < c.aggs.size(); a++)
	{
		const QAgg &g = c.aggs[a];
		Val v;

		if (g.filter_fn)
		{
			Verdict f = g.filter_fn(c, i);

			if (f == V_RECHECK)
			{
				escape(r, i, GPUOPS_QESC_FILTER, static_cast<int>(a));
				return false;
			}
			if (f != V_TRUE)
				continue;
		}
		if (g.arg)
			v = g.arg_fn(c, i);
		else if (g.col >= 0)
			v = c.col(g.col, i);
		else
		{
			states[a].count++; /* count(*) */
			continue;
		}
		if (v.recheck)
		{
			escape(r, i, GPUOPS_QESC_ARG, static_cast<int>(a));
			return false;
		}
		if (v.null)
			continue;
		if (g.kind == GPUOPS_QAGG_SUM_NUM)
		{
			__int128 x;

			if (!scaled_numeric(v.w, g.scale, &x))
			{
				escape(r, i, GPUOPS_QESC_ARG, static_cast<int>(a));
				return false;
			}
			states[a].count++;
			states[a].sum += x;
			continue;
		}
		add_leaf(g, v.w, states[a]);
	}
	return true;
}

bool
key_less(const QGroup &a, const QGroup &b)
{
	return a.key < b.key;
}

} /* namespace */

namespace {

/*
 * A case with dimensions, answered as the case without them over the
 * joined rows: the rows the qual keeps whose every lookup matches, with
 * the payload columns after the batch's.  Its programs must not stop
 * (escape rows would count joined rows); a repeated key escapes at row 0.
 */
QResult
joined_reference(const QCase &c)
{
	QCase flat = c;
	std::vector<std::map<uint64_t, uint64_t>> rows_of(c.dims.size());
	QResult r;

	for (size_t d = 0; d < c.dims.size(); d++)
		for (uint64_t j = 0; j < c.dims[d].keys.size(); j++)
			if (!rows_of[d].emplace(c.dims[d].keys[j], j).second &&
				c.dims[d].kind == GPUOPS_QDIM_INNER)
			{
				r.escape_row = 0;
				r.escape_what = GPUOPS_QESC_DIM_KEY;
				r.escape_index = static_cast<int>(d);
				return r;
			}
	flat.dims.clear();
	flat.qual = nullptr;
	flat.qual_fn = nullptr;
	flat.n = 0;
	for (QCol &col : flat.cols)
	{
		col.w.clear();
		col.null.clear();
	}
	for (const QDim &dim : c.dims)
		for (size_t p = 0; p < dim.pay.size(); p++)
			flat.cols.push_back(QCol{});

	std::vector<Val> row;

	for (uint64_t i = 0; i < c.n; i++)
	{
		bool kept = true;

		if (c.qual_fn && c.qual_fn(c, i) != V_TRUE)
			continue;
		row.clear();
		for (size_t k = 0; k < c.cols.size(); k++)
			row.push_back(c.col(static_cast<int>(k), i));
		for (size_t d = 0; d < c.dims.size() && kept; d++)
		{
			const Val key = row[c.dims[d].key_col];
			auto it = rows_of[d].find(key.w);

			bool match = !key.null && it != rows_of[d].end();

			/* a semi dimension keeps the matched rows, an anti one the others: once each */
			kept = c.dims[d].kind == GPUOPS_QDIM_ANTI ? !match : match;
			for (size_t p = 0; p < c.dims[d].pay.size() && kept; p++)
			{
				const QCol &pay = c.dims[d].pay[p];

				row.push_back(Val{pay.w[it->second], pay.is_null(it->second), false});
			}
		}
		if (!kept)
			continue;
		for (size_t k = 0; k < row.size(); k++)
		{
			QCol &col = flat.cols[k];

			if (col.bytes)
			{
				col.w.push_back(c.cols[k].w[2 * i]);
				col.w.push_back(c.cols[k].w[2 * i + 1]);
			}
			else
				col.w.push_back(row[k].w);
			col.null.push_back(row[k].null ? 1 : 0); /* the reference reads nulls only */
		}
		flat.n++;
	}
	r = query_reference(flat);
	if (r.escape_row != GPUOPS_QUERY_NO_ESCAPE)
		throw std::runtime_error("a case with dimensions whose programs stop");
	return r;
}

} /* namespace */

QResult
query_reference(const QCase &c)
{
	std::map<std::vector<uint64_t>, std::vector<RefState>> groups;
	std::vector<uint64_t> key;
	QResult r;

	if (!c.dims.empty())
		return joined_reference(c);

	for (uint64_t i = 0; i < c.n; i++)
	{
		if (c.qual_fn)
		{
			Verdict q = c.qual_fn(c, i);

			if (q == V_RECHECK)
			{
				escape(r, i, GPUOPS_QESC_QUAL, -1);
				break;
			}
			if (q != V_TRUE)
				continue;
		}
		if (!row_key(c, i, key, r))
			break;
		r.passed++;

		auto it = groups.find(key);

		if (it == groups.end())
			it = groups.emplace(key, std::vector<RefState>(c.aggs.size())).first;
		if (!row_aggregates(c, i, it->second, r))
			break;
	}
	for (const auto &kv : groups)
	{
		QGroup g;

		g.key = kv.first;
		for (size_t a = 0; a < c.aggs.size(); a++)
		{
			g.results.push_back(result_of(c.aggs[a], kv.second[a]));
			g.abs_sums.push_back(kv.second[a].abs_sum);
		}
		r.groups.push_back(std::move(g));
	}
	return r;
}

GpuopsQuerySpec
query_spec_of(const QCase &c)
{
	GpuopsQuerySpec spec;

	memset(&spec, 0, sizeof(spec));
	spec.ncols = static_cast<int>(c.cols.size());
	for (int k = 0; k < spec.ncols; k++)
		spec.bytes16[k] = c.cols[k].bytes ? 1 : 0;
	spec.qual = c.qual;
	spec.nkeys = static_cast<int>(c.keys.size());
	for (int k = 0; k < spec.nkeys; k++)
	{
		spec.keys[k].kind = c.keys[k].kind;
		spec.keys[k].col = c.keys[k].prog ? -1 : c.keys[k].col;
		spec.keys[k].program = c.keys[k].prog;
	}
	spec.naggs = static_cast<int>(c.aggs.size());
	for (int a = 0; a < spec.naggs; a++)
	{
		const QAgg &g = c.aggs[a];

		spec.aggs[a].kind = g.kind;
		spec.aggs[a].arg_type = g.type;
		spec.aggs[a].arg_col = g.arg ? -1 : g.col;
		spec.aggs[a].arg = g.arg;
		spec.aggs[a].filter = g.filter;
		spec.aggs[a].num_scale = g.scale;
	}
	spec.group_capacity = c.group_capacity;
	spec.ndims = static_cast<int>(c.dims.size());
	for (int d = 0; d < spec.ndims; d++)
	{
		const QDim &dim = c.dims[d];

		spec.dims[d].kind = dim.kind;
		spec.dims[d].key_col = dim.key_col;
		spec.dims[d].nrows = dim.keys.size();
		spec.dims[d].keys = dim.keys.data();
		spec.dims[d].npayload = static_cast<int>(dim.pay.size());
		for (size_t p = 0; p < dim.pay.size(); p++)
		{
			spec.dims[d].words[p] = dim.pay[p].w.data();
			spec.dims[d].nulls[p] = dim.pay[p].null.empty() ? nullptr : dim.pay[p].null.data();
		}
	}
	return spec;
}

QResult
run_query(const GpuopsQueryBackend *be, const QCase &c)
{
	GpuopsQuerySpec spec = query_spec_of(c);
	GpuopsSettings st = settings_for(c.device_budget);
	EndGuard<GpuopsQuery> q(be->query_end);
	size_t ncols = c.cols.size();
	/* the batch's buffers, overwritten once add returns: the backend must have copied them */
	std::vector<std::vector<uint64_t>> words(ncols);
	std::vector<std::vector<uint8_t>> nulls(ncols);
	uint64_t ngroups = 0;
	QResult r;

	GpuopsQueryTuple tuple = pages_tuple(c);

	if (c.pages)
		spec.tuple = &tuple;
	DT_CALL(be->query_begin(&st, &spec, &q.obj));
	if (c.pages)
		pages_batches(c, [&](GpuopsQueryBatch &b) { DT_CALL(be->query_add(q.obj, &b)); });
	for (uint64_t from = 0; !c.pages && (from < c.n || (c.n == 0 && from == 0));
		 from += c.batch_rows)
	{
		uint64_t m = std::min<uint64_t>(c.batch_rows, c.n - from);
		GpuopsQueryBatch b;

		memset(&b, 0, sizeof(b));
		b.nrows = static_cast<uint32_t>(m);
		b.cols.ncols = static_cast<int>(ncols);
		b.cols.nrows = m;
		for (size_t k = 0; k < ncols; k++)
		{
			const QCol &col = c.cols[k];
			size_t per = col.bytes ? 2 : 1;

			words[k].assign(col.w.begin() + from * per, col.w.begin() + (from + m) * per);
			words[k].push_back(0); /* a valid pointer also for 0 rows */
			if (col.bytes)
				b.bytes16[k] = words[k].data();
			else
				b.cols.words[k] = words[k].data();
			if (!col.null.empty())
			{
				nulls[k].assign(col.null.begin() + from, col.null.begin() + from + m);
				nulls[k].push_back(0);
				b.cols.nulls[k] = nulls[k].data();
			}
		}
		DT_CALL(be->query_add(q.obj, &b));
		for (size_t k = 0; k < ncols; k++)
		{
			std::fill(words[k].begin(), words[k].end(), 0x5a5a5a5a5a5a5a5aull);
			std::fill(nulls[k].begin(), nulls[k].end(), 0x5a);
		}
		if (c.n == 0)
			break;
	}
	DT_CALL(be->query_finish(q.obj, &ngroups));

	const uint64_t *keys = nullptr;
	const GpuopsAggResult *results = nullptr;
	size_t naggs = c.aggs.size();

	DT_CALL(be->query_groups(q.obj, &keys, &results));
	be->query_stats(q.obj, &r.stats);
	if (ngroups > 0 &&
		((keys == nullptr && r.stats.key_words > 0) || (results == nullptr && naggs > 0)))
		throw CallFailed("query_groups gave no arrays");
	for (uint64_t g = 0; g < ngroups; g++)
	{
		QGroup qg;

		qg.key.assign(keys + g * r.stats.key_words, keys + (g + 1) * r.stats.key_words);
		qg.results.assign(results + g * naggs, results + (g + 1) * naggs);
		r.groups.push_back(std::move(qg));
	}
	std::sort(r.groups.begin(), r.groups.end(), key_less);
	r.escape_row = r.stats.escape_row;
	r.escape_what = r.stats.escape_what;
	r.escape_index = r.stats.escape_index;
	r.passed = r.stats.passed;
	return r;
}

namespace {

std::string
hex(uint64_t w)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(w));
	return buf;
}

bool
same_float(double a, double b, double tol, double abs_sum)
{
	if (std::isnan(a) || std::isnan(b))
		return std::isnan(a) && std::isnan(b);
	if (a == b)
		return true;
	return std::isfinite(a) && std::isfinite(b) && std::fabs(a - b) <= tol * abs_sum;
}

std::string
compare_result(const QAgg &g, const GpuopsAggResult &x, const GpuopsAggResult &y, double tol,
			   double abs_sum)
{
	if (x.count != y.count)
		return "count " + std::to_string(x.count) + ", expected " + std::to_string(y.count);
	switch (g.kind)
	{
		case GPUOPS_QAGG_SUM_INT:
		case GPUOPS_QAGG_SUM_NUM:
			if (x.sum_lo != y.sum_lo || x.sum_hi != y.sum_hi)
				return "sum " + hex(static_cast<uint64_t>(x.sum_hi)) + hex(x.sum_lo) +
					", expected " + hex(static_cast<uint64_t>(y.sum_hi)) + hex(y.sum_lo);
			break;
		case GPUOPS_QAGG_SUM_FLOAT:
			if (x.overflow != y.overflow)
				return "overflow " + std::to_string(x.overflow) + ", expected " +
					std::to_string(y.overflow);
			if (tol == 0 ? double_bits(x.sx) != double_bits(y.sx) && !(x.sx != x.sx && y.sx != y.sx)
						 : !same_float(x.sx, y.sx, tol, abs_sum))
				return "sum " + std::to_string(x.sx) + " (" + hex(double_bits(x.sx)) +
					"), expected " + std::to_string(y.sx) + " (" + hex(double_bits(y.sx)) + ")";
			break;
		case GPUOPS_QAGG_MIN:
		case GPUOPS_QAGG_MAX:
			if (x.row != y.row)
				return "value " + hex(x.row) + ", expected " + hex(y.row);
			break;
		default:
			break;
	}
	return "";
}

} /* namespace */

std::string
compare_query(const QCase &c, const QResult &got, const QResult &want, const QResult &ref,
			  double tol)
{
	if (got.escape_row != want.escape_row || got.escape_what != want.escape_what ||
		got.escape_index != want.escape_index)
		return "escape row " + std::to_string(got.escape_row) + " what " +
			std::to_string(got.escape_what) + " index " + std::to_string(got.escape_index) +
			", expected " + std::to_string(want.escape_row) + " what " +
			std::to_string(want.escape_what) + " index " + std::to_string(want.escape_index);
	if (want.escape_row != GPUOPS_QUERY_NO_ESCAPE)
		return ""; /* the groups are incomplete: nothing more is promised */
	if (got.stats.rows != c.n)
		return "stats: " + std::to_string(got.stats.rows) + " rows";
	if (got.passed != want.passed)
		return "passed " + std::to_string(got.passed) + ", expected " + std::to_string(want.passed);
	if (got.groups.size() != want.groups.size() || got.stats.groups != got.groups.size())
		return std::to_string(got.groups.size()) + " groups (stats " +
			std::to_string(got.stats.groups) + "), expected " + std::to_string(want.groups.size());
	for (size_t i = 0; i < got.groups.size(); i++)
	{
		const QGroup &x = got.groups[i], &y = want.groups[i];

		if (x.key != y.key || i >= ref.groups.size() || ref.groups[i].key != y.key)
			return "group " + std::to_string(i) + ": key differs" +
				(x.key.empty() ? "" : " (first word " + hex(x.key[0]) + ")");
		for (size_t a = 0; a < c.aggs.size(); a++)
		{
			std::string d = compare_result(c.aggs[a], x.results[a], y.results[a], tol,
										   ref.groups[i].abs_sums[a]);

			if (!d.empty())
				return "group " + std::to_string(i) + ", aggregate " + std::to_string(a) + ": " + d;
		}
	}
	return "";
}

} /* namespace dt */
