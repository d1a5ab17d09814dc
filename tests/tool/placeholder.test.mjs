import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

test("the canonical catalog parses", () => {
  const catalog = JSON.parse(readFileSync(new URL("../../src/almanac/platform/contract/problems.json", import.meta.url)));
  assert.equal(catalog.catalog, 1);
});
