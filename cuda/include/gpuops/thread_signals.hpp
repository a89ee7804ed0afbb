/*
 * thread_signals.hpp
 *    Threads that gpuops starts inside a PostgreSQL process must never run
 *    its signal handlers: PostgreSQL's handlers (statement_timeout's alarm,
 *    cancel, terminate) expect the backend's own thread, and a signal taken
 *    by a helper thread can arrive late on the main one (a cancel meant for
 *    one statement landing in the next).  A thread inherits its creator's
 *    signal mask, so threads are created while every signal is blocked.
 */
#ifndef GPUOPS_THREAD_SIGNALS_HPP
#define GPUOPS_THREAD_SIGNALS_HPP

#include <pthread.h>
#include <signal.h>

namespace gpuops {

/* While it lives, the calling thread blocks every signal (and so do the threads it starts). */
class SignalsBlocked
{
  public:
	SignalsBlocked() noexcept
	{
		sigset_t all;

		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old_);
	}
	~SignalsBlocked() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }
	SignalsBlocked(const SignalsBlocked &) = delete;
	SignalsBlocked &operator=(const SignalsBlocked &) = delete;

  private:
	sigset_t old_;
};

} /* namespace gpuops */

#endif
