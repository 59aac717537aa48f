// The KServe v2 HTTP front end: routes, JSON bodies and status codes. The work
// is done by the Registry (models and versions) and the batchers behind it.
#ifndef KILN_TOOLS_KILN_SERVE_HTTPSERVER_H
#define KILN_TOOLS_KILN_SERVE_HTTPSERVER_H

#include "Connections.h"
#include "Lifecycle.h"
#include "Registry.h"

#include <httplib.h>

#include <atomic>
#include <string>

namespace kiln::serve {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8000; // 0: any free port
  size_t maxBodyBytes = 64 << 20;
  int httpThreads = 1024; // connections served at once (one thread each)
  int readTimeoutSeconds = 5; // a client silent this long is dropped
  int requestTimeoutSeconds = 30; // a request not fully in by then: dropped
  size_t maxHeaders = 100;    // header fields per request (431 beyond)
  std::string apiToken;       // required by the repository API when set
  int grpcPort = -1;          // -1: no gRPC; 0: any free port
  int drainTimeoutSeconds = 30; // SIGTERM: in-flight requests get this long
};

/// httplib's server, opened up for the one thing it does not expose: the
/// listening socket, whose backlog httplib fixes at 5.
class ListeningServer : public httplib::Server {
public:
  socket_t listeningSocket() const { return svr_sock_; }
};

class HttpServer {
public:
  HttpServer(Registry &registry, Lifecycle &lifecycle,
             const ServerOptions &options);

  /// Binds the listening socket; returns the port. Throws Error.
  int bind();
  /// Serves until stop(); returns after every in-flight request finished.
  void serve();
  /// Stops accepting connections and lets serve() drain. Thread-safe; may
  /// come before serve() starts.
  void stop();

private:
  void routeGet(const httplib::Request &req, httplib::Response &res);
  void routePost(const httplib::Request &req, httplib::Response &res);

  Registry &registry_;
  Lifecycle &lifecycle_;
  ServerOptions options_;
  RequestDeadlines deadlines_;
  ListeningServer server_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> serving_{false};
};

} // namespace kiln::serve

#endif // KILN_TOOLS_KILN_SERVE_HTTPSERVER_H
