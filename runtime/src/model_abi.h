/* The contract between the code kiln-compile generates and the runtime that is
 * linked into the same model.so. Not part of the public ABI. */
#ifndef KILN_RUNTIME_MODEL_ABI_H
#define KILN_RUNTIME_MODEL_ABI_H

#include "kiln/runtime.h"

/* Emitted by kiln-compile (lib/Target/ModelDescriptor.cpp) into every model. */
extern const kiln_model_info __kiln_model_info;

/* The compiled graph for batch variant `variant` (an index into
 * batch_sizes). `args` holds the data pointers of every input, then of every
 * output, then the arena base: num_inputs + num_outputs + 1 pointers. */
extern void __kiln_entry(uint32_t variant, void **args);

/* Runs fn(ctx, begin, end) over disjoint ranges that cover [0, count), on the
 * threads of the pool kiln_run made current (runtime/src/pool.c), or all on
 * the calling thread when there is none. The generated code calls it once per
 * parallel loop nest, with ctx pointing at the loop's captured values. */
void __kiln_parallel_for(void (*fn)(void *ctx, int64_t begin, int64_t end),
                         void *ctx, int64_t count)
    __attribute__((visibility("hidden")));

/* --target=cuda-emulated (runtime/src/emu.c): runs fn(ctx, t, t + 1) for
 * every t in [0, count) as fibers that switch at __kiln_emu_barrier, the
 * threads of one emulated GPU block. */
void __kiln_emu_fibers(void (*fn)(void *ctx, int64_t begin, int64_t end),
                       void *ctx, int64_t count)
    __attribute__((visibility("hidden")));
void __kiln_emu_barrier(void) __attribute__((visibility("hidden")));

/* A new key for one execution of a random op (runtime/src/runtime.c). */
uint64_t __kiln_random_key(uint64_t seed, uint32_t seeded)
    __attribute__((visibility("hidden")));

/* Run-time guards (a graph input that decides a shape the model was compiled
 * for, e.g. Reshape's `shape`): the generated code writes the number of a
 * failing guard (1-based) into the uint32 status word at the start of the
 * arena; kiln_run zeroes it before __kiln_entry and reports
 * messages[number - 1] after. Emitted only by models with guards (weak: a
 * model without any, or a test's fake model, leaves it undefined). */
typedef struct kiln_guard_table {
  uint32_t count;
  const char *const *messages;
} kiln_guard_table;
extern const kiln_guard_table __kiln_guard_table
    __attribute__((weak, visibility("hidden")));

/* Symbolic dimensions (kiln_get_dims_info); absent (weak) in static
 * models. */
extern const kiln_dims_info __kiln_dims_info
    __attribute__((weak, visibility("hidden")));

/* A model compiled with --target=cuda (lib/Target/GpuTarget.cpp): the graph
 * is a list of kernel launches that runtime/src/cuda.c replays through the
 * CUDA driver API (opened with dlopen). Absent (weak) in CPU models. */
typedef struct kiln_gpu_launch {
  uint32_t kernel;       /* index into kernel_names */
  uint32_t grid[3];
  uint32_t block[3];
  uint32_t shared_bytes; /* dynamic shared memory */
  uint32_t num_args;     /* kernel parameters: bare device pointers */
  uint32_t first_arg;    /* into args; each names a buffer slot: inputs,
                            outputs, the arena, the weights */
} kiln_gpu_launch;

typedef struct kiln_gpu_program {
  const char *arch;                  /* sm_80, sm_90 */
  const char *ptx;                   /* NUL-terminated */
  uint64_t ptx_bytes;                /* including the NUL */
  uint32_t num_kernels;
  uint32_t num_variants;             /* = kiln_model_info.num_batch_sizes */
  const char *const *kernel_names;
  const uint32_t *variant_first_launch; /* num_variants + 1 entries */
  const kiln_gpu_launch *launches;
  const uint32_t *args;
  const unsigned char *weights;      /* copied to the device per session */
  uint64_t weights_bytes;
  uint32_t max_args;
} kiln_gpu_program;
extern const kiln_gpu_program __kiln_gpu_program
    __attribute__((weak, visibility("hidden")));

/* Formats a status message into `buffer` (of `bytes` bytes) and returns the
 * status pointing at it (runtime.c; cuda.c uses it too). */
kiln_status kiln_internal_status(char *buffer, size_t bytes,
                                 kiln_status_code code, const char *fmt, ...)
    __attribute__((visibility("hidden"), format(printf, 4, 5)));

/* runtime/src/cuda.c, called by runtime.c for models with a GPU program.
 * Failures are formatted into `message` (`message_bytes` long). */
typedef struct kiln_cuda_session kiln_cuda_session;
kiln_status kiln_internal_cuda_session_create(uint32_t variant, char *message,
                                              size_t message_bytes,
                                              kiln_cuda_session **out)
    __attribute__((visibility("hidden")));
kiln_status kiln_internal_cuda_run(kiln_cuda_session *s,
                                   const kiln_tensor *inputs,
                                   kiln_tensor *outputs, char *message,
                                   size_t message_bytes)
    __attribute__((visibility("hidden")));
void kiln_internal_cuda_session_destroy(kiln_cuda_session *s)
    __attribute__((visibility("hidden")));

#endif
