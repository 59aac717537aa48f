/* A hand-written stand-in for what kiln-compile emits, for the runtime unit
 * test: y[2,3] = a[2,3] + b[3], computed in the arena so the test can tell
 * which arena the runtime handed to the entry point. */
#include "fake_model.h"
#include "model_abi.h"

#include <string.h>

static const int64_t a_shape[] = {2, 3};
static const int64_t b_shape[] = {3};
static const int64_t y_shape[] = {2, 3};
static const kiln_tensor_info inputs[] = {
    {"a", a_shape, KILN_DTYPE_FLOAT32, 2},
    {"b", b_shape, KILN_DTYPE_FLOAT32, 1},
};
static const kiln_tensor_info outputs[] = {
    {"y", y_shape, KILN_DTYPE_FLOAT32, 2},
};
static const int64_t batch_sizes[] = {1};

/* Writable so a test can make the CPU guard fail; the metadata stays const. */
char fake_model_required_isa[64] = FAKE_MODEL_DEFAULT_ISA;

const kiln_model_info __kiln_model_info = {
    KILN_ABI_VERSION,
    2,
    1,
    1,
    "fake_add",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "kiln-test 0",
    "--fake",
    "x86_64-unknown-linux-gnu",
    "x86-64-v3",
    fake_model_required_isa,
    inputs,
    outputs,
    batch_sizes,
    FAKE_MODEL_ARENA_BYTES,
    FAKE_MODEL_ARENA_ALIGNMENT,
};

static __thread void *last_arena;
static __thread unsigned long calls;

void *fake_model_last_arena(void) { return last_arena; }
unsigned long fake_model_calls(void) { return calls; }

void (*fake_model_during_run)(void *context);
void *fake_model_during_run_context;

void __kiln_entry(uint32_t variant, void **args) {
  (void)variant;
  if (fake_model_during_run)
    fake_model_during_run(fake_model_during_run_context);
  const float *a = (const float *)args[0];
  const float *b = (const float *)args[1];
  float *y = (float *)args[2];
  float *scratch = (float *)args[3];
  last_arena = args[3];
  ++calls;
  /* Dirty the whole arena first: an undersized one would corrupt the heap. */
  memset(scratch, 0x5a, FAKE_MODEL_ARENA_BYTES);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      scratch[i * 3 + j] = a[i * 3 + j] + b[j];
  memcpy(y, scratch, 6 * sizeof(float));
}
