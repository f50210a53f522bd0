#include "evald/runs/operator_policy.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "base/file_io.h"
#include "base/numbers.h"

namespace evald {

namespace {

// One resolved address: its family and 4 or 16 bytes.
struct Address {
  int family = 0;
  std::array<uint8_t, 16> bytes{};
  bool operator==(const Address& o) const { return family == o.family && bytes == o.bytes; }
};

std::optional<Address> ParseAddress(const std::string& text) {
  Address a;
  if (inet_pton(AF_INET, text.c_str(), a.bytes.data()) == 1) {
    a.family = AF_INET;
    return a;
  }
  if (inet_pton(AF_INET6, text.c_str(), a.bytes.data()) == 1) {
    a.family = AF_INET6;
    return a;
  }
  return std::nullopt;
}

std::string AddressText(const Address& a) {
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(a.family, a.bytes.data(), buf, sizeof buf);
  return buf;
}

bool InBlock(const Address& a, int family, const uint8_t* net, int prefix) {
  if (a.family != family) return false;
  for (int bit = 0; bit < prefix; ++bit) {
    const int byte = bit / 8, mask = 0x80 >> (bit % 8);
    if ((a.bytes[byte] & mask) != (net[byte] & mask)) return false;
  }
  return true;
}

// IPv4-mapped (::ffff:a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) addresses are judged as the IPv4
// address they carry.
Address Unmapped(const Address& a) {
  static const uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  static const uint8_t kNat64[12] = {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
  if (a.family != AF_INET6) return a;
  if (!std::equal(kMapped, kMapped + 12, a.bytes.begin()) &&
      !std::equal(kNat64, kNat64 + 12, a.bytes.begin()))
    return a;
  Address v4;
  v4.family = AF_INET;
  std::copy(a.bytes.begin() + 12, a.bytes.end(), v4.bytes.begin());
  return v4;
}

// Loopback, private, link-local (cloud metadata lives there), shared, documentation,
// multicast, reserved and unspecified addresses: never "public".
bool SpecialAddress(const Address& raw) {
  const Address a = Unmapped(raw);
  struct Block {
    int family;
    std::array<uint8_t, 16> net;
    int prefix;
  };
  static const Block kBlocks[] = {
      {AF_INET, {0}, 8},                         // this network
      {AF_INET, {10}, 8},                        // private
      {AF_INET, {100, 64}, 10},                  // shared (CGNAT)
      {AF_INET, {127}, 8},                       // loopback
      {AF_INET, {169, 254}, 16},                 // link-local, metadata
      {AF_INET, {172, 16}, 12},                  // private
      {AF_INET, {192, 0, 0}, 24},                // protocol assignments
      {AF_INET, {192, 0, 2}, 24},                // documentation
      {AF_INET, {192, 168}, 16},                 // private
      {AF_INET, {198, 18}, 15},                  // benchmarking
      {AF_INET, {198, 51, 100}, 24},             // documentation
      {AF_INET, {203, 0, 113}, 24},              // documentation
      {AF_INET, {224}, 4},                       // multicast
      {AF_INET, {240}, 4},                       // reserved, broadcast
      {AF_INET6, {}, 127},                       // :: and ::1
      {AF_INET6, {0xfe, 0x80}, 10},              // link-local
      {AF_INET6, {0xfc}, 7},                     // unique local (metadata fd00:ec2::254 too)
      {AF_INET6, {0xff}, 8},                     // multicast
      {AF_INET6, {0x20, 0x01, 0x0d, 0xb8}, 32},  // documentation
      {AF_INET6, {0x01, 0x00}, 64},              // discard
  };
  for (const auto& b : kBlocks)
    if (InBlock(a, b.family, b.net.data(), b.prefix)) return true;
  return false;
}

std::vector<Address> LocalAddresses() {
  std::vector<Address> out;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return out;
  for (ifaddrs* i = list; i; i = i->ifa_next) {
    if (!i->ifa_addr) continue;
    Address a;
    if (i->ifa_addr->sa_family == AF_INET) {
      a.family = AF_INET;
      auto* sin = reinterpret_cast<sockaddr_in*>(i->ifa_addr);
      std::memcpy(a.bytes.data(), &sin->sin_addr, 4);
    } else if (i->ifa_addr->sa_family == AF_INET6) {
      a.family = AF_INET6;
      auto* sin6 = reinterpret_cast<sockaddr_in6*>(i->ifa_addr);
      std::memcpy(a.bytes.data(), &sin6->sin6_addr, 16);
    } else {
      continue;
    }
    out.push_back(a);
  }
  freeifaddrs(list);
  return out;
}

// Every address `host` resolves to (a literal address is itself).
StatusOr<std::vector<Address>> Resolve(const std::string& host) {
  if (auto literal = ParseAddress(host)) return std::vector<Address>{*literal};
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0 || !res)
    return Status::InvalidArgument("the endpoint's host " + host + " does not resolve");
  std::vector<Address> out;
  for (addrinfo* r = res; r; r = r->ai_next) {
    Address a;
    if (r->ai_family == AF_INET) {
      a.family = AF_INET;
      std::memcpy(a.bytes.data(), &reinterpret_cast<sockaddr_in*>(r->ai_addr)->sin_addr, 4);
    } else if (r->ai_family == AF_INET6) {
      a.family = AF_INET6;
      std::memcpy(a.bytes.data(), &reinterpret_cast<sockaddr_in6*>(r->ai_addr)->sin6_addr, 16);
    } else {
      continue;
    }
    if (std::find(out.begin(), out.end(), a) == out.end()) out.push_back(a);
  }
  freeaddrinfo(res);
  if (out.empty())
    return Status::InvalidArgument("the endpoint's host " + host + " has no address");
  return out;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool HostRuleAllows(const OperatorPolicy& p, const std::string& host, int port) {
  for (const auto& r : p.endpoints)
    if (r.kind == EndpointRule::Kind::kHost && r.host == host && (r.port < 0 || r.port == port))
      return true;
  return false;
}

bool AddressAllowed(const OperatorPolicy& p, const Address& raw) {
  const Address a = Unmapped(raw);
  for (const auto& r : p.endpoints) {
    if (r.kind == EndpointRule::Kind::kNetwork &&
        (InBlock(a, r.family, r.network.data(), r.prefix) ||
         InBlock(raw, r.family, r.network.data(), r.prefix)))
      return true;
    if (r.kind == EndpointRule::Kind::kPublic && !SpecialAddress(raw)) return true;
  }
  return false;
}

// The daemon's own port on an address of this host: a request to itself.
bool IsSelf(const OperatorPolicy& p, const Address& raw, int port) {
  const int self = p.self_port ? p.self_port() : 0;
  if (self == 0 || port != self) return false;
  const Address a = Unmapped(raw);
  static const uint8_t kLoop4[1] = {127};
  if (InBlock(a, AF_INET, kLoop4, 8)) return true;
  Address any4, any6;
  any4.family = AF_INET;
  any6.family = AF_INET6;
  if (a == any4 || a == any6) return true;
  Address loop6;
  loop6.family = AF_INET6;
  loop6.bytes[15] = 1;
  if (a == loop6) return true;
  for (const Address& local : LocalAddresses())
    if (local == a || local == raw) return true;
  return false;
}

std::string RefusedHint(const std::string& host, int port) {
  return "the operator has not allowed endpoint " + host + ":" + std::to_string(port) +
         " (evald serve --allow-endpoint)";
}

}  // namespace

StatusOr<EndpointRule> ParseEndpointRule(const std::string& text) {
  EndpointRule r;
  if (text == "public") {
    r.kind = EndpointRule::Kind::kPublic;
    return r;
  }
  const size_t slash = text.find('/');
  if (slash != std::string::npos) {
    auto a = ParseAddress(text.substr(0, slash));
    auto prefix = ParseInt(std::string_view(text).substr(slash + 1), 0, 128);
    if (!a || !prefix || (a->family == AF_INET && *prefix > 32))
      return Status::InvalidArgument("bad network '" + text + "' (expected ADDRESS/PREFIX)");
    r.kind = EndpointRule::Kind::kNetwork;
    r.family = a->family;
    r.network = a->bytes;
    r.prefix = static_cast<int>(*prefix);
    return r;
  }
  r.kind = EndpointRule::Kind::kHost;
  std::string host = text;
  if (!host.empty() && host[0] == '[') {  // [v6]:port
    const size_t close = host.find(']');
    if (close == std::string::npos) return Status::InvalidArgument("bad host '" + text + "'");
    std::string rest = host.substr(close + 1);
    r.host = host.substr(1, close - 1);
    if (!rest.empty()) {
      auto port =
          rest[0] == ':' ? ParseInt(std::string_view(rest).substr(1), 1, 65535) : std::nullopt;
      if (!port) return Status::InvalidArgument("bad port in '" + text + "'");
      r.port = static_cast<int>(*port);
    }
  } else {
    const size_t colon = host.rfind(':');
    if (colon != std::string::npos && host.find(':') == colon) {
      auto port = ParseInt(std::string_view(host).substr(colon + 1), 1, 65535);
      if (!port) return Status::InvalidArgument("bad port in '" + text + "'");
      r.port = static_cast<int>(*port);
      host = host.substr(0, colon);
    }
    r.host = host;
  }
  r.host = Lower(r.host);
  if (r.host.empty()) return Status::InvalidArgument("empty host in '" + text + "'");
  return r;
}

Status ParseSecret(const std::string& text, std::map<std::string, SecretSource>* secrets) {
  const size_t eq = text.find('=');
  const std::string name = text.substr(0, eq);
  if (eq == std::string::npos || name.empty() || name.size() > 64 ||
      name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") !=
          std::string::npos)
    return Status::InvalidArgument("--secret expects NAME=file:PATH or NAME=env:VAR, got '" + text +
                                   "'");
  const std::string source = text.substr(eq + 1);
  SecretSource s;
  if (source.rfind("file:", 0) == 0) {
    s.kind = SecretSource::Kind::kFile;
    s.where = source.substr(5);
  } else if (source.rfind("env:", 0) == 0) {
    s.kind = SecretSource::Kind::kEnv;
    s.where = source.substr(4);
  } else {
    return Status::InvalidArgument("secret " + name + ": expected file:PATH or env:VAR");
  }
  if (s.where.empty()) return Status::InvalidArgument("secret " + name + " names nothing");
  (*secrets)[name] = s;
  return Status::Ok();
}

StatusOr<CheckedEndpoint> CheckEndpoint(const std::string& url, const OperatorPolicy& policy) {
  auto parsed = boost::urls::parse_uri(url);
  if (!parsed) return Status::InvalidArgument("endpoint is not a URL");
  const boost::urls::url_view u = *parsed;
  const std::string scheme = Lower(std::string(u.scheme()));
  if (scheme != "http" && scheme != "https")
    return Status::InvalidArgument("endpoint must be an http:// or https:// URL");
  if (u.has_userinfo())
    return Status::InvalidArgument(
        "endpoint must not carry credentials (the operator declares keys: --secret)");
  if (u.host_type() == boost::urls::host_type::ipvfuture ||
      u.host_type() == boost::urls::host_type::none)
    return Status::InvalidArgument("endpoint has no usable host");
  std::string host = Lower(std::string(u.host_address()));
  if (host.empty()) return Status::InvalidArgument("endpoint has no host");
  int port = scheme == "https" ? 443 : 80;
  if (u.has_port()) {
    auto p = ParseInt(std::string(u.port()), 1, 65535);
    if (!p) return Status::InvalidArgument("endpoint has a bad port");
    port = static_cast<int>(*p);
  }
  auto addresses = Resolve(host);
  if (!addresses.ok()) return Status::InvalidArgument(RefusedHint(host, port));
  const bool named = HostRuleAllows(policy, host, port);
  std::string pinned;
  for (const Address& a : *addresses) {
    if (IsSelf(policy, a, port))
      return Status::InvalidArgument("endpoint " + host + ":" + std::to_string(port) +
                                     " is this daemon itself");
    if (!named && !AddressAllowed(policy, a))
      return Status::InvalidArgument(RefusedHint(host, port));
    const std::string text = AddressText(a);
    pinned += (pinned.empty() ? "" : ",") + (a.family == AF_INET6 ? "[" + text + "]" : text);
  }
  CheckedEndpoint out;
  const bool v6 = u.host_type() == boost::urls::host_type::ipv6;
  out.url = scheme + "://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port) +
            std::string(u.encoded_path()) +
            (u.has_query() ? "?" + std::string(u.encoded_query()) : "");
  out.resolve = (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port) + ":" + pinned;
  return out;
}

StatusOr<std::string> ReadSecret(const std::string& name, const OperatorPolicy& policy) {
  auto it = policy.secrets.find(name);
  if (it == policy.secrets.end())
    return Status::InvalidArgument("no secret named '" + name + "' is declared by the operator");
  const std::string unreadable = "the operator's secret '" + name + "' cannot be read";
  std::string value;
  if (it->second.kind == SecretSource::Kind::kEnv) {
    const char* v = std::getenv(it->second.where.c_str());
    if (!v) return Status::Unavailable(unreadable);
    value = v;
  } else {
    auto text = ReadFileBounded(it->second.where, 64 * 1024);
    if (!text.ok()) return Status::Unavailable(unreadable);
    value = *text;
  }
  while (!value.empty() && std::isspace(static_cast<unsigned char>(value.back()))) value.pop_back();
  if (value.empty()) return Status::Unavailable("the operator's secret '" + name + "' is empty");
  return value;
}

StatusOr<std::string> CheckCheckpointFile(const std::string& path, CheckpointFile kind,
                                          const OperatorPolicy& policy) {
  const Status refused = Status::InvalidArgument(
      "location is not a readable file in a directory the operator allows (" +
      std::string(kind == CheckpointFile::kModel ? "evald serve --model-root"
                                                 : "evald serve --recorded-root, or upload it") +
      ")");
  std::error_code ec;
  const std::filesystem::path canonical = std::filesystem::canonical(path, ec);
  if (ec || path.empty() || path[0] != '/') return refused;
  std::vector<std::string> roots =
      kind == CheckpointFile::kModel ? policy.model_roots : policy.recorded_roots;
  if (kind == CheckpointFile::kRecorded && !policy.uploads_dir.empty())
    roots.push_back(policy.uploads_dir);
  bool inside = false;
  for (const std::string& root : roots) {
    const std::filesystem::path r = std::filesystem::canonical(root, ec);
    if (ec) continue;
    const std::string rs = r.string(), cs = canonical.string();
    if (cs.size() > rs.size() && cs.compare(0, rs.size(), rs) == 0 &&
        (rs.back() == '/' || cs[rs.size()] == '/'))
      inside = true;
  }
  struct stat st {};
  if (!inside || ::stat(canonical.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
      ::access(canonical.c_str(), R_OK) != 0)
    return refused;
  return canonical.string();
}

}  // namespace evald
