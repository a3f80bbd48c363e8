// libFuzzer target for what the provider adapters read from outside: a client's body in each API
// the gateway translates (Chat Completions, Messages, Responses: read by its ingress, then encoded
// for each dialect, its target and size checked whatever the model name and the schemas hold), an
// upstream's answer in each dialect (Bedrock's Converse streams in AWS's binary event stream),
// whole and as an event stream cut at a position the input chooses, written back by every
// ingress's event writer, its usage read by the usage observer, and AWS event-stream framing on
// its own. The first byte chooses, as a digit ('0'-'8', so the corpus files read as what they
// test). Any bytes must give a refusal or a value that keeps the invariants below; never a crash,
// a hang or a leak (run under ASan+UBSan).
// Build with clang: cmake -DCONTEXTGATE_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ …, then run
// build-fuzz/tests/providers_fuzz -dict=tests/fuzz/providers.dict build-fuzz/corpus-providers
// tests/fuzz/providers_corpus. With g++ the same function is driven by tests/fuzz/driver.cpp
// (ctest `fuzz_smoke`).

#include "gateway/providers/adapter.hpp"
#include "gateway/providers/aws_eventstream.hpp"
#include "gateway/providers/bedrock.hpp"
#include "gateway/providers/ingress.hpp"
#include "gateway/providers/openai.hpp"
#include "gateway/providers/usage_observer.hpp"

#include <boost/json/parse.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace providers = gateway::providers;

namespace {

[[noreturn]] void broken() {
    __builtin_trap();
}

const providers::adapter* const dialects[] = {
    &providers::adapter_for(providers::provider::openai),
    &providers::adapter_for(providers::provider::anthropic),
    &providers::adapter_for(providers::provider::gemini), &providers::bedrock::converse_adapter()};

// A client's body: refused with a reason, or read and encodable as JSON in every dialect.
const providers::ingress* const ingresses[] = {&providers::chat_completions(),
                                               &providers::messages(), &providers::responses(),
                                               &providers::generate_content()};

void client_body(const providers::ingress& in, std::string_view body) {
    providers::request r;
    providers::parse_failure failure;
    if (!in.parse(body, r, failure)) {
        if (failure.message.empty()) broken();
        if (in.refusal(failure).empty()) broken();
        return;
    }
    (void)providers::estimate_input_tokens(r);
    // Gemini's body names no model: its path does.
    if (!in.from_target("/v1beta/models/fuzz-model:streamGenerateContent?alt=sse", r)) broken();
    if (r.model.empty() || r.messages.empty()) broken();
    for (const auto* dialect : dialects) {
        const auto& adapter = *dialect;
        // Whatever the model name holds, the target stays one request line's worth of visible
        // ASCII below the base path: no CR/LF, no fragment, no dot segment.
        auto target = adapter.target(r);
        if (target.empty() || target.front() != '/') broken();
        for (unsigned char c : target)
            if (c <= 0x20 || c >= 0x7f || c == '#') broken();
        auto path = std::string_view(target).substr(0, target.find('?'));
        if (path.find("/../") != std::string_view::npos ||
            path.find("/./") != std::string_view::npos || path.ends_with("/..") ||
            path.ends_with("/."))
            broken();
        std::string error;
        auto wire = adapter.encode(r, error);
        if (wire.empty()) {
            if (error.empty()) broken();
            continue;
        }
        // Bounded whatever the schemas refer to: inlining never multiplies the body.
        if (wire.size() > (8u << 20) + 4 * body.size()) broken();
        boost::system::error_code ec;
        auto v = boost::json::parse(wire, ec);
        if (ec || !v.is_object()) broken();
    }
}

// An upstream's answer: decoded or refused with a reason, whole and streamed in two cuts.
void upstream_answer(const providers::adapter& a, std::string_view body, std::size_t cut) {
    providers::reply whole;
    std::string error;
    if (!a.decode(body, whole, error) && error.empty()) broken();
    // An error stays one (Bedrock's type may change the status a client sees: 429, 503…).
    auto said = a.decode_error(500, body);
    if (said.status < 400 || said.type.empty()) broken();
    // The usage observer reads any answer: whole (from its end) or cut short (from its start),
    // fed in two parts; a whole one read in place gives what feeding it gives.
    providers::usage_observer in_place(false);
    auto read = in_place.finish_whole(body);
    for (bool complete : {true, false}) {
        providers::usage_observer fed(false);
        fed.feed(body.substr(0, cut));
        fed.feed(body.substr(cut));
        auto used = fed.finish(complete);
        if (used.input < 0 || used.output < 0) broken();
        if (complete &&
            (used.known != read.known || used.input != read.input || used.output != read.output))
            broken();
    }

    providers::stream_reader reader(a, 1 << 20);
    providers::reply_builder builder;
    // Every client API writes what the provider streamed, whatever it was.
    providers::request asked;
    asked.tools.push_back({"apply_patch", "", {}, true, ""});
    std::vector<std::unique_ptr<providers::event_writer>> writers;
    for (const auto* in : ingresses)
        writers.push_back(in->writer({"x_1", "m", 0, "/v1beta/models/m:x?alt=sse"}, asked));
    std::string written;
    std::vector<providers::stream_delta> deltas;
    std::string why;
    for (auto part : {body.substr(0, cut), body.substr(cut)}) {
        deltas.clear();
        bool ok = reader.feed(part, deltas, why);
        for (const auto& d : deltas) {
            builder.add(d);
            for (auto& w : writers) w->frames(d, written);
        }
        if (!ok) {
            if (why.empty()) broken();  // a refusal always says why
            providers::provider_error e;
            e.message = why;
            for (auto& w : writers) w->failed(e, written);
            return;  // broken, or the provider's error: fine
        }
    }
    deltas.clear();
    if (!reader.finish(deltas, why)) return;  // ended early: refused, fine
    for (const auto& d : deltas) {
        builder.add(d);
        for (auto& w : writers) w->frames(d, written);
    }
    std::string bad;
    auto reply = builder.take(bad);
    for (const auto* c : reply.content.calls()) (void)c->arguments.size();
    for (const auto* in : ingresses)
        if (in->answer(reply, {"x_1", "m", 0}, asked).empty()) broken();
}

// AWS event-stream bytes: decoded alike whole and cut in two, and each message decoded is the
// bytes it came from (the framing has one encoding), so encoding it gives them back.
void event_stream(std::string_view bytes, std::size_t cut) {
    namespace es = providers::aws_eventstream;
    std::vector<es::message> whole, pieces;
    std::string error, cut_error;
    es::decoder one(1 << 16), two(1 << 16);
    bool ok = one.feed(bytes, whole, error) && one.finish(error);
    bool cut_ok = two.feed(bytes.substr(0, cut), pieces, cut_error) &&
                  two.feed(bytes.substr(cut), pieces, cut_error) && two.finish(cut_error);
    if (ok != cut_ok || whole.size() != pieces.size()) broken();
    if (!ok && error.empty()) broken();
    std::string again;
    for (const auto& m : whole) es::encode(m, again);
    if (again != bytes.substr(0, again.size())) broken();
    if (ok && again.size() != bytes.size()) broken();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 2) return 0;
    std::string_view rest(reinterpret_cast<const char*>(data) + 2, size - 2);
    auto cut = rest.empty() ? 0 : data[1] % (rest.size() + 1);
    auto choice = static_cast<std::uint8_t>(data[0] - '0') % 9;
    if (choice < 4)
        client_body(*ingresses[choice], rest);
    else if (choice < 8)
        upstream_answer(*dialects[choice - 4], rest, cut);
    else
        event_stream(rest, cut);
    return 0;
}
