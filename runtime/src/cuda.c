/* The GPU half of the runtime: runs a model compiled with --target=cuda by
 * replaying its launch table (model_abi.h) through the CUDA driver API.
 *
 * The driver is opened with dlopen("libcuda.so.1") when the first GPU session
 * is created, never at link time: a model.so needs only libc, loads on any
 * machine, and a machine without a driver or a GPU gets KILN_NO_DEVICE from
 * kiln_session_create. The CUDA types are declared here (no cuda.h needed to
 * build); the entry points are the driver's versioned symbols (cuMemAlloc_v2
 * ...), the names cuda.h maps its API to. */
#include "model_abi.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult; /* CUDA_SUCCESS = 0 */
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;

enum {
  CUDA_ERROR_NO_DEVICE = 100,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_STREAM_NON_BLOCKING = 1
};

/* The driver entry points Kiln uses, resolved once per process. */
static struct {
  CUresult (*Init)(unsigned);
  CUresult (*DriverGetVersion)(int *);
  CUresult (*DeviceGetCount)(int *);
  CUresult (*DeviceGet)(CUdevice *, int);
  CUresult (*DeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*DevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*DevicePrimaryCtxRelease)(CUdevice);
  CUresult (*CtxSetCurrent)(CUcontext);
  CUresult (*ModuleLoadData)(CUmodule *, const void *);
  CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*ModuleUnload)(CUmodule);
  CUresult (*MemAlloc)(CUdeviceptr *, size_t);
  CUresult (*MemFree)(CUdeviceptr);
  CUresult (*MemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*MemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
  CUresult (*MemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
  CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                           unsigned, unsigned, unsigned, CUstream, void **,
                           void **);
  CUresult (*StreamCreate)(CUstream *, unsigned);
  CUresult (*StreamSynchronize)(CUstream);
  CUresult (*StreamDestroy)(CUstream);
  CUresult (*GetErrorName)(CUresult, const char **);
  CUresult (*GetErrorString)(CUresult, const char **);
} cu;

static pthread_once_t driver_once = PTHREAD_ONCE_INIT;
static int driver_status = KILN_OK; /* KILN_OK or KILN_NO_DEVICE */
static char driver_error[384];

static void load_driver(void) {
  /* KILN_CUDA_DRIVER names another driver library (tests use the toolkit's
   * stub, which has every symbol but no device behind it). */
  const char *path = getenv("KILN_CUDA_DRIVER");
  if (!path || !*path)
    path = "libcuda.so.1";
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *why = dlerror();
    snprintf(driver_error, sizeof(driver_error),
             "no CUDA driver: cannot load %s (%s)", path, why ? why : "?");
    driver_status = KILN_NO_DEVICE;
    return;
  }
  struct {
    void **slot;
    const char *name;
  } syms[] = {
      {(void **)&cu.Init, "cuInit"},
      {(void **)&cu.DriverGetVersion, "cuDriverGetVersion"},
      {(void **)&cu.DeviceGetCount, "cuDeviceGetCount"},
      {(void **)&cu.DeviceGet, "cuDeviceGet"},
      {(void **)&cu.DeviceGetAttribute, "cuDeviceGetAttribute"},
      {(void **)&cu.DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"},
      {(void **)&cu.DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"},
      {(void **)&cu.CtxSetCurrent, "cuCtxSetCurrent"},
      {(void **)&cu.ModuleLoadData, "cuModuleLoadData"},
      {(void **)&cu.ModuleGetFunction, "cuModuleGetFunction"},
      {(void **)&cu.ModuleUnload, "cuModuleUnload"},
      {(void **)&cu.MemAlloc, "cuMemAlloc_v2"},
      {(void **)&cu.MemFree, "cuMemFree_v2"},
      {(void **)&cu.MemcpyHtoD, "cuMemcpyHtoD_v2"},
      {(void **)&cu.MemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2"},
      {(void **)&cu.MemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2"},
      {(void **)&cu.LaunchKernel, "cuLaunchKernel"},
      {(void **)&cu.StreamCreate, "cuStreamCreate"},
      {(void **)&cu.StreamSynchronize, "cuStreamSynchronize"},
      {(void **)&cu.StreamDestroy, "cuStreamDestroy_v2"},
      {(void **)&cu.GetErrorName, "cuGetErrorName"},
      {(void **)&cu.GetErrorString, "cuGetErrorString"},
  };
  for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); ++i) {
    *syms[i].slot = dlsym(lib, syms[i].name);
    if (!*syms[i].slot) {
      snprintf(driver_error, sizeof(driver_error),
               "no usable CUDA driver: %s lacks %s (the driver is too old; "
               "Kiln needs CUDA 11 or newer)",
               path, syms[i].name);
      driver_status = KILN_NO_DEVICE;
      dlclose(lib);
      return;
    }
  }
  CUresult r = cu.Init(0);
  if (r) {
    const char *name = NULL, *text = NULL;
    cu.GetErrorName(r, &name);
    cu.GetErrorString(r, &text);
    snprintf(driver_error, sizeof(driver_error),
             "no CUDA device: cuInit failed with CUDA error %d%s%s%s%s", r,
             name ? " " : "", name ? name : "", text ? ": " : "",
             text ? text : "");
    driver_status = KILN_NO_DEVICE;
    return; /* keep the library loaded: other threads may hold pointers */
  }
}

/* A failed driver call after the driver loaded: a bug or a broken device. */
static kiln_status cuda_fail(char *message, size_t bytes, const char *call,
                             const char *detail, CUresult r) {
  const char *name = NULL, *text = NULL;
  cu.GetErrorName(r, &name);
  cu.GetErrorString(r, &text);
  return kiln_internal_status(message, bytes,
                r == CUDA_ERROR_NO_DEVICE ? KILN_NO_DEVICE
                : r == 2 /* CUDA_ERROR_OUT_OF_MEMORY */ ? KILN_OUT_OF_MEMORY
                                                      : KILN_INTERNAL,
                "CUDA: %s%s%s failed: %s (%s)", call, detail ? " " : "",
                detail ? detail : "", name ? name : "?", text ? text : "?");
}

struct kiln_cuda_session {
  CUdevice device;
  CUcontext context;
  CUmodule module;
  CUstream stream;
  CUfunction *functions;
  uint32_t variant;
  uint32_t num_slots;  /* inputs, outputs, arena, weights */
  CUdeviceptr *slots;
  size_t *slot_bytes;
  void **params;       /* max_args pointers into slots, filled per launch */
  CUdeviceptr status;  /* the guard status word (arena offset 0), or 0 */
};

/* Bytes of tensor `t` in batch variant `variant`. */
static size_t tensor_bytes(const kiln_model_info *info,
                           const kiln_tensor_info *t, uint32_t variant) {
  size_t n = kiln_dtype_size(t->dtype);
  for (int32_t d = 0; d < t->rank; ++d)
    n *= (size_t)(d == 0 && variant ? info->batch_sizes[variant] : t->shape[d]);
  return n;
}

void kiln_internal_cuda_session_destroy(kiln_cuda_session *s) {
  if (!s)
    return;
  if (s->context)
    cu.CtxSetCurrent(s->context);
  for (uint32_t i = 0; s->slots && i < s->num_slots; ++i)
    if (s->slots[i])
      cu.MemFree(s->slots[i]);
  if (s->stream)
    cu.StreamDestroy(s->stream);
  if (s->module)
    cu.ModuleUnload(s->module);
  if (s->context)
    cu.DevicePrimaryCtxRelease(s->device);
  free(s->functions);
  free(s->slots);
  free(s->slot_bytes);
  free(s->params);
  free(s);
}

kiln_status kiln_internal_cuda_session_create(uint32_t variant, char *message,
                                              size_t bytes,
                                              kiln_cuda_session **out) {
  const kiln_model_info *info = &__kiln_model_info;
  const kiln_gpu_program *p = &__kiln_gpu_program;
  *out = NULL;
  pthread_once(&driver_once, load_driver);
  if (driver_status != KILN_OK)
    return kiln_internal_status(message, bytes, KILN_NO_DEVICE,
                  "%s; model '%s' was compiled for an NVIDIA GPU (%s). "
                  "Run it on a machine with the NVIDIA driver and a GPU, or "
                  "compile it for the CPU (kiln-compile without --target=cuda)",
                  driver_error, info->name, p->arch);
  int count = 0;
  CUresult r = cu.DeviceGetCount(&count);
  if (r || count == 0)
    return kiln_internal_status(message, bytes, KILN_NO_DEVICE,
                  "no CUDA device: the driver reports %d GPUs; model '%s' was "
                  "compiled for an NVIDIA GPU (%s)",
                  count, info->name, p->arch);

  kiln_cuda_session *s = (kiln_cuda_session *)calloc(1, sizeof(*s));
  if (!s)
    return kiln_internal_status(message, bytes, KILN_OUT_OF_MEMORY,
                  "kiln_session_create: out of memory");
  s->variant = variant;
  s->num_slots = info->num_inputs + info->num_outputs + 2;
  s->functions = (CUfunction *)calloc(p->num_kernels + 1, sizeof(CUfunction));
  s->slots = (CUdeviceptr *)calloc(s->num_slots, sizeof(CUdeviceptr));
  s->slot_bytes = (size_t *)calloc(s->num_slots, sizeof(size_t));
  s->params = (void **)calloc(p->max_args + 1, sizeof(void *));
  if (!s->functions || !s->slots || !s->slot_bytes || !s->params) {
    kiln_internal_cuda_session_destroy(s);
    return kiln_internal_status(message, bytes, KILN_OUT_OF_MEMORY,
                  "kiln_session_create: out of memory");
  }

  kiln_status st = {KILN_OK, ""};
#define CHECK(call, detail)                                                    \
  do {                                                                         \
    r = (call);                                                                \
    if (r) {                                                                   \
      st = cuda_fail(message, bytes, #call, detail, r);                        \
      goto fail;                                                               \
    }                                                                          \
  } while (0)
  CHECK(cu.DeviceGet(&s->device, 0), NULL);
  int major = 0, minor = 0;
  CHECK(cu.DeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                              s->device), NULL);
  CHECK(cu.DeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                              s->device), NULL);
  int needed = atoi(p->arch + 3); /* "sm_80" -> 80 */
  if (major * 10 + minor < needed) {
    kiln_internal_cuda_session_destroy(s);
    return kiln_internal_status(message, bytes, KILN_NO_DEVICE,
                  "GPU 0 has compute capability %d.%d; model '%s' was "
                  "compiled for %s (%d.%d or newer); recompile with a lower "
                  "--gpu-arch",
                  major, minor, info->name, p->arch, needed / 10, needed % 10);
  }
  CHECK(cu.DevicePrimaryCtxRetain(&s->context, s->device), NULL);
  CHECK(cu.CtxSetCurrent(s->context), NULL);
  /* The driver compiles the PTX for this GPU here, once per session. */
  if (p->num_kernels) /* a model with nothing to compute has no PTX */
    CHECK(cu.ModuleLoadData(&s->module, p->ptx), NULL);
  for (uint32_t k = 0; k < p->num_kernels; ++k)
    CHECK(cu.ModuleGetFunction(&s->functions[k], s->module, p->kernel_names[k]),
          p->kernel_names[k]);
  CHECK(cu.StreamCreate(&s->stream, CU_STREAM_NON_BLOCKING), NULL);

  /* One device buffer per input and output, the arena, the weights. */
  for (uint32_t i = 0; i < info->num_inputs; ++i)
    s->slot_bytes[i] = tensor_bytes(info, &info->inputs[i], variant);
  for (uint32_t i = 0; i < info->num_outputs; ++i)
    s->slot_bytes[info->num_inputs + i] =
        tensor_bytes(info, &info->outputs[i], variant);
  uint32_t arena = info->num_inputs + info->num_outputs;
  s->slot_bytes[arena] = info->batch_arena_bytes
                             ? info->batch_arena_bytes[variant]
                             : info->arena_bytes;
  s->slot_bytes[arena + 1] = p->weights_bytes;
  for (uint32_t i = 0; i < s->num_slots; ++i)
    if (s->slot_bytes[i])
      CHECK(cu.MemAlloc(&s->slots[i], s->slot_bytes[i]), "(device buffer)");
  if (p->weights_bytes)
    CHECK(cu.MemcpyHtoD(s->slots[arena + 1], p->weights, p->weights_bytes),
          "(weights)");
  const kiln_guard_table *guards = &__kiln_guard_table;
  if (guards && guards->count)
    s->status = s->slots[arena];
#undef CHECK
  *out = s;
  return st;
fail:
  kiln_internal_cuda_session_destroy(s);
  return st;
}

kiln_status kiln_internal_cuda_run(kiln_cuda_session *s,
                                   const kiln_tensor *inputs,
                                   kiln_tensor *outputs, char *message,
                                   size_t bytes) {
  const kiln_model_info *info = &__kiln_model_info;
  const kiln_gpu_program *p = &__kiln_gpu_program;
  CUresult r;
#define CHECK(call, detail)                                                    \
  do {                                                                         \
    r = (call);                                                                \
    if (r)                                                                     \
      return cuda_fail(message, bytes, #call, detail, r);                      \
  } while (0)
  CHECK(cu.CtxSetCurrent(s->context), NULL);
  for (uint32_t i = 0; i < info->num_inputs; ++i)
    if (s->slot_bytes[i])
      CHECK(cu.MemcpyHtoDAsync(s->slots[i], inputs[i].data, s->slot_bytes[i],
                               s->stream),
            info->inputs[i].name);
  static const uint32_t zero = 0;
  if (s->status)
    CHECK(cu.MemcpyHtoDAsync(s->status, &zero, sizeof(zero), s->stream),
          "(status word)");
  for (uint32_t l = p->variant_first_launch[s->variant];
       l < p->variant_first_launch[s->variant + 1]; ++l) {
    const kiln_gpu_launch *launch = &p->launches[l];
    for (uint32_t a = 0; a < launch->num_args; ++a)
      s->params[a] = &s->slots[p->args[launch->first_arg + a]];
    CHECK(cu.LaunchKernel(s->functions[launch->kernel], launch->grid[0],
                          launch->grid[1], launch->grid[2], launch->block[0],
                          launch->block[1], launch->block[2],
                          launch->shared_bytes, s->stream, s->params, NULL),
          p->kernel_names[launch->kernel]);
  }
  for (uint32_t i = 0; i < info->num_outputs; ++i) {
    uint32_t slot = info->num_inputs + i;
    if (s->slot_bytes[slot])
      CHECK(cu.MemcpyDtoHAsync(outputs[i].data, s->slots[slot],
                               s->slot_bytes[slot], s->stream),
            info->outputs[i].name);
  }
  uint32_t guard = 0;
  if (s->status)
    CHECK(cu.MemcpyDtoHAsync(&guard, s->status, sizeof(guard), s->stream),
          "(status word)");
  CHECK(cu.StreamSynchronize(s->stream), NULL);
#undef CHECK
  if (guard) {
    const kiln_guard_table *guards = &__kiln_guard_table;
    return kiln_internal_status(message, bytes, KILN_INVALID_ARGUMENT, "kiln_run: %s",
                  guard <= guards->count ? guards->messages[guard - 1]
                                         : "a run-time shape check failed");
  }
  kiln_status ok = {KILN_OK, ""};
  return ok;
}
