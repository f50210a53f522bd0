// What the daemon may fetch, read and send on a submitter's behalf: only what its operator
// allowed, never what a request names. A checkpoint's endpoint must be on the operator's list
// of hosts and networks; loopback, link-local, private and metadata addresses only where a rule
// names them, and the daemon's own port on a local address never. The addresses an endpoint
// was checked at are the ones connected to (pinned), so a name that resolves elsewhere later
// is not followed. An API key comes only from a secret the operator declared, by its name.
// Checkpoint files (GGUF models, recorded completions) are read only under the operator's
// directories or from the daemon's own uploads, and every refusal reads the same, so a
// submitter learns nothing about the host's files. The CLI builds the same policy from its own
// command line (its user is the operator).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace evald {

struct EndpointRule {
  enum class Kind {
    kHost,     // a host name or address as the URL writes it, with or without a port
    kNetwork,  // an address block (CIDR): every address in it, special ones included
    kPublic,   // any globally routable address (no loopback, private, link-local, ...)
  };
  Kind kind = Kind::kHost;
  std::string host;  // kHost, lower case, IPv6 without brackets
  int port = -1;     // kHost: -1 for any
  int family = 0;    // kNetwork: AF_INET or AF_INET6
  std::array<uint8_t, 16> network{};
  int prefix = 0;
};

// "api.example.com", "10.1.2.3:8000", "[::1]:8000", "10.0.0.0/8", "fd00::/8", "public".
StatusOr<EndpointRule> ParseEndpointRule(const std::string& text);

struct SecretSource {
  enum class Kind { kFile, kEnv };
  Kind kind = Kind::kFile;
  std::string where;  // the path or the variable's name
};

// "NAME=file:PATH" or "NAME=env:VAR".
Status ParseSecret(const std::string& text, std::map<std::string, SecretSource>* secrets);

// Per submitting token: what one token may have the daemon hold at once.
struct Quotas {
  int runs_in_flight = 8;            // queued or running
  int64_t queued_samples = 200000;   // samples of those runs not graded yet
  int64_t stored_bytes = 1ll << 30;  // of all its runs' uploaded and stored samples
};

struct OperatorPolicy {
  std::vector<EndpointRule> endpoints;
  std::map<std::string, SecretSource> secrets;
  std::vector<std::string> recorded_roots;  // directories recorded completions may be read from
  std::vector<std::string> model_roots;     // directories GGUF checkpoints may be read from
  std::string uploads_dir;                  // the daemon's own uploads (recorded completions)
  // The daemon's own port (0 or unset: none), refused on any local address; a function because
  // a daemon started on port 0 learns its port once it listens.
  std::function<int()> self_port;
};

// An endpoint the policy allows: its URL in canonical form, and the addresses it may be
// connected at (for libcurl's CURLOPT_RESOLVE: "host:port:addr,addr").
struct CheckedEndpoint {
  std::string url;
  std::string resolve;
};

// Refusals say what the operator must allow, never what the host answered.
StatusOr<CheckedEndpoint> CheckEndpoint(const std::string& url, const OperatorPolicy& policy);

// The value of the operator's secret `name` (trailing white space removed).
StatusOr<std::string> ReadSecret(const std::string& name, const OperatorPolicy& policy);

enum class CheckpointFile { kRecorded, kModel };

// `path` resolved (links followed) and inside an allowed directory, as a regular readable file:
// its canonical path. Missing, unreadable, a directory, outside: one and the same answer.
StatusOr<std::string> CheckCheckpointFile(const std::string& path, CheckpointFile kind,
                                          const OperatorPolicy& policy);

}  // namespace evald
