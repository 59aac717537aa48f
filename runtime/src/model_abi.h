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

#endif
