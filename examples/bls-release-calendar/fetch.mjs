// US BLS release calendar: one event per VEVENT of the BLS news release schedule (bls.ics).
// The event id is the VEVENT's UID, which identifies an event across changes in iCalendar, so
// a release rescheduled with the same UID is the same event on a new date (shown as moved).
//
// The file's times use the non-IANA zone name "US-Eastern", defined in its own VTIMEZONE. This
// plug-in accepts it only when that VTIMEZONE is US Eastern time (UTC-5, UTC-4 in summer), and
// then reads it as America/New_York, the manifest zone: dates are used exactly as written.
//
// Protocol (spec "Fetcher process interface"): run context JSON on stdin, one record per line on
// stdout, exit 2 with one line on stderr when the file is not what this plug-in knows.

import { readFileSync } from 'node:fs';
import { parseCalendar, SourceError, unescapeText } from './ics.mjs';

const SOURCE = 'bls-ics';
const EASTERN_NAMES = new Set(['US-Eastern', 'America/New_York']);
const PRINCIPAL_INDICATORS = new Set([
  'Consumer Price Index',
  'Employment Cost Index',
  'Employment Situation',
  'Producer Price Index',
  'Productivity and Costs',
  'Real Earnings',
  'U.S. Import and Export Price Indexes',
]);
const LOCAL_TIME = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})$/;

function one(component, name, where) {
  const values = component.properties.get(name) ?? [];
  if (values.length !== 1) throw new SourceError(`${SOURCE}: ${where} has ${values.length} ${name} lines, expected 1`);
  return values[0];
}

function checkTimeZones(calendar) {
  for (const zone of calendar.components.filter((component) => component.type === 'VTIMEZONE')) {
    const name = one(zone, 'TZID', 'a VTIMEZONE').value;
    if (!EASTERN_NAMES.has(name)) continue;
    const offsets = new Map(
      zone.children.map((rule) => [rule.type, one(rule, 'TZOFFSETTO', `VTIMEZONE ${name}`).value]),
    );
    if (offsets.get('STANDARD') !== '-0500' || offsets.get('DAYLIGHT') !== '-0400') {
      throw new SourceError(`${SOURCE}: time zone ${name} is not US Eastern time (-0500/-0400)`);
    }
  }
}

/** The moment `now` as a local New York "YYYYMMDDTHHMMSS", comparable with DTSTART values. */
function newYorkLocal(now) {
  const instant = new Date(now);
  if (Number.isNaN(instant.getTime())) throw new Error(`the run context's now "${now}" is not a time`);
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone: 'America/New_York',
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    })
      .formatToParts(instant)
      .map((part) => [part.type, part.value]),
  );
  return `${parts.year}${parts.month}${parts.day}T${parts.hour}${parts.minute}${parts.second}`;
}

function clock(hours, minutes) {
  const hour = Number(hours);
  const twelve = hour % 12 === 0 ? 12 : hour % 12;
  return `${twelve}:${minutes} ${hour < 12 ? 'a.m.' : 'p.m.'}`;
}

function readEvents(calendar) {
  const prodid = calendar.properties.get('PRODID')?.[0]?.value ?? '';
  if (!prodid.includes('Bureau of Labor Statistics')) {
    throw new SourceError(`${SOURCE}: PRODID "${prodid}" is not the BLS release schedule`);
  }
  checkTimeZones(calendar);
  const events = [];
  const seen = new Set();
  for (const component of calendar.components.filter((c) => c.type === 'VEVENT')) {
    const uid = one(component, 'UID', 'a VEVENT').value.trim().toLowerCase();
    const where = `event ${uid}`;
    if (!/^[a-z0-9@._-]{1,64}$/.test(uid)) throw new SourceError(`${SOURCE}: UID "${uid}" cannot be an event id`);
    if (seen.has(uid)) throw new SourceError(`${SOURCE}: UID ${uid} appears twice`);
    seen.add(uid);
    const start = one(component, 'DTSTART', where);
    const match = LOCAL_TIME.exec(start.value);
    if (!match || !EASTERN_NAMES.has(start.parameters.TZID)) {
      throw new SourceError(`${SOURCE}: ${where} starts at "${start.value}" outside US-Eastern local time`);
    }
    const date = `${match[1]}-${match[2]}-${match[3]}`;
    const check = new Date(`${date}T00:00:00Z`);
    if (Number.isNaN(check.getTime()) || check.toISOString().slice(0, 10) !== date) {
      throw new SourceError(`${SOURCE}: ${where} has no real date (${start.value})`);
    }
    const name = unescapeText(one(component, 'SUMMARY', where).value).replace(/\s+/g, ' ').trim();
    if (!name || /[<>]/.test(name)) throw new SourceError(`${SOURCE}: ${where} has no plain-text SUMMARY`);
    const status = (component.properties.get('STATUS')?.[0]?.value ?? 'CONFIRMED').toUpperCase();
    if (!['CONFIRMED', 'TENTATIVE', 'CANCELLED'].includes(status)) {
      throw new SourceError(`${SOURCE}: ${where} has an unknown STATUS ${status}`);
    }
    events.push({ uid, date, local: start.value, name, time: clock(match[4], match[5]), status });
  }
  if (events.length === 0) throw new SourceError(`${SOURCE}: the calendar has no VEVENT`);
  return events;
}

function records(context) {
  const path = context.sources?.[SOURCE];
  if (typeof path !== 'string') throw new SourceError(`the run context names no source ${SOURCE}`);
  const events = readEvents(parseCalendar(readFileSync(path, 'utf8'), SOURCE));
  const now = newYorkLocal(context.now);
  const from = context.backfill && context.backfillFrom ? context.backfillFrom : '0000-01-01';
  events.sort((a, b) => (a.local < b.local ? -1 : a.local > b.local ? 1 : a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0));
  const lines = [];
  // The file is the BLS's whole schedule for its years: print all of it every run.
  for (const event of events) {
    if (event.date < from) continue;
    let state = event.local <= now ? 'happened' : 'scheduled';
    if (event.status === 'CANCELLED') {
      if (event.date > context.today) continue; // a cancelled event may not be dated after today
      state = 'cancelled';
    }
    lines.push(
      JSON.stringify({
        kind: 'event',
        series: PRINCIPAL_INDICATORS.has(event.name) ? 'principal-indicators' : 'other-releases',
        id: event.uid,
        date: event.date,
        state,
        title: `${event.name}, ${event.time} ET`.slice(0, 200),
      }),
    );
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
