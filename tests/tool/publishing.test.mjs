// The publishing commands' offline parts: the server address rule, exit codes before any
// request (not logged in, not understood), retire always refused, the token folder's modes,
// and check --against (Versioning 3 and 4) with a folder or a pack. The commands against the
// live service are tested by tests/agents/test_tool_publishing.py.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { TOOL, tool, toolAsync, tempDir, copyPlugin, editJson, standIn } from "./helpers.mjs";

const { checkServer, readZip, retryAfterMs, updateRuleFindings } = await import(TOOL);
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

function upload(state, statuses) {
  const checks = statuses.map((status, i) => ({ name: `check${i}`, status, findings: status === "failed" ? [{ code: "PLG-CHECK-DEADLINE", severity: "error", message: "the check was still queued at its deadline", fix: "Re-run the checks.", docs: "http://127.0.0.1/docs/problems/PLG-CHECK-DEADLINE" }] : [] }));
  const final = statuses.every((s) => s === "passed" || s === "failed");
  return { id: 7, organization_id: 1, plugin_id: "uk-bank-holidays", version: "1.0.0", state, checks, warnings: [], checks_final: final, checks_passed: statuses.every((s) => s === "passed"), agent_name: "Claude", decision: null };
}

const CHECKING = { body: upload("checking", ["passed", "running"]) };
const FAILED = { body: upload("checked", ["passed", "failed"]) };
const PASSED = { body: upload("checked", ["passed", "passed"]) };

test("status exits by the version's checks: 0 passed, 1 failed (ok false), 3 still being made", async () => {
  for (const [answerWith, code, checks] of [[PASSED, 0, "passed"], [FAILED, 1, "failed"], [CHECKING, 3, "checking"]]) {
    const stand = await standIn([answerWith]);
    try {
      const r = await toolAsync(["status", "7", "--json"], { env: stand.env });
      assert.equal(r.code, code, r.stderr);
      const got = JSON.parse(r.stdout);
      assert.equal(got.ok, code === 0);
      assert.equal(got.checks, checks);
      assert.equal(got.decision, null);
      assert.equal(got.upload.id, 7);
      assert.match(got.next, checks === "checking" ? /status 7 --wait/ : checks === "failed" ? /fix what the failed checks name/ : /submit 7/);
      // Without --wait, one request: the answer is where the checks stand now.
      assert.equal(stand.seen.length, 1);
      assert.equal(stand.seen[0].url, "/api/v1/portal/organizations/1/uploads/7");
      const text = await toolAsync(["status", "7"], { env: stand.env });
      assert.equal(text.code, code);
      assert.match(text.stdout, { passed: /^checks passed$/m, failed: /^checks failed$/m, checking: /^checks still being made$/m }[checks]);
      assert.match(text.stdout, /^next: /m);
      if (code !== 0) assert.match(text.stderr, new RegExp(`exit ${code}`));
    } finally {
      await stand.close();
    }
  }
});

test("status --wait backs off and honours the Retry-After the service sends, then exits by the checks", async () => {
  const stand = await standIn([CHECKING, { ...CHECKING, headers: { "retry-after": "3" } }, { status: 503, body: { title: "busy" }, headers: { "retry-after": "1" } }, FAILED]);
  try {
    const r = await toolAsync(["status", "7", "--wait", "--json"], { env: stand.env });
    assert.equal(r.code, 1, r.stderr);
    assert.equal(JSON.parse(r.stdout).checks, "failed");
    assert.equal(JSON.parse(r.stdout).ok, false);
    const gaps = stand.seen.slice(1).map((s, i) => s.at - stand.seen[i].at);
    assert.equal(gaps.length, 3);
    assert.ok(gaps[0] >= 950 && gaps[0] < 1900, `the first wait is 1 s: ${gaps}`);
    assert.ok(gaps[1] >= 2950, `Retry-After: 3 is honoured over the back-off's 2 s: ${gaps}`);
    assert.ok(gaps[2] >= 950 && gaps[2] < 3000, `a 503 with Retry-After: 1 is asked again after 1 s, not the back-off's 4 s: ${gaps}`);
    assert.ok(stand.seen.every((s) => s.authorization === "Bearer almagent_test"));
  } finally {
    await stand.close();
  }
});

test("status --wait --timeout stops with exit 3 while the checks are still being made", async () => {
  const stand = await standIn([CHECKING]);
  try {
    const began = Date.now();
    const r = await toolAsync(["status", "7", "--wait", "--timeout", "2.5"], { env: stand.env });
    assert.equal(r.code, 3, r.stderr);
    assert.ok(Date.now() - began < 6000);
    assert.match(r.stdout, /^checks still being made after 2\.5 s$/m);
    assert.match(r.stdout, /^next: wait for the checks: .* status 7 --wait$/m);
    // Waits of 1 s then 2 s (cut to what is left): three requests in 2.5 s.
    assert.equal(stand.seen.length, 3);
  } finally {
    await stand.close();
  }
  const env = { ALMANAC_PLUGIN_HOME: tempDir() };
  assert.equal(tool(["status", "7", "--timeout", "5"], { env }).code, 2, "--timeout goes with --wait");
  for (const bad of ["0", "-1", "soon", "1e3"]) assert.equal(tool(["status", "7", "--wait", `--timeout=${bad}`], { env }).code, 2, bad);
});

test("retryAfterMs reads seconds and an HTTP date", () => {
  assert.equal(retryAfterMs("3"), 3000);
  assert.equal(retryAfterMs(null), null);
  assert.equal(retryAfterMs("soon"), null);
  const now = Date.parse("2026-11-02T12:00:00Z");
  assert.equal(retryAfterMs("Mon, 02 Nov 2026 12:00:05 GMT", now), 5000);
  assert.equal(retryAfterMs("Mon, 02 Nov 2026 11:00:00 GMT", now), 0);
});

test("an update warning is printed once, its path not twice", () => {
  const published = copyPlugin(EXAMPLE, "uk-bank-holidays");
  const candidate = copyPlugin(EXAMPLE, "uk-bank-holidays");
  editJson(path.join(candidate, "plugin.json"), (m) => {
    m.version = "1.1.0";
    m.series.pop();
  });
  const r = tool(["check", candidate, "--against", published]);
  const lines = r.stderr.split("\n").filter((l) => l.includes("PLG-UPDATE-SERIES-REMOVED") && !l.includes("docs:"));
  assert.deepEqual(lines, ["warning PLG-UPDATE-SERIES-REMOVED (plugin.json): series: the update removes series northern-ireland (its records are kept)"]);
});

test("every --json refusal carries its code, message, fix, docs link and next: the command that moves things on", async () => {
  const env = { ALMANAC_PLUGIN_HOME: tempDir() };
  const refusal = (r) => {
    const { ok, error } = JSON.parse(r.stdout);
    assert.equal(ok, false);
    for (const key of ["kind", "code", "message", "fix", "docs", "next"]) assert.ok(typeof error[key] === "string" && error[key], `${key} in ${r.stdout}`);
    return error;
  };
  // Not logged in: the login command, then the command again.
  for (const words of [["upload", EXAMPLE], ["status"], ["review", "--file", path.join(EXAMPLE, "review.json")], ["submit", "7"], ["publish"], ["unpublish", "uk-bank-holidays"], ["relist", EXAMPLE], ["logout"]]) {
    const error = refusal(tool([...words, "--json"], { env }));
    assert.equal(error.code, "AUTH-REQUIRED", words[0]);
    assert.match(error.next, new RegExp(`login --server .* then node .*almanac-plugin\\.mjs ${words[0]}`), words[0]);
  }
  // Not understood, even the option: exit 2, and the command's help next.
  const usage = tool(["status", "--frobnicate", "--json"], { env });
  assert.equal(usage.code, 2);
  assert.deepEqual([refusal(usage).code, refusal(usage).next.replace(/^node \S+ /, "")], ["REQUEST-INVALID", "help status"]);
  assert.match(refusal(tool(["check", "/no/such/folder", "--json"])).message, /not a folder/);
  assert.equal(refusal(tool(["retire", "uk-bank-holidays", "--json"], { env })).code, "AGENT_FORBIDDEN");
  // The service unreachable: the same command again, once it answers.
  const closed = await standIn([PASSED]);
  await closed.close();
  const unreachable = refusal(await toolAsync(["status", "7", "--json"], { env: closed.env }));
  assert.equal(unreachable.code, "TOOL-SERVICE-UNREACHABLE");
  assert.match(unreachable.next, /status 7 --json, once http:\/\/127\.0\.0\.1:\d+ answers/);
  // A refusal of the service: its docs link, and the tool's command for a finding it has one for.
  const stand = await standIn([{ status: 409, body: { type: "", title: "The version may not be submitted yet", status: 409, detail: "not yet", code: "SUBMIT-REFUSED", findings: [{ code: "SUBMIT-ATTESTATION-MISSING", severity: "error", message: "may-publish-the-data is not attested" }, { code: "AGREEMENT-NOT-ACCEPTED", severity: "error", message: "the agreement is not accepted" }] } }]);
  try {
    const error = refusal(await toolAsync(["submit", "7", "--json"], { env: stand.env }));
    assert.equal(error.code, "SUBMIT-REFUSED");
    assert.equal(error.docs, `${stand.url}/docs/problems/SUBMIT-REFUSED`);
    assert.match(error.next, /review 7 --file review\.json --attest/);
    assert.equal(error.findings.length, 2);
  } finally {
    await stand.close();
  }
});
