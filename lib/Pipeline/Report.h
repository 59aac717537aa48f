//===- Report.h - memory plan JSON and the HTML compile report --*- C++ -*-===//
#ifndef KILN_LIB_PIPELINE_REPORT_H
#define KILN_LIB_PIPELINE_REPORT_H

#include "kiln/Pipeline/Pipeline.h"
#include "kiln/Target/Target.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/Timing.h"

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace mlir::kiln {

/// Wall time of each compile phase, in order.
using PhaseTimes = std::vector<std::pair<std::string, double>>;

/// Times one phase: nests an MLIR timing scope (for --timing) and records the
/// seconds into `times` when it ends.
class Phase {
public:
  Phase(TimingScope &root, PhaseTimes &times, llvm::StringRef name,
        const ProgressFn &progress)
      : scope(root.nest(name)), times(times), progress(progress),
        name(name.str()), start(std::chrono::steady_clock::now()) {
    if (progress)
      progress(this->name, /*done=*/false, 0);
  }
  ~Phase() {
    double seconds = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - start)
                         .count();
    times.emplace_back(name, seconds);
    if (progress)
      progress(name, /*done=*/true, seconds);
  }
  TimingScope scope;

private:
  PhaseTimes &times;
  const ProgressFn &progress;
  std::string name;
  std::chrono::steady_clock::time_point start;
};

/// The arena plan of every batch variant (after the arena pass) as JSON:
/// buffers with size, offset, lifetime and producing node, plus arena bytes,
/// lower bound and their ratio.
std::string memoryPlanJson(ModuleOp module, const ModelDesc &desc);

/// Under --quantize or --precision: the precision each MatMul/Gemm/Conv
/// node runs in, and the compile notes (what was converted, calibration, the
/// accuracy budget's measured error).
struct PrecisionReport {
  std::vector<std::pair<std::string, std::string>> layers; // node, precision
  std::vector<std::string> notes;
};

/// The precision of every MatMul/Gemm/Conv node of the first function of
/// `module` after the graph phase, in order.
std::vector<std::pair<std::string, std::string>>
layerPrecisions(ModuleOp module);

/// A self-contained HTML page: the arena over time (one rectangle per buffer,
/// hover for the node), the lower bound, live bytes per step, phase times,
/// and the precision of each layer when the compile changed any.
std::string reportHtml(ModuleOp module, const ModelDesc &desc,
                       const PhaseTimes &phases,
                       const PrecisionReport &precision);

} // namespace mlir::kiln

#endif
