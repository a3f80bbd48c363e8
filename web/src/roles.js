// What the console shows each role (the gateway decides: auth/roles.cpp; the console leaves out
// what it would refuse). The admin key is an admin; a signed-in person has the role GET /auth/me
// gives.
import { useEffect, useState } from 'preact/hooks';

const PAGES_OF = {
  admin: ['keys', 'usage', 'health', 'log', 'audit'],
  team_admin: ['keys', 'usage', 'audit'],
  member: ['keys', 'usage'],
  viewer: ['keys', 'usage'],
};

export const pagesOf = (role) => PAGES_OF[role] ?? PAGES_OF.viewer;
// A viewer changes nothing: no key is made or revoked from its pages.
export const mayChange = (role) => role !== 'viewer';

// The role of whoever uses the operator pages: `admin` with the admin key, else the signed-in
// user's (null until known).
export function useRole(withKey) {
  const [role, setRole] = useState(withKey ? 'admin' : null);
  useEffect(() => {
    if (withKey) { setRole('admin'); return; }
    fetch('/auth/me').then((r) => (r.ok ? r.json() : null), () => null)
      .then((me) => setRole(me?.role ?? 'viewer'));
  }, [withKey]);
  return role;
}
