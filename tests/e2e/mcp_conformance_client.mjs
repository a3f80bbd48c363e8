// The conformance suite's client under test: `contextgate mcp` for the scenario it names
// (MCP_CONFORMANCE_SCENARIO), against the suite's server URL (the last argument).
import { spawnSync } from 'node:child_process';

const GATEWAY = process.env.CONTEXTGATE_BIN ?? '../../build/contextgate';
const url = process.argv.at(-1);
const scenario = process.env.MCP_CONFORMANCE_SCENARIO;

function mcp(...args) {
  const run = spawnSync(GATEWAY, ['mcp', ...args, '--url', url, '--timeout', '20s'], { encoding: 'utf8' });
  if (run.error) {
    console.error(`cannot run ${GATEWAY}: ${run.error.message}`);
    process.exit(1);
  }
  process.stdout.write(run.stdout);
  process.stderr.write(run.stderr);
  if (run.status !== 0) process.exit(run.status ?? 1);
  return run.stdout;
}

if (scenario === 'initialize') {
  mcp('tools');
} else if (scenario === 'tools_call') {
  const tools = JSON.parse(mcp('tools'));
  const list = Array.isArray(tools) ? tools : tools.tools;
  for (const t of list) mcp('call', '--tool', t.name, '--params', JSON.stringify({ a: 2, b: 3 }));
} else if (scenario === 'sse-retry') {
  mcp('call', '--tool', 'test_reconnection', '--params', '{}');
} else {
  console.error(`no client for scenario ${scenario}`);
  process.exit(2);
}
