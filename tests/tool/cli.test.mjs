// The tool as a developer runs it: init for every kind, check on real broken copies (each
// folder, fixture and run code raised by a real input), the guard, pack, preview, digest, help
// and exit codes.
import { test, before } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { spawnSync } from "node:child_process";
import { tool, tempDir, copyPlugin, editJson, codes, NOW, TOOL } from "./helpers.mjs";
import { nameFromId, validateManifest } from "../../tool/almanac-plugin.mjs";

let work;
const made = {};
before(() => {
  work = tempDir();
  for (const kind of ["value", "event", "item"]) {
    const r = tool(["init", `demo-${kind}`, "--kind", kind, "--timezone", "America/Santo_Domingo"], { cwd: work });
    assert.equal(r.code, 0, r.stderr);
    made[kind] = path.join(work, `demo-${kind}`);
  }
});

const check = (dir, ...more) => tool(["check", dir, "--json", ...more]);
const expectCodes = (dir, wanted) => {
  const r = check(dir);
  assert.equal(r.code, 1, r.stdout + r.stderr);
  const found = codes(r.stdout);
  for (const code of [].concat(wanted)) assert.ok(found.includes(code), `${code} not in ${found.join(", ")}`);
  return JSON.parse(r.stdout);
};

test("init makes a plug-in of every kind that passes check", () => {
  for (const kind of ["value", "event", "item"]) {
    const dir = made[kind];
    for (const f of ["plugin.json", "fetch.mjs", "README.md", "AGENTS.md", "CLAUDE.md", "fixtures/records.jsonl", "fixtures/context.json"]) assert.ok(fs.existsSync(path.join(dir, f)), `${kind}: ${f}`);
    const ctx = JSON.parse(fs.readFileSync(path.join(dir, "fixtures/context.json"), "utf8"));
    assert.deepEqual(ctx, { now: "2026-06-10T15:00:00Z", today: "2026-06-10" });
    const r = tool(["check", dir]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /passes: \d+ records, 2 of 2 run cases passed/);
    const j = check(dir);
    assert.equal(j.code, 0);
    const out = JSON.parse(j.stdout);
    assert.equal(out.ok, true);
    assert.deepEqual(out.findings, []);
    assert.equal(out.digest, tool(["digest", dir]).stdout.trim());
    assert.ok(fs.readFileSync(path.join(dir, "fixtures/records.jsonl"), "utf8").split("\n").length > 2);
  }
  const agents = fs.readFileSync(path.join(made.value, "AGENTS.md"), "utf8");
  for (const words of ["backfillFrom", "exit 2", "Determinism", "check --update", "node:"]) assert.ok(agents.includes(words), words);
});

test("init keeps acronyms in the name and refuses bad input with exit 2", () => {
  const dir = tempDir();
  assert.equal(tool(["init", "ecb-fx", "--timezone", "Europe/Berlin"], { cwd: dir }).code, 0);
  assert.equal(JSON.parse(fs.readFileSync(path.join(dir, "ecb-fx/plugin.json"), "utf8")).name.en, "ECB FX");
  assert.equal(tool(["init", "my-value-plugin", "--timezone", "Europe/Berlin"], { cwd: dir }).code, 0);
  assert.equal(JSON.parse(fs.readFileSync(path.join(dir, "my-value-plugin/plugin.json"), "utf8")).name.en, "My Value Plugin");
  // Acronyms: a part with no vowel, or a well-known one; short words are words.
  const names = {
    "my-value-plugin": "My Value Plugin", "ecb-fx-rates": "ECB FX Rates", "bls-release-calendar": "BLS Release Calendar",
    "bcrd-usd-rates": "BCRD USD Rates", "uk-bank-holidays": "UK Bank Holidays", "us-cpi": "US CPI", "gdp-now": "GDP Now",
    "imf-oecd-eu-un": "IMF OECD EU UN", "fed-fomc-ons": "FED FOMC ONS", "oil-and-gas-day": "Oil And Gas Day", "new-art-map": "New Art Map",
  };
  for (const [id, name] of Object.entries(names)) assert.equal(nameFromId(id), name, id);
  assert.equal(tool(["init"], { cwd: dir }).code, 2);
  assert.equal(tool(["init", "Bad_Id"], { cwd: dir }).code, 2);
  assert.equal(tool(["init", "store"], { cwd: dir }).code, 2);
  assert.equal(tool(["init", "x-rates", "--kind", "number"], { cwd: dir }).code, 2);
  assert.equal(tool(["init", "x-rates", "--timezone", "+01:00"], { cwd: dir }).code, 2);
  assert.equal(tool(["init", "x-rates", "--timezone", "Etc/GMT+5"], { cwd: dir }).code, 2);
  assert.equal(tool(["init", "x-rates", "--timezone", "EST"], { cwd: dir }).code, 2);
  assert.equal(tool(["init", "ecb-fx"], { cwd: dir }).code, 1, "an existing folder is not overwritten");
  assert.ok(!fs.existsSync(path.join(dir, "x-rates")));
});

test("init writes a generic template: no made-up unit, AGENTS.md and CLAUDE.md that name nothing of it", () => {
  for (const kind of ["value", "event", "item"]) {
    const manifest = JSON.parse(fs.readFileSync(path.join(made[kind], "plugin.json"), "utf8"));
    assert.ok(!("unit" in manifest.series[0]), `${kind}: a template series has no unit to pass on unnoticed`);
  }
  // The same words for every id and kind: nothing in them goes stale when a key is renamed.
  const read = (kind, file) => fs.readFileSync(path.join(made[kind], file), "utf8");
  for (const file of ["AGENTS.md", "CLAUDE.md"]) {
    assert.equal(read("event", file), read("value", file), file);
    assert.equal(read("item", file), read("value", file), file);
    for (const word of ["demo-value", "`rates`", "`calendar`", "`notices`", "`rate`", "`meetings`"]) assert.ok(!read("value", file).includes(word), `${file} names ${word}`);
  }
  assert.match(read("value", "AGENTS.md"), /`unit`/);
  // Both tell an agent the tool is an MCP server too, and where its registration is.
  for (const file of ["AGENTS.md", "CLAUDE.md"]) assert.match(read("value", file), /almanac-plugin\.mjs help mcp[\s\S]*/, file);
  assert.match(read("value", "AGENTS.md"), /## The tool as an MCP server\n`node almanac-plugin\.mjs mcp`/);
});

test("help mcp prints the entry an MCP client's configuration takes: node, this file's whole path, mcp", () => {
  const r = tool(["help", "mcp"], { cwd: tempDir() });
  assert.equal(r.code, 0);
  const json = r.stdout.slice(r.stdout.indexOf("  {"), r.stdout.lastIndexOf("  }") + 3);
  assert.deepEqual(JSON.parse(json), { mcpServers: { almanac: { command: "node", args: [TOOL, "mcp"] } } });
  assert.match(tool(["help"]).stdout, /^  mcp\n/m);
});

test("the template fetchers honour backfill: a first run prints what backfillFrom allows, a later run starts from the stored state", () => {
  const fetch = (kind, context) => {
    const dir = made[kind];
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, "plugin.json"), "utf8"));
    const source = manifest.sources[0].name;
    const full = { contract: 1, plugin: manifest.id, now: NOW, today: "2026-06-10", sources: { [source]: path.join(dir, "fixtures/sources", source) }, ...context, series: { [manifest.series[0].key]: context.series } };
    const r = spawnSync(process.execPath, [path.join(dir, "fetch.mjs")], { input: JSON.stringify(full), encoding: "utf8" });
    assert.equal(r.status, 0, r.stderr);
    return r.stdout.split("\n").filter(Boolean).map((line) => JSON.parse(line).date);
  };
  for (const kind of ["value", "item"]) {
    const all = fetch(kind, { backfill: true, backfillFrom: null, series: { last: null, count: 0 } });
    assert.ok(all.length >= 3, kind);
    const mid = all[Math.floor(all.length / 2)];
    assert.deepEqual(fetch(kind, { backfill: true, backfillFrom: mid, series: { last: null, count: 0 } }), all.filter((d) => d >= mid), `${kind}: a first run starts at backfillFrom`);
    // A later run is given a backfillFrom too (today minus the window): it starts at the newest stored day.
    const later = fetch(kind, { backfill: false, backfillFrom: "2025-06-10", series: { last: mid, count: all.length } });
    assert.deepEqual(later, all.filter((d) => d >= mid), `${kind}: a later run starts at series.last`);
  }
  // Events restate their snapshot window (30 days back) and reach further back only to an older last.
  const firstRun = fetch("event", { backfill: true, backfillFrom: null, today: "2026-07-10", series: { last: null, count: 0 } });
  assert.deepEqual(firstRun, ["2026-05-21", "2026-06-04", "2026-06-11", "2026-07-10"]);
  assert.deepEqual(fetch("event", { backfill: false, backfillFrom: null, today: "2026-07-10", series: { last: "2026-06-11", count: 4 } }), ["2026-06-11", "2026-07-10"]);
  assert.deepEqual(fetch("event", { backfill: false, backfillFrom: null, today: "2026-07-10", series: { last: "2026-05-30", count: 4 } }), ["2026-06-04", "2026-06-11", "2026-07-10"]);
  // The template's own later-run case shows it: fewer records than the first run.
  const nextDay = fs.readFileSync(path.join(made.value, "fixtures/runs/next-day/records.jsonl"), "utf8").split("\n").filter(Boolean);
  const base = fs.readFileSync(path.join(made.value, "fixtures/records.jsonl"), "utf8").split("\n").filter(Boolean);
  assert.deepEqual(nextDay, base.slice(-1));
});

test("init's next step names the tool as it was run, so the command works from here", () => {
  const check = (cwd, line) => {
    const m = /then run: node ('[^']*'|\S+) check (\S+)$/m.exec(line);
    assert.ok(m, line);
    const file = m[1].startsWith("'") ? m[1].slice(1, -1) : m[1];
    const r = spawnSync(process.execPath, [file, "check", m[2]], { cwd, encoding: "utf8", env: { PATH: process.env.PATH, ALMANAC_PLUGIN_NOW: NOW } });
    assert.equal(r.status, 0, r.stderr);
    return file;
  };
  const elsewhere = tempDir();
  const r = tool(["init", "hint-rates", "--timezone", "UTC"], { cwd: elsewhere });
  assert.equal(r.code, 0, r.stderr);
  assert.notEqual(check(elsewhere, r.stdout), "almanac-plugin.mjs", "the tool is not in this folder");
  // A copy beside the folder, and one in a folder whose name needs quoting.
  const here = tempDir();
  fs.mkdirSync(path.join(here, "my tools"));
  fs.copyFileSync(TOOL, path.join(here, "almanac-plugin.mjs"));
  fs.copyFileSync(TOOL, path.join(here, "my tools", "almanac-plugin.mjs"));
  const run = (file, id) => spawnSync(process.execPath, [file, "init", id, "--timezone", "UTC"], { cwd: here, encoding: "utf8", env: { PATH: process.env.PATH, ALMANAC_PLUGIN_NOW: NOW } }).stdout;
  assert.equal(check(here, run("almanac-plugin.mjs", "beside-rates")), "almanac-plugin.mjs");
  const quoted = run("my tools/almanac-plugin.mjs", "quoted-rates");
  assert.match(quoted, /then run: node 'my tools\/almanac-plugin\.mjs' check quoted-rates/);
  check(here, quoted);
});

test("time zones: fixed offsets written as zone names are refused, UTC, GMT and place zones kept", () => {
  const base = JSON.parse(fs.readFileSync(path.join(made.value, "plugin.json"), "utf8"));
  const zoneProblems = (zone) => validateManifest({ ...base, timezone: zone }).map((p) => [p.code, p.path]);
  for (const zone of ["Etc/GMT+5", "Etc/GMT-14", "GMT+0", "GMT-0", "Etc/GMT+0", "Etc/GMT-1", "EST", "MST", "HST", "+01:00", "UTC+1"]) {
    assert.deepEqual(zoneProblems(zone), [["PLG-MANIFEST-TIMEZONE", "timezone"]], zone);
  }
  for (const zone of ["UTC", "Etc/UTC", "GMT", "Etc/GMT", "Europe/Berlin", "America/New_York", "America/Santo_Domingo", "Pacific/Honolulu", "America/Phoenix", "EST5EDT", "US/Eastern"]) {
    assert.deepEqual(zoneProblems(zone), [], zone);
  }
  assert.match(validateManifest({ ...base, timezone: "Etc/GMT+5" })[0].message, /fixed offset/);
  const dir = copyPlugin(made.value);
  editJson(path.join(dir, "plugin.json"), (m) => (m.timezone = "Etc/GMT+5"));
  expectCodes(dir, "PLG-MANIFEST-TIMEZONE");
});

test("help, unknown commands and options", () => {
  const h = tool(["help"]);
  assert.equal(h.code, 0);
  for (const c of ["init", "check", "preview", "probe", "pack", "digest", "help"]) assert.ok(h.stdout.includes(`${c} `) || h.stdout.includes(`${c}\n`), c);
  for (const c of ["init", "check", "preview", "probe", "pack", "digest"]) {
    const r = tool(["help", c]);
    assert.equal(r.code, 0);
    assert.match(r.stdout, new RegExp(`usage: node almanac-plugin.mjs ${c}`));
  }
  assert.match(tool(["help", "preview"]).stdout, /--days[\s\S]*--language[\s\S]*--run[\s\S]*--live[\s\S]*--html[\s\S]*--json/);
  assert.equal(tool(["help", "nope"]).code, 2);
  // The publishing commands of the specification: each documented, with its exit codes.
  for (const c of ["login", "logout", "upload", "status", "review", "submit", "publish", "unpublish", "relist", "retire"]) {
    const r = tool(["help", c]);
    assert.equal(r.code, 0, `help ${c}: ${r.stderr}`);
    assert.match(r.stdout, new RegExp(`usage: node almanac-plugin.mjs ${c}`));
    assert.match(r.stdout, /--json/);
    assert.match(r.stdout, /Exit codes: 0 done; 1 not logged in/);
    assert.ok(h.stdout.includes(`${c} `) || h.stdout.includes(`${c}\n`), c);
  }
  assert.match(tool(["help", "login"]).stdout, /--server[\s\S]*--name/);
  assert.match(tool(["help", "review"]).stdout, /--file[\s\S]*--attest/);
  assert.match(tool(["help", "check"]).stdout, /--against/);
  const login = tool(["login", "--server", "http://almanac.example"]);
  assert.equal(login.code, 2, "plain http only to this machine");
  assert.match(login.stderr, /https address, or http only to this machine/);
  assert.equal(tool(["frobnicate"]).code, 2);
  assert.equal(tool(["check", made.value, "--colour"]).code, 2);
  assert.equal(tool(["pack", made.value, "--out"]).code, 2, "missing option value");
  assert.equal(tool(["check", made.value, "--json=yes"]).code, 2);
  assert.equal(tool(["--version"]).stdout.trim(), "1.6.0");
});

test("check names the field and the fix; --json carries code, fix and docs link", () => {
  const dir = copyPlugin(made.value);
  editJson(path.join(dir, "plugin.json"), (m) => {
    m.sources[0].url = "http://example.org/rates.csv";
    m.series[0].colour = "red";
  });
  const human = tool(["check", dir]);
  assert.equal(human.code, 1);
  // The field is named once: the message begins with its path, so the location gives the file.
  assert.match(human.stderr, /^error PLG-MANIFEST-SOURCE-URL \(plugin\.json\): sources\[0\]\.url: must start with https:\/\/$/m);
  assert.match(human.stderr, /fix: /);
  const j = tool(["check", dir, "--json"], { env: { ALMANAC_BASE_URL: "https://almanac.example" } });
  assert.equal(j.code, 1);
  const out = JSON.parse(j.stdout);
  assert.equal(out.ok, false);
  const f = out.findings.find((x) => x.code === "PLG-MANIFEST-UNKNOWN-KEY");
  assert.equal(f.path, "series[0].colour");
  assert.equal(f.severity, "error");
  assert.equal(f.docs, "https://almanac.example/docs/problems/PLG-MANIFEST-UNKNOWN-KEY");
  assert.ok(f.fix.length > 10);
  assert.match(out.summary, /does not pass/);
  assert.match(out.digest, /^sha256:[0-9a-f]{64}$/);
});

test("docs links follow ALMANAC_BASE_URL, else the server the last login kept, else the default", () => {
  const dir = copyPlugin(made.value);
  editJson(path.join(dir, "plugin.json"), (m) => (m.series[0].colour = "red"));
  const docs = (env) => {
    const human = tool(["check", dir], { env });
    const j = JSON.parse(tool(["check", dir, "--json"], { env }).stdout);
    const link = j.findings.find((f) => f.code === "PLG-MANIFEST-UNKNOWN-KEY").docs;
    assert.ok(human.stderr.includes(`docs: ${link}`), human.stderr);
    return link.replace(/\/docs\/problems\/PLG-MANIFEST-UNKNOWN-KEY$/, "");
  };
  const saved = (folder, server) => {
    fs.mkdirSync(folder, { recursive: true });
    fs.writeFileSync(path.join(folder, "plugin-token.json"), JSON.stringify({ server, token: "not-used-here" }), { mode: 0o600 });
  };
  const home = tempDir();
  assert.equal(docs({ HOME: home }), "http://127.0.0.1:8000");
  saved(path.join(home, ".config", "almanac"), "https://almanac.home.example/");
  assert.equal(docs({ HOME: home }), "https://almanac.home.example");
  const xdg = tempDir();
  saved(path.join(xdg, "almanac"), "https://almanac.xdg.example");
  assert.equal(docs({ HOME: home, XDG_CONFIG_HOME: xdg }), "https://almanac.xdg.example");
  const moved = tempDir();
  saved(moved, "http://127.0.0.1:8111");
  assert.equal(docs({ HOME: home, XDG_CONFIG_HOME: xdg, ALMANAC_PLUGIN_HOME: moved }), "http://127.0.0.1:8111");
  assert.equal(docs({ HOME: home, ALMANAC_PLUGIN_HOME: moved, ALMANAC_BASE_URL: "https://almanac.env.example/" }), "https://almanac.env.example");
  // A token file this version cannot read leaves the default.
  fs.writeFileSync(path.join(moved, "plugin-token.json"), "{not json");
  assert.equal(docs({ HOME: tempDir(), ALMANAC_PLUGIN_HOME: moved }), "http://127.0.0.1:8000");
});

test("folder and fixture codes, each from a real broken copy", () => {
  const renamed = copyPlugin(made.value, "other-name");
  expectCodes(renamed, "PLG-FOLDER-ID");

  const noFetch = copyPlugin(made.value);
  fs.rmSync(path.join(noFetch, "fetch.mjs"));
  expectCodes(noFetch, "PLG-FETCH-MISSING");

  const noSource = copyPlugin(made.value);
  fs.rmSync(path.join(noSource, "fixtures/sources/rates"));
  expectCodes(noSource, "PLG-FIXTURE-SOURCE-MISSING");

  const badContext = copyPlugin(made.value);
  fs.writeFileSync(path.join(badContext, "fixtures/context.json"), JSON.stringify({ now: "2026-06-10T02:00:00Z", today: "2026-06-10" }));
  const bc = expectCodes(badContext, "PLG-FIXTURE-CONTEXT-INVALID");
  assert.equal(bc.findings[0].path, "today", "02:00 UTC is still 9 June in Santo Domingo");

  const noRecords = copyPlugin(made.value);
  fs.rmSync(path.join(noRecords, "fixtures/records.jsonl"));
  expectCodes(noRecords, "PLG-FIXTURE-RECORDS-MISSING");

  const mismatch = copyPlugin(made.value);
  const file = path.join(mismatch, "fixtures/records.jsonl");
  const lines = fs.readFileSync(file, "utf8").split("\n");
  lines[1] = lines[1].replace(/"rate":[0-9.]+/, '"rate":1');
  fs.writeFileSync(file, lines.join("\n"));
  const mm = expectCodes(mismatch, "PLG-FIXTURE-MISMATCH");
  assert.equal(mm.findings[0].line, 2);
  assert.equal(tool(["check", mismatch, "--update"]).code, 0, "--update writes the output");
  assert.equal(tool(["check", mismatch]).code, 0);
});

test("imports: outside the folder, packages, bare builtins, fixtures; static and dynamic, through own files", () => {
  const dir = copyPlugin(made.value);
  const base = fs.readFileSync(path.join(dir, "fetch.mjs"), "utf8").split("\n").length;
  fs.writeFileSync(path.join(dir, "lib.mjs"), 'export { x } from "../../elsewhere.mjs";\nconst y = await import("lodash");\n');
  fs.appendFileSync(path.join(dir, "fetch.mjs"), '\nimport "./lib.mjs";\nimport { join } from "path";\nconst f = await import("./fixtures/helper.mjs");\n');
  const out = expectCodes(dir, ["PLG-IMPORT-OUTSIDE", "PLG-IMPORT-PACKAGE"]);
  const where = out.findings.map((f) => `${f.code} ${f.path}:${f.line}`).sort();
  const expected = [`PLG-IMPORT-PACKAGE fetch.mjs:${base + 2}`, `PLG-IMPORT-OUTSIDE fetch.mjs:${base + 3}`, "PLG-IMPORT-OUTSIDE lib.mjs:1", "PLG-IMPORT-PACKAGE lib.mjs:2"].sort();
  assert.deepEqual(where, expected);
  assert.match(out.findings.find((f) => f.path === "fetch.mjs" && f.code === "PLG-IMPORT-PACKAGE").message, /node:path/);
});

test("code files: symbolic links and file types", () => {
  const dir = copyPlugin(made.value);
  fs.symlinkSync("fetch.mjs", path.join(dir, "again.mjs"));
  fs.writeFileSync(path.join(dir, "helper.js"), "\n");
  const out = expectCodes(dir, ["PLG-CODE-SYMLINK", "PLG-CODE-FILE-TYPE"]);
  assert.ok(out.findings.some((f) => f.code === "PLG-CODE-SYMLINK" && f.path === "again.mjs"));
  assert.equal(tool(["digest", dir]).code, 1);
});

test("digest --files lists the covered files in reading order", () => {
  const dir = copyPlugin(made.value);
  fs.mkdirSync(path.join(dir, "lib"));
  fs.writeFileSync(path.join(dir, "lib/parse.mjs"), "export {};\n");
  fs.writeFileSync(path.join(dir, "LICENSE"), "MIT\n");
  const r = tool(["digest", dir, "--files"]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.stdout.trim().split("\n"), ["LICENSE", "fetch.mjs", "lib/parse.mjs", "plugin.json"]);
  assert.match(tool(["digest", dir]).stdout, /^sha256:[0-9a-f]{64}\n$/);
});

const fetcher = (dir, source) => fs.writeFileSync(path.join(dir, "fetch.mjs"), source);

test("the guard: network attempts, reads outside, limits, failures", () => {
  const net = copyPlugin(made.value);
  fetcher(net, 'import net from "node:net";\ntry { net.connect(9, "127.0.0.1"); } catch {}\ntry { await fetch("https://example.org/"); } catch {}\n');
  const n = expectCodes(net, "PLG-RUN-NETWORK");
  assert.match(n.findings.find((f) => f.code === "PLG-RUN-NETWORK").message, /net\.connect.*fetch|fetch.*net\.connect/);

  const dns = copyPlugin(made.value);
  fetcher(dns, 'import { promises } from "node:dns";\nawait promises.lookup("example.org");\n');
  expectCodes(dns, "PLG-RUN-NETWORK");

  const outside = copyPlugin(made.value);
  fetcher(outside, 'import { readFileSync } from "node:fs";\ntry { readFileSync("/etc/hostname"); } catch {}\n');
  const o = expectCodes(outside, "PLG-RUN-READ-OUTSIDE");
  assert.match(o.findings[0].message, /\/etc\/hostname/);

  const slow = copyPlugin(made.value);
  editJson(path.join(slow, "plugin.json"), (m) => (m.limits = { seconds: 1 }));
  fetcher(slow, "while (true) {}\n");
  const started = Date.now();
  expectCodes(slow, "PLG-RUN-KILLED");
  assert.ok(Date.now() - started < 10000);

  const big = copyPlugin(made.value);
  editJson(path.join(big, "plugin.json"), (m) => (m.limits = { megabytes: 16 }));
  fetcher(big, "const keep = [];\nwhile (true) keep.push(new Array(1e6).fill(1.5));\n");
  const h = expectCodes(big, "PLG-RUN-KILLED");
  assert.match(h.findings.find((f) => f.code === "PLG-RUN-KILLED").message, /used more than 16 MB of memory/);

  const failing = copyPlugin(made.value);
  fetcher(failing, 'process.stderr.write("first\\nrates: column Fecha is missing\\n");\nprocess.exit(3);\n');
  const f = expectCodes(failing, "PLG-RUN-FAILED");
  assert.match(f.findings[0].message, /rates: column Fecha is missing/);

  const child = copyPlugin(made.value);
  fetcher(child, 'import { execFileSync } from "node:child_process";\nexecFileSync("/bin/true");\n');
  const c = expectCodes(child, "PLG-RUN-FAILED");
  assert.match(c.findings[0].message, /restricted|ERR_ACCESS_DENIED|allow-child-process/i);

  const random = copyPlugin(made.value);
  fs.appendFileSync(path.join(random, "fetch.mjs"), 'if (Math.random() < 2) process.stdout.write(JSON.stringify({ kind: "value", series: "rate", date: "2026-05-01", fields: { rate: Math.random() } }) + "\\n");\n');
  expectCodes(random, "PLG-RUN-NOT-DETERMINISTIC");

  const badRecord = copyPlugin(made.value);
  fs.appendFileSync(path.join(badRecord, "fetch.mjs"), 'process.stdout.write(JSON.stringify({ kind: "value", series: "eur", date: "2026-06-10", fields: { rate: 1 } }) + "\\n");\n');
  const b = expectCodes(badRecord, "PLG-RECORD-SERIES");
  assert.ok(b.findings[0].line > 1);
});

test("run cases: later runs with their stored state, and failing cases that must fail", () => {
  const dir = copyPlugin(made.value);
  // A later run: the fetcher sees backfill false and the state of the base fixture records.
  fs.appendFileSync(path.join(dir, "fetch.mjs"), 'if (!context.backfill) process.stderr.write(`state ${JSON.stringify(context.series)}\\n`);\n');
  const later = path.join(dir, "fixtures/runs/later");
  fs.mkdirSync(later, { recursive: true });
  fs.writeFileSync(path.join(later, "context.json"), JSON.stringify({ now: "2026-06-11T22:00:00Z", today: "2026-06-11" }));
  fs.writeFileSync(path.join(later, "records.jsonl"), "");
  const upd = tool(["check", dir, "--update"]);
  assert.equal(upd.code, 0, upd.stderr);
  assert.ok(fs.readFileSync(path.join(later, "records.jsonl"), "utf8").length > 0);
  const ok = tool(["check", dir]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /3 of 3 run cases passed/);
  fs.rmSync(path.join(dir, "fixtures/runs/next-day"), { recursive: true });
  fs.rmSync(later, { recursive: true });
  assert.match(tool(["check", dir]).stdout, /passes: \d+ records, 1 of 1 run case passed/);

  // A case that must fail but does not: its source is a good copy.
  const notFailing = copyPlugin(made.value);
  fs.copyFileSync(path.join(notFailing, "fixtures/sources/rates"), path.join(notFailing, "fixtures/runs/source-changed/sources/rates"));
  const nf = expectCodes(notFailing, "PLG-RUN-EXPECTED-FAILURE");
  assert.match(nf.findings[0].message, /exited 0/);

  // Wrong reason words.
  const wrongReason = copyPlugin(made.value);
  fs.writeFileSync(path.join(wrongReason, "fixtures/runs/source-changed/expect.json"), JSON.stringify({ exit: 2, reason: "sheet renamed" }));
  expectCodes(wrongReason, "PLG-RUN-EXPECTED-FAILURE");

  // Wrong exit code.
  const wrongExit = copyPlugin(made.value);
  fs.writeFileSync(path.join(wrongExit, "fixtures/runs/source-changed/expect.json"), JSON.stringify({ exit: 3 }));
  expectCodes(wrongExit, "PLG-RUN-EXPECTED-FAILURE");
});

function png256() {
  const zlib = process.getBuiltinModule("node:zlib");
  const chunk = (kind, body) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(body.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(Buffer.concat([Buffer.from(kind), body])) >>> 0);
    return Buffer.concat([len, Buffer.from(kind), body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(256, 0);
  header.writeUInt32BE(256, 4);
  header[8] = 8;
  header[9] = 2;
  const rows = Buffer.concat(Array(256).fill(Buffer.concat([Buffer.from([0]), Buffer.alloc(768, 0x40)])));
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk("IHDR", header), chunk("IDAT", zlib.deflateSync(rows)), chunk("IEND", Buffer.alloc(0))]);
}

test("the listing is checked when present, the icon from its bytes", () => {
  const dir = copyPlugin(made.value);
  const firstDate = JSON.parse(fs.readFileSync(path.join(dir, "fixtures/records.jsonl"), "utf8").split("\n")[0]).date;
  const listing = {
    listing: 1, plugin: "demo-value", publisher: { domain: "example.org" },
    tagline: { en: "Daily reference rates" }, description: { en: "Reference rates.\n\nFrom the central bank." },
    category: "finance", keywords: ["rates"],
    links: { privacy: "https://example.org/privacy", support: { email: "help@example.org" } },
    sources: [{ name: "rates", title: "Reference rates", page: "https://example.org/rates", licence: { name: "CC BY 4.0", url: "https://creativecommons.org/licenses/by/4.0/" } }],
    examples: [{ date: firstDate, caption: { en: "A rate day" } }],
  };
  fs.writeFileSync(path.join(dir, "listing.json"), JSON.stringify(listing, null, 2));
  fs.mkdirSync(path.join(dir, "listing"));
  fs.writeFileSync(path.join(dir, "listing/icon.png"), png256());
  const r = tool(["check", dir]);
  assert.equal(r.code, 0, r.stderr);
  fs.writeFileSync(path.join(dir, "listing/icon.png"), png256().subarray(0, 200));
  expectCodes(dir, "PLG-LISTING-ICON");
});

test("pack: refuses a failing folder, writes the same bytes twice, a ZIP Python reads", () => {
  const out = tempDir();
  const bad = copyPlugin(made.value);
  fs.rmSync(path.join(bad, "fetch.mjs"));
  const refused = tool(["pack", bad, "--out", path.join(out, "bad.zip")]);
  assert.equal(refused.code, 1);
  assert.ok(!fs.existsSync(path.join(out, "bad.zip")));

  const dir = copyPlugin(made.event);
  fs.writeFileSync(path.join(dir, ".DS_Store"), "x");
  fs.mkdirSync(path.join(dir, ".git"));
  fs.writeFileSync(path.join(dir, ".git/HEAD"), "ref: main\n");
  const a = tool(["pack", dir]);
  assert.equal(a.code, 0, a.stderr);
  assert.match(a.stderr, /PLG-README-TEMPLATE/);
  const defaultOut = path.join(path.dirname(dir), "demo-event-0.1.0.zip");
  assert.ok(fs.existsSync(defaultOut));
  const first = fs.readFileSync(defaultOut);
  fs.utimesSync(path.join(dir, "fetch.mjs"), new Date(), new Date(2001, 1, 1));
  assert.equal(tool(["pack", dir, "--out", path.join(out, "again.zip")]).code, 0);
  assert.ok(first.equals(fs.readFileSync(path.join(out, "again.zip"))), "same files, same bytes");

  const py = spawnSync(new URL("../../.venv/bin/python", import.meta.url).pathname, ["-c", `
import zipfile, json, sys, hashlib
z = zipfile.ZipFile(sys.argv[1])
assert z.testzip() is None
names = z.namelist()
print(json.dumps({"names": names, "dates": sorted({i.date_time for i in z.infolist()}), "extra": [len(i.extra) for i in z.infolist()], "methods": sorted({i.compress_type for i in z.infolist()}), "pack": json.loads(z.read(names[-1]))}))
`, defaultOut], { encoding: "utf8" });
  assert.equal(py.status, 0, py.stderr);
  const info = JSON.parse(py.stdout);
  assert.deepEqual(info.dates, [[1980, 1, 1, 0, 0, 0]]);
  assert.ok(info.extra.every((n) => n === 0));
  assert.ok(info.methods.every((m) => m === 0 || m === 8));
  assert.equal(info.names[info.names.length - 1], "demo-event/.pack.json");
  const files = info.names.slice(0, -1);
  assert.ok(files.every((n) => n.startsWith("demo-event/")));
  assert.ok(!files.some((n) => n.includes(".git/") || n.endsWith(".DS_Store")));
  assert.ok(files.includes("demo-event/fixtures/records.jsonl") && files.includes("demo-event/README.md"));
  const sorted = [...files].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
  assert.deepEqual(files, sorted);
  const digest = tool(["digest", dir]).stdout.trim();
  assert.equal(info.pack.digest, digest);
  assert.equal(info.pack.id, "demo-event");
  assert.equal(info.pack.version, "0.1.0");
  assert.equal(info.pack.contract, 1);
  assert.equal(info.pack.tool, "1.6.0");
  assert.deepEqual(info.pack.files.map((f) => `demo-event/${f.path}`), files);
});

test("preview: text, html, json, a run case, and refused --days", () => {
  const dir = made.value;
  const text = tool(["preview", dir]);
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /2026-06-07[\s\S]*2026-06-13/);
  assert.match(text.stdout, /Last rate|Rate of/);
  const page = path.join(tempDir(), "days.html");
  const h = tool(["preview", dir, "--html", page, "--days", "2026-06-01..2026-06-10", "--language", "es"]);
  assert.equal(h.code, 0, h.stderr);
  const html = fs.readFileSync(page, "utf8");
  assert.match(html, /^<!doctype html>/);
  assert.ok(!/<script|<link|src="http/.test(html), "self-contained");
  assert.match(html, /2026-06-01[\s\S]*2026-06-10/);
  const j = tool(["preview", dir, "--json", "--days", "2026-06-09..2026-06-11"]);
  assert.equal(j.code, 0, j.stderr);
  const out = JSON.parse(j.stdout);
  for (const k of ["summary", "cache", "findings", "digest", "days"]) assert.ok(k in out, k);
  assert.deepEqual(out.days.map((d) => d.date), ["2026-06-09", "2026-06-10", "2026-06-11"]);
  assert.deepEqual(out.days[2].sections, [], "nothing after today for values");
  const ev = tool(["preview", made.event, "--json"]);
  assert.equal(ev.code, 0);
  assert.ok(JSON.parse(ev.stdout).days.some((d) => d.sections.some((s) => s.rows.some((r) => r.state === "scheduled"))));
  const failingCase = tool(["preview", made.event, "--run", "source-changed", "--json"]);
  assert.equal(failingCase.code, 0, failingCase.stderr);
  const failed = JSON.parse(failingCase.stdout);
  assert.equal(failed.status, "failing");
  assert.ok(failed.days.some((d) => d.sections.some((s) => s.rows.some((r) => r.status === "could-not-refresh"))));
  for (const bad of ["2026-06-01", "2026-06-10..2026-06-01", "2026-01-01..2026-03-05", "2026-02-30..2026-03-01", "x..y"]) assert.equal(tool(["preview", dir, "--days", bad]).code, 2, bad);
  assert.equal(tool(["preview", dir, "--days", "2026-01-01..2026-03-03"]).code, 0, "62 days");
  assert.equal(tool(["preview", dir, "--run", "x", "--live"]).code, 2);
  assert.equal(tool(["preview", dir, "--html", page, "--json"]).code, 2);
  assert.equal(tool(["preview", dir, "--run", "no-such-case"]).code, 2);
});
