// Sign-in's fields (`auth:`), declared once as every section's are (sections.cpp).
#include "gateway/config/field_kinds.hpp"
#include "gateway/principal.hpp"

namespace gateway::config {

using namespace field_kinds;

namespace {

bool loopback_host(std::string_view host) {
    return host == "127.0.0.1" || host == "::1" || host == "localhost" ||
           host.ends_with(".localhost");
}

// A role name as auth::role_of reads it, or the error naming `what`.
void check_role(const yaml_reader& r, const YAML::Node& n, std::string_view what,
                const std::string& name) {
    if (!auth::role_of(name))
        r.fail(n, "`" + std::string(what) + "`: `" + name +
                      "` is no role: admin, team_admin, member or viewer");
}

}  // namespace

const fields<oidc_config>& oidc_fields() {
    using S = oidc_config;
    static const fields<S> all{
        {"issuer", "https://… the provider's issuer (discovery below it); \"\": sign-in off",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
             s.issuer = r.scalar(n, "issuer");
             if (s.issuer.empty()) return;
             auto url = parse_base_url(s.issuer);
             if (!url) r.fail(n, "`auth.oidc.issuer`: `" + s.issuer + "` " + url.error);
             // The ID tokens' keys come from here: over plain HTTP anyone on the path could
             // sign users in. Loopback only, for a provider on the same machine (tests).
             if (!url.value->tls && !loopback_host(url.value->host))
                 r.fail(n,
                        "`auth.oidc.issuer` must be an https:// URL (http:// only on "
                        "loopback), got `" +
                            s.issuer + "`");
         },
         [](const S& s) { return quoted(s.issuer); }},
        text_field("client_id", &S::client_id, "the gateway's client id at the provider"),
        text_field("client_secret", &S::client_secret, "the client's secret (a secret)",
                   [](const std::string& v) { return v.empty() ? "" : "***"; }),
        {"redirect_url", "<the gateway as browsers reach it>/auth/callback",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
             s.redirect_url = r.scalar(n, "redirect_url");
             if (s.redirect_url.empty()) return;  // required once there is an issuer (below)
             auto url = parse_base_url(s.redirect_url);
             if (!url || !s.redirect_url.ends_with("/auth/callback"))
                 r.fail(n,
                        "`auth.oidc.redirect_url` must be the gateway's address followed by "
                        "/auth/callback (https://gateway.example.com/auth/callback), got `" +
                            s.redirect_url + "`");
         },
         [](const S& s) { return quoted(s.redirect_url); }},
        {"scopes", "requested scopes; openid is always among them",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
             s.scopes = r.string_list(n, "scopes");
             bool openid = false;
             for (const auto& scope : s.scopes) openid = openid || scope == "openid";
             if (!openid) s.scopes.insert(s.scopes.begin(), "openid");
         },
         [](const S& s) { return schema::flow_list(s.scopes); }},
        text_field("roles_claim", &S::roles_claim,
                   "the ID token's claim (a string or a list) whose values `roles` maps"),
        {"roles", "{claim value: admin | team_admin | member | viewer}; the widest wins",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
             s.roles = r.string_map(n, "roles");
             for (const auto& [value, role] : s.roles)
                 check_role(r, n[value], "auth.oidc.roles", role);
         },
         [](const S& s) { return flow_map(s.roles, false); }},
        text_field("team_claim", &S::team_claim,
                   "the claim naming the user's team; \"\": teams are set by an admin"),
        {"default_role", "the role of a new user no claim value maps",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
             s.default_role = r.scalar(n, "default_role");
             check_role(r, n, "auth.oidc.default_role", s.default_role);
         },
         [](const S& s) { return quoted(s.default_role); }},
        path_field("ca_file", &S::ca_file, "the provider's CA bundle; \"\": the system's"),
    };
    return all;
}

const fields<auth_config>& auth_fields() {
    using S = auth_config;
    static const fields<S> all{
        {"oidc", "{issuer, client_id, client_secret, redirect_url, …}: sign-in (OpenID Connect)",
         [](const yaml_reader& r, const YAML::Node& n, std::string_view, S& s) {
             if (!n.IsMap()) r.fail(n, "`auth.oidc` must be a map such as {issuer: https://…}");
             schema::read(r, n, "auth.oidc", oidc_fields(), s.oidc);
             const auto& o = s.oidc;
             if (o.issuer.empty()) return;
             if (o.client_id.empty()) r.fail(n, "`auth.oidc` needs `client_id`");
             if (o.redirect_url.empty())
                 r.fail(n, "`auth.oidc` needs `redirect_url`: <gateway>/auth/callback");
             if (!o.roles.empty() && o.roles_claim.empty())
                 r.fail(n["roles"], "`auth.oidc.roles` maps the values of `roles_claim`: name it");
         },
         [](const S& s) { return flow(s.oidc, oidc_fields()); }},
        duration_field("session_idle", &S::session_idle, "a session unused this long ends", true),
        duration_field("session_absolute", &S::session_absolute,
                       "every session ends this long after sign-in", true),
    };
    return all;
}

}  // namespace gateway::config
