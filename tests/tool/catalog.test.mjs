// The tool says the same words as the server: its embedded catalog equals problems.json.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import { CATALOG, problem, problemPages, findingJson } from "../../tool/almanac-plugin.mjs";

const canonical = JSON.parse(fs.readFileSync(new URL("../../src/almanac/platform/contract/problems.json", import.meta.url), "utf8"));

test("the embedded catalog equals src/almanac/platform/contract/problems.json (re-sync: node tests/tool/sync-catalog.mjs)", () => {
  const keys = ["code", "severity", "area", "title", "fix", "retired"];
  const pick = (p) => Object.fromEntries(keys.map((k) => [k, p[k]]));
  assert.equal(canonical.catalog, 1);
  assert.deepEqual(CATALOG.map(pick), canonical.problems.map(pick));
});

test("the embedded pages equal problem_pages.json, one for each code (the MCP server's resources; re-sync as above)", () => {
  const pages = JSON.parse(fs.readFileSync(new URL("../../src/almanac/platform/contract/problem_pages.json", import.meta.url), "utf8"));
  assert.deepEqual(problemPages(), pages.problems);
  assert.deepEqual(Object.keys(problemPages()).sort(), CATALOG.map((e) => e.code).sort());
});

test("every finding names a catalog code and carries its fix and docs link", () => {
  const f = findingJson(problem("PLG-FETCH-MISSING", "fetch.mjs is missing", { path: "fetch.mjs" }), "https://almanac.example");
  assert.deepEqual(Object.keys(f).sort(), ["code", "docs", "fix", "message", "path", "severity"]);
  assert.equal(f.docs, "https://almanac.example/docs/problems/PLG-FETCH-MISSING");
  assert.throws(() => problem("PLG-NOT-A-CODE", "x"));
});
