#pragma once

#include "gateway/config/config.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gateway::upstream {

// The top-level string "model" of a JSON object, found by a scan that skips string content and
// nested values without parsing them (request bodies run to hundreds of KB, and SDKs put
// `messages` before `model`); the body is never copied or re-serialized. When the member appears
// twice the last one counts, as in the JSON parsers upstreams use, so a key's model limits and the
// routing see the model the upstream runs; a UTF-8 byte order mark before the object is skipped,
// as upstreams do. nullopt for anything else (not an object, no such
// member, not a string). The rest of the body is not validated: a malformed one goes where its
// model says and is refused there.
std::optional<std::string> read_model(std::string_view json_body);

// Replaces that member's value (the last top-level "model" string) with `model`, leaving every
// other byte of the body as it was; false when the body has no such member.
bool replace_model(std::string& json_body, std::string_view model);

// The upstream's name for a client's model name (`model_map`), or the name itself.
std::string upstream_model(const config::upstream_config& up, std::string_view model);

// Chooses the upstream for a model name: the first upstream with a matching glob; the first
// upstream (the default) when there is no model or no match. Immutable, so shared freely.
class model_router {
public:
    explicit model_router(const std::vector<config::upstream_config>& upstreams);

    std::size_t route(std::optional<std::string_view> model) const;

    // The first upstream with a glob that matches `model`; nullopt when none does.
    std::optional<std::size_t> match(std::string_view model) const;

    // The same among the upstreams of one provider (for its native paths); nullopt when no
    // upstream speaks it.
    std::optional<std::size_t> route(std::optional<std::string_view> model,
                                     config::provider_kind provider) const;

private:
    std::vector<std::vector<std::string>> globs_;
    std::vector<config::provider_kind> providers_;
};

}  // namespace gateway::upstream
