#pragma once

#include <string>
#include <string_view>

namespace gateway {

// Whether a header's or query parameter's name says its value is a secret (docs/operations.md,
// "Logging"): one of the listed names (`sig`, `code`, `pass`, `pwd`, `sid`, `otp`), or a name
// holding one of the credential words (`key`, `token`, `secret`, `passw`, `auth`, `session`,
// `signature`, `credential`, `jwt`, `cookie`) anywhere, in any case: `api-key`, `api_key`,
// `subscription-key`, `access-token`, `private_token`, `x-custom-auth`, `Authorization`.
// Leans to yes: a log loses a harmless value rather than keep a secret. `name` as it is decoded
// (a query name percent-decoded first). Pure.
bool names_a_secret(std::string_view name);

// `text` with every valid `%XX` decoded and anything else kept as it is ("%6Bey%zz" is `key%zz`):
// a query's name as an upstream reads it, leaning to what a lenient server would hear. Pure.
std::string percent_decoded(std::string_view text);

}  // namespace gateway
