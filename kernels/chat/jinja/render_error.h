// How the template engine's evaluation unwinds: any error from any depth of the tree (the
// template's own raise_exception, a type error the reference also raises, a construct outside
// evald's subset, the work budget spent) is thrown as a RenderError inside kernels/chat/jinja and
// leaves Template::Render as a Status. Nothing outside these files sees the exception.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace evald::kernels::jinja {

struct RenderError {
  Status status;
};

// An error the reference engine raises too: the template (or its input) is wrong.
[[noreturn]] inline void TemplateError(const std::string& what) {
  throw RenderError{Status::InvalidArgument("chat template error: " + what)};
}

// Something the reference would render but evald will not guess at: refused by name.
[[noreturn]] inline void Unsupported(const std::string& what) {
  throw RenderError{Status::InvalidArgument("chat template uses " + what +
                                            ", which evald's template engine does not render")};
}

// The bound on one render's work: every node evaluated, byte produced and value allocated is
// charged, so a hostile template ends with an error instead of running or growing without end.
class WorkBudget {
 public:
  explicit WorkBudget(int64_t units) : left_(units) {}
  void Charge(int64_t units) {
    left_ -= units;
    if (left_ < 0)
      throw RenderError{Status::ResourceExhausted(
          "chat template: rendering exceeded its work budget (a loop or recursion without end, "
          "or output too large)")};
  }

 private:
  int64_t left_;
};

}  // namespace evald::kernels::jinja
