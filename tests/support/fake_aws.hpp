#pragma once

// A fake AWS credential service for tests: STS or the EC2 instance metadata service, on
// 127.0.0.1 at a port of its own, answering each request with what its handler returns. A reply
// may be held until release() (to gather concurrent callers behind one request) or never given
// (a stalled service: the connection stays open until the client closes it). Each connection
// answers one request and closes. Thread-safe accessors; the server runs on its own thread.

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace gateway::testing {

struct aws_request {
    std::string method;
    std::string target;
    std::map<std::string, std::string> fields;  // names in lower case
    std::string body;
    // A form body's (or the query's) parameters, percent-decoded.
    std::map<std::string, std::string> form() const;
    std::string field(const std::string& lower_name) const;
};

struct aws_reply {
    unsigned status = 200;
    std::string body;
    std::string content_type = "text/xml";
    bool hold = false;   // wait for release() before answering
    bool stall = false;  // never answer
};

class fake_aws_service {
public:
    using handler = std::function<aws_reply(const aws_request&)>;
    explicit fake_aws_service(handler answer);
    ~fake_aws_service();
    fake_aws_service(const fake_aws_service&) = delete;
    fake_aws_service& operator=(const fake_aws_service&) = delete;

    std::string url() const;  // "http://127.0.0.1:<port>"
    std::size_t count() const;
    std::vector<aws_request> requests() const;
    // Answers the replies held so far and every later one at once.
    void release();
    // True once `n` requests have arrived, false when `limit` passed first.
    bool wait_for(std::size_t n, std::chrono::milliseconds limit) const;

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

// An STS AssumeRoleWithWebIdentity answer, and an STS error answer, as AWS writes them.
std::string sts_credentials_xml(const std::string& key_id, const std::string& secret,
                                const std::string& token, const std::string& expiration);
std::string sts_error_xml(const std::string& code, const std::string& message);

}  // namespace gateway::testing
