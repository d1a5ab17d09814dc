// Rewrites the catalog embedded in tool/almanac-plugin.mjs from the canonical
// src/almanac/platform/contract/problems.json:  .venv/bin/node tests/tool/sync-catalog.mjs
import * as fs from "node:fs";

const TOOL = new URL("../../tool/almanac-plugin.mjs", import.meta.url);
const CANON = new URL("../../src/almanac/platform/contract/problems.json", import.meta.url);

export function embeddedBlock() {
  const { problems } = JSON.parse(fs.readFileSync(CANON, "utf8"));
  const keys = ["code", "severity", "area", "title", "fix", "retired"];
  return problems.map((p) => "  " + JSON.stringify(Object.fromEntries(keys.map((k) => [k, p[k]]))) + ",").join("\n") + "\n";
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const text = fs.readFileSync(TOOL, "utf8");
  const start = text.indexOf("export const CATALOG = [\n") + "export const CATALOG = [\n".length;
  const end = text.indexOf("];\n// END CATALOG");
  fs.writeFileSync(TOOL, text.slice(0, start) + embeddedBlock() + text.slice(end));
  console.log("catalog synced");
}
