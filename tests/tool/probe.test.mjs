// probe and preview --live download from a local HTTPS server on loopback (a self-signed
// certificate given to the tool through NODE_EXTRA_CA_CERTS; the host pinned to 127.0.0.1 with
// ALMANAC_PLUGIN_RESOLVE). Never the internet.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as https from "node:https";
import * as path from "node:path";
import { execFileSync, spawn } from "node:child_process";
import { TOOL, tool, toolAsync, tempDir, editJson } from "./helpers.mjs";

const HOST = "data.almanac.test";
let server;
let port;
let env;
let plugin;
const seen = [];
const csv = "date,rate\n2026-06-08,58.1000\n2026-06-09,58.2500\n2026-06-10,58.3000\n";

before(async () => {
  const dir = tempDir("almanac-tls-");
  execFileSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", path.join(dir, "key.pem"), "-out", path.join(dir, "cert.pem"), "-days", "2", "-subj", `/CN=${HOST}`, "-addext", `subjectAltName=DNS:${HOST}`], { stdio: "ignore" });
  server = https.createServer({ key: fs.readFileSync(path.join(dir, "key.pem")), cert: fs.readFileSync(path.join(dir, "cert.pem")) }, (req, res) => {
    seen.push({ url: req.url, ua: req.headers["user-agent"] });
    const go = (to) => {
      res.writeHead(302, { location: to });
      res.end();
    };
    if (req.url === "/rates-2026-06-10.csv") return res.end(csv);
    if (req.url === "/archive/2026/12/rates-2026-12-31.csv") return res.end(csv);
    if (req.url === "/slow") {
      // Headers at once, then a byte every 100 ms, never the end: a silence never comes.
      res.writeHead(200, { "content-type": "text/csv" });
      res.write("date,rate\n");
      const drip = setInterval(() => res.write("2"), 100);
      res.on("close", () => clearInterval(drip));
      return;
    }
    if (req.url === "/moved") return go("/rates-2026-06-10.csv");
    if (req.url === "/to-http") return go(`http://${HOST}:${port}/rates-2026-06-10.csv`);
    if (req.url === "/elsewhere") return go(`https://other.almanac.test:${port}/rates-2026-06-10.csv`);
    if (req.url.startsWith("/loop")) return go(`/loop${req.url.length}`);
    if (req.url === "/big") return res.end("date,rate\n" + "2026-06-10,1.0\n".repeat(1000));
    res.writeHead(404);
    res.end();
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  port = server.address().port;
  env = { NODE_EXTRA_CA_CERTS: path.join(dir, "cert.pem"), ALMANAC_PLUGIN_RESOLVE: `${HOST}=127.0.0.1`, ALMANAC_BASE_URL: "https://almanac.example" };
  const work = tempDir();
  assert.equal(tool(["init", "probe-rates", "--timezone", "America/Santo_Domingo"], { cwd: work }).code, 0);
  plugin = path.join(work, "probe-rates");
});
after(() => server.close());

const withUrl = (url, maxBytes) => editJson(path.join(plugin, "plugin.json"), (m) => {
  m.sources[0].url = url;
  if (maxBytes) m.sources[0].maxBytes = maxBytes;
  else delete m.sources[0].maxBytes;
});

test("probe downloads the real source with the product string, fills {today}, runs the fetcher and checks its records", async () => {
  withUrl(`https://${HOST}:${port}/rates-{today}.csv`);
  const r = await toolAsync(["probe", plugin], { env });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /3 records/);
  assert.match(r.stderr, /downloading rates/);
  assert.ok(seen.some((s) => s.url === "/rates-2026-06-10.csv" && s.ua === "Almanac plug-ins (+https://almanac.example)"));
});

test("probe fills {year} and {month} with today in the manifest zone, not in UTC", async () => {
  // 03:00 UTC on 1 January 2027 is still 31 December 2026 in Santo Domingo (UTC-4).
  withUrl(`https://${HOST}:${port}/archive/{year}/{month}/rates-{today}.csv`);
  const r = await toolAsync(["probe", plugin], { env: { ...env, ALMANAC_PLUGIN_NOW: "2027-01-01T03:00:00Z" } });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /3 records on 2026-12-31/);
  assert.match(r.stderr, /downloading rates from https:\/\/data\.almanac\.test:\d+\/archive\/2026\/12\/rates-2026-12-31\.csv/);
  assert.ok(seen.some((s) => s.url === "/archive/2026/12/rates-2026-12-31.csv"));
  assert.ok(!seen.some((s) => s.url.startsWith("/archive/2027")));
});

test("a download is bounded in total time, not only between packets (60 s, shortened here)", async () => {
  const script = `
    import { downloadSource, DOWNLOAD_SECONDS } from ${JSON.stringify(TOOL)};
    const started = Date.now();
    const r = await downloadSource({ name: "rates", url: ${JSON.stringify(`https://${HOST}:${port}/slow`)} }, { today: "2026-06-10", hosts: new Set([${JSON.stringify(HOST)}]), seconds: 0.5 });
    console.log(JSON.stringify({ ...r, ms: Date.now() - started, limit: DOWNLOAD_SECONDS }));
    process.exit(0);`;
  const out = await new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], { env: { PATH: process.env.PATH, ...env } });
    let text = "";
    let err = "";
    const guard = setTimeout(() => { child.kill("SIGKILL"); reject(new Error("the download was never stopped")); }, 10000);
    child.stdout.on("data", (d) => (text += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("close", () => { clearTimeout(guard); try { resolve(JSON.parse(text)); } catch { reject(new Error(text + err)); } });
  });
  assert.equal(out.ok, false);
  assert.equal(out.detail, "took over 0.5 seconds");
  assert.ok(out.ms < 3000, `stopped after ${out.ms} ms`);
  assert.equal(out.limit, 60);
});

test("probe follows a redirect to a declared host", async () => {
  withUrl(`https://${HOST}:${port}/moved`);
  const r = await toolAsync(["probe", plugin], { env });
  assert.equal(r.code, 0, r.stderr);
});

test("probe refuses http, undeclared hosts, too many redirects, oversized and missing files with exit 1", async () => {
  const cases = [
    [`https://${HOST}:${port}/to-http`, /not https/],
    [`https://${HOST}:${port}/elsewhere`, /not a host a source names/],
    [`https://${HOST}:${port}/loop`, /more than 5 redirects/],
    [`https://${HOST}:${port}/nothing`, /status 404/],
  ];
  for (const [url, why] of cases) {
    withUrl(url);
    const r = await toolAsync(["probe", plugin], { env });
    assert.equal(r.code, 1, url);
    assert.match(r.stderr, /could not download rates/);
    assert.match(r.stderr, why, url);
  }
  withUrl(`https://${HOST}:${port}/big`, 1000);
  const big = await toolAsync(["probe", plugin], { env });
  assert.equal(big.code, 1);
  assert.match(big.stderr, /maxBytes/);
});

test("probe refuses a certificate it does not trust", async () => {
  withUrl(`https://${HOST}:${port}/rates-{today}.csv`);
  const r = await toolAsync(["probe", plugin], { env: { ...env, NODE_EXTRA_CA_CERTS: "" } });
  assert.equal(r.code, 1);
});

test("preview --live uses the same downloads", async () => {
  withUrl(`https://${HOST}:${port}/rates-{today}.csv`);
  const r = await toolAsync(["preview", plugin, "--live", "--json", "--days", "2026-06-08..2026-06-10"], { env });
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.cache.mode, "live");
  assert.equal(out.cache.sources[0].bytes, Buffer.byteLength(csv));
  assert.deepEqual(out.days.map((d) => d.sections[0].rows[0].figures[0].text), ["58.10", "58.25", "58.30"]);
});
