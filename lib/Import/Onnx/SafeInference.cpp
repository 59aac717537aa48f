//===- SafeInference.cpp - ONNX's shape inference, crash-proof ------------===//
//
// Part of the ONNX importer. kiln-compile and the Python bindings call ONNX's
// shape inference on models they did not write; a crash inside that library
// would end the caller's process. A forked child runs it first: it shares
// the parent's memory copy-on-write, so the probe costs one more inference
// and no serialization, and what it finds (whether the child lived) decides
// how the parent runs it.
//
//===----------------------------------------------------------------------===//
#include "SafeInference.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <chrono>
#include <csignal>
#include <exception>
#include <thread>

#include <fcntl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {
/// ONNX's inference of `model` in place, its errors ignored.
void infer(onnx::ModelProto &model, bool dataPropagation) {
  try {
    onnx::ShapeInferenceOptions opts{/*check_type=*/false, /*error_mode=*/0,
                                     dataPropagation};
    onnx::shape_inference::InferShapes(
        model, onnx::OpSchemaRegistry::Instance(), opts);
  } catch (const std::exception &) {
  }
}

/// Whether the inference survives `model` in a child process: it exits
/// normally within two minutes. A fork that fails counts as not surviving.
bool survives(onnx::ModelProto &model, bool dataPropagation) {
  // The registry is built once, before the fork (a static the child must
  // not construct under a lock another thread may hold).
  (void)onnx::OpSchemaRegistry::Instance();
  pid_t pid = fork();
  if (pid < 0)
    return false;
  if (pid == 0) {
    // The child: it writes the inference into its own copy-on-write pages
    // of the model; a crash dies quietly (not through LLVM's handler, which
    // would print a stack dump), with nothing on the caller's terminal; no
    // destructors or atexit handlers of the parent's state on the way out.
    for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT})
      signal(sig, SIG_DFL);
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) {
      dup2(null, STDOUT_FILENO);
      dup2(null, STDERR_FILENO);
    }
    infer(model, dataPropagation);
    _exit(0);
  }
  int status = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  for (;;) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid)
      break;
    if (r < 0)
      return false;
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}
} // namespace

bool mlir::kiln::inferShapesSafely(onnx::ModelProto &model) {
  for (bool dataPropagation : {true, false}) {
    if (survives(model, dataPropagation)) {
      infer(model, dataPropagation);
      return true;
    }
  }
  return false;
}
