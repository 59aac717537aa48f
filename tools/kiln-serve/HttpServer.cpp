#include "HttpServer.h"

#include "Error.h"
#include "Infer.h"
#include "Metrics.h"
#include "Tensor.h"

#include "kiln/Version.h"

#include <nlohmann/json.hpp>

#include <sys/socket.h>
#include <thread>

using nlohmann::json;

namespace kiln::serve {

namespace {

const char *kJson = "application/json";

void reply(httplib::Response &res, int status, const json &body) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), kJson);
}

void replyError(httplib::Response &res, int status, const std::string &what) {
  reply(res, status, json{{"error", what}});
}

// "/v2/models/m/versions/3/infer" -> {"v2", "models", "m", ...}.
std::vector<std::string> split(const std::string &path) {
  std::vector<std::string> parts;
  size_t i = 0;
  while (i < path.size()) {
    while (i < path.size() && path[i] == '/')
      ++i;
    size_t j = path.find('/', i);
    if (j == std::string::npos)
      j = path.size();
    if (j > i)
      parts.push_back(path.substr(i, j - i));
    i = j;
  }
  return parts;
}

// Splits {m}[/versions/{v}]/<rest> after "/v2/models/"; false if the path has
// another form.
bool modelPath(const std::vector<std::string> &p, std::string &name,
               std::string &version, std::string &rest) {
  if (p.size() < 3 || p[0] != "v2" || p[1] != "models")
    return false;
  name = p[2];
  size_t next = 3;
  if (p.size() > 4 && p[3] == "versions") {
    version = p[4];
    next = 5;
  }
  if (p.size() > next + 1)
    return false;
  rest = p.size() == next + 1 ? p[next] : "";
  return true;
}

json tensorMetadata(const ModelVersion &v, bool input, size_t index) {
  const TensorInfo &t =
      input ? v.model().inputs()[index] : v.model().outputs()[index];
  return {{"name", t.name},
          {"datatype", t.type->kserve},
          {"shape", advertisedShape(v, input, index)}};
}

json modelMetadata(const std::vector<std::shared_ptr<ModelVersion>> &all,
                   const ModelVersion &v) {
  json versions = json::array();
  for (const auto &mv : all)
    versions.push_back(std::to_string(mv->version()));
  json inputs = json::array(), outputs = json::array();
  for (size_t i = 0; i < v.model().inputs().size(); ++i)
    inputs.push_back(tensorMetadata(v, true, i));
  for (size_t i = 0; i < v.model().outputs().size(); ++i)
    outputs.push_back(tensorMetadata(v, false, i));
  const client::ModelInfo &info = v.model().info();
  json parameters = {{"version", std::to_string(v.version())},
                     {"batch_sizes", v.batchSizes()},
                     {"batched", v.takesRows()},
                     {"max_batch", v.maxBatch()},
                     {"model_hash", info.hash},
                     {"compiler_version", info.compilerVersion},
                     {"required_isa", info.requiredIsa},
                     {"path", v.path()}};
  // Run-time sizes: each symbol's range, by name (docs/shapes.md).
  if (v.runtimeExtents()) {
    json symbols = json::array();
    for (const auto &sym : info.symbols)
      symbols.push_back({{"name", sym.name}, {"min", sym.min}, {"max", sym.max}});
    parameters["symbols"] = symbols;
  }
  return {{"name", v.name()},
          {"versions", versions},
          {"platform", "kiln"},
          {"inputs", inputs},
          {"outputs", outputs},
          {"parameters", parameters}};
}

// Body of a repository call: optional JSON {"parameters": {...}}.
json repositoryParameters(const std::string &body) {
  if (body.empty())
    return json::object();
  json j;
  try {
    j = json::parse(body);
  } catch (const json::exception &e) {
    throw Error(400, std::string("malformed JSON in the request: ") + e.what());
  }
  if (!j.is_object())
    throw Error(400, "the request must be a JSON object");
  auto p = j.find("parameters");
  if (p == j.end())
    return json::object();
  if (!p->is_object())
    throw Error(400, "'parameters' must be an object");
  return *p;
}

std::optional<int64_t> versionParameter(const json &params) {
  auto it = params.find("version");
  if (it == params.end())
    return std::nullopt;
  if (it->is_number_unsigned())
    return it->get<int64_t>();
  if (it->is_string())
    return parseVersion(it->get<std::string>());
  throw Error(400, "parameters.version must be a version number");
}

} // namespace

HttpServer::HttpServer(Registry &registry, Lifecycle &lifecycle,
                       const ServerOptions &options)
    : registry_(registry), lifecycle_(lifecycle), options_(options),
      deadlines_(std::chrono::seconds(options.requestTimeoutSeconds)) {
  // One thread per open connection, up to --http-threads: a keep-alive
  // client never waits for another to hang up. A few stay warm.
  size_t threads = std::max(1, options_.httpThreads);
  server_.new_task_queue = [this, threads] {
    return new ConnectionPool(std::min<size_t>(threads, 8), threads,
                              std::chrono::seconds(10), &deadlines_);
  };
  // The next request's deadline starts once a response is written (httplib
  // logs after writing).
  server_.set_logger([](const httplib::Request &, const httplib::Response &) {
    RequestDeadlines::awaitingRequest();
  });
  // Without TCP_NODELAY a response written in two pieces waits for the
  // client's delayed ACK: tens of milliseconds per request.
  server_.set_tcp_nodelay(true);
  server_.set_keep_alive_max_count(100000);
  server_.set_payload_max_length(options_.maxBodyBytes);
  // A client that stops sending holds its thread for at most this long; one
  // that trickles bytes, for at most --request-timeout (the deadlines).
  server_.set_read_timeout(options_.readTimeoutSeconds);
  server_.set_write_timeout(30);
  // Before the body is read: a request whose Content-Length is not a byte
  // count, or is over --max-body-bytes, is answered at once and its
  // connection closed, instead of holding a thread while the body arrives.
  size_t maxHeaders = options_.maxHeaders;
  size_t maxBodyBytes = options_.maxBodyBytes;
  server_.set_pre_routing_handler([maxHeaders, maxBodyBytes](
                                      const httplib::Request &req,
                                      httplib::Response &res) {
    auto refuse = [&](int status, const std::string &what) {
      res.set_header("Connection", "close");
      replyError(res, status, what);
      return httplib::Server::HandlerResponse::Handled;
    };
    if (req.headers.size() > maxHeaders)
      return refuse(431, "the request has " +
                             std::to_string(req.headers.size()) +
                             " header fields; at most " +
                             std::to_string(maxHeaders) + " are accepted");
    auto length = req.headers.find("Content-Length");
    if (length != req.headers.end()) {
      const std::string &text = length->second;
      uint64_t bytes = 0;
      bool number = !text.empty() && text.size() <= 20 &&
                    text.find_first_not_of("0123456789") == std::string::npos;
      for (char c : number ? text : std::string())
        number &= !__builtin_mul_overflow(bytes, 10, &bytes) &&
                  !__builtin_add_overflow(bytes, (uint64_t)(c - '0'), &bytes);
      if (!number)
        return refuse(400, "Content-Length '" + text +
                               "' is not a byte count");
      if (bytes > maxBodyBytes)
        return refuse(413, "the request body is over --max-body-bytes (" +
                               std::to_string(maxBodyBytes) + " bytes)");
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });

  server_.Get(R"(/.*)", [this](const httplib::Request &req,
                               httplib::Response &res) { routeGet(req, res); });
  server_.Post(R"(/.*)",
               [this](const httplib::Request &req, httplib::Response &res) {
                 routePost(req, res);
               });
  // Errors httplib raises itself (413 for a body over --max-body-bytes, 404
  // for another method) get a JSON body too.
  size_t maxBody = options_.maxBodyBytes;
  server_.set_error_handler(httplib::Server::HandlerWithResponse(
      [maxBody](const httplib::Request &req, httplib::Response &res) {
        if (!res.body.empty())
          return httplib::Server::HandlerResponse::Unhandled;
        std::string what = res.status == 413
                               ? "the request body is over --max-body-bytes (" +
                                     std::to_string(maxBody) + " bytes)"
                               : "HTTP " + std::to_string(res.status) +
                                     " for " + req.method + " " + req.path;
        res.set_content(json{{"error", what}}.dump(-1, ' ', false, json::error_handler_t::replace), kJson);
        return httplib::Server::HandlerResponse::Handled;
      }));
  server_.set_exception_handler([](const httplib::Request &,
                                   httplib::Response &res,
                                   std::exception_ptr ep) {
    try {
      std::rethrow_exception(ep);
    } catch (const Error &e) {
      replyError(res, e.status(), e.what());
    } catch (const std::exception &e) {
      replyError(res, 500, std::string("internal error: ") + e.what());
    } catch (...) {
      replyError(res, 500, "internal error");
    }
  });
}

int HttpServer::bind() {
  int port = options_.port;
  if (port == 0) {
    port = server_.bind_to_any_port(options_.host);
    if (port < 0)
      throw Error(500, "cannot bind " + options_.host + " to a free port");
  } else if (!server_.bind_to_port(options_.host, port)) {
    throw Error(500, "cannot bind " + options_.host + ":" +
                         std::to_string(port) + " (in use?)");
  }
  // A burst of clients connecting at once overflows a backlog of 5 and gets
  // connections reset; listen() again only raises the limit.
  ::listen(server_.listeningSocket(), 1024);
  return port;
}

void HttpServer::serve() {
  serving_ = true;
  if (!stopping_)
    server_.listen_after_bind();
  serving_ = false;
}

void HttpServer::stop() {
  stopping_ = true;
  // listen_after_bind() may not have marked the server running yet; stop()
  // on a server that is not running does nothing, so wait for it.
  while (serving_ && !server_.is_running())
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  server_.stop();
}

void HttpServer::routeGet(const httplib::Request &req, httplib::Response &res) {
  RequestDeadlines::requestArrived(); // running it is not the client's time
  Lifecycle::Request inFlight(lifecycle_);
  std::vector<std::string> p = split(req.path);
  if (p.size() == 1 && p[0] == "metrics") {
    res.set_content(renderMetrics(registry_.all()),
                    "text/plain; version=0.0.4");
    return;
  }
  if (p.size() == 1 && p[0] == "v2") {
    reply(res, 200,
          {{"name", "kiln"},
           {"version", KILN_VERSION_STRING},
           {"extensions", {"binary_tensor_data", "model_repository"}}});
    return;
  }
  if (p.size() == 3 && p[0] == "v2" && p[1] == "health") {
    if (p[2] == "live") {
      reply(res, 200, {{"live", true}});
      return;
    }
    if (p[2] == "ready") {
      bool ready = lifecycle_.ready();
      reply(res, ready ? 200 : 503, {{"ready", ready}});
      return;
    }
  }
  std::string name, version, rest;
  if (modelPath(p, name, version, rest) && (rest.empty() || rest == "ready")) {
    std::shared_ptr<ModelVersion> v = registry_.find(name, version);
    if (rest == "ready")
      reply(res, 200,
            {{"name", name},
             {"version", std::to_string(v->version())},
             {"ready", true}});
    else
      reply(res, 200, modelMetadata(registry_.versions(name), *v));
    return;
  }
  replyError(res, 404, "no such endpoint: GET " + req.path);
}

void HttpServer::routePost(const httplib::Request &req,
                           httplib::Response &res) {
  RequestDeadlines::requestArrived(); // running it is not the client's time
  Lifecycle::Request inFlight(lifecycle_);
  std::vector<std::string> p = split(req.path);
  std::string name, version, rest;
  if (modelPath(p, name, version, rest) && rest == "infer") {
    std::shared_ptr<ModelVersion> v = registry_.find(name, version);
    std::optional<std::string> headerLength;
    if (req.has_header("Inference-Header-Content-Length"))
      headerLength = req.get_header_value("Inference-Header-Content-Length");
    countRequest(*v, [&] {
      InferResponse r = infer(*v, req.body, headerLength);
      res.status = 200;
      res.body = std::move(r.body);
      if (r.jsonBytes) {
        res.set_header("Content-Type", "application/octet-stream");
        res.set_header("Inference-Header-Content-Length",
                       std::to_string(*r.jsonBytes));
      } else {
        res.set_header("Content-Type", kJson);
      }
    });
    return;
  }
  // The repository API changes what the server runs: with --api-token it
  // needs "Authorization: Bearer <token>".
  if (p.size() >= 2 && p[0] == "v2" && p[1] == "repository" &&
      !options_.apiToken.empty() &&
      req.get_header_value("Authorization") != "Bearer " + options_.apiToken) {
    res.set_header("WWW-Authenticate", "Bearer");
    replyError(res, 401,
               "the repository API needs 'Authorization: Bearer <token>' "
               "with the server's --api-token");
    return;
  }
  if (p.size() == 3 && p[0] == "v2" && p[1] == "repository" &&
      p[2] == "index") {
    reply(res, 200, registry_.index());
    return;
  }
  if (p.size() == 5 && p[0] == "v2" && p[1] == "repository" &&
      p[2] == "models" && (p[4] == "load" || p[4] == "unload")) {
    json params = repositoryParameters(req.body);
    std::optional<int64_t> v = versionParameter(params);
    if (p[4] == "load") {
      std::string path;
      auto it = params.find("path");
      if (it != params.end()) {
        if (!it->is_string())
          throw Error(400, "parameters.path must be a string");
        path = it->get<std::string>();
      }
      std::shared_ptr<ModelVersion> loaded =
          registry_.load(p[3], path, v, /*confine=*/true);
      reply(res, 200,
            {{"name", p[3]},
             {"version", std::to_string(loaded->version())},
             {"state", "READY"}});
    } else {
      registry_.unload(p[3], v);
      reply(res, 200, {{"name", p[3]}, {"state", "UNLOADED"}});
    }
    return;
  }
  replyError(res, 404, "no such endpoint: POST " + req.path);
}

} // namespace kiln::serve
