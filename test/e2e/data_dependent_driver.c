/* Drives the model of check_data_dependent.py step 7 (x [3, 5] float32;
 * y = NonZero(x), [2, count], count known only after the run) through the
 * raw C ABI: the model declares y at its largest size (2 x 15) with axis 1
 * computed (-2), one session runs inputs with 0, some and all 15 elements
 * non-zero with the heap allocator counted (no call may allocate), the
 * shape read back after each run is the count, the coordinates are those
 * of the non-zero elements in row-major order, and an output buffer smaller
 * than the largest size is refused with a status.
 *
 * usage: data_dependent_driver MODEL.so
 * Exit status 0 when every check holds; each failure is printed. */
#include "abi_driver.h"

#include <dlfcn.h>
#include <string.h>

enum { kRows = 3, kCols = 5, kAll = kRows * kCols };

int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  void *so = open_model(argv[1]);
  if (!so)
    return 2;
  info_fn get_info = (info_fn)dlsym(so, "kiln_get_model_info");
  dims_fn get_dims = (dims_fn)dlsym(so, "kiln_get_dims_info");
  create_fn create = (create_fn)dlsym(so, "kiln_session_create");
  run_fn run = (run_fn)dlsym(so, "kiln_run");
  shape_fn out_shape = (shape_fn)dlsym(so, "kiln_get_output_shape");
  destroy_fn destroy = (destroy_fn)dlsym(so, "kiln_session_destroy");
  if (!get_info || !get_dims || !create || !run || !out_shape || !destroy) {
    printf("FAILED: missing an entry point\n");
    return 1;
  }
  const kiln_model_info *info = get_info();
  const kiln_dims_info *dims = get_dims();
  CHECK(info->num_outputs == 1 && info->outputs[0].rank == 2 &&
            info->outputs[0].shape[0] == 2 && info->outputs[0].shape[1] == kAll,
        "y is declared at its largest size [2, %d]", kAll);
  CHECK(dims && dims->num_symbols == 0 &&
            (dims->flags & KILN_DIMS_RUNTIME_EXTENTS) &&
            dims->output_symbols[0][1] == -2,
        "kiln_dims_info: no symbols, run-time extents, y's axis 1 computed");

  kiln_session *s = new_session(create);
  if (!s)
    return 1;
  float x[kAll];
  int64_t y[2 * kAll];
  int64_t xs[2] = {kRows, kCols};
  int patterns[] = {0, 1, 7, kAll}; /* non-zero elements: none .. all */
  for (size_t p = 0; p < sizeof(patterns) / sizeof(patterns[0]); ++p) {
    memset(x, 0, sizeof(x));
    int want = 0;
    int64_t want_coords[2 * kAll];
    for (int i = 0; i < kAll; ++i)
      if ((i * 7) % kAll < patterns[p]) /* spread over the rows */
        x[i] = (float)(i + 1) * (i % 2 ? -1.0f : 1.0f);
    for (int i = 0; i < kAll; ++i)
      if (x[i] != 0.0f) {
        want_coords[want] = i / kCols;
        want_coords[kAll + want] = i % kCols;
        ++want;
      }
    kiln_tensor in = {x, sizeof(x), KILN_DTYPE_FLOAT32, 2, xs};
    kiln_tensor out = {y, sizeof(y), KILN_DTYPE_INT64, 0, NULL};
    counting = 1;
    allocations = 0;
    kiln_status st = run(s, &in, 1, &out, 1);
    counting = 0;
    CHECK(st.code == KILN_OK, "run with %d non-zero: %s", want, st.message);
    CHECK(allocations == 0, "run with %d non-zero allocated %lu times", want,
          allocations);
    int64_t shape[2] = {-1, -1};
    st = out_shape(s, 0, shape, 2);
    CHECK(st.code == KILN_OK && shape[0] == 2 && shape[1] == want,
          "output shape [%lld, %lld], want [2, %d]", (long long)shape[0],
          (long long)shape[1], want);
    /* The run writes y packed at its actual shape [2, want]. */
    for (int j = 0; j < want && shape[1] == want; ++j)
      CHECK(y[j] == want_coords[j] && y[want + j] == want_coords[kAll + j],
            "coordinate %d of %d: (%lld, %lld), want (%lld, %lld)", j, want,
            (long long)y[j], (long long)y[want + j],
            (long long)want_coords[j], (long long)want_coords[kAll + j]);
  }
  /* A buffer for fewer than the largest count is refused, whatever the
   * data would give. */
  memset(x, 0, sizeof(x));
  kiln_tensor in = {x, sizeof(x), KILN_DTYPE_FLOAT32, 2, xs};
  kiln_tensor small = {y, sizeof(int64_t) * 2 * (kAll - 1), KILN_DTYPE_INT64, 0,
                       NULL};
  kiln_status st = run(s, &in, 1, &small, 1);
  CHECK(st.code == KILN_INVALID_ARGUMENT && strstr(st.message, "needs 240"),
        "a 224-byte output buffer: %s", st.message ? st.message : "(ok)");
  destroy(s);
  if (failures)
    return 1;
  printf("data_dependent_driver: ok (counts 0, 1, 7, 15; no allocation)\n");
  return 0;
}
