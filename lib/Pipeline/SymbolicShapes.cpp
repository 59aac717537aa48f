//===- SymbolicShapes.cpp - one graph at run-time sizes -----------*- C++ -*-===//
#include "SymbolicShapes.h"

#include "kiln/Dialect/Kiln/IR/Contract.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace mlir::kiln;

llvm::Expected<SymbolicShapes>
kiln::planSymbolicShapes(func::FuncOp graph,
                         const std::vector<SymbolicDim> &dims) {
  SymbolicShapes shapes;
  for (Type t : graph.getArgumentTypes())
    shapes.inputAxes.emplace_back(cast<RankedTensorType>(t).getRank(), -1);
  std::vector<std::string> labels;
  for (const SymbolicDim &d : dims) {
    if (!d.bound || d.bound->max < d.bound->min || d.bound->min < 0)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "error: the symbolic dimension " + d.label() + " of input '" +
              d.input + "' has no range; give it one (--dim or --input-shape)");
    std::string name =
        d.dimParam.empty() ? d.input + "[" + std::to_string(d.axis) + "]"
                           : d.dimParam;
    size_t k = 0;
    while (k < shapes.symbols.size() && shapes.symbols[k].name != name)
      ++k;
    if (k == shapes.symbols.size()) {
      shapes.symbols.push_back({name, d.bound->min, d.bound->max});
      labels.push_back(d.input);
    } else if (shapes.symbols[k].min != d.bound->min ||
               shapes.symbols[k].max != d.bound->max) {
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "error: inputs '" + labels[k] + "' and '" + d.input +
              "' give the symbol '" + name + "' the ranges " +
              toString(DimBound{shapes.symbols[k].min, shapes.symbols[k].max}) +
              " and " + toString(*d.bound) + "; a symbol has one range");
    }
    auto input = llvm::find_if(
        llvm::enumerate(graph.getArguments()), [&](auto arg) {
          auto n = graph.getArgAttrOfType<StringAttr>(arg.index(), "onnx.name");
          return n && n.getValue() == d.input;
        });
    if (input == llvm::enumerate(graph.getArguments()).end())
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "internal error: no graph input '" +
                                         d.input + "'");
    shapes.inputAxes[(*input).index()][d.axis] = (int32_t)k;
  }
  return shapes;
}

void kiln::markSymbolicShapes(func::FuncOp graph, const SymbolicShapes &shapes) {
  MLIRContext *ctx = graph.getContext();
  SmallVector<int64_t> bounds;
  for (const ModelDesc::Symbol &s : shapes.symbols) {
    bounds.push_back(s.min);
    bounds.push_back(s.max);
  }
  graph->setAttr(kSymbolBoundsAttr, DenseI64ArrayAttr::get(ctx, bounds));
  // Every argument's attributes at once (one setArgAttr per argument
  // rebuilds the array of all of them).
  SmallVector<DictionaryAttr> argAttrs;
  bool any = false;
  for (unsigned i = 0; i < graph.getNumArguments(); ++i) {
    NamedAttrList attrs(graph.getArgAttrDict(i));
    if (i < shapes.inputAxes.size()) {
      ArrayRef<int32_t> axes = shapes.inputAxes[i];
      if (!llvm::all_of(axes, [](int32_t a) { return a < 0; })) {
        SmallVector<int64_t> v(axes.begin(), axes.end());
        attrs.set(kSymbolsAttr, DenseI64ArrayAttr::get(ctx, v));
        any = true;
      }
    }
    argAttrs.push_back(attrs.getDictionary(ctx));
  }
  if (any)
    graph.setAllArgAttrs(argAttrs);
}

bool kiln::leadsLikeBatch(const SymbolicShapes &shapes) {
  if (shapes.symbols.empty() || shapes.symbols[0].min < 1 ||
      shapes.inputAxes.empty())
    return false;
  for (const std::vector<int32_t> &axes : shapes.inputAxes) {
    if (axes.empty() || axes[0] != 0)
      return false;
    if (llvm::is_contained(llvm::ArrayRef(axes).drop_front(), 0))
      return false;
  }
  return true;
}
