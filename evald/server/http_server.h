// A small HTTP/1.1 server on Boost.Beast/Asio: asynchronous sessions on a few I/O threads,
// keep-alive, a request-body limit, read and write timeouts, and a graceful stop (the listener
// closes, sessions finish the request they are serving). Routing lives elsewhere: the server
// hands every complete request to one handler.
#pragma once

#include <boost/beast/http.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "evald/common/status.h"

namespace evald {

namespace http = boost::beast::http;
using HttpRequest = http::request<http::string_body>;
using HttpResponse = http::response<http::string_body>;

struct HttpServerOptions {
  std::string address = "127.0.0.1";
  uint16_t port = 8080;  // 0: pick a free port (see HttpServer::port)
  int threads = 2;
  size_t max_body_bytes = 64u << 20;
  std::chrono::seconds read_timeout{30};
  std::chrono::seconds write_timeout{30};
  std::chrono::seconds idle_timeout{60};  // keep-alive
};

class HttpServer {
 public:
  using Handler = std::function<HttpResponse(const HttpRequest&)>;

  HttpServer(HttpServerOptions options, Handler handler);
  ~HttpServer();

  Status Start();  // binds and starts the I/O threads
  uint16_t port() const { return bound_port_; }
  // Stops accepting, lets sessions finish their current request, joins the threads.
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  uint16_t bound_port_ = 0;
};

// A JSON response with the right headers.
HttpResponse JsonResponse(const HttpRequest& request, http::status status, std::string body);

}  // namespace evald
