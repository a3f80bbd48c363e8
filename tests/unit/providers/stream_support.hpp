#pragma once

// Feeds a provider's SSE transcript to its stream decoder in pieces and assembles the reply,
// so each adapter's test can check that every way of cutting the bytes gives the same result.

#include "gateway/providers/adapter.hpp"

#include <boost/json/serialize.hpp>

#include <string>
#include <string_view>

namespace gateway::providers::testing {

struct assembled {
    bool ok = false;
    std::string error;
    reply result;
    std::string text_deltas;  // the text deltas joined, in order
};

// Cuts `transcript` at every `cut` bytes (0: one piece).
inline assembled assemble(const adapter& a, std::string_view transcript, std::size_t cut) {
    assembled out;
    stream_reader reader(a, 1 << 20);
    reply_builder builder;
    std::size_t step = cut == 0 ? transcript.size() : cut;
    std::vector<stream_delta> deltas;
    for (std::size_t at = 0; at < transcript.size(); at += step) {
        deltas.clear();
        if (!reader.feed(transcript.substr(at, step), deltas, out.error)) return out;
        for (const auto& d : deltas) {
            if (d.what == stream_delta::kind::text) out.text_deltas += d.text;
            builder.add(d);
        }
    }
    deltas.clear();
    if (!reader.finish(deltas, out.error)) return out;
    for (const auto& d : deltas) builder.add(d);
    out.result = builder.take(out.error);
    out.ok = out.error.empty();
    return out;
}

// A reply as one comparable string: text, then each call with its arguments and meta.
inline std::string describe(const reply& r) {
    std::string out =
        "finish=" + std::string(openai_finish_reason(r.why)) + " text=" + r.content.text();
    for (const auto* c : r.content.calls())
        out += " call{" + c->id + "," + c->name + "," + boost::json::serialize(c->arguments) + "," +
               boost::json::serialize(c->provider_meta) + "}";
    if (r.used.known)
        out += " usage=" + std::to_string(r.used.input) + "/" + std::to_string(r.used.output);
    return out;
}

}  // namespace gateway::providers::testing
