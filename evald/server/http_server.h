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
#include <string_view>
#include <thread>
#include <vector>

#include "base/status.h"

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

// How a long-running handler answers: a whole response, or a chunked stream (server-sent
// events). Calls are synchronous writes from the handler's own thread.
class HttpResponder {
 public:
  virtual ~HttpResponder() = default;
  virtual void Respond(HttpResponse response) = 0;
  // Sends the head of a chunked response; false when the client is gone.
  virtual bool BeginStream(http::status status, const std::string& content_type) = 0;
  virtual bool Write(std::string_view data) = 0;  // one chunk; false when the client is gone
  virtual void End() = 0;
  virtual bool started() const = 0;   // something was sent
  virtual bool stopping() const = 0;  // the server is shutting down: finish quickly
};

class HttpServer {
 public:
  using Handler = std::function<HttpResponse(const HttpRequest&)>;
  using LongHandler = std::function<void(const HttpRequest&, HttpResponder&)>;

  HttpServer(HttpServerOptions options, Handler handler);
  ~HttpServer();

  // Requests `match` picks are served by `handler` on a thread of their own (generation takes
  // seconds; the I/O threads must not wait for it); beyond `max_concurrent` such requests the
  // server answers 503. Set before Start.
  void SetLongHandler(std::function<bool(const HttpRequest&)> match, LongHandler handler,
                      int max_concurrent = 16);

  Status Start();  // binds and starts the I/O threads
  uint16_t port() const { return bound_port_; }
  // Stops accepting, lets sessions finish their current request (its answer closes the
  // connection; a new request on a kept-alive one gets 503), joins the threads.
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  uint16_t bound_port_ = 0;
};

// The body of every error: {"error": message, "status": code}, as the API's own errors.
std::string JsonError(http::status status, std::string_view message);

// A JSON response with the right headers.
HttpResponse JsonResponse(const HttpRequest& request, http::status status, std::string body);

}  // namespace evald
