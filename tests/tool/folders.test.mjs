// Runs every shared folder case in ../conformance/folders/ with the tool as a developer runs
// it: `check <folder> --json` on a copy named as the case's `folder` (without expected.json),
// the set of (code, path) of its findings compared with `expect` (DECISIONS section 3). The
// pytest suite runs the same cases against the Python folder checks
// (tests/contract/test_conformance_folders.py).
import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { tool, tempDir } from "./helpers.mjs";

const FOLDERS = new URL("../conformance/folders/", import.meta.url).pathname;
const EXPECTED = "expected.json";
const cases = fs
  .readdirSync(FOLDERS, { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name)
  .sort();
const asSet = (pairs) => [...new Set(pairs.map((p) => JSON.stringify(p)))].sort();

test("there are folder cases, one for each folder rule and one that passes", () => {
  assert.ok(cases.length >= 6);
  const specs = cases.map((name) => JSON.parse(fs.readFileSync(path.join(FOLDERS, name, EXPECTED), "utf8")));
  const codes = new Set(specs.flatMap((s) => s.expect.map((e) => e.code)));
  for (const code of ["PLG-FOLDER-ID", "PLG-FETCH-MISSING", "PLG-FIXTURE-SOURCE-MISSING", "PLG-FIXTURE-RECORDS-MISSING", "PLG-FIXTURE-CONTEXT-INVALID"]) assert.ok(codes.has(code), code);
  assert.ok(specs.some((s) => s.expect.length === 0), "a case that passes");
});

for (const name of cases) {
  test(`folder case ${name}`, () => {
    const source = path.join(FOLDERS, name);
    const c = JSON.parse(fs.readFileSync(path.join(source, EXPECTED), "utf8"));
    const dir = path.join(tempDir("almanac-folder-case-"), c.folder);
    try {
      fs.cpSync(source, dir, { recursive: true, filter: (from) => from !== path.join(source, EXPECTED) });
      const r = tool(["check", dir, "--json"]);
      const out = JSON.parse(r.stdout);
      assert.deepEqual(asSet(out.findings.map((f) => [f.code, f.path ?? null])), asSet(c.expect.map((e) => [e.code, e.path ?? null])), `${c.description}\n${r.stderr}`);
      assert.equal(r.code, out.findings.some((f) => f.severity === "error") ? 1 : 0, r.stderr);
      assert.equal(out.ok, r.code === 0);
    } finally {
      fs.rmSync(path.dirname(dir), { recursive: true, force: true });
    }
  });
}
