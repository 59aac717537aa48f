/* What the runtime unit test knows about fake_model.c. */
#ifndef KILN_TEST_RUNTIME_FAKE_MODEL_H
#define KILN_TEST_RUNTIME_FAKE_MODEL_H

#ifdef __cplusplus
extern "C" {
#endif

#define FAKE_MODEL_DEFAULT_ISA "sse4.2,avx2,fma"
#define FAKE_MODEL_ARENA_BYTES 256
#define FAKE_MODEL_ARENA_ALIGNMENT 64

/* The model's required_isa string (writable, so tests can break the guard). */
extern char fake_model_required_isa[64];
/* The arena the last __kiln_entry call on this thread received. */
void *fake_model_last_arena(void);
/* How many times __kiln_entry ran on this thread. */
unsigned long fake_model_calls(void);
/* Called (when set) from inside __kiln_entry, while the model runs. */
extern void (*fake_model_during_run)(void *context);
extern void *fake_model_during_run_context;

#ifdef __cplusplus
}
#endif

#endif
