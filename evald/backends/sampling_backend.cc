#include "evald/backends/sampling_backend.h"

namespace evald {

std::string CompletionPromptText(const std::string& system, const std::string& user) {
  return system.empty() ? user : system + "\n\n" + user;
}

void AnswerInTurn(const std::vector<SampleRequest>& requests,
                  const std::function<void(size_t, SampleResponse)>& done,
                  const CancelToken& cancel,
                  const std::function<SampleResponse(const SampleRequest&)>& answer) {
  for (size_t i = 0; i < requests.size(); ++i) {
    if (cancel.stopped()) {
      SampleResponse resp;
      resp.status = Status::Cancelled("cancelled");
      done(i, std::move(resp));
      continue;
    }
    done(i, answer(requests[i]));
  }
}

}  // namespace evald
