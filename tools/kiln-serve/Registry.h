// The loaded models and their versions. Lookups hand out shared pointers, so
// a version that is unloaded (or replaced) keeps serving the requests that
// already hold it and is destroyed after the last one finishes.
#ifndef KILN_TOOLS_KILN_SERVE_REGISTRY_H
#define KILN_TOOLS_KILN_SERVE_REGISTRY_H

#include "ModelVersion.h"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>

namespace kiln::serve {

class Registry {
public:
  Registry(BatchingOptions options, std::string repository)
      : options_(options), repository_(std::move(repository)) {}

  /// The version `version` of `name`, or its newest when `version` is empty.
  /// Throws Error(404) when there is none.
  std::shared_ptr<ModelVersion> find(const std::string &name,
                                     const std::string &version) const;
  /// Every loaded version of `name`, ascending; empty if none.
  std::vector<std::shared_ptr<ModelVersion>>
  versions(const std::string &name) const;
  /// Every loaded version of every model.
  std::vector<std::shared_ptr<ModelVersion>> all() const;
  /// True when no version of any model is loaded.
  bool empty() const {
    std::lock_guard<std::mutex> lock(mu_);
    return models_.empty();
  }

  /// Loads `path` (or, when empty, <repository>/<name>/<version>/model.so)
  /// as `version` of `name` and warms it up before it takes traffic; a
  /// version already loaded is replaced the same way. Without a version: the
  /// newest in the repository, or one past the newest loaded for a path.
  /// Loads run one at a time. Throws Error (the old versions keep serving).
  /// A load the repository API asks for (`confine`) reaches only files whose
  /// resolved path lies inside the repository; --model at start-up is the
  /// operator's and may name any file.
  std::shared_ptr<ModelVersion> load(const std::string &name,
                                     const std::string &path,
                                     std::optional<int64_t> version,
                                     bool confine = false);
  /// Unloads one version, or every version of `name`. Throws Error(404).
  void unload(const std::string &name, std::optional<int64_t> version);
  /// Drops every version (at exit, after the HTTP server drained).
  void clear();

  /// The repository index: every loaded version (READY) and every version in
  /// the repository directory that is not loaded (UNAVAILABLE, with the
  /// reason of a failed load when there was one).
  nlohmann::json index() const;

  const BatchingOptions &options() const { return options_; }

private:
  std::string repositoryPath(const std::string &name, int64_t version) const;
  std::string confined(const std::string &path) const;
  std::vector<int64_t> repositoryVersions(const std::string &name) const;
  /// Logs a failed load and keeps its reason for the index.
  void failed(const std::string &name, int64_t version,
              const std::string &path, const std::string &why);

  BatchingOptions options_;
  std::string repository_;
  std::mutex loadMu_; // one load or unload at a time
  mutable std::mutex mu_;
  std::map<std::string, std::map<int64_t, std::shared_ptr<ModelVersion>>>
      models_;
  std::map<std::pair<std::string, int64_t>, std::string> failures_;
};

/// Parses a version number ("3"); throws Error(400) otherwise.
int64_t parseVersion(const std::string &text);

} // namespace kiln::serve

#endif // KILN_TOOLS_KILN_SERVE_REGISTRY_H
