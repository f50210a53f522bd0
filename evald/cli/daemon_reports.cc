#include "evald/cli/daemon_reports.h"

#include <curl/curl.h>
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include <cctype>
#include <memory>

#include "evald/proto/records.pb.h"

namespace evald {

namespace {

constexpr size_t kMaxBody = 256u << 20;  // a report of many samples, with room

struct Body {
  std::string text;
  bool too_large = false;
};

size_t Append(char* data, size_t size, size_t count, void* user) {
  auto* body = static_cast<Body*>(user);
  if (body->text.size() + size * count > kMaxBody) {
    body->too_large = true;
    return 0;  // libcurl stops the transfer
  }
  body->text.append(data, size * count);
  return size * count;
}

// The body of a GET, or why there is none (the daemon's JSON error message included).
StatusOr<std::string> Get(const std::string& url, const std::string& token) {
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), curl_easy_cleanup);
  if (!curl) return Status::Internal("libcurl could not start");
  Body body;
  curl_slist* headers = nullptr;
  if (!token.empty())
    headers = curl_slist_append(headers, ("Authorization: Bearer " + token).c_str());
  std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> owned(headers, curl_slist_free_all);
  curl_easy_setopt(curl.get(), CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl.get(), CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl.get(), CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(curl.get(), CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl.get(), CURLOPT_CONNECTTIMEOUT, 10L);
  curl_easy_setopt(curl.get(), CURLOPT_TIMEOUT, 300L);
  curl_easy_setopt(curl.get(), CURLOPT_WRITEFUNCTION, &Append);
  curl_easy_setopt(curl.get(), CURLOPT_WRITEDATA, &body);
  curl_easy_setopt(curl.get(), CURLOPT_NOSIGNAL, 1L);
  const CURLcode code = curl_easy_perform(curl.get());
  if (body.too_large) return Status::ResourceExhausted(url + ": the answer exceeds 256 MiB");
  if (code != CURLE_OK) return Status::Unavailable(url + ": " + curl_easy_strerror(code));
  long status = 0;
  curl_easy_getinfo(curl.get(), CURLINFO_RESPONSE_CODE, &status);
  if (status == 200) return body.text;
  google::protobuf::Value error;
  std::string why = body.text.substr(0, 200);
  if (google::protobuf::util::JsonStringToMessage(body.text, &error).ok() &&
      error.struct_value().fields().count("error"))
    why = error.struct_value().fields().at("error").string_value();
  const std::string message = url + ": HTTP " + std::to_string(status) + ": " + why;
  return status == 404 ? Status::NotFound(message) : Status::Unavailable(message);
}

template <typename M>
StatusOr<M> Parse(const std::string& json, const std::string& what) {
  M message;
  google::protobuf::util::JsonParseOptions opts;
  opts.ignore_unknown_fields = true;  // a newer daemon may say more
  if (!google::protobuf::util::JsonStringToMessage(json, &message, opts).ok())
    return Status::Corruption(what + " is not what an evald daemon answers");
  return message;
}

}  // namespace

StatusOr<v1::EvalReport> FetchRunReport(const std::string& server, const std::string& token,
                                        const std::string& run_id) {
  std::string base = server;
  while (!base.empty() && base.back() == '/') base.pop_back();
  for (char c : run_id)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_')
      return Status::InvalidArgument("'" + run_id + "' is not a run id");
  auto run_json = Get(base + "/v1/runs/" + run_id, token);
  if (!run_json.ok()) return run_json.status();
  auto run = Parse<v1::Run>(*run_json, "run " + run_id);
  if (!run.ok()) return run.status();
  if (run->state() != v1::SUCCEEDED)
    return Status::InvalidArgument("run " + run_id + " has not succeeded (" +
                                   v1::RunState_Name(run->state()) + ")");
  auto report_json = Get(base + "/v1/runs/" + run_id + "/report", token);
  if (!report_json.ok()) return report_json.status();
  return Parse<v1::EvalReport>(*report_json, "the report of run " + run_id);
}

}  // namespace evald
