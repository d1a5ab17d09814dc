// Federal Reserve Board press releases, as items linking to the Board's own pages.
//
// Two feeds, two series: `monetary-policy` from press_monetary.xml, and `board-announcements`
// from press_all.xml without its Monetary Policy items (already in the first series) and without
// Enforcement Actions, whose titles can name private persons (a plug-in must carry no personal
// data). A category the plug-in does not know stops the run so a person can decide.
//
// Links: the feeds give http://www.federalreserve.gov/... addresses. Each is upgraded to https
// on the same host (the site serves every page over https) and query and fragment are dropped.
// The host is the sources' own host, so no links.hosts entry is needed.
//
// Protocol (spec "Fetcher process interface"): run context JSON on stdin, one record per line on
// stdout, exit 2 with one line on stderr when a feed is not what this plug-in knows.

import { readFileSync } from 'node:fs';
import { parseFeed, SourceError } from './rss.mjs';

const HOST = 'www.federalreserve.gov';
const MONETARY = 'Monetary Policy';
const ANNOUNCEMENTS = new Set([
  'Banking and Consumer Regulatory Policy',
  'Orders on Banking Applications',
  'Other Announcements',
]);
const LEFT_OUT = new Set([MONETARY, 'Enforcement Actions']);
const FEEDS = [
  { source: 'press-monetary', series: 'monetary-policy', keep: (keyword) => keyword === MONETARY },
  { source: 'press-all', series: 'board-announcements', keep: (keyword) => ANNOUNCEMENTS.has(keyword) },
];

/** The https address on the Board's host, or a SourceError for any other host. */
function boardLink(link, where) {
  let url;
  try {
    url = new URL(link);
  } catch {
    throw new SourceError(`${where}: link "${link}" is not an address`);
  }
  if (!['http:', 'https:'].includes(url.protocol) || url.hostname !== HOST || url.port !== '') {
    throw new SourceError(`${where}: link "${link}" is not on ${HOST}`);
  }
  return `https://${HOST}${url.pathname}`;
}

/** A stable id from the page's path: /newsevents/press/monetary/20160804a.htm -> press-monetary-20160804a. */
function itemId(path) {
  const id = path
    .replace(/^\/newsevents\//, '')
    .replace(/\.html?$/, '')
    .replace(/[^A-Za-z0-9_.-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .toLowerCase();
  return id.length > 64 ? id.slice(-64) : id;
}

/** The calendar date in New York of an ISO 8601 moment with an offset. */
function newYorkDate(published, where) {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?([+-]\d{2}:\d{2}|Z)$/.test(published)) {
    throw new SourceError(`${where}: dc:date "${published}" has no time zone offset`);
  }
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone: 'America/New_York',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
    })
      .formatToParts(new Date(published))
      .map((part) => [part.type, part.value]),
  );
  return `${parts.year}-${parts.month}-${parts.day}`;
}

function plainTitle(title) {
  const text = title.replace(/\s+/g, ' ').trim();
  return [...text].length > 200 ? `${[...text].slice(0, 199).join('')}…` : text;
}

function records(context) {
  const lines = [];
  const from = context.backfill && context.backfillFrom ? context.backfillFrom : '0000-01-01';
  for (const feed of FEEDS) {
    const path = context.sources?.[feed.source];
    if (typeof path !== 'string') throw new SourceError(`the run context names no source ${feed.source}`);
    const seen = new Set();
    const rows = [];
    for (const [index, item] of parseFeed(readFileSync(path, 'utf8'), feed.source).entries()) {
      const where = `${feed.source}: item ${index + 1}`;
      if (!feed.keep(item.keyword)) {
        if (LEFT_OUT.has(item.keyword) && feed.source === 'press-all') continue;
        throw new SourceError(`${where} has category "${item.keyword}", unknown to this plug-in`);
      }
      const url = boardLink(item.link, where);
      const id = itemId(new URL(url).pathname);
      const date = newYorkDate(item.published, where);
      const title = plainTitle(item.title);
      if (!id || !title) throw new SourceError(`${where} has no usable id or title`);
      if (seen.has(`${date} ${id}`)) throw new SourceError(`${where} repeats ${id}`);
      seen.add(`${date} ${id}`);
      if (date < from || date > context.today) continue;
      rows.push({ kind: 'item', series: feed.series, date, id, title, url });
    }
    // Oldest first, then by id: the same feed gives the same bytes whatever its own order.
    rows.sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    for (const row of rows) lines.push(JSON.stringify(row));
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
