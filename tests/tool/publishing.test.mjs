// The publishing commands' offline parts: the server address rule, exit codes before any
// request (not logged in, not understood), retire always refused, the token folder's modes,
// and check --against (Versioning 3 and 4) with a folder or a pack. The commands against the
// live service are tested by tests/agents/test_tool_publishing.py.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { TOOL, tool, tempDir, copyPlugin, editJson } from "./helpers.mjs";

const { checkServer, readZip, updateRuleFindings } = await import(TOOL);
const EXAMPLE = new URL("../../examples/uk-bank-holidays", import.meta.url).pathname;

test("--server: https, or http only to this machine", () => {
  assert.equal(checkServer("https://almanac.example/"), "https://almanac.example");
  assert.equal(checkServer("http://127.0.0.1:8000"), "http://127.0.0.1:8000");
  assert.equal(checkServer("http://localhost:9/"), "http://localhost:9");
  assert.equal(checkServer("http://[::1]:8000"), "http://[::1]:8000");
  for (const bad of ["http://almanac.example", "http://10.1.2.3", "ftp://127.0.0.1", "https://u:p@almanac.example", "https://almanac.example/?x=1", "almanac.example"]) {
    assert.throws(() => checkServer(bad), /--server/, bad);
    assert.equal(tool(["login", "--server", bad], { env: { ALMANAC_PLUGIN_HOME: tempDir() } }).code, 2, bad);
  }
});

test("publishing commands exit 1 when not logged in, 2 when not understood; retire is always refused", () => {
  const home = tempDir();
  const env = { ALMANAC_PLUGIN_HOME: home };
  for (const c of ["logout", "upload", "status", "submit", "publish"]) {
    const r = tool([c, ...(c === "upload" ? [EXAMPLE] : []), "--json"], { env });
    assert.equal(r.code, 1, c);
    assert.deepEqual(Object.keys(JSON.parse(r.stdout)), ["ok", "error"], c);
    assert.equal(JSON.parse(r.stdout).error.kind, "not-logged-in", c);
    assert.match(r.stderr, /not logged in/, c);
    assert.equal(tool([c, "--nope"], { env }).code, 2, c);
  }
  assert.equal(tool(["review", "--json"], { env }).code, 2, "--file is required");
  assert.equal(tool(["review", "--file", path.join(home, "none.json")], { env }).code, 2);
  fs.writeFileSync(path.join(home, "list.json"), "[1]");
  assert.equal(tool(["review", "--file", path.join(home, "list.json")], { env }).code, 2);
  const retire = tool(["retire", "uk-bank-holidays", "--json"], { env });
  assert.equal(retire.code, 1);
  assert.equal(JSON.parse(retire.stdout).error.code, "AGENT_FORBIDDEN");
  assert.match(retire.stderr, /a person retires uk-bank-holidays in the portal/);
  assert.equal(tool(["unpublish", "Not An Id"], { env }).code, 2);
  assert.equal(tool(["status", "1", "2"], { env }).code, 2, "one argument at most");
  // Nothing was written while nothing was done.
  assert.deepEqual(fs.readdirSync(home), ["list.json"]);
});

test("check --against a folder or a pack: the version number and the update rules", () => {
  const published = copyPlugin(EXAMPLE, "uk-bank-holidays");
  const same = tool(["check", published, "--against", published, "--json"]);
  assert.equal(same.code, 0, same.stdout);
  const candidate = copyPlugin(EXAMPLE, "uk-bank-holidays");
  fs.appendFileSync(path.join(candidate, "fetch.mjs"), "// changed\n");
  const reused = JSON.parse(tool(["check", candidate, "--against", published, "--json"]).stdout);
  assert.deepEqual(reused.findings.map((f) => f.code), ["PLG-VERSION-REUSED"]);
  editJson(path.join(published, "plugin.json"), (m) => {
    m.version = "1.2.0";
  });
  const lower = tool(["check", candidate, "--against", published, "--json"]);
  assert.equal(lower.code, 1);
  assert.deepEqual(JSON.parse(lower.stdout).findings.map((f) => f.code), ["PLG-VERSION-NOT-GREATER"]);
  // A pack made by pack: its manifest and digest.
  const out = path.join(tempDir(), "published.zip");
  assert.equal(tool(["pack", published, "--out", out]).code, 0);
  const files = readZip(fs.readFileSync(out));
  assert.ok(files.has("uk-bank-holidays/plugin.json") && files.has("uk-bank-holidays/.pack.json"));
  editJson(path.join(candidate, "plugin.json"), (m) => {
    m.version = "1.3.0";
    m.timezone = "Europe/Dublin";
  });
  const update = tool(["check", candidate, "--against", out, "--json"]);
  assert.equal(update.code, 1);
  assert.deepEqual(JSON.parse(update.stdout).findings.map((f) => f.code), ["PLG-UPDATE-TIMEZONE"]);
  assert.equal(tool(["check", candidate, "--against", path.join(tempDir(), "none.zip")]).code, 2);
  const noPack = path.join(tempDir(), "bad.zip");
  fs.writeFileSync(noPack, "not a zip");
  assert.equal(tool(["check", candidate, "--against", noPack]).code, 2);
});

test("updateRuleFindings: another plug-in, an equal version with the same code", () => {
  const m = JSON.parse(fs.readFileSync(path.join(EXAMPLE, "plugin.json"), "utf8"));
  assert.deepEqual(updateRuleFindings(m, m, "sha256:a", "sha256:a"), []);
  assert.deepEqual(updateRuleFindings({ ...m, id: "other" }, m, "sha256:a", "sha256:a").map((p) => p.code), ["PLG-INVALID"]);
});
