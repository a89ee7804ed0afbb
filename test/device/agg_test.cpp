/*
 * agg_test.cpp
 *    The grouped aggregation backend (GpuopsAggBackend): batches in row
 *    order, groups with their first row and one state per aggregate.
 *
 * The twin is checked against groups the test forms itself (a map from
 * each row's key, NULLs one group, -0 = 0 and every NaN one value of a
 * float key): the same groups, each once, with its first row; per
 * aggregate count(*), count(x), exact 128-bit sums and sums of squares,
 * min/max rows (ties: the last row), float8_accum's N, Sx and Sxx (within
 * rounding), count(DISTINCT x) and the percentiles' rows (agg_ref.cpp).
 * The CUDA backend must give the twin's groups in the twin's order with
 * the same states (float sums within rounding: the device reduces in a
 * tree) and the same hash-strategy decision.
 */
#include "agg_ref.h"

#include <algorithm>

namespace dt {
namespace {

struct AggRun
{
	std::vector<uint64_t> group_rows;
	std::vector<GpuopsAggResult> results; /* naggs per group */
	GpuopsAggStats stats;
};

GpuopsAggSpec
spec_of(const AggCase &c)
{
	GpuopsAggSpec spec;

	memset(&spec, 0, sizeof(spec));
	spec.nkeys = static_cast<int>(c.keys.size());
	for (int k = 0; k < spec.nkeys; k++)
		spec.keys[k] = c.keys[k].kind;
	spec.naggs = static_cast<int>(c.aggs.size());
	for (int g = 0; g < spec.naggs; g++)
	{
		spec.kinds[g] = c.aggs[g].kind;
		spec.value_kinds[g] = c.aggs[g].col >= 0 ? c.cols[c.aggs[g].col].kind : GPUOPS_KEY_INT8;
		spec.fractions[g] = c.aggs[g].fraction;
	}
	spec.order_agg = c.order_agg;
	spec.order_desc = c.order_desc;
	spec.hash_capacity = c.hash_capacity;
	return spec;
}

/* A column's rows [from, from + m): its values and, when it has NULLs, a bitmap kept in hold. */
const uint8_t *
batch_nulls(const Column &col, uint64_t from, uint64_t m, std::vector<std::vector<uint8_t>> &hold)
{
	if (col.null.empty())
		return nullptr;
	hold.push_back(bitmap_of(col.null, from, m));
	hold.back().push_back(0);
	return hold.back().data();
}

/* The aggregation protocol: capacity, begin, add per batch, finish, groups, stats, end. */
AggRun
run_agg(const GpuopsAggBackend *be, const AggCase &c)
{
	GpuopsAggSpec spec = spec_of(c);
	GpuopsSettings st = settings_for(0);
	EndGuard<GpuopsAgg> agg(be->agg_end);
	uint64_t capacity = 0, ngroups = 0;
	AggRun r;

	DT_CALL(be->agg_capacity(&st, &spec, &capacity));
	if (c.n > capacity)
		throw std::runtime_error("test input over agg_capacity " + std::to_string(capacity));
	DT_CALL(be->agg_begin(&st, &spec, c.n, &agg.obj));
	for (uint64_t from = 0; from < c.n; from += c.batch_rows)
	{
		uint64_t m = std::min<uint64_t>(c.batch_rows, c.n - from);
		std::vector<std::vector<uint8_t>> hold;
		GpuopsAggBatch b;

		hold.reserve(spec.nkeys + spec.naggs);
		memset(&b, 0, sizeof(b));
		b.nrows = static_cast<uint32_t>(m);
		for (int k = 0; k < spec.nkeys; k++)
		{
			b.keys[k] = &c.keys[k].raw[from * gpuops_key_raw_width(c.keys[k].kind)];
			b.key_nulls[k] = batch_nulls(c.keys[k], from, m, hold);
		}
		for (int g = 0; g < spec.naggs; g++)
		{
			if (c.aggs[g].col < 0)
				continue; /* count(*): no input, no bitmap */
			const Column &col = c.cols[c.aggs[g].col];

			if (spec.kinds[g] != GPUOPS_AGG_COUNT)
				b.values[g] = &col.raw[from * gpuops_key_raw_width(col.kind)];
			b.value_nulls[g] = batch_nulls(col, from, m, hold);
		}
		DT_CALL(be->agg_add(agg.obj, &b));
	}
	DT_CALL(be->agg_finish(agg.obj, &ngroups));

	const uint64_t *rows = nullptr;
	const GpuopsAggResult *results = nullptr;

	DT_CALL(be->agg_groups(agg.obj, &rows, &results));
	if (ngroups > 0 && (rows == nullptr || results == nullptr))
		throw CallFailed("agg_groups gave no arrays");
	r.group_rows.assign(rows, rows + ngroups);
	r.results.assign(results, results + ngroups * spec.naggs);
	be->agg_stats(agg.obj, &r.stats);
	return r;
}

/* The twin's groups against the test's own. */
std::string
check_twin(const AggCase &c, const RefGroups &ref, const AggRun &r)
{
	size_t naggs = c.aggs.size();
	std::vector<uint8_t> seen(ref.groups.size(), 0);

	if (r.group_rows.size() != ref.groups.size())
		return std::to_string(r.group_rows.size()) + " groups, expected " +
			std::to_string(ref.groups.size());
	for (size_t i = 0; i < r.group_rows.size(); i++)
	{
		uint64_t row = r.group_rows[i];

		if (row >= c.n)
			return "group " + std::to_string(i) + ": row " + std::to_string(row) + " out of range";

		uint32_t gi = ref.group_of[row];
		const RefGroup &g = ref.groups[gi];

		if (seen[gi]++)
			return "group " + std::to_string(i) + " (row " + std::to_string(row) + ") comes twice";
		if (expected_first_row(c, g) != row)
			return "group " + std::to_string(i) + ": first row " + std::to_string(row) +
				", expected " + std::to_string(expected_first_row(c, g));
		for (size_t a = 0; a < naggs; a++)
		{
			std::string d = compare_state(c.aggs[a].kind, r.results[i * naggs + a],
										  expected_state(c, a, g), 1e-12);

			if (!d.empty())
				return "group " + std::to_string(i) + " (row " + std::to_string(row) +
					"), aggregate " + std::to_string(a) + ": " + d;
		}
	}
	if (c.expect_hashed >= 0 && r.stats.hashed != static_cast<uint32_t>(c.expect_hashed))
		return "stats: hashed " + std::to_string(r.stats.hashed) + ", overflow " +
			std::to_string(r.stats.hash_overflow);
	if (r.stats.groups != ref.groups.size() || r.stats.rows != c.n)
		return "stats: " + std::to_string(r.stats.groups) + " groups of " +
			std::to_string(r.stats.rows) + " rows";
	/* the twin counts what agg_groups hands over (gpuops_device.h) */
	uint64_t handed = r.group_rows.size() * sizeof(uint64_t) +
		r.results.size() * sizeof(GpuopsAggResult);

	if (r.stats.bytes_from_device != handed)
		return "stats: bytes_from_device " + std::to_string(r.stats.bytes_from_device) +
			", expected " + std::to_string(handed);
	return "";
}

/* The CUDA backend's groups against the twin's: same order, same states. */
std::string
check_cuda(const AggCase &c, const AggRun &gpu, const AggRun &cpu)
{
	size_t naggs = c.aggs.size();

	if (gpu.group_rows.size() != cpu.group_rows.size())
		return std::to_string(gpu.group_rows.size()) + " groups, cpu " +
			std::to_string(cpu.group_rows.size());
	for (size_t i = 0; i < gpu.group_rows.size(); i++)
	{
		if (gpu.group_rows[i] != cpu.group_rows[i])
			return "group " + std::to_string(i) + ": row " + std::to_string(gpu.group_rows[i]) +
				", cpu " + std::to_string(cpu.group_rows[i]);
		for (size_t a = 0; a < naggs; a++)
		{
			std::string d = compare_state(c.aggs[a].kind, gpu.results[i * naggs + a],
										  cpu.results[i * naggs + a], 1e-9);

			if (!d.empty())
				return "group " + std::to_string(i) + ", aggregate " + std::to_string(a) + ": " + d;
		}
	}
	if (gpu.stats.hashed != cpu.stats.hashed || gpu.stats.hash_overflow != cpu.stats.hash_overflow)
		return "hash strategy: hashed " + std::to_string(gpu.stats.hashed) + ", overflow " +
			std::to_string(gpu.stats.hash_overflow) + "; cpu " + std::to_string(cpu.stats.hashed) +
			", " + std::to_string(cpu.stats.hash_overflow);
	/* at least the recheck row read and every group's first row */
	if (gpu.stats.bytes_from_device < 8 + gpu.group_rows.size() * sizeof(uint64_t))
		return "stats: bytes_from_device " + std::to_string(gpu.stats.bytes_from_device) + " for " +
			std::to_string(gpu.group_rows.size()) + " groups";
	return "";
}

void
check_agg(Outcome &out, const AggCase &c)
{
	RefGroups ref = reference_groups(c);
	AggRun cpu = run_agg(engines.cpu->agg, c);

	out.info = std::to_string(ref.groups.size()) + " groups";
	out.cpu = check_twin(c, ref, cpu);
	if (!engines.cuda)
		return;
	begin_cuda_side(out);

	AggRun gpu = run_agg(engines.cuda->agg, c);

	out.cuda = check_cuda(c, gpu, cpu);
}

} /* namespace */

void
agg_tests()
{
	uint64_t seed = 4000;

	for (const AggRecipe &r : agg_recipes())
	{
		uint64_t s = seed++;

		run_case("agg " + r.what, [&](Outcome &out) { check_agg(out, make_agg_case(r, s)); });
	}
}

} /* namespace dt */
