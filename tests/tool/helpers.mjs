// Shared helpers of the tool's node tests: run the tool as a program, make plug-ins with init.
import { spawnSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

export const TOOL = new URL("../../tool/almanac-plugin.mjs", import.meta.url).pathname;
export const NOW = "2026-06-10T15:00:00Z";

/** Run the tool synchronously: {code, stdout, stderr}. */
export function tool(args, { cwd, env = {} } = {}) {
  const r = spawnSync(process.execPath, [TOOL, ...args], { cwd, env: { PATH: process.env.PATH, ALMANAC_PLUGIN_NOW: NOW, ...env }, encoding: "utf8" });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Run the tool without blocking the test process (for tests that serve something themselves). */
export function toolAsync(args, { cwd, env = {} } = {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [TOOL, ...args], { cwd, env: { PATH: process.env.PATH, ALMANAC_PLUGIN_NOW: NOW, ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

export function tempDir(prefix = "almanac-tool-") {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** A copy of a folder under a new parent, named `name`. */
export function copyPlugin(src, name = path.basename(src)) {
  const dir = path.join(tempDir(), name);
  fs.cpSync(src, dir, { recursive: true });
  return dir;
}

export function editJson(file, change) {
  const doc = JSON.parse(fs.readFileSync(file, "utf8"));
  change(doc);
  fs.writeFileSync(file, JSON.stringify(doc, null, 2) + "\n");
}

export function codes(stdoutJson) {
  return JSON.parse(stdoutJson).findings.map((f) => f.code);
}
