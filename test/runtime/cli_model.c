/* A hand-written model for testing kiln-run end to end without kiln-compile:
 * five inputs of different element types, including a scalar, and one output
 * computed from each. Built as a MODULE with the real runtime object.
 *
 *   y[2,3]   float32 = x[2,3] + (float)idx[3]
 *   idx1[3]  int64   = idx + 1
 *   nmask[2] bool    = !mask[2]
 *   hneg[4]  float16 = -h[4]        (sign bit flipped)
 *   s2[]     int32   = 2 * s[]
 *
 * CLI_MODEL_REQUIRED_ISA and CLI_MODEL_ABI_VERSION let CMake build variants
 * that fail the CPU guard or the ABI version check; CLI_MODEL_X_DIM0,
 * CLI_MODEL_X_DTYPE and CLI_MODEL_BATCH_SIZES, variants whose metadata the
 * model client must refuse (test/Client). */
#include "model_abi.h"

#include <string.h>

#ifndef CLI_MODEL_REQUIRED_ISA
#define CLI_MODEL_REQUIRED_ISA "sse4.2,avx2"
#endif
#ifndef CLI_MODEL_ABI_VERSION
#define CLI_MODEL_ABI_VERSION KILN_ABI_VERSION
#endif
#ifndef CLI_MODEL_X_DIM0
#define CLI_MODEL_X_DIM0 2
#endif
#ifndef CLI_MODEL_X_DTYPE
#define CLI_MODEL_X_DTYPE KILN_DTYPE_FLOAT32
#endif
#ifndef CLI_MODEL_BATCH_SIZES
#define CLI_MODEL_BATCH_SIZES 1
#endif

static const int64_t x_shape[] = {CLI_MODEL_X_DIM0, 3};
static const int64_t idx_shape[] = {3};
static const int64_t mask_shape[] = {2};
static const int64_t h_shape[] = {4};

static const kiln_tensor_info inputs[] = {
    {"x", x_shape, CLI_MODEL_X_DTYPE, 2},
    {"idx", idx_shape, KILN_DTYPE_INT64, 1},
    {"mask", mask_shape, KILN_DTYPE_BOOL, 1},
    {"h", h_shape, KILN_DTYPE_FLOAT16, 1},
    {"s", NULL, KILN_DTYPE_INT32, 0},
};
static const kiln_tensor_info outputs[] = {
    {"y", x_shape, KILN_DTYPE_FLOAT32, 2},
    {"idx1", idx_shape, KILN_DTYPE_INT64, 1},
    {"nmask", mask_shape, KILN_DTYPE_BOOL, 1},
    {"hneg", h_shape, KILN_DTYPE_FLOAT16, 1},
    {"s2", NULL, KILN_DTYPE_INT32, 0},
};
static const int64_t batch_sizes[] = {CLI_MODEL_BATCH_SIZES};

const kiln_model_info __kiln_model_info = {
    CLI_MODEL_ABI_VERSION,
    5,
    5,
    sizeof(batch_sizes) / sizeof(batch_sizes[0]),
    "cli_model",
    "feedfacefeedfacefeedfacefeedfacefeedfacefeedfacefeedfacefeedface",
    "kiln-test 0",
    "--fake",
    "x86_64-unknown-linux-gnu",
    "x86-64-v3",
    CLI_MODEL_REQUIRED_ISA,
    inputs,
    outputs,
    batch_sizes,
    128,
    64,
};

void __kiln_entry(uint32_t variant, void **args) {
  (void)variant;
  const float *x = (const float *)args[0];
  const int64_t *idx = (const int64_t *)args[1];
  const unsigned char *mask = (const unsigned char *)args[2];
  const uint16_t *h = (const uint16_t *)args[3];
  const int32_t *s = (const int32_t *)args[4];
  float *y = (float *)args[5];
  int64_t *idx1 = (int64_t *)args[6];
  unsigned char *nmask = (unsigned char *)args[7];
  uint16_t *hneg = (uint16_t *)args[8];
  int32_t *s2 = (int32_t *)args[9];
  memset(args[10], 0, 128); /* the arena must be there and big enough */
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      y[i * 3 + j] = x[i * 3 + j] + (float)idx[j];
  for (int j = 0; j < 3; ++j)
    idx1[j] = idx[j] + 1;
  for (int j = 0; j < 2; ++j)
    nmask[j] = !mask[j];
  for (int j = 0; j < 4; ++j)
    hneg[j] = (uint16_t)(h[j] ^ 0x8000u);
  *s2 = 2 * *s;
}
