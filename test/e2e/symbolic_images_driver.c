/* Drives a model with one NCHW float input whose batch, height and width are
 * symbolic and one float output (check_symbolic_images.py) through the raw
 * C ABI: one session runs every shape given, with the heap allocator
 * counted (no run may allocate), into an output buffer sized as the ABI
 * says (an axis the model computes from the symbols at its maximum), and
 * reads each output shape back; a height
 * above its range is refused with KILN_INVALID_ARGUMENT. Each shape's
 * output is written to OUT_DIR/y_<k>.bin for the caller to compare.
 *
 * usage: symbolic_images_driver MODEL.so OUT_DIR C  N H W  N2 C2 OH OW  ...
 *   (per shape: the input's N, H, W and the expected output's 4 sizes)
 * Exit status 0 when every check holds; each failure is printed. */
#include "abi_driver.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  if (argc < 11 || (argc - 4) % 7)
    return 2;
  void *so = open_model(argv[1]);
  if (!so)
    return 2;
  dims_fn get_dims = (dims_fn)dlsym(so, "kiln_get_dims_info");
  create_fn create = (create_fn)dlsym(so, "kiln_session_create");
  run_fn run = (run_fn)dlsym(so, "kiln_run");
  shape_fn out_shape = (shape_fn)dlsym(so, "kiln_get_output_shape");
  destroy_fn destroy = (destroy_fn)dlsym(so, "kiln_session_destroy");
  const kiln_dims_info *dims = get_dims ? get_dims() : NULL;
  if (!dims || !(dims->flags & KILN_DIMS_RUNTIME_EXTENTS) ||
      dims->num_symbols != 3) {
    printf("FAILED: the model does not run batch, h and w at run-time sizes\n");
    return 1;
  }
  info_fn get_info = (info_fn)dlsym(so, "kiln_get_model_info");
  const kiln_tensor_info *yInfo = &get_info()->outputs[0];
  int64_t c = atoll(argv[3]), maxH = dims->symbols[1].max;
  int shapes = (argc - 4) / 7;
  /* Buffers for the largest input and output. */
  size_t inMax = 0, outMax = 0;
  for (int k = 0; k < shapes; ++k) {
    const char **v = (const char **)argv + 4 + 7 * k;
    size_t in = (size_t)(atoll(v[0]) * c * atoll(v[1]) * atoll(v[2]));
    size_t out = (size_t)(atoll(v[3]) * atoll(v[4]) * atoll(v[5]) * atoll(v[6]));
    inMax = in > inMax ? in : inMax;
    outMax = out > outMax ? out : outMax;
  }
  size_t yMax = 1;
  for (int a = 0; a < yInfo->rank; ++a)
    yMax *= (size_t)yInfo->shape[a];
  outMax = yMax > outMax ? yMax : outMax;
  size_t refuseIn = (size_t)(c * (maxH + 1) * 32);
  inMax = refuseIn > inMax ? refuseIn : inMax;
  float *x = malloc(sizeof(float) * inMax), *y = malloc(sizeof(float) * outMax);
  fill_random(x, inMax, 11);
  kiln_session *s = new_session(create);
  if (!s)
    return 1;
  kiln_status st;
  for (int k = 0; k < shapes; ++k) {
    int64_t v[7];
    for (int i = 0; i < 7; ++i)
      v[i] = atoll(argv[4 + 7 * k + i]);
    int64_t xs[4] = {v[0], c, v[1], v[2]};
    size_t outN = (size_t)(v[3] * v[4] * v[5] * v[6]);
    /* The buffer the ABI asks for: a symbol's axis at its size in this
     * run, any other at its kiln_model_info size. */
    size_t need = 1;
    for (int a = 0; a < yInfo->rank; ++a) {
      int32_t sym = dims->output_symbols[0][a];
      int64_t size = yInfo->shape[a];
      for (int i = 0; i < 4 && sym >= 0; ++i)
        if (dims->input_symbols[0][i] == sym)
          size = xs[i];
      need *= (size_t)size;
    }
    kiln_tensor in = {x, sizeof(float) * (size_t)(v[0] * c * v[1] * v[2]),
                      KILN_DTYPE_FLOAT32, 4, xs};
    kiln_tensor out = {y, sizeof(float) * need, KILN_DTYPE_FLOAT32, 0, NULL};
    counting = 1;
    st = run(s, &in, 1, &out, 1);
    counting = 0;
    CHECK(!st.code, "run at %lldx%lldx%lld: %s", (long long)v[0],
          (long long)v[1], (long long)v[2], st.message);
    int64_t shape[4];
    CHECK(!out_shape(s, 0, shape, 4).code && shape[0] == v[3] &&
              shape[1] == v[4] && shape[2] == v[5] && shape[3] == v[6],
          "at %lldx%lldx%lld the output has the shape %lldx%lldx%lldx%lld",
          (long long)v[0], (long long)v[1], (long long)v[2],
          (long long)shape[0], (long long)shape[1], (long long)shape[2],
          (long long)shape[3]);
    char path[4096];
    snprintf(path, sizeof path, "%s/y_%d.bin", argv[2], k);
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(y, sizeof(float), outN, f) == outN, "cannot write %s",
          path);
    if (f)
      fclose(f);
  }
  CHECK(allocations == 0, "kiln_run allocated %lu times", allocations);

  /* A height above the range: refused, naming the axis and the range. */
  int64_t xs[4] = {1, c, maxH + 1, 32};
  kiln_tensor in = {x, sizeof(float) * refuseIn, KILN_DTYPE_FLOAT32, 4, xs};
  kiln_tensor out = {y, sizeof(float) * outMax, KILN_DTYPE_FLOAT32, 0, NULL};
  st = run(s, &in, 1, &out, 1);
  CHECK(st.code == KILN_INVALID_ARGUMENT && strstr(st.message, "outside the range"),
        "a height of %lld was not refused: %s", (long long)(maxH + 1),
        st.message ? st.message : "");
  destroy(s);
  free(x);
  free(y);
  if (failures)
    return 1;
  printf("symbolic images driver: ok\n");
  return 0;
}
