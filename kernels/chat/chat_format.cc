#include "kernels/chat/chat_format.h"

#include "base/hash.h"
#include "kernels/chat/jinja/js_text.h"

namespace evald::kernels {

namespace {

// Published defaults of each name (from the families' templates); the first of each family is
// its plain form.
std::vector<ChatFormat> BuildPresets() {
  auto make = [](ChatFamily family, const char* name, const char* end) {
    ChatFormat f;
    f.family = family;
    f.name = name;
    f.end_of_turn = end;
    return f;
  };
  std::vector<ChatFormat> out;
  out.push_back(make(ChatFamily::kGemma, "gemma", "<end_of_turn>"));
  out.push_back(make(ChatFamily::kGemma4, "gemma4", "<turn|>"));
  out.back().generation_preamble = true;
  out.push_back(make(ChatFamily::kLlama3, "llama3", "<|eot_id|>"));
  out.push_back(make(ChatFamily::kLlama3, "llama3.1", "<|eot_id|>"));
  out.back().knowledge_cutoff = "December 2023";
  out.back().today = "26 Jul 2024";
  out.push_back(make(ChatFamily::kChatMl, "chatml", "<|im_end|>"));
  out.push_back(make(ChatFamily::kChatMl, "qwen2", "<|im_end|>"));
  out.back().default_system = "You are a helpful assistant.";
  out.push_back(make(ChatFamily::kChatMl, "qwen2.5", "<|im_end|>"));
  out.back().default_system =
      "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.";
  out.push_back(make(ChatFamily::kDeepSeek, "deepseek",
                     "<\xef\xbd\x9c"
                     "end\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>"));
  out.push_back(out.back());
  out.back().name = "deepseek-r1";
  out.back().generation_preamble = true;
  return out;
}

const std::vector<ChatFormat>& Presets() {
  static const std::vector<ChatFormat> presets = BuildPresets();
  return presets;
}

const ChatFormat& PresetOf(ChatFamily family) {
  for (const auto& p : Presets())
    if (p.family == family) return p;
  return Presets().front();
}

bool SameVariant(const ChatFormat& a, const ChatFormat& b) {
  return a.family == b.family && a.default_system == b.default_system &&
         a.knowledge_cutoff == b.knowledge_cutoff && a.today == b.today &&
         a.generation_preamble == b.generation_preamble;
}

// The DeepSeek markers use fullwidth vertical bars (U+FF5C) and U+2581.
constexpr std::string_view kDsUser = "<\xef\xbd\x9cUser\xef\xbd\x9c>";
constexpr std::string_view kDsAssistant =
    "<\xef\xbd\x9c"
    "Assistant\xef\xbd\x9c>";

bool Contains(std::string_view text, std::string_view what) {
  return text.find(what) != std::string_view::npos;
}

// A Jinja string literal's text from `from` up to (not including) `end`, unescaped; empty when
// the literal closes (a quote) first or `end` never comes - the text is then not a constant.
// `*stop`: where the scan ended (a caller looking again starts there, so a template is read once).
std::string LiteralUntil(std::string_view text, size_t from, std::string_view end,
                         size_t* stop = nullptr) {
  std::string out;
  size_t i = from;
  for (; i < text.size(); ++i) {
    if (text.compare(i, end.size(), end) == 0) break;
    char c = text[i];
    if (c == '\'' || c == '"') {
      out.clear();
      break;
    }
    if (c == '\\' && i + 1 < text.size()) {
      char e = text[++i];
      out += e == 'n' ? '\n' : e == 't' ? '\t' : e;
      continue;
    }
    out += c;
  }
  if (i >= text.size()) out.clear();
  if (stop) *stop = i;
  return out;
}

// Where `marker` followed by a newline (written as the escape \n or a real one) ends.
size_t AfterMarkerAndNewline(std::string_view text, std::string_view marker, size_t from) {
  for (size_t at = text.find(marker, from); at != std::string_view::npos;
       at = text.find(marker, at + 1)) {
    size_t p = at + marker.size();
    if (text.compare(p, 2, "\\n") == 0) return p + 2;
    if (p < text.size() && text[p] == '\n') return p + 1;
  }
  return std::string_view::npos;
}

// chatml: a constant system turn written when the conversation has none (Qwen 2, 2.5).
std::string DefaultSystemOf(std::string_view text) {
  size_t stop = 0;
  for (size_t p = AfterMarkerAndNewline(text, "<|im_start|>system", 0); p != std::string_view::npos;
       p = AfterMarkerAndNewline(text, "<|im_start|>system", stop)) {
    std::string literal = LiteralUntil(text, p, "<|im_end|>", &stop);
    if (!literal.empty()) return literal;
  }
  return "";
}

// llama3.1+: "Cutting Knowledge Date: X\n" and the default `date_string = "Y"`.
void ReadKnowledgeHeader(std::string_view text, ChatFormat* f) {
  constexpr std::string_view kCutoff = "Cutting Knowledge Date: ";
  size_t at = text.find(kCutoff);
  if (at == std::string_view::npos) return;
  f->knowledge_cutoff = LiteralUntil(text, at + kCutoff.size(), "\\n");
  if (f->knowledge_cutoff.empty()) f->knowledge_cutoff = "December 2023";
  f->today = "26 Jul 2024";
  for (std::string_view key : {"date_string = \"", "date_string = '"}) {
    size_t d = text.find(key);
    if (d == std::string_view::npos) continue;
    size_t start = d + key.size(), end = text.find(key.back(), start);
    if (end != std::string_view::npos) f->today = std::string(text.substr(start, end - start));
  }
}

ChatFamily FamilyOf(std::string_view text, bool* found) {
  *found = true;
  if (Contains(text, "<|turn>")) return ChatFamily::kGemma4;
  if (Contains(text, "<start_of_turn>")) return ChatFamily::kGemma;
  if (Contains(text, "<|start_header_id|>")) return ChatFamily::kLlama3;
  if (Contains(text, "<|im_start|>")) return ChatFamily::kChatMl;
  if (Contains(text, kDsUser)) return ChatFamily::kDeepSeek;
  *found = false;
  return ChatFamily::kChatMl;
}

// A template named in an error: printable ASCII of its start, and a digest.
std::string Describe(std::string_view text) {
  std::string start;
  for (char c : text.substr(0, 60)) start += (c >= 0x20 && c < 0x7f) ? c : ' ';
  return "sha256 " + Sha256Hex(text).substr(0, 16) + ", " + std::to_string(text.size()) +
         " bytes, beginning \"" + start + "\"";
}

// --- rendering, one function per family ---

std::string ModelRole(const std::string& role) {
  return role == "assistant" ? "model" : role;
}

StatusOr<std::string> RenderGemma(const std::vector<ChatMessage>& m, std::string_view bos) {
  // Gemma 3 folds a system message into the first user turn; Gemma 1 and 2 templates refuse one
  // (evald folds it the same way for them).
  std::string out(bos), prefix;
  size_t first = 0;
  if (m[0].role == "system") {
    prefix = m[0].content + "\n\n";
    first = 1;
  }
  for (size_t i = first; i < m.size(); ++i) {
    if ((m[i].role == "user") != ((i - first) % 2 == 0))
      return Status::InvalidArgument("gemma: roles must alternate user/assistant/user/...");
    out += "<start_of_turn>" + ModelRole(m[i].role) + "\n" + (i == first ? prefix : "");
    out += TrimJinja(m[i].content);
    out += "<end_of_turn>\n";
  }
  return out + "<start_of_turn>model\n";
}

// gemma4: earlier model turns lose their thought channels (<|channel>...<channel|>).
std::string StripThinking(std::string_view text) {
  std::string out;
  constexpr std::string_view kClose = "<channel|>", kOpen = "<|channel>";
  size_t start = 0;
  while (true) {
    size_t close = text.find(kClose, start);
    std::string_view part =
        text.substr(start, close == std::string_view::npos ? text.npos : close - start);
    out += part.substr(0, part.find(kOpen));
    if (close == std::string_view::npos) break;
    start = close + kClose.size();
  }
  return std::string(TrimJinja(out));
}

std::string RenderGemma4(const ChatFormat& f, const std::vector<ChatMessage>& m,
                         std::string_view bos) {
  std::string out(bos);
  size_t first = 0;
  if (m[0].role == "system") {
    out += "<|turn>system\n" + std::string(TrimJinja(m[0].content)) + "<turn|>\n";
    first = 1;
  }
  for (size_t i = first; i < m.size(); ++i) {
    std::string role = ModelRole(m[i].role);
    out += "<|turn>" + role + "\n";
    out += role == "model" ? StripThinking(m[i].content) : std::string(TrimJinja(m[i].content));
    out += "<turn|>\n";
  }
  out += "<|turn>model\n";
  if (f.generation_preamble) out += "<|channel>thought\n<channel|>";
  return out;
}

std::string LlamaTurn(const std::string& role, std::string_view content) {
  return "<|start_header_id|>" + role + "<|end_header_id|>\n\n" + std::string(TrimJinja(content)) +
         "<|eot_id|>";
}

std::string RenderLlama3(const ChatFormat& f, const std::vector<ChatMessage>& m,
                         std::string_view bos) {
  std::string out(bos);
  size_t first = 0;
  if (!f.knowledge_cutoff.empty()) {  // 3.1+: a system header always, the message inside it
    std::string system;
    if (m[0].role == "system") {
      system = TrimJinja(m[0].content);
      first = 1;
    }
    out += "<|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: " +
           f.knowledge_cutoff + "\nToday Date: " + f.today + "\n\n" + system + "<|eot_id|>";
  }
  for (size_t i = first; i < m.size(); ++i) out += LlamaTurn(m[i].role, m[i].content);
  return out + "<|start_header_id|>assistant<|end_header_id|>\n\n";
}

std::string RenderChatMl(const ChatFormat& f, const std::vector<ChatMessage>& m) {
  std::string out;
  if (!f.default_system.empty() && m[0].role != "system")
    out += "<|im_start|>system\n" + f.default_system + "<|im_end|>\n";
  for (const auto& msg : m) out += "<|im_start|>" + msg.role + "\n" + msg.content + "<|im_end|>\n";
  return out + "<|im_start|>assistant\n";
}

std::string RenderDeepSeek(const ChatFormat& f, const std::vector<ChatMessage>& m,
                           std::string_view bos) {
  std::string system;  // every system message, joined by a blank line, before the turns
  bool first_system = true;
  for (const auto& msg : m) {
    if (msg.role != "system") continue;
    system += (first_system ? "" : "\n\n") + msg.content;
    first_system = false;
  }
  std::string out = std::string(bos) + system;
  for (const auto& msg : m) {
    if (msg.role == "user") out += std::string(kDsUser) + msg.content;
    if (msg.role != "assistant") continue;
    std::string_view content = msg.content;  // earlier reasoning is dropped (R1)
    size_t think = content.rfind("</think>");
    if (think != std::string_view::npos) content = content.substr(think + 8);
    out += std::string(kDsAssistant) + std::string(content) + f.end_of_turn;
  }
  out += kDsAssistant;
  if (f.generation_preamble) out += "<think>\n";
  return out;
}

}  // namespace

std::vector<ChatMessage> SystemAndUserTurns(const std::string& system, const std::string& user) {
  std::vector<ChatMessage> turns;
  if (!system.empty()) turns.push_back({"system", system});
  turns.push_back({"user", user});
  return turns;
}

std::string ChatFormatNameList() {
  std::string names;
  for (const auto& p : Presets()) names += (names.empty() ? "" : ", ") + p.name;
  return names;
}

std::vector<std::string> ChatFormatNames() {
  std::vector<std::string> out;
  for (const auto& p : Presets()) out.push_back(p.name);
  return out;
}

StatusOr<ChatFormat> ChatFormatNamed(std::string_view name) {
  for (const auto& p : Presets())
    if (p.name == name) return p;
  return Status::InvalidArgument("unknown chat format '" + std::string(name.substr(0, 40)) +
                                 "' (known: " + ChatFormatNameList() + ")");
}

StatusOr<ChatFormat> RecognizeChatTemplate(std::string_view text) {
  bool found = false;
  ChatFamily family = FamilyOf(text, &found);
  if (!found)
    return Status::NotFound("the chat template is not one evald renders (" + Describe(text) +
                            "); choose a format with --chat-format (" + ChatFormatNameList() + ")");
  ChatFormat f;  // the family's plain form, with what its template says read into it
  f.family = family;
  f.name = PresetOf(family).name;
  f.end_of_turn = PresetOf(family).end_of_turn;
  switch (family) {
    case ChatFamily::kGemma4:
      f.generation_preamble = Contains(text, "<|channel>thought");
      break;
    case ChatFamily::kLlama3:
      ReadKnowledgeHeader(text, &f);
      break;
    case ChatFamily::kChatMl:
      f.default_system = DefaultSystemOf(text);
      break;
    case ChatFamily::kDeepSeek:
      f.generation_preamble = Contains(text, std::string(kDsAssistant) + "<think>");
      break;
    case ChatFamily::kGemma:
      break;
  }
  // A preset's name when every parameter is its own; otherwise the closest preset's (same
  // header and preamble) marked as a variant of it.
  for (const auto& p : Presets()) {
    if (SameVariant(p, f)) {
      f.name = p.name;
      return f;
    }
  }
  for (const auto& p : Presets()) {
    if (p.family == f.family && p.knowledge_cutoff.empty() == f.knowledge_cutoff.empty() &&
        p.generation_preamble == f.generation_preamble) {
      f.name = p.name;
      break;
    }
  }
  f.name += " (template variant)";
  return f;
}

StatusOr<std::string> RenderChat(const ChatFormat& format, const std::vector<ChatMessage>& messages,
                                 std::string_view bos) {
  bool user = false;
  for (const auto& m : messages) {
    if (m.role != "system" && m.role != "user" && m.role != "assistant")
      return Status::InvalidArgument("message role '" + m.role.substr(0, 40) +
                                     "': only system, user and assistant are rendered");
    user = user || m.role == "user";
  }
  if (!user) return Status::InvalidArgument("the conversation has no user message");
  switch (format.family) {
    case ChatFamily::kGemma:
      return RenderGemma(messages, bos);
    case ChatFamily::kGemma4:
      return RenderGemma4(format, messages, bos);
    case ChatFamily::kLlama3:
      return RenderLlama3(format, messages, bos);
    case ChatFamily::kChatMl:
      return RenderChatMl(format, messages);
    case ChatFamily::kDeepSeek:
      return RenderDeepSeek(format, messages, bos);
  }
  return Status::Internal("unknown chat family");
}

std::string_view TrimJinja(std::string_view text) {
  return jinja::JsTrim(text);
}

}  // namespace evald::kernels
