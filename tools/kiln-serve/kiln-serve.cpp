// kiln-serve: serves model.so files written by kiln-compile over the KServe v2
// HTTP and gRPC protocols, loading them only through the public runtime C ABI.
//
//   kiln-serve --port 8000 --grpc-port 8001 --model mlp=mlp.so \
//              --model mlp=mlp_v2.so@2
//
// Every flag can also come from the environment as KILN_SERVE_<FLAG> (upper
// snake case: KILN_SERVE_GRPC_PORT); a flag on the command line wins.
//
// SIGTERM or SIGINT: readiness goes false, the listeners close, the requests
// in flight get --drain-timeout seconds to finish, then the process exits 0
// (3 if requests were still running at the deadline; a second signal: 1 at
// once). Exit status 2: bad arguments, a port that cannot be bound, or a
// model that does not load.
#include "Error.h"
#include "GrpcServer.h"
#include "HttpServer.h"
#include "Lifecycle.h"
#include "Log.h"
#include "Registry.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <pthread.h>
#include <thread>
#include <unistd.h>

using namespace kiln::serve;

namespace {

struct ModelArg {
  std::string name, path;
  std::optional<int64_t> version;
};

// NAME=path.so[@VERSION]
ModelArg parseModelArg(const std::string &arg) {
  size_t eq = arg.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == arg.size())
    throw Error(400, "--model '" + arg + "': expected NAME=path.so[@VERSION]");
  ModelArg m{arg.substr(0, eq), arg.substr(eq + 1), std::nullopt};
  size_t at = m.path.rfind('@');
  if (at != std::string::npos) {
    std::string v = m.path.substr(at + 1);
    bool digits = !v.empty() && v.find_first_not_of("0123456789") == v.npos;
    if (digits) {
      m.version = parseVersion(v);
      m.path.resize(at);
    }
  }
  return m;
}

struct Config {
  ServerOptions server;
  BatchingOptions batching;
  std::vector<std::string> models;
  std::string repository;
  std::string logFormat = "text";
};

void addOptions(CLI::App &app, Config &c) {
  app.add_option("--host", c.server.host, "Address to listen on")
      ->capture_default_str();
  app.add_option("--port", c.server.port,
                 "Port to listen on; 0 picks a free one (printed on stdout)")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  app.add_option("--model", c.models,
                 "NAME=path.so[@VERSION] to load at start (repeatable; "
                 "VERSION defaults to one past the newest of NAME; commas "
                 "separate several)")
      ->type_name("SPEC")
      ->delimiter(',');
  app.add_option("--repository", c.repository,
                 "Directory laid out as DIR/<model>/<version>/model.so, for "
                 "the repository load API")
      ->check(CLI::ExistingDirectory);
  app.add_option("--max-queue-delay-us", c.batching.maxQueueDelayUs,
                 "How long a batch may wait to fill (0: run what is queued)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--max-queue", c.batching.maxQueue,
                 "Requests queued per model version before 503 (0: no bound)")
      ->capture_default_str();
  app.add_option("--max-body-bytes", c.server.maxBodyBytes,
                 "Largest request body accepted (413 beyond)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--slo-p99-ms", c.batching.sloP99Ms,
                 "Adapt the rows-per-batch cap (AIMD) to keep the p99 of "
                 "batch run time plus --max-queue-delay-us under this (0: off)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--threads", c.batching.slots,
                 "Batches one model version may run at once (each slot has "
                 "one session per batch variant)")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  app.add_option("--session-threads", c.batching.sessionThreads,
                 "Threads each session runs one batch on (its num_threads; "
                 "1: the thread that runs the batch)")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  app.add_option("--read-timeout", c.server.readTimeoutSeconds,
                 "Seconds a client may stay silent while sending a request")
      ->capture_default_str()
      ->check(CLI::Range(1, 3600));
  app.add_option("--api-token", c.server.apiToken,
                 "Require 'Authorization: Bearer TOKEN' on the repository API "
                 "(load, unload, index) and on the gRPC repository calls");
  app.add_option("--max-headers", c.server.maxHeaders,
                 "Header fields accepted per request (431 beyond)")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000));
  app.add_option("--request-timeout", c.server.requestTimeoutSeconds,
                 "Seconds a client has to send a whole request (head and "
                 "body), counted from when the server starts waiting for it")
      ->capture_default_str()
      ->check(CLI::Range(1, 3600));
  app.add_option("--http-threads", c.server.httpThreads,
                 "Connections served at once, one thread each (more wait "
                 "for one to close)")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  app.add_option("--grpc-port", c.server.grpcPort,
                 "Also serve the KServe v2 gRPC protocol on this port (0: a "
                 "free one, printed on stdout); off unless given")
      ->check(CLI::Range(0, 65535));
  app.add_option("--drain-timeout", c.server.drainTimeoutSeconds,
                 "Seconds the requests in flight get to finish after SIGTERM "
                 "or SIGINT before the process exits 3")
      ->capture_default_str()
      ->check(CLI::Range(0, 3600));
  app.add_option("--log-format", c.logFormat,
                 "Log lines on stderr: text, or json (one object per line)")
      ->capture_default_str()
      ->check(CLI::IsMember({"text", "json"}));
}

// KILN_SERVE_<FLAG> for every flag (--max-body-bytes:
// KILN_SERVE_MAX_BODY_BYTES), so a container is configured from its
// environment. CLI11 reads the environment only for flags not given on the
// command line.
void bindEnvironment(CLI::App &app) {
  for (CLI::Option *opt : app.get_options()) {
    std::string name = opt->get_single_name();
    if (name.empty() || name == "help")
      continue;
    std::string env = "KILN_SERVE_";
    for (char ch : name)
      env += ch == '-' ? '_' : (char)std::toupper((unsigned char)ch);
    opt->envname(env);
  }
}

// Loads every --model; false (after logging why) when one fails.
bool loadModels(Registry &registry, const Config &c) {
  try {
    for (const std::string &arg : c.models) {
      ModelArg m = parseModelArg(arg);
      registry.load(m.name, m.path, m.version); // logs the load and its time
    }
  } catch (const Error &e) {
    logError(e.what());
    return false;
  }
  return true;
}

// Set by main once every request finished and the models are unloaded.
std::atomic<bool> drained{false};

// After the first SIGTERM or SIGINT: exits the process if the drain is not
// over by `deadline` (status 3 if requests are still running then, else 0),
// or at once with status 1 on a second signal.
void watchDrain(sigset_t stopSignals, Lifecycle &lifecycle,
                std::chrono::steady_clock::time_point deadline) {
  while (!drained) {
    if (std::chrono::steady_clock::now() >= deadline) {
      int64_t left = lifecycle.inFlight();
      if (left > 0) {
        logError("drain deadline passed with requests still running",
                 {{"in_flight", left}});
        _exit(3);
      }
      logInfo("stopped", {{"exit_status", 0}});
      _exit(0);
    }
    timespec wait{0, 50 * 1000 * 1000};
    int signal = sigtimedwait(&stopSignals, nullptr, &wait);
    if (signal > 0) {
      logError("second signal: exiting at once",
               {{"signal", strsignal(signal)}});
      _exit(1);
    }
  }
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"kiln-serve: serves Kiln model.so files over the KServe v2 "
               "HTTP/REST and gRPC protocols"};
  Config c;
  c.batching.slots =
      (int)std::max(1u, std::min(4u, std::thread::hardware_concurrency()));
  addOptions(app, c);
  bindEnvironment(app);
  CLI11_PARSE(app, argc, argv);
  setLogFormat(c.logFormat == "json" ? LogFormat::Json : LogFormat::Text);

  // Every thread inherits this mask; only the signal thread below takes
  // SIGTERM and SIGINT, with sigwait, where it may do real work.
  sigset_t stopSignals;
  sigemptyset(&stopSignals);
  sigaddset(&stopSignals, SIGTERM);
  sigaddset(&stopSignals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stopSignals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  Registry registry(c.batching, c.repository);
  Lifecycle lifecycle(registry);
  if (!loadModels(registry, c))
    return 2;

  HttpServer http(registry, lifecycle, c.server);
  std::unique_ptr<GrpcServer> grpc;
  int port, grpcPort = -1;
  try {
    port = http.bind();
    if (c.server.grpcPort >= 0) {
      grpc = std::make_unique<GrpcServer>(registry, lifecycle, c.server);
      grpcPort = grpc->start();
    }
  } catch (const Error &e) {
    logError(e.what());
    return 2;
  }
  std::printf("kiln-serve: listening on http://%s:%d\n", c.server.host.c_str(),
              port);
  if (grpc)
    std::printf("kiln-serve: listening on grpc://%s:%d\n",
                c.server.host.c_str(), grpcPort);
  std::fflush(stdout);

  std::atomic<bool> grpcStopped{!grpc};
  std::thread([&, stopSignals] {
    int signal = 0;
    sigwait(&stopSignals, &signal);
    lifecycle.startDraining(); // readiness is false from here on
    int timeout = c.server.drainTimeoutSeconds;
    logInfo("draining", {{"signal", strsignal(signal)},
                         {"in_flight", lifecycle.inFlight()},
                         {"drain_timeout_s", timeout}});
    std::thread(watchDrain, stopSignals, std::ref(lifecycle),
                std::chrono::steady_clock::now() +
                    std::chrono::seconds(timeout))
        .detach();
    http.stop();
    if (grpc)
      grpc->shutdown(std::chrono::system_clock::now() +
                     std::chrono::seconds(timeout));
    grpcStopped = true;
  }).detach();

  http.serve();
  if (!lifecycle.draining()) {
    logError("the HTTP server stopped without a signal");
    return 1;
  }
  while (!grpcStopped)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  registry.clear();
  drained = true;
  logInfo("stopped", {{"exit_status", 0}});
  return 0;
}
