#include "tests/support/fake_aws.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include <condition_variable>
#include <mutex>
#include <thread>

namespace gateway::testing {

namespace net = boost::asio;
namespace http = boost::beast::http;
using tcp = net::ip::tcp;
constexpr auto use_ec = net::as_tuple(net::use_awaitable);

namespace {

std::string decode(std::string_view text) {
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '+') {
            out += ' ';
        } else if (text[i] == '%' && i + 2 < text.size()) {
            out += static_cast<char>(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16));
            i += 2;
        } else {
            out += text[i];
        }
    }
    return out;
}

}  // namespace

std::map<std::string, std::string> aws_request::form() const {
    std::map<std::string, std::string> out;
    auto question = target.find('?');
    std::string_view text = question == std::string::npos || !body.empty()
                                ? std::string_view(body)
                                : std::string_view(target).substr(question + 1);
    while (!text.empty()) {
        auto pair = text.substr(0, text.find('&'));
        text.remove_prefix(std::min(text.size(), pair.size() + 1));
        auto equals = pair.find('=');
        out[decode(pair.substr(0, equals))] =
            equals == std::string_view::npos ? "" : decode(pair.substr(equals + 1));
    }
    return out;
}

std::string aws_request::field(const std::string& lower_name) const {
    auto it = fields.find(lower_name);
    return it == fields.end() ? std::string() : it->second;
}

struct fake_aws_service::impl {
    handler answer;
    net::io_context io;
    tcp::acceptor acceptor{io, {net::ip::make_address("127.0.0.1"), 0}};
    net::steady_timer gate{io, net::steady_timer::time_point::max()};
    bool released = false;  // the server thread's
    mutable std::mutex mutex;
    mutable std::condition_variable arrived;
    std::vector<aws_request> seen;
    std::thread thread;

    net::awaitable<void> serve(tcp::socket socket) {
        boost::beast::flat_buffer buffer;
        http::request<http::string_body> request;
        auto [ec, n] = co_await http::async_read(socket, buffer, request, use_ec);
        if (ec) co_return;
        aws_request seen_request;
        seen_request.method = std::string(request.method_string());
        seen_request.target = std::string(request.target());
        for (const auto& f : request) {
            std::string name(f.name_string());
            for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            seen_request.fields[name] = std::string(f.value());
        }
        seen_request.body = request.body();
        auto reply = answer(seen_request);
        {
            std::lock_guard lock(mutex);
            seen.push_back(std::move(seen_request));
        }
        arrived.notify_all();
        if (reply.stall) {
            // Until the client gives up and closes.
            char byte;
            for (;;) {
                auto [read_ec, got] =
                    co_await socket.async_read_some(net::buffer(&byte, 1), use_ec);
                if (read_ec) co_return;
            }
        }
        if (reply.hold && !released) co_await gate.async_wait(use_ec);
        http::response<http::string_body> response{static_cast<http::status>(reply.status), 11};
        response.set(http::field::content_type, reply.content_type);
        response.body() = reply.body;
        response.keep_alive(false);
        response.prepare_payload();
        co_await http::async_write(socket, response, use_ec);
        boost::system::error_code ignored;
        socket.shutdown(tcp::socket::shutdown_both, ignored);
    }

    net::awaitable<void> accept_loop() {
        for (;;) {
            auto [ec, socket] = co_await acceptor.async_accept(use_ec);
            if (ec) co_return;
            net::co_spawn(io, serve(std::move(socket)), net::detached);
        }
    }
};

fake_aws_service::fake_aws_service(handler answer) : impl_(std::make_unique<impl>()) {
    impl_->answer = std::move(answer);
    net::co_spawn(impl_->io, impl_->accept_loop(), net::detached);
    impl_->thread = std::thread([this] { impl_->io.run(); });
}

fake_aws_service::~fake_aws_service() {
    impl_->io.stop();
    impl_->thread.join();
}

std::string fake_aws_service::url() const {
    return "http://127.0.0.1:" + std::to_string(impl_->acceptor.local_endpoint().port());
}

std::size_t fake_aws_service::count() const {
    std::lock_guard lock(impl_->mutex);
    return impl_->seen.size();
}

std::vector<aws_request> fake_aws_service::requests() const {
    std::lock_guard lock(impl_->mutex);
    return impl_->seen;
}

void fake_aws_service::release() {
    net::post(impl_->io, [this] {
        impl_->released = true;
        impl_->gate.cancel();
    });
}

bool fake_aws_service::wait_for(std::size_t n, std::chrono::milliseconds limit) const {
    std::unique_lock lock(impl_->mutex);
    return impl_->arrived.wait_for(lock, limit, [&] { return impl_->seen.size() >= n; });
}

std::string sts_credentials_xml(const std::string& key_id, const std::string& secret,
                                const std::string& token, const std::string& expiration) {
    return "<AssumeRoleWithWebIdentityResponse "
           "xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">\n"
           "  <AssumeRoleWithWebIdentityResult>\n"
           "    <SubjectFromWebIdentityToken>system:serviceaccount:ns:sa"
           "</SubjectFromWebIdentityToken>\n"
           "    <Audience>sts.amazonaws.com</Audience>\n"
           "    <AssumedRoleUser>\n"
           "      <Arn>arn:aws:sts::123456789012:assumed-role/bedrock/contextgate</Arn>\n"
           "      <AssumedRoleId>AROACLKWSDQRAOEXAMPLE:contextgate</AssumedRoleId>\n"
           "    </AssumedRoleUser>\n"
           "    <Credentials>\n"
           "      <SessionToken>" +
           token +
           "</SessionToken>\n"
           "      <SecretAccessKey>" +
           secret +
           "</SecretAccessKey>\n"
           "      <Expiration>" +
           expiration +
           "</Expiration>\n"
           "      <AccessKeyId>" +
           key_id +
           "</AccessKeyId>\n"
           "    </Credentials>\n"
           "    <Provider>www.amazon.com</Provider>\n"
           "  </AssumeRoleWithWebIdentityResult>\n"
           "  <ResponseMetadata>\n"
           "    <RequestId>ad4156e9-bce1-11e2-82e6-6b6efEXAMPLE</RequestId>\n"
           "  </ResponseMetadata>\n"
           "</AssumeRoleWithWebIdentityResponse>\n";
}

std::string sts_error_xml(const std::string& code, const std::string& message) {
    return "<ErrorResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">\n"
           "  <Error>\n"
           "    <Type>Sender</Type>\n"
           "    <Code>" +
           code +
           "</Code>\n"
           "    <Message>" +
           message +
           "</Message>\n"
           "  </Error>\n"
           "  <RequestId>c6104cbe-af31-11e0-8154-cbc7ccf896c7</RequestId>\n"
           "</ErrorResponse>\n";
}

}  // namespace gateway::testing
