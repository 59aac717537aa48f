//===- Progress.cpp - kiln-compile's progress line --------------*- C++ -*-===//
#include "Progress.h"

#include <cstdio>

using namespace kilncompile;

static double secondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t)
      .count();
}

std::optional<Progress::Mode> Progress::parse(llvm::StringRef flag,
                                              bool stderrIsTty) {
  if (flag == "auto")
    return stderrIsTty ? Mode::Live : Mode::Lines;
  if (flag == "always")
    return stderrIsTty ? Mode::Live : Mode::Lines;
  if (flag == "never")
    return Mode::Never;
  return std::nullopt;
}

Progress::Progress(Mode mode, double minSeconds)
    : mode(mode), minSeconds(minSeconds) {
  if (mode == Mode::Live)
    ticker = std::thread([this] { tick(); });
}

Progress::~Progress() { finish(); }

void Progress::finish() {
  {
    std::lock_guard<std::mutex> lock(mu);
    if (stop)
      return;
    stop = true;
    if (drawn)
      std::fputs("\r\x1b[K", stderr);
    drawn = false;
  }
  wake.notify_all();
  if (ticker.joinable())
    ticker.join();
}

void Progress::phase(llvm::StringRef name, bool done, double seconds) {
  std::lock_guard<std::mutex> lock(mu);
  if (stop || mode == Mode::Never)
    return;
  if (mode == Mode::Lines) {
    if (done && seconds >= minSeconds)
      std::fprintf(stderr, "kiln-compile: %-22s %7.2f s  (%.1f s in all)\n",
                   name.str().c_str(), seconds, secondsSince(compileStart));
    return;
  }
  // Live: phases nest (a pass pipeline inside a batch variant), so the line
  // names the innermost phase that is running.
  if (!done) {
    current = name.str();
    phaseStart = Clock::now();
  }
  drawLocked();
}

void Progress::drawLocked() {
  if (current.empty())
    return;
  std::fprintf(stderr, "\r\x1b[Kkiln-compile: %s %.1f s  (%.1f s in all)",
               current.c_str(), secondsSince(phaseStart),
               secondsSince(compileStart));
  std::fflush(stderr);
  drawn = true;
}

void Progress::tick() {
  std::unique_lock<std::mutex> lock(mu);
  while (!stop) {
    wake.wait_for(lock, std::chrono::milliseconds(250));
    if (!stop)
      drawLocked();
  }
}
