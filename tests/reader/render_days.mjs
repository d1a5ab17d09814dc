// Render cases with the tool's renderDays, for the Python differential test.
// stdin: [{manifest, records, from, to, today, language, status}]; stdout: [days] in that order.
import * as fs from "node:fs";
import { renderDays } from "../../tool/almanac-plugin.mjs";

const cases = JSON.parse(fs.readFileSync(0, "utf8"));
const out = cases.map((c) =>
  renderDays(c.manifest, c.records, { from: c.from, to: c.to, today: c.today, language: c.language, status: c.status }),
);
process.stdout.write(JSON.stringify(out));
