#include "evald/runs/toolchain.h"

#include <sys/stat.h>

#include "base/clock.h"
#include "base/hash.h"
#include "evald/proto/records.pb.h"
#include "evald/store/store.h"
#include "harness/cross_check.h"
#include "harness/icarus_invocation.h"

namespace evald {

namespace {

// Where a tool's files are found (the sandbox sees the host's /usr read-only).
std::string FindTool(const std::string& name) {
  for (const char* dir : {"/usr/local/bin/", "/usr/bin/", "/bin/"}) {
    struct stat st {};
    const std::string path = std::string(dir) + name;
    if (::stat(path.c_str(), &st) == 0) return path;
  }
  return "";
}

// The identity of a tool's files, or "" when one is missing (then it is always asked).
std::string FilesIdentity(const std::vector<std::string>& names) {
  std::vector<std::string> fields = {"evald-tool"};
  for (const std::string& name : names) {
    const std::string path = FindTool(name);
    struct stat st {};
    if (path.empty() || ::stat(path.c_str(), &st) != 0) return "";
    fields.push_back(path + ":" + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) +
                     ":" + std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) +
                     "." + std::to_string(st.st_mtim.tv_nsec));
  }
  std::vector<std::string_view> views(fields.begin(), fields.end());
  return "tool-" + Sha256OfFields(views);
}

std::vector<std::string> ToolFiles(SimulatorKind kind) {
  if (kind == SimulatorKind::kIcarus) return {"iverilog", "vvp"};
  return {"verilator", "verilator_bin"};
}

// evald runs Icarus's compiler passes itself, from the base directory it was built for, as the
// driver of one major version runs them (harness/icarus_invocation.h).
Status IcarusUsable(const std::string& version) {
  if (!IcarusVersionSupported(version))
    return Status::Unavailable(
        "evald runs Icarus's ivlpp and ivl as the driver of version 11 does "
        "(harness/icarus_invocation.h); installed: " +
        version);
  for (const char* tool : {"/ivlpp", "/ivl", "/vvp.conf"}) {
    const std::string path = std::string(IcarusBaseDir()) + tool;
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
      return Status::Unavailable("no " + path +
                                 " (Icarus's base directory: configure with "
                                 "-DEVALD_ICARUS_BASE_DIR=...)");
  }
  return Status::Ok();
}

}  // namespace

std::string Toolchain::Version(const std::vector<std::string>& files,
                               const sandbox::JobRequest& query) {
  const std::string identity = FilesIdentity(files);
  v1::ToolVersion known;
  if (store_ && !identity.empty() && store_->Get(Family::kToolVersions, identity, &known).ok() &&
      !known.version().empty())
    return known.version();
  std::string version;
  pool_.Submit([&](SandboxWorker& w) {
    auto r = w.Run(query);
    if (r.ok() && r->steps_size() > 0 && r->steps(0).outcome() == sandbox::StepResult::EXITED &&
        r->steps(0).exit_code() == 0) {
      const std::string& out = r->steps(0).output();
      version = out.substr(0, out.find('\n'));
    }
  });
  pool_.Wait();
  if (store_ && !identity.empty() && !version.empty()) {
    known.set_version(version);
    known.set_asked_unix_ms(UnixMillis());
    (void)store_->Put(Family::kToolVersions, identity, known);
  }
  return version;
}

Status Toolchain::AddSimulator(SimulatorKind kind, std::optional<uint32_t> fixed_timeout_ms,
                               bool exact_mismatch_counts) {
  SimulatorTool s;
  s.kind = kind;
  s.version = Version(ToolFiles(kind), BuildVersionJob(kind));
  if (s.version.empty())
    return Status::Unavailable(std::string(SimulatorName(kind)) +
                               " is not installed or does not run in the sandbox");
  if (kind == SimulatorKind::kIcarus) {
    Status usable = IcarusUsable(s.version);
    if (!usable.ok()) return usable;
  }
  s.base = s.key_limits = DefaultLimits(kind);
  s.fixed_timeout_ms = fixed_timeout_ms;
  if (fixed_timeout_ms) s.key_limits.simulate_timeout_ms = *fixed_timeout_ms;
  // Calibration always runs the reference to its end (base); samples may stop early.
  s.key_limits.stop_at_first_mismatch = !exact_mismatch_counts;
  simulators_.push_back(std::move(s));
  return Status::Ok();
}

std::string Toolchain::YosysVersion() {
  return Version({"yosys"}, BuildYosysVersionJob());
}

std::string Toolchain::Describe() const {
  if (simulators_.size() == 1) return simulators_[0].version;
  std::string out;
  for (const auto& s : simulators_)
    out += (out.empty() ? "" : "; ") + std::string(SimulatorName(s.kind)) + " " + s.version;
  return out;
}

}  // namespace evald
