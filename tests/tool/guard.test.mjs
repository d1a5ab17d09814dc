// The guard's limits and reads, each from a real fetcher that breaks it: memory outside the V8
// heap (Buffers), more than 64 MB of output, reads of fixtures the locked room does not have,
// and a plug-in folder reached through a link still reading its own files (tool 1.3.0).
import { test, before } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { tool, tempDir, copyPlugin, editJson, codes } from "./helpers.mjs";

let plugin;
let templateFetcher;
before(() => {
  const work = tempDir();
  const r = tool(["init", "guard-rates", "--timezone", "Europe/Berlin"], { cwd: work });
  assert.equal(r.code, 0, r.stderr);
  plugin = path.join(work, "guard-rates");
  templateFetcher = fs.readFileSync(path.join(plugin, "fetch.mjs"), "utf8");
});

const check = (dir) => {
  const r = tool(["check", dir, "--json"]);
  return { code: r.code, out: JSON.parse(r.stdout), stderr: r.stderr };
};
const finding = (out, code) => out.findings.find((f) => f.code === code);
const fetcher = (dir, source) => fs.writeFileSync(path.join(dir, "fetch.mjs"), source);

test("the guard stops a fetcher holding Buffers above limits.megabytes (outside the V8 heap)", () => {
  const dir = copyPlugin(plugin);
  editJson(path.join(dir, "plugin.json"), (m) => (m.limits = { megabytes: 16, seconds: 10 }));
  // 800 MB of 1 MB Buffers, every page written, then it waits: only the watch of the child's
  // resident memory stops it before the time limit.
  fetcher(dir, "const keep = [];\nfor (let i = 0; i < 800; i++) keep.push(Buffer.alloc(1 << 20, i % 251));\nsetInterval(() => keep.length, 1000);\n");
  const started = Date.now();
  const r = check(dir);
  assert.equal(r.code, 1);
  const killed = finding(r.out, "PLG-RUN-KILLED");
  assert.ok(killed, JSON.stringify(r.out.findings));
  assert.match(killed.message, /used more than 16 MB of memory/);
  assert.ok(Date.now() - started < 8000, "stopped by memory, not by the 10 s limit");
});

test("a short Buffer spike above the limit is seen at exit even when the fetcher then passes", () => {
  const dir = copyPlugin(plugin);
  editJson(path.join(dir, "plugin.json"), (m) => (m.limits = { megabytes: 16 }));
  fetcher(dir, "{\n  const spike = [];\n  for (let i = 0; i < 100; i++) spike.push(Buffer.alloc(1 << 20, 1));\n}\n" + templateFetcher);
  const r = check(dir);
  assert.equal(r.code, 1, JSON.stringify(r.out));
  assert.match(finding(r.out, "PLG-RUN-KILLED").message, /used more than 16 MB of memory/);
  // The same fetcher within the default 256 MB passes: the limit is the manifest's.
  editJson(path.join(dir, "plugin.json"), (m) => delete m.limits);
  assert.equal(check(dir).code, 0);
});

test("the guard stops a fetcher printing more than 64 MB and names the output limit", () => {
  const dir = copyPlugin(plugin);
  fetcher(dir, 'const line = "x".repeat((1 << 20) - 1) + "\\n";\nfor (let i = 0; i < 70; i++) process.stdout.write(line);\n');
  const r = check(dir);
  assert.equal(r.code, 1);
  const killed = finding(r.out, "PLG-RUN-KILLED");
  assert.ok(killed, JSON.stringify(r.out.findings));
  assert.match(killed.message, /more than 64 MB of output \(the output limit\)/);
});

test("fixtures are not in the locked room: a fetcher copying fixtures/records.jsonl is stopped", () => {
  const dir = copyPlugin(plugin);
  fs.rmSync(path.join(dir, "fixtures", "runs"), { recursive: true });
  fetcher(dir, 'import { readFileSync } from "node:fs";\nprocess.stdout.write(readFileSync(new URL("./fixtures/records.jsonl", import.meta.url)));\n');
  const r = check(dir);
  assert.equal(r.code, 1, "the output equals fixtures/records.jsonl, only the read is wrong");
  assert.deepEqual([...new Set(codes(JSON.stringify(r.out)))], ["PLG-RUN-READ-OUTSIDE"]);
  assert.match(finding(r.out, "PLG-RUN-READ-OUTSIDE").message, /fixtures\/records\.jsonl/);

  // README.md and the listing are not there either; a relative read is reported the same way.
  fetcher(dir, 'import { readFileSync } from "node:fs";\ntry { readFileSync("README.md"); } catch {}\nprocess.stdout.write(readFileSync("fixtures/records.jsonl"));\n');
  const again = check(dir);
  assert.equal(again.code, 1);
  assert.match(finding(again.out, "PLG-RUN-READ-OUTSIDE").message, /README\.md.*fixtures\/records\.jsonl/);
});

test("a fetcher writes and reads back its own temporary folder (os.tmpdir(), /tmp in the locked room)", () => {
  const dir = copyPlugin(plugin);
  fs.rmSync(path.join(dir, "fixtures", "runs"), { recursive: true });
  // The template fetcher, its records passing through a file in the temporary folder.
  fetcher(dir, templateFetcher.replace(/process\.stdout\.write\(([^;]*)\);/, (_, text) => `{ const { writeFileSync, readFileSync } = await import("node:fs"); const { tmpdir } = await import("node:os"); const kept = tmpdir() + "/out.jsonl"; writeFileSync(kept, ${text}); process.stdout.write(readFileSync(kept, "utf8")); }`));
  assert.match(fs.readFileSync(path.join(dir, "fetch.mjs"), "utf8"), /tmpdir\(\)/);
  const r = check(dir);
  assert.equal(r.code, 0, JSON.stringify(r.out.findings));
  // The same where the temporary folder is reached through a link (macOS's /var/folders is
  // one): the guard, kept there, is loaded by its real path.
  const real = tempDir();
  const link = path.join(tempDir(), "linked-tmp");
  fs.symlinkSync(real, link);
  const linked = tool(["check", dir, "--json"], { env: { TMPDIR: link } });
  assert.equal(linked.code, 0, linked.stdout + linked.stderr);
  // Anywhere else in /tmp is still outside.
  fetcher(dir, 'import { writeFileSync } from "node:fs";\nwriteFileSync("/tmp/almanac-guard-outside", "x");\n');
  const outside = check(dir);
  assert.equal(outside.code, 1);
  assert.equal(fs.existsSync("/tmp/almanac-guard-outside"), false);
});

test("a fetcher reads its own code files and folders, also through a linked plug-in folder (1.3.0)", () => {
  const dir = copyPlugin(plugin);
  fs.mkdirSync(path.join(dir, "data"));
  fs.writeFileSync(path.join(dir, "data", "names.json"), '{"rate": "Rate"}\n');
  const reads = 'import { readFileSync as readOwn, readdirSync } from "node:fs";\n' +
    'readOwn(new URL("./data/names.json", import.meta.url));\nreadOwn("data/names.json");\nreadOwn("plugin.json");\n' +
    'if (readdirSync("data").join() !== "names.json") throw new Error("data/ lists " + readdirSync("data"));\n';
  fetcher(dir, reads + templateFetcher);
  const direct = check(dir);
  assert.equal(direct.code, 0, JSON.stringify(direct.out.findings));
  const links = tempDir();
  fs.symlinkSync(dir, path.join(links, "guard-rates"));
  const linked = check(path.join(links, "guard-rates"));
  assert.equal(linked.code, 0, JSON.stringify(linked.out.findings));
  const inside = tool(["check", "--json"], { cwd: path.join(links, "guard-rates") });
  assert.equal(inside.code, 0, inside.stdout);
});
