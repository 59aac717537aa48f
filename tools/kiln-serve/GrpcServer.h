// The KServe v2 gRPC front end (service inference.GRPCInferenceService, see
// proto/inference.proto) beside the HTTP one: the same Registry, batchers,
// metrics and errors, so both protocols serve the same loaded models.
//
// Errors map to gRPC status codes: NOT_FOUND for an unknown model or
// version, INVALID_ARGUMENT for a bad request (the message names the input),
// UNAUTHENTICATED without the --api-token on the repository calls,
// PERMISSION_DENIED for a load outside --repository, RESOURCE_EXHAUSTED for a
// full queue or a message over --max-body-bytes, UNAVAILABLE while draining,
// DEADLINE_EXCEEDED for a request whose deadline passed before it ran,
// INTERNAL when a model fails.
#ifndef KILN_TOOLS_KILN_SERVE_GRPCSERVER_H
#define KILN_TOOLS_KILN_SERVE_GRPCSERVER_H

#include "HttpServer.h"
#include "Lifecycle.h"
#include "Registry.h"

#include <chrono>
#include <memory>

namespace grpc {
class Server;
} // namespace grpc

namespace kiln::serve {

class GrpcService;

class GrpcServer {
public:
  /// Listens on options.host:options.grpcPort with the limits of `options`
  /// (max message size, API token, threads).
  GrpcServer(Registry &registry, Lifecycle &lifecycle,
             const ServerOptions &options);
  ~GrpcServer();

  /// Binds and starts serving on gRPC's own threads; returns the port.
  /// Throws Error when the address cannot be bound.
  int start();
  /// Stops taking calls, lets those in flight finish until `deadline` (then
  /// cancels them) and returns when the server has stopped. Thread-safe.
  void shutdown(std::chrono::system_clock::time_point deadline);

private:
  ServerOptions options_;
  std::unique_ptr<GrpcService> service_;
  std::unique_ptr<grpc::Server> server_;
};

} // namespace kiln::serve

#endif // KILN_TOOLS_KILN_SERVE_GRPCSERVER_H
