/*
 * query_ref.h
 *    The query block tests' inputs and their reference: columns, the
 *    programs with the plain C++ that says what each answers, the groups
 *    the test forms itself (a std::map over rows in row order, exact sums
 *    in __int128), and the backend protocol run on a case.
 */
#ifndef QUERY_REF_H
#define QUERY_REF_H

#include <map>
#include <memory>

#include "expr_build.h"

namespace dt {

/* A column: words (or two words a row for a bytes column) and null flags (empty: none). */
struct QCol
{
	bool bytes = false;
	std::vector<uint64_t> w;
	std::vector<uint8_t> null;

	bool is_null(uint64_t i) const { return !null.empty() && null[i]; }
};

/* What a program gives for a row: a value or NULL, or RECHECK. */
struct Val
{
	uint64_t w = 0;
	bool null = false;
	bool recheck = false;
};

struct QCase;

/* The C++ that says what a program answers for row `row` of case c. */
using ValueFn = std::function<Val(const QCase &c, uint64_t row)>;
using PredFn = std::function<Verdict(const QCase &c, uint64_t row)>;

/* A group key: a column, or a program with the C++ that computes it. */
struct QKey
{
	GpuopsQueryKeyKind kind;
	int col = -1;
	const GpuopsExprProgram *prog = nullptr;
	ValueFn fn;
};

/* An aggregate: its argument (a column, a program or none) and FILTER. */
struct QAgg
{
	GpuopsQueryAggKind kind;
	GpuopsExprType type = GPUOPS_ET_INT;
	int col = -1;
	const GpuopsExprProgram *arg = nullptr;
	ValueFn arg_fn;
	const GpuopsExprProgram *filter = nullptr;
	PredFn filter_fn;
	int scale = 0;
};

/*
 * A dimension (a star or snowflake join): distinct keys (a case may repeat
 * one to see the escape), payload columns of words, and the column it is
 * looked up by: a batch column, or an earlier dimension's payload column
 * (numbered after the batch's, dimension after dimension).  A semi or
 * anti one has no payload, and its keys may repeat.
 */
struct QDim
{
	GpuopsQueryDimKind kind = GPUOPS_QDIM_INNER;
	int key_col = -1;
	std::vector<uint64_t> keys;
	std::vector<QCol> pay;
};

struct QCase
{
	std::string what;
	uint64_t n = 0;
	std::vector<QCol> cols;
	const GpuopsExprProgram *qual = nullptr;
	PredFn qual_fn;
	std::vector<QKey> keys;
	std::vector<QAgg> aggs;
	uint32_t batch_rows = 65536;
	uint64_t group_capacity = 1024;
	std::vector<QDim> dims;								/* looked up after the qual, in order */
	GpuopsQueryEscape expect_escape = GPUOPS_QESC_NONE; /* the case's point: checked */
	/* where the CUDA backend escapes and the twin does not (it must escape so) */
	GpuopsQueryEscape cuda_escape = GPUOPS_QESC_NONE;
	int64_t expect_groups = -1; /* when known, checked too */
	size_t device_budget = 0;
	bool pages = false;	   /* batches as heap pages (query_pages.cpp) */
	bool in_place = false; /* ... scattered in a mapped pool, read in place */
	std::vector<std::shared_ptr<GpuopsExprProgram>> programs; /* owned, at stable addresses */

	const GpuopsExprProgram *own(const GpuopsExprProgram &p)
	{
		programs.push_back(std::make_shared<GpuopsExprProgram>(p));
		return programs.back().get();
	}
	int add_col(bool bytes = false)
	{
		QCol c;

		c.bytes = bytes;
		c.w.assign(bytes ? 2 * n : n, 0);
		cols.push_back(std::move(c));
		return static_cast<int>(cols.size()) - 1;
	}
	/* column c's word at row i and its null flag, as a program reads them */
	Val col(int c, uint64_t i) const
	{
		Val v;

		v.w = cols[c].w[i];
		v.null = cols[c].is_null(i);
		return v;
	}
};

/* One group: its packed key and a result per aggregate. */
struct QGroup
{
	std::vector<uint64_t> key;
	std::vector<GpuopsAggResult> results;
	std::vector<double> abs_sums; /* float sums: the sum of |x|, for a tolerance (reference) */
};

struct QResult
{
	std::vector<QGroup> groups; /* sorted by key words */
	uint64_t escape_row = GPUOPS_QUERY_NO_ESCAPE;
	GpuopsQueryEscape escape_what = GPUOPS_QESC_NONE;
	int escape_index = -1;
	uint64_t passed = 0;
	GpuopsQueryStats stats = {};
};

/* The case's answer, computed row by row in the plainest way. */
QResult query_reference(const QCase &c);

/* The spec a case gives the backends. */
GpuopsQuerySpec query_spec_of(const QCase &c);

/*
 * The protocol: begin, add per batch (from buffers overwritten as soon as
 * add returns), finish, groups, stats, end.  Throws CallFailed.
 */
QResult run_query(const GpuopsQueryBackend *be, const QCase &c);

/* The case's rows as heap pages (query_pages.cpp): its tuple shape, and its batches. */
GpuopsQueryTuple pages_tuple(const QCase &c);
void pages_batches(const QCase &c, const std::function<void(GpuopsQueryBatch &)> &add);

/*
 * got against want: the same escape, and without one the same groups with
 * the same states; float sums within tol x the sum of |x| (ref's abs_sums).
 */
std::string compare_query(const QCase &c, const QResult &got, const QResult &want,
						  const QResult &ref, double tol);

/* Numeric words (expr_numeric.hpp's format: mantissa << 5 | scale; scale 31 unknown). */
inline uint64_t
num_word(int64_t m, int scale)
{
	return (static_cast<uint64_t>(m) << 5) | static_cast<uint64_t>(scale);
}

constexpr uint64_t kNumUnknownWord = 31;

std::vector<std::function<QCase()>> query_cases();

} /* namespace dt */

#endif
