/*
 * device_test.cpp
 *    Device-layer unit tests: the driver (which engines run, the case
 *    lines, the summary) and the helpers every suite shares.
 *
 *    device_test [--cuda-required] [-v] [substring ...]
 *
 * Without a usable GPU only the CPU twins run (each against the test's own
 * reference); --cuda-required then fails the run, for the GPU machine,
 * where a missing GPU must not pass as a twin-only run.  Substrings select
 * the cases whose title contains one of them; -v adds each case's time.
 */
#include "device_test.h"

#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <thread>

namespace dt {

Engines engines;

namespace {

int ncases = 0;
int nfailed = 0;
bool verbose = false;
std::vector<std::string> filters;

} /* namespace */

const char *
status_name(GpuopsStatus status)
{
	switch (status)
	{
		case GPUOPS_OK:
			return "OK";
		case GPUOPS_PENDING:
			return "PENDING";
		case GPUOPS_ERR_NO_DEVICE:
			return "ERR_NO_DEVICE";
		case GPUOPS_ERR_OUT_OF_MEMORY:
			return "ERR_OUT_OF_MEMORY";
		case GPUOPS_ERR_DEVICE:
			return "ERR_DEVICE";
		case GPUOPS_ERR_UNSUPPORTED:
			return "ERR_UNSUPPORTED";
		case GPUOPS_ERR_INTERNAL:
			return "ERR_INTERNAL";
		case GPUOPS_ERR_CANCELED:
			return "ERR_CANCELED";
	}
	return "unknown status";
}

void
check_call(GpuopsStatus status, const char *call)
{
	if (status != GPUOPS_OK)
		throw CallFailed(std::string(call) + " returned " + status_name(status) + ": " +
						 gpuops_last_error());
}

void
wait_pending(const std::function<GpuopsStatus()> &step, const char *call)
{
	GpuopsStatus status;

	/* the device answers within milliseconds; a short sleep keeps a core free */
	while ((status = step()) == GPUOPS_PENDING)
		std::this_thread::sleep_for(std::chrono::microseconds(50));
	check_call(status, call);
}

GpuopsSettings
settings_for(size_t device_budget, size_t batch_bytes)
{
	GpuopsSettings s;

	memset(&s, 0, sizeof(s));
	/* the GUC defaults' shape, smaller: many cases run in one process */
	s.pinned_pool_bytes = 64u << 20;
	s.batch_bytes = batch_bytes;
	s.streams = 4;
	s.device_memory_limit = device_budget;
	s.device_share = 1;
	s.fault = GPUOPS_FAULT_NONE;
	return s;
}

int64_t
uniform(Rng &rng, int64_t lo, int64_t hi)
{
	return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

bool
chance(Rng &rng, double p)
{
	return std::uniform_real_distribution<double>(0.0, 1.0)(rng) < p;
}

std::vector<uint8_t>
bitmap_of(const std::vector<uint8_t> &flags, uint64_t from, uint64_t n)
{
	std::vector<uint8_t> bm((n + 7) / 8, 0);

	for (uint64_t i = 0; i < n; i++)
		if (flags[from + i])
			set_bit(bm, i);
	return bm;
}

int
pg_float_cmp(double a, double b)
{
	if (std::isnan(a))
		return std::isnan(b) ? 0 : 1;
	if (std::isnan(b))
		return -1;
	return a > b ? 1 : (a < b ? -1 : 0);
}

double
special_double(Rng &rng)
{
	switch (uniform(rng, 0, 9))
	{
		case 0:
			return std::nan("");
		case 1:
			return -std::nan(""); /* a NaN with the sign bit set */
		case 2:
			return as_double(0x7ff0000000000123ull); /* a signalling NaN with a payload */
		case 3:
			return -0.0;
		case 4:
			return 0.0;
		case 5:
			return HUGE_VAL;
		case 6:
			return -HUGE_VAL;
		case 7:
			return uniform(rng, 0, 1) ? 1.7976931348623157e308 : -1.7976931348623157e308;
		case 8:
			return uniform(rng, 0, 1) ? 4.9e-324 : -4.9e-324; /* denormals */
		default:
			return static_cast<double>(uniform(rng, -3, 3)) / 2; /* ties among ordinary values */
	}
}

bool
selected(const std::string &title)
{
	if (filters.empty())
		return true;
	for (const std::string &f : filters)
		if (title.find(f) != std::string::npos)
			return true;
	return false;
}

void
run_case(const std::string &title, const std::function<void(Outcome &)> &body)
{
	Outcome out;
	auto t0 = std::chrono::steady_clock::now();
	std::string cpu_part, cuda_part;

	if (!selected(title))
		return;
	try
	{
		body(out);
	}
	catch (const std::exception &e)
	{
		(out.cuda_ran ? out.cuda : out.cpu) = e.what();
	}
	/* a twin that failed to run leaves the CUDA side nothing to compare with */
	if (!out.cuda_ran && engines.cuda && !out.cpu.empty())
		cuda_part = "cuda=cpu not compared";
	else if (!out.cuda_ran)
		cuda_part = engines.cuda ? "cuda=cpu not run" : "cuda=cpu skipped (no GPU)";
	else
		cuda_part = out.cuda.empty() ? "cuda=cpu ok" : "cuda=cpu FAILED: " + out.cuda;
	cpu_part = out.cpu.empty() ? "cpu=ref ok" : "cpu=ref FAILED: " + out.cpu;

	bool failed = !out.cpu.empty() || (out.cuda_ran && !out.cuda.empty());
	double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

	ncases++;
	nfailed += failed ? 1 : 0;
	printf("device: %s, %s, %s", title.c_str(), cpu_part.c_str(), cuda_part.c_str());
	if (!out.note.empty())
		printf(" (note: %s)", out.note.c_str());
	if (verbose)
		printf(" [%.2f s%s%s]", secs, out.info.empty() ? "" : ", ", out.info.c_str());
	printf("\n");
	fflush(stdout);
}

} /* namespace dt */

namespace {

/*
 * Is the CUDA engine usable?  The probe runs on a helper thread and says
 * -1 until it has an answer; no context is made.
 */
bool
cuda_usable(std::string *reason)
{
	int answer;

	while ((answer = gpuops_cuda_present_poll()) < 0)
		std::this_thread::sleep_for(std::chrono::milliseconds(1));
	if (answer == 1)
	{
		GpuopsDeviceInfo info;

		/* the sort backend's probe: the device the tests will run on */
		memset(&info, 0, sizeof(info));
		if (gpuops_cuda_backend()->probe(&info) == GPUOPS_OK && info.gpu_available)
		{
			printf("device: GPU %s (sm_%d%d, %.1f GiB), %s\n", info.name, info.cc_major,
				   info.cc_minor, info.total_memory / 1073741824.0, gpuops_build_info());
			return true;
		}
		*reason = info.reason[0] ? info.reason : gpuops_last_error();
		return false;
	}
	*reason = gpuops_last_error();
	return false;
}

} /* namespace */

int
main(int argc, char **argv)
{
	bool cuda_required = false;

	for (int i = 1; i < argc; i++)
	{
		std::string a = argv[i];

		if (a == "--cuda-required")
			cuda_required = true;
		else if (a == "-v")
			dt::verbose = true;
		else if (!a.empty() && a[0] == '-')
		{
			fprintf(stderr, "usage: %s [--cuda-required] [-v] [substring ...]\n", argv[0]);
			return 2;
		}
		else
			dt::filters.push_back(a);
	}

	dt::engines.cpu = gpuops_cpu_device();
	if (cuda_usable(&dt::engines.no_gpu_reason))
		dt::engines.cuda = gpuops_cuda_device();
	else
		printf("device: no usable GPU (%s): CPU twins only\n", dt::engines.no_gpu_reason.c_str());
	fflush(stdout);

	dt::sort_tests();
	dt::hashjoin_tests();
	dt::mergejoin_tests();
	dt::agg_tests();
	dt::nestloop_tests();
	dt::pairfilter_tests();
	dt::topn_tests();
	dt::query_tests();
	dt::page_cache_tests();

	if (dt::engines.cuda)
	{
		/* give the context back on the helper thread, and wait for it, before exit */
		(void) gpuops_cuda_idle(1, 1);
		gpuops_cuda_prewarm_wait();
	}

	printf("device tests: %d cases, %d failed (backends: cpu%s)\n", dt::ncases, dt::nfailed,
		   dt::engines.cuda ? ", cuda" : "");
	if (cuda_required && !dt::engines.cuda)
	{
		printf("device tests: --cuda-required, but no usable GPU: %s\n",
			   dt::engines.no_gpu_reason.c_str());
		return 1;
	}
	return dt::nfailed == 0 ? 0 : 1;
}
