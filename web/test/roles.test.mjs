// What the console offers each role (roles.js): the operator pages, and the roles a Members page
// may give whom. The gateway's table (auth/roles.cpp, users_api.cpp) is the rule; these keep the
// console from offering what it would refuse.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mayChange, mayEditUser, mayManageTeams, pagesOf, rolesGrantedBy } from '../src/roles.js';

test('each role sees its pages; an unknown role only a viewer\'s', () => {
  assert.deepEqual(pagesOf('admin'), ['keys', 'usage', 'teams', 'members', 'health', 'log', 'audit']);
  assert.deepEqual(pagesOf('team_admin'), ['keys', 'usage', 'teams', 'members', 'audit']);
  assert.deepEqual(pagesOf('member'), ['keys', 'usage']);
  assert.deepEqual(pagesOf('viewer'), ['keys', 'usage']);
  assert.deepEqual(pagesOf(undefined), pagesOf('viewer'));
  assert.deepEqual(pagesOf('owner'), pagesOf('viewer'));
});

test('only a viewer changes nothing; only an admin manages teams', () => {
  assert.deepEqual(['admin', 'team_admin', 'member', 'viewer'].map(mayChange), [true, true, true, false]);
  assert.deepEqual(['admin', 'team_admin', 'member', 'viewer'].map(mayManageTeams), [true, false, false, false]);
});

test('an admin gives anyone any role; a team admin makes members and viewers members or viewers', () => {
  assert.deepEqual(rolesGrantedBy('admin'), ['admin', 'team_admin', 'member', 'viewer']);
  assert.deepEqual(rolesGrantedBy('team_admin'), ['member', 'viewer']);
  assert.deepEqual(rolesGrantedBy('member'), []);
  for (const role of ['admin', 'team_admin', 'member', 'viewer']) {
    assert.equal(mayEditUser('admin', { role }), true, role);
    assert.equal(mayEditUser('team_admin', { role }), role === 'member' || role === 'viewer', role);
    assert.equal(mayEditUser('member', { role }), false, role);
  }
});
