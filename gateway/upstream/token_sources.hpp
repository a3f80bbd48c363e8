#pragma once

#include "gateway/config/config.hpp"
#include "gateway/upstream/access_token.hpp"
#include "gateway/upstream/environment.hpp"

#include <chrono>
#include <memory>
#include <string_view>

// Which access tokens an upstream's requests carry, and the source that hands them out.
namespace gateway::upstream {

// How a token source waits and when it fetches again (refresher.hpp). Tests shorten them.
struct token_timing {
    // Each step of a call to a token endpoint (Google's, Entra ID's): connecting, the answer's
    // head, each read of its body.
    config::duration token_endpoint_timeout{10'000};
    // The same for Google's metadata server, which answers within milliseconds where it exists.
    config::duration metadata_timeout{2'000};
    config::duration refresh_early{300'000};
    config::duration retry_after_failure{5'000};
};

// The token source of `up`: Google's for a Vertex AI upstream (its credentials_file, else
// GOOGLE_APPLICATION_CREDENTIALS, else the metadata server at GCE_METADATA_HOST or
// metadata.google.internal); Entra ID's for an Azure upstream with an `azure:` application
// (authority_host, else AZURE_AUTHORITY_HOST, else login.microsoftonline.com); null for the
// others. Reads a key file (small, blocking: call it at start-up or a reload). The error says
// what is wrong: which file, which field.
config::parsed<std::shared_ptr<token_source>> make_token_source(const config::upstream_config& up,
                                                                const environment& env,
                                                                token_timing timing = {});

// An OAuth 2 token endpoint's answer (Google's, its metadata server's, Entra ID's): 200 with
// {access_token, expires_in (seconds, a number or its text)}, or an error {error,
// error_description}. `where` names the service in the error, which quotes its words.
config::parsed<access_token> read_token_answer(std::string_view where, unsigned status,
                                               std::string_view body,
                                               std::chrono::system_clock::time_point now);

}  // namespace gateway::upstream
