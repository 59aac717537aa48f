//===- GpuTarget.cpp - the GPU program table and ptxas figures --*- C++ -*-===//
//
// A CUDA model's host side is data, not code: the PTX, the kernel names, the
// launches of each batch variant and the weights, laid out as
// kiln_gpu_program (runtime/src/model_abi.h) for runtime/src/cuda.c.
//
//===----------------------------------------------------------------------===//
#include "kiln/Target/Target.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <regex>
#include <sstream>

using namespace llvm;

namespace {
GlobalVariable *privateConstant(Module &m, Constant *init, const Twine &name,
                                unsigned align) {
  auto *gv = new GlobalVariable(m, init->getType(), /*isConstant=*/true,
                                GlobalValue::PrivateLinkage, init, name);
  gv->setAlignment(Align(align));
  return gv;
}

Constant *u32Array(Module &m, ArrayRef<uint32_t> values, const Twine &name) {
  SmallVector<uint32_t> v(values.begin(), values.end());
  if (v.empty())
    v.push_back(0); // a valid pointer even when empty
  return privateConstant(m, ConstantDataArray::get(m.getContext(), v), name, 4);
}

/// Removes `path` when it goes out of scope.
struct TempFile {
  SmallString<128> path;
  ~TempFile() {
    if (!path.empty())
      sys::fs::remove(path);
  }
};
} // namespace

Error mlir::kiln::addGpuProgram(Module &m, const GpuProgram &p) {
  LLVMContext &ctx = m.getContext();
  Type *i32 = Type::getInt32Ty(ctx), *i64 = Type::getInt64Ty(ctx);
  PointerType *ptr = PointerType::getUnqual(ctx);

  SmallVector<Constant *> names;
  for (const std::string &k : p.kernels)
    names.push_back(privateConstant(
        m, ConstantDataArray::getString(ctx, k, true), "kiln.gpu.kernel", 1));
  auto *namesTy = ArrayType::get(ptr, names.size());
  Constant *namesVar = privateConstant(m, ConstantArray::get(namesTy, names),
                                       "kiln.gpu.kernels", 8);

  // Launches of all variants in one array; variant v owns
  // [first[v], first[v + 1]). Arguments likewise in one array.
  SmallVector<uint32_t> launchWords, args, first;
  for (const auto &variant : p.variants) {
    first.push_back(launchWords.size() / 10);
    for (const GpuProgram::Launch &l : variant) {
      launchWords.append({l.kernel, l.grid[0], l.grid[1], l.grid[2],
                          l.block[0], l.block[1], l.block[2], l.sharedBytes,
                          (uint32_t)l.args.size(), (uint32_t)args.size()});
      args.append(l.args.begin(), l.args.end());
    }
  }
  first.push_back(launchWords.size() / 10);
  uint32_t maxArgs = 0;
  for (const auto &variant : p.variants)
    for (const GpuProgram::Launch &l : variant)
      maxArgs = std::max<uint32_t>(maxArgs, l.args.size());

  Constant *weights = privateConstant(
      m, ConstantDataArray::getString(ctx, p.weights.empty() ? std::string(1, 0)
                                                             : p.weights,
                                      false),
      "kiln.gpu.weights", 64);
  Constant *ptx = privateConstant(
      m, ConstantDataArray::getString(ctx, p.ptx, true), "kiln.gpu.ptx", 8);
  Constant *arch = privateConstant(
      m, ConstantDataArray::getString(ctx, p.arch, true), "kiln.gpu.arch", 1);

  StructType *programTy = StructType::get(
      ctx, {ptr, ptr, i64, i32, i32, ptr, ptr, ptr, ptr, ptr, i64, i32});
  Constant *program = ConstantStruct::get(
      programTy,
      {arch, ptx, ConstantInt::get(i64, p.ptx.size() + 1),
       ConstantInt::get(i32, p.kernels.size()),
       ConstantInt::get(i32, p.variants.size()), namesVar,
       u32Array(m, first, "kiln.gpu.variant_first_launch"),
       u32Array(m, launchWords, "kiln.gpu.launches"),
       u32Array(m, args, "kiln.gpu.args"), weights,
       ConstantInt::get(i64, p.weights.size()), ConstantInt::get(i32, maxArgs)});
  auto *var = new GlobalVariable(m, programTy, true,
                                 GlobalValue::ExternalLinkage, program,
                                 "__kiln_gpu_program");
  var->setVisibility(GlobalValue::HiddenVisibility);
  var->setAlignment(Align(8));
  return Error::success();
}

Expected<std::vector<mlir::kiln::ModelDesc::KernelStats>>
mlir::kiln::runPtxas(const std::string &ptx, const std::string &arch,
                     bool &found) {
  found = false;
  std::string program;
  if (const char *env = std::getenv("KILN_PTXAS"); env && *env)
    program = env;
  else if (auto onPath = sys::findProgramByName("ptxas"))
    program = *onPath;
  else if (sys::fs::can_execute("/usr/local/cuda/bin/ptxas"))
    program = "/usr/local/cuda/bin/ptxas";
  if (program.empty())
    return std::vector<ModelDesc::KernelStats>{};
  found = true;

  TempFile in, log;
  if (std::error_code ec =
          sys::fs::createTemporaryFile("kiln-kernels", "ptx", in.path))
    return createStringError(ec, "cannot create a temporary file: " +
                                     ec.message());
  if (std::error_code ec =
          sys::fs::createTemporaryFile("kiln-ptxas", "log", log.path))
    return createStringError(ec, "cannot create a temporary file: " +
                                     ec.message());
  {
    std::error_code ec;
    raw_fd_ostream os(in.path, ec);
    if (ec)
      return createStringError(ec, "cannot write '" + in.path.str().str() +
                                       "': " + ec.message());
    os << ptx;
  }
  std::string archFlag = "-arch=" + arch;
  SmallVector<StringRef> argv = {program, "-v", archFlag, "-o", "/dev/null",
                                 in.path};
  std::optional<StringRef> redirects[] = {std::nullopt, log.path.str(),
                                          log.path.str()};
  std::string errMsg;
  int rc = sys::ExecuteAndWait(program, argv, std::nullopt, redirects, 0, 0,
                               &errMsg);
  std::string output;
  if (auto buf = MemoryBuffer::getFile(log.path))
    output = (*buf)->getBuffer().str();
  if (rc != 0)
    return createStringError(inconvertibleErrorCode(),
                             "ptxas rejected the PTX for " + arch + ": " +
                                 errMsg + "\n" + output);

  // ptxas -v: per kernel a "Function properties for K" line, a line with
  // stack and spill bytes, then "Used N registers, ... N bytes smem ...".
  std::vector<ModelDesc::KernelStats> stats;
  static const std::regex props(R"(Function properties for (\S+))");
  static const std::regex spills(
      R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex used(R"(Used (\d+) registers)");
  static const std::regex smem(R"((\d+) bytes smem)");
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    std::smatch m;
    if (std::regex_search(line, m, props)) {
      stats.push_back({});
      stats.back().kernel = m[1];
      stats.back().arch = arch;
    } else if (stats.empty()) {
      continue;
    } else if (std::regex_search(line, m, spills)) {
      stats.back().stackBytes = std::stoll(m[1]);
      stats.back().spillStores = std::stoll(m[2]);
      stats.back().spillLoads = std::stoll(m[3]);
    } else if (std::regex_search(line, m, used)) {
      stats.back().registers = std::stoll(m[1]);
      if (std::regex_search(line, m, smem))
        stats.back().sharedBytes = std::stoll(m[1]);
    }
  }
  return stats;
}
