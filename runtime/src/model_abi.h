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

#endif
