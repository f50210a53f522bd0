#include "datasets/rtllm.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "base/file_io.h"
#include "base/py_text.h"
#include "base/text_escape.h"
#include "base/verilog_identifier.h"

namespace evald {

namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxFileBytes = 4u << 20;
constexpr size_t kMaxDataBytes = 16u << 20;  // all data files of one design together
constexpr size_t kMaxDesigns = 10000;
constexpr std::string_view kDescription = "design_description.txt";
constexpr std::string_view kTestbench = "testbench.v";

// The names after `module` at the start of a line: the modules a file declares.
std::vector<std::string> DeclaredModules(const std::string& text) {
  std::vector<std::string> names;
  for (auto line : py::SplitLines(text)) {
    auto rest = py::LStrip(line);
    if (!py::StartsWith(rest, "module") || rest.size() < 7 || IsIdentifierChar(rest[6])) continue;
    auto name = LeadingIdentifier(py::LStrip(rest.substr(6)));
    if (!name.empty()) names.emplace_back(name);
  }
  return names;
}

bool Contains(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// The reference's top module: verified_<M>, else M itself, else the only module it declares.
StatusOr<std::string> ReferenceModule(const std::vector<std::string>& declared,
                                      const std::string& design_module) {
  if (Contains(declared, "verified_" + design_module)) return "verified_" + design_module;
  if (Contains(declared, design_module)) return design_module;
  if (declared.size() == 1) return declared.front();
  return Status::Corruption("its reference declares no module verified_" + design_module + " or " +
                            design_module + " and more than one other");
}

// The module the testbench instantiates, among the names the design's files suggest.
StatusOr<std::string> DesignModule(const std::string& testbench, const std::string& description,
                                   const std::vector<std::string>& reference_modules,
                                   const std::string& folder_name) {
  std::set<std::string> candidates(reference_modules.begin(), reference_modules.end());
  candidates.insert(folder_name);
  if (auto described = DescribedModuleName(description); !described.empty())
    candidates.insert(described);
  const auto tb_modules = DeclaredModules(testbench);
  std::vector<std::string> used;
  for (const auto& c : candidates)
    if (!Contains(tb_modules, c) && MentionsIdentifier(testbench, c)) used.push_back(c);
  if (used.size() != 1)
    return Status::Corruption("cannot tell which module its testbench instantiates (" +
                              std::to_string(used.size()) + " of the names its files give)");
  return used.front();
}

StatusOr<std::string> ReadText(const fs::path& path) {
  auto raw = ReadFileBounded(path.string(), kMaxFileBytes);
  if (!raw.ok()) return raw.status();
  return py::TranslateNewlines(*raw);  // Python's text mode, as the harnesses read prompts
}

StatusOr<Problem> LoadDesign(const fs::path& dir) {
  Problem p;
  p.name = dir.filename().string();
  if (!IsValidProblemName(p.name))
    return Status::Corruption(EscapeControl(dir.string()) + ": not a plain problem name");
  auto description = ReadText(dir / kDescription);
  if (!description.ok()) return description.status();
  p.prompt = std::move(*description);
  auto testbench = ReadFileBounded((dir / kTestbench).string(), kMaxFileBytes);
  if (!testbench.ok()) return testbench.status();
  p.testbench = std::move(*testbench);
  std::vector<fs::path> references, data;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string file = entry.path().filename().string();
    if (!entry.is_regular_file() || file == kDescription || file == kTestbench ||
        file == "makefile")
      continue;
    (py::StartsWith(file, "verified_") && py::EndsWith(file, ".v") ? references : data)
        .push_back(entry.path());
  }
  if (ec) return Status::IoError(dir.string() + ": " + ec.message());
  if (references.size() != 1)
    return Status::Corruption(p.name + ": expected one verified_*.v reference, found " +
                              std::to_string(references.size()));
  auto reference = ReadFileBounded(references.front().string(), kMaxFileBytes);
  if (!reference.ok()) return reference.status();
  p.reference = std::move(*reference);
  GradingSetup& setup = p.setup;
  setup.pass_signal = PassSignal::kPassLine;
  setup.default_timescale = "1ns/1ns";
  const auto declared = DeclaredModules(p.reference);
  auto design_module = DesignModule(p.testbench, p.prompt, declared, p.name);
  if (!design_module.ok()) return design_module.status().Annotate(p.name);
  setup.design_module = std::move(*design_module);
  auto reference_module = ReferenceModule(declared, setup.design_module);
  if (!reference_module.ok()) return reference_module.status().Annotate(p.name);
  setup.reference_module = std::move(*reference_module);
  size_t data_bytes = 0;
  for (const auto& path : data) {
    auto content = ReadFileBounded(path.string(), kMaxFileBytes);
    if (!content.ok()) return content.status();
    data_bytes += content->size();
    if (data_bytes > kMaxDataBytes) return Status::Corruption(p.name + ": data files too large");
    setup.data_files[path.filename().string()] = std::move(*content);
  }
  return p;
}

}  // namespace

std::string DescribedModuleName(const std::string& description) {
  constexpr std::string_view kLabel = "module name:";
  const auto lines = py::SplitLines(description);
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string lower(py::Strip(lines[i]));
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (!py::StartsWith(lower, kLabel)) continue;
    auto rest = py::Strip(py::Strip(lines[i]).substr(kLabel.size()));
    if (rest.empty() && i + 1 < lines.size()) rest = py::Strip(lines[i + 1]);
    return std::string(LeadingIdentifier(rest));
  }
  return "";
}

bool IsRtllmCheckout(const std::string& path) {
  return IsRegularFile(path + "/auto_run.py") && IsRegularFile(path + "/File_list.md");
}

StatusOr<std::vector<Problem>> LoadRtllm(const std::string& root) {
  std::vector<fs::path> designs;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it.depth() >= 2) it.disable_recursion_pending();  // <Category>/<Subcategory>/<design>
    if (it.depth() == 2 && it->is_directory() && IsRegularFile((it->path() / kTestbench).string()))
      designs.push_back(it->path());
    if (designs.size() > kMaxDesigns) return Status::InvalidArgument(root + ": too many designs");
  }
  if (ec) return Status::IoError(root + ": " + ec.message());
  std::sort(designs.begin(), designs.end());
  std::vector<Problem> problems;
  for (const auto& dir : designs) {
    auto p = LoadDesign(dir);
    if (!p.ok()) return p.status();
    problems.push_back(std::move(*p));
  }
  if (problems.empty()) return Status::NotFound(root + " holds no RTLLM design folders");
  return problems;
}

}  // namespace evald
