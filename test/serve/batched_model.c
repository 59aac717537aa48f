/* A hand-written model with three batch variants (1, 4, 8), linked with the
 * real runtime object, so the kiln-serve batcher can be tested whatever
 * kiln-compile --batch-sizes can do today:
 *
 *   y[b,4] float32 = 2 * x[b,4] + 1      (row by row, so padding is harmless)
 *
 * Every run also checks that the arena is as large as its variant needs. */
#include "model_abi.h"

#include <string.h>

static const int64_t x_shape[] = {1, 4};
static const kiln_tensor_info inputs[] = {
    {"x", x_shape, KILN_DTYPE_FLOAT32, 2}};
static const kiln_tensor_info outputs[] = {
    {"y", x_shape, KILN_DTYPE_FLOAT32, 2}};
static const int64_t batch_sizes[] = {1, 4, 8};
static const uint64_t batch_arena_bytes[] = {64, 256, 512};

const kiln_model_info __kiln_model_info = {
    KILN_ABI_VERSION,
    1,
    1,
    3,
    "fake_batched",
    "0000000000000000000000000000000000000000000000000000000000000000",
    "kiln-test 0",
    "--batch-sizes 1,4,8",
    "x86_64-unknown-linux-gnu",
    "x86-64",
    "",
    inputs,
    outputs,
    batch_sizes,
    512,
    64,
    batch_arena_bytes,
};

void __kiln_entry(uint32_t variant, void **args) {
  int64_t b = batch_sizes[variant];
  const float *x = (const float *)args[0];
  float *y = (float *)args[1];
  memset(args[2], 0, (size_t)batch_arena_bytes[variant]);
  for (int64_t i = 0; i < b * 4; ++i)
    y[i] = 2.0f * x[i] + 1.0f;
}
