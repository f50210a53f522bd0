#include "evald/server/http_server.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>

#include <spdlog/spdlog.h>
#include <array>

namespace evald {

namespace beast = boost::beast;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket&& socket, const HttpServerOptions& options,
          const HttpServer::Handler& handler, std::atomic<int>& in_flight)
      : stream_(std::move(socket)), options_(options), handler_(handler), in_flight_(in_flight) {}

  void Run() {
    net::dispatch(stream_.get_executor(),
                  beast::bind_front_handler(&Session::Read, shared_from_this()));
  }

 private:
  void Read() {
    parser_.emplace();
    parser_->body_limit(options_.max_body_bytes);
    parser_->header_limit(64 * 1024);
    stream_.expires_after(first_ ? options_.read_timeout : options_.idle_timeout);
    http::async_read(stream_, buffer_, *parser_,
                     beast::bind_front_handler(&Session::OnRead, shared_from_this()));
  }

  void OnRead(beast::error_code ec, std::size_t) {
    if (ec == http::error::end_of_stream || ec == beast::error::timeout ||
        ec == net::error::operation_aborted) {
      return Close();
    }
    if (ec == http::error::body_limit) {
      HttpRequest req;
      req.version(11);
      return Send(JsonResponse(req, http::status::payload_too_large,
                               "{\"error\":\"request body exceeds " +
                                   std::to_string(options_.max_body_bytes) + " bytes\"}"),
                  /*close=*/true, /*counted=*/false, /*drain=*/true);
    }
    if (ec) {
      HttpRequest req;
      req.version(11);
      return Send(JsonResponse(req, http::status::bad_request,
                               "{\"error\":\"malformed HTTP request: " + ec.message() + "\"}"),
                  true, false, true);
    }
    first_ = false;
    ++in_flight_;
    HttpRequest req = parser_->release();
    HttpResponse res;
    try {
      res = handler_(req);
    } catch (const std::exception& e) {
      spdlog::error("handler threw: {}", e.what());
      res =
          JsonResponse(req, http::status::internal_server_error, "{\"error\":\"internal error\"}");
    }
    Send(std::move(res), !req.keep_alive(), /*counted=*/true);
  }

  // After refusing a request mid-body, keep reading (and discarding) for a while so that the
  // client can finish sending and read our answer instead of a connection reset.
  void Drain() {
    stream_.expires_after(std::chrono::seconds(5));
    auto buf = std::make_shared<std::array<char, 65536>>();
    stream_.async_read_some(net::buffer(*buf),
                            [self = shared_from_this(), buf](beast::error_code ec, std::size_t) {
                              if (ec) return self->Close();
                              self->Drain();
                            });
  }

  void Send(HttpResponse&& res, bool close, bool counted = false, bool drain = false) {
    res.keep_alive(!close);
    res.prepare_payload();
    auto sp = std::make_shared<HttpResponse>(std::move(res));
    stream_.expires_after(options_.write_timeout);
    http::async_write(
        stream_, *sp,
        [self = shared_from_this(), sp, close, counted, drain](beast::error_code ec, std::size_t) {
          if (counted) --self->in_flight_;
          if (!ec && drain) {
            beast::error_code ignored;
            self->stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
            return self->Drain();
          }
          if (ec || close) return self->Close();
          self->Read();
        });
  }

  void Close() {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  const HttpServerOptions& options_;
  const HttpServer::Handler& handler_;
  std::atomic<int>& in_flight_;
  bool first_ = true;
};

}  // namespace

struct HttpServer::Impl {
  HttpServerOptions options;
  Handler handler;
  net::io_context ioc;
  tcp::acceptor acceptor{ioc};
  std::vector<std::thread> threads;
  std::atomic<bool> stopping{false};
  std::atomic<int> in_flight{0};  // requests being handled or answered

  void Accept() {
    acceptor.async_accept(net::make_strand(ioc), [this](beast::error_code ec, tcp::socket socket) {
      if (stopping) return;
      if (!ec) std::make_shared<Session>(std::move(socket), options, handler, in_flight)->Run();
      Accept();
    });
  }
};

HttpServer::HttpServer(HttpServerOptions options, Handler handler) : impl_(new Impl) {
  impl_->options = std::move(options);
  impl_->handler = std::move(handler);
}

HttpServer::~HttpServer() {
  Stop();
}

Status HttpServer::Start() {
  beast::error_code ec;
  auto address = net::ip::make_address(impl_->options.address, ec);
  if (ec) return Status::InvalidArgument("bad listen address " + impl_->options.address);
  tcp::endpoint endpoint(address, impl_->options.port);
  impl_->acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl_->acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) impl_->acceptor.bind(endpoint, ec);
  if (!ec) impl_->acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec)
    return Status::Unavailable("cannot listen on " + impl_->options.address + ":" +
                               std::to_string(impl_->options.port) + ": " + ec.message());
  bound_port_ = impl_->acceptor.local_endpoint().port();
  impl_->Accept();
  for (int i = 0; i < std::max(1, impl_->options.threads); ++i)
    impl_->threads.emplace_back([this] { impl_->ioc.run(); });
  return Status::Ok();
}

void HttpServer::Stop() {
  if (!impl_ || impl_->threads.empty()) return;
  impl_->stopping = true;
  net::post(impl_->ioc, [this] {
    beast::error_code ec;
    impl_->acceptor.close(ec);
  });
  // Requests already being served are answered (up to the write timeout); idle keep-alive
  // connections are then dropped with the I/O threads.
  auto deadline = std::chrono::steady_clock::now() + impl_->options.write_timeout;
  while (impl_->in_flight > 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  impl_->ioc.stop();
  for (auto& t : impl_->threads) t.join();
  impl_->threads.clear();
}

HttpResponse JsonResponse(const HttpRequest& request, http::status status, std::string body) {
  HttpResponse res{status, request.version() ? request.version() : 11};
  res.set(http::field::server, "evald");
  res.set(http::field::content_type, "application/json");
  res.body() = std::move(body);
  return res;
}

}  // namespace evald
