/* The runtime linked into every model.so: session and arena management, argument
 * checks and the CPU-feature guard. Depends on libc only. */
#include "model_abi.h"
#include "pool.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#if defined(__x86_64__) && defined(__linux__)
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#define KILN_HIDDEN __attribute__((visibility("hidden")))
#define KILN_MESSAGE_BYTES 512

struct kiln_session {
  void *arena;
  int owns_arena;
  uint32_t variant; /* index into batch_sizes */
  int64_t batch;    /* batch_sizes[variant] */
  void **args; /* num_inputs + num_outputs + 1 slots, filled by kiln_run */
  kiln_pool *pool; /* NULL: the loops run on the calling thread */
  kiln_cuda_session *gpu; /* models compiled with --target=cuda (cuda.c) */
  int busy; /* set while a kiln_run is inside (atomically, see kiln_run) */
  int dynamic;        /* runs any batch in the symbol's range */
  int64_t last_batch; /* the batch of the last successful dynamic run */
  /* Run-time extents (KILN_DIMS_RUNTIME_EXTENTS): the symbols' sizes, then
   * every output's shape as the graph wrote it; NULL otherwise. */
  int64_t *dims;
  int have_shapes; /* dims holds the shapes of a successful run */
  uint64_t random_draws;   /* keys __kiln_random_key handed out */
  uint64_t random_entropy; /* the base of unseeded random ops' keys */
  char message[KILN_MESSAGE_BYTES];
};

/* The session whose graph runs on this thread (run_variant), for
 * __kiln_random_key. */
static __thread kiln_session *running_session;

static uint64_t splitmix64(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/* The key of one execution of a random op (kiln.random,
 * lib/Conversion/KilnToLinalg/LowerRandom.cpp): a hash of the op's seed (or
 * of the session's entropy when the model gave none) and the number of keys
 * the session handed out before. A new session thus repeats a seeded
 * model's sequence of runs, and every run and loop iteration draws new
 * numbers. Called on the thread that runs the graph, never inside a
 * parallel loop. */
uint64_t __kiln_random_key(uint64_t seed, uint32_t seeded) {
  static __thread uint64_t unowned_draws; /* __kiln_entry outside kiln_run */
  kiln_session *s = running_session;
  uint64_t *draws = s ? &s->random_draws : &unowned_draws;
  uint64_t base = seeded ? seed : s ? s->random_entropy : 0;
  uint64_t n = (*draws)++;
  return splitmix64(splitmix64(base) + splitmix64(n + 0x9E3779B97F4A7C15ull));
}

/* Bits that differ between sessions and processes: the clock, the session's
 * address, a process-wide count. */
static uint64_t session_entropy(const kiln_session *s) {
  static uint64_t sessions;
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  uint64_t n = __atomic_add_fetch(&sessions, 1, __ATOMIC_RELAXED);
  return splitmix64((uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec) ^
         splitmix64((uint64_t)(uintptr_t)s + n);
}

/* Failures outside a session are reported through this per-thread buffer. */
static __thread char thread_message[KILN_MESSAGE_BYTES];

static kiln_status ok_status(void) {
  kiln_status s = {KILN_OK, ""};
  return s;
}

kiln_status kiln_internal_status(char *buffer, size_t bytes,
                                 kiln_status_code code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buffer, bytes, fmt, ap);
  va_end(ap);
  kiln_status s = {code, buffer};
  return s;
}

/* A status whose message goes into one of this file's message buffers. */
#define fail(buffer, ...)                                                      \
  kiln_internal_status(buffer, KILN_MESSAGE_BYTES, __VA_ARGS__)

size_t kiln_dtype_size(int32_t dtype) {
  switch (dtype) {
  case KILN_DTYPE_BOOL:
  case KILN_DTYPE_UINT8:
  case KILN_DTYPE_INT8:
  case KILN_DTYPE_FLOAT8E4M3FN:
  case KILN_DTYPE_FLOAT8E4M3FNUZ:
  case KILN_DTYPE_FLOAT8E5M2:
  case KILN_DTYPE_FLOAT8E5M2FNUZ:
  case KILN_DTYPE_UINT4:
  case KILN_DTYPE_INT4:
  case KILN_DTYPE_FLOAT4E2M1:
  case KILN_DTYPE_FLOAT8E8M0:
  case KILN_DTYPE_UINT2:
  case KILN_DTYPE_INT2:
    return 1;
  case KILN_DTYPE_UINT16:
  case KILN_DTYPE_INT16:
  case KILN_DTYPE_FLOAT16:
  case KILN_DTYPE_BFLOAT16:
    return 2;
  case KILN_DTYPE_FLOAT32:
  case KILN_DTYPE_INT32:
  case KILN_DTYPE_UINT32:
    return 4;
  case KILN_DTYPE_INT64:
  case KILN_DTYPE_UINT64:
  case KILN_DTYPE_FLOAT64:
    return 8;
  default:
    return 0;
  }
}

const kiln_model_info *kiln_get_model_info(void) { return &__kiln_model_info; }

/* ---------------------------------------------------------------------------
 * CPU-feature guard. The model's required_isa lists LLVM feature names; each
 * one we know is checked with cpuid (and xgetbv for OS-enabled register state).
 * An unknown name is treated as missing: refusing is better than SIGILL.
 * ------------------------------------------------------------------------- */
#if defined(__x86_64__)
typedef struct {
  const char *name;
  unsigned leaf, subleaf;
  int reg; /* 1 = ebx, 2 = ecx, 3 = edx */
  unsigned bit;
  unsigned xcr0_mask; /* register state the OS must enable */
} feature_bit;

#define XCR0_AVX 0x6u
#define XCR0_AVX512 0xe6u
#define XCR0_AMX 0x60000u

static const feature_bit x86_features[] = {
    {"sse3", 1, 0, 2, 0, 0},           {"ssse3", 1, 0, 2, 9, 0},
    {"fma", 1, 0, 2, 12, XCR0_AVX},    {"sse4.1", 1, 0, 2, 19, 0},
    {"sse4.2", 1, 0, 2, 20, 0},        {"popcnt", 1, 0, 2, 23, 0},
    {"avx", 1, 0, 2, 28, XCR0_AVX},    {"f16c", 1, 0, 2, 29, XCR0_AVX},
    {"bmi", 7, 0, 1, 3, 0},            {"avx2", 7, 0, 1, 5, XCR0_AVX},
    {"bmi2", 7, 0, 1, 8, 0},           {"avx512f", 7, 0, 1, 16, XCR0_AVX512},
    {"avx512dq", 7, 0, 1, 17, XCR0_AVX512},
    {"avx512ifma", 7, 0, 1, 21, XCR0_AVX512},
    {"avx512cd", 7, 0, 1, 28, XCR0_AVX512},
    {"avx512bw", 7, 0, 1, 30, XCR0_AVX512},
    {"avx512vl", 7, 0, 1, 31, XCR0_AVX512},
    {"avx512vbmi", 7, 0, 2, 1, XCR0_AVX512},
    {"avx512vbmi2", 7, 0, 2, 6, XCR0_AVX512},
    {"avx512vnni", 7, 0, 2, 11, XCR0_AVX512},
    {"avx512bitalg", 7, 0, 2, 12, XCR0_AVX512},
    {"avx512vpopcntdq", 7, 0, 2, 14, XCR0_AVX512},
    {"avx512fp16", 7, 0, 3, 23, XCR0_AVX512},
    {"avx512vp2intersect", 7, 0, 3, 8, XCR0_AVX512},
    {"gfni", 7, 0, 2, 8, 0},           {"vaes", 7, 0, 2, 9, XCR0_AVX},
    {"vpclmulqdq", 7, 0, 2, 10, XCR0_AVX},
    {"amx-bf16", 7, 0, 3, 22, XCR0_AMX},
    {"amx-tile", 7, 0, 3, 24, XCR0_AMX},
    {"amx-int8", 7, 0, 3, 25, XCR0_AMX},
    {"avxvnni", 7, 1, 0, 4, XCR0_AVX}, /* eax of leaf 7.1 */
    {"avx512bf16", 7, 1, 0, 5, XCR0_AVX512},
};

static int has_feature(const char *name, size_t len) {
  for (size_t i = 0; i < sizeof(x86_features) / sizeof(x86_features[0]); ++i) {
    const feature_bit *f = &x86_features[i];
    if (strlen(f->name) != len || strncmp(f->name, name, len) != 0)
      continue;
    unsigned r[4] = {0, 0, 0, 0};
    if (__get_cpuid_max(0, 0) < f->leaf)
      return 0;
    __cpuid_count(f->leaf, f->subleaf, r[0], r[1], r[2], r[3]);
    if (!((r[f->reg] >> f->bit) & 1u))
      return 0;
    if (f->xcr0_mask) {
      unsigned a, b, c, d;
      __cpuid(1, a, b, c, d);
      if (!((c >> 27) & 1u)) /* OSXSAVE */
        return 0;
      unsigned lo, hi;
      __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
      if ((lo & f->xcr0_mask) != f->xcr0_mask)
        return 0;
    }
    return 1;
  }
  return 0;
}
#else
static int has_feature(const char *name, size_t len) {
  (void)name;
  (void)len;
  return 0;
}
#endif

/* Writes every feature of the comma-separated `list` this CPU lacks into
 * `missing`, quoted and separated by ", " ('avx512f', 'avx512bw'),
 * truncated (never overflowed) to `missing_bytes`; returns how many there
 * are. Exposed (hidden visibility) so the runtime unit test can check lists. */
KILN_HIDDEN int kiln_internal_missing_feature(const char *list, char *missing,
                                              size_t missing_bytes) {
  int count = 0;
  size_t used = 0;
  if (missing_bytes)
    missing[0] = '\0';
  const char *p = list;
  while (p && *p) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len && !has_feature(p, len)) {
      if (used < missing_bytes) {
        int n = snprintf(missing + used, missing_bytes - used, "%s'%.*s'",
                         count ? ", " : "", (int)len, p);
        used += n > 0 ? (size_t)n : 0;
      }
      ++count;
    }
    p = end ? end + 1 : NULL;
  }
  return count;
}

/* AMX tile data is off for every process until it asks: Linux (5.16+) keeps
 * the 8 KiB of tile state out of a thread's context unless the process was
 * granted XFEATURE_XTILEDATA, and the first tile instruction without it is
 * a SIGILL. The grant is process-wide and covers threads started later (the
 * pool's workers). The compiler lists amx-* in required_isa only for models
 * with tile kernels. Returns 0, or the errno of the refusal. */
static int request_amx(void) {
#if defined(__x86_64__) && defined(__linux__)
  enum { ARCH_REQ_XCOMP_PERM = 0x1023, XFEATURE_XTILEDATA = 18 };
  if (syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) != 0)
    return errno ? errno : -1;
  return 0;
#else
  return -1;
#endif
}

kiln_status kiln_check_cpu(void) {
  const kiln_model_info *info = &__kiln_model_info;
  char missing[160];
  if (kiln_internal_missing_feature(info->required_isa, missing,
                                    sizeof(missing)))
    return fail(thread_message, KILN_UNSUPPORTED_ISA,
                "this CPU lacks %s, which model '%s' was compiled for "
                "(cpu %s, features %s); recompile with --mcpu matching this "
                "machine",
                missing, info->name, info->cpu, info->required_isa);
  if (strstr(info->required_isa, "amx-tile")) {
    int err = request_amx();
    if (err)
      return fail(thread_message, KILN_UNSUPPORTED_ISA,
                  "the operating system refused AMX tile state to model '%s' "
                  "(arch_prctl(ARCH_REQ_XCOMP_PERM) failed: %s; Linux 5.16 or "
                  "later grants it); recompile without --precision=bf16, or "
                  "with --mattr=-amx-tile",
                  info->name, err > 0 ? strerror(err) : "not Linux x86-64");
  }
  return ok_status();
}

/* Whether the model runs at run-time sizes (kiln_dims_info.flags, which a
 * symbolic-batch model's shorter struct lacks). */
static int runtime_extents(const kiln_dims_info *dims) {
  return dims &&
         dims->struct_size >= offsetof(kiln_dims_info, flags) + sizeof(uint32_t) &&
         (dims->flags & KILN_DIMS_RUNTIME_EXTENTS);
}

kiln_status kiln_session_create(const kiln_session_options *options,
                                kiln_session **out_session) {
  const kiln_model_info *info = &__kiln_model_info;
  if (!out_session)
    return fail(thread_message, KILN_INVALID_ARGUMENT,
                "kiln_session_create: out_session is NULL");
  *out_session = NULL;
  kiln_status cpu = kiln_check_cpu();
  if (cpu.code)
    return cpu;
  kiln_session_options opts;
  memset(&opts, 0, sizeof(opts));
  if (options) {
    if (options->struct_size < sizeof(uint32_t))
      return fail(thread_message, KILN_INVALID_ARGUMENT,
                  "kiln_session_create: options->struct_size is %u; set it "
                  "to sizeof(kiln_session_options)",
                  options->struct_size);
    /* A caller built against a newer header may pass a larger struct; that
     * is fine as long as the fields this runtime does not know are zero. */
    for (uint32_t i = sizeof(opts); i < options->struct_size; ++i)
      if (((const unsigned char *)options)[i])
        return fail(thread_message, KILN_INVALID_ARGUMENT,
                    "kiln_session_create: options set fields (byte %u) that "
                    "this model's runtime (ABI %d) does not know",
                    i, KILN_ABI_VERSION);
    memcpy(&opts, options,
           options->struct_size < sizeof(opts) ? options->struct_size
                                               : sizeof(opts));
  }
  if (opts.num_threads < 0 || opts.num_threads > KILN_MAX_THREADS)
    return fail(thread_message, KILN_INVALID_ARGUMENT,
                "kiln_session_create: num_threads is %d; use 0 to %d",
                opts.num_threads, KILN_MAX_THREADS);
  if (!opts.arena && opts.arena_bytes)
    return fail(thread_message, KILN_INVALID_ARGUMENT,
                "kiln_session_create: options->arena_bytes is %zu but "
                "options->arena is NULL; set both or neither",
                opts.arena_bytes);
  if (opts.arena && (uintptr_t)opts.arena + opts.arena_bytes < (uintptr_t)opts.arena)
    return fail(thread_message, KILN_INVALID_ARGUMENT,
                "kiln_session_create: an arena of %zu bytes at %p would wrap "
                "around the address space; pass its real size",
                opts.arena_bytes, opts.arena);

  uint32_t variant = 0;
  if (opts.batch_size) {
    while (variant < info->num_batch_sizes &&
           info->batch_sizes[variant] != opts.batch_size)
      ++variant;
    if (variant == info->num_batch_sizes) {
      char sizes[128];
      size_t n = 0;
      sizes[0] = 0;
      for (uint32_t i = 0; i < info->num_batch_sizes && n < sizeof(sizes); ++i)
        n += (size_t)snprintf(sizes + n, sizeof(sizes) - n, i ? ",%lld" : "%lld",
                              (long long)info->batch_sizes[i]);
      return fail(thread_message, KILN_INVALID_ARGUMENT,
                  "kiln_session_create: model '%s' has no batch size %lld; "
                  "it was compiled for %s",
                  info->name, (long long)opts.batch_size, sizes);
    }
  }
  const kiln_dims_info *dims = kiln_get_dims_info();
  int extents = runtime_extents(dims);
  int dynamic = dims && !opts.batch_size && !extents;
  if (dynamic && (!info->num_batch_sizes || info->batch_sizes[0] != 1))
    return fail(thread_message, KILN_INTERNAL,
                "kiln_session_create: model '%s' has a symbolic batch but no "
                "batch-1 variant; recompile it",
                info->name);
  uint64_t needed = dynamic || !info->batch_arena_bytes
                        ? info->arena_bytes
                        : info->batch_arena_bytes[variant];
  uint64_t align = info->arena_alignment ? info->arena_alignment : 64;
  if (opts.arena) {
    if (opts.arena_bytes < needed)
      return fail(thread_message, KILN_ARENA_TOO_SMALL,
                  "kiln_session_create: the arena has %zu bytes; model '%s' "
                  "needs %llu",
                  opts.arena_bytes, info->name, (unsigned long long)needed);
    if ((uintptr_t)opts.arena % align)
      return fail(thread_message, KILN_ARENA_TOO_SMALL,
                  "kiln_session_create: the arena at %p is not aligned to "
                  "%llu bytes",
                  opts.arena, (unsigned long long)align);
  }

  /* A GPU model: device buffers instead of a host arena. */
  if (&__kiln_gpu_program) {
    if (opts.arena)
      return fail(thread_message, KILN_INVALID_ARGUMENT,
                  "kiln_session_create: model '%s' runs on the GPU; its arena "
                  "is device memory, so options->arena must be NULL",
                  info->name);
    kiln_cuda_session *gpu = NULL;
    kiln_status st = kiln_internal_cuda_session_create(
        variant, thread_message, KILN_MESSAGE_BYTES, &gpu);
    if (st.code)
      return st;
    kiln_session *s = (kiln_session *)calloc(1, sizeof(*s));
    if (!s) {
      kiln_internal_cuda_session_destroy(gpu);
      return fail(thread_message, KILN_OUT_OF_MEMORY,
                  "kiln_session_create: out of memory");
    }
    s->gpu = gpu;
    s->variant = variant;
    s->batch = info->num_batch_sizes ? info->batch_sizes[variant] : 0;
    *out_session = s;
    return ok_status();
  }

  size_t slots = (size_t)info->num_inputs + info->num_outputs + 1 +
                 (extents ? 1 : 0);
  size_t num_dims = extents ? dims->num_symbols : 0;
  for (uint32_t o = 0; extents && o < info->num_outputs; ++o)
    num_dims += (size_t)info->outputs[o].rank;
  kiln_session *s = (kiln_session *)calloc(1, sizeof(*s));
  void **args = (void **)calloc(slots, sizeof(void *));
  int64_t *run_dims =
      extents ? (int64_t *)calloc(num_dims ? num_dims : 1, sizeof(int64_t))
              : NULL;
  if (!s || !args || (extents && !run_dims)) {
    free(s);
    free(args);
    free(run_dims);
    return fail(thread_message, KILN_OUT_OF_MEMORY,
                "kiln_session_create: out of memory");
  }
  s->args = args;
  s->dims = run_dims;
  s->variant = variant;
  s->batch = info->num_batch_sizes ? info->batch_sizes[variant] : 0;
  s->dynamic = dynamic;
  s->last_batch = s->batch;
  s->random_entropy = session_entropy(s);
  if (opts.arena) {
    s->arena = opts.arena;
  } else if (needed) {
    size_t bytes = (size_t)((needed + align - 1) / align * align);
    s->arena = aligned_alloc((size_t)align, bytes);
    s->owns_arena = 1;
    if (!s->arena) {
      free(args);
      free(run_dims);
      free(s);
      return fail(thread_message, KILN_OUT_OF_MEMORY,
                  "kiln_session_create: cannot allocate the %llu-byte arena",
                  (unsigned long long)needed);
    }
  }
  if (opts.num_threads > 1) {
    s->pool = kiln_pool_create(opts.num_threads);
    if (!s->pool) {
      kiln_session_destroy(s);
      return fail(thread_message, KILN_OUT_OF_MEMORY,
                  "kiln_session_create: cannot start %d threads",
                  opts.num_threads);
    }
  }
  /* kiln_run keeps the running pool in thread-local storage, which glibc
   * allocates for a dlopen'ed library on a thread's first use of it. That
   * first use is made here, so that kiln_run does not allocate on the
   * thread that created the session (another thread's first run still
   * gets its block then, once). */
  kiln_pool_leave(kiln_pool_enter(NULL));
  *out_session = s;
  return ok_status();
}

void kiln_session_destroy(kiln_session *session) {
  if (!session)
    return;
  kiln_pool_destroy(session->pool);
  if (session->gpu)
    kiln_internal_cuda_session_destroy(session->gpu);
  if (session->owns_arena)
    free(session->arena);
  free(session->args);
  free(session->dims);
  free(session);
}

/* Dimension d of `want` in the session's batch variant. */
static int64_t dim_of(const kiln_session *s, const kiln_tensor_info *want,
                      int32_t d) {
  return d == 0 && s->variant ? s->batch : want->shape[d];
}

static kiln_status check_tensor(kiln_session *s, const char *kind, uint32_t i,
                                const kiln_tensor_info *want,
                                const kiln_tensor *got) {
  size_t element = kiln_dtype_size(want->dtype);
  size_t bytes = element;
  for (int32_t d = 0; d < want->rank; ++d) {
    int64_t dim = dim_of(s, want, d);
    if (dim < 0 || __builtin_mul_overflow(bytes, (size_t)dim, &bytes))
      return fail(s->message, KILN_INTERNAL,
                  "%s %u ('%s'): the model's shape has no valid byte size",
                  kind, i, want->name);
  }
  if (!got->data && bytes)
    return fail(s->message, KILN_INVALID_ARGUMENT,
                "%s %u ('%s'): data is NULL", kind, i, want->name);
  if (element && (uintptr_t)got->data % element)
    return fail(s->message, KILN_INVALID_ARGUMENT,
                "%s %u ('%s'): data at %p is not aligned to its element size "
                "(%zu bytes)",
                kind, i, want->name, got->data, element);
  if (got->dtype != want->dtype)
    return fail(s->message, KILN_INVALID_ARGUMENT,
                "%s %u ('%s'): dtype is %d; the model expects %d", kind, i,
                want->name, got->dtype, want->dtype);
  if (got->shape) {
    int same = got->rank == want->rank;
    for (int32_t d = 0; same && d < want->rank; ++d)
      same = got->shape[d] == dim_of(s, want, d);
    if (!same) {
      char shape[128];
      size_t n = 0;
      shape[0] = 0;
      for (int32_t d = 0; d < want->rank && n < sizeof(shape); ++d)
        n += (size_t)snprintf(shape + n, sizeof(shape) - n, d ? "x%lld" : "%lld",
                              (long long)dim_of(s, want, d));
      return fail(s->message, KILN_INVALID_ARGUMENT,
                  "%s %u ('%s'): the shape does not match; the model expects "
                  "%s (rank %d), got rank %d",
                  kind, i, want->name, want->rank ? shape : "a scalar",
                  want->rank, got->rank);
    }
  }
  if (got->bytes != bytes)
    return fail(s->message, KILN_INVALID_ARGUMENT,
                "%s %u ('%s'): buffer has %zu bytes; the model expects %zu",
                kind, i, want->name, got->bytes, bytes);
  return ok_status();
}

/* Whether [a, a + an) and [b, b + bn) share a byte. */
static int overlaps(const void *a, size_t an, const void *b, size_t bn) {
  uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
  return an && bn && x < y + bn && y < x + an;
}

/* An output may not share memory with an input or another output: the model
 * writes outputs while it still reads inputs. */
static kiln_status check_overlaps(kiln_session *s, const kiln_tensor *inputs,
                                  uint32_t num_inputs,
                                  const kiln_tensor *outputs,
                                  uint32_t num_outputs) {
  for (uint32_t o = 0; o < num_outputs; ++o) {
    for (uint32_t i = 0; i < num_inputs; ++i)
      if (overlaps(outputs[o].data, outputs[o].bytes, inputs[i].data,
                   inputs[i].bytes))
        return fail(s->message, KILN_INVALID_ARGUMENT,
                    "kiln_run: output %u overlaps input %u in memory; give "
                    "each output a buffer of its own",
                    o, i);
    for (uint32_t p = 0; p < o; ++p)
      if (overlaps(outputs[o].data, outputs[o].bytes, outputs[p].data,
                   outputs[p].bytes))
        return fail(s->message, KILN_INVALID_ARGUMENT,
                    "kiln_run: outputs %u and %u overlap in memory", p, o);
  }
  return ok_status();
}

static kiln_status run_locked(kiln_session *session, const kiln_tensor *inputs,
                              size_t num_inputs, kiln_tensor *outputs,
                              size_t num_outputs);

const kiln_dims_info *kiln_get_dims_info(void) {
  return &__kiln_dims_info ? &__kiln_dims_info : NULL;
}

/* The symbol at axis 0 of `t` (-1: static), from the dims table `symbols`. */
static int32_t leading_symbol(const kiln_tensor_info *t,
                              const int32_t *const *symbols, uint32_t i) {
  return t->rank > 0 && symbols && symbols[i] ? symbols[i][0] : -1;
}

/* Bytes of one sample of `t`: every dimension but the leading one. Returns 0
 * on overflow (a compiled shape never overflows). */
static size_t sample_bytes(const kiln_tensor_info *t) {
  size_t bytes = kiln_dtype_size(t->dtype);
  for (int32_t d = 1; d < t->rank; ++d)
    if (t->shape[d] < 0 ||
        __builtin_mul_overflow(bytes, (size_t)t->shape[d], &bytes))
      return 0;
  return bytes;
}

/* Checks a tensor with a symbolic leading dimension against the model and
 * the batch `*batch` the other tensors gave (-1 when none has yet). */
static kiln_status check_batched(kiln_session *s, const char *kind, uint32_t i,
                                 const kiln_tensor_info *want,
                                 const kiln_dim_symbol *symbol,
                                 const kiln_tensor *got, int64_t *batch) {
  size_t element = kiln_dtype_size(want->dtype);
  size_t per = sample_bytes(want);
  if (got->dtype != want->dtype)
    return fail(s->message, KILN_INVALID_ARGUMENT,
                "%s %u ('%s'): dtype is %d; the model expects %d", kind, i,
                want->name, got->dtype, want->dtype);
  if (element && (uintptr_t)got->data % element)
    return fail(s->message, KILN_INVALID_ARGUMENT,
                "%s %u ('%s'): data at %p is not aligned to its element size "
                "(%zu bytes)",
                kind, i, want->name, got->data, element);
  int64_t n;
  if (got->shape) {
    if (got->rank != want->rank)
      return fail(s->message, KILN_INVALID_ARGUMENT,
                  "%s %u ('%s'): rank is %d; the model expects %d", kind, i,
                  want->name, got->rank, want->rank);
    for (int32_t d = 1; d < want->rank; ++d)
      if (got->shape[d] != want->shape[d])
        return fail(s->message, KILN_INVALID_ARGUMENT,
                    "%s %u ('%s'): dimension %d is %lld; the model expects "
                    "%lld",
                    kind, i, want->name, d, (long long)got->shape[d],
                    (long long)want->shape[d]);
    n = got->shape[0];
  } else {
    if (!per || got->bytes % per)
      return fail(s->message, KILN_INVALID_ARGUMENT,
                  "%s %u ('%s'): %zu bytes is not a whole number of samples "
                  "of %zu bytes; pass the shape",
                  kind, i, want->name, got->bytes, per);
    n = (int64_t)(got->bytes / per);
  }
  if (n < symbol->min || n > symbol->max)
    return fail(s->message, KILN_INVALID_ARGUMENT,
                "%s %u ('%s'): dimension 0 ('%s') is %lld, outside the range "
                "%lld..%lld the model was compiled for",
                kind, i, want->name, symbol->name, (long long)n,
                (long long)symbol->min, (long long)symbol->max);
  if (*batch >= 0 && n != *batch)
    return fail(s->message, KILN_INVALID_ARGUMENT,
                "%s %u ('%s'): dimension 0 ('%s') is %lld, but the inputs "
                "give it %lld; every tensor sharing '%s' must agree",
                kind, i, want->name, symbol->name, (long long)n,
                (long long)*batch, symbol->name);
  *batch = n;
  size_t bytes;
  if (__builtin_mul_overflow(per, (size_t)n, &bytes) || got->bytes != bytes)
    return fail(s->message, KILN_INVALID_ARGUMENT,
                "%s %u ('%s'): buffer has %zu bytes; the model expects %zu "
                "for %lld samples",
                kind, i, want->name, got->bytes, per * (size_t)n,
                (long long)n);
  if (!got->data && bytes)
    return fail(s->message, KILN_INVALID_ARGUMENT,
                "%s %u ('%s'): data is NULL", kind, i, want->name);
  return ok_status();
}

/* Runs compiled variant `variant` once; args must be filled. */
static kiln_status run_variant(kiln_session *session, uint32_t variant) {
  const kiln_model_info *info = &__kiln_model_info;
  session->args[info->num_inputs + info->num_outputs] = session->arena;
  const kiln_guard_table *guards = &__kiln_guard_table;
  uint32_t *status =
      guards && guards->count ? (uint32_t *)session->arena : NULL;
  if (status)
    *status = 0;
  kiln_pool *outer = kiln_pool_enter(session->pool);
  kiln_session *caller = running_session;
  running_session = session;
  __kiln_entry(variant, session->args);
  running_session = caller;
  kiln_pool_leave(outer);
  if (status && *status) {
    uint32_t g = *status;
    return fail(session->message, KILN_INVALID_ARGUMENT,
                "kiln_run: %s",
                g <= guards->count ? guards->messages[g - 1]
                                   : "a run-time shape check failed");
  }
  return ok_status();
}

/* A model with a symbolic batch: the batch n of the inputs runs as compiled
 * batches, largest first, over consecutive slices of every batched input and
 * output (samples are independent, which the compiler proved). The arena
 * fits every variant, so nothing is allocated. */
static kiln_status run_dynamic(kiln_session *s, const kiln_tensor *inputs,
                               kiln_tensor *outputs) {
  const kiln_model_info *info = &__kiln_model_info;
  const kiln_dims_info *dims = kiln_get_dims_info();
  int64_t batch = -1;
  for (int pass = 0; pass < 2; ++pass) {
    const kiln_tensor_info *want = pass ? info->outputs : info->inputs;
    const int32_t *const *symbols =
        pass ? dims->output_symbols : dims->input_symbols;
    const kiln_tensor *got = pass ? outputs : inputs;
    uint32_t count = pass ? info->num_outputs : info->num_inputs;
    const char *kind = pass ? "output" : "input";
    if (pass && batch < 0)
      return fail(s->message, KILN_INTERNAL,
                  "kiln_run: model '%s' has a symbolic batch but no input "
                  "carries it",
                  info->name);
    for (uint32_t i = 0; i < count; ++i) {
      int32_t sym = leading_symbol(&want[i], symbols, i);
      kiln_status st =
          sym >= 0 && (uint32_t)sym < dims->num_symbols
              ? check_batched(s, kind, i, &want[i], &dims->symbols[sym],
                              &got[i], &batch)
              : check_tensor(s, kind, i, &want[i], &got[i]);
      if (st.code)
        return st;
    }
  }
  kiln_status overlap = check_overlaps(s, inputs, info->num_inputs, outputs,
                                       info->num_outputs);
  if (overlap.code)
    return overlap;
  for (int64_t done = 0; done < batch;) {
    uint32_t v = info->num_batch_sizes - 1;
    while (v > 0 && info->batch_sizes[v] > batch - done)
      --v;
    for (uint32_t i = 0; i < info->num_inputs + info->num_outputs; ++i) {
      int out = i >= info->num_inputs;
      uint32_t j = out ? i - info->num_inputs : i;
      const kiln_tensor_info *want = out ? &info->outputs[j] : &info->inputs[j];
      void *data = out ? outputs[j].data : inputs[j].data;
      if (leading_symbol(want, out ? dims->output_symbols : dims->input_symbols,
                         j) >= 0)
        data = (char *)data + (size_t)done * sample_bytes(want);
      s->args[i] = data;
    }
    kiln_status st = run_variant(s, v);
    if (st.code)
      return st;
    done += info->batch_sizes[v];
  }
  s->last_batch = batch;
  return ok_status();
}

/* Checks input i of a run-time-extents model and records the sizes of its
 * symbolic axes in s->dims (`seen` marks the symbols given so far). */
static kiln_status check_extent_input(kiln_session *s, uint32_t i,
                                      const kiln_dims_info *dims,
                                      const kiln_tensor *got,
                                      unsigned char *seen) {
  const kiln_tensor_info *want = &__kiln_model_info.inputs[i];
  const int32_t *axes = dims->input_symbols[i];
  size_t element = kiln_dtype_size(want->dtype);
  size_t bytes = element;
  if (got->dtype != want->dtype)
    return fail(s->message, KILN_INVALID_ARGUMENT,
                "input %u ('%s'): dtype is %d; the model expects %d", i,
                want->name, got->dtype, want->dtype);
  int symbolic = 0;
  for (int32_t d = 0; d < want->rank; ++d)
    symbolic |= axes && axes[d] >= 0;
  if (symbolic && !got->shape)
    return fail(s->message, KILN_INVALID_ARGUMENT,
                "input %u ('%s') has symbolic dimensions; give its shape "
                "(kiln_tensor.shape and rank)",
                i, want->name);
  if (got->shape && got->rank != want->rank)
    return fail(s->message, KILN_INVALID_ARGUMENT,
                "input %u ('%s'): rank is %d; the model expects %d", i,
                want->name, got->rank, want->rank);
  for (int32_t d = 0; d < want->rank; ++d) {
    int32_t sym = axes ? axes[d] : -1;
    int64_t n = got->shape ? got->shape[d] : want->shape[d];
    if (sym < 0 || (uint32_t)sym >= dims->num_symbols) {
      if (n != want->shape[d])
        return fail(s->message, KILN_INVALID_ARGUMENT,
                    "input %u ('%s'): dimension %d is %lld; the model expects "
                    "%lld",
                    i, want->name, d, (long long)n, (long long)want->shape[d]);
    } else {
      const kiln_dim_symbol *symbol = &dims->symbols[sym];
      if (n < symbol->min || n > symbol->max)
        return fail(s->message, KILN_INVALID_ARGUMENT,
                    "input %u ('%s'): dimension %d ('%s') is %lld, outside the "
                    "range %lld..%lld the model was compiled for",
                    i, want->name, d, symbol->name, (long long)n,
                    (long long)symbol->min, (long long)symbol->max);
      if (seen[sym] && s->dims[sym] != n)
        return fail(s->message, KILN_INVALID_ARGUMENT,
                    "input %u ('%s'): dimension %d ('%s') is %lld, but an "
                    "earlier input gives it %lld; every tensor sharing '%s' "
                    "must agree",
                    i, want->name, d, symbol->name, (long long)n,
                    (long long)s->dims[sym], symbol->name);
      seen[sym] = 1;
      s->dims[sym] = n;
    }
    if (__builtin_mul_overflow(bytes, (size_t)n, &bytes))
      return fail(s->message, KILN_INVALID_ARGUMENT,
                  "input %u ('%s'): the shape has no valid byte size", i,
                  want->name);
  }
  if (got->bytes != bytes)
    return fail(s->message, KILN_INVALID_ARGUMENT,
                "input %u ('%s'): buffer has %zu bytes; its shape needs %zu", i,
                want->name, got->bytes, bytes);
  if (!got->data && bytes)
    return fail(s->message, KILN_INVALID_ARGUMENT,
                "input %u ('%s'): data is NULL", i, want->name);
  if (element && (uintptr_t)got->data % element)
    return fail(s->message, KILN_INVALID_ARGUMENT,
                "input %u ('%s'): data at %p is not aligned to its element "
                "size (%zu bytes)",
                i, want->name, got->data, element);
  return ok_status();
}

/* The bytes output o needs at the symbols' sizes in s->dims: a computed
 * (-2) axis counts at its maximum. */
static size_t extent_output_bytes(const kiln_session *s,
                                  const kiln_dims_info *dims, uint32_t o) {
  const kiln_tensor_info *want = &__kiln_model_info.outputs[o];
  const int32_t *axes = dims->output_symbols[o];
  size_t bytes = kiln_dtype_size(want->dtype);
  for (int32_t d = 0; d < want->rank; ++d) {
    int32_t sym = axes ? axes[d] : -1;
    int64_t n = sym >= 0 && (uint32_t)sym < dims->num_symbols ? s->dims[sym]
                                                               : want->shape[d];
    if (n < 0 || __builtin_mul_overflow(bytes, (size_t)n, &bytes))
      return SIZE_MAX;
  }
  return bytes;
}

/* A model with run-time extents: one graph at the inputs' sizes. */
static kiln_status run_extents(kiln_session *s, const kiln_tensor *inputs,
                               kiln_tensor *outputs) {
  const kiln_model_info *info = &__kiln_model_info;
  const kiln_dims_info *dims = kiln_get_dims_info();
  unsigned char seen[256];
  if (dims->num_symbols > sizeof(seen))
    return fail(s->message, KILN_INTERNAL,
                "kiln_run: model '%s' has %u symbols; this runtime handles %zu",
                info->name, dims->num_symbols, sizeof(seen));
  memset(seen, 0, sizeof(seen));
  s->have_shapes = 0;
  for (uint32_t i = 0; i < info->num_inputs; ++i) {
    kiln_status st = check_extent_input(s, i, dims, &inputs[i], seen);
    if (st.code)
      return st;
  }
  for (uint32_t k = 0; k < dims->num_symbols; ++k)
    if (!seen[k])
      return fail(s->message, KILN_INTERNAL,
                  "kiln_run: model '%s': no input gives the symbol '%s'",
                  info->name, dims->symbols[k].name);
  for (uint32_t o = 0; o < info->num_outputs; ++o) {
    const kiln_tensor_info *want = &info->outputs[o];
    size_t need = extent_output_bytes(s, dims, o);
    size_t element = kiln_dtype_size(want->dtype);
    if (outputs[o].dtype != want->dtype)
      return fail(s->message, KILN_INVALID_ARGUMENT,
                  "output %u ('%s'): dtype is %d; the model expects %d", o,
                  want->name, outputs[o].dtype, want->dtype);
    if (outputs[o].bytes < need)
      return fail(s->message, KILN_INVALID_ARGUMENT,
                  "output %u ('%s'): buffer has %zu bytes; at these input "
                  "sizes it needs %zu",
                  o, want->name, outputs[o].bytes, need);
    if (!outputs[o].data && need)
      return fail(s->message, KILN_INVALID_ARGUMENT,
                  "output %u ('%s'): data is NULL", o, want->name);
    if (element && (uintptr_t)outputs[o].data % element)
      return fail(s->message, KILN_INVALID_ARGUMENT,
                  "output %u ('%s'): data at %p is not aligned to its element "
                  "size (%zu bytes)",
                  o, want->name, outputs[o].data, element);
  }
  kiln_status overlap = check_overlaps(s, inputs, info->num_inputs, outputs,
                                       info->num_outputs);
  if (overlap.code)
    return overlap;
  for (uint32_t i = 0; i < info->num_inputs; ++i)
    s->args[i] = inputs[i].data;
  for (uint32_t o = 0; o < info->num_outputs; ++o)
    s->args[info->num_inputs + o] = outputs[o].data;
  s->args[info->num_inputs + info->num_outputs + 1] = s->dims;
  kiln_status st = run_variant(s, 0);
  if (st.code)
    return st;
  s->have_shapes = 1;
  return ok_status();
}

kiln_status kiln_get_output_shape(kiln_session *session, size_t output,
                                  int64_t *shape, size_t rank) {
  const kiln_model_info *info = &__kiln_model_info;
  if (!session)
    return fail(thread_message, KILN_INVALID_ARGUMENT,
                "kiln_get_output_shape: session is NULL");
  if (output >= info->num_outputs)
    return fail(session->message, KILN_INVALID_ARGUMENT,
                "kiln_get_output_shape: model '%s' has %u outputs; got index "
                "%zu",
                info->name, info->num_outputs, output);
  const kiln_tensor_info *t = &info->outputs[output];
  if (rank != (size_t)t->rank || (rank && !shape))
    return fail(session->message, KILN_INVALID_ARGUMENT,
                "kiln_get_output_shape: output %zu ('%s') has rank %d; got "
                "%zu entries",
                output, t->name, t->rank, rank);
  const kiln_dims_info *dims = kiln_get_dims_info();
  if (session->dims) {
    if (!session->have_shapes)
      return fail(session->message, KILN_INVALID_ARGUMENT,
                  "kiln_get_output_shape: model '%s' has symbolic dimensions "
                  "and the session has no successful kiln_run yet",
                  info->name);
    size_t at = dims->num_symbols;
    for (size_t o = 0; o < output; ++o)
      at += (size_t)info->outputs[o].rank;
    for (size_t d = 0; d < rank; ++d)
      shape[d] = session->dims[at + d];
    return ok_status();
  }
  int batched =
      dims && leading_symbol(t, dims->output_symbols, (uint32_t)output) >= 0;
  for (size_t d = 0; d < rank; ++d)
    shape[d] = d == 0 && (batched || session->variant) ? session->last_batch
                                                      : t->shape[d];
  return ok_status();
}

kiln_status kiln_run(kiln_session *session, const kiln_tensor *inputs,
                     size_t num_inputs, kiln_tensor *outputs,
                     size_t num_outputs) {
  if (!session)
    return fail(thread_message, KILN_INVALID_ARGUMENT,
                "kiln_run: session is NULL");
  /* A session runs one call at a time (docs/runtime.md); a second thread
   * inside at once would share the arena and compute garbage. The flag
   * makes that an error instead. */
  if (__atomic_exchange_n(&session->busy, 1, __ATOMIC_ACQUIRE))
    return fail(thread_message, KILN_INVALID_ARGUMENT,
                "kiln_run: the session is already running on another thread; "
                "use one session per thread");
  kiln_status st = run_locked(session, inputs, num_inputs, outputs,
                              num_outputs);
  __atomic_store_n(&session->busy, 0, __ATOMIC_RELEASE);
  return st;
}

static kiln_status run_locked(kiln_session *session, const kiln_tensor *inputs,
                              size_t num_inputs, kiln_tensor *outputs,
                              size_t num_outputs) {
  const kiln_model_info *info = &__kiln_model_info;
  if (num_inputs != info->num_inputs || num_outputs != info->num_outputs)
    return fail(session->message, KILN_INVALID_ARGUMENT,
                "kiln_run: model '%s' takes %u inputs and %u outputs; got %zu "
                "and %zu",
                info->name, info->num_inputs, info->num_outputs, num_inputs,
                num_outputs);
  if ((num_inputs && !inputs) || (num_outputs && !outputs))
    return fail(session->message, KILN_INVALID_ARGUMENT,
                "kiln_run: inputs or outputs is NULL");
  if (session->dims)
    return run_extents(session, inputs, outputs);
  if (session->dynamic)
    return run_dynamic(session, inputs, outputs);
  for (uint32_t i = 0; i < info->num_inputs; ++i) {
    kiln_status st =
        check_tensor(session, "input", i, &info->inputs[i], &inputs[i]);
    if (st.code)
      return st;
    if (session->args)
      session->args[i] = inputs[i].data;
  }
  for (uint32_t i = 0; i < info->num_outputs; ++i) {
    kiln_status st =
        check_tensor(session, "output", i, &info->outputs[i], &outputs[i]);
    if (st.code)
      return st;
    if (session->args)
      session->args[info->num_inputs + i] = outputs[i].data;
  }
  kiln_status overlap = check_overlaps(session, inputs, info->num_inputs,
                                       outputs, info->num_outputs);
  if (overlap.code)
    return overlap;
  if (session->gpu)
    return kiln_internal_cuda_run(session->gpu, inputs, outputs,
                                  session->message, KILN_MESSAGE_BYTES);
  return run_variant(session, session->variant);
}
