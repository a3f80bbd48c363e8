#pragma once

#include <string_view>

namespace gateway::http {

// Whether a header's or query parameter's name says its value is a secret (docs/operations.md,
// "Logging"): one of the listed names (`sig`, `code`, `pass`, `pwd`, `sid`, `otp`), or a name
// holding one of the credential words (`key`, `token`, `secret`, `passw`, `auth`, `session`,
// `signature`, `credential`, `jwt`, `cookie`) anywhere, in any case: `api-key`, `api_key`,
// `subscription-key`, `access-token`, `private_token`, `x-custom-auth`, `Authorization`.
// Leans to yes: a log loses a harmless value rather than keep a secret. `name` as it is decoded
// (a query name percent-decoded first). Pure.
bool names_a_secret(std::string_view name);

}  // namespace gateway::http
