//===- Report.cpp - memory plan JSON and the HTML compile report -*- C++ -*-===//
#include "Report.h"

#include "kiln/Dialect/Kiln/IR/Contract.h"
#include "kiln/Dialect/Kiln/IR/KilnDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
struct BufferRecord {
  int64_t size, offset, first, last;
  std::string producer, type;
};

struct VariantPlan {
  int64_t batchSize = 0;
  int64_t arenaBytes = 0, lowerBound = 0;
  std::vector<BufferRecord> buffers;
};

std::vector<VariantPlan> collect(ModuleOp module, const ModelDesc &desc) {
  std::vector<VariantPlan> out;
  for (const ModelDesc::Variant &v : desc.variants) {
    VariantPlan p;
    p.batchSize = v.batchSize;
    Operation *f = module.lookupSymbol(v.entryName);
    if (!f)
      continue;
    if (auto a = f->getAttrOfType<IntegerAttr>(kArenaBytesAttr))
      p.arenaBytes = a.getInt();
    if (auto a = f->getAttrOfType<IntegerAttr>(kArenaLowerBoundAttr))
      p.lowerBound = a.getInt();
    if (auto records = f->getAttrOfType<ArrayAttr>(kMemoryPlanAttr))
      for (Attribute r : records) {
        auto d = cast<DictionaryAttr>(r);
        auto i = [&](StringRef k) { return d.getAs<IntegerAttr>(k).getInt(); };
        p.buffers.push_back({i("size"), i("offset"), i("first"), i("last"),
                             d.getAs<StringAttr>("producer").str(),
                             d.getAs<StringAttr>("type").str()});
      }
    out.push_back(std::move(p));
  }
  return out;
}

llvm::json::Object planObject(const VariantPlan &p) {
  llvm::json::Array buffers;
  for (auto [i, b] : llvm::enumerate(p.buffers))
    buffers.push_back(llvm::json::Object{{"id", "b" + std::to_string(i)},
                                         {"size", b.size},
                                         {"offset", b.offset},
                                         {"first", b.first},
                                         {"last", b.last},
                                         {"producer", b.producer},
                                         {"type", b.type}});
  double ratio = p.lowerBound ? (double)p.arenaBytes / p.lowerBound : 1.0;
  return llvm::json::Object{{"batch_size", p.batchSize},
                            {"arena_bytes", p.arenaBytes},
                            {"lower_bound_bytes", p.lowerBound},
                            {"ratio", ratio},
                            {"buffers", std::move(buffers)}};
}

std::string escape(StringRef s) {
  std::string out;
  for (char c : s) {
    switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    default: out += c;
    }
  }
  return out;
}

std::string human(int64_t bytes) {
  if (bytes >= (1 << 20))
    return llvm::formatv("{0:F2} MiB", bytes / 1048576.0).str();
  if (bytes >= 1024)
    return llvm::formatv("{0:F1} KiB", bytes / 1024.0).str();
  return std::to_string(bytes) + " B";
}

/// One SVG chart: steps on x, offsets on y (0 at the top), one rectangle per
/// buffer, the lower bound as a dashed line, live bytes per step as a line.
void chart(llvm::raw_ostream &os, const VariantPlan &p) {
  const double W = 960, H = 420, L = 70, T = 10, B = 40;
  int64_t steps = 1;
  for (const BufferRecord &b : p.buffers)
    steps = std::max(steps, b.last + 1);
  double top = std::max<int64_t>(1, std::max(p.arenaBytes, p.lowerBound));
  auto x = [&](double s) { return L + s / steps * (W - L - 10); };
  auto y = [&](double bytes) { return T + bytes / top * (H - T - B); };
  os << "<svg width='" << W << "' height='" << H
     << "' xmlns='http://www.w3.org/2000/svg' font-family='sans-serif' "
        "font-size='11'>\n";
  os << "<rect x='" << L << "' y='" << T << "' width='" << W - L - 10
     << "' height='" << H - T - B << "' fill='#fafafa' stroke='#ccc'/>\n";
  for (auto [i, b] : llvm::enumerate(p.buffers)) {
    unsigned hue = (i * 47) % 360;
    os << llvm::formatv(
        "<rect x='{0:F1}' y='{1:F1}' width='{2:F1}' height='{3:F1}' "
        "fill='hsl({4},60%,65%)' stroke='hsl({4},60%,35%)' stroke-width='0.5'>"
        "<title>{5}\n{6} at offset {7}\nsteps {8}..{9}\n{10}</title></rect>\n",
        x(b.first), y(b.offset), std::max(1.0, x(b.last + 1) - x(b.first)),
        std::max(1.0, y(b.offset + b.size) - y(b.offset)), hue,
        escape(b.producer.empty() ? "(unnamed)" : b.producer), human(b.size),
        b.offset, b.first, b.last, escape(b.type));
  }
  // Live bytes per step: the lower bound is its maximum.
  std::vector<int64_t> live(steps, 0);
  for (const BufferRecord &b : p.buffers)
    for (int64_t s = b.first; s <= b.last; ++s)
      live[s] += (b.size + 63) / 64 * 64;
  os << "<polyline fill='none' stroke='#333' stroke-width='1' points='";
  for (int64_t s = 0; s < steps; ++s)
    os << llvm::formatv("{0:F1},{1:F1} {2:F1},{1:F1} ", x(s), y(live[s]),
                        x(s + 1));
  os << "'><title>bytes live at each step</title></polyline>\n";
  os << llvm::formatv("<line x1='{0}' x2='{1}' y1='{2:F1}' y2='{2:F1}' "
                      "stroke='#d00' stroke-dasharray='6,4'/>\n"
                      "<text x='{3}' y='{4:F1}' fill='#d00'>lower bound {5}"
                      "</text>\n",
                      L, W - 10, y(p.lowerBound), L + 4, y(p.lowerBound) - 4,
                      human(p.lowerBound));
  os << llvm::formatv("<text x='{0}' y='{1}' text-anchor='middle'>step (top-"
                      "level op) 0..{2}</text>\n",
                      (L + W) / 2, H - 12, steps - 1);
  os << llvm::formatv("<text x='12' y='{0}' transform='rotate(-90 12 {0})' "
                      "text-anchor='middle'>offset in arena ({1})</text>\n",
                      (T + H - B) / 2, human((int64_t)top));
  os << "</svg>\n";
}
} // namespace

std::string mlir::kiln::memoryPlanJson(ModuleOp module, const ModelDesc &desc) {
  std::vector<VariantPlan> plans = collect(module, desc);
  llvm::json::Object top =
      plans.empty() ? llvm::json::Object{} : planObject(plans.front());
  top["model"] = desc.name.empty() ? std::string("model") : desc.name;
  top["alignment"] = (int64_t)desc.arenaAlignment;
  if (plans.size() > 1) {
    llvm::json::Array variants;
    for (const VariantPlan &p : plans)
      variants.push_back(planObject(p));
    top["batch_variants"] = std::move(variants);
  }
  std::string out;
  llvm::raw_string_ostream os(out);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(top))) << "\n";
  return out;
}

std::vector<std::pair<std::string, std::string>>
mlir::kiln::layerPrecisions(ModuleOp module) {
  std::vector<std::pair<std::string, std::string>> layers;
  auto funcs = module.getOps<func::FuncOp>();
  if (funcs.empty())
    return layers;
  (*funcs.begin()).walk([&](Operation *op) {
    const char *precision = nullptr;
    if (isa<StaticQuantConv2DOp, StaticQuantDepthwiseConv2DOp,
            StaticQuantMatMulOp>(op))
      precision = "int8 (static)";
    else if (isa<DynamicQuantMatMulOp>(op))
      precision = "int8 (dynamic)";
    else if (isa<IntegerConv2DOp, IntegerDepthwiseConv2DOp, IntegerMatMulOp>(
                 op))
      precision = "int8 (imported)";
    else if (isa<Bf16Conv2DOp, Bf16MatMulOp, Bf16BatchMatMulOp>(op))
      precision = "bf16";
    else if (isa<Conv2DOp, MatMulOp, GemmOp>(op))
      precision = op->hasAttr(kFp16NodeAttr)    ? "fp16"
                  : op->hasAttr(kBf16InputAttr) ? "bf16 input, f32 filter"
                                                : "f32";
    if (!precision)
      return;
    std::string name = "?";
    if (auto loc = dyn_cast<NameLoc>(op->getLoc()))
      name = loc.getName().str();
    else if (auto fused = dyn_cast<FusedLoc>(op->getLoc()))
      for (Location l : fused.getLocations())
        if (auto n = dyn_cast<NameLoc>(l)) {
          name = n.getName().str();
          break;
        }
    layers.push_back({name, precision});
  });
  return layers;
}

std::string mlir::kiln::reportHtml(ModuleOp module, const ModelDesc &desc,
                                   const PhaseTimes &phases,
                                   const PrecisionReport &precision) {
  std::vector<VariantPlan> plans = collect(module, desc);
  std::string out;
  llvm::raw_string_ostream os(out);
  os << "<!doctype html>\n<html><head><meta charset='utf-8'><title>Kiln: "
     << escape(desc.name) << "</title>\n<style>body{font-family:sans-serif;"
        "margin:24px;color:#222;max-width:1000px}p{overflow-wrap:anywhere}table{border-collapse:collapse}td,th{padding:"
        "3px 10px;border-bottom:1px solid #ddd;text-align:right}th{text-align:"
        "left}td:first-child{text-align:left}</style></head><body>\n";
  os << "<h1>" << escape(desc.name) << "</h1>\n<p>" << escape(desc.compilerVersion)
     << " &middot; " << escape(desc.compileOptions) << " &middot; required ISA "
     << escape(desc.requiredIsa) << "</p>\n";
  for (const VariantPlan &p : plans) {
    double ratio = p.lowerBound ? (double)p.arenaBytes / p.lowerBound : 1.0;
    os << "<h2>Arena, batch " << p.batchSize << "</h2>\n<p>"
       << llvm::formatv("arena <b>{0}</b> ({1} bytes), lower bound {2} ({3} "
                        "bytes), ratio <b>{4:F4}</b>, {5} buffers",
                        human(p.arenaBytes), p.arenaBytes, human(p.lowerBound),
                        p.lowerBound, ratio, p.buffers.size())
       << "</p>\n<p>Each rectangle is one intermediate buffer: its lifetime "
          "(steps are the compiled function's top-level operations) across, "
          "its place in the arena down. Hover for the ONNX node that "
          "produces it. The black line is the bytes live at each step; the "
          "dashed line is its maximum, the lower bound.</p>\n";
    chart(os, p);
  }
  if (desc.target == "cuda") {
    // ptxas -v per kernel: what limits occupancy, and whether anything spills.
    os << "<h2>GPU kernels (" << escape(desc.gpuArch) << ")</h2>\n";
    if (desc.kernelStats.empty()) {
      os << "<p>" << escape(desc.ptxasNote) << "</p>\n";
    } else {
      os << "<table><tr><th>kernel</th><th>registers</th><th>shared bytes</th>"
            "<th>stack bytes</th><th>spill stores</th><th>spill loads</th></tr>\n";
      for (const ModelDesc::KernelStats &k : desc.kernelStats)
        os << llvm::formatv("<tr><td>{0}</td><td>{1}</td><td>{2}</td><td>{3}</td>"
                            "<td>{4}</td><td>{5}</td></tr>\n",
                            escape(k.kernel), k.registers, k.sharedBytes,
                            k.stackBytes, k.spillStores, k.spillLoads);
      os << "</table>\n";
    }
  }
  if (!precision.layers.empty()) {
    os << "<h2>Precision per layer</h2>\n";
    for (const std::string &note : precision.notes)
      os << "<p>" << escape(note) << "</p>\n";
    os << "<table><tr><th>node</th><th>precision</th></tr>\n";
    for (const auto &[node, p] : precision.layers)
      os << "<tr><td>" << escape(node) << "</td><td>" << escape(p)
         << "</td></tr>\n";
    os << "</table>\n";
  }
  os << "<h2>Compile phases</h2>\n<table><tr><th>phase</th><th>seconds</th>"
        "</tr>\n";
  double total = 0;
  for (const auto &[name, secs] : phases) {
    os << llvm::formatv("<tr><td>{0}</td><td>{1:F3}</td></tr>\n", escape(name),
                        secs);
    total += secs;
  }
  os << llvm::formatv("<tr><th>total</th><th>{0:F3}</th></tr></table>\n",
                      total);
  os << "</body></html>\n";
  return out;
}
