// Every rendering case in tests/conformance/days/ against renderDays, and every expected day
// list against tests/conformance/days/schema.json (a small draft 2020-12 validator below).
import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { daysHtml, renderDays, twoDecimals, validateManifest } from "../../tool/almanac-plugin.mjs";

const DAYS = new URL("../conformance/days/", import.meta.url).pathname;
const schema = JSON.parse(fs.readFileSync(path.join(DAYS, "schema.json"), "utf8"));
const cases = fs.readdirSync(DAYS).filter((f) => f.endsWith(".json") && f !== "schema.json").sort();

/** Errors of `value` against a schema using type, const, enum, pattern, required, properties,
 * additionalProperties, items, minItems, maxItems, oneOf and local $ref. */
export function schemaErrors(value, s, at = "$", root = schema) {
  if (s.$ref) return schemaErrors(value, s.$ref.split("/").slice(1).reduce((o, k) => o[k], root), at, root);
  const errors = [];
  const typeOf = (v) => (v === null ? "null" : Array.isArray(v) ? "array" : Number.isInteger(v) ? "integer" : typeof v);
  if (s.type) {
    const types = [].concat(s.type);
    const t = typeOf(value);
    if (!types.includes(t) && !(t === "integer" && types.includes("number"))) return [`${at}: ${t} is not ${types.join("|")}`];
  }
  if ("const" in s && value !== s.const) errors.push(`${at}: not ${JSON.stringify(s.const)}`);
  if (s.enum && !s.enum.includes(value)) errors.push(`${at}: ${JSON.stringify(value)} not in enum`);
  if (s.pattern && typeof value === "string" && !new RegExp(s.pattern, "u").test(value)) errors.push(`${at}: ${JSON.stringify(value)} does not match ${s.pattern}`);
  if (s.oneOf) {
    const passing = s.oneOf.filter((sub) => schemaErrors(value, sub, at, root).length === 0).length;
    if (passing !== 1) errors.push(`${at}: matches ${passing} of oneOf`);
  }
  if (typeOf(value) === "object") {
    for (const k of s.required || []) if (!(k in value)) errors.push(`${at}: missing ${k}`);
    for (const [k, v] of Object.entries(value)) {
      if (s.properties && k in s.properties) errors.push(...schemaErrors(v, s.properties[k], `${at}.${k}`, root));
      else if (s.additionalProperties === false) errors.push(`${at}: unexpected ${k}`);
    }
  }
  if (Array.isArray(value)) {
    if (s.minItems !== undefined && value.length < s.minItems) errors.push(`${at}: fewer than ${s.minItems} items`);
    if (s.maxItems !== undefined && value.length > s.maxItems) errors.push(`${at}: more than ${s.maxItems} items`);
    if (s.items) value.forEach((v, i) => errors.push(...schemaErrors(v, s.items, `${at}[${i}]`, root)));
  }
  return errors;
}

test("there is a case for every presentation rule group", () => {
  assert.ok(cases.length >= 12, cases.join(", "));
});

test("the schema refuses a row it does not describe", () => {
  const bad = [{ date: "2026-01-01", sections: [{ plugin: "x", name: "X", rows: [{ type: "value", colour: "green" }] }] }];
  assert.notDeepEqual(schemaErrors(bad, schema), []);
  const badChange = [{ date: "2026-01-01", sections: [{ plugin: "x", name: "X", rows: [{ type: "status", status: "happy", note: "", date: null }] }] }];
  assert.notDeepEqual(schemaErrors(badChange, schema), []);
});

for (const file of cases) {
  test(`days case ${file.slice(0, -5)}`, () => {
    const c = JSON.parse(fs.readFileSync(path.join(DAYS, file), "utf8"));
    assert.deepEqual(validateManifest(c.manifest), [], "the case's manifest passes");
    assert.deepEqual(schemaErrors(c.expect, schema), [], "expect follows schema.json");
    const got = renderDays(c.manifest, c.records, { from: c.from, to: c.to, today: c.today, language: c.language, status: c.status });
    assert.deepEqual(got, c.expect, c.description);
  });
}

const drawnCase = (name) => {
  const c = JSON.parse(fs.readFileSync(path.join(DAYS, `${name}.json`), "utf8"));
  return { c, days: renderDays(c.manifest, c.records, { from: c.from, to: c.to, today: c.today, language: c.language, status: c.status }) };
};
// What a sighted reader sees: the spoken words for screen readers left out.
const visibleText = (html) => html.replace(/<span class="sr-only[^"]*">[^<]*<\/span>/g, "").replace(/<[^>]*>/g, " ").replace(/\s+/g, " ").trim();

test("the page draws a happened event's series name once, and each value figure beside its field label", () => {
  const { c, days } = drawnCase("event-value-was-label");
  const html = daysHtml(days, { title: "Auctions", today: c.today });
  const eventRows = html.match(/<li class="row event happened"[^>]*>.*?<\/li>/g) ?? [];
  const withFigure = eventRows.filter((row) => row.includes('class="fig"'));
  assert.ok(withFigure.length >= 2, "the case draws happened events with a value");
  for (const row of withFigure) {
    const text = visibleText(row);
    assert.equal(text.split("Dollar auction").length - 1, 1, text);
  }
  const value = drawnCase("value-in-force-and-last-rate");
  const valueRow = daysHtml(value.days, { title: "Rates", today: value.c.today }).match(/<li class="row value normal"[^>]*>.*?<\/li>/)[0];
  assert.match(visibleText(valueRow), /^US dollar Buy 58\.13 Sell 59\.00 BCRD$/);
});

test("figures round on the decimal text the source printed (15.905 -> 15.91), every digit written", () => {
  const cases = { 15.905: "15.91", 67.095: "67.10", 2.675: "2.68", "-2.675": "-2.68", 1.005: "1.01", 0.125: "0.13", "-0.001": "0.00", "-0.005": "-0.01", 99.995: "100.00", 1e21: "1000000000000000000000.00", 1e-7: "0.00" };
  for (const [x, text] of Object.entries(cases)) assert.equal(twoDecimals(Number(x)), text, x);
  assert.equal(twoDecimals(-0), "0.00");
});
