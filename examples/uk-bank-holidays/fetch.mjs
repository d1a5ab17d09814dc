// UK bank holidays: one event series per division of GOV.UK's bank-holidays.json. A holiday on
// or before today has happened; a later one is scheduled. The event id is the title's slug plus
// the year, so a holiday GOV.UK moves within its year keeps its id and shows as moved.
//
// Protocol (spec "Fetcher process interface"): run context JSON on stdin, one record per line on
// stdout, exit 2 with one line on stderr when the file is not what this plug-in knows.

import { readFileSync } from 'node:fs';
import { DIVISIONS, parseBankHolidays, SourceError } from './holidays.mjs';

const SOURCE = 'bank-holidays-json';

function slug(text) {
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[’']/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

function eventId(title, date) {
  // At most 64 characters: a 58-character slug, a hyphen and the year.
  return `${slug(title).slice(0, 58).replace(/-+$/, '')}-${date.slice(0, 4)}`;
}

function records(context) {
  const path = context.sources?.[SOURCE];
  if (typeof path !== 'string') throw new SourceError(`the run context names no source ${SOURCE}`);
  const divisions = parseBankHolidays(readFileSync(path, 'utf8'), SOURCE);
  const from = context.backfill && context.backfillFrom ? context.backfillFrom : '0000-01-01';
  const lines = [];
  // The file is small: every run prints all of it, which covers the whole snapshot window.
  for (const division of DIVISIONS) {
    const seen = new Set();
    const events = [...divisions.get(division)].sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0));
    for (const event of events) {
      const id = eventId(event.title, event.date);
      if (seen.has(id)) {
        throw new SourceError(`${SOURCE}: ${division} lists "${event.title}" twice in ${event.date.slice(0, 4)}`);
      }
      seen.add(id);
      if (event.date < from) continue;
      const title = event.notes ? `${event.title} (${event.notes.toLowerCase()})` : event.title;
      lines.push(
        JSON.stringify({
          kind: 'event',
          series: division,
          id,
          date: event.date,
          state: event.date <= context.today ? 'happened' : 'scheduled',
          title: title.slice(0, 200),
        }),
      );
    }
  }
  return lines;
}

try {
  const context = JSON.parse(readFileSync(0, 'utf8'));
  const lines = records(context);
  process.stdout.write(lines.length ? `${lines.join('\n')}\n` : '');
} catch (error) {
  process.stderr.write(`${String(error.message).split('\n')[0]}\n`);
  process.exitCode = error instanceof SourceError ? 2 : 1;
}
