/* Counts heap allocations made on the current thread while counting is on, so
 * the runtime test can check that kiln_run never allocates. It replaces the
 * malloc family for the whole test binary (symbol interposition) and forwards
 * to glibc's own entry points; nothing else changes. */
#include "alloc_counter.h"

#include <errno.h>
#include <stddef.h>

extern void *__libc_malloc(size_t bytes);
extern void *__libc_calloc(size_t count, size_t bytes);
extern void *__libc_realloc(void *p, size_t bytes);
extern void *__libc_memalign(size_t alignment, size_t bytes);
extern void __libc_free(void *p);

static __thread int counting;
static __thread unsigned long allocations;

void alloc_counter_start(void) {
  allocations = 0;
  counting = 1;
}

unsigned long alloc_counter_stop(void) {
  counting = 0;
  return allocations;
}

static void note(void) {
  if (counting)
    ++allocations;
}

void *malloc(size_t bytes) {
  note();
  return __libc_malloc(bytes);
}

void *calloc(size_t count, size_t bytes) {
  note();
  return __libc_calloc(count, bytes);
}

void *realloc(void *p, size_t bytes) {
  note();
  return __libc_realloc(p, bytes);
}

void *aligned_alloc(size_t alignment, size_t bytes) {
  note();
  return __libc_memalign(alignment, bytes);
}

void *memalign(size_t alignment, size_t bytes) {
  note();
  return __libc_memalign(alignment, bytes);
}

int posix_memalign(void **out, size_t alignment, size_t bytes) {
  note();
  if (alignment % sizeof(void *) || (alignment & (alignment - 1)))
    return EINVAL;
  void *p = __libc_memalign(alignment, bytes);
  if (!p)
    return ENOMEM;
  *out = p;
  return 0;
}

void free(void *p) { __libc_free(p); }
