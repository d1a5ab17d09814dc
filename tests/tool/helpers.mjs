// Shared helpers of the tool's node tests: run the tool as a program, make plug-ins with init.
import { spawnSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

export const TOOL = new URL("../../tool/almanac-plugin.mjs", import.meta.url).pathname;
export const NOW = "2026-06-10T15:00:00Z";

/** Run the tool synchronously: {code, stdout, stderr}. */
export function tool(args, { cwd, env = {} } = {}) {
  const r = spawnSync(process.execPath, [TOOL, ...args], { cwd, env: { PATH: process.env.PATH, ALMANAC_PLUGIN_NOW: NOW, ...env }, encoding: "utf8" });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Run the tool without blocking the test process (for tests that serve something themselves). */
export function toolAsync(args, { cwd, env = {} } = {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [TOOL, ...args], { cwd, env: { PATH: process.env.PATH, ALMANAC_PLUGIN_NOW: NOW, ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

export function tempDir(prefix = "almanac-tool-") {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** A copy of a folder under a new parent, named `name`. */
export function copyPlugin(src, name = path.basename(src)) {
  const dir = path.join(tempDir(), name);
  fs.cpSync(src, dir, { recursive: true });
  return dir;
}

export function editJson(file, change) {
  const doc = JSON.parse(fs.readFileSync(file, "utf8"));
  change(doc);
  fs.writeFileSync(file, JSON.stringify(doc, null, 2) + "\n");
}

export function codes(stdoutJson) {
  return JSON.parse(stdoutJson).findings.map((f) => f.code);
}

/** A loopback stand-in for the portal's routes (status, submit), with a login of the tool's
 * that names it: it answers what the test lines up (a proxy's 503 with Retry-After among them,
 * which the real app never sends), and keeps when each request came. The real app's answers
 * are tested by tests/agents/. */
export async function standIn(answers) {
  const http = await import("node:http");
  const seen = [];
  const server = http.createServer((req, res) => {
    seen.push({ at: Date.now(), url: req.url, authorization: req.headers.authorization });
    const next = answers.length > 1 ? answers.shift() : answers[0];
    const headers = { "content-type": "application/json", ...(next.headers || {}) };
    res.writeHead(next.status || 200, headers);
    res.end(JSON.stringify(next.body ?? {}));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${server.address().port}`;
  const home = tempDir();
  fs.writeFileSync(path.join(home, "plugin-token.json"), JSON.stringify({ server: url, token: "almagent_test", organization_id: 1, agent_id: 1, agent_name: "Claude", may_publish: false }));
  return { url, seen, env: { ALMANAC_PLUGIN_HOME: home }, close: () => new Promise((resolve) => server.close(resolve)) };
}
