// The MCP server (`mcp`) at the edges of the protocol, as a client's raw messages meet it: an
// unknown method, a line that is not JSON, a batch, a request before initialize, the revisions
// it agrees to, cancellation (the fetcher of a cancelled check is stopped), two requests in
// flight, and a standard output that carries protocol messages only. The whole publishing path
// through a real MCP client (the Python SDK) against the live app is
// tests/agents/test_mcp_journey.py.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { TOOL, NOW, tempDir, copyPlugin, editJson, standIn } from "./helpers.mjs";

const EXAMPLE = new URL("../../examples/uk-bank-holidays", import.meta.url).pathname;
const MODERN = "2026-07-28";
const META = { "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {} };

/** The server as a client starts it: every line it writes on stdout, kept as it came. */
function serve({ cwd = tempDir(), env = {} } = {}) {
  const child = spawn(process.execPath, [TOOL, "mcp"], { cwd, env: { PATH: process.env.PATH, ALMANAC_PLUGIN_NOW: NOW, ALMANAC_PLUGIN_HOME: tempDir(), ...env } });
  const lines = [];
  const waiting = new Map();
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => {
    stdout += d;
    let end;
    while ((end = stdout.indexOf("\n")) >= 0) {
      const line = stdout.slice(0, end);
      stdout = stdout.slice(end + 1);
      lines.push(line);
      const message = JSON.parse(line);
      waiting.get(message.id)?.(message);
    }
  });
  child.stderr.on("data", (d) => (stderr += d));
  const exited = new Promise((resolve) => child.on("close", (code) => resolve(code)));
  return {
    lines,
    stderr: () => stderr,
    write: (text) => child.stdin.write(text),
    notify: (method, params) => child.stdin.write(JSON.stringify({ jsonrpc: "2.0", method, params }) + "\n"),
    /** Send a request; resolves to its answer. */
    ask(id, method, params) {
      const answered = new Promise((resolve) => waiting.set(id, resolve));
      child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) }) + "\n");
      return answered;
    },
    /** The answer to a request already sent. */
    answerTo: (id) => new Promise((resolve) => waiting.set(id, resolve)),
    async close() {
      child.stdin.end();
      return exited;
    },
  };
}

test("an unknown method, a line that is not JSON, a batch and an invalid message are the protocol's errors; the server goes on", async () => {
  const s = serve();
  try {
    assert.deepEqual((await s.ask(1, "tools/frobnicate", { _meta: META })).error.code, -32601);
    s.write("{not json\n");
    s.write(JSON.stringify([{ jsonrpc: "2.0", id: 2, method: "tools/list", params: { _meta: META } }]) + "\n");
    s.write(JSON.stringify({ jsonrpc: "1.0", id: 3, method: "tools/list" }) + "\n");
    s.write(JSON.stringify({ jsonrpc: "2.0", id: null, method: "tools/list" }) + "\n");
    s.notify("notifications/frobnicated", {});
    const listed = await s.ask(4, "tools/list", { _meta: META });
    const errors = s.lines.slice(1, -1).map((l) => JSON.parse(l));
    assert.deepEqual(errors.map((m) => [m.id, m.error.code]), [[null, -32700], [null, -32600], [3, -32600], [null, -32600]]);
    assert.equal(listed.result.tools.length, 18, "and the server still answers");
    // A tool it does not have, and arguments that are not an object: errors of the protocol.
    assert.equal((await s.ask(5, "tools/call", { _meta: META, name: "frobnicate", arguments: {} })).error.code, -32602);
    assert.equal((await s.ask(6, "tools/call", { _meta: META, name: "check", arguments: [] })).error.code, -32602);
    assert.equal((await s.ask(7, "resources/read", { _meta: META, uri: "almanac://nothing" })).error.code, -32602);
  } finally {
    assert.equal(await s.close(), 0);
  }
});

test("a request before initialize (and with no revision in _meta) is refused; initialize agrees a revision it serves", async () => {
  const s = serve();
  try {
    const early = await s.ask(1, "tools/list", {});
    assert.equal(early.error.code, -32602);
    assert.match(early.error.message, /initialize/);
    assert.deepEqual((await s.ask(2, "ping")).result, {}, "ping is answered before initialize");
    // A revision it has not: the newest it serves by initialize (never 2026-07-28, which has none).
    for (const [asked, agreed] of [["1999-01-01", "2025-11-25"], [MODERN, "2025-11-25"], ["2025-03-26", "2025-03-26"], ["2025-06-18", "2025-06-18"]]) {
      const init = await s.ask(`init ${asked}`, "initialize", { protocolVersion: asked, capabilities: {}, clientInfo: { name: "test", version: "1" } });
      assert.equal(init.result.protocolVersion, agreed, asked);
      assert.equal(init.result.serverInfo.name, "almanac-plugin");
      assert.deepEqual(Object.keys(init.result.capabilities).sort(), ["resources", "tools"]);
    }
    s.notify("notifications/initialized");
    // Agreed 2025-06-18: structured output, and none of 2026-07-28's result fields.
    const tools = (await s.ask(3, "tools/list", {})).result;
    assert.equal(tools.resultType, undefined);
    assert.ok(tools.tools.every((t) => t.outputSchema && t.inputSchema.type === "object"));
    const called = (await s.ask(4, "tools/call", { name: "digest", arguments: { folder: EXAMPLE } })).result;
    assert.equal(called.structuredContent.ok, true);
    assert.deepEqual(JSON.parse(called.content[0].text), called.structuredContent);
  } finally {
    await s.close();
  }
  // 2025-03-26 has no structured output: the text only.
  const old = serve();
  try {
    await old.ask(1, "initialize", { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "test", version: "1" } });
    assert.ok((await old.ask(2, "tools/list", {})).result.tools.every((t) => t.outputSchema === undefined));
    const called = (await old.ask(3, "tools/call", { name: "digest", arguments: { folder: EXAMPLE } })).result;
    assert.equal(called.structuredContent, undefined);
    assert.equal(JSON.parse(called.content[0].text).ok, true);
  } finally {
    await old.close();
  }
});

test("2026-07-28: each request names its revision in _meta; an unknown one is told the revisions served", async () => {
  const s = serve();
  try {
    const discovered = (await s.ask(1, "server/discover", { _meta: META })).result;
    assert.deepEqual(discovered.supportedVersions, [MODERN, "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]);
    assert.equal(discovered.resultType, "complete");
    assert.equal(discovered._meta["io.modelcontextprotocol/serverInfo"].name, "almanac-plugin");
    assert.ok(discovered.ttlMs >= 0 && discovered.cacheScope === "public");
    const unknown = await s.ask(2, "tools/list", { _meta: { ...META, "io.modelcontextprotocol/protocolVersion": "2030-01-01" } });
    assert.equal(unknown.error.code, -32022);
    assert.deepEqual(unknown.error.data, { supported: discovered.supportedVersions, requested: "2030-01-01" });
    const noCapabilities = await s.ask(3, "tools/list", { _meta: { "io.modelcontextprotocol/protocolVersion": MODERN } });
    assert.equal(noCapabilities.error.code, -32602);
    assert.equal((await s.ask(4, "ping", { _meta: META })).error.code, -32601, "2026-07-28 has no ping");
    const read = (await s.ask(5, "resources/read", { _meta: META, uri: "almanac://problems/PLG-RUN-FAILED" })).result;
    assert.match(read.contents[0].text, /^# PLG-RUN-FAILED: The fetcher exited non-zero\n[\s\S]*## The rule[\s\S]*## Fails: [\s\S]*## Fix\n/);
  } finally {
    await s.close();
  }
});

test("a cancelled call is not answered and its fetcher is stopped; two calls in flight are answered as each ends", async () => {
  // A fetcher that never ends: check runs it until its 120 s limit, or until cancelled.
  const work = tempDir();
  const hanging = copyPlugin(EXAMPLE, "uk-bank-holidays");
  fs.writeFileSync(path.join(hanging, "fetch.mjs"), "setInterval(() => {}, 1000);\n");
  editJson(path.join(hanging, "plugin.json"), (m) => {
    m.limits = { ...(m.limits || {}), seconds: 120 };
  });
  const s = serve({ cwd: work });
  try {
    const cancelled = s.answerTo(1);
    s.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { _meta: META, name: "check", arguments: { folder: hanging } } }) + "\n");
    // A second call in flight meanwhile is answered while the first is still running.
    const digest = await s.ask(2, "tools/call", { _meta: META, name: "digest", arguments: { folder: EXAMPLE } });
    assert.equal(digest.result.structuredContent.ok, true);
    s.notify("notifications/cancelled", { requestId: 1, reason: "the agent moved on" });
    assert.equal((await s.ask(3, "tools/list", { _meta: META })).result.tools.length, 18);
    const began = Date.now();
    assert.equal(await s.close(), 0);
    // The server ends once its calls have: the cancelled check's fetcher was stopped, not
    // left to its 120 s.
    assert.ok(Date.now() - began < 20000, `${Date.now() - began} ms`);
    assert.ok(!s.lines.some((l) => JSON.parse(l).id === 1), "the cancelled call is never answered");
    assert.equal(await Promise.race([cancelled, "unanswered"]), "unanswered");
  } finally {
    await s.close();
  }
});

test("status with wait in flight beside other requests; a refusal is a result with isError, its code, fix, docs and next", async () => {
  const checking = { body: { id: 7, organization_id: 1, plugin_id: "uk-bank-holidays", version: "1.0.0", state: "checking", checks: [{ name: "room", status: "running", findings: [] }], warnings: [], checks_final: false, checks_passed: false, decision: null } };
  const stand = await standIn([checking]);
  const s = serve({ env: stand.env });
  try {
    const waiting = s.ask(1, "tools/call", { _meta: META, name: "status", arguments: { version: 7, wait: true, timeout: 2 } });
    const listed = await s.ask(2, "resources/list", { _meta: META });
    assert.ok(listed.result.resources.some((r) => r.uri === "almanac://guide/agents"));
    const status = (await waiting).result;
    assert.ok(s.lines.findIndex((l) => JSON.parse(l).id === 2) < s.lines.findIndex((l) => JSON.parse(l).id === 1), "answered as each ended");
    assert.equal(status.isError, undefined, "checks still being made is an answer, not a refusal");
    assert.deepEqual([status.structuredContent.ok, status.structuredContent.checks], [false, "checking"]);
    assert.ok(stand.seen.length >= 2, "it asked again while waiting");
    const retire = (await s.ask(3, "tools/call", { _meta: META, name: "retire", arguments: { plugin: "uk-bank-holidays" } })).result;
    assert.equal(retire.isError, true);
    const { code, fix, docs, next } = retire.structuredContent.error;
    assert.equal(code, "AGENT_FORBIDDEN");
    assert.ok(fix && next && docs.endsWith("/docs/problems/AGENT_FORBIDDEN"));
    const badArgument = (await s.ask(4, "tools/call", { _meta: META, name: "status", arguments: { wait: "yes" } })).result;
    assert.equal(badArgument.isError, true);
    assert.equal(badArgument.structuredContent.error.code, "REQUEST-INVALID");
    const login = (await s.ask(5, "tools/call", { _meta: META, name: "login", arguments: { server: stand.url } })).result;
    assert.equal(login.isError, undefined, "logged in (the stand-in's login): it says as whom");
    assert.match(login.structuredContent.command, new RegExp(`^node \\S+almanac-plugin\\.mjs login --server ${stand.url} --name Claude$`));
  } finally {
    await s.close();
    await stand.close();
  }
});

test("standard output carries protocol messages only; the tool's words and logs go to standard error", async () => {
  const broken = copyPlugin(EXAMPLE, "uk-bank-holidays");
  fs.writeFileSync(path.join(broken, "fetch.mjs"), "console.log('not a record'); console.error('a fetcher speaks'); process.exit(3);\n");
  const s = serve();
  try {
    const init = await s.ask(1, "initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "test", version: "1" } });
    assert.equal(init.result.protocolVersion, "2025-11-25");
    s.notify("notifications/initialized");
    // A broken plug-in: the findings are the answer, not an error of the protocol.
    const checked = (await s.ask(2, "tools/call", { name: "check", arguments: { folder: broken } })).result;
    assert.equal(checked.isError, undefined);
    assert.equal(checked.structuredContent.ok, false);
    assert.deepEqual(checked.structuredContent.findings.map((f) => f.code), ["PLG-RUN-FAILED"]);
    // Commands that say more than their object: pack refused, upload not logged in, init.
    assert.equal((await s.ask(3, "tools/call", { name: "pack", arguments: { folder: broken } })).result.structuredContent.error.code, "PLG-RUN-FAILED");
    assert.equal((await s.ask(4, "tools/call", { name: "upload", arguments: { folder: broken } })).result.structuredContent.error.code, "AUTH-REQUIRED");
    const made = (await s.ask(5, "tools/call", { name: "init", arguments: { id: "fresh-rates", timezone: "UTC" } })).result.structuredContent;
    assert.equal(made.ok, true);
    assert.ok(made.files.includes("AGENTS.md"));
  } finally {
    await s.close();
  }
  for (const line of s.lines) {
    const message = JSON.parse(line);
    assert.equal(message.jsonrpc, "2.0");
    assert.ok("result" in message || "error" in message, line);
  }
  assert.equal(s.lines.length, 5);
  assert.match(s.stderr(), /almanac-plugin: PLG-RUN-FAILED: pack: refused/);
  assert.match(s.stderr(), /almanac-plugin mcp: check: answered/);
});

test("publish takes a shadow period, and promote, stop and rollback are tools; an agent without publishing is refused each with AGENT_MAY_NOT_PUBLISH and its next", async () => {
  const refusal = { status: 403, body: { type: "", title: "The agent may not publish", status: 403, detail: "this agent was approved without publishing", code: "AGENT_MAY_NOT_PUBLISH" } };
  const stand = await standIn([refusal]);
  const s = serve({ env: stand.env });
  try {
    const listed = (await s.ask(1, "tools/list", { _meta: META })).result.tools;
    const byName = new Map(listed.map((t) => [t.name, t]));
    assert.deepEqual(byName.get("publish").inputSchema.properties.shadow, { type: "integer", minimum: 0, maximum: 5, description: byName.get("publish").inputSchema.properties.shadow.description });
    for (const name of ["promote", "stop", "rollback"]) assert.deepEqual(byName.get(name).inputSchema.required, ["reason"], name);
    const tooLong = (await s.ask(2, "tools/call", { _meta: META, name: "publish", arguments: { version: 7, shadow: 6 } })).result;
    assert.equal(tooLong.structuredContent.error.code, "REQUEST-INVALID");
    const noReason = (await s.ask(3, "tools/call", { _meta: META, name: "stop", arguments: { plugin: "uk-bank-holidays" } })).result;
    assert.equal(noReason.structuredContent.error.code, "REQUEST-INVALID");
    assert.equal(stand.seen.length, 0, "a call the schema refuses sends nothing");
    const calls = [
      ["publish", { version: 7, shadow: 2 }, "/uploads/7/publish"],
      ["promote", { plugin: "uk-bank-holidays", reason: "the diff is right" }, "/plugins/uk-bank-holidays/rollout/promote"],
      ["stop", { plugin: "uk-bank-holidays", reason: "not now" }, "/plugins/uk-bank-holidays/rollout/stop"],
      ["rollback", { plugin: "uk-bank-holidays", reason: "readers confused" }, "/plugins/uk-bank-holidays/rollout/roll-back"],
    ];
    for (const [n, [name, args, path]] of calls.entries()) {
      const called = (await s.ask(10 + n, "tools/call", { _meta: META, name, arguments: args })).result;
      assert.equal(called.isError, true, name);
      const { code, next } = called.structuredContent.error;
      assert.equal(code, "AGENT_MAY_NOT_PUBLISH", name);
      assert.match(next, /an owner or admin does it in the portal/, name);
      assert.match(next, new RegExp(`login --server ${stand.url}\\), then node \\S+almanac-plugin\\.mjs ${name} `), name);
      assert.ok(stand.seen.at(-1).url.endsWith(path), `${name}: ${stand.seen.at(-1).url}`);
    }
  } finally {
    await s.close();
    await stand.close();
  }
});
