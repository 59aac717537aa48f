//===- Target.h - objects, the model descriptor and the .so -----*- C++ -*-===//
#ifndef KILN_TARGET_TARGET_H
#define KILN_TARGET_TARGET_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace mlir::kiln {

struct TensorDesc {
  std::string name;
  int32_t dtype = 0; ///< ONNX TensorProto data type (= kiln_dtype)
  std::vector<int64_t> shape;
};

/// Everything the model descriptor, model.h and model.json say.
struct ModelDesc {
  std::string name, hash, compilerVersion, compileOptions, triple, cpu,
      requiredIsa;
  std::vector<TensorDesc> inputs, outputs; ///< shapes of the first variant
  /// One entry per batch variant, ascending batch size.
  struct Variant {
    int64_t batchSize = 0;
    std::string entryName; ///< the compiled function of this variant
    uint64_t arenaBytes = 0;
  };
  std::vector<Variant> variants;
  /// Symbolic dimensions (kiln_dims_info, docs/shapes.md): a symbol's name
  /// and range, and per input and output, per axis, its symbol index or -1.
  /// Empty for a static model.
  struct Symbol {
    std::string name;
    int64_t min = 0, max = 0;
  };
  std::vector<Symbol> symbols;
  std::vector<std::vector<int32_t>> inputSymbols, outputSymbols;
  /// The graph runs at the symbols' run-time sizes (not as batch
  /// variants): it takes a trailing `dims` argument after the arena, and
  /// the shapes above are at the symbols' maxima. An output axis is then -2
  /// in outputSymbols where its size is computed from the symbols.
  bool runtimeExtents = false;
  /// With runtimeExtents: symbol 0 is an independent batch, proven by
  /// kiln-verify-batch-independence (KILN_DIMS_INDEPENDENT_BATCH).
  bool independentBatch = false;
  uint64_t arenaAlignment = 64;
  /// Messages of the run-time guards (see runtime/src/model_abi.h), by
  /// number - 1; empty when the model has none.
  std::vector<std::string> guardMessages;
  /// "cpu", or "cuda" for a model whose graph runs as GPU kernels
  /// (`gpuArch` says which, and the model carries a GpuProgram).
  std::string target = "cpu";
  std::string gpuArch;
  /// `ptxas -v` figures per kernel, for model.json (empty if not run).
  struct KernelStats {
    std::string kernel, arch;
    int64_t registers = 0, sharedBytes = 0, stackBytes = 0, spillStores = 0,
            spillLoads = 0;
  };
  std::vector<KernelStats> kernelStats;
  std::string ptxasNote; ///< why kernelStats is empty, if it is
};

/// What the GPU runtime (runtime/src/cuda.c) needs to run a model: the PTX,
/// the kernels in it, per batch variant the launches in order, and the
/// weights the kernels read. Mirrors kiln_gpu_program in model_abi.h.
struct GpuProgram {
  std::string arch; ///< sm_80, sm_90
  std::string ptx;
  std::vector<std::string> kernels;
  struct Launch {
    uint32_t kernel = 0;
    uint32_t grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
    uint32_t sharedBytes = 0;
    /// One entry per kernel parameter (a bare device pointer): an index into
    /// inputs, then outputs, then the arena, then the weights.
    std::vector<uint32_t> args;
  };
  std::vector<std::vector<Launch>> variants;
  std::string weights; ///< packed bytes, copied to the device per session
};

/// A TargetMachine for x86-64 (or the triple's arch) with `mcpu` ("" = this
/// machine's CPU and features) plus `mattr` ("+f,-g").
llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(const std::string &mcpu, const std::string &mattr,
                    unsigned optLevel);

/// The L2 cache bytes of one core of `mcpu` ("" or "native": this machine's,
/// as the C library reads it from the CPU; else from a table of LLVM CPU
/// names), 1 MiB where unknown. The CPU tiling takes the output channels of
/// a product whose weights do not fit outermost (kiln-cpu-tile-and-vectorize
/// `l2-bytes`).
int64_t l2CacheBytes(const std::string &mcpu);

/// Comma-separated CPU features the runtime must find before running code
/// built for `tm` (the subset of the features it checks that `tm` enables).
std::string requiredIsa(const llvm::TargetMachine &tm);

/// Adds `__kiln_model_info` and the `__kiln_entry(variant, void **args)`
/// trampoline that calls the variant's entry function with one pointer per
/// input, output and the arena, and hides every other symbol.
llvm::Error addModelDescriptor(llvm::Module &module, const ModelDesc &desc);

/// Adds `__kiln_gpu_program` (runtime/src/model_abi.h) to a host module
/// that holds only the descriptor.
llvm::Error addGpuProgram(llvm::Module &module, const GpuProgram &program);

/// Runs `ptxas -v` (from $KILN_PTXAS, PATH or /usr/local/cuda/bin) on `ptx`
/// for `arch` and parses its per-kernel figures. Fails with the assembler's
/// output when it rejects the PTX; `found` is false (and the result empty)
/// when there is no ptxas.
llvm::Expected<std::vector<ModelDesc::KernelStats>>
runPtxas(const std::string &ptx, const std::string &arch, bool &found);

/// Keeps each function LLVM optimizes bounded in size (LongFunctions.cpp):
/// a graph of hundreds of arguments called from __kiln_entry takes the
/// argument array, and blocks of thousands of instructions are cut into
/// functions.
void boundLongFunctions(llvm::Module &module);

/// Runs LLVM's optimization pipeline for `tm` at `optLevel`; a module with
/// `runTimeSizes` (symbolic dimensions) has no loop unrolled by a run-time
/// trip count.
llvm::Error optimizeModule(llvm::Module &module, llvm::TargetMachine &tm,
                           unsigned optLevel, bool runTimeSizes = false);

/// Machine code for `module` as an object file or assembly text.
llvm::Expected<std::string> emitMachineCode(llvm::Module &module,
                                            llvm::TargetMachine &tm,
                                            bool assembly);

/// Object code for `module` in `tms.size()` parts generated at once, one
/// thread each: llvm::SplitModule partitions the code (local symbols
/// become hidden globals, so the parts link into one .so) and each part
/// runs the back end in its own LLVMContext on its own target machine.
/// The weights (constant globals of 4 KiB or more) become one more object,
/// compiled on the calling thread meanwhile. For models whose back end is
/// a large part of the compile.
llvm::Expected<std::vector<std::string>>
emitObjectsInParallel(llvm::Module &module,
                      llvm::MutableArrayRef<std::unique_ptr<llvm::TargetMachine>> tms);

/// Links the model object(s) with the embedded runtime into a shared object
/// that needs only libc and libm. Uses $KILN_CC or `cc` as the linker driver.
llvm::Error linkSharedObject(llvm::ArrayRef<std::string> objects,
                             const std::string &outPath);

/// The generated model.h (self-contained: it carries the runtime ABI) and
/// model.json.
std::string modelHeader(const ModelDesc &desc);
std::string modelJson(const ModelDesc &desc);

} // namespace mlir::kiln

#endif
