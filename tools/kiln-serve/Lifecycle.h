// What the Kubernetes probes and the drain on SIGTERM need to know, shared by
// the HTTP and gRPC front ends: whether the server is draining, and how many
// requests are in flight on either protocol.
//
// Liveness is "the process answers". Readiness is "send me traffic": at least
// one model version is loaded and no SIGTERM has come, so a pod leaves the
// Service's endpoints the moment it starts draining.
#ifndef KILN_TOOLS_KILN_SERVE_LIFECYCLE_H
#define KILN_TOOLS_KILN_SERVE_LIFECYCLE_H

#include "Registry.h"

#include <atomic>
#include <cstdint>

namespace kiln::serve {

class Lifecycle {
public:
  explicit Lifecycle(const Registry &registry) : registry_(registry) {}

  bool ready() const { return !draining() && !registry_.empty(); }
  bool draining() const { return draining_.load(std::memory_order_acquire); }
  void startDraining() { draining_.store(true, std::memory_order_release); }

  /// Requests being handled now, on both protocols.
  int64_t inFlight() const { return inFlight_.load(std::memory_order_acquire); }

  /// Counts one request as in flight for its scope.
  class Request {
  public:
    explicit Request(Lifecycle &l) : l_(l) { l_.inFlight_.fetch_add(1); }
    ~Request() { l_.inFlight_.fetch_sub(1); }
    Request(const Request &) = delete;
    Request &operator=(const Request &) = delete;

  private:
    Lifecycle &l_;
  };

private:
  const Registry &registry_;
  std::atomic<bool> draining_{false};
  std::atomic<int64_t> inFlight_{0};
};

} // namespace kiln::serve

#endif // KILN_TOOLS_KILN_SERVE_LIFECYCLE_H
