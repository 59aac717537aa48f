/* What the raw C ABI drivers of the e2e tests share (symbolic_batch_driver.c,
 * symbolic_shapes_driver.c): a heap allocator that counts calls while
 * `counting` is set (kiln_run must make none), a CHECK that prints a failure
 * and counts it, the model opened with dlopen, the types of the entry points
 * looked up with dlsym, random inputs and a session. */
#ifndef KILN_TEST_E2E_ABI_DRIVER_H
#define KILN_TEST_E2E_ABI_DRIVER_H

#include "kiln/runtime.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
static int counting;
static unsigned long allocations;
void *malloc(size_t n) { allocations += counting; return __libc_malloc(n); }
void *calloc(size_t c, size_t n) { allocations += counting; return __libc_calloc(c, n); }
void *realloc(void *p, size_t n) { allocations += counting; return __libc_realloc(p, n); }

static int failures;
#define CHECK(cond, ...)                                                      \
  do {                                                                        \
    if (!(cond)) {                                                            \
      printf("FAILED: " __VA_ARGS__);                                         \
      printf("\n");                                                           \
      ++failures;                                                             \
    }                                                                         \
  } while (0)

typedef const kiln_model_info *(*info_fn)(void);
typedef const kiln_dims_info *(*dims_fn)(void);
typedef kiln_status (*create_fn)(const kiln_session_options *, kiln_session **);
typedef kiln_status (*run_fn)(kiln_session *, const kiln_tensor *, size_t,
                              kiln_tensor *, size_t);
typedef kiln_status (*shape_fn)(kiln_session *, size_t, int64_t *, size_t);
typedef void (*destroy_fn)(kiln_session *);

/* n values in [-0.5, 0.5] from srand(seed). */
static inline void fill_random(float *x, size_t n, unsigned seed) {
  srand(seed);
  for (size_t i = 0; i < n; ++i)
    x[i] = (float)rand() / RAND_MAX - 0.5f;
}

/* The model at `path`, opened with dlopen (RTLD_NOW | RTLD_LOCAL), or NULL
 * after printing why. */
static inline void *open_model(const char *path) {
  void *so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!so)
    printf("cannot load %s: %s\n", path, dlerror());
  return so;
}

/* A session with default options, or NULL after printing why. */
static inline kiln_session *new_session(create_fn create) {
  kiln_session *s = NULL;
  kiln_status st = create(NULL, &s);
  if (st.code) {
    printf("FAILED: kiln_session_create: %s\n", st.message);
    return NULL;
  }
  return s;
}

#endif
