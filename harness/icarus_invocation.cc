#include "harness/icarus_invocation.h"

#ifndef EVALD_ICARUS_BASE_DIR
#error "EVALD_ICARUS_BASE_DIR: the installed Icarus's base directory (harness/CMakeLists.txt)"
#endif

namespace evald {

namespace {

// The VPI modules Icarus 11's driver loads for -g2012 (icarus-misc and SystemVerilog on), in its
// order.
constexpr const char* kModules[] = {"system",     "vhdl_sys", "vhdl_textio",
                                    "v2005_math", "va_math",  "v2009"};

// -g2012's generation flags with the driver's defaults for the rest, in its order.
constexpr const char* kGenerations[] = {
    "2012",           "no-specify",        "assertions",           "xtypes",
    "io-range-error", "no-strict-ca-eval", "no-strict-expr-width", "shared-loop-index",
    "no-verilog-ams", "icarus-misc"};

// The driver's letters for -Wall -Winfloop -Wno-timescale (the test compares them with its own).
constexpr const char* kWarnings = "nidRpsal";

}  // namespace

std::string_view IcarusBaseDir() {
  return EVALD_ICARUS_BASE_DIR;
}

bool IcarusVersionSupported(std::string_view version) {
  return version.rfind("Icarus Verilog version 11.", 0) == 0;
}

IcarusFiles IcarusFileNames(const std::string& nonce) {
  return {"ivl_defines_" + nonce, "ivl_sources_" + nonce, "ivl_macros_" + nonce,
          "ivl_config_" + nonce, "ivl_preprocessed_" + nonce};
}

std::string IcarusDefinesFile() {
  const std::string base(IcarusBaseDir());
  return "D:__ICARUS__=1\nvhdlpp:" + base + "/vhdlpp\nvhdlpp-work:ivl_vhdl_work\nI:" + base +
         "/include\nrelative include:false\n";
}

std::string IcarusSourceList(const std::vector<std::string>& sources) {
  std::string list;
  for (const std::string& s : sources) list += s + "\n";
  return list;
}

std::string IcarusCompileConfig(const std::string& top, const std::string& output,
                                const std::string& timescale, const IcarusFiles& files) {
  const std::string base(IcarusBaseDir());
  std::string c = "root:" + top + "\nbasedir:" + base + "\n";
  for (const char* m : kModules) c += "module:" + base + "/" + m + ".vpi\n";
  for (const char* g : kGenerations) c += std::string("generation:") + g + "\n";
  c +=
      std::string("warnings:") + kWarnings + "\nignore_missing_modules:false\nout:" + output + "\n";
  // A command file's lines follow the command line's options in the driver's configuration.
  if (!timescale.empty()) c += "timescale:" + timescale + "\n";
  c += "iwidth:32\nwidthcap:65536\nivlpp:" + base + "/ivlpp -Wredef-chg -L -F\"" + files.defines +
       "\" -P\"" + files.macros + "\"\n";
  return c;
}

std::vector<std::string> IcarusPreprocessArgv(const IcarusFiles& files, const std::string& output,
                                              bool preprocess_only) {
  std::vector<std::string> argv = {std::string(IcarusBaseDir()) + "/ivlpp"};
  if (!preprocess_only) {
    argv.push_back("-L");
    argv.push_back("-Wredef-chg");
  }
  for (const std::string& a :
       {"-F" + files.defines, "-f" + files.sources, "-p" + files.macros, "-o" + output})
    argv.push_back(a);
  return argv;
}

std::vector<std::string> IcarusCompilerArgv(const IcarusFiles& files) {
  const std::string base(IcarusBaseDir());
  return {base + "/ivl", "-C" + files.config, "-C" + base + "/vvp.conf", "--", "-"};
}

}  // namespace evald
