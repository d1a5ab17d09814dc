// preview --html looks like the web calendar: the tool embeds the calendar's stylesheet block
// as it stands in almanac.css, and draws each row with the calendar's own markup.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { CALENDAR_CSS, daysHtml } from "../../tool/almanac-plugin.mjs";

const CSS = fs.readFileSync(new URL("../../src/almanac/api/pages/static/almanac.css", import.meta.url), "utf8");
const ROWS = fs.readFileSync(new URL("../../src/almanac/api/pages/templates/_rows.html", import.meta.url), "utf8");

test("the embedded stylesheet is the calendar's shared block, word for word", () => {
  const begin = CSS.indexOf("/* shared with the tool: begin */");
  const end = CSS.indexOf("/* shared with the tool: end */") + "/* shared with the tool: end */".length;
  assert.ok(begin >= 0 && end > begin, "almanac.css marks its shared block");
  assert.equal(CALENDAR_CSS, CSS.slice(begin, end));
});

test("rows carry the classes and parts the calendar's full_row macro draws", () => {
  const days = [
    { date: "2026-06-05", sections: [{ plugin: "p", name: "Rates", rows: [
      { type: "value", series: "usd", style: "normal", label: "US dollar", figures: [{ label: "Buy", text: "58.20", spoken: "58.20 Dominican pesos" }], change: { text: "+0.50%" }, note: null, attribution: "BCRD" },
      { type: "event", series: "mpc", state: "scheduled", label: "Meeting", figures: [], change: null, note: "Scheduled", attribution: null },
    ] }] },
    { date: "2026-06-06", sections: [] },
    { date: "2026-06-07", sections: [] },
  ];
  const html = daysHtml(days, { title: "Rates", today: "2026-06-07" });
  for (const part of ['class="row value normal"', 'data-type="value"', 'data-series="usd"', '<span class="lab">Buy</span>', '<span class="num" aria-hidden="true">58.20</span>', '<span class="sr-only spoken">58.20 Dominican pesos</span>', '<span class="attr">BCRD</span>', '<span class="marker" aria-hidden="true">◆</span>', 'class="section-name"', 'class="agenda"']) {
    assert.ok(html.includes(part), part);
  }
  // The macro draws the same parts (its Jinja form).
  for (const part of ['<li class="row {{ r[\'type\'] }}', "data-type=", "data-series=", '<span class="lab">', '<span class="num" aria-hidden="true">', '<span class="sr-only spoken">', '<span class="attr">', '<span class="marker" aria-hidden="true">◆</span>', 'class="section-name"', '<ul class="rows">']) {
    assert.ok(ROWS.includes(part), part);
  }
  assert.ok(!html.includes('data-date="2026-06-06"'), "an empty day stays out, as in the agenda");
  assert.ok(!/Nothing/.test(html));
  assert.match(html, /<li class="agenda-day today" data-date="2026-06-07"><h2>Sunday 7 June 2026 <span class="today-mark">Today<\/span><\/h2><\/li>/);
});
