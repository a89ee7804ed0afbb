/*
 * device_test.h
 *    Device-layer unit tests (no PostgreSQL): what every operator's tests
 *    share.
 *
 * Each case generates its input from a fixed seed, runs the CPU twin and
 * checks its output against a reference the test computes in the plainest
 * way it can (std::stable_sort, a sorted multimap, nested loops), so that
 * the test can fail on a machine without a GPU; where a GPU is usable it
 * then runs the CUDA backend on the same input and checks that it gives
 * what the twin gave.
 *
 * Backend calls go through their documented protocol; a status other than
 * GPUOPS_OK (or GPUOPS_PENDING where the protocol allows it) throws
 * CallFailed with the backend's last error, and every object a backend
 * handed out is ended by a guard, also on the way out of a failure.
 */
#ifndef DEVICE_TEST_H
#define DEVICE_TEST_H

#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpuops_device.h"

namespace dt {

/* The engines under test: cuda is null where no GPU is usable. */
struct Engines
{
	const GpuopsDevice *cpu;
	const GpuopsDevice *cuda;
	std::string no_gpu_reason;
};

extern Engines engines;

/* A backend call that did not return GPUOPS_OK. */
class CallFailed : public std::runtime_error
{
  public:
	explicit CallFailed(const std::string &what) : std::runtime_error(what) {}
};

const char *status_name(GpuopsStatus status);

/* Throws CallFailed for anything but GPUOPS_OK, naming the call and the backend's message. */
void check_call(GpuopsStatus status, const char *call);

#define DT_CALL(expr) ::dt::check_call((expr), #expr)

/* Calls `step` until it stops returning GPUOPS_PENDING (an asynchronous backend). */
void wait_pending(const std::function<GpuopsStatus()> &step, const char *call);

/*
 * Ends a backend object on every way out of the scope that made it, so a
 * failing check never leaks device memory into the next case.
 */
template <class T>
class EndGuard
{
  public:
	EndGuard(void (*end)(T *) GPUOPS_NOEXCEPT) : end_(end) {}
	~EndGuard()
	{
		if (obj)
			end_(obj);
	}
	EndGuard(const EndGuard &) = delete;
	EndGuard &operator=(const EndGuard &) = delete;

	T *obj = nullptr;

  private:
	void (*end_)(T *) GPUOPS_NOEXCEPT;
};

/*
 * Settings both engines get.  An explicit budget makes them cut runs,
 * windows and probe batches alike (with 0 the CPU twin has no limit and
 * the CUDA backend takes 90% of the device).
 */
GpuopsSettings settings_for(size_t device_budget, size_t batch_bytes = 4u << 20);

/* The deterministic generator of every case's input. */
using Rng = std::mt19937_64;

/* A uniform integer in [lo, hi]. */
int64_t uniform(Rng &rng, int64_t lo, int64_t hi);

/* True with probability p. */
bool chance(Rng &rng, double p);

/* Bit i of a null bitmap. */
inline void
set_bit(std::vector<uint8_t> &bitmap, uint64_t i)
{
	bitmap[i >> 3] |= static_cast<uint8_t>(1u << (i & 7));
}

inline bool
get_bit(const uint8_t *bitmap, uint64_t i)
{
	return bitmap && ((bitmap[i >> 3] >> (i & 7)) & 1);
}

/* A bitmap (bit set = NULL) of flags[from, from + n), its trailing bits 0. */
std::vector<uint8_t> bitmap_of(const std::vector<uint8_t> &flags, uint64_t from, uint64_t n);

/* PostgreSQL's float order (float8_cmp_internal): NaNs equal and above all, -0 == 0. */
int pg_float_cmp(double a, double b);

inline double
as_double(uint64_t w)
{
	double d;

	memcpy(&d, &w, sizeof(d));
	return d;
}

inline uint64_t
double_bits(double d)
{
	uint64_t w;

	memcpy(&w, &d, sizeof(w));
	return w;
}

/* An interesting float8: NaNs (negative and with payloads), zeros of both signs, infinities, extremes. */
double special_double(Rng &rng);

/*
 * The outcome of one case: an empty string is a pass.  cuda_ran is false
 * where no GPU is usable.  A note is printed without failing the case: a
 * difference the tests do not hold against a backend (the order of join
 * pairs, where only the multiset is compared).
 */
struct Outcome
{
	std::string cpu;
	bool cuda_ran = false;
	std::string cuda;
	std::string note;
	std::string info; /* the output's size, printed with -v */
};

/*
 * Runs one case and prints its line: body(outcome) fills the outcome.  An
 * exception it throws fails the side it was on: the CPU side until the
 * body calls begin_cuda_side, the CUDA side after.
 */
void run_case(const std::string &title, const std::function<void(Outcome &)> &body);

/* Within a case body: everything after this call is the CUDA side's. */
inline void
begin_cuda_side(Outcome &out)
{
	out.cuda_ran = true;
}

/* Should this case run (the optional name filter on the command line)? */
bool selected(const std::string &title);

/* First difference of two sequences, for a message; empty when equal. */
template <class T>
std::string
first_difference(const std::vector<T> &got, const std::vector<T> &want,
				 const std::function<std::string(const T &)> &show)
{
	std::string sizes;

	if (got.size() != want.size())
		sizes = "got " + std::to_string(got.size()) + " items, expected " +
			std::to_string(want.size());
	for (size_t i = 0; i < got.size() && i < want.size(); i++)
		if (!(got[i] == want[i]))
			return (sizes.empty() ? "" : sizes + "; ") + "item " + std::to_string(i) + ": got " +
				show(got[i]) + ", expected " + show(want[i]);
	return sizes;
}

/* Every operator's suite. */
void sort_tests();
void hashjoin_tests();
void mergejoin_tests();
void agg_tests();
void nestloop_tests();
void pairfilter_tests();
void topn_tests();
void query_tests();
void page_cache_tests();

} /* namespace dt */

#endif
