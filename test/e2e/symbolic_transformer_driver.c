/* Drives the encoder of check_symbolic_transformer.py (input_ids and
 * attention_mask [batch, sequence] int64; last_hidden_state [batch,
 * sequence, 64] and pooler_output [batch, 64]) through the raw C ABI at
 * run-time sizes: one session runs several (batch, sequence) shapes with the
 * heap allocator counted (no call may allocate: every size the graph
 * computes from Shape is bounded by the arena planned at the maxima), each
 * output shape read back is the run's, and each first row of the hidden
 * state at a shape equals that of the same ids run alone (batch 1), to
 * 1e-4.
 *
 * usage: symbolic_transformer_driver MODEL.so
 * Exit status 0 when every check holds; each failure is printed. */
#include "abi_driver.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kBatch = 4, kSeq = 128, kWidth = 64 };
static run_fn run;
static shape_fn out_shape;

/* Runs ids/mask [b, t] into hidden and pooled (each sized at the maxima). */
static kiln_status run_at(kiln_session *s, const int64_t *ids,
                          const int64_t *mask, int64_t b, int64_t t,
                          float *hidden, float *pooled) {
  int64_t shape[2] = {b, t};
  size_t bytes = sizeof(int64_t) * (size_t)(b * t);
  kiln_tensor in[2] = {{(void *)ids, bytes, KILN_DTYPE_INT64, 2, shape},
                       {(void *)mask, bytes, KILN_DTYPE_INT64, 2, shape}};
  kiln_tensor out[2] = {
      {hidden, sizeof(float) * (size_t)(b * t * kWidth), KILN_DTYPE_FLOAT32, 0,
       NULL},
      {pooled, sizeof(float) * (size_t)(b * kWidth), KILN_DTYPE_FLOAT32, 0,
       NULL}};
  return run(s, in, 2, out, 2);
}

int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  void *so = open_model(argv[1]);
  if (!so)
    return 2;
  create_fn create = (create_fn)dlsym(so, "kiln_session_create");
  run = (run_fn)dlsym(so, "kiln_run");
  out_shape = (shape_fn)dlsym(so, "kiln_get_output_shape");
  destroy_fn destroy = (destroy_fn)dlsym(so, "kiln_session_destroy");
  if (!create || !run || !out_shape || !destroy) {
    printf("FAILED: the model lacks an entry point\n");
    return 1;
  }
  size_t cells = (size_t)kBatch * kSeq;
  int64_t *ids = malloc(sizeof(int64_t) * cells);
  int64_t *mask = malloc(sizeof(int64_t) * cells);
  float *hidden = malloc(sizeof(float) * cells * kWidth);
  float *pooled = malloc(sizeof(float) * kBatch * kWidth);
  float *alone = malloc(sizeof(float) * kSeq * kWidth);
  float *alonePooled = malloc(sizeof(float) * kWidth);
  srand(11);
  for (size_t i = 0; i < cells; ++i) {
    ids[i] = rand() % 1000;
    mask[i] = 1;
  }
  kiln_session *s = new_session(create);
  if (!s)
    return 1;
  const int64_t shapes[][2] = {{1, 1}, {4, 128}, {2, 37}, {3, 5}, {1, 128}};
  for (size_t k = 0; k < sizeof(shapes) / sizeof(shapes[0]); ++k) {
    int64_t b = shapes[k][0], t = shapes[k][1];
    /* Row 0 alone first (uncounted), then the whole batch, counted. */
    kiln_status st = run_at(s, ids, mask, 1, t, alone, alonePooled);
    CHECK(!st.code, "run at 1x%lld: %s", (long long)t, st.message);
    allocations = 0;
    counting = 1;
    st = run_at(s, ids, mask, b, t, hidden, pooled);
    counting = 0;
    CHECK(!st.code, "run at %lldx%lld: %s", (long long)b, (long long)t,
          st.message);
    CHECK(allocations == 0, "kiln_run at %lldx%lld allocated %lu times",
          (long long)b, (long long)t, allocations);
    int64_t shape[3] = {0, 0, 0};
    st = out_shape(s, 0, shape, 3);
    CHECK(!st.code && shape[0] == b && shape[1] == t && shape[2] == kWidth,
          "output 0 at %lldx%lld reads back as %lldx%lldx%lld",
          (long long)b, (long long)t, (long long)shape[0],
          (long long)shape[1], (long long)shape[2]);
    st = out_shape(s, 1, shape, 2);
    CHECK(!st.code && shape[0] == b && shape[1] == kWidth,
          "output 1 at %lldx%lld reads back as %lldx%lld", (long long)b,
          (long long)t, (long long)shape[0], (long long)shape[1]);
    /* The batch's first sample is the run of its ids alone: ids rows are
     * [b, t] packed, so row 0 is the first t ids either way. */
    float worst = 0;
    for (size_t i = 0; i < (size_t)(t * kWidth); ++i)
      worst = fmaxf(worst, fabsf(hidden[i] - alone[i]));
    CHECK(worst <= 1e-4f, "sample 0 at %lldx%lld differs from its run alone "
          "by %g", (long long)b, (long long)t, worst);
  }
  destroy(s);
  if (failures)
    return 1;
  printf("symbolic transformer driver: ok\n");
  return 0;
}
