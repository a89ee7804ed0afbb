// How long N processes take to set up CUDA at once, phase by phase: what a
// parallel plan pays when every worker opens its own context. Build and run
// on the GPU machine: nvcc -O2 -o /tmp/ctx_probe test/bench/ctx_probe.cu &&
// /tmp/ctx_probe NPROC PINNED_MB
#include <cuda_runtime.h>
#include <sys/wait.h>
#include <unistd.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>

static double now_ms()
{
	using namespace std::chrono;
	return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

static void child(int id, size_t pinned_mb, double t0)
{
	double a = now_ms();
	cudaSetDevice(0);
	cudaFree(nullptr);
	double b = now_ms();
	cudaStream_t s[4];
	for (auto &x : s) cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking);
	double c = now_ms();
	void *pinned = nullptr;
	if (cudaHostAlloc(&pinned, pinned_mb << 20, cudaHostAllocDefault) != cudaSuccess) printf("hostalloc failed\n");
	double d = now_ms();
	void *dev = nullptr;
	cudaMallocAsync(&dev, 256u << 20, s[0]);
	cudaMemcpyAsync(dev, pinned, 1 << 20, cudaMemcpyHostToDevice, s[0]);
	cudaStreamSynchronize(s[0]);
	double e = now_ms();
	printf("proc %d: start %.0f context %.0f streams %.0f pinned %.0f first alloc+copy %.0f  done at %.0f ms\n",
	       id, a - t0, b - a, c - b, d - c, e - d, e - t0);
	fflush(stdout);
	cudaFreeHost(pinned);
	double f = now_ms();
	printf("proc %d: free pinned %.0f ms\n", id, f - e);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;
	size_t mb = argc > 2 ? strtoul(argv[2], nullptr, 10) : 256;
	double t0 = now_ms();
	for (int i = 0; i < n; i++)
		if (fork() == 0) { child(i, mb, t0); _exit(0); }
	while (wait(nullptr) > 0) {}
	printf("all %d processes: %.0f ms\n", n, now_ms() - t0);
}
