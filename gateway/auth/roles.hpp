#pragma once

#include "gateway/principal.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

// What each role may do, in one table per face (design.md "People, teams and sign-in"): the
// faces ask here once per request, before any handler runs, and handlers only narrow what they
// list to what the principal may see.
namespace gateway::auth {

// Who owns the object a request names: a key's owning team and user, a team (itself), a user
// (the user and their team). "": none.
struct owner {
    std::string team;
    std::string user;
};

// How far a role reaches on a route: nowhere; objects its own user owns; objects of its own team
// (its members' included); everything.
enum class reach { none, own, team, any };

// One route's reach for each role, widest role first. Routes are the router's patterns.
struct route_rule {
    std::string_view method;
    std::string_view route;
    reach admin;
    reach team_admin;
    reach member;
    reach viewer;
};

// The admin API's rules, one per route (a route without one is the admins' alone).
const std::vector<route_rule>& admin_rules();

// Why `who` may not `method` the admin route `route` whose object is owned by `of` (nullopt: the
// route names no object, or it does not exist; the handler answers that), or "" when it may.
// The message names the role, for the 403.
std::string admin_refusal(const principal& who, std::string_view method, std::string_view route,
                          const std::optional<owner>& of);

// Why `who` may not `method` a /context route ("" when it may): a viewer only reads; every other
// role uses the Context API.
std::string context_refusal(const principal& who, std::string_view method);

}  // namespace gateway::auth
