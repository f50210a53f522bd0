#include "harness/token_view.h"

#include "harness/verilog_keywords.h"

namespace evald {

bool TokenView::Keyword(size_t i) const {
  return Word(i) && !t_[i].escaped && IsVerilogKeyword(t_[i].text);
}

}  // namespace evald
