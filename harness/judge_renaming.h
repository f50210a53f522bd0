// The judge's names belong to the judge: every name the testbench and the reference declare or
// use (modules, instances, nets, variables, tasks, blocks, types, struct members ...) gets the
// run's nonce as a suffix, so a design can neither reach one by an upward hierarchical name nor
// capture one with a declaration of its own (it cannot know the names when it is compiled).
// Left as they are: keywords, the interface's port names (the design's ports are matched by
// name), macro names (a directive uses them), the arguments of `timescale and `default_nettype,
// names that only ever follow a '.' or a '::' (built-in methods such as .size()), and `keep`.
// Comments, strings and everything between tokens are copied unchanged.
#pragma once

#include <set>
#include <string>
#include <string_view>

namespace evald {

std::string RenameJudgeNames(std::string_view text, const std::set<std::string, std::less<>>& keep,
                             const std::string& nonce);

}  // namespace evald
