// Serving metrics of a run from its requests' timings, with the definitions of vLLM's serving
// benchmark: TTFT per request; TPOT = (E2E - TTFT) / (output tokens - 1) for requests with more
// than one output token; ITL = every gap between streamed text chunks of one sequence (choice),
// pooled over requests; percentiles by linear interpolation (numpy's default); throughputs over
// `duration_s`.
#pragma once

#include <vector>

#include "evald/proto/eval.pb.h"

namespace evald {

v1::LatencyStats LatencyOf(std::vector<double> values_ms);

// `failed_requests`: requests that produced nothing after their retries.
v1::ServingMetrics AggregateServing(const std::vector<v1::RequestTiming>& requests,
                                    int failed_requests, double duration_s);

// The same figures per replica, for requests that name the endpoint that answered them, into
// m->per_endpoint (one entry per endpoint, in order of first appearance).
void AddPerEndpointServing(const std::vector<v1::RequestTiming>& requests, v1::ServingMetrics* m);

}  // namespace evald
