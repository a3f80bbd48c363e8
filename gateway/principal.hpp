#pragma once

#include <optional>
#include <string>
#include <string_view>

// Who is asking, once the gateway has found out: a person signed in through the company's
// identity provider (an OIDC session cookie), or the operators' automation (`admin.api_key`).
// Identity is consulted by the faces as admission is (design.md "People, teams and sign-in"):
// auth/ finds the principal, admin/ and context/ decide what its role may do. A plain value on
// the ground floor, so that http/ (which carries it) and config/ (which names roles) need no auth/.
namespace gateway::auth {

// What a principal may do, widest first: everything; their team's members, keys, budget and
// usage; their own keys and usage, and the Context API; read only.
enum class role { admin, team_admin, member, viewer };

// "admin", "team_admin", "member", "viewer": the configuration's, the API's and the store's
// spelling.
constexpr std::string_view role_name(role r) {
    switch (r) {
        case role::admin:
            return "admin";
        case role::team_admin:
            return "team_admin";
        case role::member:
            return "member";
        case role::viewer:
            break;
    }
    return "viewer";
}
constexpr std::optional<role> role_of(std::string_view name) {
    for (auto r : {role::admin, role::team_admin, role::member, role::viewer})
        if (role_name(r) == name) return r;
    return std::nullopt;
}

struct principal {
    enum class kind {
        automation,  // Authorization: Bearer <admin.api_key>: an admin, not a person
        session,     // a signed-in user's session cookie
    };
    kind from = kind::automation;
    role as = role::admin;
    // A user's (kind::session): the store's id, and what the identity provider said.
    std::string user_id;
    std::string email;
    std::string name;
    std::string team;  // "": none
    // kind::session: the session's id (never shown) and the value X-CSRF-Token must carry on a
    // state-changing request.
    std::string session_id;
    std::string csrf;

    bool is_admin() const { return as == role::admin; }
    // Whether it may change anything at all (a viewer may not).
    bool may_write() const { return as != role::viewer; }
};

}  // namespace gateway::auth
