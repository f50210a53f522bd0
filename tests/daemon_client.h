// Test helpers: start `evald serve` as a child process on a free loopback port, and a small
// synchronous HTTP client (Boost.Beast) to talk to it.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

namespace evald::testing {

struct HttpResult {
  int status = 0;
  std::string body;
  std::string content_type;
};

inline HttpResult Http(uint16_t port, const std::string& method, const std::string& target,
                       const std::string& token = "", const std::string& body = "") {
  namespace beast = boost::beast;
  namespace http = beast::http;
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::resolver resolver(ioc);
  beast::tcp_stream stream(ioc);
  HttpResult r;
  try {
    stream.connect(resolver.resolve("127.0.0.1", std::to_string(port)));
    http::request<http::string_body> req{http::string_to_verb(method), target, 11};
    req.set(http::field::host, "127.0.0.1");
    if (!token.empty()) req.set(http::field::authorization, "Bearer " + token);
    if (!body.empty()) req.set(http::field::content_type, "application/json");
    req.body() = body;
    req.prepare_payload();
    stream.expires_after(std::chrono::seconds(60));
    http::write(stream, req);
    beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    parser.body_limit(256u << 20);
    http::read(stream, buffer, parser);
    r.status = static_cast<int>(parser.get().result_int());
    r.body = parser.get().body();
    r.content_type = std::string(parser.get()[http::field::content_type]);
  } catch (const std::exception& e) {
    r.status = -1;
    r.body = e.what();
  }
  beast::error_code ec;
  stream.socket().shutdown(boost::asio::ip::tcp::socket::shutdown_both, ec);
  return r;
}

class Daemon {
 public:
  // Starts `evald serve`; `extra` is appended to its command line.
  // An empty data_dir or tokens_file leaves the flag out (serve --model's defaults); stderr goes
  // to `log` (default: beside the data directory).
  bool Start(const std::string& data_dir, const std::string& tokens_file,
             const std::string& extra = "", const std::string& listen = "127.0.0.1:0",
             const std::string& log_file = "") {
    int out[2];
    if (::pipe(out) != 0) return false;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(out[1], 1);
      ::close(out[0]);
      const std::string log = log_file.empty() ? data_dir + ".log" : log_file;
      std::string cmd = std::string("exec ") + EVALD_BINARY + " serve --listen " + listen +
                        (data_dir.empty() ? "" : " --data " + data_dir) +
                        (tokens_file.empty() ? "" : " --tokens " + tokens_file) + " " + extra +
                        " 2>>" + log;
      ::execl("/bin/sh", "sh", "-c", cmd.c_str(), nullptr);
      ::_exit(127);
    }
    ::close(out[1]);
    FILE* f = ::fdopen(out[0], "r");
    char line[256];
    bool ok = false;
    while (std::fgets(line, sizeof line, f)) {
      std::string s(line);
      if (s.rfind("listening ", 0) == 0) {
        port_ = static_cast<uint16_t>(std::stoi(s.substr(s.rfind(':') + 1)));
        ok = true;
        break;
      }
    }
    out_ = f;  // keep the pipe open so the daemon's writes never fail
    return ok;
  }
  // SIGTERM (graceful) or SIGKILL; returns the exit status (or 128+signal).
  int Stop(int sig = SIGTERM) {
    if (pid_ <= 0) return -1;
    ::kill(pid_, sig);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    if (out_) std::fclose(out_);
    out_ = nullptr;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  ~Daemon() { Stop(SIGKILL); }
  uint16_t port() const { return port_; }

 private:
  pid_t pid_ = -1;
  uint16_t port_ = 0;
  FILE* out_ = nullptr;
};

}  // namespace evald::testing
