// The datasets a daemon (or a command reading a daemon's store) may name: name -> path (a
// benchmark checkout or a dataset_* folder), each loaded once per task and kept. `builtin` is
// always there. Runs name datasets by these names, never by host paths.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "base/status.h"
#include "base/thread_annotations.h"
#include "datasets/dataset.h"

namespace evald {

class DatasetRegistry {
 public:
  explicit DatasetRegistry(std::map<std::string, std::string> paths);

  // InvalidArgument naming the datasets there are when `name` is not one of them.
  StatusOr<const Dataset*> Find(const std::string& name, Task task) EXCLUDES(mu_);
  const std::map<std::string, std::string>& paths() const { return paths_; }

 private:
  const std::map<std::string, std::string> paths_;
  Mutex mu_;
  std::map<std::string, std::unique_ptr<Dataset>> loaded_ GUARDED_BY(mu_);  // "name/task"
};

}  // namespace evald
