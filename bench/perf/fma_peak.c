/* Single-thread FMA peak probe, compiled by bench/perf/run.py with
 * cc -O3 -march=native. Runs CHAINS independent chains of packed fp32 FMAs on
 * registers (AVX-512 when the compiler targets it, else AVX2/FMA) and prints
 * "isa=<name> lanes=<n> chains=<c> gflops=<x>" for the best of REPS timed
 * repetitions (the best, because other processes can only slow a run down).
 *
 * usage: fma_peak [ITERATIONS [REPS]] */
#define _POSIX_C_SOURCE 200809L
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

#if defined(__AVX512F__)
#define ISA "avx512"
#define LANES 16
#define CHAINS 16
typedef __m512 vec;
#define SET1 _mm512_set1_ps
#define FMA _mm512_fmadd_ps
#define ADD _mm512_add_ps
static float hsum(vec v) { return _mm512_reduce_add_ps(v); }
#elif defined(__FMA__)
#define ISA "avx2"
#define LANES 8
/* AVX2 has 16 vector registers: 16 chains beside the two operands spilled
 * (52 GFLOP/s on a Zen 3 whose 12-chain loop reaches 88). */
#define CHAINS 12
typedef __m256 vec;
#define SET1 _mm256_set1_ps
#define FMA _mm256_fmadd_ps
#define ADD _mm256_add_ps
static float hsum(vec v) {
  float f[8];
  _mm256_storeu_ps(f, v);
  return f[0] + f[1] + f[2] + f[3] + f[4] + f[5] + f[6] + f[7];
}
#else
#error "fma_peak needs FMA (AVX2) or AVX-512"
#endif

#if CHAINS == 16
#define CHAIN(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15)
#else
#define CHAIN(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#endif
#define DECL(j) vec c##j = SET1((float)(j) * seed);
#define STEP(j) c##j = FMA(c##j, a, b);
#define SUM(j) s = ADD(s, c##j);

/* CHAINS named accumulators (not an array, so they stay in registers). The
 * FMAs are not reassociated without -ffast-math, so the loop cannot fold. */
static float kernel(long iters, float seed) {
  volatile float va = 0.999999f, vb = 1e-7f;
  vec a = SET1(va), b = SET1(vb * seed);
  CHAIN(DECL)
  for (long i = 0; i < iters; ++i) {
    CHAIN(STEP)
  }
  vec s = SET1(0.0f);
  CHAIN(SUM)
  return hsum(s);
}

int main(int argc, char **argv) {
  long iters = argc > 1 ? atol(argv[1]) : 5000000L;
  int reps = argc > 2 ? atoi(argv[2]) : 10;
  double best = 0, sink = 0;
  sink += kernel(iters / 10, 1.0f); /* warm up, let the clock settle */
  for (int r = 0; r < reps; ++r) {
    double t0 = now_s();
    sink += kernel(iters, 1.0f + r);
    double dt = now_s() - t0;
    double gflops = 2.0 * LANES * CHAINS * (double)iters / dt / 1e9;
    if (gflops > best)
      best = gflops;
  }
  printf("isa=%s lanes=%d chains=%d gflops=%.3f sink=%g\n", ISA, LANES, CHAINS, best, sink);
  return 0;
}
