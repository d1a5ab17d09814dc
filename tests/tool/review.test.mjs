// The tool's `check` judges review.json as the server does: its shape (PLG-REVIEW-INVALID) and
// its example days in what the fixtures produce (PLG-REVIEW-EXAMPLE); before, any JSON passed.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { tool, copyPlugin, editJson, codes } from "./helpers.mjs";

const UK = new URL("../../examples/uk-bank-holidays", import.meta.url).pathname;

test("check passes the example's review.json", () => {
  const r = tool(["check", UK, "--json"]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(codes(r.stdout).filter((c) => c.startsWith("PLG-REVIEW-")), []);
});

test("check refuses a wrong example day with PLG-REVIEW-EXAMPLE", () => {
  const dir = copyPlugin(UK);
  editJson(path.join(dir, "review.json"), (doc) => {
    doc.examples[1].expect.title = "Boxing Day";
  });
  const r = tool(["check", dir, "--json"]);
  assert.notEqual(r.code, 0);
  assert.deepEqual(codes(r.stdout), ["PLG-REVIEW-EXAMPLE"]);
  const found = JSON.parse(r.stdout).findings.find((f) => f.code === "PLG-REVIEW-EXAMPLE");
  assert.equal(found.path, "examples[1]");
  assert.match(found.message, /Christmas Day \(substitute day\)/);
});

test("check refuses review.json of another shape with PLG-REVIEW-INVALID", () => {
  const dir = copyPlugin(UK);
  fs.writeFileSync(path.join(dir, "review.json"), JSON.stringify({ examples: "five days", reviewer: "me" }));
  const r = tool(["check", dir, "--json"]);
  assert.notEqual(r.code, 0);
  assert.deepEqual(codes(r.stdout).sort(), ["PLG-REVIEW-INVALID", "PLG-REVIEW-INVALID"]);
  fs.writeFileSync(path.join(dir, "review.json"), "{not json");
  assert.deepEqual(codes(tool(["check", dir, "--json"]).stdout), ["PLG-REVIEW-INVALID"]);
});
