// Runs one command with its loopback TCP ports relayed to Unix sockets. Started inside a private
// network namespace (`unshare -n`, only a loopback interface), it lets the real Claude Code
// binary reach the test's servers, which listen on Unix sockets outside, and nothing else: the
// namespace has no route to any other address. Plain JavaScript: it runs before any loader.
//
// usage: node loopback-relay.mjs '<json>'  with json = {
//   forwards: { NAME: "/path/to.sock" },     // each gets a 127.0.0.1 port in this namespace
//   env: { K: "http://127.0.0.1:{{NAME}}" }, // the command's whole environment ({{NAME}} = port)
//   files: { "/path/config.toml": "...{{NAME}}..." }, // optional: written first, ports filled in
//   cmd: ["/path/to/bin", ...args], cwd: "/dir" }
// Exits with the command's exit code; its stdout and stderr pass through.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import net from 'node:net';

const spec = JSON.parse(process.argv[2]);
const ports = {};
const servers = [];
for (const [name, socketPath] of Object.entries(spec.forwards)) {
  const server = net.createServer((inbound) => {
    const outbound = net.connect(socketPath);
    inbound.pipe(outbound).pipe(inbound);
    const end = () => {
      inbound.destroy();
      outbound.destroy();
    };
    inbound.on('error', end);
    outbound.on('error', end);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  ports[name] = server.address().port;
  servers.push(server);
}
const withPorts = (v) => String(v).replace(/\{\{(\w+)\}\}/g, (_, name) => String(ports[name]));
const env = {};
for (const [k, v] of Object.entries(spec.env)) env[k] = withPorts(v);
for (const [path, text] of Object.entries(spec.files ?? {})) writeFileSync(path, withPorts(text));
const child = spawn(spec.cmd[0], spec.cmd.slice(1), { env, cwd: spec.cwd, stdio: 'inherit' });
const stop = (signal) => child.kill(signal);
process.on('SIGTERM', () => stop('SIGTERM'));
process.on('SIGINT', () => stop('SIGINT'));
child.on('exit', (code, signal) => {
  for (const s of servers) s.close();
  process.exit(code ?? (signal ? 128 : 1));
});
