/* The session thread pool (runtime/src/pool.c). Not part of the public ABI. */
#ifndef KILN_RUNTIME_POOL_H
#define KILN_RUNTIME_POOL_H

#include <stdint.h>

typedef struct kiln_pool kiln_pool;

/* Starts threads - 1 workers (the caller is the last thread). Returns NULL
 * for threads < 2 (no pool: loops run on the caller) and when the threads
 * cannot be created. */
kiln_pool *kiln_pool_create(int threads);
void kiln_pool_destroy(kiln_pool *pool);
int kiln_pool_threads(const kiln_pool *pool);

/* Makes `pool` the one __kiln_parallel_for uses on this thread; returns the
 * previous one, to be restored with kiln_pool_leave. */
kiln_pool *kiln_pool_enter(kiln_pool *pool);
void kiln_pool_leave(kiln_pool *previous);

#endif
