// Reads the rates fixture (date,rate lines) and prints one value record per line.
import { readFileSync } from "node:fs";

const context = JSON.parse(readFileSync(0, "utf8"));
const lines = readFileSync(context.sources.rates, "utf8").split("\n").filter((line) => line !== "");
const out = [];
for (const line of lines.slice(1)) {
  const [date, rate] = line.split(",");
  if (date <= context.today) out.push(JSON.stringify({ kind: "value", series: "rate", date, fields: { rate: Number(rate) } }));
}
process.stdout.write(out.map((line) => line + "\n").join(""));
