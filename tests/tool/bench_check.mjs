// Benchmark (not collected by node --test): median wall time of `check` on a small plug-in made
// by init, over 10 runs, against `node -e 0` measured in the same run. Goal (issue 19): at most 4x
// `node -e 0`. The last line is one JSON object of the figures.
//   .venv/bin/node tests/tool/bench_check.mjs
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { tool, tempDir, TOOL } from "./helpers.mjs";

const RUNS = 10;
const GOAL = 4;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const time = (args, cwd) => {
  const t = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { cwd, env: { PATH: process.env.PATH } });
  if (r.status !== 0) throw new Error(`${args.join(" ")} exited ${r.status}: ${r.stderr}`);
  return Number(process.hrtime.bigint() - t) / 1e6;
};

const work = tempDir();
process.on("exit", () => fs.rmSync(work, { recursive: true, force: true }));
if (tool(["init", "bench-rates", "--timezone", "UTC"], { cwd: work }).code !== 0) throw new Error("init failed");
const folder = path.join(work, "bench-rates");
const baseline = [];
const check = [];
for (let i = 0; i < RUNS; i++) {
  baseline.push(time(["-e", "0"], work));
  check.push(time([TOOL, "check", folder], work));
}
const b = median(baseline);
const c = median(check);
console.log(`node -e 0: median ${b.toFixed(1)} ms over ${RUNS} runs`);
console.log(`check (small plug-in, fetcher run twice + two run cases): median ${c.toFixed(1)} ms over ${RUNS} runs`);
console.log(`ratio check / node -e 0: ${(c / b).toFixed(1)} (goal at most ${GOAL})`);
console.log(JSON.stringify({ runs: RUNS, node_ms: Number(b.toFixed(1)), check_ms: Number(c.toFixed(1)), ratio: Number((c / b).toFixed(2)), goal_ratio: GOAL }));
