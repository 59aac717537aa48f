/* direct_run: the in-process baseline for the kiln-serve benchmark. Opens a
 * model.so with dlopen, runs it on zeros `warmup` times, then times `n` runs
 * one by one and prints p50 / p99 / mean in microseconds as one JSON line.
 *
 *   direct_run model.so [n=20000] [warmup=1000] [batch_size=0]
 *
 * Build: cc -O2 -I<repo>/runtime/include direct_run.c -o direct_run -ldl */
#include <kiln/runtime.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: direct_run model.so [n] [warmup] [batch_size]\n");
    return 2;
  }
  int n = argc > 2 ? atoi(argv[2]) : 20000;
  int warmup = argc > 3 ? atoi(argv[3]) : 1000;
  int64_t batch = argc > 4 ? atoll(argv[4]) : 0;
  void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "direct_run: %s\n", dlerror());
    return 2;
  }
  const kiln_model_info *(*info_fn)(void) = dlsym(h, "kiln_get_model_info");
  kiln_status (*create)(const kiln_session_options *, kiln_session **) =
      dlsym(h, "kiln_session_create");
  kiln_status (*run)(kiln_session *, const kiln_tensor *, size_t, kiln_tensor *,
                     size_t) = dlsym(h, "kiln_run");
  size_t (*dsize)(int32_t) = dlsym(h, "kiln_dtype_size");
  if (!info_fn || !create || !run || !dsize) {
    fprintf(stderr, "direct_run: not a Kiln model\n");
    return 2;
  }
  const kiln_model_info *info = info_fn();
  kiln_session_options opts = {0};
  opts.struct_size = sizeof(opts);
  opts.batch_size = batch;
  kiln_session *s = NULL;
  kiln_status st = create(&opts, &s);
  if (st.code) {
    fprintf(stderr, "direct_run: %s\n", st.message);
    return 2;
  }
  kiln_tensor *in = calloc(info->num_inputs + 1, sizeof(kiln_tensor));
  kiln_tensor *out = calloc(info->num_outputs + 1, sizeof(kiln_tensor));
  int64_t shapes[2][16][8];
  for (int k = 0; k < 2; ++k) {
    uint32_t count = k ? info->num_outputs : info->num_inputs;
    const kiln_tensor_info *ti = k ? info->outputs : info->inputs;
    kiln_tensor *t = k ? out : in;
    for (uint32_t i = 0; i < count && i < 16; ++i) {
      size_t bytes = dsize(ti[i].dtype);
      for (int d = 0; d < ti[i].rank && d < 8; ++d) {
        shapes[k][i][d] = d == 0 && batch ? batch : ti[i].shape[d];
        bytes *= (size_t)shapes[k][i][d];
      }
      t[i].data = aligned_alloc(64, (bytes + 63) / 64 * 64);
      for (size_t b = 0; b < bytes; ++b)
        ((char *)t[i].data)[b] = 0;
      t[i].bytes = bytes;
      t[i].dtype = ti[i].dtype;
      t[i].rank = ti[i].rank;
      t[i].shape = shapes[k][i];
    }
  }
  double *lat = malloc(sizeof(double) * (size_t)n);
  for (int i = 0; i < warmup + n; ++i) {
    double t0 = now_us();
    st = run(s, in, info->num_inputs, out, info->num_outputs);
    double t1 = now_us();
    if (st.code) {
      fprintf(stderr, "direct_run: %s\n", st.message);
      return 2;
    }
    if (i >= warmup)
      lat[i - warmup] = t1 - t0;
  }
  qsort(lat, (size_t)n, sizeof(double), cmp);
  double mean = 0;
  for (int i = 0; i < n; ++i)
    mean += lat[i];
  mean /= n;
  printf(
      "{\"runs\": %d, \"p50_us\": %.2f, \"p99_us\": %.2f, \"mean_us\": %.2f, "
      "\"throughput\": %.1f}\n",
      n, lat[n / 2], lat[(int)(n * 0.99)], mean, 1e6 / mean);
  return 0;
}
