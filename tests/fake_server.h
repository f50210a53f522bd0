// A scripted HTTP server on a loopback port for tests of evald as a client (the remote backend,
// the daemon's sampling): it answers each request with what `reply` returns and records the
// bodies and Authorization headers it saw.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "evald/server/http_server.h"

namespace evald::testing {

class FakeServer {
 public:
  using Reply = std::function<HttpResponse(const HttpRequest&, int call)>;
  explicit FakeServer(Reply reply, int threads = 4) : reply_(std::move(reply)) {
    HttpServerOptions o;
    o.port = 0;
    o.threads = threads;
    server_ = std::make_unique<HttpServer>(o, [this](const HttpRequest& req) {
      int call = ++calls_;
      {
        std::lock_guard<std::mutex> lock(mu_);
        bodies_.push_back(req.body());
        auth_.push_back(std::string(req[boost::beast::http::field::authorization]));
      }
      int now = ++concurrent_;
      int seen = max_concurrent_.load();
      while (now > seen && !max_concurrent_.compare_exchange_weak(seen, now)) {
      }
      HttpResponse res = reply_(req, call);
      --concurrent_;
      return res;
    });
    EXPECT_TRUE(server_->Start().ok());
    port_ = server_->port();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int calls() const { return calls_; }
  // The server goes away: its port refuses connections from now on.
  void Kill() { server_.reset(); }
  int max_concurrent() const { return max_concurrent_; }
  std::vector<std::string> bodies() {
    std::lock_guard<std::mutex> lock(mu_);
    return bodies_;
  }
  std::vector<std::string> auth() {
    std::lock_guard<std::mutex> lock(mu_);
    return auth_;
  }

 private:
  Reply reply_;
  std::unique_ptr<HttpServer> server_;
  uint16_t port_ = 0;
  std::atomic<int> calls_{0}, concurrent_{0}, max_concurrent_{0};
  std::mutex mu_;
  std::vector<std::string> bodies_, auth_;
};

// A response of `status` with `body`.
inline HttpResponse Reply(const HttpRequest& req, boost::beast::http::status status,
                          std::string body, const char* type = "application/json") {
  HttpResponse res{status, req.version()};
  res.set(boost::beast::http::field::content_type, type);
  res.body() = std::move(body);
  return res;
}

}  // namespace evald::testing
