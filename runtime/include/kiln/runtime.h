/*
 * Kiln runtime ABI, version 1.
 *
 * Every model.so written by kiln-compile exports exactly these functions. They
 * depend on libc only. The header is plain C (C99) and safe to include from C++.
 *
 * Ownership: the model owns its metadata (valid while the .so is loaded); the
 * caller owns every tensor buffer it passes in and every session it creates.
 * Thread safety: metadata and session creation are thread-safe; a session is
 * used by one thread at a time (create one session per concurrent caller; the
 * weights are shared read-only by all sessions).
 */
#ifndef KILN_RUNTIME_H
#define KILN_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KILN_ABI_VERSION 1

#if defined(__GNUC__)
#define KILN_API __attribute__((visibility("default")))
#else
#define KILN_API
#endif

/* Status codes. KILN_OK is 0 so `if (s.code)` tests for failure. */
typedef enum kiln_status_code {
  KILN_OK = 0,
  KILN_INVALID_ARGUMENT = 1,  /* wrong count, name, dtype, shape or NULL pointer */
  KILN_UNSUPPORTED_ISA = 2,   /* this CPU lacks an instruction set the model needs */
  KILN_OUT_OF_MEMORY = 3,     /* the arena could not be allocated */
  KILN_ARENA_TOO_SMALL = 4,   /* a caller-supplied arena is too small or misaligned */
  KILN_NO_DEVICE = 5,         /* the model targets a device this machine lacks */
  KILN_INTERNAL = 6
} kiln_status_code;

/* A status is returned by value. `message` is never NULL; it stays valid until
 * the next failing call on the same session (kiln_run) or the same thread
 * (every other call). Reporting a failure never allocates. */
typedef struct kiln_status {
  kiln_status_code code;
  const char *message;
} kiln_status;

/* Element types use ONNX's TensorProto.DataType numbering. */
typedef enum kiln_dtype {
  KILN_DTYPE_FLOAT32 = 1,
  KILN_DTYPE_UINT8 = 2,
  KILN_DTYPE_INT8 = 3,
  KILN_DTYPE_UINT16 = 4,
  KILN_DTYPE_INT16 = 5,
  KILN_DTYPE_INT32 = 6,
  KILN_DTYPE_INT64 = 7,
  KILN_DTYPE_BOOL = 9,
  KILN_DTYPE_FLOAT16 = 10,
  KILN_DTYPE_FLOAT64 = 11,
  KILN_DTYPE_UINT32 = 12,
  KILN_DTYPE_UINT64 = 13,
  KILN_DTYPE_BFLOAT16 = 16,
  /* The narrow types of ONNX 1.23 take one byte per element: the format's
   * bits in the low bits of the byte (a 4-bit or 2-bit value in the low
   * nibble or pair, upper bits zero in outputs and ignored in inputs).
   * ONNX packs 4-bit and 2-bit values in files; Kiln's ABI does not. */
  KILN_DTYPE_FLOAT8E4M3FN = 17,
  KILN_DTYPE_FLOAT8E4M3FNUZ = 18,
  KILN_DTYPE_FLOAT8E5M2 = 19,
  KILN_DTYPE_FLOAT8E5M2FNUZ = 20,
  KILN_DTYPE_UINT4 = 21,
  KILN_DTYPE_INT4 = 22,
  KILN_DTYPE_FLOAT4E2M1 = 23,
  KILN_DTYPE_FLOAT8E8M0 = 24,
  KILN_DTYPE_UINT2 = 25,
  KILN_DTYPE_INT2 = 26
} kiln_dtype;

/* Name, element type and static shape of one model input or output. */
typedef struct kiln_tensor_info {
  const char *name;
  const int64_t *shape; /* `rank` dimensions, row-major (C order) */
  int32_t dtype;        /* a kiln_dtype */
  int32_t rank;
} kiln_tensor_info;

/* Everything known about the compiled model. Owned by the .so. */
typedef struct kiln_model_info {
  uint32_t abi_version;       /* KILN_ABI_VERSION the model was built for */
  uint32_t num_inputs;
  uint32_t num_outputs;
  uint32_t num_batch_sizes;   /* batch-size variants compiled into this .so */
  const char *name;           /* model name (graph name or --name) */
  const char *hash;           /* SHA-256 of the ONNX file, hex */
  const char *compiler_version;
  const char *compile_options;/* the options that produced this .so */
  const char *target_triple;  /* e.g. x86_64-unknown-linux-gnu */
  const char *cpu;            /* e.g. sapphirerapids */
  const char *required_isa;   /* comma-separated CPU features, e.g. "avx2,fma,avx512f" */
  const kiln_tensor_info *inputs;
  const kiln_tensor_info *outputs;
  const int64_t *batch_sizes; /* num_batch_sizes entries, ascending */
  uint64_t arena_bytes;       /* bytes of scratch memory one session needs
                                 (the largest over all batch variants) */
  uint64_t arena_alignment;   /* required alignment of the arena, in bytes */
  const uint64_t *batch_arena_bytes; /* arena bytes of each batch variant */
} kiln_model_info;

/* Batch variants: a model compiled with several batch sizes holds one variant
 * per size, sharing one copy of the weights. `inputs` and `outputs` describe
 * the first variant (batch_sizes[0]); in the variant for batch size b, every
 * input and output has leading dimension b. A session runs one variant. */

/* A tensor passed to kiln_run. The caller owns `data`; it must hold `bytes`
 * bytes laid out densely in row-major order, aligned at least to the element
 * size (64-byte alignment can be faster, but is not required). `shape` may be
 * NULL, in which case only the byte count is checked. */
typedef struct kiln_tensor {
  void *data;
  size_t bytes;
  int32_t dtype; /* a kiln_dtype */
  int32_t rank;
  const int64_t *shape;
} kiln_tensor;

/* Session options; a NULL options pointer means all defaults. Zero-initialize
 * and set `struct_size = sizeof(kiln_session_options)` so later ABI versions
 * can add fields. */
/* The most threads a session may run on (num_threads above it is refused). */
#define KILN_MAX_THREADS 1024

typedef struct kiln_session_options {
  uint32_t struct_size;
  int32_t num_threads; /* threads to run on: 0 or 1 = the calling thread
                          only; n > 1 starts n - 1 worker threads at session
                          creation, which join the caller inside kiln_run */
  void *arena;         /* optional caller-owned arena, at least the variant's
                          batch_arena_bytes */
  size_t arena_bytes;  /* size of `arena` in bytes; 0 when arena is NULL */
  int64_t batch_size;  /* which batch variant to run; 0 = batch_sizes[0], or
                          for a model with symbolic dimensions any size in
                          range (see kiln_dims_info) */
} kiln_session_options;

typedef struct kiln_session kiln_session;

/* Symbolic dimensions (an addition to ABI v1; docs/shapes.md). A model
 * compiled with a range for a symbolic dimension, e.g. --dim seq=1..512,
 * describes it here; kiln_get_dims_info() returns NULL for a model whose
 * every dimension is static, and a model built before this addition lacks the
 * function (look it up with dlsym and treat its absence as NULL).
 *
 * Two kinds of model have symbols:
 * - A symbolic batch (flags absent or without KILN_DIMS_RUNTIME_EXTENTS): the
 *   symbol is an independent batch, the leading dimension of the inputs that
 *   carry it and of every output. kiln_model_info's inputs and outputs
 *   describe batch size batch_sizes[0]; a session created with batch_size 0
 *   runs any size in [min, max] given by the inputs' shapes (or, with shape
 *   NULL, their byte counts), as compiled batch variants over slices.
 * - Run-time extents (flags has KILN_DIMS_RUNTIME_EXTENTS): one graph runs
 *   at the sizes the inputs give, any axis may be symbolic, and
 *   kiln_model_info's inputs and outputs describe every symbol at its
 *   maximum (the largest buffers). Each input with a symbolic axis must give
 *   its shape; each output buffer must hold the output at the inputs' sizes
 *   (an axis marked -2 below counts at its maximum, the size in
 *   kiln_model_info); kiln_get_output_shape() gives the shape written.
 * Neither kind allocates in kiln_run: the arena is planned at the maxima. */
typedef struct kiln_dim_symbol {
  const char *name; /* the ONNX dim_param, or INPUT[axis] for an unnamed one */
  int64_t min;
  int64_t max;
} kiln_dim_symbol;

/* kiln_dims_info.flags: the model runs at run-time sizes (see above). */
#define KILN_DIMS_RUNTIME_EXTENTS 1u
/* kiln_dims_info.flags, with KILN_DIMS_RUNTIME_EXTENTS: symbol 0 is an
 * independent batch, proven by the compiler. It is axis 0 of every input and
 * every output and no other axis, and each sample (index along it) of every
 * output is computed from that sample's inputs alone, so requests whose other
 * sizes agree may be concatenated along it into one run and split after. */
#define KILN_DIMS_INDEPENDENT_BATCH 2u

typedef struct kiln_dims_info {
  uint32_t struct_size; /* sizeof(kiln_dims_info) when the model was built;
                           fields past it are absent */
  uint32_t num_symbols;
  const kiln_dim_symbol *symbols;
  /* Per input (output), per axis: the index of its symbol, or -1 for a
   * static dimension; rank entries each, as in kiln_model_info. With
   * KILN_DIMS_RUNTIME_EXTENTS an output axis may also be -2: a size the
   * model computes from the symbols (at most the kiln_model_info size). */
  const int32_t *const *input_symbols;
  const int32_t *const *output_symbols;
  /* Added later: read only if struct_size covers it (0 when absent). */
  uint32_t flags;
} kiln_dims_info;

/* Metadata of the model in this .so; never NULL. */
KILN_API const kiln_model_info *kiln_get_model_info(void);

/* Checks that this CPU can run the model (KILN_UNSUPPORTED_ISA if not). For
 * a model with AMX kernels (--precision=bf16) it also asks Linux for AMX tile
 * state for the process, and fails with KILN_UNSUPPORTED_ISA if refused.
 * kiln_session_create checks it too, so calling it first is optional. */
KILN_API kiln_status kiln_check_cpu(void);

/* Creates a session for one batch variant. Allocates the arena once unless
 * options->arena is given (then it must be aligned to arena_alignment and at
 * least the variant's batch_arena_bytes). */
KILN_API kiln_status kiln_session_create(const kiln_session_options *options,
                                         kiln_session **out_session);

/* Runs the model once. Inputs and outputs are given in the order of the model
 * metadata; each buffer aligned at least to its element size, and no output
 * sharing memory with an input or another output. A session runs one call at
 * a time: a second thread calling kiln_run on a session that is running gets
 * KILN_INVALID_ARGUMENT (use one session per thread). Performs no heap
 * allocation and touches no global state. */
KILN_API kiln_status kiln_run(kiln_session *session, const kiln_tensor *inputs,
                              size_t num_inputs, kiln_tensor *outputs,
                              size_t num_outputs);

/* The symbolic dimensions of this model, or NULL if it has none. */
KILN_API const kiln_dims_info *kiln_get_dims_info(void);

/* Writes the shape output `output` had in the session's last successful
 * kiln_run into `shape` (`rank` entries, the output's rank). For a static
 * model it is the compiled shape. */
KILN_API kiln_status kiln_get_output_shape(kiln_session *session, size_t output,
                                           int64_t *shape, size_t rank);

/* Destroys a session and frees what it allocated; NULL is a no-op. */
KILN_API void kiln_session_destroy(kiln_session *session);

/* Size in bytes of one element of `dtype`, 0 for an unknown type. */
KILN_API size_t kiln_dtype_size(int32_t dtype);

#ifdef __cplusplus
}
#endif

#endif /* KILN_RUNTIME_H */
