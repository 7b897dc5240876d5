// A small application on the REAL Claude Agent SDK (`query()` of @anthropic-ai/claude-agent-sdk,
// installed outside the project): what test/helpers/claude-agent-sdk.ts runs, offline, for the
// real-SDK scenarios. Plain JavaScript: it is the user's app, run by Node as is, and the SDK
// spawns its bundled Claude Code binary with this process's environment (telemetry included).
//
//   node app.mjs '<json>'   json = {
//     sdk: "/path/to/node_modules/@anthropic-ai/claude-agent-sdk",
//     model, maxTurns, allowedTools: [...],
//     agents: { name: AgentDefinition },               // sub-agents defined in code
//     mcpTools: [{ server, name, resultBytes }],      // an in-process MCP server's tools
//     runs: [{ prompt, resume?: true }] }
// Prints one JSON line per run: { sessionId, subtype, turns, compactBoundaries, contextWindow, error }.
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const spec = JSON.parse(process.argv[2]);
const sdk = await import(pathToFileURL(path.join(spec.sdk, 'sdk.mjs')).href);
const { z } = await import(pathToFileURL(path.join(spec.sdk, '../../zod/index.js')).href);

/** About `bytes` bytes of numbered log lines. */
const logLines = (label, bytes) => {
  const rows = [];
  for (let i = 0, size = 0; size < bytes; i++) {
    const row =
      `${label} ${String(i).padStart(5, '0')}: ${'lorem ipsum dolor sit amet '.repeat(4)}`.slice(
        0,
        99,
      );
    rows.push(row);
    size += row.length + 1;
  }
  return rows.join('\n');
};

const byServer = {};
for (const t of spec.mcpTools ?? []) (byServer[t.server] ??= []).push(t);
const mcpServers = {};
for (const [server, tools] of Object.entries(byServer)) {
  mcpServers[server] = sdk.createSdkMcpServer({
    name: server,
    version: '1.0.0',
    tools: tools.map((t) =>
      sdk.tool(
        t.name,
        `Returns the ${t.name} output`,
        { query: z.string().optional() },
        async () => ({
          content: [{ type: 'text', text: logLines(t.name, t.resultBytes) }],
        }),
      ),
    ),
  });
}
const withMcp = Object.keys(mcpServers).length > 0;

let sessionId;
for (const run of spec.runs) {
  const options = {
    cwd: process.cwd(),
    model: spec.model,
    maxTurns: spec.maxTurns ?? 12,
    // tools run because allowedTools lists them (bypassPermissions is refused as root)
    permissionMode: 'default',
    allowedTools: spec.allowedTools ?? ['Bash', 'Read', 'Write'],
    env: { ...process.env },
    stderr: (line) => process.stderr.write(line),
    ...(spec.agents ? { agents: spec.agents } : {}),
    ...(withMcp ? { mcpServers } : {}),
    ...(run.resume ? { resume: sessionId } : {}),
  };
  // an in-process MCP server needs streaming input
  async function* input() {
    yield {
      type: 'user',
      message: { role: 'user', content: run.prompt },
      parent_tool_use_id: null,
      session_id: '',
    };
  }
  const out = {
    sessionId: null,
    subtype: null,
    turns: null,
    compactBoundaries: 0,
    contextWindow: null,
    error: null,
  };
  try {
    for await (const m of sdk.query({ prompt: withMcp ? input() : run.prompt, options })) {
      if (m.session_id) sessionId = m.session_id;
      if (m.type === 'system' && m.subtype === 'compact_boundary') out.compactBoundaries++;
      if (m.type === 'result') {
        out.subtype = m.subtype;
        out.turns = m.num_turns;
        const usage = Object.values(m.modelUsage ?? {})[0];
        out.contextWindow = usage?.contextWindow ?? null;
      }
    }
  } catch (error) {
    out.error = String(error?.stack ?? error);
  }
  out.sessionId = sessionId ?? null;
  process.stdout.write(`${JSON.stringify(out)}\n`);
  if (out.error) process.exit(1);
}
