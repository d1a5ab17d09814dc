// Call one exported function of the tool on many argument lists, for the Python differential
// tests. stdin: {"name": "renderDays", "calls": [[arg, ...], ...]}; stdout: [result, ...].
import * as fs from "node:fs";
import * as tool from "../../tool/almanac-plugin.mjs";

const { name, calls } = JSON.parse(fs.readFileSync(0, "utf8"));
const fn = tool[name];
if (typeof fn !== "function") throw new Error(`the tool exports no function ${name}`);
process.stdout.write(JSON.stringify(calls.map((args) => fn(...args))));
