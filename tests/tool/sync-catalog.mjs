// Rewrites the catalog and its pages embedded in tool/almanac-plugin.mjs from the canonical
// src/almanac/platform/contract/problems.json and problem_pages.json:
//   .venv/bin/node tests/tool/sync-catalog.mjs
import * as fs from "node:fs";

const TOOL = new URL("../../tool/almanac-plugin.mjs", import.meta.url);
const CANON = new URL("../../src/almanac/platform/contract/problems.json", import.meta.url);
const PAGES = new URL("../../src/almanac/platform/contract/problem_pages.json", import.meta.url);

export function embeddedBlock() {
  const { problems } = JSON.parse(fs.readFileSync(CANON, "utf8"));
  const keys = ["code", "severity", "area", "title", "fix", "retired"];
  return problems.map((p) => "  " + JSON.stringify(Object.fromEntries(keys.map((k) => [k, p[k]]))) + ",").join("\n") + "\n";
}

export function embeddedPages() {
  const { problems } = JSON.parse(fs.readFileSync(PAGES, "utf8"));
  return Object.entries(problems).map(([code, page]) => `    ${JSON.stringify(code)}: ${JSON.stringify(page)},`).join("\n") + "\n";
}

function between(text, open, close, block) {
  const start = text.indexOf(open) + open.length;
  const end = text.indexOf(close);
  if (start < open.length || end < start) throw new Error(`no ${open.trim()} ... ${close.trim()} in the tool`);
  return text.slice(0, start) + block + text.slice(end);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  let text = fs.readFileSync(TOOL, "utf8");
  text = between(text, "export const CATALOG = [\n", "];\n// END CATALOG", embeddedBlock());
  text = between(text, "function problemPages() {\n  return {\n", "  };\n}\n// END PAGES", embeddedPages());
  fs.writeFileSync(TOOL, text);
  console.log("catalog and pages synced");
}
