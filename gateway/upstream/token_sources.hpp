#pragma once

#include "gateway/config/config.hpp"
#include "gateway/upstream/access_token.hpp"
#include "gateway/upstream/environment.hpp"

#include <memory>

// Which access tokens an upstream's requests carry, and the source that hands them out.
namespace gateway::upstream {

// The token source of `up`: Google's for a Vertex AI upstream (its credentials_file, else
// GOOGLE_APPLICATION_CREDENTIALS, else the metadata server at GCE_METADATA_HOST or
// metadata.google.internal); Entra ID's for an Azure upstream with an `azure:` application
// (authority_host, else AZURE_AUTHORITY_HOST, else login.microsoftonline.com); null for the
// others. Reads a key file (small, blocking: call it at start-up or a reload). The error says
// what is wrong: which file, which field.
config::parsed<std::shared_ptr<token_source>> make_token_source(const config::upstream_config& up,
                                                                const environment& env);

}  // namespace gateway::upstream
