#include "gateway/providers/ingress.hpp"

#include "gateway/providers/adapter.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <cmath>

namespace gateway::providers {

void block_writer::ensure_begun(std::string& out) {
    if (begun_) return;
    begun_ = true;
    stream_delta started;
    started.what = stream_delta::kind::started;
    begin(started, out);
}

void block_writer::switch_to(block b, const stream_delta& d, std::string& out) {
    if (open_ != block::none) close(open_, out);
    open_ = b;
    open(b, d, out);
}

void block_writer::frames(const stream_delta& d, std::string& out) {
    if (ended_) return;
    switch (d.what) {
        case stream_delta::kind::started:
            if (!begun_) {
                begun_ = true;
                begin(d, out);
            }
            return;
        case stream_delta::kind::reasoning:
        case stream_delta::kind::text: {
            if (d.text.empty()) return;
            ensure_begun(out);
            auto b = d.what == stream_delta::kind::text ? block::text : block::reasoning;
            if (open_ != b) switch_to(b, d, out);
            append(b, d.text, out);
            return;
        }
        case stream_delta::kind::call_started:
            ensure_begun(out);
            switch_to(block::call, d, out);
            open_call_ = d.index;
            ++calls_;
            return;
        case stream_delta::kind::call_arguments:
            if (d.text.empty()) return;
            if (open_ != block::call || open_call_ != d.index) {
                ended_ = true;
                failed(detail::interleaved(d.index), out);
                return;
            }
            append(block::call, d.text, out);
            return;
        case stream_delta::kind::finished:
            ensure_begun(out);
            if (open_ != block::none) close(open_, out);
            open_ = block::none;
            ended_ = true;
            end(d, out);
            return;
    }
}

provider_error detail::interleaved(std::size_t index) {
    provider_error e;
    e.message = "the upstream continued call " + std::to_string(index) +
                " after another part of its answer began";
    return e;
}

std::optional<json::value> detail::parse_body(std::string_view body, parse_failure& f) {
    boost::system::error_code ec;
    json::parse_options options;
    options.max_depth = 64;
    auto v = json::parse(body, ec, {}, options);
    if (ec) {
        fail(f, "", "The request body is not valid JSON (" + ec.message() + ").");
        f.code = "invalid_json";
        return std::nullopt;
    }
    if (!v.is_object()) {
        fail(f, "", "The request body is not a JSON object.");
        f.code = "invalid_json";
        return std::nullopt;
    }
    return v;
}

bool detail::read_integer(const json::value* v, std::string param, std::int64_t min,
                          std::int64_t max, std::optional<std::int64_t>& out, parse_failure& f) {
    if (!v || v->is_null()) return true;
    auto n = integer_of(v, min, max);
    if (!n)
        return fail(
            f, std::move(param),
            "must be a whole number from " + std::to_string(min) + " to " + std::to_string(max));
    out = n;
    return true;
}

bool detail::read_number(const json::value* v, std::string param, std::optional<double>& out,
                         parse_failure& f) {
    if (!v || v->is_null()) return true;
    auto n = number_of(v);
    if (!n || !std::isfinite(*n)) return fail(f, std::move(param), "must be a finite number");
    out = n;
    return true;
}

std::int64_t estimate_input_tokens(const request& r) {
    std::size_t bytes = r.system.size();
    std::int64_t images = 0;
    for (const auto& m : r.messages)
        for (const auto& p : m.parts) switch (p.what) {
                case part::kind::text:
                    bytes += p.text.size();
                    break;
                case part::kind::image:
                    ++images;
                    break;
                case part::kind::tool_call:
                    bytes += p.call.name.size() + json::serialize(p.call.arguments).size();
                    break;
                case part::kind::tool_result:
                    bytes += p.result.content.size();
                    break;
                case part::kind::opaque:
                case part::kind::reasoning:
                    break;  // never sent to a provider of another dialect
            }
    for (const auto& t : r.tools)
        bytes += t.name.size() + t.description.size() + json::serialize(t.parameters).size();
    return static_cast<std::int64_t>((bytes + 3) / 4) + images * 1600;
}

}  // namespace gateway::providers
