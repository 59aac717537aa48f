#include "Metrics.h"

namespace kiln::serve {

namespace {

// A label value with Prometheus' three escapes.
std::string escaped(const std::string &s) {
  std::string out;
  for (char c : s) {
    if (c == '\\' || c == '"')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

struct Family {
  const char *name, *type, *help;
  // Appends this family's sample(s) for one version with labels `labels`.
  void (*sample)(std::string &out, const char *name, const std::string &labels,
                 ModelVersion &v);
};

template <typename T>
void line(std::string &out, const std::string &name, const std::string &labels,
          T value) {
  out += name + "{" + labels + "} " + std::to_string(value) + "\n";
}

#define KILN_MICROS(field)                                                     \
  [](std::string &out, const char *name, const std::string &labels,            \
     ModelVersion &v) {                                                        \
    line(out, name, labels, v.metrics().field.load() / 1000);                  \
  }

#define KILN_COUNTER(field)                                                    \
  [](std::string &out, const char *name, const std::string &labels,            \
     ModelVersion &v) { line(out, name, labels, v.metrics().field.load()); }

const Family kFamilies[] = {
    {"kiln_request_success_total", "counter",
     "Inference requests answered with outputs.", KILN_COUNTER(success)},
    {"kiln_request_failure_total", "counter",
     "Inference requests that reached a model version and failed (4xx, 503, "
     "500).",
     KILN_COUNTER(failure)},
    {"kiln_inference_count", "counter",
     "Rows inferred (the leading dimension of every request, padding "
     "excluded).",
     KILN_COUNTER(inferenceRows)},
    {"kiln_execution_count", "counter",
     "Model executions (kiln_run calls, one per batch).",
     KILN_COUNTER(executions)},
    {"kiln_padded_rows_total", "counter",
     "Zero rows added to fill a batch variant.", KILN_COUNTER(paddedRows)},
    {"kiln_queue_duration_us_total", "counter",
     "Microseconds requests (or their slices) waited in the batch queue.",
     KILN_MICROS(queueNs)},
    {"kiln_compute_duration_us_total", "counter",
     "Microseconds spent packing, running and unpacking batches.",
     KILN_MICROS(computeNs)},
    {"kiln_request_duration_us_total", "counter",
     "Microseconds from parsing to the finished response, summed over "
     "requests.",
     KILN_MICROS(requestNs)},
    {"kiln_pending_requests", "gauge", "Requests waiting in the batch queue.",
     KILN_COUNTER(pending)},
    {"kiln_batch_cap", "gauge",
     "Current cap on rows per batch (lowered by the SLO controller).",
     [](std::string &out, const char *name, const std::string &labels,
        ModelVersion &v) { line(out, name, labels, v.batchCap()); }},
    {"kiln_batch_size", "histogram", "Rows per executed batch.",
     [](std::string &out, const char *name, const std::string &labels,
        ModelVersion &v) {
       Metrics &m = v.metrics();
       uint64_t cumulative = 0;
       std::string bucket = std::string(name) + "_bucket";
       for (size_t i = 0; i <= m.batchBuckets.size(); ++i) {
         cumulative += m.batchCounts[i].load();
         std::string le = i < m.batchBuckets.size()
                              ? std::to_string(m.batchBuckets[i])
                              : "+Inf";
         line(out, bucket, labels + ",le=\"" + le + "\"", cumulative);
       }
       line(out, std::string(name) + "_sum", labels, m.batchSum.load());
       line(out, std::string(name) + "_count", labels, cumulative);
     }},
};

} // namespace

std::string
renderMetrics(const std::vector<std::shared_ptr<ModelVersion>> &versions) {
  std::string out;
  for (const Family &f : kFamilies) {
    out += std::string("# HELP ") + f.name + " " + f.help + "\n";
    out += std::string("# TYPE ") + f.name + " " + f.type + "\n";
    for (const auto &v : versions)
      f.sample(out, f.name,
               "model=\"" + escaped(v->name()) + "\",version=\"" +
                   std::to_string(v->version()) + "\"",
               *v);
  }
  return out;
}

} // namespace kiln::serve
