#include "evald/metrics/serving_metrics.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

namespace evald {

namespace {

double Percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  double pos = q / 100.0 * static_cast<double>(sorted.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(sorted.size() - 1, lo + 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

}  // namespace

v1::LatencyStats LatencyOf(std::vector<double> values) {
  v1::LatencyStats s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  s.set_mean_ms(std::accumulate(values.begin(), values.end(), 0.0) /
                static_cast<double>(values.size()));
  s.set_median_ms(Percentile(values, 50));
  s.set_p99_ms(Percentile(values, 99));
  return s;
}

v1::ServingMetrics AggregateServing(const std::vector<v1::RequestTiming>& requests,
                                    int failed_requests, double duration_s) {
  v1::ServingMetrics m;
  std::vector<double> ttft, tpot, itl, e2e;
  bool usage = true, streamed = !requests.empty();
  int retries = 0;
  for (const auto& r : requests) {
    m.set_total_input_tokens(m.total_input_tokens() + r.prompt_tokens());
    m.set_total_output_tokens(m.total_output_tokens() + r.completion_tokens());
    usage = usage && r.usage_reported();
    streamed = streamed && r.streamed();
    retries += std::max(0, r.attempts() - 1);
    e2e.push_back(r.e2e_ms());
    if (r.streamed()) ttft.push_back(r.ttft_ms());
    for (float g : r.itl_ms()) itl.push_back(g);
    // Per request: the output tokens of all its samples after the first token of each.
    const int samples = std::max(1, r.samples());
    const double per_sample = static_cast<double>(r.completion_tokens()) / samples;
    if (r.streamed() && per_sample > 1)
      tpot.push_back((r.e2e_ms() - r.ttft_ms()) / (per_sample - 1));
  }
  m.set_completed_requests(static_cast<int>(requests.size()));
  m.set_failed_requests(failed_requests);
  m.set_retries(retries);
  m.set_usage_reported(usage);
  m.set_streamed(streamed);
  m.set_duration_s(duration_s);
  if (duration_s > 0) {
    m.set_request_throughput(static_cast<double>(requests.size()) / duration_s);
    m.set_output_token_throughput(static_cast<double>(m.total_output_tokens()) / duration_s);
    m.set_total_token_throughput(
        static_cast<double>(m.total_input_tokens() + m.total_output_tokens()) / duration_s);
  }
  *m.mutable_ttft() = LatencyOf(std::move(ttft));
  *m.mutable_tpot() = LatencyOf(std::move(tpot));
  *m.mutable_itl() = LatencyOf(std::move(itl));
  *m.mutable_e2e() = LatencyOf(std::move(e2e));
  return m;
}

void AddPerEndpointServing(const std::vector<v1::RequestTiming>& requests, v1::ServingMetrics* m) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<v1::RequestTiming>> by_endpoint;
  for (const auto& r : requests) {
    if (r.endpoint().empty()) continue;
    auto [it, inserted] = by_endpoint.try_emplace(r.endpoint());
    if (inserted) order.push_back(r.endpoint());
    it->second.push_back(r);
  }
  for (const std::string& endpoint : order) {
    const v1::ServingMetrics one = AggregateServing(by_endpoint[endpoint], 0, m->duration_s());
    v1::EndpointServing* e = m->add_per_endpoint();
    e->set_endpoint(endpoint);
    e->set_completed_requests(one.completed_requests());
    e->set_output_tokens(one.total_output_tokens());
    e->set_output_token_throughput(one.output_token_throughput());
    *e->mutable_ttft() = one.ttft();
    *e->mutable_e2e() = one.e2e();
  }
}

}  // namespace evald
