// Prometheus text exposition of every loaded version's counters.
#ifndef KILN_TOOLS_KILN_SERVE_METRICS_H
#define KILN_TOOLS_KILN_SERVE_METRICS_H

#include "ModelVersion.h"

#include <string>
#include <vector>

namespace kiln::serve {

/// The /metrics page: kiln_* series labelled {model, version}.
std::string
renderMetrics(const std::vector<std::shared_ptr<ModelVersion>> &versions);

} // namespace kiln::serve

#endif // KILN_TOOLS_KILN_SERVE_METRICS_H
