//===- Link.cpp - model object + runtime -> model.so ------------*- C++ -*-===//
#include "kiln/Target/Target.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

extern "C" const char kiln_runtime_object_start[];
extern "C" const char kiln_runtime_object_end[];

namespace {
Error writeFile(const Twine &path, StringRef bytes) {
  std::error_code ec;
  raw_fd_ostream os(path.str(), ec, sys::fs::OF_None);
  if (ec)
    return createStringError(ec, "cannot write '" + path.str() +
                                     "': " + ec.message());
  os << bytes;
  return Error::success();
}

/// Removes a directory tree when it goes out of scope.
struct TempDir {
  SmallString<128> path;
  ~TempDir() {
    if (!path.empty())
      sys::fs::remove_directories(path);
  }
};
} // namespace

Error mlir::kiln::linkSharedObject(ArrayRef<std::string> objects,
                                  const std::string &outPath) {
  TempDir dir;
  if (std::error_code ec =
          sys::fs::createUniqueDirectory("kiln-link", dir.path))
    return createStringError(ec, "cannot create a temporary directory: " +
                                     ec.message());
  SmallString<128> runtimeObj(dir.path), log(dir.path);
  sys::path::append(runtimeObj, "runtime.o");
  sys::path::append(log, "link.log");
  std::vector<std::string> modelObjs;
  for (size_t i = 0; i < objects.size(); ++i) {
    SmallString<128> path(dir.path);
    sys::path::append(path, i == 0 ? std::string("model.o")
                                   : "model" + std::to_string(i) + ".o");
    if (Error e = writeFile(path, objects[i]))
      return e;
    modelObjs.push_back(std::string(path));
  }
  if (Error e = writeFile(runtimeObj,
                          StringRef(kiln_runtime_object_start,
                                    kiln_runtime_object_end -
                                        kiln_runtime_object_start)))
    return e;

  std::string driverName = "cc";
  if (const char *env = std::getenv("KILN_CC"); env && *env)
    driverName = env;
  ErrorOr<std::string> driver = sys::findProgramByName(driverName);
  if (!driver)
    return createStringError(
        inconvertibleErrorCode(),
        "cannot find the linker driver '" + driverName +
            "' on PATH; install a C compiler (apt-get install gcc) or set "
            "KILN_CC");
  // A .so that needs only libc (and libm for math the compiler calls): no
  // libgcc_s, no executable stack, runtime symbols resolved inside the .so.
  // Its SONAME is its file name, so a program linked against it finds it by
  // that name (find_package(KilnRuntime)'s kiln_add_model).
  std::string soname = sys::path::filename(outPath).str();
  SmallVector<StringRef> args = {*driver,
                                 "-Xlinker",
                                 "-soname",
                                 "-Xlinker",
                                 soname,
                                 "-shared",
                                 "-o",
                                 outPath};
  for (const std::string &obj : modelObjs)
    args.push_back(obj);
  args.append({runtimeObj.str(), "-static-libgcc", "-Wl,-z,noexecstack",
               "-Wl,-z,now", "-Wl,--as-needed", "-lm"});
  std::optional<StringRef> redirects[] = {std::nullopt, log.str(), log.str()};
  std::string errMsg;
  int rc = sys::ExecuteAndWait(*driver, args, std::nullopt, redirects, 0, 0,
                               &errMsg);
  if (rc != 0) {
    std::string output;
    if (auto buf = MemoryBuffer::getFile(log))
      output = (*buf)->getBuffer().str();
    return createStringError(inconvertibleErrorCode(),
                             "linking '" + outPath + "' with " + *driver +
                                 " failed" +
                                 (errMsg.empty() ? "" : ": " + errMsg) + "\n" +
                                 output);
  }
  return Error::success();
}
