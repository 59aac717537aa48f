//===- ModelDescriptor.cpp - metadata the runtime and users read -*- C++ -*-===//
//
// The descriptor is built as LLVM constants whose layout matches the C
// structs kiln_model_info and kiln_tensor_info in runtime/include/kiln/runtime.h.
//
//===----------------------------------------------------------------------===//
#include "kiln/Target/Target.h"

#include "kiln/Client/DType.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cctype>
#include <cstdio>

using namespace llvm;

namespace {
const char *kRuntimeHeader =
#include "RuntimeHeader.inc"
    ;

Constant *stringConstant(Module &m, StringRef s, const Twine &name) {
  Constant *data = ConstantDataArray::getString(m.getContext(), s, true);
  auto *gv = new GlobalVariable(m, data->getType(), /*isConstant=*/true,
                                GlobalValue::PrivateLinkage, data, name);
  gv->setUnnamedAddr(GlobalValue::UnnamedAddr::Global);
  gv->setAlignment(Align(1));
  return gv;
}

Constant *i64Array(Module &m, ArrayRef<int64_t> values, const Twine &name) {
  SmallVector<uint64_t> v(values.begin(), values.end());
  if (v.empty())
    v.push_back(0); // a valid pointer even for rank 0
  Constant *data = ConstantDataArray::get(m.getContext(), v);
  auto *gv = new GlobalVariable(m, data->getType(), true,
                                GlobalValue::PrivateLinkage, data, name);
  gv->setAlignment(Align(8));
  return gv;
}

/// The dtype's name in model.json and model.h, from the client's table.
std::string dtypeName(int32_t dtype) {
  const ::kiln::client::DType *t = ::kiln::client::findDType(dtype);
  return t ? t->name : "unknown";
}

uint64_t maxArenaBytes(const mlir::kiln::ModelDesc &d) {
  uint64_t m = 0;
  for (const auto &v : d.variants)
    m = std::max(m, v.arenaBytes);
  return m;
}

json::Array variants(const mlir::kiln::ModelDesc &d) {
  json::Array out;
  for (const auto &v : d.variants)
    out.push_back(json::Object{{"batch_size", v.batchSize},
                               {"arena_bytes", (int64_t)v.arenaBytes}});
  return out;
}

/// `s` as the body of a C string literal: quotes, backslashes and every byte
/// outside printable ASCII escaped (octal, three digits, so that a digit
/// after it is not taken into the escape).
std::string cString(StringRef s) {
  std::string out;
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += (char)c;
    } else if (c < 0x20 || c >= 0x7f || c == '?') {
      // '?' too: "??/" would be a trigraph in old C dialects.
      char buf[5];
      snprintf(buf, sizeof buf, "\\%03o", c);
      out += buf;
    } else {
      out += (char)c;
    }
  }
  return out;
}

/// `s` inside a C block comment: no "*/" can end it early, no "/*" draws a
/// warning, and no line break or other control byte can start a line.
std::string cComment(StringRef s) {
  std::string out;
  for (unsigned char c : s) {
    if (c < 0x20 || c >= 0x7f)
      out += '?';
    else if ((c == '/' && !out.empty() && out.back() == '*') ||
             (c == '*' && !out.empty() && out.back() == '/'))
      out += std::string(" ") + (char)c; // neither "*/" nor "/*"
    else
      out += (char)c;
  }
  return out;
}

/// A C identifier made from the model name, upper-cased, for macros.
std::string macroPrefix(StringRef name) {
  std::string out = "KILN_MODEL";
  if (name.empty())
    return out;
  out += "_";
  for (char c : name)
    out += std::isalnum((unsigned char)c) ? (char)std::toupper(c) : '_';
  return out;
}
} // namespace

Error mlir::kiln::addModelDescriptor(Module &m, const ModelDesc &d) {
  LLVMContext &ctx = m.getContext();
  size_t numArgs = d.inputs.size() + d.outputs.size() + 1 +
                   (d.runtimeExtents ? 1 : 0);
  SmallVector<Function *> graphs;
  // A CUDA model's graph is a launch table (GpuTarget.cpp), not host code.
  bool gpu = d.target == "cuda";
  for (const ModelDesc::Variant &v : d.variants) {
    if (gpu)
      break;
    Function *graph = m.getFunction(v.entryName);
    if (!graph)
      return createStringError(inconvertibleErrorCode(),
                               "internal: no entry function '" + v.entryName +
                                   "' in the LLVM module");
    if (graph->arg_size() != numArgs)
      return createStringError(
          inconvertibleErrorCode(),
          "internal: entry function takes " +
              std::to_string(graph->arg_size()) + " arguments, expected " +
              std::to_string(numArgs) + " (inputs, outputs, arena)");
    graphs.push_back(graph);
  }
  if (graphs.empty() && !gpu)
    return createStringError(inconvertibleErrorCode(),
                             "internal: no batch variant to describe");

  // Nothing of the model's own code or data is visible outside the .so.
  for (GlobalValue &gv : m.global_values())
    if (!gv.isDeclaration())
      gv.setLinkage(GlobalValue::InternalLinkage);

  Type *i32 = Type::getInt32Ty(ctx), *i64 = Type::getInt64Ty(ctx);
  PointerType *ptr = PointerType::getUnqual(ctx);
  StructType *tensorTy = StructType::get(ctx, {ptr, ptr, i32, i32});
  auto tensorArray = [&](const std::vector<TensorDesc> &ts, StringRef kind) {
    SmallVector<Constant *> elems;
    for (auto [i, t] : llvm::enumerate(ts))
      elems.push_back(ConstantStruct::get(
          tensorTy,
          {stringConstant(m, t.name, "kiln." + kind + ".name"),
           i64Array(m, t.shape, "kiln." + kind + ".shape"),
           ConstantInt::get(i32, t.dtype),
           ConstantInt::get(i32, (int32_t)t.shape.size())}));
    auto *arrTy = ArrayType::get(tensorTy, elems.size());
    auto *gv = new GlobalVariable(m, arrTy, true, GlobalValue::PrivateLinkage,
                                  ConstantArray::get(arrTy, elems),
                                  "kiln." + kind);
    gv->setAlignment(Align(8));
    return gv;
  };
  SmallVector<int64_t> batchSizes, arenaBytes;
  uint64_t maxArena = 0;
  for (const ModelDesc::Variant &v : d.variants) {
    batchSizes.push_back(v.batchSize);
    arenaBytes.push_back((int64_t)v.arenaBytes);
    maxArena = std::max(maxArena, v.arenaBytes);
  }
  StructType *infoTy = StructType::get(
      ctx, {i32, i32, i32, i32, ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr,
            ptr, i64, i64, ptr});
  Constant *info = ConstantStruct::get(
      infoTy,
      {ConstantInt::get(i32, 1), ConstantInt::get(i32, d.inputs.size()),
       ConstantInt::get(i32, d.outputs.size()),
       ConstantInt::get(i32, d.variants.size()),
       stringConstant(m, d.name, "kiln.name"),
       stringConstant(m, d.hash, "kiln.hash"),
       stringConstant(m, d.compilerVersion, "kiln.version"),
       stringConstant(m, d.compileOptions, "kiln.options"),
       stringConstant(m, d.triple, "kiln.triple"),
       stringConstant(m, d.cpu, "kiln.cpu"),
       stringConstant(m, d.requiredIsa, "kiln.isa"),
       tensorArray(d.inputs, "inputs"), tensorArray(d.outputs, "outputs"),
       i64Array(m, batchSizes, "kiln.batch_sizes"),
       ConstantInt::get(i64, maxArena),
       ConstantInt::get(i64, d.arenaAlignment),
       i64Array(m, arenaBytes, "kiln.batch_arena_bytes")});
  auto *infoVar = new GlobalVariable(m, infoTy, true,
                                     GlobalValue::ExternalLinkage, info,
                                     "__kiln_model_info");
  infoVar->setVisibility(GlobalValue::HiddenVisibility);
  infoVar->setAlignment(Align(8));

  // The guard table (runtime/src/model_abi.h), only when there are guards.
  if (!d.guardMessages.empty()) {
    SmallVector<Constant *> messages;
    for (const std::string &msg : d.guardMessages)
      messages.push_back(stringConstant(m, msg, "kiln.guard"));
    auto *msgTy = ArrayType::get(ptr, messages.size());
    auto *msgVar = new GlobalVariable(m, msgTy, true,
                                      GlobalValue::PrivateLinkage,
                                      ConstantArray::get(msgTy, messages),
                                      "kiln.guard_messages");
    msgVar->setAlignment(Align(8));
    StructType *tableTy = StructType::get(ctx, {i32, ptr});
    auto *table = new GlobalVariable(
        m, tableTy, true, GlobalValue::ExternalLinkage,
        ConstantStruct::get(tableTy, {ConstantInt::get(i32, messages.size()),
                                      msgVar}),
        "__kiln_guard_table");
    table->setVisibility(GlobalValue::HiddenVisibility);
    table->setAlignment(Align(8));
  }

  // The symbolic dimensions (kiln_dims_info), only when there are some or
  // sizes are known only at run time.
  if (!d.symbols.empty() || d.runtimeExtents) {
    StructType *symTy = StructType::get(ctx, {ptr, i64, i64});
    SmallVector<Constant *> syms;
    for (const ModelDesc::Symbol &sym : d.symbols)
      syms.push_back(ConstantStruct::get(
          symTy, {stringConstant(m, sym.name, "kiln.symbol"),
                  ConstantInt::get(i64, sym.min),
                  ConstantInt::get(i64, sym.max)}));
    auto *symArrTy = ArrayType::get(symTy, syms.size());
    auto *symVar = new GlobalVariable(m, symArrTy, true,
                                      GlobalValue::PrivateLinkage,
                                      ConstantArray::get(symArrTy, syms),
                                      "kiln.symbols");
    symVar->setAlignment(Align(8));
    auto axes = [&](const std::vector<std::vector<int32_t>> &perTensor,
                    StringRef kind) {
      SmallVector<Constant *> rows;
      for (const std::vector<int32_t> &row : perTensor) {
        Constant *data = ConstantDataArray::get(ctx, ArrayRef<int32_t>(row));
        auto *gv = new GlobalVariable(m, data->getType(), true,
                                      GlobalValue::PrivateLinkage, data,
                                      "kiln." + kind + "_symbols");
        gv->setAlignment(Align(4));
        rows.push_back(gv);
      }
      auto *arrTy = ArrayType::get(ptr, rows.size());
      auto *gv = new GlobalVariable(m, arrTy, true, GlobalValue::PrivateLinkage,
                                    ConstantArray::get(arrTy, rows),
                                    "kiln." + kind + "_symbol_table");
      gv->setAlignment(Align(8));
      return gv;
    };
    // kiln_dims_info; `flags` (KILN_DIMS_RUNTIME_EXTENTS) came later, so a
    // symbolic-batch model keeps the first, shorter struct_size.
    SmallVector<Type *> fields = {i32, i32, ptr, ptr, ptr};
    SmallVector<Constant *> values = {
        nullptr, ConstantInt::get(i32, syms.size()), symVar,
        axes(d.inputSymbols, "input"), axes(d.outputSymbols, "output")};
    if (d.runtimeExtents) {
      fields.push_back(i32);
      values.push_back(
          ConstantInt::get(i32, 1u | (d.independentBatch ? 2u : 0u)));
    }
    StructType *dimsTy = StructType::get(ctx, fields);
    const DataLayout &layout = m.getDataLayout();
    values[0] = ConstantInt::get(i32, layout.getTypeAllocSize(dimsTy));
    auto *dims = new GlobalVariable(
        m, dimsTy, true, GlobalValue::ExternalLinkage,
        ConstantStruct::get(dimsTy, values), "__kiln_dims_info");
    dims->setVisibility(GlobalValue::HiddenVisibility);
    dims->setAlignment(Align(8));
  }

  // void __kiln_entry(uint32_t variant, void **args): unpack and call the
  // compiled graph.
  auto *entryTy = FunctionType::get(Type::getVoidTy(ctx), {i32, ptr}, false);
  Function *entry = Function::Create(entryTy, GlobalValue::ExternalLinkage,
                                     "__kiln_entry", m);
  entry->setVisibility(GlobalValue::HiddenVisibility);
  IRBuilder<> b(BasicBlock::Create(ctx, "entry", entry));
  SmallVector<Value *> args;
  for (size_t i = 0; i < numArgs; ++i)
    args.push_back(b.CreateLoad(
        ptr, b.CreateConstInBoundsGEP1_64(ptr, entry->getArg(1), i)));
  BasicBlock *done = BasicBlock::Create(ctx, "done", entry);
  if (gpu) { // runtime/src/cuda.c runs the model; this entry is never called
    b.CreateBr(done);
    IRBuilder<>(done).CreateRetVoid();
    return Error::success();
  }
  // The runtime only passes valid variant indices; anything else runs the
  // first variant rather than nothing.
  SwitchInst *sw = b.CreateSwitch(entry->getArg(0), done, graphs.size());
  for (auto [i, graph] : llvm::enumerate(graphs)) {
    BasicBlock *call = BasicBlock::Create(ctx, "variant" + Twine(i), entry);
    sw->addCase(ConstantInt::get(cast<IntegerType>(i32), i), call);
    IRBuilder<> cb(call);
    cb.CreateCall(graph, args);
    cb.CreateBr(done);
  }
  sw->setDefaultDest(sw->getSuccessor(1));
  IRBuilder<>(done).CreateRetVoid();
  return Error::success();
}

std::string mlir::kiln::modelJson(const ModelDesc &d) {
  // At run-time sizes, an output axis whose size the run computes (from the
  // symbols or from the data) has its largest size in `shape` and is listed
  // in `computed_axes`.
  auto tensors = [&](const std::vector<TensorDesc> &ts,
                     const std::vector<std::vector<int32_t>> *axes) {
    json::Array arr;
    for (auto [i, t] : llvm::enumerate(ts)) {
      json::Object o{{"name", t.name},
                     {"dtype", dtypeName(t.dtype)},
                     {"shape", json::Array(t.shape)}};
      json::Array computed;
      if (d.runtimeExtents && axes && i < axes->size())
        for (auto [axis, s] : llvm::enumerate((*axes)[i]))
          if (s == -2)
            computed.push_back((int64_t)axis);
      if (!computed.empty())
        o["computed_axes"] = std::move(computed);
      arr.push_back(std::move(o));
    }
    return arr;
  };
  json::Object o{{"abi_version", 1},
                 {"name", d.name},
                 {"hash", d.hash},
                 {"compiler_version", d.compilerVersion},
                 {"compile_options", d.compileOptions},
                 {"target_triple", d.triple},
                 {"cpu", d.cpu},
                 {"required_isa", d.requiredIsa},
                 {"arena_bytes", (int64_t)maxArenaBytes(d)},
                 {"batch_variants", variants(d)},
                 {"arena_alignment", (int64_t)d.arenaAlignment},
                 {"run_time_checks", json::Array(d.guardMessages)},
                 {"inputs", tensors(d.inputs, nullptr)},
                 {"outputs", tensors(d.outputs, &d.outputSymbols)},
                 {"target", d.target}};
  if (!d.symbols.empty()) {
    // Each symbol with its range, and where it appears (tensor, axis).
    json::Array symbols;
    for (auto [k, sym] : llvm::enumerate(d.symbols)) {
      json::Array uses;
      auto addUses = [&](const std::vector<TensorDesc> &ts,
                         const std::vector<std::vector<int32_t>> &axes,
                         StringRef kind) {
        for (auto [i, row] : llvm::enumerate(axes))
          for (auto [axis, s] : llvm::enumerate(row))
            if (s == (int32_t)k && i < ts.size())
              uses.push_back(json::Object{{kind, ts[i].name},
                                          {"axis", (int64_t)axis}});
      };
      addUses(d.inputs, d.inputSymbols, "input");
      addUses(d.outputs, d.outputSymbols, "output");
      json::Object symbol{{"name", sym.name},
                          {"min", sym.min},
                          {"max", sym.max},
                          {"dimensions", std::move(uses)}};
      if (d.runtimeExtents && k == 0)
        symbol["independent_batch"] = d.independentBatch;
      symbols.push_back(std::move(symbol));
    }
    o["symbolic_dimensions"] = std::move(symbols);
  }
  if (d.target == "cuda") {
    o["gpu_arch"] = d.gpuArch;
    json::Array kernels;
    for (const ModelDesc::KernelStats &k : d.kernelStats)
      kernels.push_back(json::Object{{"name", k.kernel},
                                     {"arch", k.arch},
                                     {"registers", k.registers},
                                     {"shared_bytes", k.sharedBytes},
                                     {"stack_bytes", k.stackBytes},
                                     {"spill_store_bytes", k.spillStores},
                                     {"spill_load_bytes", k.spillLoads}});
    o["ptxas"] = d.ptxasNote.empty() ? json::Value(std::move(kernels))
                                     : json::Value(d.ptxasNote);
  }
  std::string out;
  raw_string_ostream os(out);
  os << formatv("{0:2}", json::Value(std::move(o))) << "\n";
  return out;
}

std::string mlir::kiln::modelHeader(const ModelDesc &d) {
  std::string out;
  raw_string_ostream os(out);
  std::string p = macroPrefix(d.name);
  os << "/* Generated by kiln-compile " << d.compilerVersion
     << ". Do not edit. */\n"
     << "/* Model '" << cComment(d.name) << "', sha256 " << cComment(d.hash)
     << " */\n"
     << "#ifndef " << p << "_H\n#define " << p << "_H\n\n"
     << kRuntimeHeader << "\n"
     << "#define " << p << "_ARENA_BYTES " << maxArenaBytes(d) << "ull\n"
     << "#define " << p << "_ARENA_ALIGNMENT " << d.arenaAlignment << "ull\n"
     << "#define " << p << "_NUM_INPUTS " << d.inputs.size() << "\n"
     << "#define " << p << "_NUM_OUTPUTS " << d.outputs.size() << "\n";
  auto tensors = [&](const std::vector<TensorDesc> &ts, StringRef kind) {
    for (auto [i, t] : llvm::enumerate(ts)) {
      std::string q = p + "_" + kind.str() + std::to_string(i);
      os << "#define " << q << "_NAME \"" << cString(t.name) << "\"\n"
         << "#define " << q << "_DTYPE " << t.dtype << " /* "
         << dtypeName(t.dtype) << " */\n"
         << "#define " << q << "_RANK " << t.shape.size() << "\n";
      int64_t elems = 1;
      os << "#define " << q << "_SHAPE {";
      for (auto [j, s] : llvm::enumerate(t.shape)) {
        os << (j ? ", " : "") << s;
        elems *= s;
      }
      os << "}\n#define " << q << "_ELEMENTS " << elems << "\n";
    }
  };
  tensors(d.inputs, "INPUT");
  tensors(d.outputs, "OUTPUT");
  // A symbolic dimension: its range; the _SHAPE macros above give the
  // smallest compiled batch (batch_sizes[0]) in its place.
  for (auto [k, sym] : llvm::enumerate(d.symbols)) {
    std::string q = p + "_SYMBOL" + std::to_string(k);
    os << "#define " << q << "_NAME \"" << cString(sym.name) << "\"\n"
       << "#define " << q << "_MIN " << sym.min << "\n"
       << "#define " << q << "_MAX " << sym.max << "\n";
    if (k == 0 && d.independentBatch)
      os << "#define " << q << "_INDEPENDENT_BATCH 1\n";
  }
  os << "\n#endif\n";
  return out;
}
