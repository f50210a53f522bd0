#include "harness/system_names.h"

#include <algorithm>

#include "base/py_text.h"

namespace evald {

namespace {

constexpr std::string_view kOutput = "output to standard output";
constexpr std::string_view kTime = "simulation time";
constexpr std::string_view kRandom = "random numbers from a seed of the design's own";
constexpr std::string_view kConversion = "conversions";
constexpr std::string_view kMath = "math";
constexpr std::string_view kQuery = "bit and array queries";
constexpr std::string_view kSampled = "sampled values of the design's own signals";
constexpr std::string_view kString = "string formatting into a variable";

std::vector<AllowedSystemName> BuildList() {
  std::vector<AllowedSystemName> v;
  auto add = [&](std::string_view group, std::initializer_list<std::string_view> names) {
    for (auto n : names) v.push_back({n, group, false});
  };
  add(kOutput, {"$display", "$displayb", "$displayh", "$displayo", "$write", "$writeb", "$writeh",
                "$writeo", "$strobe", "$strobeb", "$strobeh", "$strobeo", "$monitor", "$monitorb",
                "$monitorh", "$monitoro"});
  add(kTime, {"$time", "$stime", "$realtime"});
  v.push_back({"$random", kRandom, true});
  add(kRandom, {"$dist_uniform", "$dist_normal", "$dist_exponential", "$dist_poisson",
                "$dist_chi_square", "$dist_t", "$dist_erlang"});
  add(kConversion, {"$signed", "$unsigned", "$itor", "$rtoi", "$bitstoreal", "$realtobits",
                    "$bitstoshortreal", "$shortrealtobits", "$cast"});
  add(kMath, {"$clog2", "$ln",   "$log10", "$exp",   "$sqrt",  "$pow",  "$floor", "$ceil",
              "$sin",   "$cos",  "$tan",   "$asin",  "$acos",  "$atan", "$atan2", "$hypot",
              "$sinh",  "$cosh", "$tanh",  "$asinh", "$acosh", "$atanh"});
  add(kQuery,
      {"$bits", "$countones", "$countbits", "$onehot", "$onehot0", "$isunknown", "$left", "$right",
       "$low", "$high", "$increment", "$size", "$dimensions", "$unpacked_dimensions"});
  add(kSampled, {"$past", "$rose", "$fell", "$stable", "$changed", "$sampled"});
  add(kString,
      {"$sformat", "$sformatf", "$psprintf", "$swrite", "$swriteb", "$swriteh", "$swriteo"});
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return v;
}

}  // namespace

const std::vector<AllowedSystemName>& AllowedSystemNames() {
  static const std::vector<AllowedSystemName> kList = BuildList();
  return kList;
}

const AllowedSystemName* FindAllowedSystemName(std::string_view name) {
  const auto& list = AllowedSystemNames();
  auto it =
      std::lower_bound(list.begin(), list.end(), name,
                       [](const AllowedSystemName& a, std::string_view n) { return a.name < n; });
  return it != list.end() && it->name == name ? &*it : nullptr;
}

std::string_view RefusalReason(std::string_view name) {
  struct Group {
    std::initializer_list<std::string_view> names;
    std::initializer_list<std::string_view> prefixes;
    std::string_view why;
  };
  static const Group kGroups[] = {
      {{"$finish", "$stop", "$fatal", "$exit", "$finish_and_return", "$reset"},
       {},
       "ends the simulation (only the testbench may)"},
      {{"$system", "$cpure"}, {"$c"}, "runs host code"},
      {{"$urandom", "$urandom_range", "$mti_random", "$mti_dist_uniform",
        "$get_initial_random_seed"},
       {},
       "draws from the random state the testbench's stimulus draws from"},
      {{"$value$plusargs", "$test$plusargs", "$scan$plusargs"}, {}, "reads the command line"},
      {{"$monitoron", "$monitoroff", "$timeformat", "$printtimescale", "$scale"},
       {},
       "changes or prints the testbench's simulation settings"},
      {{"$info", "$warning", "$error"},
       {},
       "severity tasks print the instance path and may end the simulation"},
      {{"$list", "$scope", "$showscopes", "$showvars", "$stacktrace", "$vpi_tree"},
       {},
       "prints the design hierarchy"},
      {{"$save", "$restart", "$incsave", "$input", "$log", "$nolog", "$key", "$nokey",
        "$sdf_annotate", "$table_model", "$simparam", "$simparam$str", "$ungetc", "$rewind"},
       {"$f", "$readmem", "$sreadmem", "$writemem", "$dump", "$ivlh_", "$coverage",
        "$load_coverage", "$set_coverage"},
       "file I/O"},
      {{"$deposit", "$countdrivers", "$getpattern"},
       {"$q_", "$assert", "$ivl_", "$async$", "$sync$"},
       "a simulator extension outside the allow-list"},
  };
  for (const auto& g : kGroups) {
    for (auto n : g.names)
      if (name == n) return g.why;
    for (auto p : g.prefixes) {
      if (!py::StartsWith(name, p)) continue;
      // $c8 ... $c64 and $cpure are Verilator's host code; $clog2 & co. are on the list above.
      if (p == "$c" && name.find_first_not_of("0123456789", 2) != std::string_view::npos) continue;
      return g.why;
    }
  }
  if (name == "$random")
    return "without a seed variable of the design's own it draws from the "
           "random state the testbench's stimulus draws from";
  return "not on evald's allow-list of system tasks and functions (docs/verdicts.md)";
}

}  // namespace evald
