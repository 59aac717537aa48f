// kiln-serve: serves model.so files written by kiln-compile over the KServe v2
// HTTP protocol, loading them only through the public runtime C ABI.
//
//   kiln-serve --port 8000 --model mlp=mlp.so --model mlp=mlp_v2.so@2
//
// SIGTERM or SIGINT stops accepting connections, lets the requests in flight
// finish, and exits 0. Exit status 2: bad arguments or a model that does not
// load.
#include "Error.h"
#include "HttpServer.h"
#include "Registry.h"

#include <CLI/CLI.hpp>

#include <csignal>
#include <cstdio>
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

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"kiln-serve: serves Kiln model.so files over the KServe v2 "
               "HTTP/REST protocol"};
  ServerOptions server;
  BatchingOptions batching;
  batching.slots =
      (int)std::max(1u, std::min(4u, std::thread::hardware_concurrency()));
  std::vector<std::string> models;
  std::string repository;
  app.add_option("--host", server.host, "Address to listen on")
      ->capture_default_str();
  app.add_option("--port", server.port,
                 "Port to listen on; 0 picks a free one (printed on stdout)")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  app.add_option("--model", models,
                 "NAME=path.so[@VERSION] to load at start (repeatable; "
                 "VERSION defaults to one past the newest of NAME)")
      ->type_name("SPEC");
  app.add_option("--repository", repository,
                 "Directory laid out as DIR/<model>/<version>/model.so, for "
                 "the repository load API")
      ->check(CLI::ExistingDirectory);
  app.add_option("--max-queue-delay-us", batching.maxQueueDelayUs,
                 "How long a batch may wait to fill (0: run what is queued)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--max-queue", batching.maxQueue,
                 "Requests queued per model version before 503 (0: no bound)")
      ->capture_default_str();
  app.add_option("--max-body-bytes", server.maxBodyBytes,
                 "Largest request body accepted (413 beyond)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--slo-p99-ms", batching.sloP99Ms,
                 "Adapt the rows-per-batch cap (AIMD) to keep the p99 of "
                 "batch run time plus --max-queue-delay-us under this (0: off)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--threads", batching.slots,
                 "Batches one model version may run at once (each slot has "
                 "one session per batch variant)")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  app.add_option("--session-threads", batching.sessionThreads,
                 "Threads each session runs one batch on (its num_threads; "
                 "1: the thread that runs the batch)")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  app.add_option("--read-timeout", server.readTimeoutSeconds,
                 "Seconds a client may stay silent while sending a request")
      ->capture_default_str()
      ->check(CLI::Range(1, 3600));
  app.add_option("--api-token", server.apiToken,
                 "Require 'Authorization: Bearer TOKEN' on the repository API "
                 "(load, unload, index)")
      ->envname("KILN_SERVE_API_TOKEN");
  app.add_option("--max-headers", server.maxHeaders,
                 "Header fields accepted per request (431 beyond)")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000));
  app.add_option("--request-timeout", server.requestTimeoutSeconds,
                 "Seconds a client has to send a whole request (head and "
                 "body), counted from when the server starts waiting for it")
      ->capture_default_str()
      ->check(CLI::Range(1, 3600));
  app.add_option("--http-threads", server.httpThreads,
                 "Connections served at once, one thread each (more wait "
                 "for one to close)")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  CLI11_PARSE(app, argc, argv);

  // Every thread inherits this mask; only the signal thread below takes
  // SIGTERM and SIGINT, with sigwait, where it may do real work.
  sigset_t stopSignals;
  sigemptyset(&stopSignals);
  sigaddset(&stopSignals, SIGTERM);
  sigaddset(&stopSignals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stopSignals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  Registry registry(batching, repository);
  try {
    for (const std::string &arg : models) {
      ModelArg m = parseModelArg(arg);
      std::shared_ptr<ModelVersion> v =
          registry.load(m.name, m.path, m.version);
      std::fprintf(stderr,
                   "kiln-serve: loaded model '%s' version %lld from %s "
                   "(batch sizes",
                   m.name.c_str(), (long long)v->version(), m.path.c_str());
      for (int64_t b : v->batchSizes())
        std::fprintf(stderr, " %lld", (long long)b);
      std::fprintf(stderr, "%s)\n",
                   v->batched() ? "" : ", unbatched");
    }
  } catch (const Error &e) {
    std::fprintf(stderr, "kiln-serve: error: %s\n", e.what());
    return 2;
  }

  HttpServer http(registry, server);
  int port;
  try {
    port = http.bind();
  } catch (const Error &e) {
    std::fprintf(stderr, "kiln-serve: error: %s\n", e.what());
    return 2;
  }
  std::printf("kiln-serve: listening on http://%s:%d\n", server.host.c_str(),
              port);
  std::fflush(stdout);

  std::thread([&http, stopSignals] {
    int signal = 0;
    sigwait(&stopSignals, &signal);
    std::fprintf(stderr, "kiln-serve: %s: draining in-flight requests\n",
                 strsignal(signal));
    http.stop();
    // A second signal means "now".
    sigwait(&stopSignals, &signal);
    std::fprintf(stderr, "kiln-serve: %s again: exiting at once\n",
                 strsignal(signal));
    _exit(1);
  }).detach();

  http.serve();
  registry.clear();
  std::fprintf(stderr, "kiln-serve: stopped\n");
  return 0;
}
