#include "evald/runs/dataset_registry.h"

namespace evald {

namespace {

std::map<std::string, std::string> WithBuiltin(std::map<std::string, std::string> paths) {
  if (!paths.count("builtin")) paths["builtin"] = EVALD_BUILTIN_DATASET_DIR;
  return paths;
}

}  // namespace

DatasetRegistry::DatasetRegistry(std::map<std::string, std::string> paths)
    : paths_(WithBuiltin(std::move(paths))) {}

StatusOr<const Dataset*> DatasetRegistry::Find(const std::string& name, Task task) {
  const std::string key = name + "/" + std::string(TaskName(task));
  MutexLock lock(mu_);
  auto it = loaded_.find(key);
  if (it != loaded_.end()) return it->second.get();
  auto path = paths_.find(name);
  if (path == paths_.end()) {
    std::string names;
    for (const auto& [n, p] : paths_) names += (names.empty() ? "" : ", ") + n;
    return Status::InvalidArgument("unknown dataset '" + name + "' (the daemon serves: " + names +
                                   ")");
  }
  auto ds = Dataset::Load(path->second, task);
  if (!ds.ok()) return ds.status();
  auto owned = std::make_unique<Dataset>(std::move(*ds));
  const Dataset* raw = owned.get();
  loaded_[key] = std::move(owned);
  return raw;
}

}  // namespace evald
