/* The threads of an emulated GPU block (kiln-compile --target=cuda-emulated),
 * as fibers. kiln-gpu-emulate-on-host turns a kernel with barriers into loops
 * over its blocks around a loop over the block's threads, which the compiler
 * hands to __kiln_emu_fibers; gpu.barrier becomes __kiln_emu_barrier. Each
 * thread runs on its own stack until its next barrier (or its end), then the
 * next thread runs, so every thread reaches a barrier before any leaves it:
 * what the GPU guarantees, with no host threads and no locks. A testing aid,
 * not a fast path: each switch is a swapcontext.
 *
 * The stacks are allocated the first time a thread of the host needs them
 * and kept for the next blocks (the model's arena plan does not cover them).
 * Depends on libc only. */
#include "model_abi.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <ucontext.h>

typedef void (*kiln_task_fn)(void *ctx, int64_t begin, int64_t end);

/* Per fiber: the kernels' frames are small (loops over registers and shared
 * memory), libm calls included. */
#define KILN_FIBER_STACK ((size_t)128 * 1024)

typedef struct fiber {
  ucontext_t context;
  int done;
} fiber;

/* One scheduler per host thread: two sessions may emulate at once. */
static __thread struct {
  ucontext_t scheduler;
  fiber *fibers;
  char *stacks;
  int64_t capacity;
  int64_t current;
  int running;
  kiln_task_fn fn;
  void *ctx;
} emu;

static void fiber_main(void) {
  int64_t i = emu.current;
  emu.fn(emu.ctx, i, i + 1);
  emu.fibers[i].done = 1;
  /* Returning resumes uc_link: the scheduler. */
}

static int reserve(int64_t count) {
  if (count <= emu.capacity)
    return 1;
  fiber *fibers = realloc(emu.fibers, (size_t)count * sizeof(fiber));
  if (!fibers)
    return 0;
  emu.fibers = fibers;
  if (emu.stacks)
    munmap(emu.stacks, (size_t)emu.capacity * KILN_FIBER_STACK);
  emu.capacity = 0;
  void *stacks = mmap(NULL, (size_t)count * KILN_FIBER_STACK,
                      PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                      -1, 0);
  if (stacks == MAP_FAILED) {
    emu.stacks = NULL;
    return 0;
  }
  emu.stacks = stacks;
  emu.capacity = count;
  return 1;
}

__attribute__((visibility("hidden"))) void
__kiln_emu_fibers(kiln_task_fn fn, void *ctx, int64_t count) {
  if (count <= 0)
    return;
  if (!reserve(count)) {
    /* No status can reach the caller from here, and running the threads one
     * after another would compute wrong numbers: stop loudly. Only models
     * compiled with --target=cuda-emulated, a testing target, get here. */
    fprintf(stderr, "kiln: cannot allocate %lld fiber stacks for the GPU "
                    "emulation\n", (long long)count);
    abort();
  }
  emu.fn = fn;
  emu.ctx = ctx;
  for (int64_t i = 0; i < count; ++i) {
    fiber *f = &emu.fibers[i];
    getcontext(&f->context);
    f->context.uc_stack.ss_sp = emu.stacks + (size_t)i * KILN_FIBER_STACK;
    f->context.uc_stack.ss_size = KILN_FIBER_STACK;
    f->context.uc_link = &emu.scheduler;
    makecontext(&f->context, fiber_main, 0);
    f->done = 0;
  }
  /* Rounds: every live thread runs to its next barrier or its end. */
  emu.running = 1;
  for (int64_t live = count; live > 0;) {
    for (int64_t i = 0; i < count; ++i) {
      if (emu.fibers[i].done)
        continue;
      emu.current = i;
      swapcontext(&emu.scheduler, &emu.fibers[i].context);
      if (emu.fibers[i].done)
        --live;
    }
  }
  emu.running = 0;
}

__attribute__((visibility("hidden"))) void __kiln_emu_barrier(void) {
  /* Outside a block's fibers (a one-thread block, run inline) there is
   * nobody to wait for. */
  if (!emu.running)
    return;
  swapcontext(&emu.fibers[emu.current].context, &emu.scheduler);
}
