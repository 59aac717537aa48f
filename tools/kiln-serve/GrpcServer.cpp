#include "GrpcServer.h"

#include "Error.h"
#include "GrpcInfer.h"
#include "Infer.h"

#include "kiln/Version.h"

#include "inference.grpc.pb.h"

#include <grpcpp/grpcpp.h>

#include <climits>

namespace kiln::serve {

using grpc::ServerContext;
using grpc::Status;
using grpc::StatusCode;
using RepositoryParameters =
    google::protobuf::Map<std::string, inference::ModelRepositoryParameter>;

namespace {

// The HTTP status an Error carries, as the gRPC code that means the same.
StatusCode codeFor(int httpStatus) {
  switch (httpStatus) {
  case 400:
  case 431:
    return StatusCode::INVALID_ARGUMENT;
  case 401:
    return StatusCode::UNAUTHENTICATED;
  case 403:
    return StatusCode::PERMISSION_DENIED;
  case 404:
    return StatusCode::NOT_FOUND;
  case 413:
  case 503: // a full queue: the client should back off, not fail over
    return StatusCode::RESOURCE_EXHAUSTED;
  case 504:
    return StatusCode::DEADLINE_EXCEEDED;
  case 500:
    return StatusCode::INTERNAL;
  default:
    return StatusCode::UNKNOWN;
  }
}

// Compares every byte whatever the first difference, so the time an answer
// takes says nothing about how much of a guessed token was right.
bool sameSecret(const std::string &given, const std::string &expected) {
  if (given.size() != expected.size())
    return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < given.size(); ++i)
    diff |= (unsigned char)(given[i] ^ expected[i]);
  return diff == 0;
}

std::optional<int64_t> versionParameter(const RepositoryParameters &params) {
  auto it = params.find("version");
  if (it == params.end())
    return std::nullopt;
  switch (it->second.parameter_choice_case()) {
  case inference::ModelRepositoryParameter::kInt64Param:
    if (it->second.int64_param() < 0)
      break;
    return it->second.int64_param();
  case inference::ModelRepositoryParameter::kStringParam:
    return parseVersion(it->second.string_param());
  default:
    break;
  }
  throw Error(400, "parameters.version must be a non-negative int64_param or "
                   "a string_param holding a version number");
}

void tensorMetadata(const ModelVersion &v, bool input, size_t index,
                    inference::ModelMetadataResponse::TensorMetadata &out) {
  const TensorInfo &t =
      input ? v.model().inputs()[index] : v.model().outputs()[index];
  out.set_name(t.name);
  out.set_datatype(t.type->kserve);
  for (int64_t d : advertisedShape(v, input, index))
    out.add_shape(d);
}

} // namespace

class GrpcService final : public inference::GRPCInferenceService::Service {
public:
  GrpcService(Registry &registry, Lifecycle &lifecycle,
              const ServerOptions &options)
      : registry_(registry), lifecycle_(lifecycle), options_(options) {}

  Status ServerLive(ServerContext *, const inference::ServerLiveRequest *,
                    inference::ServerLiveResponse *res) override {
    res->set_live(true);
    return Status::OK;
  }

  Status ServerReady(ServerContext *, const inference::ServerReadyRequest *,
                     inference::ServerReadyResponse *res) override {
    res->set_ready(lifecycle_.ready());
    return Status::OK;
  }

  Status ModelReady(ServerContext *ctx, const inference::ModelReadyRequest *req,
                    inference::ModelReadyResponse *res) override {
    return guarded(ctx, [&] {
      registry_.find(req->name(), req->version()); // NOT_FOUND if not loaded
      res->set_ready(true);
    });
  }

  Status ServerMetadata(ServerContext *,
                        const inference::ServerMetadataRequest *,
                        inference::ServerMetadataResponse *res) override {
    res->set_name("kiln");
    res->set_version(KILN_VERSION_STRING);
    res->add_extensions("model_repository");
    return Status::OK;
  }

  Status ModelMetadata(ServerContext *ctx,
                       const inference::ModelMetadataRequest *req,
                       inference::ModelMetadataResponse *res) override {
    return guarded(ctx, [&] {
      std::shared_ptr<ModelVersion> v =
          registry_.find(req->name(), req->version());
      res->set_name(v->name());
      for (const auto &mv : registry_.versions(v->name()))
        res->add_versions(std::to_string(mv->version()));
      res->set_platform("kiln");
      for (size_t i = 0; i < v->model().inputs().size(); ++i)
        tensorMetadata(*v, true, i, *res->add_inputs());
      for (size_t i = 0; i < v->model().outputs().size(); ++i)
        tensorMetadata(*v, false, i, *res->add_outputs());
    });
  }

  Status ModelInfer(ServerContext *ctx, const inference::ModelInferRequest *req,
                    inference::ModelInferResponse *res) override {
    // A pod that is draining takes no new work; the client retries on a
    // ready one.
    if (lifecycle_.draining())
      return Status(StatusCode::UNAVAILABLE,
                    "kiln-serve is shutting down and takes no new requests");
    return guarded(ctx, [&] {
      std::shared_ptr<ModelVersion> v =
          registry_.find(req->model_name(), req->model_version());
      countRequest(*v, [&] {
        // The model cannot be stopped once it runs: a request whose
        // deadline already passed (it waited for a thread) is not started.
        if (ctx->deadline() <= std::chrono::system_clock::now())
          throw Error(504, "the request's deadline passed before it ran");
        grpcInfer(*v, *req, *res);
      });
    });
  }

  Status RepositoryIndex(ServerContext *ctx,
                         const inference::RepositoryIndexRequest *req,
                         inference::RepositoryIndexResponse *res) override {
    return guarded(ctx, [&] {
      authorize(*ctx);
      for (const nlohmann::json &row : registry_.index()) {
        std::string state = row.value("state", "");
        if (req->ready() && state != "READY")
          continue;
        auto *m = res->add_models();
        m->set_name(row.value("name", ""));
        m->set_version(row.value("version", ""));
        m->set_state(state);
        m->set_reason(row.value("reason", ""));
      }
    });
  }

  Status
  RepositoryModelLoad(ServerContext *ctx,
                      const inference::RepositoryModelLoadRequest *req,
                      inference::RepositoryModelLoadResponse *) override {
    return guarded(ctx, [&] {
      authorize(*ctx);
      const RepositoryParameters &params = req->parameters();
      for (const auto &[key, value] : params)
        if (key == "config" || key.rfind("file:", 0) == 0)
          throw Error(400, "parameter '" + key +
                               "' is not supported: kiln-serve loads "
                               "compiled model.so files only, by 'path' or "
                               "from --repository");
      std::string path;
      auto it = params.find("path");
      if (it != params.end()) {
        if (it->second.parameter_choice_case() !=
            inference::ModelRepositoryParameter::kStringParam)
          throw Error(400, "parameters.path must be a string_param");
        path = it->second.string_param();
      }
      registry_.load(req->model_name(), path, versionParameter(params),
                     /*confine=*/true);
    });
  }

  Status
  RepositoryModelUnload(ServerContext *ctx,
                        const inference::RepositoryModelUnloadRequest *req,
                        inference::RepositoryModelUnloadResponse *) override {
    return guarded(ctx, [&] {
      authorize(*ctx);
      registry_.unload(req->model_name(), versionParameter(req->parameters()));
    });
  }

private:
  // Runs one call as a request in flight, turning Error into the gRPC code
  // that matches its HTTP status; nothing a client sends escapes as a crash.
  template <typename F> Status guarded(ServerContext *, F &&fn) {
    Lifecycle::Request inFlight(lifecycle_);
    try {
      fn();
      return Status::OK;
    } catch (const Error &e) {
      return Status(codeFor(e.status()), e.what());
    } catch (const std::exception &e) {
      return Status(StatusCode::INTERNAL,
                    std::string("internal error: ") + e.what());
    } catch (...) {
      return Status(StatusCode::INTERNAL, "internal error");
    }
  }

  // The repository calls change what the server runs: with --api-token they
  // need "authorization: Bearer <token>" metadata, as HTTP needs the header.
  void authorize(const ServerContext &ctx) const {
    if (options_.apiToken.empty())
      return;
    const auto &md = ctx.client_metadata();
    auto it = md.find("authorization");
    std::string given =
        it == md.end() ? "" : std::string(it->second.data(), it->second.size());
    if (!sameSecret(given, "Bearer " + options_.apiToken))
      throw Error(401, "the repository API needs 'authorization: Bearer "
                       "<token>' metadata with the server's --api-token");
  }

  Registry &registry_;
  Lifecycle &lifecycle_;
  const ServerOptions &options_;
};

GrpcServer::GrpcServer(Registry &registry, Lifecycle &lifecycle,
                       const ServerOptions &options)
    : options_(options),
      service_(std::make_unique<GrpcService>(registry, lifecycle, options_)) {}

GrpcServer::~GrpcServer() = default;

int GrpcServer::start() {
  std::string host = options_.host.find(':') != std::string::npos
                         ? "[" + options_.host + "]"
                         : options_.host;
  std::string address = host + ":" + std::to_string(options_.grpcPort);
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(service_.get());
  // The same bound as an HTTP body; a bigger message gets RESOURCE_EXHAUSTED
  // from gRPC before any of it is parsed.
  builder.SetMaxReceiveMessageSize(
      (int)std::min<size_t>(options_.maxBodyBytes, INT_MAX));
  // Calls served at once: one thread each, as HTTP connections.
  grpc::ResourceQuota quota("kiln-serve-grpc");
  quota.SetMaxThreads(std::max(2, options_.httpThreads));
  builder.SetResourceQuota(quota);
  server_ = builder.BuildAndStart();
  if (!server_ || port == 0)
    throw Error(500, "cannot bind gRPC to " + address + " (in use?)");
  return port;
}

void GrpcServer::shutdown(std::chrono::system_clock::time_point deadline) {
  if (!server_)
    return;
  server_->Shutdown(deadline);
  server_->Wait();
}

} // namespace kiln::serve
