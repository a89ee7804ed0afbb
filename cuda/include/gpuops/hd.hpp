/*
 * hd.hpp: the one definition of GPUOPS_HD, the qualifier of a function that
 * the CUDA kernels and the CPU twin (and src/, for the header-only formats)
 * compile from the same source.  Under nvcc it is __host__ __device__; under
 * a host compiler plain inline.
 *
 * Each header that needed it used to define it itself, two ways, so what a
 * function got depended on which header a file included first.
 * GPUOPS_HD_FORCE is for the few small functions on a kernel's innermost
 * path (key normalization) where the inlining must not be left to the
 * compiler's heuristics.
 */
#ifndef GPUOPS_HD_HPP
#define GPUOPS_HD_HPP

#ifdef __CUDACC__
#define GPUOPS_HD __host__ __device__ inline
#define GPUOPS_HD_FORCE __host__ __device__ __forceinline__
#else
#define GPUOPS_HD inline
#define GPUOPS_HD_FORCE inline
#endif

#endif /* GPUOPS_HD_HPP */
