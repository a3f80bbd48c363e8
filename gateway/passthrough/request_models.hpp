#pragma once

#include "gateway/http/context.hpp"
#include "gateway/passthrough/admission.hpp"

#include <optional>
#include <string_view>

namespace gateway::passthrough {

// The models a /v1 or /v1beta request asks for, for a key's model list (see
// requested_models). Read from:
// - Gemini's path (`/v1beta/models/{m}:…`, `/v1beta/tunedModels/{m}:…` as `tunedModels/{m}`);
// - Anthropic's batches (`POST /v1/messages/batches`: every `requests[].params.model`);
// - a multipart/form-data body's `model` field (audio transcriptions, image edits);
// - a JSON body's top-level `model` (a UTF-8 byte order mark before it is skipped, as upstreams
//   do).
// Model-less by nature, and documented so (README, Security): GET, HEAD and DELETE requests
// (listings, retrievals, deletions: nothing is generated), and POSTs to `/v1/files`,
// `/v1/uploads` and any path ending in `/cancel`. Anything else whose model cannot be read is
// not `established`, and a key with a model list refuses it. `routed_model`: the JSON body's
// model as routing already read it, so that a large body is not scanned twice (read again when
// absent). Pure.
requested_models models_of(const http::request& req, bool tunnel,
                           std::optional<std::string_view> routed_model = std::nullopt);

// The value of the form field `name` of a multipart/form-data body with `boundary`; nullopt when
// there is no such field.
std::optional<std::string> multipart_field(std::string_view body, std::string_view boundary,
                                           std::string_view name);

}  // namespace gateway::passthrough
