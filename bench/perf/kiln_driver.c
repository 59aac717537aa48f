/* Benchmark driver for one Kiln model, run by bench/perf/run.py.
 *
 * usage: kiln_driver MODEL.so THREADS INPUT_0.bin [INPUT_1.bin ...]
 *
 * Loads the model through its public C ABI (dlopen, like kiln-run), creates one
 * session with num_threads = THREADS and reads the inputs (raw little-endian
 * data in the model's input order). Then it serves commands on stdin, one per
 * line, so that run.py can alternate it with the ONNX Runtime driver:
 *
 *   run K          runs K times; prints "ok t1 t2 ... tK" (milliseconds each)
 *   dump PATH      writes output 0 of the last run to PATH, at the shape the
 *                  run gave it (kiln_get_output_shape: a size that depends on
 *                  the data, or on the inputs' sizes); prints "ok"
 *   quit
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kiln/runtime.h"

static void die(const char *what, const char *why) {
  fprintf(stderr, "kiln_driver: %s: %s\n", what, why ? why : "");
  exit(1);
}

static void *sym(void *h, const char *name) {
  void *p = dlsym(h, name);
  if (!p)
    die("missing symbol", name);
  return p;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static size_t tensor_bytes(const kiln_tensor_info *t, size_t (*dsize)(int32_t)) {
  size_t n = dsize(t->dtype);
  for (int32_t d = 0; d < t->rank; ++d)
    n *= (size_t)t->shape[d];
  return n;
}

static void *alloc64(size_t bytes) {
  void *p = NULL;
  if (posix_memalign(&p, 64, bytes ? bytes : 64))
    die("out of memory", "");
  memset(p, 0, bytes);
  return p;
}

int main(int argc, char **argv) {
  if (argc < 3)
    die("usage", "kiln_driver MODEL.so THREADS INPUT.bin...");
  void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!h)
    die("dlopen", dlerror());
  const kiln_model_info *(*info_fn)(void) = (const kiln_model_info *(*)(void))sym(h, "kiln_get_model_info");
  kiln_status (*create)(const kiln_session_options *, kiln_session **) =
      (kiln_status(*)(const kiln_session_options *, kiln_session **))sym(h, "kiln_session_create");
  kiln_status (*run)(kiln_session *, const kiln_tensor *, size_t, kiln_tensor *, size_t) =
      (kiln_status(*)(kiln_session *, const kiln_tensor *, size_t, kiln_tensor *, size_t))sym(h, "kiln_run");
  size_t (*dsize)(int32_t) = (size_t(*)(int32_t))sym(h, "kiln_dtype_size");
  /* Absent from models older than the run-time shapes of ABI v1. */
  kiln_status (*out_shape)(kiln_session *, size_t, int64_t *, size_t) =
      (kiln_status(*)(kiln_session *, size_t, int64_t *, size_t))dlsym(h, "kiln_get_output_shape");
  const kiln_model_info *info = info_fn();
  if ((int)info->num_inputs != argc - 3)
    die("input count", "the model's input count differs from the files given");

  kiln_tensor *in = calloc(info->num_inputs, sizeof(kiln_tensor));
  kiln_tensor *out = calloc(info->num_outputs, sizeof(kiln_tensor));
  for (uint32_t i = 0; i < info->num_inputs; ++i) {
    const kiln_tensor_info *t = &info->inputs[i];
    size_t bytes = tensor_bytes(t, dsize);
    in[i] = (kiln_tensor){alloc64(bytes), bytes, t->dtype, t->rank, t->shape};
    FILE *f = fopen(argv[3 + i], "rb");
    if (!f || fread(in[i].data, 1, bytes, f) != bytes)
      die("cannot read input", argv[3 + i]);
    fclose(f);
  }
  for (uint32_t i = 0; i < info->num_outputs; ++i) {
    const kiln_tensor_info *t = &info->outputs[i];
    size_t bytes = tensor_bytes(t, dsize);
    out[i] = (kiln_tensor){alloc64(bytes), bytes, t->dtype, t->rank, t->shape};
  }
  kiln_session_options opts;
  memset(&opts, 0, sizeof(opts));
  opts.struct_size = sizeof(opts);
  opts.num_threads = atoi(argv[2]);
  kiln_session *s = NULL;
  kiln_status st = create(&opts, &s);
  if (st.code)
    die("kiln_session_create", st.message);

  char line[4096];
  double *ms = NULL;
  size_t cap = 0;
  while (fgets(line, sizeof line, stdin)) {
    if (!strncmp(line, "run ", 4)) {
      size_t k = strtoul(line + 4, NULL, 10);
      if (k > cap) {
        cap = k;
        ms = realloc(ms, cap * sizeof(double));
      }
      for (size_t i = 0; i < k; ++i) {
        double t0 = now_ms();
        st = run(s, in, info->num_inputs, out, info->num_outputs);
        ms[i] = now_ms() - t0;
        if (st.code)
          die("kiln_run", st.message);
      }
      printf("ok");
      for (size_t i = 0; i < k; ++i)
        printf(" %.6f", ms[i]);
      printf("\n");
    } else if (!strncmp(line, "dump ", 5)) {
      line[strcspn(line, "\n")] = 0;
      size_t bytes = out[0].bytes;
      int64_t shape[64];
      int32_t rank = out[0].rank;
      if (out_shape && rank <= 64 && !out_shape(s, 0, shape, (size_t)rank).code) {
        kiln_tensor_info actual = {0};
        actual.dtype = out[0].dtype;
        actual.rank = rank;
        actual.shape = shape;
        bytes = tensor_bytes(&actual, dsize);
        if (bytes > out[0].bytes)
          die("output 0", "the run's shape exceeds the buffer");
      }
      FILE *f = fopen(line + 5, "wb");
      if (!f || fwrite(out[0].data, 1, bytes, f) != bytes)
        die("cannot write", line + 5);
      fclose(f);
      printf("ok\n");
    } else if (!strncmp(line, "quit", 4)) {
      break;
    } else {
      die("unknown command", line);
    }
    fflush(stdout);
  }
  return 0;
}
