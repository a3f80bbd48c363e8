// Black-box checks of `contextgate tool`: the binary as a user or a script runs it.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const GATEWAY = process.env.CONTEXTGATE_BIN;

function tool(...args) {
  return spawnSync(GATEWAY, ['tool', ...args], { encoding: 'utf8', timeout: 30000 });
}

// The scratch folders made below, removed when the file's tests end.
const made = [];
after(() => made.forEach((base) => rmSync(base, { recursive: true, force: true })));

function workspace() {
  const base = mkdtempSync(join(tmpdir(), 'contextgate-cli-'));
  made.push(base);
  const root = join(base, 'ws');
  mkdirSync(join(root, 'src'), { recursive: true });
  writeFileSync(join(base, 'secret.txt'), 'do not read');
  writeFileSync(join(root, 'src', 'db.ts'), 'export class DatabaseService {\n  connect() {}\n}\n');
  writeFileSync(join(root, 'src', 'app.ts'), "import { DatabaseService } from './db';\n");
  symlinkSync(join(base, 'secret.txt'), join(root, 'leak'));
  return { base, root };
}

test('tool list prints the catalogue by role', () => {
  const editor = tool('list');
  assert.equal(editor.status, 0);
  assert.match(editor.stdout, /### Search & Discovery/);
  assert.match(editor.stdout, /`doc_edit`/);
  const reader = tool('list', '--role', 'reader');
  assert.equal(reader.status, 0);
  assert.doesNotMatch(reader.stdout, /`doc_edit`/);
  assert.equal(tool('list', '--role', 'admin').status, 2);
});

test('tool run prints model text, or the whole result with --json', () => {
  const { root } = workspace();
  const found = tool('run', 'find_definition', '--workspace', root, '--params', '{"symbol":"DatabaseService"}');
  assert.equal(found.status, 0, found.stderr);
  assert.match(found.stdout, /src\/db\.ts:1:/);
  const importers = tool('run', 'find_importers', '--workspace', root, '--json',
    '--params', '{"module_path":"src/db.ts"}');
  const result = JSON.parse(importers.stdout);
  assert.equal(result.ok, true);
  assert.equal(result.data.importers[0].path, 'src/app.ts');
});

test('tool run writes with a diff, previews without writing, and fails with a status', () => {
  const { root } = workspace();
  const params = '{"command":"str_replace","path":"src/db.ts","old_str":"connect() {}","new_str":"connect(): void {}"}';
  const preview = tool('run', 'doc_edit', '--workspace', root, '--preview', '--json', '--params', params);
  assert.equal(JSON.parse(preview.stdout).data.applied, false);
  assert.match(readFileSync(join(root, 'src', 'db.ts'), 'utf8'), /connect\(\) \{\}/);
  const edited = tool('run', 'doc_edit', '--workspace', root, '--json', '--params', params);
  const result = JSON.parse(edited.stdout);
  assert.equal(edited.status, 0);
  assert.match(result.data.diff, /^\+  connect\(\): void \{\}$/m);
  assert.match(readFileSync(join(root, 'src', 'db.ts'), 'utf8'), /connect\(\): void/);
  const again = tool('run', 'doc_edit', '--workspace', root, '--params', params);
  assert.equal(again.status, 1);
  assert.match(again.stdout, /^error NO_MATCH: /);
});

test('tool run refuses paths out of the workspace and bad input', () => {
  const { root } = workspace();
  const leak = tool('run', 'read_file', '--workspace', root, '--json', '--params', '{"path":"leak"}');
  assert.equal(leak.status, 1);
  assert.equal(JSON.parse(leak.stdout).error_code, 'PATH_OUTSIDE_WORKSPACE');
  assert.doesNotMatch(leak.stdout, /do not read/);
  const invalid = tool('run', 'read_file', '--workspace', root, '--params', '{"path":');
  assert.equal(invalid.status, 2);
  assert.match(invalid.stderr, /--params is not valid JSON/);
  const unknown = tool('run', 'format_disk', '--workspace', root, '--json', '--params', '{}');
  assert.equal(JSON.parse(unknown.stdout).error_code, 'UNKNOWN_TOOL');
  assert.equal(tool('run', 'read_file', '--workspace', join(root, 'missing'), '--params', '{}').status, 2);
});
