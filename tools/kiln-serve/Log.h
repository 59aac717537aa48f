// kiln-serve's log: one line per event on stderr, as text for a person
// ("kiln-serve: loaded model name=mlp version=1 load_ms=3.2") or, with
// --log-format=json, as one JSON object per line for a log collector
// ({"ts":"2026-11-29T01:46:51.123Z","level":"info","msg":"loaded model",
// "name":"mlp","version":1,"load_ms":3.2}). Thread-safe: each line is written
// whole, under a lock.
#ifndef KILN_TOOLS_KILN_SERVE_LOG_H
#define KILN_TOOLS_KILN_SERVE_LOG_H

#include <nlohmann/json.hpp>

#include <string>

namespace kiln::serve {

enum class LogFormat { Text, Json };

/// Chooses the format of every later line (before the server threads start).
void setLogFormat(LogFormat format);

/// Writes one line: `msg` and `fields` (an object: its keys become fields of
/// the JSON line, or key=value pairs after the text). `level` is "info",
/// "warning" or "error".
void logEvent(
    const char *level, const std::string &msg,
    const nlohmann::ordered_json &fields = nlohmann::ordered_json::object());

inline void logInfo(
    const std::string &msg,
    const nlohmann::ordered_json &fields = nlohmann::ordered_json::object()) {
  logEvent("info", msg, fields);
}
inline void logError(
    const std::string &msg,
    const nlohmann::ordered_json &fields = nlohmann::ordered_json::object()) {
  logEvent("error", msg, fields);
}

} // namespace kiln::serve

#endif // KILN_TOOLS_KILN_SERVE_LOG_H
