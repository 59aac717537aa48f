/* A hand-written model whose metadata breaks one rule the model client
 * checks, chosen at build time (see CMakeLists.txt): a negative dimension
 * (BAD_MODEL_DIM0=-2), an element type Kiln does not carry
 * (BAD_MODEL_DTYPE=8), batch sizes out of order (BAD_MODEL_BATCH_SIZES=4,2),
 * or several variants whose tensors do not lead with the batch size
 * (BAD_MODEL_DIM0=3 with BAD_MODEL_BATCH_SIZES=2,4). Linked with the real
 * runtime object; it never runs.
 *
 *   y[2,3] = x[2,3] */
#include "model_abi.h"

#include <string.h>

#ifndef BAD_MODEL_DIM0
#define BAD_MODEL_DIM0 2
#endif
#ifndef BAD_MODEL_DTYPE
#define BAD_MODEL_DTYPE KILN_DTYPE_FLOAT32
#endif
#ifndef BAD_MODEL_BATCH_SIZES
#define BAD_MODEL_BATCH_SIZES 2
#endif

static const int64_t x_shape[] = {BAD_MODEL_DIM0, 3};
static const kiln_tensor_info inputs[] = {
    {"x", x_shape, BAD_MODEL_DTYPE, 2}};
static const kiln_tensor_info outputs[] = {
    {"y", x_shape, KILN_DTYPE_FLOAT32, 2}};
static const int64_t batch_sizes[] = {BAD_MODEL_BATCH_SIZES};

const kiln_model_info __kiln_model_info = {
    KILN_ABI_VERSION,
    1,
    1,
    sizeof(batch_sizes) / sizeof(batch_sizes[0]),
    "bad_model",
    "",
    "kiln-test 0",
    "--fake",
    "x86_64-unknown-linux-gnu",
    "x86-64",
    "",
    inputs,
    outputs,
    batch_sizes,
    64,
    64,
};

void __kiln_entry(uint32_t variant, void **args) {
  (void)variant;
  memcpy(args[1], args[0], 6 * sizeof(float));
}
