#include "evald/server/http_server.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>

#include <spdlog/spdlog.h>
#include <array>

#include "evald/proto/api.pb.h"
#include "evald/proto/json.h"

namespace evald {

namespace beast = boost::beast;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

// What every session of one server shares.
struct ServerShared {
  HttpServerOptions options;
  HttpServer::Handler handler;
  std::function<bool(const HttpRequest&)> long_match;
  HttpServer::LongHandler long_handler;
  int max_long = 16;
  std::atomic<bool> stopping{false};
  std::atomic<int> in_flight{0};    // requests being handled or answered
  std::atomic<int> long_active{0};  // long handlers' threads alive
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket&& socket, ServerShared& shared)
      : stream_(std::move(socket)),
        options_(shared.options),
        handler_(shared.handler),
        in_flight_(shared.in_flight),
        shared_(shared) {}

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
                               JsonError(http::status::payload_too_large,
                                         "request body exceeds " +
                                             std::to_string(options_.max_body_bytes) + " bytes")),
                  /*close=*/true, /*counted=*/false, /*drain=*/true);
    }
    if (ec) {
      HttpRequest req;
      req.version(11);
      return Send(JsonResponse(req, http::status::bad_request,
                               JsonError(http::status::bad_request,
                                         "malformed HTTP request: " + ec.message())),
                  true, false, true);
    }
    first_ = false;
    HttpRequest req = parser_->release();
    // Once stopping, only requests already being served are answered: one read afterwards on a
    // kept-alive connection is refused, or a client that keeps sending would hold off the stop
    // (and keep being served by a server that is going away) until the write timeout.
    if (shared_.stopping) {
      auto res = JsonResponse(req, http::status::service_unavailable,
                              "{\"error\":{\"message\":\"the server is shutting down\","
                              "\"type\":\"server_stopping\"}}");
      return Send(std::move(res), /*close=*/true);
    }
    if (shared_.long_match && shared_.long_match(req)) return StartLong(std::move(req));
    ++in_flight_;
    HttpResponse res;
    try {
      res = handler_(req);
    } catch (const std::exception& e) {
      spdlog::error("handler threw: {}", e.what());
      res =
          JsonResponse(req, http::status::internal_server_error, "{\"error\":\"internal error\"}");
    }
    Send(std::move(res), !req.keep_alive() || shared_.stopping, /*counted=*/true);
  }

  // Synchronous writes on the socket from a long handler's thread; the session has no
  // asynchronous operation pending meanwhile.
  class Responder : public HttpResponder {
   public:
    Responder(Session& session, const HttpRequest& req) : s_(session), req_(req) {}
    void Respond(HttpResponse res) override {
      if (started_) return;
      started_ = true;
      res.keep_alive(req_.keep_alive() && !s_.shared_.stopping);
      res.prepare_payload();
      beast::error_code ec;
      http::write(s_.stream_.socket(), res, ec);
      ok_ = !ec;
    }
    bool BeginStream(http::status status, const std::string& content_type) override {
      if (started_) return false;
      started_ = streaming_ = true;
      http::response<http::empty_body> head{status, req_.version() ? req_.version() : 11};
      head.set(http::field::server, "evald");
      head.set(http::field::content_type, content_type);
      head.set(http::field::cache_control, "no-cache");
      head.keep_alive(req_.keep_alive() && !s_.shared_.stopping);
      head.chunked(true);
      http::response_serializer<http::empty_body> sr{head};
      beast::error_code ec;
      http::write_header(s_.stream_.socket(), sr, ec);
      ok_ = !ec;
      return ok_;
    }
    bool Write(std::string_view data) override {
      if (!ok_ || !streaming_ || data.empty()) return ok_;
      beast::error_code ec;
      net::write(s_.stream_.socket(), http::make_chunk(net::const_buffer(data.data(), data.size())),
                 ec);
      ok_ = !ec;
      return ok_;
    }
    void End() override {
      if (!ok_ || !streaming_ || ended_) return;
      ended_ = true;
      beast::error_code ec;
      net::write(s_.stream_.socket(), http::make_chunk_last(), ec);
      ok_ = !ec;
    }
    bool started() const override { return started_; }
    bool stopping() const override { return s_.shared_.stopping; }
    bool reusable() const { return ok_ && started_ && (!streaming_ || ended_); }

   private:
    Session& s_;
    const HttpRequest& req_;
    bool started_ = false, streaming_ = false, ended_ = false, ok_ = true;
  };

  void StartLong(HttpRequest req) {
    if (shared_.long_active.load() >= shared_.max_long) {
      ++in_flight_;
      auto res = JsonResponse(req, http::status::service_unavailable,
                              "{\"error\":{\"message\":\"too many requests in progress; retry "
                              "later\",\"type\":\"server_busy\"}}");
      res.set(http::field::retry_after, "1");
      return Send(std::move(res), !req.keep_alive(), /*counted=*/true);
    }
    ++shared_.long_active;
    ++in_flight_;
    stream_.expires_never();
    std::thread([self = shared_from_this(), req = std::move(req)]() mutable {
      ServerShared& shared = self->shared_;
      bool keep = false;
      {
        Responder responder(*self, req);
        try {
          shared.long_handler(req, responder);
        } catch (const std::exception& e) {
          spdlog::error("handler threw: {}", e.what());
        }
        if (!responder.started())
          responder.Respond(JsonResponse(req, http::status::internal_server_error,
                                         "{\"error\":\"internal error\"}"));
        if (!responder.reusable()) {
          beast::error_code ec;
          self->stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
        }
        keep = responder.reusable() && req.keep_alive() && !shared.stopping;
      }
      --self->in_flight_;
      if (keep) {
        net::post(self->stream_.get_executor(), [s = self] { s->Read(); });
      } else {
        net::post(self->stream_.get_executor(), [s = self] { s->Close(); });
      }
      self.reset();
      --shared.long_active;
    }).detach();
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
  ServerShared& shared_;
  bool first_ = true;
};

}  // namespace

struct HttpServer::Impl {
  ServerShared shared;
  HttpServerOptions& options = shared.options;
  net::io_context ioc;
  tcp::acceptor acceptor{ioc};
  std::vector<std::thread> threads;

  void Accept() {
    acceptor.async_accept(net::make_strand(ioc), [this](beast::error_code ec, tcp::socket socket) {
      if (shared.stopping) return;
      if (!ec) std::make_shared<Session>(std::move(socket), shared)->Run();
      Accept();
    });
  }
};

HttpServer::HttpServer(HttpServerOptions options, Handler handler) : impl_(new Impl) {
  impl_->shared.options = std::move(options);
  impl_->shared.handler = std::move(handler);
}

void HttpServer::SetLongHandler(std::function<bool(const HttpRequest&)> match, LongHandler handler,
                                int max_concurrent) {
  impl_->shared.long_match = std::move(match);
  impl_->shared.long_handler = std::move(handler);
  impl_->shared.max_long = std::max(1, max_concurrent);
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
  impl_->shared.stopping = true;
  net::post(impl_->ioc, [this] {
    beast::error_code ec;
    impl_->acceptor.close(ec);
  });
  // Requests already being served are answered (up to the write timeout); long handlers see
  // `stopping` and wind up; idle keep-alive connections are then dropped with the I/O threads.
  auto deadline = std::chrono::steady_clock::now() + impl_->options.write_timeout;
  while (impl_->shared.in_flight > 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  // A long handler's thread touches the session until it ends: wait for all of them.
  while (impl_->shared.long_active > 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  impl_->ioc.stop();
  for (auto& t : impl_->threads) t.join();
  impl_->threads.clear();
}

std::string JsonError(http::status status, std::string_view message) {
  v1::ErrorResponse e;
  e.set_error(std::string(message));
  e.set_status(static_cast<int>(status));
  return ToJson(e, /*pretty=*/false);
}

HttpResponse JsonResponse(const HttpRequest& request, http::status status, std::string body) {
  HttpResponse res{status, request.version() ? request.version() : 11};
  res.set(http::field::server, "evald");
  res.set(http::field::content_type, "application/json");
  res.body() = std::move(body);
  return res;
}

}  // namespace evald
