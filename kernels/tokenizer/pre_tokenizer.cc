#define PCRE2_CODE_UNIT_WIDTH 8
#include "kernels/tokenizer/pre_tokenizer.h"

#include <pcre2.h>

#include <map>

namespace evald::kernels {

namespace {

// The patterns as llama.cpp lists them for each pre-tokenizer (llama-vocab.cpp).
constexpr const char* kGpt2 =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))";
constexpr const char* kLlama3 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kQwen2 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

struct Spec {
  std::vector<std::string> patterns;
  bool ignore_merges = false;
};

const std::map<std::string, Spec>& Specs() {
  static const std::map<std::string, Spec> specs = {
      {"default", {{R"([\p{P}\$\+<=>\^~\|]+)", kGpt2, R"(\p{N}+)", "[0-9][0-9][0-9]"}, false}},
      {"gpt-2", {{kGpt2}, false}},
      {"llama-bpe", {{kLlama3}, true}},
      {"llama3", {{kLlama3}, true}},
      {"llama-v3", {{kLlama3}, true}},
      {"qwen2", {{kQwen2}, false}},
      {"deepseek-r1-qwen", {{kQwen2}, false}},
      {"deepseek-coder",
       {{R"([\r\n])", R"(\s?\p{L}+)", R"(\s?\p{P}+)",
         "[\xe4\xb8\x80-\xe9\xbe\xa5\xe0\xa0\x80-\xe4\xb8\x80\xea\xb0\x80-\xed\x9e\xbf]+",
         R"(\p{N})"},
        false}},
  };
  return specs;
}

}  // namespace

struct PreTokenizer::Pattern {
  pcre2_code* code = nullptr;
  pcre2_match_data* match = nullptr;
  ~Pattern() {
    if (match) pcre2_match_data_free(match);
    if (code) pcre2_code_free(code);
  }
};

PreTokenizer::~PreTokenizer() = default;

StatusOr<std::unique_ptr<PreTokenizer>> PreTokenizer::ForName(const std::string& pre) {
  const auto& specs = Specs();
  auto it = specs.find(pre.empty() ? "default" : pre);
  if (it == specs.end()) {
    std::string known;
    for (const auto& [name, spec] : specs) known += (known.empty() ? "" : ", ") + name;
    return Status::InvalidArgument("pre-tokenizer '" + pre + "' is not supported (" + known +
                                   " are)");
  }
  auto p = std::unique_ptr<PreTokenizer>(new PreTokenizer);
  p->ignore_merges_ = it->second.ignore_merges;
  for (const auto& pattern : it->second.patterns) {
    auto compiled = std::make_unique<Pattern>();
    int error = 0;
    PCRE2_SIZE offset = 0;
    compiled->code =
        pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.c_str()), PCRE2_ZERO_TERMINATED,
                      PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &error, &offset, nullptr);
    if (!compiled->code) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(error, message, sizeof message);
      return Status::Internal("pre-tokenizer pattern does not compile: " +
                              std::string(reinterpret_cast<char*>(message)));
    }
    (void)pcre2_jit_compile(compiled->code, PCRE2_JIT_COMPLETE);  // faster when available
    compiled->match = pcre2_match_data_create_from_pattern(compiled->code, nullptr);
    p->patterns_.push_back(std::move(compiled));
  }
  return p;
}

std::vector<std::string_view> PreTokenizer::Split(std::string_view text) const {
  std::vector<std::string_view> pieces = {text};
  if (text.empty()) return {};
  for (const auto& pattern : patterns_) {
    std::vector<std::string_view> next;
    for (std::string_view piece : pieces) {
      // Each piece is matched on its own, as llama.cpp does: a lookahead sees its end.
      size_t start = 0, at = 0;
      while (at <= piece.size()) {
        int rc = pcre2_match(pattern->code, reinterpret_cast<PCRE2_SPTR>(piece.data()),
                             piece.size(), at, 0, pattern->match, nullptr);
        if (rc < 0) break;
        const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(pattern->match);
        size_t m0 = ov[0], m1 = ov[1];
        if (m1 == m0) {  // an empty match: step over one byte
          at = m0 + 1;
          continue;
        }
        if (m0 > start) next.push_back(piece.substr(start, m0 - start));  // unmatched text
        next.push_back(piece.substr(m0, m1 - m0));
        start = at = m1;
      }
      if (start < piece.size()) next.push_back(piece.substr(start));
    }
    pieces = std::move(next);
  }
  return pieces;
}

}  // namespace evald::kernels
