/*
 * query_test.cpp
 *    The query block backend (GpuopsQueryBackend): batches of expression
 *    columns -> qual -> groups keyed by packed words -> exact states.
 *
 * The twin is checked against the groups the test forms itself
 * (query_ref.cpp): the same escape (the least row that stops, what and
 * where), and without one the same groups (keys compared as words, so -0
 * and 0, and every NaN, must pack alike), with counts, 128-bit sums,
 * numeric sums scaled exactly, min/max words and float sums bit for bit
 * (both add in row order).  The CUDA backend must give the twin's escape,
 * groups and states, float sums within rounding (atomics add in any
 * order).  Then what only a backend can say: bad specs fail at begin, and
 * a device budget too small for the groups fails with out of memory, not
 * a wrong answer.
 */
#include "query_programs.h"

namespace dt {
namespace {

void
check_query(Outcome &out, const QCase &c)
{
	QResult ref = query_reference(c);
	QResult cpu;

	if (ref.escape_what != c.expect_escape)
		throw std::runtime_error("the reference escapes with " + std::to_string(ref.escape_what) +
								 ", the case means " + std::to_string(c.expect_escape));
	if (c.expect_groups >= 0 && ref.groups.size() != static_cast<size_t>(c.expect_groups))
		throw std::runtime_error("the reference has " + std::to_string(ref.groups.size()) +
								 " groups, the case means " + std::to_string(c.expect_groups));
	cpu = run_query(engines.cpu->query, c);
	out.info = std::to_string(ref.groups.size()) + " groups" +
		(ref.escape_row != GPUOPS_QUERY_NO_ESCAPE
			 ? ", escape at row " + std::to_string(ref.escape_row)
			 : "");
	out.cpu = compare_query(c, cpu, ref, ref, 0);

	/* bytes_from_device (gpuops_device.h): the twin counts the keys and results it hands over */
	uint64_t handed = cpu.groups.size() *
		(cpu.stats.key_words * sizeof(uint64_t) + c.aggs.size() * sizeof(GpuopsAggResult));

	if (out.cpu.empty() && cpu.stats.bytes_from_device != handed)
		out.cpu = "stats: bytes_from_device " + std::to_string(cpu.stats.bytes_from_device) +
			", expected " + std::to_string(handed);
	if (!engines.cuda)
		return;
	begin_cuda_side(out);

	QResult gpu = run_query(engines.cuda->query, c);

	if (c.cuda_escape != GPUOPS_QESC_NONE)
	{
		if (gpu.escape_what != c.cuda_escape || gpu.escape_row != 0)
			out.cuda = "escape what " + std::to_string(gpu.escape_what) + " at row " +
				std::to_string(gpu.escape_row) + ", the case means " +
				std::to_string(c.cuda_escape) + " at row 0";
		return;
	}
	out.cuda = compare_query(c, gpu, cpu, ref, 1e-9);
	if (out.cuda.empty() && gpu.stats.key_words != cpu.stats.key_words)
		out.cuda = "key words " + std::to_string(gpu.stats.key_words) + ", cpu " +
			std::to_string(cpu.stats.key_words);
	/* at least every group's key words came back */
	if (out.cuda.empty() &&
		gpu.stats.bytes_from_device < gpu.groups.size() * gpu.stats.key_words * sizeof(uint64_t))
		out.cuda = "stats: bytes_from_device " + std::to_string(gpu.stats.bytes_from_device) +
			" for " + std::to_string(gpu.groups.size()) + " groups";
}

/* A spec each backend must refuse at begin, with GPUOPS_ERR_INTERNAL. */
struct BadSpec
{
	const char *what;
	std::function<void(GpuopsQuerySpec &, GpuopsExprProgram &)> spoil;
};

const std::vector<BadSpec> &
bad_specs()
{
	static const std::vector<BadSpec> specs = {
		{"min of a numeric",
		 [](GpuopsQuerySpec &s, GpuopsExprProgram &) { s.aggs[0].arg_type = GPUOPS_ET_NUM; }},
		{"a bytes key over a word column",
		 [](GpuopsQuerySpec &s, GpuopsExprProgram &) { s.keys[0].kind = GPUOPS_QKEY_BYTES16; }},
		{"an int key over a bytes column",
		 [](GpuopsQuerySpec &s, GpuopsExprProgram &) { s.keys[0].col = 1; }},
		{"a program that reads a bytes column",
		 [](GpuopsQuerySpec &s, GpuopsExprProgram &p) {
			 p = ProgramBuilder().outer(1).constant(0).cmp(GPUOPS_CMP_EQ, GPUOPS_ET_INT).program();
			 s.qual = &p;
		 }},
		{"a program that reads no column there is",
		 [](GpuopsQuerySpec &s, GpuopsExprProgram &p) {
			 p = ProgramBuilder().outer(2).constant(0).cmp(GPUOPS_CMP_EQ, GPUOPS_ET_INT).program();
			 s.aggs[1].filter = &p;
		 }},
		{"a numeric sum at scale 39",
		 [](GpuopsQuerySpec &s, GpuopsExprProgram &) {
			 s.aggs[1].kind = GPUOPS_QAGG_SUM_NUM;
			 s.aggs[1].arg_type = GPUOPS_ET_NUM;
			 s.aggs[1].num_scale = 39;
		 }},
		{"a sum without an argument",
		 [](GpuopsQuerySpec &s, GpuopsExprProgram &) { s.aggs[1].arg_col = -1; }},
		{"17 keys", [](GpuopsQuerySpec &s, GpuopsExprProgram &) { s.nkeys = 17; }},
	};
	return specs;
}

/* The good spec the bad ones spoil: an int key (column 0), a bytes column 1, min and sum. */
GpuopsQuerySpec
good_spec()
{
	GpuopsQuerySpec s;

	memset(&s, 0, sizeof(s));
	s.ncols = 2;
	s.bytes16[1] = 1;
	s.nkeys = 1;
	s.keys[0].kind = GPUOPS_QKEY_INT;
	s.keys[0].col = 0;
	s.naggs = 2;
	s.aggs[0].kind = GPUOPS_QAGG_MIN;
	s.aggs[0].arg_type = GPUOPS_ET_INT;
	s.aggs[0].arg_col = 0;
	s.aggs[1].kind = GPUOPS_QAGG_SUM_INT;
	s.aggs[1].arg_type = GPUOPS_ET_INT;
	s.aggs[1].arg_col = 0;
	s.group_capacity = 16;
	return s;
}

/* "" when the backend refuses every bad spec and takes the good one */
std::string
check_specs(const GpuopsQueryBackend *be)
{
	GpuopsSettings st = settings_for(0);
	GpuopsExprProgram prog;

	{
		GpuopsQuerySpec s = good_spec();
		EndGuard<GpuopsQuery> q(be->query_end);

		if (be->query_begin(&st, &s, &q.obj) != GPUOPS_OK)
			return std::string("the good spec failed: ") + gpuops_last_error();
	}
	for (const BadSpec &b : bad_specs())
	{
		GpuopsQuerySpec s = good_spec();
		EndGuard<GpuopsQuery> q(be->query_end);
		GpuopsStatus status;

		b.spoil(s, prog);
		status = be->query_begin(&st, &s, &q.obj);
		if (status != GPUOPS_ERR_INTERNAL || q.obj != nullptr)
			return std::string(b.what) + ": begin returned " + status_name(status);
	}
	return "";
}

/*
 * 200k groups under a 16 MB device budget: the twin has no budget and
 * must be right; the CUDA table (over 100 bytes a slot) cannot grow that
 * far and must say so.
 */
void
check_budget(Outcome &out)
{
	QCase c;

	for (auto &make : query_cases())
	{
		c = make();
		if (c.what.find("200k groups") != std::string::npos)
			break;
	}
	c.device_budget = 16u << 20;

	QResult ref = query_reference(c);
	QResult cpu = run_query(engines.cpu->query, c);

	out.cpu = compare_query(c, cpu, ref, ref, 0);
	if (!engines.cuda)
		return;
	begin_cuda_side(out);
	try
	{
		(void) run_query(engines.cuda->query, c);
		out.cuda = "200k groups fitted a 16 MB budget";
	}
	catch (const CallFailed &e)
	{
		if (std::string(e.what()).find("ERR_OUT_OF_MEMORY") == std::string::npos)
			out.cuda = std::string("expected ERR_OUT_OF_MEMORY: ") + e.what();
	}
}

} /* namespace */

void
query_tests()
{
	for (auto &make : query_cases())
	{
		QCase c = make();

		run_case(c.what, [&](Outcome &out) { check_query(out, c); });
	}
	/*
	 * The same cases with their rows as heap pages, deformed by the backend
	 * (query_pages.cpp): the same answers.  The largest are left out (the
	 * test builds their pages on one thread).
	 */
	int k = 0;

	for (auto &make : query_cases())
	{
		QCase c = make();

		if (c.n > 1100000)
			continue;
		c.pages = true;
		/* every other one read in place: its pages scattered in a mapped pool */
		c.in_place = k++ % 2 == 1;
		c.what = (c.in_place ? "pages in place: " : "pages: ") + c.what;
		run_case(c.what, [&](Outcome &out) { check_query(out, c); });
	}
	run_case("query bad specs fail at begin", [](Outcome &out) {
		out.cpu = check_specs(engines.cpu->query);
		if (!engines.cuda)
			return;
		begin_cuda_side(out);
		out.cuda = check_specs(engines.cuda->query);
	});
	run_case("query over the device budget: out of memory", check_budget);
}

} /* namespace dt */
