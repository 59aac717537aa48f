#include "Log.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

using nlohmann::json;

namespace kiln::serve {

namespace {

std::mutex logMu;
LogFormat logFormat = LogFormat::Text;

// RFC 3339 in UTC with milliseconds: 2026-11-29T01:46:51.123Z.
std::string timestamp() {
  auto now = std::chrono::system_clock::now();
  std::time_t secs = std::chrono::system_clock::to_time_t(now);
  int ms = (int)(std::chrono::duration_cast<std::chrono::milliseconds>(
                     now.time_since_epoch())
                     .count() %
                 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
                tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                tm.tm_min, tm.tm_sec, ms);
  return buf;
}

// Strings from the network (model names, paths) may hold anything: invalid
// UTF-8 is replaced rather than thrown over.
template <typename J> std::string dump(const J &j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

} // namespace

void setLogFormat(LogFormat format) {
  std::lock_guard<std::mutex> lock(logMu);
  logFormat = format;
}

void logEvent(const char *level, const std::string &msg,
              const nlohmann::ordered_json &fields) {
  std::string line;
  std::lock_guard<std::mutex> lock(logMu);
  if (logFormat == LogFormat::Json) {
    // ts, level and msg first, as log collectors show them.
    nlohmann::ordered_json j = {
        {"ts", timestamp()}, {"level", level}, {"msg", msg}};
    if (fields.is_object())
      for (const auto &[k, v] : fields.items())
        if (!j.contains(k))
          j[k] = v;
    line = dump(j);
  } else {
    line = "kiln-serve: ";
    if (std::string(level) != "info")
      line += std::string(level) + ": ";
    line += msg;
    if (fields.is_object())
      for (const auto &[k, v] : fields.items())
        line +=
            " " + k + "=" + (v.is_string() ? v.get<std::string>() : dump(v));
  }
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

} // namespace kiln::serve
