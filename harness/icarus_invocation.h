// Icarus Verilog's two compiler passes, run the way its driver runs them, without the driver.
//
// `iverilog` is a launcher: it writes a defines file and a source list for the preprocessor
// (ivlpp) and a configuration for the compiler proper (ivl), then runs `sh -c "ivlpp ... | ivl
// ... -- -"`. Per sample that is a driver, a shell and a pipe beside the two tools that do the
// work, about half of an ordinary compile's CPU time (measured: 30-36 ms through the driver,
// 16-19 ms for ivlpp then ivl). Here the same files are written into the job and the two tools
// run as two steps, ivl reading ivlpp's output as its standard input (so that the compiled
// program names its input "-", as the driver's does).
//
// What the driver writes depends on its version and its command line; these functions write
// what Icarus 11's driver writes for exactly the command lines the benchmark uses (below), and
// tests/icarus_invocation_test.cc holds them to the installed driver's own files
// (IVERILOG_ICONFIG keeps them) and its compiled programs. Another major version is refused
// (IcarusVersionSupported), not guessed at.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace evald {

// Where the installed Icarus keeps ivlpp, ivl, the VPI modules and vvp.conf (the driver's
// compiled-in base directory; EVALD_ICARUS_BASE_DIR at build time).
std::string_view IcarusBaseDir();

// Whether `version` (the first line of `iverilog -V`) is of the major version whose driver
// these functions reproduce.
bool IcarusVersionSupported(std::string_view version);

// The file names one job's invocation uses, all in the scratch directory.
struct IcarusFiles {
  std::string defines;       // ivlpp -F: predefined macros and include directories
  std::string sources;       // ivlpp -f: the source list
  std::string macros;        // ivlpp -p: the macros ivlpp leaves behind (ivl's library use)
  std::string config;        // ivl -C: the compiler's configuration
  std::string preprocessed;  // ivlpp -o, ivl's standard input
};
IcarusFiles IcarusFileNames(const std::string& nonce);

// What the driver writes.
std::string IcarusDefinesFile();
std::string IcarusSourceList(const std::vector<std::string>& sources);
// For `iverilog -Wall -Winfloop -Wno-timescale -g2012 -s <top> -o <output>
// [-c <file with +timescale+<timescale>>]`; the ivlpp line names `files`'s defines and macros.
std::string IcarusCompileConfig(const std::string& top, const std::string& output,
                                const std::string& timescale, const IcarusFiles& files);

// The preprocessor's command line for `iverilog -E -g2012 -o <output>` (preprocess_only) or for
// the compile above (line markers, macro-redefinition warnings), writing to `output`.
std::vector<std::string> IcarusPreprocessArgv(const IcarusFiles& files, const std::string& output,
                                              bool preprocess_only);
// The compiler's command line; its input is standard input (StepSpec.stdin_file).
std::vector<std::string> IcarusCompilerArgv(const IcarusFiles& files);

// The line the driver adds when `iverilog -E`'s preprocessor fails (benchmark logs carry it).
inline constexpr std::string_view kIcarusPreprocessFailed =
    "errors preprocessing Verilog program.\n";

}  // namespace evald
