//===- QuantizeCommon.h - what the precision passes share --------*- C++ -*-===//
//
// The reduced-precision graph passes (--kiln-quantize-dynamic,
// --kiln-bf16-matmul, --kiln-fp16-compute, --kiln-observe-quant-inputs,
// --kiln-quantize-static) convert the same MatMul/Gemm and Conv nodes. This is
// what they share: which nodes qualify and why the others do not, weight
// quantization and packing, the --keep-fp32 list, and the remark that sums
// up a pass.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LIB_DIALECT_KILN_TRANSFORMS_QUANTIZECOMMON_H
#define KILN_LIB_DIALECT_KILN_TRANSFORMS_QUANTIZECOMMON_H

#include "kiln/Dialect/Kiln/IR/Contract.h"
#include "kiln/Dialect/Kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/STLExtras.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace mlir::kiln::quant {

/// The f32 values of a constant in row-major order, or nothing if the
/// constant is not f32 or its bytes are not at hand.
std::optional<std::vector<float>> readFloats(Value v);

/// Columns per panel of the packed weights: two or one AVX-512 registers of
/// i32 lanes.
int64_t panelWidth(int64_t n);

struct QuantizedWeights {
  ElementsAttr packed;
  DenseElementsAttr scales, sums;
};

/// Symmetric int8 of one column of `k` values `at(i)` in [-127, 127]: each
/// value goes to `put(i, q)`; returns the scale (max |w| / 127) and the
/// sum of the q.
std::pair<float, int32_t>
quantizeColumn(int64_t k, llvm::function_ref<float(int64_t)> at,
               llvm::function_ref<void(int64_t, int8_t)> put);

/// Per output column symmetric int8 for K x N weights `at(k, n)`, packed in
/// panels of `r` columns with 4 consecutive k of a column in one 32-bit
/// lane: [ceil(N / r), Kp / 4, 4 r] (Kp >= K, a multiple of 4), zeros
/// past K and N. `alpha` scales the result (it goes into the scales).
QuantizedWeights quantizeInt8(MLIRContext *ctx, int64_t k, int64_t kp,
                              int64_t n, int64_t r, float alpha,
                              llvm::function_ref<float(int64_t, int64_t)> at);

/// Given int8 values `q(k, n)` of a K x N matrix, packed as quantizeInt8
/// packs them, and their column sums [N] (i32).
std::pair<ElementsAttr, DenseElementsAttr>
packInt8(MLIRContext *ctx, int64_t k, int64_t kp, int64_t n, int64_t r,
         llvm::function_ref<int8_t(int64_t, int64_t)> q);

/// Given int8 values `q(t, c)` of a depthwise filter (tap t = kh * KW + kw
/// of channel c), packed as the depthwise int8 kernel reads them: 4 kernel
/// rows of a channel in one 32-bit lane, [ceil(KH / 4), KW, C, 4] with
/// q[kh, kw, c] at [kh / 4, kw, c, kh % 4] (zero past KH), and the sums of
/// each channel's taps [C] (i32).
std::pair<ElementsAttr, DenseElementsAttr>
packDepthwiseInt8(MLIRContext *ctx, int64_t kh, int64_t kw, int64_t c,
                  llvm::function_ref<int8_t(int64_t, int64_t)> q);

/// Quantizes W [K, N] (stored [N, K] when `transposed`) as
/// kiln.dynamic_quant_matmul wants: panels of panelWidth(N), K padded to 4.
QuantizedWeights quantizeWeights(MLIRContext *ctx, ArrayRef<float> w, int64_t k,
                                 int64_t n, bool transposed, float alpha);

/// A constant that broadcasts to one value per column ([N], [1, N], a scalar
/// ...), times `beta`, as N floats; nothing otherwise.
std::optional<std::vector<float>> perColumnBias(Value c, int64_t n,
                                                float beta);

std::string nodeName(Location loc);

/// Why the matmuls that stay in f32 do; reported once per function.
struct Skipped {
  std::map<std::string, std::vector<std::string>> byReason;
  void add(Operation *op, const std::string &reason) {
    byReason[reason].push_back(nodeName(op->getLoc()));
  }
};

/// The node names the user keeps in f32 (kKeepFp32Attr), and which of them
/// were seen, so that a name that matches no candidate can be reported.
struct KeepFp32 {
  std::map<std::string, bool> names; // name -> seen
  std::set<std::string> byBudget;    // chosen by the accuracy budget search
  explicit KeepFp32(ModuleOp module) {
    if (auto list = module->getAttrOfType<ArrayAttr>(kKeepFp32Attr))
      for (Attribute a : list)
        if (auto s = dyn_cast<StringAttr>(a))
          names[s.str()] = false;
    if (auto list = module->getAttrOfType<ArrayAttr>(kKeepFp32BudgetAttr))
      for (Attribute a : list)
        if (auto s = dyn_cast<StringAttr>(a)) {
          names[s.str()] = false;
          byBudget.insert(s.str());
        }
  }
  /// Whether `op` is kept; records it under `skipped` if so.
  bool keeps(Operation *op, Skipped &skipped) {
    auto it = names.find(nodeName(op->getLoc()));
    if (it == names.end())
      return false;
    it->second = true;
    skipped.add(op, byBudget.count(it->first) ? "accuracy budget"
                                              : "--keep-fp32");
    return true;
  }
  /// One remark on the module for names that matched no candidate node.
  void reportUnused(ModuleOp module, StringRef kinds) {
    std::string unused;
    for (auto &[name, seen] : names)
      if (!seen)
        unused += (unused.empty() ? "'" : ", '") + name + "'";
    if (!unused.empty())
      module.emitRemark() << "--keep-fp32 names " << unused
                          << ", which is not a " << kinds
                          << " node of the model that would have been "
                             "converted (names are ONNX node names)";
  }
};

/// A MatMul or Gemm whose weights are a constant f32 [K, N] matrix, with
/// what a reduced-precision replacement needs to know.
struct Candidate {
  Operation *op = nullptr;       // the matmul
  Operation *replaced = nullptr; // the op whose result the replacement takes
  ConstantOp weights;
  bool transB = false;
  int64_t k = 0, n = 0;
  float alpha = 1.0f;
  std::vector<float> w;
  std::optional<std::vector<float>> bias; // per column, beta applied
};

/// `op` as a candidate, or why it stays f32. The int8 kernel needs N to be a
/// multiple of 16 (`wholePanels`); bf16 pads the last panel.
FailureOr<Candidate> analyze(Operation *op, std::string &why,
                             bool wholePanels);

/// The bias of `c` as a constant [N], or a null value.
Value biasConstant(OpBuilder &b, Location loc, const Candidate &c);

/// Replaces candidate `c` with what `build` makes (inserted before the
/// replaced op) and drops the f32 constants nothing else reads.
void replaceCandidate(
    OpBuilder &b, const Candidate &c,
    llvm::function_ref<Value(OpBuilder &, const Candidate &)> build);

/// Replaces `conv` with `y` and drops its f32 filter if nothing else reads it.
void replaceConv(Conv2DOp conv, Value y);

/// "<label>: 3 of 4 <kind> nodes <verb>; 1 kept in f32 (reason): 'a', ...".
std::string summary(StringRef label, int64_t converted, size_t total,
                    StringRef kind, StringRef verb, const Skipped &skipped);

/// Replaces every candidate MatMul/Gemm of `func` with what `build` makes
/// (inserted before the replaced op), drops the f32 constants nothing else
/// reads, and remarks once how many were converted and why the rest were not:
/// "<label>: 3 of 4 MatMul/Gemm nodes <verb>; 1 kept in f32 (...)".
void rewriteMatmuls(
    func::FuncOp func, StringRef label, StringRef verb, bool wholePanels,
    bool onlyMatmuls, KeepFp32 &keep,
    llvm::function_ref<Value(OpBuilder &, const Candidate &)> build);

/// Weights that batch variants share keep one converted copy.
using WeightKey = std::tuple<const void *, bool, float>;

WeightKey weightKey(const Candidate &c);

/// f32 to bf16, rounding to nearest even; NaN stays a (quiet) NaN.
uint16_t toBf16(float f);

/// K x N weights, `at(k, n)`, rounded to bf16 and packed as
/// kiln.bf16_matmul and kiln.bf16_conv2d want: [ceil(N / 16), Kp / 2, 32],
/// zeros past K and N.
ElementsAttr packBf16(MLIRContext *ctx, int64_t k, int64_t n,
                      llvm::function_ref<float(int64_t, int64_t)> at);

/// A convolution with one group per channel and one filter per group:
/// filter [KH, KW, 1, C] on C channels in NHWC.
bool isDepthwise(Conv2DOp conv);

/// Why an NHWC convolution stays f32, or "" when kiln.bf16_conv2d fits
/// (or, with `depthwise`, kiln.static_quant_depthwise_conv2d for a
/// depthwise one).
std::string bf16ConvBlocker(Conv2DOp conv, bool depthwise = false);

/// A MatMul/Gemm/Conv node as static int8 sees it: `why` it stays f32, or
/// empty for a candidate; a MatMul/Gemm candidate comes analyzed.
struct StaticNode {
  Operation *op;
  std::string why;
  std::optional<Candidate> matmul;
};

/// The nodes static int8 converts and calibration observes, in walk order:
/// MatMul/Gemm with constant f32 weights (`analyze`) and NHWC group-1 and
/// depthwise convolutions with a constant filter. Both passes see the same IR (the
/// same graph pipeline before them), so the i-th node is the same node.
/// Every MatMul/Gemm/Conv comes back, with `why` empty for candidates.
SmallVector<StaticNode> staticNodes(func::FuncOp func);

} // namespace mlir::kiln::quant

#endif
