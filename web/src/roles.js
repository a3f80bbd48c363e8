// What the console shows each role (the gateway decides: auth/roles.cpp; the console leaves out
// what it would refuse). The admin key is an admin; a signed-in person has the role GET /auth/me
// gives. An admin sees everything; a team admin their team's keys, usage in dollars, budget
// (Teams), members and audit log; a member their own keys and usage; a viewer the same, read
// only (no key made or revoked, no chat started or sent to).
import { useEffect, useState } from 'preact/hooks';

export const ROLES = ['admin', 'team_admin', 'member', 'viewer'];

const PAGES_OF = {
  admin: ['keys', 'usage', 'teams', 'members', 'health', 'log', 'audit'],
  team_admin: ['keys', 'usage', 'teams', 'members', 'audit'],
  member: ['keys', 'usage'],
  viewer: ['keys', 'usage'],
};

export const pagesOf = (role) => PAGES_OF[role] ?? PAGES_OF.viewer;
// A viewer changes nothing: no key is made or revoked, no chat started, from its pages.
export const mayChange = (role) => role !== 'viewer';
// Only admins make, change and delete teams; a team admin reads their team's budget.
export const mayManageTeams = (role) => role === 'admin';

// The roles `role` may give a user on the Members page, and whether it may change `user` at
// all: an admin anyone, to any role; a team admin a member or viewer (of their team, or of no
// team, whom they take into theirs), to member or viewer. users_api.cpp holds the same rule.
const PERSONAL = ['member', 'viewer'];
export const rolesGrantedBy = (role) => (role === 'admin' ? ROLES : role === 'team_admin' ? PERSONAL : []);
export const mayEditUser = (role, user) => role === 'admin' || (role === 'team_admin' && PERSONAL.includes(user.role));

// Whoever uses the operator pages: with the admin key an admin (no user, no team); else the
// signed-in user as GET /auth/me gives them ({user, role, team, csrf}); null until known.
export function usePrincipal(withKey) {
  const [me, setMe] = useState(withKey ? { role: 'admin', team: null, user: null } : null);
  useEffect(() => {
    if (withKey) { setMe({ role: 'admin', team: null, user: null }); return; }
    fetch('/auth/me').then((r) => (r.ok ? r.json() : null), () => null)
      .then((got) => setMe(got ?? { role: 'viewer', team: null, user: null }));
  }, [withKey]);
  return me;
}
