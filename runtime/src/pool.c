/* The thread pool of a session: fork-join over the iterations of one parallel
 * loop at a time. The generated code calls __kiln_parallel_for for each loop
 * nest the compiler marked parallel; kiln_run makes the session's pool current
 * on the calling thread for the duration of the run. Depends on libc only
 * (pthreads are part of glibc since 2.34).
 *
 * The caller takes part in every loop, so a pool of n threads starts n - 1
 * workers. A loop's iterations are cut into n contiguous chunks, and thread
 * i (the caller is 0) claims chunk i first, then any chunk still unclaimed.
 * Each thread thus takes the same rows of every loop, and finds in its own
 * cache what it wrote in the loop before; a thread that joins late leaves
 * its chunk to the others. Between loops the workers spin for up to half a
 * millisecond (the next loop of a model usually starts within
 * microseconds), then sleep on a condition variable. The caller waits at the
 * end of a loop only for the workers that joined it (see `ticket`), never
 * for one that had not woken up by the time every chunk was handed out. */
#include "pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

/* How long an idle worker polls for the next loop before it sleeps, and how
 * long the caller polls for late workers before it sleeps, in nanoseconds.
 * A sleeping thread can take a scheduler tick (~1 ms) to run again on a busy
 * core, so the gaps between the loops of one run must be spun through. */
#define KILN_WORKER_SPIN_NS 500000
#define KILN_CALLER_SPIN_NS 200000

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

typedef void (*kiln_task_fn)(void *ctx, int64_t begin, int64_t end);

typedef struct kiln_worker {
  struct kiln_pool *pool;
  int id; /* 1 .. threads - 1; the caller is 0 */
} kiln_worker;

struct kiln_pool {
  int threads; /* workers + the caller */
  pthread_t *workers;
  kiln_worker *worker_args;
  int started; /* workers actually created */

  /* The current loop, published by a new generation in `ticket`. */
  kiln_task_fn fn;
  void *ctx;
  int64_t count, chunk;
  /* Generation (high 32 bits), closed flag (bit 31) and the number of
   * workers that joined the loop (low bits). A worker joins by incrementing
   * the count while the loop is open; the caller closes the loop once every
   * chunk is handed out and then waits only for the workers that joined. A
   * worker that wakes up later (descheduled on a busy machine) finds the
   * loop closed and leaves it alone, so the caller never waits for it. */
  _Atomic uint64_t ticket;
  _Atomic int finished;    /* joined workers done with the current loop */
  _Atomic int sleepers;    /* workers waiting on `wake` */
  _Atomic int caller_waiting; /* the caller sleeps on `done` */
  _Atomic int stop;

  pthread_mutex_t mutex;
  pthread_cond_t wake;
  pthread_cond_t done;

  /* Whether chunk i of the current loop is taken, one flag per thread. */
  _Atomic int claimed[];
};

/* The pool of the session that kiln_run is running on this thread; NULL on
 * workers and outside kiln_run, where loops run inline. */
static __thread kiln_pool *current_pool;

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* Runs chunk `id` of the current loop, then any other chunk not yet taken. */
static void run_chunks(kiln_pool *p, int id) {
  for (int i = 0; i < p->threads; ++i) {
    int c = id + i < p->threads ? id + i : id + i - p->threads;
    if (atomic_load_explicit(&p->claimed[c], memory_order_relaxed) ||
        atomic_exchange_explicit(&p->claimed[c], 1, memory_order_relaxed))
      continue;
    int64_t begin = c * p->chunk;
    if (begin >= p->count)
      continue;
    int64_t end = begin + p->chunk < p->count ? begin + p->chunk : p->count;
    p->fn(p->ctx, begin, end);
  }
}

#define KILN_TICKET_CLOSED ((uint64_t)1 << 31)
#define KILN_TICKET_JOINED ((uint64_t)KILN_TICKET_CLOSED - 1)

static uint32_t ticket_generation(uint64_t t) { return (uint32_t)(t >> 32); }

/* Joins the loop that `t` (a fresh load of the ticket) announces, unless it
 * is closed; returns whether it did. */
static int join_loop(kiln_pool *p, uint64_t t) {
  while (!(t & KILN_TICKET_CLOSED)) {
    if (atomic_compare_exchange_weak_explicit(&p->ticket, &t, t + 1,
                                              memory_order_acq_rel,
                                              memory_order_acquire))
      return 1;
  }
  return 0;
}

static void *worker_main(void *arg) {
  kiln_pool *p = ((kiln_worker *)arg)->pool;
  int id = ((kiln_worker *)arg)->id;
  /* Generation 0 is never a loop: a worker that starts late still sees the
   * first loop if it is open. */
  uint32_t seen = 0;
  for (;;) {
    uint64_t now = 0;
    int64_t deadline = now_ns() + KILN_WORKER_SPIN_NS;
    for (unsigned i = 1;; ++i) {
      now = atomic_load_explicit(&p->ticket, memory_order_acquire);
      if (ticket_generation(now) != seen ||
          atomic_load_explicit(&p->stop, memory_order_relaxed))
        break;
      cpu_relax();
      if (i % 64 == 0 && now_ns() > deadline)
        break;
    }
    if (ticket_generation(now) == seen && !atomic_load(&p->stop)) {
      pthread_mutex_lock(&p->mutex);
      atomic_fetch_add(&p->sleepers, 1);
      while (ticket_generation(now = atomic_load(&p->ticket)) == seen &&
             !atomic_load(&p->stop))
        pthread_cond_wait(&p->wake, &p->mutex);
      atomic_fetch_sub(&p->sleepers, 1);
      pthread_mutex_unlock(&p->mutex);
    }
    if (atomic_load(&p->stop))
      return NULL;
    seen = ticket_generation(now);
    if (!join_loop(p, now))
      continue; /* closed: the caller and the other workers did it */
    run_chunks(p, id);
    atomic_fetch_add(&p->finished, 1);
    if (atomic_load(&p->caller_waiting)) {
      pthread_mutex_lock(&p->mutex);
      pthread_cond_signal(&p->done);
      pthread_mutex_unlock(&p->mutex);
    }
  }
}

kiln_pool *kiln_pool_create(int threads) {
  if (threads < 2)
    return NULL;
  kiln_pool *p = (kiln_pool *)calloc(1, sizeof(*p) + (size_t)threads *
                                                         sizeof(p->claimed[0]));
  if (!p)
    return NULL;
  p->threads = threads;
  p->workers = (pthread_t *)calloc((size_t)threads - 1, sizeof(pthread_t));
  p->worker_args =
      (kiln_worker *)calloc((size_t)threads - 1, sizeof(kiln_worker));
  if (!p->workers || !p->worker_args || pthread_mutex_init(&p->mutex, NULL) ||
      pthread_cond_init(&p->wake, NULL) || pthread_cond_init(&p->done, NULL)) {
    free(p->workers);
    free(p->worker_args);
    free(p);
    return NULL;
  }
  for (int i = 0; i < threads - 1; ++i) {
    p->worker_args[i].pool = p;
    p->worker_args[i].id = i + 1;
    if (pthread_create(&p->workers[i], NULL, worker_main, &p->worker_args[i]))
      break;
    ++p->started;
  }
  if (p->started != threads - 1) {
    kiln_pool_destroy(p);
    return NULL;
  }
  return p;
}

void kiln_pool_destroy(kiln_pool *p) {
  if (!p)
    return;
  pthread_mutex_lock(&p->mutex);
  atomic_store(&p->stop, 1);
  pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->mutex);
  for (int i = 0; i < p->started; ++i)
    pthread_join(p->workers[i], NULL);
  pthread_cond_destroy(&p->wake);
  pthread_cond_destroy(&p->done);
  pthread_mutex_destroy(&p->mutex);
  free(p->workers);
  free(p->worker_args);
  free(p);
}

int kiln_pool_threads(const kiln_pool *p) { return p ? p->threads : 1; }

kiln_pool *kiln_pool_enter(kiln_pool *p) {
  kiln_pool *previous = current_pool;
  current_pool = p;
  return previous;
}

void kiln_pool_leave(kiln_pool *previous) { current_pool = previous; }

__attribute__((visibility("hidden"))) void
__kiln_parallel_for(kiln_task_fn fn, void *ctx, int64_t count) {
  kiln_pool *p = current_pool;
  if (!p || count < 2) {
    if (count > 0)
      fn(ctx, 0, count);
    return;
  }
  /* A loop run from inside another one (not emitted today) runs inline. */
  current_pool = NULL;
  /* One contiguous chunk per thread. Smaller chunks (four per thread)
   * evened out a slow core, but handed each thread rows all over the
   * tensor: the next loop nest then read what the other core had written,
   * and MobileNetV2 ran 10% slower on two threads. For the same reason a
   * thread takes its own chunk first: when whoever came first took the
   * first chunk, the worker sometimes won and each core read the rows the
   * other had written the loop before. */
  int64_t chunk = (count + p->threads - 1) / p->threads;
  p->fn = fn;
  p->ctx = ctx;
  p->count = count;
  p->chunk = chunk > 0 ? chunk : 1;
  for (int i = 0; i < p->threads; ++i)
    atomic_store_explicit(&p->claimed[i], 0, memory_order_relaxed);
  atomic_store_explicit(&p->finished, 0, memory_order_relaxed);
  /* A new generation, open, nobody joined: publishes the fields above. The
   * generation skips 0, which workers take for "no loop yet". */
  uint32_t generation =
      ticket_generation(atomic_load_explicit(&p->ticket, memory_order_relaxed)) + 1;
  if (generation == 0)
    generation = 1;
  atomic_store_explicit(&p->ticket, (uint64_t)generation << 32,
                        memory_order_release);
  if (atomic_load(&p->sleepers)) {
    pthread_mutex_lock(&p->mutex);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mutex);
  }
  run_chunks(p, 0);
  /* Every chunk is handed out: close the loop and wait only for the workers
   * that joined it. They usually finish within microseconds of the caller;
   * when one was descheduled inside its chunk, sleep rather than spin. */
  int joined = (int)(atomic_fetch_or_explicit(&p->ticket, KILN_TICKET_CLOSED,
                                              memory_order_acq_rel) &
                     KILN_TICKET_JOINED);
  int64_t deadline = now_ns() + KILN_CALLER_SPIN_NS;
  for (unsigned i = 1;
       atomic_load_explicit(&p->finished, memory_order_acquire) != joined; ++i) {
    cpu_relax();
    if (i % 64 == 0 && now_ns() > deadline)
      break;
  }
  if (atomic_load(&p->finished) != joined) {
    pthread_mutex_lock(&p->mutex);
    atomic_store(&p->caller_waiting, 1);
    while (atomic_load(&p->finished) != joined)
      pthread_cond_wait(&p->done, &p->mutex);
    atomic_store(&p->caller_waiting, 0);
    pthread_mutex_unlock(&p->mutex);
  }
  current_pool = p;
}
