/* Per-thread heap-allocation counter (see alloc_counter.c). */
#ifndef KILN_TEST_RUNTIME_ALLOC_COUNTER_H
#define KILN_TEST_RUNTIME_ALLOC_COUNTER_H

#ifdef __cplusplus
extern "C" {
#endif

/* Resets the count and starts counting allocations on this thread. */
void alloc_counter_start(void);
/* Stops counting; returns the allocations made on this thread since start. */
unsigned long alloc_counter_stop(void);

#ifdef __cplusplus
}
#endif

#endif
