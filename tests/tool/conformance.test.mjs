// Runs every shared case in tests/conformance/ (manifests, records, digests, contexts,
// listings, updates; days and folders in their own test files) against the tool's own
// implementation (DECISIONS section 3). A folder of cases no node test runs fails the suite.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as tool from "../../tool/almanac-plugin.mjs";

const CONFORMANCE = new URL("../conformance/", import.meta.url).pathname;
const cases = (folder) => {
  const dir = path.join(CONFORMANCE, folder);
  return fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith(".json")).sort().map((f) => [f.slice(0, -5), JSON.parse(fs.readFileSync(path.join(dir, f), "utf8"))]) : [];
};
const RUN_HERE = ["manifests", "records", "digests", "contexts", "listings", "updates", "reviews"];
const RUN_ELSEWHERE = { days: "days.test.mjs", folders: "folders.test.mjs" };
test("every folder of tests/conformance/ is run by the node suite", () => {
  const folders = fs.readdirSync(CONFORMANCE, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name).sort();
  const run = [...RUN_HERE, ...Object.keys(RUN_ELSEWHERE)].sort();
  assert.deepEqual(folders.filter((f) => !run.includes(f)), [], "conformance folders no node test runs");
  for (const [folder, file] of Object.entries(RUN_ELSEWHERE)) assert.ok(fs.readFileSync(new URL(file, import.meta.url), "utf8").includes(`../conformance/${folder}/`), `${file} runs ${folder}`);
});
const asSet = (pairs) => [...new Set(pairs.map((p) => JSON.stringify(p)))].sort();

for (const [name, c] of cases("manifests")) {
  test(`manifest case ${name}`, () => {
    const problems = "raw" in c ? tool.readManifestText(c.raw, { folder: c.folder ?? null }).problems : tool.validateManifest(c.manifest, { folder: c.folder ?? null });
    assert.deepEqual(asSet(problems.map((p) => [p.code, p.path ?? null])), asSet(c.expect.map((e) => [e.code, e.path ?? null])), c.description);
  });
}

for (const [name, c] of cases("records")) {
  test(`records case ${name}`, () => {
    assert.deepEqual(tool.validateManifest(c.manifest), [], "the case's manifest passes");
    let lines = c.lines;
    if (c.repeat) lines = lines.concat(Array(c.repeat.times).fill(c.repeat.line));
    const { problems } = tool.validateRecords(c.manifest, lines, c.today);
    assert.deepEqual(asSet(problems.map((p) => [p.code, p.line ?? null])), asSet(c.expect.map((e) => [e.code, e.line ?? null])), c.description);
  });
}

for (const [name, c] of cases("digests")) {
  test(`digest case ${name}`, () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "almanac-digest-"));
    try {
      for (const [rel, content] of Object.entries(c.files)) {
        fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
        fs.writeFileSync(path.join(root, rel), typeof content === "string" ? Buffer.from(content, "utf8") : Buffer.from(content.base64, "base64"));
      }
      for (const [rel, target] of Object.entries(c.symlinks || {})) {
        fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
        fs.symlinkSync(target, path.join(root, rel));
      }
      const d = tool.computeDigest(root);
      if (c.expect.codes) assert.deepEqual(asSet(d.problems.map((p) => [p.code, p.path ?? null])), asSet(c.expect.codes.map((e) => [e.code, e.path ?? null])), c.description);
      else {
        assert.deepEqual(d.problems, [], c.description);
        assert.equal(d.digest, c.expect.digest, c.description);
        assert.deepEqual(d.files, c.expect.files, c.description);
      }
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
}

for (const [name, c] of cases("contexts")) {
  test(`context case ${name}`, () => {
    const manifest = c.manifest;
    assert.deepEqual(tool.validateManifest(manifest), []);
    if (c.build) {
      const ctx = tool.buildContext(manifest, { now: tool.parseInstant(c.build.now), state: c.build.series, backfill: c.build.backfill });
      assert.deepEqual(ctx, c.expect.context, c.description);
      assert.deepEqual(tool.checkRunContext(ctx, manifest), []);
      return;
    }
    const problems = c.context !== undefined ? tool.checkRunContext(c.context, manifest) : tool.checkFixtureContext(c.fixture, manifest);
    assert.deepEqual(asSet(problems.map((p) => [p.code, p.path ?? null])), asSet(c.expect.codes.map((e) => [e.code, e.path ?? null])), c.description);
  });
}

function generatedPng(width, height, padding = 0) {
  const zlib = process.getBuiltinModule("node:zlib");
  const chunk = (kind, body) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(body.length);
    const kb = Buffer.from(kind, "latin1");
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(Buffer.concat([kb, body])) >>> 0);
    return Buffer.concat([len, kb, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8;
  header[9] = 2;
  const row = Buffer.concat([Buffer.from([0]), Buffer.from("2060a0".repeat(width), "hex")]);
  const rows = Buffer.concat(Array(height).fill(row));
  const parts = [Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk("IHDR", header)];
  if (padding) parts.push(chunk("tEXt", Buffer.concat([Buffer.from("Comment\0", "latin1"), Buffer.alloc(padding, "a")])));
  parts.push(chunk("IDAT", zlib.deflateSync(rows)), chunk("IEND", Buffer.alloc(0)));
  return Buffer.concat(parts);
}

for (const [name, c] of cases("listings")) {
  test(`listing case ${name}`, () => {
    assert.deepEqual(tool.validateManifest(c.manifest), []);
    const icon = c.icon === null ? null : c.icon.base64 !== undefined ? Buffer.from(c.icon.base64, "base64") : generatedPng(c.icon.png.width, c.icon.png.height, c.icon.png.padding || 0);
    const problems = tool.validateListing("raw" in c ? c.raw : c.listing, c.manifest, { icon, fixtureDates: new Set(c.fixtureDates), verifiedDomain: c.verifiedDomain ?? null });
    assert.deepEqual(asSet(problems.map((p) => [p.code, p.path ?? null])), asSet(c.expect.map((e) => [e.code, e.path ?? null])), c.description);
    // An expectation with a message holds the tool to the server's words.
    for (const e of c.expect.filter((x) => "message" in x)) {
      const said = problems.filter((p) => p.code === e.code && (p.path ?? null) === e.path).map((p) => p.message);
      assert.ok(said.includes(e.message), `${e.message} not in ${JSON.stringify(said)}`);
    }
  });
}

// Versioning rule 4: each case compares a candidate manifest with the published one, as
// tests/contract/test_conformance_updates.py does with compare_manifests.
const updateCases = cases("updates");
test("there are update cases", () => assert.ok(updateCases.length >= 10, `only ${updateCases.length} update cases`));
for (const [name, c] of updateCases) {
  test(`update case ${name}`, () => {
    assert.deepEqual(tool.validateManifest(c.published), [], "the published manifest passes");
    assert.deepEqual(tool.validateManifest(c.candidate), [], "the candidate manifest passes");
    const problems = tool.compareManifests(c.published, c.candidate);
    assert.deepEqual(asSet(problems.map((p) => [p.code, p.path ?? null])), asSet(c.expect.map((e) => [e.code, e.path ?? null])), c.description);
  });
}

// review.json: its shape and its example days, as tests/contract/test_conformance_reviews.py
// runs them against src/almanac/platform/contract/review.py.
const reviewCases = cases("reviews");
test("there are review cases", () => assert.ok(reviewCases.length >= 10, `only ${reviewCases.length} review cases`));
for (const [name, c] of reviewCases) {
  test(`review case ${name}`, () => {
    assert.deepEqual(tool.validateManifest(c.manifest), []);
    const text = "raw" in c ? c.raw : JSON.stringify(c.review);
    const parsed = "raw" in c ? null : c.review;
    const problems = [...tool.validateReview(text, c.manifest), ...tool.reviewExampleProblems(parsed, c.records)];
    assert.deepEqual(asSet(problems.map((p) => [p.code, p.path ?? null])), asSet(c.expect.map((e) => [e.code, e.path ?? null])), c.description);
  });
}
