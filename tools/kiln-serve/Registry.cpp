#include "Registry.h"

#include "Error.h"
#include "Log.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>

namespace fs = std::filesystem;

namespace kiln::serve {

int64_t parseVersion(const std::string &text) {
  bool ok = !text.empty() && text.size() <= 18;
  for (char c : text)
    ok = ok && c >= '0' && c <= '9';
  if (!ok)
    throw Error(400, "version '" + text + "' is not a non-negative integer");
  return std::stoll(text);
}

std::shared_ptr<ModelVersion> Registry::find(const std::string &name,
                                             const std::string &version) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = models_.find(name);
  if (it == models_.end() || it->second.empty())
    throw Error(404, "unknown model '" + name + "'");
  if (version.empty())
    return it->second.rbegin()->second;
  int64_t v;
  try {
    v = parseVersion(version);
  } catch (const Error &) {
    throw Error(404, "model '" + name + "' has no version '" + version + "'");
  }
  auto vit = it->second.find(v);
  if (vit == it->second.end())
    throw Error(404,
                "model '" + name + "' has no version " + version + " loaded");
  return vit->second;
}

std::vector<std::shared_ptr<ModelVersion>>
Registry::versions(const std::string &name) const {
  std::vector<std::shared_ptr<ModelVersion>> out;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = models_.find(name);
  if (it != models_.end())
    for (const auto &[v, mv] : it->second)
      out.push_back(mv);
  return out;
}

std::vector<std::shared_ptr<ModelVersion>> Registry::all() const {
  std::vector<std::shared_ptr<ModelVersion>> out;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto &[name, versions] : models_)
    for (const auto &[v, mv] : versions)
      out.push_back(mv);
  return out;
}

std::string Registry::repositoryPath(const std::string &name,
                                     int64_t version) const {
  return (fs::path(repository_) / name / std::to_string(version) / "model.so")
      .string();
}

std::vector<int64_t>
Registry::repositoryVersions(const std::string &name) const {
  std::vector<int64_t> out;
  std::error_code ec;
  if (repository_.empty() || name.empty() || name == "." || name == "..")
    return out;
  for (const auto &e :
       fs::directory_iterator(fs::path(repository_) / name, ec)) {
    std::string v = e.path().filename().string();
    try {
      int64_t n = parseVersion(v);
      if (fs::exists(e.path() / "model.so"))
        out.push_back(n);
    } catch (const Error &) {
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// `path` resolved (symbolic links followed) when it lies inside the
/// repository, resolved too; loads through the API reach nothing else.
std::string Registry::confined(const std::string &path) const {
  if (repository_.empty())
    throw Error(403, "cannot load '" + path +
                         "': a load by path needs --repository, and only "
                         "files inside it are loaded");
  std::error_code ec;
  fs::path root = fs::canonical(repository_, ec);
  if (ec)
    throw Error(500, "the repository " + repository_ + " cannot be resolved: " +
                         ec.message());
  fs::path file = fs::canonical(path, ec);
  if (ec)
    throw Error(404, "cannot load " + path + ": " + ec.message());
  auto [r, f] = std::mismatch(root.begin(), root.end(), file.begin(), file.end());
  if (r != root.end())
    throw Error(403, "cannot load " + path + ": it is outside the repository " +
                         repository_ + " (after following links); kiln-serve "
                         "loads only files inside --repository");
  return file.string();
}

std::shared_ptr<ModelVersion> Registry::load(const std::string &name,
                                             const std::string &givenPath,
                                             std::optional<int64_t> version,
                                             bool confine) {
  if (name.empty() || name.find('/') != std::string::npos || name == "." ||
      name == "..")
    throw Error(400, "invalid model name '" + name + "'");
  std::lock_guard<std::mutex> loading(loadMu_);
  std::string path =
      givenPath.empty() || !confine ? givenPath : confined(givenPath);
  if (path.empty()) {
    if (repository_.empty())
      throw Error(400, "cannot load model '" + name +
                           "': no 'path' parameter and no --repository");
    if (!version) {
      std::vector<int64_t> found = repositoryVersions(name);
      if (found.empty())
        throw Error(404, "model '" + name + "' is not in the repository " +
                             repository_ + " (expected " + repository_ + "/" +
                             name + "/<version>/model.so)");
      version = found.back();
    }
    path = repositoryPath(name, *version);
    if (confine)
      path = confined(path);
  } else if (!version) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = models_.find(name);
    version = it == models_.end() || it->second.empty()
                  ? 1
                  : it->second.rbegin()->first + 1;
  }

  std::shared_ptr<ModelVersion> fresh;
  auto start = std::chrono::steady_clock::now();
  try {
    // Everything slow and fallible happens before the version is visible.
    fresh = std::make_shared<ModelVersion>(name, *version,
                                           openModel(path), options_);
  } catch (const Error &e) {
    failed(name, *version, path, e.what());
    throw;
  } catch (const std::exception &e) {
    std::string why = "cannot load " + path + ": " + e.what();
    failed(name, *version, path, why);
    throw Error(500, why);
  }
  // The time to open, create every session and warm every variant up: what
  // a pod's start-up or a hot swap costs.
  double loadMs = std::chrono::duration<double, std::milli>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  logInfo("loaded model", {{"model", name},
                           {"version", *version},
                           {"path", path},
                           {"load_ms", std::round(loadMs * 1000) / 1000},
                           {"batch_sizes", fresh->batchSizes()},
                           {"batched", fresh->batched()}});
  std::shared_ptr<ModelVersion> old;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto &slot = models_[name][*version];
    old = std::move(slot);
    slot = fresh;
    failures_.erase({name, *version});
  }
  // `old`, if any, is released here; requests holding it finish first.
  return fresh;
}

void Registry::failed(const std::string &name, int64_t version,
                      const std::string &path, const std::string &why) {
  logError("model load failed",
           {{"model", name}, {"version", version}, {"path", path},
            {"reason", why}});
  std::lock_guard<std::mutex> lock(mu_);
  failures_[{name, version}] = why;
}

void Registry::unload(const std::string &name, std::optional<int64_t> version) {
  std::vector<std::shared_ptr<ModelVersion>> dropped;
  std::lock_guard<std::mutex> loading(loadMu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = models_.find(name);
    if (it == models_.end() || it->second.empty())
      throw Error(404, "unknown model '" + name + "'");
    if (version) {
      auto vit = it->second.find(*version);
      if (vit == it->second.end())
        throw Error(404, "model '" + name + "' has no version " +
                             std::to_string(*version) + " loaded");
      dropped.push_back(std::move(vit->second));
      it->second.erase(vit);
    } else {
      for (auto &[v, mv] : it->second)
        dropped.push_back(std::move(mv));
      it->second.clear();
    }
    if (it->second.empty())
      models_.erase(it);
  }
  logInfo("unloaded model",
          {{"model", name},
           {"version", version ? nlohmann::ordered_json(*version)
                               : nlohmann::ordered_json("every")}});
  // Released outside the lock: the last release joins the workers.
}

void Registry::clear() {
  std::map<std::string, std::map<int64_t, std::shared_ptr<ModelVersion>>> all;
  {
    std::lock_guard<std::mutex> lock(mu_);
    all.swap(models_);
  }
}

nlohmann::json Registry::index() const {
  nlohmann::json out = nlohmann::json::array();
  std::map<std::string, std::map<int64_t, nlohmann::json>> rows;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto &[name, versions] : models_)
      for (const auto &[v, mv] : versions)
        rows[name][v] = {{"name", name},
                         {"version", std::to_string(v)},
                         {"state", "READY"},
                         {"path", mv->path()}};
    for (const auto &[key, why] : failures_)
      if (!rows[key.first].count(key.second))
        rows[key.first][key.second] = {{"name", key.first},
                                       {"version", std::to_string(key.second)},
                                       {"state", "UNAVAILABLE"},
                                       {"reason", why}};
  }
  std::error_code ec;
  if (!repository_.empty())
    for (const auto &e : fs::directory_iterator(repository_, ec)) {
      std::string name = e.path().filename().string();
      for (int64_t v : repositoryVersions(name))
        if (!rows[name].count(v))
          rows[name][v] = {{"name", name},
                           {"version", std::to_string(v)},
                           {"state", "UNAVAILABLE"},
                           {"reason", "not loaded"},
                           {"path", repositoryPath(name, v)}};
    }
  for (auto &[name, versions] : rows)
    for (auto &[v, row] : versions)
      out.push_back(std::move(row));
  return out;
}

} // namespace kiln::serve
