//===- Progress.h - kiln-compile's progress line ----------------*- C++ -*-===//
//
// On a terminal, one line on stderr that names the phase being compiled and
// redraws its time every quarter second; elsewhere (a log, a pipe), a plain
// line for each phase that took a second or more. --progress=always prints a
// line for every phase, --progress=never nothing.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TOOLS_KILN_COMPILE_PROGRESS_H
#define KILN_TOOLS_KILN_COMPILE_PROGRESS_H

#include "llvm/ADT/StringRef.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace kilncompile {

class Progress {
public:
  enum class Mode { Never, Lines, Live };

  /// The mode for a --progress value (auto, always, never), or nothing for
  /// an unknown value. `auto` is Live on a terminal, else Lines.
  static std::optional<Mode> parse(llvm::StringRef flag, bool stderrIsTty);

  /// Lines mode prints phases that took at least `minSeconds`.
  Progress(Mode mode, double minSeconds);
  ~Progress();
  Progress(const Progress &) = delete;
  Progress &operator=(const Progress &) = delete;

  /// A phase started (done = false) or ended after `seconds`.
  void phase(llvm::StringRef name, bool done, double seconds);
  /// Erases the live line, so later messages start on a clean line.
  void finish();

private:
  using Clock = std::chrono::steady_clock;
  void tick();
  void drawLocked();

  Mode mode;
  double minSeconds;
  Clock::time_point compileStart = Clock::now();
  Clock::time_point phaseStart = compileStart;
  std::string current;
  bool stop = false;
  bool drawn = false;
  std::mutex mu;
  std::condition_variable wake;
  std::thread ticker;
};

} // namespace kilncompile

#endif
