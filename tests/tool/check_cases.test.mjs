// check starts the run cases beside the fixture runs, from the records fixtures/records.jsonl
// holds; the cases must still see what the fixture run printed when that file disagrees.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { tool, tempDir } from "./helpers.mjs";

const made = () => {
  const work = tempDir();
  const r = tool(["init", "cases-rates", "--timezone", "UTC"], { cwd: work });
  assert.equal(r.code, 0, r.stderr);
  return path.join(work, "cases-rates");
};

test("a plug-in in UTC made by init passes check with both run cases", () => {
  const r = tool(["check", made(), "--json"]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const out = JSON.parse(r.stdout);
  assert.deepEqual(out.findings, []);
  assert.match(out.summary, /, 2 of 2 run cases passed$/);
});

test("run cases see the fixture run's records, not a fixtures/records.jsonl that differs", () => {
  const dir = made();
  const file = path.join(dir, "fixtures/records.jsonl");
  const lines = fs.readFileSync(file, "utf8").split("\n").filter((l) => l !== "");
  // Without its newest record the file would make the next-day case start a day early and
  // print a record more than its own records.jsonl.
  fs.writeFileSync(file, lines.slice(0, -1).join("\n") + "\n");
  const r = tool(["check", dir, "--json"]);
  assert.equal(r.code, 1, r.stdout + r.stderr);
  const out = JSON.parse(r.stdout);
  assert.deepEqual(out.findings.map((f) => f.code), ["PLG-FIXTURE-MISMATCH"]);
  assert.equal(out.findings[0].line, lines.length);
  assert.match(out.summary, /, 2 of 2 run cases passed$/);
});
