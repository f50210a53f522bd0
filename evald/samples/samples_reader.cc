#include "evald/samples/samples_reader.h"

#include <algorithm>

#include <google/protobuf/util/json_util.h>

#include "base/file_io.h"
#include "base/py_text.h"
#include "base/text_escape.h"
#include "datasets/dataset.h"

namespace evald {

namespace {

constexpr size_t kMaxSamplesFileBytes = 4ull << 30;

void AddError(SamplesFile* out, int line, std::string msg) {
  if (out->errors.size() >= static_cast<size_t>(kMaxKeptInputErrors)) {
    ++out->errors_dropped;
    return;
  }
  v1::InputError e;
  e.set_line(line);
  // Messages quote the input (a name, the JSON parser's view of the line): no control byte of
  // it may reach a terminal or a log as such.
  e.set_message(EscapeControl(msg));
  out->errors.push_back(std::move(e));
}

void ParseLine(std::string_view raw, int line_no, SamplesFile* out) {
  std::string_view line = py::Strip(raw);
  if (line.empty()) return;
  if (raw.size() > kMaxSampleLineBytes) {
    AddError(out, line_no, "line is longer than " + std::to_string(kMaxSampleLineBytes) + " bytes");
    return;
  }
  v1::SampleLine msg;
  google::protobuf::util::JsonParseOptions opts;
  opts.ignore_unknown_fields = true;
  auto st = google::protobuf::util::JsonStringToMessage(std::string(line), &msg, opts);
  if (!st.ok()) {
    std::string why(st.message());
    for (char& c : why)
      if (c == '\n' || c == '\r') c = ' ';
    AddError(out, line_no, "malformed JSON: " + why);
    return;
  }
  SampleRecord r;
  r.line = line_no;
  r.problem = !msg.problem().empty() ? msg.problem() : msg.task_id();
  if (r.problem.empty()) {
    AddError(out, line_no, "missing field 'problem' (or 'task_id')");
    return;
  }
  if (!IsValidProblemName(r.problem)) {
    AddError(out, line_no, "invalid problem name '" + r.problem.substr(0, 100) + "'");
    return;
  }
  if (!msg.code().empty()) {
    r.has_code = true;
    r.text = msg.code();
  } else if (!msg.completion().empty()) {
    r.text = msg.completion();
  } else {
    AddError(out, line_no, "missing field 'completion' (or 'code')");
    return;
  }
  if (msg.has_index()) {
    if (msg.index() < 0 || msg.index() > kMaxSampleIndex) {
      AddError(out, line_no, "'index' must be between 0 and " + std::to_string(kMaxSampleIndex));
      return;
    }
    r.index = msg.index();
  }
  out->samples.push_back(std::move(r));
}

}  // namespace

void CapInputErrors(google::protobuf::RepeatedPtrField<v1::InputError>* errors,
                    int64_t dropped_before) {
  int64_t dropped = dropped_before;
  std::stable_sort(
      errors->begin(), errors->end(),
      [](const v1::InputError& a, const v1::InputError& b) { return a.line() < b.line(); });
  if (errors->size() > kMaxKeptInputErrors) {
    dropped += errors->size() - kMaxKeptInputErrors;
    errors->DeleteSubrange(kMaxKeptInputErrors, errors->size() - kMaxKeptInputErrors);
  }
  if (dropped == 0) return;
  v1::InputError* e = errors->Add();
  e->set_line(0);
  e->set_message("... and " + std::to_string(dropped) + " more input errors (the first " +
                 std::to_string(kMaxKeptInputErrors) + " are kept)");
}

SamplesFile ParseSamplesJsonl(const std::string& text) {
  SamplesFile out;
  int line_no = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    ++line_no;
    ParseLine(std::string_view(text).substr(start, end - start), line_no, &out);
    start = end + 1;
  }
  return out;
}

StatusOr<SamplesFile> ReadSamplesJsonl(const std::string& path) {
  auto text = ReadFileBounded(path, kMaxSamplesFileBytes);
  if (!text.ok()) return text.status();
  return ParseSamplesJsonl(*text);
}

}  // namespace evald
