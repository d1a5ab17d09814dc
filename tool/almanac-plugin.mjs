#!/usr/bin/env node
// almanac-plugin.mjs: the Almanac plug-in developers' tool. One file, Node 24, no dependencies.
//
//   node almanac-plugin.mjs help
//
// Sections: constants and catalog, small helpers, manifest rules, record rules, digest,
// imports, zip writer, guard/runner, check, preview renderer, downloads (probe), init
// templates, commands, CLI. The file can be imported (tests use renderDays, validateManifest,
// validateRecords, computeDigest, ...) and run as a program.

import { createHash, X509Certificate } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as zlib from "node:zlib";
import { spawn } from "node:child_process";
import { builtinModules } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";

// ---------------------------------------------------------------------------------------------
// Constants and the problem catalog
// ---------------------------------------------------------------------------------------------

export const TOOL_VERSION = "1.5.0";
export const CONTRACT = 1;
/** Default address of the service when ALMANAC_BASE_URL is not set (same as the server's). */
export const DEFAULT_BASE_URL = "http://127.0.0.1:8000";

export function baseUrl(env = process.env) {
  return (env.ALMANAC_BASE_URL || DEFAULT_BASE_URL).replace(/\/+$/, "");
}

// The catalog: the same entries as src/almanac/platform/contract/problems.json (a test fails
// when they differ). BEGIN CATALOG
export const CATALOG = [
  {"code": "PLG-INVALID", "severity": "error", "area": "manifest", "title": "Generic contract 1 violation", "fix": "Change the plug-in so it follows contract 1 as the message describes.", "retired": false},
  {"code": "PLG-MANIFEST-INVALID-JSON", "severity": "error", "area": "manifest", "title": "plugin.json is not JSON", "fix": "Make plugin.json valid JSON (UTF-8, no comments, no trailing commas).", "retired": false},
  {"code": "PLG-MANIFEST-NOT-OBJECT", "severity": "error", "area": "manifest", "title": "The manifest is not one JSON object", "fix": "Make plugin.json a single JSON object { ... }.", "retired": false},
  {"code": "PLG-MANIFEST-UNKNOWN-KEY", "severity": "error", "area": "manifest", "title": "A key contract 1 does not know", "fix": "Remove the key or correct its spelling; only $schema may be added.", "retired": false},
  {"code": "PLG-MANIFEST-CONTRACT", "severity": "error", "area": "manifest", "title": "contract is not 1", "fix": "Set \"contract\": 1.", "retired": false},
  {"code": "PLG-MANIFEST-ID", "severity": "error", "area": "manifest", "title": "The id breaks the id rule", "fix": "Use 2 to 48 lowercase letters, digits and hyphens, starting with a letter.", "retired": false},
  {"code": "PLG-MANIFEST-NAME", "severity": "error", "area": "manifest", "title": "A name is missing or too long", "fix": "Give a Names object keyed by language code, each value 1 to 80 characters, with an en entry.", "retired": false},
  {"code": "PLG-MANIFEST-VERSION", "severity": "error", "area": "manifest", "title": "The version is not major.minor.patch", "fix": "Write the version as three dot-separated non-negative integers, such as 1.0.0.", "retired": false},
  {"code": "PLG-MANIFEST-TIMEZONE", "severity": "error", "area": "manifest", "title": "Not a named IANA time zone", "fix": "Use a named IANA zone such as Europe/Berlin; offsets such as +01:00 are refused.", "retired": false},
  {"code": "PLG-MANIFEST-AUDIENCE", "severity": "error", "area": "manifest", "title": "The audience is not public, private or local", "fix": "Set audience to public, private or local.", "retired": false},
  {"code": "PLG-MANIFEST-SCHEDULE", "severity": "error", "area": "manifest", "title": "The schedule is not a five-field cron", "fix": "Write the schedule as five cron fields (minute hour day-of-month month day-of-week), at most 100 characters.", "retired": false},
  {"code": "PLG-MANIFEST-BACKFILL", "severity": "error", "area": "manifest", "title": "backfill is not all or a window", "fix": "Set backfill to \"all\" or a window such as \"90d\" or \"2y\" (1 to 4 digits, then d or y).", "retired": false},
  {"code": "PLG-MANIFEST-SOURCES", "severity": "error", "area": "manifest", "title": "A source is malformed", "fix": "Give each source a unique name (a Key), a url and, optionally, maxBytes from 1 to 20971520; at most 16 sources.", "retired": false},
  {"code": "PLG-MANIFEST-SOURCE-URL", "severity": "error", "area": "manifest", "title": "A source URL is not https with a lowercase host", "fix": "Use an https URL with a lowercase host name (no IP address, no user name or password), at most 500 characters; only {today}, {year} and {month} may be filled in.", "retired": false},
  {"code": "PLG-MANIFEST-SERIES", "severity": "error", "area": "manifest", "title": "A series is malformed", "fix": "Give each series a unique key, a kind, a cadence, dates and a name; value series need 1 to 16 fields; see the message for the field.", "retired": false},
  {"code": "PLG-MANIFEST-LINKS", "severity": "error", "area": "manifest", "title": "links.hosts is malformed", "fix": "Give links.hosts as an array of at most 16 lowercase host names, each at most 253 characters.", "retired": false},
  {"code": "PLG-MANIFEST-LIMITS", "severity": "error", "area": "manifest", "title": "A limit is out of range", "fix": "Set limits.seconds from 1 to 120 and limits.megabytes from 16 to 256, or leave them out.", "retired": false},
  {"code": "PLG-MANIFEST-LICENCE", "severity": "error", "area": "manifest", "title": "The licence block is incomplete", "fix": "Give licence.holder (1 to 200 characters), licence.terms (text up to 500 characters, or null) and licence.retain (yes, no or unknown); attribution is optional, 1 to 40 characters.", "retired": false},
  {"code": "PLG-ID-RESERVED", "severity": "error", "area": "manifest", "title": "The id is reserved", "fix": "Choose another id: store, publish, search, markets, the service's own path words and ids starting with almanac, alm-, chk- or test- are reserved.", "retired": false},
  {"code": "PLG-LISTING-INVALID", "severity": "error", "area": "listing", "title": "The listing is not a listing", "fix": "Make listing.json one JSON object with \"listing\": 1 and only the keys of the listing table.", "retired": false},
  {"code": "PLG-LISTING-ID", "severity": "error", "area": "listing", "title": "The listing's plugin differs from the manifest id", "fix": "Set listing.plugin to the manifest id.", "retired": false},
  {"code": "PLG-LISTING-PUBLISHER", "severity": "error", "area": "listing", "title": "No publisher domain", "fix": "Set publisher.domain to your organization's verified domain.", "retired": false},
  {"code": "PLG-LISTING-TAGLINE", "severity": "error", "area": "listing", "title": "Tagline missing or too long", "fix": "Give a one-line tagline per language, at most 80 characters each, with an en entry.", "retired": false},
  {"code": "PLG-LISTING-DESCRIPTION", "severity": "error", "area": "listing", "title": "Description missing or too long", "fix": "Give a plain-text description per language, at most 2,000 characters each, with an en entry.", "retired": false},
  {"code": "PLG-LISTING-LANGUAGE-MISSING", "severity": "error", "area": "listing", "title": "No English text", "fix": "Add an en entry to every per-language text of the listing.", "retired": false},
  {"code": "PLG-LISTING-CATEGORY", "severity": "error", "area": "listing", "title": "Unknown category", "fix": "Choose one of the listed categories.", "retired": false},
  {"code": "PLG-LISTING-KEYWORDS", "severity": "error", "area": "listing", "title": "Too many keywords", "fix": "Give at most 12 keywords, each at most 30 characters.", "retired": false},
  {"code": "PLG-LISTING-LINK", "severity": "error", "area": "listing", "title": "A link is not https", "fix": "Use https for every link in the listing.", "retired": false},
  {"code": "PLG-NO-PRIVACY-POLICY", "severity": "error", "area": "listing", "title": "No privacy policy link", "fix": "Set links.privacy to the https address of your privacy policy.", "retired": false},
  {"code": "PLG-NO-SUPPORT-CONTACT", "severity": "error", "area": "listing", "title": "No support url or e-mail", "fix": "Set links.support to an object with a url, an email, or both.", "retired": false},
  {"code": "PLG-LISTING-SOURCE", "severity": "error", "area": "listing", "title": "A listed source is not declared or is incomplete", "fix": "List every declared source once with name, title, page and licence (name and url).", "retired": false},
  {"code": "PLG-LISTING-EXAMPLE", "severity": "error", "area": "listing", "title": "Example days are wrong", "fix": "Give 1 to 3 example days, each a date the fixtures cover, with an en caption.", "retired": false},
  {"code": "PLG-LISTING-ICON", "severity": "error", "area": "listing", "title": "The icon is not a 256x256 PNG of at most 64 KB", "fix": "Put a 256x256 PNG of at most 64 KB at listing/icon.png.", "retired": false},
  {"code": "PLG-RECORD-TODAY", "severity": "error", "area": "record", "title": "The run context had no valid today", "fix": "The service built a bad run context; report this to the service operator.", "retired": false},
  {"code": "PLG-RECORD-TOO-MANY", "severity": "error", "area": "record", "title": "More than 250,000 records", "fix": "Print at most 250,000 records in one run; narrow the backfill window.", "retired": false},
  {"code": "PLG-RECORD-INVALID", "severity": "error", "area": "record", "title": "A record breaks contract 1", "fix": "Print each record as one JSON object with the required fields, real dates (YYYY-MM-DD) and finite numbers.", "retired": false},
  {"code": "PLG-RECORD-SERIES", "severity": "error", "area": "record", "title": "Series not declared, or kind differs", "fix": "Use a series key declared in the manifest, with the kind it was declared with.", "retired": false},
  {"code": "PLG-RECORD-UNKNOWN-KEY", "severity": "error", "area": "record", "title": "A key the record kind does not have", "fix": "Remove the key; each record kind accepts only its own keys.", "retired": false},
  {"code": "PLG-RECORD-AFTER-TODAY", "severity": "error", "area": "record", "title": "A record is dated after today", "fix": "Date records on or before today from the run context; only a scheduled event may be after today.", "retired": false},
  {"code": "PLG-RECORD-LINK", "severity": "error", "area": "record", "title": "An item link is not https to an allowed host", "fix": "Link items over https to a source host or a host listed in links.hosts, at most 1,000 characters.", "retired": false},
  {"code": "PLG-RECORD-REPEATED", "severity": "error", "area": "record", "title": "The same record key twice in one run", "fix": "Print each record key once per run (an event id only once).", "retired": false},
  {"code": "PLG-FOLDER-ID", "severity": "error", "area": "folder", "title": "The folder name differs from the id", "fix": "Name the folder exactly as the manifest id.", "retired": false},
  {"code": "PLG-FETCH-MISSING", "severity": "error", "area": "folder", "title": "No fetch.mjs", "fix": "Put the fetcher at fetch.mjs at the top of the plug-in folder.", "retired": false},
  {"code": "PLG-IMPORT-OUTSIDE", "severity": "error", "area": "folder", "title": "Import from outside the folder", "fix": "Import only your own modules inside the plug-in folder.", "retired": false},
  {"code": "PLG-IMPORT-PACKAGE", "severity": "error", "area": "folder", "title": "Import of an undeclared package", "fix": "Import only your own files and node: built-in modules (write node:fs, not fs).", "retired": false},
  {"code": "PLG-FIXTURE-SOURCE-MISSING", "severity": "error", "area": "folder", "title": "No fixture file for a declared source", "fix": "Put a real copy of each declared source at fixtures/sources/<source name>.", "retired": false},
  {"code": "PLG-FIXTURE-CONTEXT-INVALID", "severity": "error", "area": "folder", "title": "context.json is invalid", "fix": "Give fixtures/context.json a now (ISO instant) and a today equal to the date of now in the manifest zone.", "retired": false},
  {"code": "PLG-FIXTURE-RECORDS-MISSING", "severity": "error", "area": "folder", "title": "No fixtures/records.jsonl", "fix": "Run check --update to write fixtures/records.jsonl, then read it.", "retired": false},
  {"code": "PLG-FIXTURE-MISMATCH", "severity": "error", "area": "folder", "title": "Output differs from fixtures/records.jsonl", "fix": "Fix the fetcher, or run check --update if the new output is right.", "retired": false},
  {"code": "PLG-RUN-FAILED", "severity": "error", "area": "run", "title": "The fetcher exited non-zero", "fix": "Read the fetcher's last stderr line and fix the cause.", "retired": false},
  {"code": "PLG-RUN-KILLED", "severity": "error", "area": "run", "title": "The fetcher was stopped at its limits", "fix": "Make the fetcher finish within its time, memory and output limits.", "retired": false},
  {"code": "PLG-RUN-NETWORK", "severity": "error", "area": "run", "title": "The fetcher tried the network", "fix": "Read only the files named in the run context's sources; the fetcher has no network.", "retired": false},
  {"code": "PLG-RUN-EXPECTED-FAILURE", "severity": "error", "area": "run", "title": "A failing case did not fail as expected", "fix": "Make the fetcher exit non-zero with the expected reason on its last stderr line, printing no records.", "retired": false},
  {"code": "PLG-RUN-READ-OUTSIDE", "severity": "error", "area": "run", "title": "The fetcher read a file outside its folder and sources", "fix": "Read only your own files and the paths in the run context's sources.", "retired": false},
  {"code": "PLG-ID-TAKEN", "severity": "error", "area": "upload", "title": "Another publisher has the id", "fix": "Choose another id.", "retired": false},
  {"code": "PLG-ID-RETIRED", "severity": "error", "area": "upload", "title": "The id was retired", "fix": "Choose another id; retired ids are never used again.", "retired": false},
  {"code": "PLG-STORE-AUDIENCE", "severity": "error", "area": "upload", "title": "A store plug-in is not public", "fix": "Set audience to public to list the plug-in in the store.", "retired": false},
  {"code": "PLG-LICENCE-TERMS-MISSING", "severity": "error", "area": "upload", "title": "licence.terms is missing for a store plug-in", "fix": "Quote or link the holder's terms in licence.terms.", "retired": false},
  {"code": "PLG-SCHEDULE-TOO-FREQUENT", "severity": "error", "area": "upload", "title": "More than 24 runs a day", "fix": "Choose a schedule that runs at most 24 times on any day.", "retired": false},
  {"code": "PLG-QUOTA-UPLOADS", "severity": "error", "area": "upload", "title": "Over 20 uploads a day", "fix": "Wait until tomorrow to upload again.", "retired": false},
  {"code": "PLG-ZIP-TOO-LARGE", "severity": "error", "area": "zip", "title": "The archive is too large", "fix": "Keep the archive at most 8 MiB.", "retired": false},
  {"code": "PLG-ZIP-NOT-ZIP", "severity": "error", "area": "zip", "title": "Not a ZIP archive", "fix": "Upload the ZIP written by the tool's pack command.", "retired": false},
  {"code": "PLG-ZIP-PREPENDED", "severity": "error", "area": "zip", "title": "Data before the archive's first file", "fix": "Upload the ZIP as pack wrote it, with nothing before it.", "retired": false},
  {"code": "PLG-ZIP-MULTI-DISK", "severity": "error", "area": "zip", "title": "Split or spanned archive", "fix": "Upload one single-part ZIP.", "retired": false},
  {"code": "PLG-ZIP-ZIP64", "severity": "error", "area": "zip", "title": "ZIP64 archive", "fix": "Upload a plain ZIP (not ZIP64), as pack writes it.", "retired": false},
  {"code": "PLG-ZIP-ENCRYPTED", "severity": "error", "area": "zip", "title": "An encrypted entry", "fix": "Upload an archive with no encrypted entries.", "retired": false},
  {"code": "PLG-ZIP-METHOD", "severity": "error", "area": "zip", "title": "Compression other than deflate or stored", "fix": "Compress entries with deflate (8) or store them (0).", "retired": false},
  {"code": "PLG-ZIP-TOO-MANY-ENTRIES", "severity": "error", "area": "zip", "title": "More than 500 entries", "fix": "Keep the archive at most 500 files.", "retired": false},
  {"code": "PLG-ZIP-UNCOMPRESSED-TOO-LARGE", "severity": "error", "area": "zip", "title": "Uncompressed size above its limit", "fix": "Keep the unpacked files within 32 MiB, code within 1 MiB, and each entry's compression ratio at most 100 to 1.", "retired": false},
  {"code": "PLG-RETIRE-CONFIRM", "severity": "error", "area": "portal", "title": "Retire without typing the id", "fix": "Type the plug-in id to confirm retiring it.", "retired": false},
  {"code": "AGENT_MAY_NOT_PUBLISH", "severity": "error", "area": "portal", "title": "The agent may not publish", "fix": "Ask an owner or admin to publish, or to approve an agent allowed to publish.", "retired": false},
  {"code": "AGENT_FORBIDDEN", "severity": "error", "area": "portal", "title": "Agents may not do this", "fix": "A person must do this in the portal.", "retired": false},
  {"code": "PLG-CODE-SYMLINK", "severity": "error", "area": "code", "title": "A symbolic link in the plug-in folder", "fix": "Replace the link with the file itself; links are never followed.", "retired": false},
  {"code": "PLG-CODE-FILE-TYPE", "severity": "error", "area": "code", "title": "A code file of a kind not allowed", "fix": "Keep only .mjs, .json, .md, .txt and LICENSE files outside fixtures/ and listing/.", "retired": false},
  {"code": "PLG-UPDATE-TIMEZONE", "severity": "error", "area": "update", "title": "The update changes the time zone", "fix": "Keep the time zone of the published version; publish a new plug-in for another zone.", "retired": false},
  {"code": "PLG-UPDATE-SERIES-KIND", "severity": "error", "area": "update", "title": "The update changes a series' kind", "fix": "Keep the series' kind; add a series with a new key instead.", "retired": false},
  {"code": "PLG-UPDATE-SERIES-UNIT", "severity": "error", "area": "update", "title": "The update changes a series' unit", "fix": "Keep the series' unit; add a series with a new key instead.", "retired": false},
  {"code": "PLG-UPDATE-SERIES-DATES", "severity": "error", "area": "update", "title": "The update changes a series' dates", "fix": "Keep the series' dates; add a series with a new key instead.", "retired": false},
  {"code": "PLG-UPDATE-SERIES-REMOVED", "severity": "warning", "area": "update", "title": "The update removes a series", "fix": "Its records are kept; check that readers no longer need the series.", "retired": false},
  {"code": "PLG-UPDATE-FIELD-REMOVED", "severity": "warning", "area": "update", "title": "The update removes a field", "fix": "Stored records keep the field; check that readers no longer need it.", "retired": false},
  {"code": "PLG-UPDATE-SOURCE-HOST-ADDED", "severity": "warning", "area": "update", "title": "The update adds a source host", "fix": "The reviewer will check the new host is the same data holder's.", "retired": false},
  {"code": "PLG-README-TEMPLATE", "severity": "warning", "area": "folder", "title": "README.md is still the template", "fix": "Describe the plug-in, its sources and its terms in README.md.", "retired": false},
  {"code": "PLG-CONTEXT-INVALID", "severity": "error", "area": "record", "title": "The run context is invalid", "fix": "The service built a bad run context; report this to the service operator.", "retired": false},
  {"code": "PLG-RUN-NOT-DETERMINISTIC", "severity": "error", "area": "run", "title": "The fetcher printed different output for the same files", "fix": "Print the same bytes for the same files and context: no timestamps, random numbers, system clock or unordered iteration.", "retired": false},
];
// END CATALOG
const CATALOG_BY_CODE = new Map(CATALOG.map((e) => [e.code, e]));

/** A finding: a catalog code, a message naming the field or line, and where it is. */
export function problem(code, message, where = {}) {
  const entry = CATALOG_BY_CODE.get(code);
  if (!entry) throw new Error(`problem code ${code} is not in the catalog`);
  const out = { code, severity: entry.severity, message };
  if (where.path !== undefined && where.path !== null) out.path = where.path;
  if (where.line !== undefined && where.line !== null) out.line = where.line;
  if (where.file !== undefined && where.file !== null) out.file = where.file;
  return out;
}

/** The finding as `check --json` prints it: code, severity, message, fix, docs link. */
export function findingJson(p, base = baseUrl()) {
  const entry = CATALOG_BY_CODE.get(p.code);
  const out = { code: p.code, severity: p.severity, message: p.message, fix: entry.fix, docs: `${base}/docs/problems/${p.code}` };
  if (p.path !== undefined) out.path = p.path;
  if (p.line !== undefined) out.line = p.line;
  if (p.file !== undefined) out.file = p.file;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Small helpers: types, characters, dates in a zone
// ---------------------------------------------------------------------------------------------

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const isInt = (v) => typeof v === "number" && Number.isInteger(v);
const chars = (s) => [...s].length; // code points, as Python's len()
const has = (o, k) => Object.prototype.hasOwnProperty.call(o, k);
const sha256 = (buf) => createHash("sha256").update(buf).digest("hex");

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
/** A real calendar date written YYYY-MM-DD. */
export function isDate(s) {
  if (typeof s !== "string") return false;
  const m = DATE_RE.exec(s);
  if (!m) return false;
  const [y, mo, d] = [+m[1], +m[2], +m[3]];
  if (y < 1 || mo < 1 || mo > 12 || d < 1) return false;
  return d <= daysInMonth(y, mo);
}
function daysInMonth(y, m) {
  return [31, (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1];
}
function dateToDays(s) {
  const [y, m, d] = s.split("-").map(Number);
  const t = new Date(0);
  t.setUTCFullYear(y, m - 1, d);
  return Math.round(t.getTime() / 86400000);
}
function daysToDate(n) {
  const t = new Date(n * 86400000);
  const y = t.getUTCFullYear();
  return `${String(y).padStart(4, "0")}-${String(t.getUTCMonth() + 1).padStart(2, "0")}-${String(t.getUTCDate()).padStart(2, "0")}`;
}
export function addDays(s, n) {
  return daysToDate(dateToDays(s) + n);
}
function shiftYears(s, years) {
  let [y, m, d] = s.split("-").map(Number);
  y += years;
  if (y < 1) return "0001-01-01";
  if (y > 9999) return "9999-12-31";
  if (d > daysInMonth(y, m)) d = daysInMonth(y, m);
  return `${String(y).padStart(4, "0")}-${String(m).padStart(2, "0")}-${String(d).padStart(2, "0")}`;
}
const WINDOW_RE = /^[0-9]{1,4}[dy]$/;
/** First date of a Window counted back from today (29 February -> 28 February). */
export function windowStart(today, window) {
  const n = Number(window.slice(0, -1));
  if (window.endsWith("d")) {
    const out = dateToDays(today) - n;
    return out < dateToDays("0001-01-01") ? "0001-01-01" : daysToDate(out);
  }
  return shiftYears(today, -n);
}

/** Today in the zone at the instant (a Date). */
export function dateInZone(instant, zone) {
  const parts = new Intl.DateTimeFormat("en-US", { timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit" }).formatToParts(instant);
  const get = (t) => parts.find((p) => p.type === t).value;
  return `${get("year").padStart(4, "0")}-${get("month")}-${get("day")}`;
}

/** A named IANA zone (offsets and abbreviation-like names refused). */
export function isNamedZone(zone) {
  if (typeof zone !== "string" || chars(zone) < 1 || chars(zone) > 100) return false;
  if (!/^[A-Za-z][A-Za-z0-9_+\-]*(\/[A-Za-z0-9_+\-]+)*$/.test(zone)) return false;
  if (/^(GMT|UTC)?[+-]\d/.test(zone)) return false;
  try {
    const resolved = new Intl.DateTimeFormat("en-US", { timeZone: zone }).resolvedOptions().timeZone;
    if (/^[+-]/.test(resolved)) return false;
  } catch {
    return false;
  }
  const resolved = canonicalZone(zone);
  if (resolved === zone) return true;
  if (resolved.toLowerCase() === zone.toLowerCase()) return false; // same zone, wrong case
  // A link (Asia/Calcutta, US/Eastern): zone names are written with capitals.
  return zone.split("/").every((seg) => /^[A-Z]/.test(seg));
}
function canonicalZone(zone) {
  return new Intl.DateTimeFormat("en-US", { timeZone: zone }).resolvedOptions().timeZone;
}

/** An ISO 8601 instant with a zone designator (Z or an offset). */
export function parseInstant(s) {
  if (typeof s !== "string" || chars(s) > 40) return null;
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/.test(s)) return null;
  if (!isDate(s.slice(0, 10))) return null;
  const t = new Date(s.replace(/(\.\d{3})\d+/, "$1"));
  return Number.isNaN(t.getTime()) ? null : t;
}

// ---------------------------------------------------------------------------------------------
// Manifest rules ("Resources and their fields": Manifest; "Errors": Manifest and listing)
// ---------------------------------------------------------------------------------------------

export const ID_RE = /^[a-z][a-z0-9-]{1,47}$/;
export const KEY_RE = /^[a-z][a-z0-9_-]{0,47}$/;
const LANG_RE = /^[a-z]{2,3}(-([A-Za-z]{2}|[0-9]{3}))?$/;
const VERSION_RE = /^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$/;
const HOST_RE = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;
const MAX_BYTES = 20 * 1024 * 1024;
/** DECISIONS 1: reserved ids and prefixes. */
export const RESERVED_IDS = new Set([
  "store", "publish", "search", "markets", "api", "portal", "host", "reader", "docs", "tool",
  "static", "login", "logout", "admin", "health", "plugins", "plugin", "developers", "auth",
  "account", "accounts", "settings", "help", "about", "terms", "privacy", "www",
]);
const RESERVED_PREFIXES = ["almanac", "alm-", "chk-", "test-"];
const MANIFEST_KEYS = ["$schema", "contract", "id", "name", "version", "timezone", "audience", "schedule", "backfill", "sources", "series", "links", "limits", "licence"];
const REQUIRED_MANIFEST = ["contract", "id", "name", "version", "timezone", "audience", "schedule", "backfill", "sources", "series", "licence"];
const SOURCE_KEYS = ["name", "url", "maxBytes"];
const SERIES_KEYS = ["key", "kind", "cadence", "dates", "name", "unit", "fields", "fieldNames", "change", "snapshot"];
const CADENCES = ["business-day", "daily", "weekly", "monthly", "quarterly", "irregular"];
const KINDS = ["value", "event", "item"];
const LICENCE_KEYS = ["holder", "attribution", "terms", "retain"];
const CODE_FOR_TOP = {
  contract: "PLG-MANIFEST-CONTRACT", id: "PLG-MANIFEST-ID", name: "PLG-MANIFEST-NAME", version: "PLG-MANIFEST-VERSION",
  timezone: "PLG-MANIFEST-TIMEZONE", audience: "PLG-MANIFEST-AUDIENCE", schedule: "PLG-MANIFEST-SCHEDULE",
  backfill: "PLG-MANIFEST-BACKFILL", sources: "PLG-MANIFEST-SOURCES", series: "PLG-MANIFEST-SERIES",
  links: "PLG-MANIFEST-LINKS", limits: "PLG-MANIFEST-LIMITS", licence: "PLG-MANIFEST-LICENCE",
};

/** Whether an id is reserved (DECISIONS 1). */
export function isReservedId(id) {
  return RESERVED_IDS.has(id) || RESERVED_PREFIXES.some((p) => id.startsWith(p));
}

function unknownKeys(obj, allowed, prefix, out) {
  for (const k of Object.keys(obj)) {
    if (!allowed.includes(k)) out.push(problem("PLG-MANIFEST-UNKNOWN-KEY", `${prefix ? prefix + "." : ""}${k}: contract 1 does not know this key`, { path: `${prefix ? prefix + "." : ""}${k}` }));
  }
}

/** Names: object keyed by language code, each value 1 to 80 characters. */
function checkNames(v, where, out) {
  if (!isObject(v) || Object.keys(v).length === 0) {
    out.push(problem("PLG-MANIFEST-NAME", `${where}: give an object of names keyed by language code, such as {"en": "..."}`, { path: where }));
    return;
  }
  for (const [lang, text] of Object.entries(v)) {
    const p = `${where}.${lang}`;
    if (!LANG_RE.test(lang)) out.push(problem("PLG-MANIFEST-NAME", `${p}: "${lang}" is not a two- or three-letter language code`, { path: p }));
    else if (typeof text !== "string" || chars(text) < 1 || chars(text) > 80) out.push(problem("PLG-MANIFEST-NAME", `${p}: a name is a string of 1 to 80 characters`, { path: p }));
  }
}

// Five-field cron, classic forms only (the same reading as the server's schedule.py).
const MONTH_NAMES = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
const DAY_NAMES = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];
const CRON_BOUNDS = [[0, 59], [0, 23], [1, 31], [1, 12], [0, 7]];
/** Parse a schedule: {minutes, hours, dom, months, dow} sets (null for `*`), or throw a reason. */
export function parseCron(text) {
  if (typeof text !== "string") throw new Error("the schedule must be a string");
  if (chars(text) > 100) throw new Error("the schedule is over 100 characters");
  if (text.trim().startsWith("@")) throw new Error(`"${text}" is a shorthand; write five fields`);
  const fields = text.trim().split(/\s+/).filter(Boolean);
  if (fields.length !== 5) throw new Error(`"${text}" has ${fields.length} fields; write five (minute hour day-of-month month day-of-week)`);
  const sets = fields.map((f, i) => {
    const [lo, hi] = CRON_BOUNDS[i];
    const names = i === 3 ? MONTH_NAMES : i === 4 ? DAY_NAMES : null;
    const num = (t) => {
      if (/^[0-9]+$/.test(t)) return Number(t);
      const idx = names ? names.indexOf(t.toLowerCase()) : -1;
      if (idx < 0) throw new Error(`field ${i + 1} "${f}" is not valid cron`);
      return i === 3 ? idx + 1 : idx;
    };
    if (f === "*") return null;
    const out = new Set();
    for (const part of f.split(",")) {
      const m = /^(\*|[A-Za-z0-9]+(?:-[A-Za-z0-9]+)?)(?:\/([0-9]+))?$/.exec(part);
      if (!m) throw new Error(`field ${i + 1} "${f}" is not valid cron`);
      let a, b;
      if (m[1] === "*") [a, b] = [lo, hi];
      else if (m[1].includes("-")) [a, b] = m[1].split("-").map(num);
      else { a = num(m[1]); b = m[2] ? hi : a; }
      const step = m[2] ? Number(m[2]) : 1;
      if (a < lo || b > hi || a > b || step < 1) throw new Error(`field ${i + 1} "${f}" is out of range ${lo}-${hi}`);
      for (let v = a; v <= b; v += step) out.add(i === 4 && v === 7 ? 0 : v);
    }
    return out;
  });
  const [minutes, hours, dom, months, dow] = sets;
  const cron = { minutes: minutes || range(0, 59), hours: hours || range(0, 23), dom, months, dow };
  if (!cronHasDay(cron)) throw new Error(`"${text}" names no day that exists`);
  return cron;
}
function range(a, b) {
  const s = new Set();
  for (let i = a; i <= b; i++) s.add(i);
  return s;
}
function cronHasDay(c) {
  // Any (month, day) with day valid in some year; weekday restrictions always meet some year.
  for (let m = 1; m <= 12; m++) {
    if (c.months && !c.months.has(m)) continue;
    if (!c.dom || c.dow) return true;
    for (const d of c.dom) if (d <= daysInMonth(2028, m)) return true;
  }
  return false;
}
/** Most runs on any day: minutes x hours (a repeated wall time runs once). */
export function maxRunsPerDay(cron) {
  return cron.minutes.size * cron.hours.size;
}

function checkWindow(v) {
  return typeof v === "string" && WINDOW_RE.test(v);
}

/** Whether a source URL is https with a lowercase host (no IP, no credentials). Returns a reason or null. */
export function sourceUrlProblem(url) {
  if (typeof url !== "string" || chars(url) < 1) return "the url must be a string";
  if (chars(url) > 500) return "the url is over 500 characters";
  const filled = url.replace(/\{(today|year|month)\}/g, "x");
  if (/[{}]/.test(filled)) return "only {today}, {year} and {month} may be filled in";
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)/.exec(url);
  if (!m) return "the url is not an absolute https address";
  if (m[1] !== "https") return "the url must start with https://";
  let authority = m[2];
  if (authority.includes("@")) return "the url may not carry a user name or password";
  let host = authority.replace(/:(\d+)$/, "");
  if (/[{}]/.test(host)) return "the host may not be filled in";
  if (host.startsWith("[") || /^[0-9.]+$/.test(host)) return "the host is an IP address; name the host";
  if (host !== host.toLowerCase()) return "the host must be lowercase";
  if (!HOST_RE.test(host)) return `"${host}" is not a host name`;
  try {
    new URL(filled);
  } catch {
    return "the url is not a valid address";
  }
  return null;
}

/** The host of a URL as written (lowercase), or null. */
function urlHost(url) {
  const m = /^https:\/\/([^/?#@]*)/.exec(url || "");
  return m ? m[1].replace(/:(\d+)$/, "") : null;
}

/**
 * Check a manifest object against contract 1 ("Manifest (plugin.json)"). `folder` is the folder
 * name when known (PLG-FOLDER-ID). Returns problems with `path` in the JSON-path form
 * `sources[0].url`, `series[1].fieldNames.rate.en`.
 */
export function validateManifest(m, { folder = null } = {}) {
  const out = [];
  if (!isObject(m)) return [problem("PLG-MANIFEST-NOT-OBJECT", "plugin.json must be one JSON object { ... }")];
  unknownKeys(m, MANIFEST_KEYS, "", out);
  for (const k of REQUIRED_MANIFEST) {
    if (!has(m, k)) out.push(problem(CODE_FOR_TOP[k], `${k} is required`, { path: k }));
  }
  if (has(m, "$schema") && (typeof m.$schema !== "string" || chars(m.$schema) > 500)) out.push(problem("PLG-INVALID", "$schema must be a string of at most 500 characters", { path: "$schema" }));
  if (has(m, "contract") && !(m.contract === 1)) out.push(problem("PLG-MANIFEST-CONTRACT", `contract is ${JSON.stringify(m.contract)}; it must be 1`, { path: "contract" }));
  if (has(m, "id")) {
    if (typeof m.id !== "string" || !ID_RE.test(m.id)) out.push(problem("PLG-MANIFEST-ID", `id ${JSON.stringify(m.id)}: use 2 to 48 lowercase letters, digits and hyphens, starting with a letter`, { path: "id" }));
    else if (isReservedId(m.id)) out.push(problem("PLG-ID-RESERVED", `id "${m.id}" is reserved for Almanac's own addresses`, { path: "id" }));
    else if (folder !== null && folder !== m.id) out.push(problem("PLG-FOLDER-ID", `the folder is named "${folder}" but id is "${m.id}"`, { path: "id" }));
  }
  if (has(m, "name")) checkNames(m.name, "name", out);
  if (has(m, "version") && (typeof m.version !== "string" || !VERSION_RE.test(m.version))) out.push(problem("PLG-MANIFEST-VERSION", `version ${JSON.stringify(m.version)} is not major.minor.patch`, { path: "version" }));
  if (has(m, "timezone") && !isNamedZone(m.timezone)) out.push(problem("PLG-MANIFEST-TIMEZONE", `timezone ${JSON.stringify(m.timezone)} is not a named IANA zone`, { path: "timezone" }));
  if (has(m, "audience") && !["public", "private", "local"].includes(m.audience)) out.push(problem("PLG-MANIFEST-AUDIENCE", `audience ${JSON.stringify(m.audience)} is not public, private or local`, { path: "audience" }));
  if (has(m, "schedule")) {
    try {
      const cron = parseCron(m.schedule);
      const runs = maxRunsPerDay(cron);
      if (runs > 24) out.push(problem("PLG-SCHEDULE-TOO-FREQUENT", `schedule "${m.schedule}" runs up to ${runs} times a day; at most 24`, { path: "schedule" }));
    } catch (e) {
      out.push(problem("PLG-MANIFEST-SCHEDULE", `schedule: ${e.message}`, { path: "schedule" }));
    }
  }
  if (has(m, "backfill") && !(m.backfill === "all" || checkWindow(m.backfill))) out.push(problem("PLG-MANIFEST-BACKFILL", `backfill ${JSON.stringify(m.backfill)} is not "all" or a window such as "90d" or "2y"`, { path: "backfill" }));
  const sourceHosts = [];
  if (has(m, "sources")) {
    if (!Array.isArray(m.sources)) out.push(problem("PLG-MANIFEST-SOURCES", "sources must be an array", { path: "sources" }));
    else {
      if (m.sources.length > 16) out.push(problem("PLG-MANIFEST-SOURCES", `${m.sources.length} sources; at most 16`, { path: "sources" }));
      const seen = new Set();
      m.sources.forEach((s, i) => {
        const p = `sources[${i}]`;
        if (!isObject(s)) return out.push(problem("PLG-MANIFEST-SOURCES", `${p} must be an object with name and url`, { path: p }));
        unknownKeys(s, SOURCE_KEYS, p, out);
        if (!has(s, "name")) out.push(problem("PLG-MANIFEST-SOURCES", `${p}.name is required`, { path: `${p}.name` }));
        else if (typeof s.name !== "string" || !KEY_RE.test(s.name)) out.push(problem("PLG-MANIFEST-SOURCES", `${p}.name ${JSON.stringify(s.name)} is not a key (lowercase letters, digits, - and _, starting with a letter, at most 48)`, { path: `${p}.name` }));
        else if (seen.has(s.name)) out.push(problem("PLG-MANIFEST-SOURCES", `${p}.name "${s.name}" is used by an earlier source`, { path: `${p}.name` }));
        else seen.add(s.name);
        if (!has(s, "url")) out.push(problem("PLG-MANIFEST-SOURCE-URL", `${p}.url is required`, { path: `${p}.url` }));
        else {
          const why = sourceUrlProblem(s.url);
          if (why) out.push(problem("PLG-MANIFEST-SOURCE-URL", `${p}.url: ${why}`, { path: `${p}.url` }));
          else sourceHosts.push(urlHost(s.url));
        }
        if (has(s, "maxBytes") && !(isInt(s.maxBytes) && s.maxBytes >= 1 && s.maxBytes <= MAX_BYTES)) out.push(problem("PLG-MANIFEST-SOURCES", `${p}.maxBytes must be an integer from 1 to 20971520`, { path: `${p}.maxBytes` }));
      });
    }
  }
  if (has(m, "series")) {
    if (!Array.isArray(m.series)) out.push(problem("PLG-MANIFEST-SERIES", "series must be an array", { path: "series" }));
    else {
      if (m.series.length < 1 || m.series.length > 64) out.push(problem("PLG-MANIFEST-SERIES", `${m.series.length} series; 1 to 64`, { path: "series" }));
      const seen = new Set();
      m.series.forEach((s, i) => checkSeries(s, `series[${i}]`, seen, out));
    }
  }
  if (has(m, "links")) {
    const l = m.links;
    if (!isObject(l)) out.push(problem("PLG-MANIFEST-LINKS", "links must be an object with hosts", { path: "links" }));
    else {
      unknownKeys(l, ["hosts"], "links", out);
      if (!has(l, "hosts")) out.push(problem("PLG-MANIFEST-LINKS", "links.hosts is required", { path: "links.hosts" }));
      else if (!Array.isArray(l.hosts)) out.push(problem("PLG-MANIFEST-LINKS", "links.hosts must be an array of host names", { path: "links.hosts" }));
      else {
        if (l.hosts.length > 16) out.push(problem("PLG-MANIFEST-LINKS", `links.hosts has ${l.hosts.length} hosts; at most 16`, { path: "links.hosts" }));
        l.hosts.forEach((h, i) => {
          if (typeof h !== "string" || !HOST_RE.test(h) || /^[0-9.]+$/.test(h)) out.push(problem("PLG-MANIFEST-LINKS", `links.hosts[${i}] ${JSON.stringify(h)} is not a lowercase host name of at most 253 characters`, { path: `links.hosts[${i}]` }));
        });
      }
    }
  }
  if (has(m, "limits")) {
    const l = m.limits;
    if (!isObject(l)) out.push(problem("PLG-MANIFEST-LIMITS", "limits must be an object", { path: "limits" }));
    else {
      unknownKeys(l, ["seconds", "megabytes"], "limits", out);
      if (has(l, "seconds") && !(isInt(l.seconds) && l.seconds >= 1 && l.seconds <= 120)) out.push(problem("PLG-MANIFEST-LIMITS", "limits.seconds must be an integer from 1 to 120", { path: "limits.seconds" }));
      if (has(l, "megabytes") && !(isInt(l.megabytes) && l.megabytes >= 16 && l.megabytes <= 256)) out.push(problem("PLG-MANIFEST-LIMITS", "limits.megabytes must be an integer from 16 to 256", { path: "limits.megabytes" }));
    }
  }
  if (has(m, "licence")) {
    const l = m.licence;
    const bad = (k, msg) => out.push(problem("PLG-MANIFEST-LICENCE", `licence.${k}: ${msg}`, { path: `licence.${k}` }));
    if (!isObject(l)) out.push(problem("PLG-MANIFEST-LICENCE", "licence must be an object with holder, terms and retain", { path: "licence" }));
    else {
      unknownKeys(l, LICENCE_KEYS, "licence", out);
      if (!has(l, "holder")) bad("holder", "is required");
      else if (typeof l.holder !== "string" || chars(l.holder) < 1 || chars(l.holder) > 200) bad("holder", "must be 1 to 200 characters");
      if (has(l, "attribution") && (typeof l.attribution !== "string" || chars(l.attribution) < 1 || chars(l.attribution) > 40)) bad("attribution", "must be 1 to 40 characters");
      if (!has(l, "terms")) bad("terms", "is required (a string of at most 500 characters, or null)");
      else if (!(l.terms === null || (typeof l.terms === "string" && chars(l.terms) <= 500))) bad("terms", "must be a string of at most 500 characters, or null");
      if (!has(l, "retain")) bad("retain", "is required (yes, no or unknown)");
      else if (!["yes", "no", "unknown"].includes(l.retain)) bad("retain", `${JSON.stringify(l.retain)} is not yes, no or unknown`);
    }
  }
  return out;
}

function checkSeries(s, p, seen, out) {
  const bad = (sub, msg) => out.push(problem("PLG-MANIFEST-SERIES", `${sub ? p + "." + sub : p}: ${msg}`, { path: sub ? `${p}.${sub}` : p }));
  if (!isObject(s)) return bad("", "a series must be an object");
  unknownKeys(s, SERIES_KEYS, p, out);
  for (const k of ["key", "kind", "cadence", "dates", "name"]) {
    if (!has(s, k)) {
      if (k === "name") out.push(problem("PLG-MANIFEST-NAME", `${p}.name is required`, { path: `${p}.name` }));
      else bad(k, "is required");
    }
  }
  if (has(s, "key")) {
    if (typeof s.key !== "string" || !KEY_RE.test(s.key)) bad("key", `${JSON.stringify(s.key)} is not a key (lowercase letters, digits, - and _, starting with a letter, at most 48)`);
    else if (seen.has(s.key)) bad("key", `"${s.key}" is used by an earlier series`);
    else seen.add(s.key);
  }
  if (has(s, "kind") && !KINDS.includes(s.kind)) bad("kind", `${JSON.stringify(s.kind)} is not value, event or item`);
  if (has(s, "cadence") && !CADENCES.includes(s.cadence)) bad("cadence", `${JSON.stringify(s.cadence)} is not one of ${CADENCES.join(", ")}`);
  if (has(s, "dates") && !["observation", "publication"].includes(s.dates)) bad("dates", `${JSON.stringify(s.dates)} is not observation or publication`);
  if (has(s, "name")) checkNames(s.name, `${p}.name`, out);
  if (has(s, "unit") && (typeof s.unit !== "string" || chars(s.unit) > 16)) bad("unit", "must be a string of at most 16 characters");
  const isValue = s.kind === "value";
  let fields = null;
  if (has(s, "fields")) {
    if (s.kind !== undefined && KINDS.includes(s.kind) && !isValue) bad("fields", "only value series have fields");
    else if (!Array.isArray(s.fields) || s.fields.length < 1 || s.fields.length > 16) bad("fields", "must be an array of 1 to 16 keys");
    else {
      const fs_ = new Set();
      s.fields.forEach((f, j) => {
        if (typeof f !== "string" || !KEY_RE.test(f)) bad(`fields[${j}]`, `${JSON.stringify(f)} is not a key`);
        else if (fs_.has(f)) bad(`fields[${j}]`, `"${f}" is listed twice`);
        else fs_.add(f);
      });
      fields = fs_;
    }
  } else if (isValue) bad("fields", "a value series needs fields (1 to 16 keys in display order)");
  if (has(s, "fieldNames")) {
    if (s.kind !== undefined && KINDS.includes(s.kind) && !isValue) bad("fieldNames", "only value series have fields");
    else if (!isObject(s.fieldNames)) bad("fieldNames", "must be an object of field key to names");
    else {
      for (const [f, names] of Object.entries(s.fieldNames)) {
        if (fields && !fields.has(f)) bad(`fieldNames.${f}`, `"${f}" is not one of the series' fields`);
        else checkNames(names, `${p}.fieldNames.${f}`, out);
      }
    }
  }
  if (has(s, "change")) {
    if (s.kind !== undefined && KINDS.includes(s.kind) && !isValue) bad("change", "only value series have fields");
    else if (typeof s.change !== "string" || (fields && !fields.has(s.change)) || !KEY_RE.test(s.change)) bad("change", `${JSON.stringify(s.change)} is not one of the series' fields`);
  }
  if (has(s, "snapshot")) {
    const w = s.snapshot;
    if (!isObject(w)) bad("snapshot", "must be an object with back and ahead windows");
    else {
      unknownKeys(w, ["back", "ahead"], `${p}.snapshot`, out);
      for (const k of ["back", "ahead"]) {
        if (!has(w, k)) bad(`snapshot.${k}`, "is required");
        else if (!checkWindow(w[k])) bad(`snapshot.${k}`, `${JSON.stringify(w[k])} is not a window such as "7d" or "1y"`);
      }
    }
  }
}

/** Parse plugin.json text into {manifest, problems}. */
export function readManifestText(text, opts = {}) {
  let m;
  try {
    m = JSON.parse(text);
  } catch (e) {
    return { manifest: null, problems: [problem("PLG-MANIFEST-INVALID-JSON", `plugin.json is not JSON: ${e.message}`, { file: "plugin.json" })] };
  }
  const problems = validateManifest(m, opts);
  return { manifest: m, problems };
}

// ---------------------------------------------------------------------------------------------
// Record rules ("Records (fetcher output)"; "Errors": Records of a run)
// ---------------------------------------------------------------------------------------------

export const MAX_RECORDS = 250000;
const RECORD_KEYS = {
  value: ["kind", "series", "date", "period", "fields", "revises"],
  event: ["kind", "series", "id", "date", "state", "value", "title"],
  item: ["kind", "series", "date", "id", "title", "url"],
};
const MARKUP_RE = /<\/?[A-Za-z!][^>]*>|&(#\d+|#x[0-9a-fA-F]+|[A-Za-z]+);/;

/** Hosts an item link may point to: every source's host and `links.hosts`. */
export function linkHosts(manifest) {
  const hosts = new Set();
  for (const s of Array.isArray(manifest.sources) ? manifest.sources : []) {
    const h = urlHost(s && s.url);
    if (h) hosts.add(h);
  }
  for (const h of (isObject(manifest.links) && Array.isArray(manifest.links.hosts)) ? manifest.links.hosts : []) hosts.add(h);
  return hosts;
}

/** The record key: value = series + date (+ period when dated by publication); others + id. */
export function recordKey(record, dates) {
  if (record.kind === "value") return JSON.stringify([record.series, record.date, dates === "publication" ? record.period || "" : ""]);
  return JSON.stringify([record.series, record.date, record.id]);
}

/**
 * Check a batch of output lines against the manifest ("Records"; batch rules). `lines` are
 * the raw text lines (without newline). Returns {problems, records}; problems carry `line`
 * (1-based). One bad line refuses the batch.
 */
export function validateRecords(manifest, lines, today) {
  const out = [];
  const records = [];
  if (!isDate(today)) return { problems: [problem("PLG-RECORD-TODAY", `the run context's today ${JSON.stringify(today)} is not a date`)], records };
  if (lines.length > MAX_RECORDS) out.push(problem("PLG-RECORD-TOO-MANY", `${lines.length} records; at most 250,000 in one run`));
  const series = new Map();
  for (const s of Array.isArray(manifest.series) ? manifest.series : []) if (isObject(s)) series.set(s.key, s);
  const hosts = linkHosts(manifest);
  const keys = new Set();
  const eventIds = new Set();
  lines.forEach((text, i) => {
    const line = i + 1;
    const bad = (code, msg) => out.push(problem(code, `line ${line}: ${msg}`, { line }));
    let r;
    try {
      r = JSON.parse(text);
    } catch {
      return bad("PLG-RECORD-INVALID", "is not one JSON object");
    }
    if (!isObject(r)) return bad("PLG-RECORD-INVALID", "is not one JSON object");
    if (!KINDS.includes(r.kind)) return bad("PLG-RECORD-INVALID", `kind ${JSON.stringify(r.kind)} is not value, event or item`);
    const unknown = Object.keys(r).filter((k) => !RECORD_KEYS[r.kind].includes(k));
    if (unknown.length) return bad("PLG-RECORD-UNKNOWN-KEY", `a ${r.kind} record has no key ${unknown.map((k) => JSON.stringify(k)).join(", ")}`);
    const decl = series.get(r.series);
    if (typeof r.series !== "string" || !decl) return bad("PLG-RECORD-SERIES", `series ${JSON.stringify(r.series)} is not declared in plugin.json`);
    if (decl.kind !== r.kind) return bad("PLG-RECORD-SERIES", `series "${r.series}" is declared as ${decl.kind}, not ${r.kind}`);
    if (!has(r, "date")) return bad("PLG-RECORD-INVALID", "date is required");
    if (!isDate(r.date)) return bad("PLG-RECORD-INVALID", `date ${JSON.stringify(r.date)} is not a real date YYYY-MM-DD`);
    if (r.kind === "value") {
      if ((has(r, "period") || has(r, "revises")) && decl.dates !== "publication") return bad("PLG-RECORD-UNKNOWN-KEY", `period and revises belong to series dated by publication; "${r.series}" is dated by observation`);
      if (has(r, "period") && (typeof r.period !== "string" || chars(r.period) < 1 || chars(r.period) > 32)) return bad("PLG-RECORD-INVALID", "period must be a string of 1 to 32 characters");
      if (has(r, "revises") && !isDate(r.revises)) return bad("PLG-RECORD-INVALID", `revises ${JSON.stringify(r.revises)} is not a real date YYYY-MM-DD`);
      if (!has(r, "fields") || !isObject(r.fields) || Object.keys(r.fields).length === 0) return bad("PLG-RECORD-INVALID", "fields must be an object of numbers");
      const declared = Array.isArray(decl.fields) ? decl.fields : [];
      for (const [f, v] of Object.entries(r.fields)) {
        if (!declared.includes(f)) return bad("PLG-RECORD-UNKNOWN-KEY", `fields.${f} is not a field of series "${r.series}"`);
        if (typeof v !== "number" || !Number.isFinite(v)) return bad("PLG-RECORD-INVALID", `fields.${f} must be a finite number`);
      }
    } else {
      if (!has(r, "id") || typeof r.id !== "string" || chars(r.id) < 1 || chars(r.id) > 64 || /\s/.test(r.id)) return bad("PLG-RECORD-INVALID", "id must be 1 to 64 characters with no spaces");
      if (r.kind === "event") {
        if (!["scheduled", "happened", "cancelled"].includes(r.state)) return bad("PLG-RECORD-INVALID", `state ${JSON.stringify(r.state)} is not scheduled, happened or cancelled`);
        if (has(r, "value") && (typeof r.value !== "number" || !Number.isFinite(r.value))) return bad("PLG-RECORD-INVALID", "value must be a finite number");
        if (has(r, "title") && (typeof r.title !== "string" || chars(r.title) > 200 || MARKUP_RE.test(r.title))) return bad("PLG-RECORD-INVALID", "title must be plain text of at most 200 characters");
      } else {
        if (typeof r.title !== "string" || chars(r.title) < 1 || chars(r.title) > 200 || MARKUP_RE.test(r.title)) return bad("PLG-RECORD-INVALID", "title must be plain text of 1 to 200 characters");
        if (typeof r.url !== "string" || chars(r.url) > 1000) return bad("PLG-RECORD-LINK", "url must be an https link of at most 1,000 characters");
        let u = null;
        try {
          u = new URL(r.url);
        } catch {}
        if (!u || u.protocol !== "https:" || !/^https:\/\//i.test(r.url) || u.username || u.password) return bad("PLG-RECORD-LINK", `url ${JSON.stringify(r.url)} is not an https link`);
        if (!hosts.has(u.hostname)) return bad("PLG-RECORD-LINK", `url host "${u.hostname}" is not a source host or in links.hosts`);
      }
    }
    if (r.date > today && !(r.kind === "event" && r.state === "scheduled")) return bad("PLG-RECORD-AFTER-TODAY", `date ${r.date} is after today ${today}; only a scheduled event may be`);
    const key = recordKey(r, decl.dates);
    if (keys.has(key)) return bad("PLG-RECORD-REPEATED", `the same record (${JSON.parse(key).filter(Boolean).join(" ")}) was printed on an earlier line`);
    if (r.kind === "event") {
      const ek = JSON.stringify([r.series, r.id]);
      if (eventIds.has(ek)) return bad("PLG-RECORD-REPEATED", `event id "${r.id}" of series "${r.series}" was printed on an earlier line`);
      eventIds.add(ek);
    }
    keys.add(key);
    records.push(r);
  });
  return { problems: out, records };
}

/** Split fetcher output into lines: newline-terminated; a final line without newline counts. */
export function outputLines(text) {
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines.map((l) => (l.endsWith("\r") ? l.slice(0, -1) : l));
}

// ---------------------------------------------------------------------------------------------
// Digest (DECISIONS 4) and the code file rules
// ---------------------------------------------------------------------------------------------

const NEVER_PACKED = (rel) => rel === ".git" || rel.startsWith(".git/") || rel === "node_modules" || rel.startsWith("node_modules/") || path.posix.basename(rel) === ".DS_Store";
/** Whether a folder-relative path is covered by the digest (DECISIONS 4). */
export function isCovered(rel) {
  if (NEVER_PACKED(rel)) return false;
  const top = rel.split("/")[0];
  if (["fixtures", "listing"].includes(top) && rel.includes("/")) return false;
  return !["listing.json", "review.json", "README.md", "AGENTS.md", "CLAUDE.md"].includes(rel);
}
/** Code file types allowed in covered files: .mjs .json .md .txt and LICENSE. */
export function isAllowedCodeFile(rel) {
  const base = path.posix.basename(rel);
  return base === "LICENSE" || /\.(mjs|json|md|txt)$/.test(base);
}
const utf8Compare = (a, b) => Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));

/** Walk a folder: {files: [rel], symlinks: [rel]} (never following links; .git/ and node_modules/ skipped). */
export function walkFolder(root) {
  const files = [];
  const symlinks = [];
  const visit = (dir, prefix) => {
    for (const ent of fs.readdirSync(dir, { withFileTypes: true })) {
      const rel = prefix ? `${prefix}/${ent.name}` : ent.name;
      if (NEVER_PACKED(rel)) continue;
      if (ent.isSymbolicLink()) symlinks.push(rel);
      else if (ent.isDirectory()) visit(path.join(dir, ent.name), rel);
      else if (ent.isFile()) files.push(rel);
    }
  };
  visit(root, "");
  files.sort(utf8Compare);
  symlinks.sort(utf8Compare);
  return { files, symlinks };
}

/**
 * The digest over `files` (a Map or object of covered path -> Buffer): the lines
 * `<sha256 hex>  <path>\n` in the paths' UTF-8 byte order, hashed; `sha256:<hex>`.
 */
export function digestOf(files) {
  const entries = files instanceof Map ? [...files.entries()] : Object.entries(files);
  entries.sort((a, b) => utf8Compare(a[0], b[0]));
  const text = entries.map(([p, buf]) => `${sha256(buf)}  ${p}\n`).join("");
  return { digest: `sha256:${sha256(Buffer.from(text, "utf8"))}`, files: entries.map(([p]) => p) };
}

/** Digest of a folder with the code file rules: {digest, files, problems}. */
export function computeDigest(root) {
  const { files, symlinks } = walkFolder(root);
  const problems = [];
  for (const s of symlinks) problems.push(problem("PLG-CODE-SYMLINK", `${s} is a symbolic link; copy the file in instead`, { path: s }));
  const covered = new Map();
  for (const rel of files) {
    if (!isCovered(rel)) continue;
    if (!isAllowedCodeFile(rel)) problems.push(problem("PLG-CODE-FILE-TYPE", `${rel}: code files may only be .mjs, .json, .md, .txt or LICENSE`, { path: rel }));
    covered.set(rel, fs.readFileSync(path.join(root, rel)));
  }
  const { digest, files: order } = digestOf(covered);
  return { digest, files: order, problems };
}

// ---------------------------------------------------------------------------------------------
// Imports: only own files (covered by the digest) and node: builtins
// ---------------------------------------------------------------------------------------------

function stripComments(src) {
  // Replace comments with spaces but keep newlines (line numbers) and strings intact.
  let out = "";
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    const n = src[i + 1];
    if (c === "/" && n === "/") {
      while (i < src.length && src[i] !== "\n") { out += " "; i++; }
    } else if (c === "/" && n === "*") {
      out += "  "; i += 2;
      while (i < src.length && !(src[i] === "*" && src[i + 1] === "/")) { out += src[i] === "\n" ? "\n" : " "; i++; }
      out += "  "; i += 2;
    } else if (c === "'" || c === '"' || c === "`") {
      const q = c;
      out += c; i++;
      while (i < src.length && src[i] !== q) {
        if (src[i] === "\\") { out += src[i] + (src[i + 1] || ""); i += 2; continue; }
        if (q !== "`" && src[i] === "\n") break;
        out += src[i]; i++;
      }
      if (i < src.length) { out += src[i]; i++; }
    } else { out += c; i++; }
  }
  return out;
}

/** Import specifiers in module source: [{spec, line, dynamic}] (static, re-export, and import("literal")). */
export function findImports(src) {
  const code = stripComments(src);
  const found = [];
  const lineOf = (idx) => code.slice(0, idx).split("\n").length;
  const patterns = [
    /(?:^|[;\s}])import\s*(?:[\w*${}\s,]+?\s*from\s*)?(["'])([^"'\n]+)\1/g,
    /(?:^|[;\s}])export\s*(?:\*\s*(?:as\s+\w+\s*)?|\{[^}]*\}\s*)from\s*(["'])([^"'\n]+)\1/g,
  ];
  for (const re of patterns) for (const m of code.matchAll(re)) found.push({ spec: m[2], line: lineOf(m.index + m[0].indexOf(m[1])), dynamic: false });
  for (const m of code.matchAll(/(?<![\w$.])import\s*\(\s*(?:(["'`])([^"'`\n]*)\1\s*[,)]|([^)]*)\))?/g)) {
    if (m[2] !== undefined) found.push({ spec: m[2], line: lineOf(m.index), dynamic: true });
    else if (m[3] !== undefined) found.push({ spec: null, line: lineOf(m.index), dynamic: true });
  }
  for (const m of code.matchAll(/(?<![\w$.])require\s*\(\s*(["'])([^"'\n]+)\1\s*\)/g)) found.push({ spec: m[2], line: lineOf(m.index), dynamic: true });
  return found.sort((a, b) => a.line - b.line);
}

/** Check imports from fetch.mjs, recursively through own files. */
export function checkImports(root) {
  const problems = [];
  const seen = new Set();
  const builtins = new Set(builtinModules.map((b) => b.replace(/^node:/, "")));
  const visit = (rel) => {
    if (seen.has(rel)) return;
    seen.add(rel);
    let src;
    try {
      src = fs.readFileSync(path.join(root, rel), "utf8");
    } catch {
      return;
    }
    if (!rel.endsWith(".mjs") && !rel.endsWith(".js")) return;
    for (const { spec, line, dynamic } of findImports(src)) {
      const where = { path: rel, line };
      if (spec === null) {
        problems.push(problem("PLG-IMPORT-OUTSIDE", `${rel} line ${line}: import() of a computed name; import own files by a fixed relative path`, where));
        continue;
      }
      if (spec.startsWith("node:")) {
        if (!builtins.has(spec.slice(5))) problems.push(problem("PLG-IMPORT-PACKAGE", `${rel} line ${line}: "${spec}" is not a Node built-in module`, where));
        continue;
      }
      if (spec.startsWith("./") || spec.startsWith("../")) {
        const target = path.posix.normalize(path.posix.join(path.posix.dirname(rel), spec.split(/[?#]/)[0]));
        if (target.startsWith("../") || target === "..") problems.push(problem("PLG-IMPORT-OUTSIDE", `${rel} line ${line}: "${spec}" is outside the plug-in folder`, where));
        else if (!isCovered(target)) problems.push(problem("PLG-IMPORT-OUTSIDE", `${rel} line ${line}: "${spec}" is not plug-in code (fixtures, listing and README are not in the locked room)`, where));
        else if (!fs.existsSync(path.join(root, target))) problems.push(problem("PLG-IMPORT-OUTSIDE", `${rel} line ${line}: "${spec}" does not exist in the plug-in folder`, where));
        else visit(target);
        continue;
      }
      if (spec.startsWith("/") || /^[a-z][a-z0-9+.-]*:/i.test(spec)) {
        problems.push(problem("PLG-IMPORT-OUTSIDE", `${rel} line ${line}: "${spec}" is outside the plug-in folder; import own files by a relative path`, where));
        continue;
      }
      const name = spec.split("/")[0];
      const hint = builtins.has(spec) || builtins.has(name) ? `; write "node:${spec}"` : "; plug-ins take no packages";
      problems.push(problem("PLG-IMPORT-PACKAGE", `${rel} line ${line}: "${spec}" is a package${hint}${dynamic ? " (dynamic import)" : ""}`, where));
    }
  };
  visit("fetch.mjs");
  return problems;
}

// ---------------------------------------------------------------------------------------------
// Zip writer (DECISIONS 5): fixed times, no extra fields, deflate or stored
// ---------------------------------------------------------------------------------------------

const DOS_TIME = 0; // 00:00:00
const DOS_DATE = (0 << 9) | (1 << 5) | 1; // 1980-01-01

/** ZIP bytes of entries [{name, data}] in the given order; the same entries give the same bytes. */
export function zipBytes(entries) {
  const locals = [];
  const centrals = [];
  let offset = 0;
  for (const { name, data } of entries) {
    const nameBuf = Buffer.from(name, "utf8");
    const crc = zlib.crc32(data) >>> 0;
    const deflated = zlib.deflateRawSync(data, { level: 9 });
    const useDeflate = deflated.length < data.length;
    const body = useDeflate ? deflated : data;
    const method = useDeflate ? 8 : 0;
    const flags = /[^\x20-\x7e]/.test(name) ? 0x0800 : 0;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(flags, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt16LE(DOS_TIME, 10);
    local.writeUInt16LE(DOS_DATE, 12);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBuf.length, 26);
    local.writeUInt16LE(0, 28);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(flags, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt16LE(DOS_TIME, 12);
    central.writeUInt16LE(DOS_DATE, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(body.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBuf.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBuf, body);
    centrals.push(central, nameBuf);
    offset += 30 + nameBuf.length + body.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

// ---------------------------------------------------------------------------------------------
// Guard and runner: the fetcher as a child node process under Node's permission model.
// A safeguard on the developer's machine, not a sandbox.
// ---------------------------------------------------------------------------------------------

const MARK = "@@almanac-guard";
const OUTPUT_LIMIT = 64 * 1024 * 1024;
/** Preloaded into the fetcher: every network API throws and is reported on stderr; denied file access is reported. */
const GUARD_SOURCE = `
const g = process.getBuiltinModule;
const say = (s) => { try { process.stderr.write("\\n${MARK} " + s + "\\n"); } catch {} };
const deny = (what) => function () {
  say("network " + what);
  const e = new Error("network access is not allowed in a plug-in fetcher (" + what + ")");
  e.code = "ERR_ALMANAC_NETWORK";
  throw e;
};
const block = (mod, names, prefix) => { for (const n of names) if (mod && n in mod) { try { mod[n] = deny(prefix + "." + n); } catch {} } };
const net = g("node:net");
block(net, ["connect", "createConnection", "createServer"], "net");
net.Socket.prototype.connect = deny("net.Socket.connect");
block(g("node:tls"), ["connect", "createServer"], "tls");
block(g("node:dgram"), ["createSocket"], "dgram");
for (const h of ["http", "https"]) { const m = g("node:" + h); block(m, ["request", "get", "createServer"], h); try { m.Agent.prototype.createConnection = deny(h + ".Agent"); } catch {} }
block(g("node:http2"), ["connect", "createServer", "createSecureServer"], "http2");
const dnsNames = ["lookup", "lookupService", "resolve", "resolve4", "resolve6", "resolveAny", "resolveCaa", "resolveCname", "resolveMx", "resolveNaptr", "resolveNs", "resolvePtr", "resolveSoa", "resolveSrv", "resolveTxt", "reverse"];
const dns = g("node:dns");
block(dns, dnsNames, "dns");
block(dns.promises, dnsNames, "dns.promises");
try { dns.Resolver = function () { deny("dns.Resolver")(); }; dns.promises.Resolver = function () { deny("dns.Resolver")(); }; } catch {}
for (const n of ["fetch", "WebSocket", "EventSource"]) { try { Object.defineProperty(globalThis, n, { value: deny(n), writable: true, configurable: true }); } catch {} }
const noteDenied = (e) => { if (e && e.code === "ERR_ACCESS_DENIED") say("denied " + (e.permission || "") + " " + JSON.stringify(String(e.resource || ""))); };
const wrapAll = (obj) => {
  for (const name of Object.keys(obj)) {
    const f = obj[name];
    if (typeof f !== "function" || /^[A-Z]/.test(name)) continue;
    obj[name] = function (...args) {
      const cb = args[args.length - 1];
      if (typeof cb === "function") args[args.length - 1] = function (err, ...rest) { noteDenied(err); return cb.call(this, err, ...rest); };
      try {
        const r = f.apply(this, args);
        if (r && typeof r.then === "function") r.then(null, noteDenied);
        return r;
      } catch (e) { noteDenied(e); throw e; }
    };
  }
};
const fsm = g("node:fs");
wrapAll(fsm);
wrapAll(fsm.promises);
g("node:module").syncBuiltinESMExports();
`;
const GUARD_URL = `data:text/javascript;base64,${Buffer.from(GUARD_SOURCE).toString("base64")}`;

function realOrSelf(p) {
  try {
    return fs.realpathSync(p);
  } catch {
    return p;
  }
}

/**
 * Run `node fetch.mjs` in `folder` with the context on stdin, behind the guard.
 * Returns {exit, signal, stdout: Buffer, stderr, lastLine, killed: "time"|"memory"|"output"|null,
 * network: [what], denied: [{permission, resource}], seconds}.
 */
export function runFetcher({ folder, context, readPaths = [], limits = {} }) {
  const seconds = isInt(limits.seconds) ? Math.min(limits.seconds, 120) : 120;
  const megabytes = isInt(limits.megabytes) ? Math.min(limits.megabytes, 256) : 256;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "almanac-run-"));
  const reads = new Set();
  for (const p of [folder, ...readPaths]) {
    reads.add(path.resolve(p));
    reads.add(realOrSelf(path.resolve(p)));
  }
  const args = ["--permission", ...[...reads].map((p) => `--allow-fs-read=${p}`), `--allow-fs-write=${tmp}`, `--max-old-space-size=${megabytes}`, "--disable-warning=ExperimentalWarning", `--import=${GUARD_URL}`, "fetch.mjs"];
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: folder, env: { LANG: "C.UTF-8", PATH: process.env.PATH || "/usr/bin:/bin" }, stdio: ["pipe", "pipe", "pipe"] });
    const out = [];
    let outBytes = 0;
    let err = "";
    let killed = null;
    const kill = (why) => {
      if (!killed) killed = why;
      try {
        child.kill("SIGKILL");
      } catch {}
    };
    const timer = setTimeout(() => kill("time"), seconds * 1000);
    child.stdout.on("data", (d) => {
      outBytes += d.length;
      if (outBytes > OUTPUT_LIMIT) return kill("output");
      out.push(d);
    });
    child.stderr.on("data", (d) => {
      if (err.length < 4 * 1024 * 1024) err += d.toString("utf8");
    });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(context) + "\n");
    child.on("error", (e) => {
      err += `\n${e.message}`;
    });
    child.on("close", (exit, signal) => {
      clearTimeout(timer);
      fs.rmSync(tmp, { recursive: true, force: true });
      if (!killed && /JavaScript heap out of memory|Reached heap limit|Allocation failed/.test(err)) killed = "memory";
      const network = [];
      const denied = [];
      const plain = [];
      for (const line of err.split("\n")) {
        if (line.startsWith(`${MARK} network `)) network.push(line.slice(MARK.length + 9));
        else if (line.startsWith(`${MARK} denied `)) {
          const m = /^(\S*) (.*)$/.exec(line.slice(MARK.length + 8));
          denied.push({ permission: m ? m[1] : "", resource: m ? JSON.parse(m[2]) : "" });
        } else plain.push(line);
      }
      // Uncaught denials (the module loader, for example) show only in the error text.
      for (const m of err.matchAll(/ERR_ACCESS_DENIED[\s\S]{0,400}?permission: '(\w+)'(?:,\s*resource: '([^']*)')?/g)) {
        if (!denied.some((d) => d.permission === m[1] && d.resource === (m[2] || ""))) denied.push({ permission: m[1], resource: m[2] || "" });
      }
      const lines = plain.map((l) => l.trimEnd()).filter((l) => l.trim() !== "");
      const lastLine = (lines.length ? lines[lines.length - 1] : "").slice(0, 300);
      resolve({ exit, signal, stdout: Buffer.concat(out), stderr: plain.join("\n"), lastLine, killed, network, denied, seconds: (Date.now() - started) / 1000, limits: { seconds, megabytes } });
    });
  });
}

/** Problems of one guarded run (network, read outside, killed, failed). `label` names the run. */
export function runProblems(res, label, { expectFailure = false } = {}) {
  const out = [];
  if (res.network.length) out.push(problem("PLG-RUN-NETWORK", `${label}: the fetcher tried the network (${[...new Set(res.network)].join(", ")}); fetchers read only the files in context.sources`));
  const reads = res.denied.filter((d) => d.permission === "FileSystemRead");
  if (reads.length) out.push(problem("PLG-RUN-READ-OUTSIDE", `${label}: the fetcher read ${reads.map((d) => d.resource || "a file").filter((v, i, a) => a.indexOf(v) === i).join(", ")} outside its folder and sources`));
  if (res.killed) {
    const why = res.killed === "time" ? `ran past ${res.limits.seconds} seconds` : res.killed === "memory" ? `ran past ${res.limits.megabytes} MB of memory` : "printed over 64 MB";
    out.push(problem("PLG-RUN-KILLED", `${label}: the fetcher was stopped: it ${why}`));
  }
  if (!expectFailure && !out.length && res.exit !== 0) out.push(problem("PLG-RUN-FAILED", `${label}: the fetcher exited with ${res.exit ?? res.signal}: ${res.lastLine || "(no message on stderr)"}`));
  return out;
}

/** The run context ("Run context"): today/now, backfill, backfillFrom, sources name->path, series state. */
export function buildContext(manifest, { now, today, backfill, sources, state = {} }) {
  const series = {};
  for (const s of manifest.series) series[s.key] = state[s.key] || { last: null, count: 0 };
  return {
    contract: CONTRACT,
    plugin: manifest.id,
    now,
    today,
    backfill,
    backfillFrom: manifest.backfill === "all" ? null : windowStart(today, manifest.backfill),
    sources,
    series,
  };
}

/** Series state of stored records: newest date on or before today, and count. */
export function seriesState(manifest, records, today) {
  const state = {};
  for (const s of manifest.series) state[s.key] = { last: null, count: 0 };
  for (const r of records) {
    const st = state[r.series];
    if (!st) continue;
    st.count++;
    if (r.date <= today && (st.last === null || r.date > st.last)) st.last = r.date;
  }
  return state;
}

// ---------------------------------------------------------------------------------------------
// Check: manifest, folder, imports, fixtures, runs, listing, digest
// ---------------------------------------------------------------------------------------------

function isoNow(env = process.env) {
  const raw = env.ALMANAC_PLUGIN_NOW;
  const t = raw ? parseInstant(raw) : new Date();
  if (!t) throw new UsageError(`ALMANAC_PLUGIN_NOW "${raw}" is not an ISO instant such as 2026-11-21T09:00:00Z`);
  return t.toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** Read a fixture context file: {now, today} or a problem. */
export function readContextFile(file, zone, rel) {
  let c;
  try {
    c = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch (e) {
    return { problem: problem("PLG-FIXTURE-CONTEXT-INVALID", `${rel} is not JSON: ${e.message}`, { path: rel }) };
  }
  const bad = (msg) => ({ problem: problem("PLG-FIXTURE-CONTEXT-INVALID", `${rel}: ${msg}`, { path: rel }) });
  if (!isObject(c)) return bad("must be an object {\"now\": ..., \"today\": ...}");
  const extra = Object.keys(c).filter((k) => !["now", "today"].includes(k));
  if (extra.length) return bad(`unknown key ${extra.join(", ")}; only now and today`);
  const t = parseInstant(c.now);
  if (!t) return bad(`now ${JSON.stringify(c.now)} is not an ISO 8601 instant with a zone, such as 2026-11-21T09:00:00Z`);
  if (!isDate(c.today)) return bad(`today ${JSON.stringify(c.today)} is not a date YYYY-MM-DD`);
  const expected = dateInZone(t, zone);
  if (expected !== c.today) return bad(`today is ${c.today} but now ${c.now} is ${expected} in ${zone}`);
  return { now: c.now, today: c.today };
}

function firstDifference(actual, expected) {
  const a = actual.split("\n");
  const e = expected.split("\n");
  for (let i = 0; i < Math.max(a.length, e.length); i++) {
    if (a[i] !== e[i]) {
      const clip = (s) => (s === undefined ? "(nothing)" : s.length > 160 ? s.slice(0, 157) + "..." : s === "" ? "(empty)" : s);
      return { line: i + 1, got: clip(a[i]), want: clip(e[i]) };
    }
  }
  return null;
}

/** Run the fetcher on a set of sources and check everything about the result. */
async function runAndCheck(root, manifest, context, readPaths, label) {
  const res = await runFetcher({ folder: root, context, readPaths, limits: manifest.limits || {} });
  const problems = runProblems(res, label);
  let records = [];
  const text = res.stdout.toString("utf8");
  if (!problems.length) {
    const v = validateRecords(manifest, outputLines(text), context.today);
    records = v.records;
    for (const p of v.problems) {
      p.message = `${label} output ${p.message}`;
      problems.push(p);
    }
  }
  return { res, problems, records, text };
}

function sourcesFor(root, manifest, caseDir = null) {
  const base = path.join(root, "fixtures", "sources");
  const map = {};
  for (const s of manifest.sources) {
    const over = caseDir ? path.join(caseDir, "sources", s.name) : null;
    map[s.name] = over && fs.existsSync(over) ? over : path.join(base, s.name);
  }
  return map;
}

/**
 * Check a plug-in folder ("Command line": check). Returns {ok, summary, findings, digest,
 * records, context, manifest, runs}. `update` writes outputs instead of comparing.
 */
export async function checkFolder(root, { update = false, env = process.env, runTwice = true } = {}) {
  root = path.resolve(root);
  const findings = [];
  const add = (...ps) => findings.push(...ps);
  const result = { ok: false, findings, digest: null, records: [], context: null, manifest: null, runs: { passed: 0, total: 0 } };
  const folderName = path.basename(root);
  // Manifest
  let manifest = null;
  const manifestFile = path.join(root, "plugin.json");
  if (!fs.existsSync(manifestFile)) add(problem("PLG-MANIFEST-INVALID-JSON", "plugin.json is missing; every plug-in folder starts with its manifest", { file: "plugin.json" }));
  else {
    const r = readManifestText(fs.readFileSync(manifestFile, "utf8"), { folder: folderName });
    for (const p of r.problems) p.file = "plugin.json";
    add(...r.problems);
    if (!r.problems.some((p) => p.severity === "error")) manifest = r.manifest;
    else if (r.manifest && r.problems.every((p) => p.code === "PLG-FOLDER-ID")) manifest = r.manifest;
  }
  result.manifest = manifest;
  // Digest and code file rules
  const d = computeDigest(root);
  result.digest = d.digest;
  result.files = d.files;
  add(...d.problems);
  // Fetcher and imports
  const hasFetch = fs.existsSync(path.join(root, "fetch.mjs")) && fs.lstatSync(path.join(root, "fetch.mjs")).isFile();
  if (!hasFetch) add(problem("PLG-FETCH-MISSING", "fetch.mjs is missing at the top of the folder", { path: "fetch.mjs" }));
  else add(...checkImports(root));
  // Listing
  if (fs.existsSync(path.join(root, "listing.json"))) add(...checkListingFolder(root, manifest));
  if (!manifest || !hasFetch) return finish(result);
  // Fixtures
  const fixtures = path.join(root, "fixtures");
  let fixturesOk = true;
  for (const s of manifest.sources) {
    const f = path.join(fixtures, "sources", s.name);
    if (!fs.existsSync(f) || !fs.statSync(f).isFile()) {
      add(problem("PLG-FIXTURE-SOURCE-MISSING", `fixtures/sources/${s.name} is missing: save one real copy of source "${s.name}" (${s.url}) under that name`, { path: `fixtures/sources/${s.name}` }));
      fixturesOk = false;
    }
  }
  let now;
  let today;
  const ctxFile = path.join(fixtures, "context.json");
  if (fs.existsSync(ctxFile)) {
    const c = readContextFile(ctxFile, manifest.timezone, "fixtures/context.json");
    if (c.problem) {
      add(c.problem);
      fixturesOk = false;
    } else ({ now, today } = c);
  } else {
    now = isoNow(env);
    today = dateInZone(new Date(now), manifest.timezone);
  }
  const recordsFile = path.join(fixtures, "records.jsonl");
  if (!update && !fs.existsSync(recordsFile)) {
    add(problem("PLG-FIXTURE-RECORDS-MISSING", "fixtures/records.jsonl is missing; run check --update to write the fetcher's output there, then read it", { path: "fixtures/records.jsonl" }));
    fixturesOk = false;
  }
  if (!fixturesOk || findings.some((p) => p.code.startsWith("PLG-IMPORT-"))) return finish(result);
  // The base run, twice
  const sources = sourcesFor(root, manifest);
  const context = buildContext(manifest, { now, today, backfill: true, sources });
  result.context = context;
  const readPaths = [path.join(fixtures, "sources")];
  const first = await runAndCheck(root, manifest, context, readPaths, "fixture run");
  add(...first.problems);
  if (first.problems.length) return finish(result);
  result.records = first.records;
  result.output = first.text;
  if (runTwice) {
    const second = await runFetcher({ folder: root, context, readPaths, limits: manifest.limits || {} });
    if (second.exit !== 0 || !second.stdout.equals(first.res.stdout)) {
      const diff = firstDifference(second.stdout.toString("utf8"), first.text);
      add(problem("PLG-RUN-NOT-DETERMINISTIC", `the fetcher printed different output on a second run of the same files${diff ? ` (line ${diff.line}: ${diff.want} then ${diff.got})` : ""}`, diff ? { line: diff.line } : {}));
    }
  }
  if (update) fs.writeFileSync(recordsFile, first.res.stdout);
  else {
    const expected = fs.readFileSync(recordsFile, "utf8");
    if (expected !== first.text) {
      const diff = firstDifference(first.text, expected);
      add(problem("PLG-FIXTURE-MISMATCH", `fixtures/records.jsonl line ${diff.line} differs: the fetcher printed ${diff.got}, the file has ${diff.want}; fix the fetcher, or run check --update and read the diff`, { path: "fixtures/records.jsonl", line: diff.line }));
    }
  }
  // Later runs and failing cases
  const runsDir = path.join(fixtures, "runs");
  if (fs.existsSync(runsDir)) {
    const cases = fs.readdirSync(runsDir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name).sort();
    for (const name of cases) {
      result.runs.total++;
      const ps = await checkRunCase(root, manifest, name, { now, today, baseRecords: first.records, update });
      add(...ps);
      if (!ps.some((p) => p.severity === "error")) result.runs.passed++;
    }
  }
  return finish(result);
}

/** One fixtures/runs/<case>: a later run (records.jsonl) or a run that must fail (expect.json). */
export async function checkRunCase(root, manifest, name, { now, today, baseRecords, update = false }) {
  const rel = `fixtures/runs/${name}`;
  const dir = path.join(root, rel);
  const out = [];
  let ctx = { now, today };
  if (fs.existsSync(path.join(dir, "context.json"))) {
    const c = readContextFile(path.join(dir, "context.json"), manifest.timezone, `${rel}/context.json`);
    if (c.problem) return [c.problem];
    ctx = c;
  }
  const hasRecords = fs.existsSync(path.join(dir, "records.jsonl"));
  const hasExpect = fs.existsSync(path.join(dir, "expect.json"));
  if (hasRecords === hasExpect && !(update && !hasExpect)) {
    return [problem("PLG-FIXTURE-RECORDS-MISSING", `${rel} needs either records.jsonl (a later run) or expect.json (a run that must fail), not ${hasRecords ? "both" : "neither"}`, { path: rel })];
  }
  let expect = null;
  if (hasExpect) {
    try {
      expect = JSON.parse(fs.readFileSync(path.join(dir, "expect.json"), "utf8"));
      if (!isObject(expect) || (has(expect, "exit") && !isInt(expect.exit)) || (has(expect, "reason") && typeof expect.reason !== "string") || Object.keys(expect).some((k) => !["exit", "reason"].includes(k))) throw new Error("expect.json is {\"exit\": integer, \"reason\": \"words\"}");
    } catch (e) {
      return [problem("PLG-RUN-EXPECTED-FAILURE", `${rel}/expect.json: ${e.message}`, { path: `${rel}/expect.json` })];
    }
  }
  const sources = sourcesFor(root, manifest, dir);
  const state = seriesState(manifest, baseRecords, ctx.today);
  const context = buildContext(manifest, { now: ctx.now, today: ctx.today, backfill: false, sources, state });
  const readPaths = [path.join(root, "fixtures", "sources"), path.join(dir, "sources")].filter((p) => fs.existsSync(p));
  const label = `run case ${name}`;
  if (expect) {
    const res = await runFetcher({ folder: root, context, readPaths, limits: manifest.limits || {} });
    out.push(...runProblems(res, label, { expectFailure: true }).filter((p) => p.code !== "PLG-RUN-KILLED"));
    const why = [];
    if (res.exit === 0 && !res.killed) why.push("it exited 0");
    else if (has(expect, "exit") && res.exit !== expect.exit) why.push(`it exited ${res.exit ?? res.signal}, not ${expect.exit}`);
    if (res.stdout.length) why.push("it printed records");
    if (expect.reason && !res.lastLine.toLowerCase().includes(expect.reason.toLowerCase())) why.push(`its last stderr line "${res.lastLine}" lacks "${expect.reason}"`);
    if (why.length) out.push(problem("PLG-RUN-EXPECTED-FAILURE", `${label} must fail but ${why.join("; ")}`, { path: `${rel}/expect.json` }));
    return out;
  }
  const run = await runAndCheck(root, manifest, context, readPaths, label);
  out.push(...run.problems);
  if (run.problems.length) return out;
  const file = path.join(dir, "records.jsonl");
  if (update) fs.writeFileSync(file, run.res.stdout);
  else {
    const expected = fs.readFileSync(file, "utf8");
    if (expected !== run.text) {
      const diff = firstDifference(run.text, expected);
      out.push(problem("PLG-FIXTURE-MISMATCH", `${rel}/records.jsonl line ${diff.line} differs: the fetcher printed ${diff.got}, the file has ${diff.want}`, { path: `${rel}/records.jsonl`, line: diff.line }));
    }
  }
  return out;
}

function finish(result) {
  const errors = result.findings.filter((p) => p.severity === "error").length;
  const warnings = result.findings.length - errors;
  result.ok = errors === 0;
  const runs = result.runs.total ? `, ${result.runs.passed} of ${result.runs.total} runs cases passed` : "";
  result.summary = result.ok
    ? `passes: ${result.records.length} records${runs}${warnings ? `, ${warnings} warning${warnings > 1 ? "s" : ""}` : ""}`
    : `does not pass: ${errors} problem${errors > 1 ? "s" : ""}${warnings ? `, ${warnings} warning${warnings > 1 ? "s" : ""}` : ""}${runs}`;
  return result;
}

// ---------------------------------------------------------------------------------------------
// Listing rules ("Listing (listing.json)") and the icon read from its bytes
// ---------------------------------------------------------------------------------------------

/** Store categories (the spec leaves them open; Almanac's list). */
export const CATEGORIES = ["economy", "finance", "government", "holidays", "science", "weather", "energy", "health", "transport", "education", "culture", "sport", "technology", "other"];
const LISTING_KEYS = ["$schema", "listing", "plugin", "publisher", "tagline", "description", "category", "keywords", "links", "sources", "examples"];
const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const isHttps = (u) => {
  if (typeof u !== "string" || !/^https:\/\//.test(u)) return false;
  try {
    return new URL(u).protocol === "https:";
  } catch {
    return false;
  }
};

/** Check a listing object against the manifest; `coveredDates` are dates the fixture records cover. */
export function validateListing(l, manifest, { coveredDates = null } = {}) {
  const out = [];
  const bad = (code, p, msg) => out.push(problem(code, `listing.json ${p}: ${msg}`, { path: p }));
  if (!isObject(l)) return [problem("PLG-LISTING-INVALID", "listing.json must be one JSON object", { path: "" })];
  for (const k of Object.keys(l)) if (!LISTING_KEYS.includes(k)) bad("PLG-LISTING-INVALID", k, "is not a listing key");
  if (l.listing !== 1) bad("PLG-LISTING-INVALID", "listing", "must be 1");
  if (manifest && l.plugin !== manifest.id) bad("PLG-LISTING-ID", "plugin", `${JSON.stringify(l.plugin)} differs from the manifest id "${manifest.id}"`);
  if (!isObject(l.publisher) || typeof l.publisher.domain !== "string" || !HOST_RE.test(l.publisher.domain) || !l.publisher.domain.includes(".")) bad("PLG-LISTING-PUBLISHER", "publisher.domain", "name the organization's verified domain, such as example.org");
  const perLanguage = (key, code, max, oneLine) => {
    const v = l[key];
    if (!isObject(v) || Object.keys(v).length === 0) return bad(code, key, `give text per language, with en`);
    if (!has(v, "en")) bad("PLG-LISTING-LANGUAGE-MISSING", `${key}.en`, "English text is required");
    for (const [lang, text] of Object.entries(v)) {
      if (!LANG_RE.test(lang) || typeof text !== "string" || chars(text.trim()) < 1 || chars(text) > max || (oneLine && /[\r\n]/.test(text))) bad(code, `${key}.${lang}`, `must be ${oneLine ? "one line of " : ""}1 to ${max} characters of plain text`);
    }
  };
  perLanguage("tagline", "PLG-LISTING-TAGLINE", 80, true);
  perLanguage("description", "PLG-LISTING-DESCRIPTION", 2000, false);
  if (!CATEGORIES.includes(l.category)) bad("PLG-LISTING-CATEGORY", "category", `${JSON.stringify(l.category)} is not one of ${CATEGORIES.join(", ")}`);
  if (has(l, "keywords")) {
    if (!Array.isArray(l.keywords) || l.keywords.length > 12 || l.keywords.some((k) => typeof k !== "string" || chars(k) < 1 || chars(k) > 30)) bad("PLG-LISTING-KEYWORDS", "keywords", "at most 12 keywords of at most 30 characters");
  }
  const links = isObject(l.links) ? l.links : {};
  if (!has(links, "privacy")) bad("PLG-NO-PRIVACY-POLICY", "links.privacy", "link the publisher's privacy policy (https)");
  else if (!isHttps(links.privacy)) bad("PLG-LISTING-LINK", "links.privacy", "is not an https link");
  const support = links.support;
  if (!isObject(support) || (!has(support, "url") && !has(support, "email"))) bad("PLG-NO-SUPPORT-CONTACT", "links.support", "give a support url, an e-mail, or both");
  else {
    if (has(support, "url") && !isHttps(support.url)) bad("PLG-LISTING-LINK", "links.support.url", "is not an https link");
    if (has(support, "email") && (typeof support.email !== "string" || !EMAIL_RE.test(support.email))) bad("PLG-NO-SUPPORT-CONTACT", "links.support.email", "is not an e-mail address");
  }
  const declared = manifest && Array.isArray(manifest.sources) ? manifest.sources.map((s) => s.name) : [];
  if (!Array.isArray(l.sources)) bad("PLG-LISTING-SOURCE", "sources", "list one entry per declared source: name, title, page, licence {name, url}");
  else {
    l.sources.forEach((s, i) => {
      const p = `sources[${i}]`;
      if (!isObject(s) || typeof s.name !== "string" || !declared.includes(s.name)) return bad("PLG-LISTING-SOURCE", `${p}.name`, `${JSON.stringify(s && s.name)} is not a declared source`);
      if (typeof s.title !== "string" || !s.title.trim()) bad("PLG-LISTING-SOURCE", `${p}.title`, "is required");
      if (!has(s, "page")) bad("PLG-LISTING-SOURCE", `${p}.page`, "is required");
      else if (!isHttps(s.page)) bad("PLG-LISTING-LINK", `${p}.page`, "is not an https link");
      if (!isObject(s.licence) || typeof s.licence.name !== "string" || !s.licence.name.trim()) bad("PLG-LISTING-SOURCE", `${p}.licence`, "give the licence name and url");
      else if (!isHttps(s.licence.url)) bad("PLG-LISTING-LINK", `${p}.licence.url`, "is not an https link");
    });
    for (const name of declared) if (!l.sources.some((s) => isObject(s) && s.name === name)) bad("PLG-LISTING-SOURCE", "sources", `no entry for declared source "${name}"`);
  }
  if (!Array.isArray(l.examples) || l.examples.length < 1 || l.examples.length > 3) bad("PLG-LISTING-EXAMPLE", "examples", "give 1 to 3 example days");
  else {
    l.examples.forEach((e, i) => {
      const p = `examples[${i}]`;
      if (!isObject(e) || !isDate(e.date)) return bad("PLG-LISTING-EXAMPLE", `${p}.date`, "is not a date YYYY-MM-DD");
      if (coveredDates && !coveredDates.has(e.date)) bad("PLG-LISTING-EXAMPLE", `${p}.date`, `${e.date} has no fixture record`);
      if (!isObject(e.caption) || !Object.values(e.caption).every((c) => typeof c === "string" && c.trim())) bad("PLG-LISTING-EXAMPLE", `${p}.caption`, "give a caption per language");
    });
  }
  return out;
}

/** The store icon from its bytes: a PNG of 256x256 at most 64 KB. Returns a reason or null. */
export function iconProblem(buf) {
  if (buf.length > 64 * 1024) return `is ${buf.length} bytes; at most 65536`;
  const sig = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  if (buf.length < 33 || !buf.subarray(0, 8).equals(sig) || buf.toString("latin1", 12, 16) !== "IHDR") return "is not a PNG";
  const w = buf.readUInt32BE(16);
  const h = buf.readUInt32BE(20);
  if (w !== 256 || h !== 256) return `is ${w}x${h}; it must be 256x256`;
  return null;
}

function checkListingFolder(root, manifest) {
  let l;
  try {
    l = JSON.parse(fs.readFileSync(path.join(root, "listing.json"), "utf8"));
  } catch (e) {
    return [problem("PLG-LISTING-INVALID", `listing.json is not JSON: ${e.message}`, { path: "listing.json" })];
  }
  let covered = null;
  try {
    covered = new Set(outputLines(fs.readFileSync(path.join(root, "fixtures", "records.jsonl"), "utf8")).map((t) => JSON.parse(t).date));
  } catch {}
  const out = validateListing(l, manifest, { coveredDates: covered });
  const icon = path.join(root, "listing", "icon.png");
  if (!fs.existsSync(icon)) out.push(problem("PLG-LISTING-ICON", "listing/icon.png is missing: a 256x256 PNG of at most 64 KB", { path: "listing/icon.png" }));
  else {
    const why = iconProblem(fs.readFileSync(icon));
    if (why) out.push(problem("PLG-LISTING-ICON", `listing/icon.png ${why}`, { path: "listing/icon.png" }));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Preview renderer ("Reader presentation rules"): a pure function of manifest and records
// ---------------------------------------------------------------------------------------------

/** The app's own words (English only at present, rule 10). */
export const WORDS = { scheduled: "Scheduled", lastRate: "Last rate", rateOf: "Rate of", movedTo: "Moved to", cancelled: "Cancelled", was: "Was", held: "Held", couldNotRefresh: "Could not refresh since", couldNotRefreshNone: "Could not refresh", couldNotReach: "Could not reach Almanac", notUpdating: "Not updating" };
/** How a screen reader says a unit (rule 8); others as written. */
export const UNIT_WORDS = { DOP: "Dominican pesos", USD: "US dollars", EUR: "euros", "%": "percent" };
export const STATUSES = ["running", "failing", "unreachable", "paused", "pending"];

/** Names in the reader's language, then en, then the first listed (rule 2; two letters only). */
export function pickName(names, language = "en") {
  if (!isObject(names)) return null;
  const lang = String(language || "en").toLowerCase().split(/[-_]/)[0];
  if (typeof names[lang] === "string") return names[lang];
  if (typeof names.en === "string") return names.en;
  const first = Object.keys(names)[0];
  return first === undefined ? null : names[first];
}

/** Two decimals, half away from zero on the exact binary value; never "-0.00". */
export function twoDecimals(x) {
  const t = x.toFixed(2);
  return /^-0\.00$/.test(t) ? "0.00" : t;
}
function signed(text) {
  return /^-/.test(text) || /^0(\.0+)?$/.test(text) ? text : `+${text}`;
}
function roundHalfAway(x) {
  return Math.sign(x) * Math.round(Math.abs(x));
}
/** Change from prev to cur: basis points when the unit is %, else a signed percent; null without a base. */
export function changeOf(cur, prev, unit) {
  if (typeof cur !== "number" || typeof prev !== "number") return null;
  if (unit === "%") {
    const bp = roundHalfAway(Number(((cur - prev) * 100).toFixed(6)));
    return { text: `${signed(String(bp === 0 ? 0 : bp))} bp`, unit: "bp" };
  }
  if (prev === 0) return null;
  return { text: `${signed(twoDecimals(((cur - prev) / Math.abs(prev)) * 100))}%`, unit: "percent" };
}
function spokenOf(text, unit) {
  if (!unit) return text;
  return `${text} ${UNIT_WORDS[unit] ?? unit}`;
}

const byCodePoint = (a, b) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Draw the days from..to (inclusive) as a reader sees them. `records` are stored records
 * (an event record may carry `movedTo`: the store's mark on its old date). `status` is the
 * plug-in's state: running, failing, unreachable, paused or pending. Returns
 * [{date, sections: [{plugin, name, rows}]}] (tests/conformance/days/schema.json).
 */
export function renderDays(manifest, records, { from, to, today, language = "en", status = "running" }) {
  const series = manifest.series;
  const order = new Map(series.map((s, i) => [s.key, i]));
  const attribution = manifest.licence ? manifest.licence.attribution || manifest.licence.holder : undefined;
  const bySeries = new Map(series.map((s) => [s.key, []]));
  for (const r of records) if (bySeries.has(r.series)) bySeries.get(r.series).push(r);
  const fieldLabel = (s, f) => pickName(s.fieldNames && s.fieldNames[f], language) ?? f;
  const seriesName = (s) => pickName(s.name, language) ?? s.key;
  const pastRecords = records.filter((r) => bySeries.has(r.series) && r.date <= today);
  const newest = pastRecords.length ? pastRecords.map((r) => r.date).sort(byCodePoint).pop() : null;

  // Per value series: records sorted by (date, period) with their change.
  const valueRows = new Map();
  for (const s of series.filter((x) => x.kind === "value")) {
    const list = bySeries.get(s.key).slice().sort((a, b) => byCodePoint(a.date, b.date) || byCodePoint(a.period || "", b.period || ""));
    const changeField = s.change || s.fields[0];
    valueRows.set(s.key, list.map((r, i) => {
      const prev = i > 0 ? list[i - 1] : null;
      return { r, change: prev ? changeOf(r.fields[changeField], prev.fields[changeField], s.unit) : null };
    }));
  }
  const valueRow = (s, r, style, note, change) => {
    const label = seriesName(s) + (s.dates === "publication" && r.period ? ` ${r.period}` : "");
    const figures = s.fields.filter((f) => typeof r.fields[f] === "number").map((f) => {
      const text = twoDecimals(r.fields[f]);
      return { field: f, label: fieldLabel(s, f), value: r.fields[f], text, spoken: spokenOf(text, s.unit) };
    });
    const row = { type: "value", series: s.key, label, date: r.date, figures, change, style, note };
    if (attribution !== undefined) row.attribution = attribution;
    return row;
  };
  // Per event series: previous happened event with a value, for its change.
  const eventPrev = new Map();
  for (const s of series.filter((x) => x.kind === "event")) {
    const happened = bySeries.get(s.key).filter((r) => r.state === "happened" && typeof r.value === "number" && !r.movedTo).sort((a, b) => byCodePoint(a.date, b.date) || byCodePoint(a.id, b.id));
    happened.forEach((r, i) => eventPrev.set(r, i > 0 ? happened[i - 1] : null));
  }
  const eventValueText = (v, unit) => (unit === "%" ? `${twoDecimals(v)}%` : twoDecimals(v));
  const eventRow = (s, r) => {
    const title = typeof r.title === "string" && r.title !== "" ? r.title : seriesName(s);
    const base = { type: "event", series: s.key, id: r.id, label: title, date: r.date };
    if (r.movedTo) return { ...base, state: "moved", note: `${WORDS.movedTo} ${r.movedTo}` };
    if (r.state === "scheduled") return { ...base, state: "scheduled", note: WORDS.scheduled };
    if (r.state === "cancelled") return { ...base, state: "cancelled", note: WORDS.cancelled };
    if (typeof r.value === "number") {
      const text = eventValueText(r.value, s.unit);
      const prev = eventPrev.get(r);
      let change = null;
      let note = null;
      if (prev) {
        if (prev.value === r.value) note = WORDS.held;
        else if (s.unit === "%") change = changeOf(r.value, prev.value, "%");
        else note = `${WORDS.was} ${eventValueText(prev.value, s.unit)}`;
      }
      return { ...base, label: seriesName(s), state: "happened", figures: [{ field: "value", label: seriesName(s), value: r.value, text, spoken: spokenOf(twoDecimals(r.value), s.unit) }], change, note };
    }
    return { ...base, state: "happened", note: null };
  };

  const days = [];
  const first = dateToDays(from);
  const last = dateToDays(to);
  for (let n = first; n <= last; n++) {
    const d = daysToDate(n);
    const events = [];
    const others = [];
    for (const s of series) {
      const list = bySeries.get(s.key);
      if (s.kind === "event") {
        const onDay = list.filter((r) => r.date === d).sort((a, b) => byCodePoint(a.id, b.id));
        for (const r of onDay) {
          if (d > today && !(r.state === "scheduled" || r.movedTo)) continue;
          events.push(eventRow(s, r));
        }
      } else if (s.kind === "item") {
        if (d > today) continue;
        for (const r of list.filter((x) => x.date === d).sort((a, b) => byCodePoint(a.id, b.id))) others.push({ type: "item", series: s.key, id: r.id, label: r.title, date: r.date, href: r.url });
      } else if (s.kind === "value") {
        if (d > today) continue;
        const rows = valueRows.get(s.key);
        if (!rows.length || d < rows[0].r.date) continue;
        const onDay = rows.filter((x) => x.r.date === d);
        if (onDay.length) for (const x of onDay) others.push(valueRow(s, x.r, "normal", null, x.change));
        else {
          const before = rows.filter((x) => x.r.date < d);
          const held = before[before.length - 1].r;
          const isAfterNewest = d > rows[rows.length - 1].r.date;
          others.push(isAfterNewest ? valueRow(s, held, "last", `${WORDS.lastRate} ${held.date}`, null) : valueRow(s, held, "in-force", `${WORDS.rateOf} ${held.date}`, null));
        }
      }
    }
    const rows = [...events, ...others];
    if (d <= today && ((newest !== null && d > newest) || (newest === null && d === today))) {
      const st = statusRow(status, newest);
      if (st) rows.push(st);
    }
    days.push({ date: d, sections: rows.length ? [{ plugin: manifest.id, name: pickName(manifest.name, language) ?? manifest.id, rows }] : [] });
  }
  return days;
}

function statusRow(status, newest) {
  if (newest === null) {
    // No records: a section only on today, when the first run failed or Almanac is unreachable.
    if (status === "failing") return { type: "status", status: "could-not-refresh", note: WORDS.couldNotRefreshNone, date: null };
    if (status === "unreachable") return { type: "status", status: "could-not-reach", note: WORDS.couldNotReach, date: null };
    return null;
  }
  if (status === "failing") return { type: "status", status: "could-not-refresh", note: `${WORDS.couldNotRefresh} ${newest}`, date: newest };
  if (status === "unreachable") return { type: "status", status: "could-not-reach", note: WORDS.couldNotReach, date: newest };
  if (status === "paused" || status === "pending") return { type: "status", status: "not-updating", note: WORDS.notUpdating, date: newest };
  return { type: "status", status: "last-rate", note: `${WORDS.lastRate} ${newest}`, date: newest };
}

// Text and page output of rendered days.
const WEEKDAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const weekday = (d) => WEEKDAYS[((dateToDays(d) % 7) + 11) % 7];

function rowText(row) {
  const parts = [];
  if (row.type === "event") {
    parts.push(`${row.state === "scheduled" ? "◆ " : "• "}${row.label}`);
    if (row.figures) parts.push(row.figures.map((f) => f.text).join("  "));
  } else if (row.type === "value") {
    parts.push(row.label);
    parts.push(row.figures.map((f) => `${f.label} ${f.text}`).join("  "));
  } else if (row.type === "item") parts.push(`${row.label} <${row.href}>`);
  else parts.push(`[${row.note}]`);
  if (row.change) parts.push(`(${row.change.text})`);
  if (row.type !== "status" && row.note) parts.push(`· ${row.note}`);
  if (row.attribution) parts.push(`— ${row.attribution}`);
  return parts.join("  ");
}

/** Rendered days as terminal text (lighter rows dimmed when the terminal has colour). */
export function daysText(days, { today, colour = false } = {}) {
  const dim = (s) => (colour ? `\x1b[2m${s}\x1b[0m` : s);
  const lines = [];
  for (const day of days) {
    lines.push(`${weekday(day.date)} ${day.date}${day.date === today ? "  (today)" : ""}`);
    if (!day.sections.length) lines.push("    (nothing)");
    for (const sec of day.sections) {
      lines.push(`  ${sec.name}`);
      for (const row of sec.rows) {
        const t = `    ${rowText(row)}`;
        lines.push(row.style === "in-force" || row.style === "last" || row.type === "status" ? dim(t) : t);
      }
    }
  }
  return lines.join("\n") + "\n";
}

const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
/** A self-contained page that looks like a calendar day list. */
export function daysHtml(days, { title, today }) {
  const rowHtml = (row) => {
    if (row.type === "item") return `<li class="row item"><a href="${esc(row.href)}" rel="noopener">${esc(row.label)}</a></li>`;
    if (row.type === "status") return `<li class="row status ${esc(row.status)}">${esc(row.note)}</li>`;
    const figs = (row.figures || []).map((f) => `<span class="fig"><span class="lab">${esc(f.label)}</span> <span aria-label="${esc(f.spoken)}">${esc(f.text)}</span></span>`).join(" ");
    const cls = row.type === "value" ? `value ${row.style}` : `event ${row.state}`;
    const marker = row.type === "event" && row.state === "scheduled" ? `<span class="marker" aria-hidden="true">◆</span> ` : "";
    const label = row.type === "value" && row.figures.length === 1 ? "" : "";
    return `<li class="row ${cls}">${marker}<span class="name">${esc(row.label)}</span>${label} ${figs}${row.change ? ` <span class="change">${esc(row.change.text)}</span>` : ""}${row.note ? ` <span class="note">${esc(row.note)}</span>` : ""}${row.attribution ? ` <span class="attr">${esc(row.attribution)}</span>` : ""}</li>`;
  };
  const body = days.map((day) => `<section class="day${day.date === today ? " today" : ""}"><h2><span class="wd">${weekday(day.date)}</span> ${esc(day.date)}</h2>${day.sections.map((s) => `<div class="plugin"><h3>${esc(s.name)}</h3><ul>${s.rows.map(rowHtml).join("")}</ul></div>`).join("") || `<p class="empty">Nothing</p>`}</section>`).join("\n");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}: preview</title>
<style>
body{font:15px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:0;background:#f4f4f2;color:#1d1d1f}
main{max-width:640px;margin:24px auto;padding:0 12px}
h1{font-size:18px;font-weight:600}
.day{background:#fff;border-radius:10px;margin:10px 0;padding:10px 14px;box-shadow:0 1px 2px #0001}
.day.today{outline:2px solid #3a6ee8}
.day h2{font-size:14px;margin:0 0 6px;color:#555;font-weight:600}
.plugin h3{font-size:12px;text-transform:uppercase;letter-spacing:.04em;color:#777;margin:6px 0 2px}
ul{list-style:none;margin:0;padding:0}
.row{padding:3px 0;display:flex;flex-wrap:wrap;gap:6px;align-items:baseline}
.name{font-weight:500}
.fig .lab{color:#666;font-size:13px}
.change,.note,.attr{color:#666;font-size:13px}
.attr{margin-left:auto}
.in-force,.last,.status{opacity:.55}
.marker{color:#3a6ee8}
.cancelled .name{text-decoration:line-through}
.empty{color:#aaa;margin:0}
a{color:#2456c9}
</style></head><body><main><h1>${esc(title)}</h1>
${body}
</main></body></html>
`;
}

// ---------------------------------------------------------------------------------------------
// Downloads (probe, preview --live): https only, declared hosts, maxBytes, 5 redirects, 60 s
// ---------------------------------------------------------------------------------------------

/** Fill {today}, {year} and {month} in a source URL for the day in the manifest zone. */
export function fillUrl(url, today) {
  return url.replaceAll("{today}", today).replaceAll("{year}", today.slice(0, 4)).replaceAll("{month}", today.slice(5, 7));
}

/** Download one source: {ok: true, body} or {ok: false, detail}. */
export async function downloadSource(source, { today, hosts, base = baseUrl(), onProgress = () => {} }) {
  const https = await import("node:https");
  const limit = source.maxBytes || MAX_BYTES;
  let url = fillUrl(source.url, today);
  const deadline = Date.now() + 60000;
  for (let hop = 0; hop <= 5; hop++) {
    let u;
    try {
      u = new URL(url);
    } catch {
      return { ok: false, detail: `${url} is not an address` };
    }
    if (u.protocol !== "https:") return { ok: false, detail: `${url} is not https` };
    if (u.username || u.password) return { ok: false, detail: `${url} carries credentials` };
    if (!hosts.has(u.hostname)) return { ok: false, detail: `${u.hostname} is not a host a source names` };
    const res = await new Promise((resolve) => {
      const left = deadline - Date.now();
      if (left <= 0) return resolve({ ok: false, detail: "took over 60 seconds" });
      const req = https.request(u, { method: "GET", headers: { "user-agent": `Almanac plug-ins (+${base})`, accept: "*/*" } }, (resp) => {
        if ([301, 302, 303, 307, 308].includes(resp.statusCode) && resp.headers.location) {
          resp.resume();
          return resolve({ redirect: new URL(resp.headers.location, u).toString() });
        }
        if (resp.statusCode !== 200) {
          resp.resume();
          return resolve({ ok: false, detail: `status ${resp.statusCode}` });
        }
        const declared = Number(resp.headers["content-length"]);
        if (declared > limit) {
          req.destroy();
          return resolve({ ok: false, detail: `${declared} bytes is over maxBytes ${limit}` });
        }
        const parts = [];
        let got = 0;
        resp.on("data", (c) => {
          got += c.length;
          if (got > limit) {
            req.destroy();
            resolve({ ok: false, detail: `over maxBytes ${limit}` });
            return;
          }
          parts.push(c);
          onProgress(got, declared || null);
        });
        resp.on("end", () => {
          if (declared && got !== declared) resolve({ ok: false, detail: `the response was cut short (${got} of ${declared} bytes)` });
          else resolve({ ok: true, body: Buffer.concat(parts) });
        });
        resp.on("error", (e) => resolve({ ok: false, detail: e.message }));
        resp.on("aborted", () => resolve({ ok: false, detail: "the response was cut short" }));
      });
      req.setTimeout(left, () => {
        req.destroy();
        resolve({ ok: false, detail: "took over 60 seconds" });
      });
      req.on("error", (e) => resolve({ ok: false, detail: e.code ? `${e.code} ${e.message}` : e.message }));
      req.end();
    });
    if (!res.redirect) return res;
    url = res.redirect;
  }
  return { ok: false, detail: "more than 5 redirects" };
}

/** Download every source of a manifest into dir/<name>, with progress on stderr. */
export async function downloadAll(manifest, dir, { today, quiet = false } = {}) {
  const hosts = new Set(manifest.sources.map((s) => urlHost(s.url)));
  const sources = {};
  const cache = [];
  for (const s of manifest.sources) {
    let shown = 0;
    const onProgress = (got, total) => {
      if (quiet || Date.now() - shown < 250) return;
      shown = Date.now();
      process.stderr.write(`\r  ${s.name}: ${(got / 1024).toFixed(0)} KB${total ? ` of ${(total / 1024).toFixed(0)} KB` : ""}   `);
    };
    if (!quiet) process.stderr.write(`downloading ${s.name} from ${fillUrl(s.url, today)}\n`);
    const r = await downloadSource(s, { today, hosts, onProgress });
    if (!quiet && shown) process.stderr.write("\n");
    if (!r.ok) return { ok: false, reason: `could not download ${s.name}: ${r.detail}` };
    const file = path.join(dir, s.name);
    fs.writeFileSync(file, r.body);
    sources[s.name] = file;
    cache.push({ name: s.name, url: fillUrl(s.url, today), bytes: r.body.length, sha256: sha256(r.body) });
    if (!quiet) process.stderr.write(`  ${s.name}: ${r.body.length} bytes\n`);
  }
  return { ok: true, sources, cache };
}

// ---------------------------------------------------------------------------------------------
// Init templates
// ---------------------------------------------------------------------------------------------

// Short words that are words, not acronyms, when an id is turned into a name.
const NOT_ACRONYMS = new Set(["and", "the", "of", "for", "new", "day", "days", "in", "on", "to", "by", "at", "oil", "gas", "tax", "sea", "air", "low", "all", "top", "end", "old", "art", "law", "age", "job", "car", "bus", "fx"].filter((w) => w !== "fx"));
/**
 * The display name of an id (tool 1.4.0: acronyms kept). Each hyphen-separated part becomes a
 * word: a part of at most three letters, or with no vowel (a, e, i, o, u, y), is an acronym
 * and written in capitals (ecb-fx -> "ECB FX", bcrd-usd -> "BCRD USD", fed-h10 -> "FED H10"),
 * unless it is a common short word (and, the, of, new, day, oil, gas, tax, ...); other parts
 * get a capital first letter (bank-holidays -> "Bank Holidays").
 */
export function nameFromId(id) {
  return id.split("-").filter(Boolean).map((part) => {
    const acronym = (part.length <= 3 || !/[aeiouy]/.test(part)) && !NOT_ACRONYMS.has(part);
    return acronym ? part.toUpperCase() : part[0].toUpperCase() + part.slice(1);
  }).join(" ");
}

const README_MARK = "<!-- almanac-plugin: template README; replace it with your own words and delete this line -->";

function templateFiles(id, kind, zone, now) {
  const name = nameFromId(id);
  const today = dateInZone(new Date(now), zone);
  const d = (n) => addDays(today, n);
  const host = "example.org";
  const series = {
    value: { key: "rate", kind: "value", cadence: "business-day", dates: "observation", name: { en: "Rate" }, unit: "USD", fields: ["rate"], fieldNames: { rate: { en: "Rate" } } },
    event: { key: "meetings", kind: "event", cadence: "irregular", dates: "observation", name: { en: "Meetings" }, snapshot: { back: "30d", ahead: "1y" } },
    item: { key: "notices", kind: "item", cadence: "irregular", dates: "publication", name: { en: "Notices" } },
  }[kind];
  const source = { value: "rates", event: "calendar", item: "notices" }[kind];
  const sourceUrl = { value: `https://${host}/${id}/rates.csv`, event: `https://${host}/${id}/calendar.json`, item: `https://${host}/${id}/notices.json` }[kind];
  const manifest = {
    contract: 1,
    id,
    name: { en: name.length > 80 ? name.slice(0, 80) : name },
    version: "0.1.0",
    timezone: zone,
    audience: "local",
    schedule: { value: "30 17 * * 1-5", event: "0 7 * * *", item: "0 */6 * * *" }[kind],
    backfill: kind === "value" ? "1y" : "all",
    sources: [{ name: source, url: sourceUrl, maxBytes: 1048576 }],
    series: [series],
    licence: { holder: "The data holder's name", attribution: name.length > 40 ? name.slice(0, 40) : name, terms: null, retain: "unknown" },
  };
  let sample;
  let broken;
  let fetcher;
  if (kind === "value") {
    const rows = [];
    let v = 1.085;
    for (let i = 10; i >= 0; i--) {
      const day = d(-i);
      const wd = ((dateToDays(day) % 7) + 11) % 7;
      if (wd === 0 || wd === 6) continue;
      rows.push(`${day},${v.toFixed(4)}`);
      v += i % 3 === 0 ? -0.0031 : 0.0017;
    }
    sample = `date,rate\n${rows.join("\n")}\n`;
    broken = `day,rate\n${rows.join("\n")}\n`;
    fetcher = `// fetch.mjs: reads the downloaded rates file and prints one value record per line.
// Run context (stdin): {contract, plugin, now, today, backfill, backfillFrom, sources, series}.
import { readFileSync } from "node:fs";

const context = JSON.parse(readFileSync(0, "utf8"));

function fail(message) {
  // Exit 2 with one line when the file is not what this fetcher knows: nothing is written.
  process.stderr.write(\`\${message}\\n\`);
  process.exit(2);
}

const text = readFileSync(context.sources.rates, "utf8");
const lines = text.split(/\\r?\\n/).filter((line) => line !== "");
if (lines[0] !== "date,rate") fail(\`rates: expected the header "date,rate", found "\${lines[0]}"\`);

const from = context.backfillFrom ?? "0000-01-01";
const out = [];
for (const [index, line] of lines.slice(1).entries()) {
  const [date, rate, ...rest] = line.split(",");
  const value = Number(rate);
  if (rest.length || !/^\\d{4}-\\d{2}-\\d{2}$/.test(date) || rate === "" || !Number.isFinite(value)) {
    fail(\`rates: line \${index + 2} is not "date,rate": \${line}\`);
  }
  if (date < from || date > context.today) continue; // never after today
  out.push(JSON.stringify({ kind: "value", series: "rate", date, fields: { rate: value } }));
}
process.stdout.write(out.map((line) => line + "\\n").join(""));
`;
  } else if (kind === "event") {
    const events = [
      { id: `m-${d(-20)}`, date: d(-20), status: "held", title: "Board meeting" },
      { id: `m-${d(-6)}`, date: d(-6), status: "called-off", title: "Extra meeting" },
      { id: `m-${d(1)}`, date: d(1), status: "planned", title: "Board meeting" },
      { id: `m-${d(30)}`, date: d(30), status: "planned", title: "Board meeting" },
    ];
    sample = JSON.stringify({ events }, null, 2) + "\n";
    broken = JSON.stringify({ events: [{ ...events[0], status: "postponed-sine-die" }] }, null, 2) + "\n";
    fetcher = `// fetch.mjs: reads the downloaded calendar and prints one event record per line.
// Run context (stdin): {contract, plugin, now, today, backfill, backfillFrom, sources, series}.
import { readFileSync } from "node:fs";

const context = JSON.parse(readFileSync(0, "utf8"));

function fail(message) {
  // Exit 2 with one line when the file is not what this fetcher knows: nothing is written.
  process.stderr.write(\`\${message}\\n\`);
  process.exit(2);
}

const STATES = { planned: "scheduled", held: "happened", "called-off": "cancelled" };
let calendar;
try {
  calendar = JSON.parse(readFileSync(context.sources.calendar, "utf8"));
} catch (error) {
  fail(\`calendar: not JSON: \${error.message}\`);
}
if (!Array.isArray(calendar.events)) fail("calendar: no events list");

const from = context.backfillFrom ?? "0000-01-01";
const out = [];
for (const event of calendar.events) {
  const state = STATES[event.status];
  if (!state) fail(\`calendar: unknown status "\${event.status}" for event \${event.id}\`);
  if (event.date < from) continue;
  // Only a scheduled event may lie after today; a cancelled one is left out until its day.
  if (event.date > context.today && state !== "scheduled") continue;
  out.push(JSON.stringify({ kind: "event", series: "meetings", id: event.id, date: event.date, state, title: event.title }));
}
process.stdout.write(out.map((line) => line + "\\n").join(""));
`;
  } else {
    const items = [
      { id: `n-${d(-9)}`, date: d(-9), title: "Notice of revised figures", path: `/notices/${d(-9)}` },
      { id: `n-${d(-2)}`, date: d(-2), title: "Statistical release published", path: `/notices/${d(-2)}` },
      { id: `n-${d(0)}`, date: d(0), title: "Holiday opening hours", path: `/notices/${d(0)}` },
    ];
    sample = JSON.stringify({ notices: items }, null, 2) + "\n";
    broken = JSON.stringify({ entries: items }, null, 2) + "\n";
    fetcher = `// fetch.mjs: reads the downloaded notices and prints one item record per line.
// Run context (stdin): {contract, plugin, now, today, backfill, backfillFrom, sources, series}.
import { readFileSync } from "node:fs";

const context = JSON.parse(readFileSync(0, "utf8"));

function fail(message) {
  // Exit 2 with one line when the file is not what this fetcher knows: nothing is written.
  process.stderr.write(\`\${message}\\n\`);
  process.exit(2);
}

let file;
try {
  file = JSON.parse(readFileSync(context.sources.notices, "utf8"));
} catch (error) {
  fail(\`notices: not JSON: \${error.message}\`);
}
if (!Array.isArray(file.notices)) fail("notices: no notices list");

const from = context.backfillFrom ?? "0000-01-01";
const out = [];
for (const notice of file.notices) {
  if (notice.date < from || notice.date > context.today) continue;
  const url = new URL(notice.path, "https://${host}/").toString(); // links go to a source host
  out.push(JSON.stringify({ kind: "item", series: "notices", date: notice.date, id: notice.id, title: notice.title, url }));
}
process.stdout.write(out.map((line) => line + "\\n").join(""));
`;
  }
  const failReason = { value: "expected the header", event: "unknown status", item: "no notices list" }[kind];
  const agents = agentsText(id, kind, source);
  const files = {
    "plugin.json": JSON.stringify(manifest, null, 2) + "\n",
    "fetch.mjs": fetcher,
    [`fixtures/sources/${source}`]: sample,
    "fixtures/context.json": JSON.stringify({ now, today }, null, 2) + "\n",
    [`fixtures/runs/source-changed/sources/${source}`]: broken,
    "fixtures/runs/source-changed/expect.json": JSON.stringify({ exit: 2, reason: failReason }, null, 2) + "\n",
    "README.md": `${README_MARK}\n# ${name}\n\nAn Almanac calendar plug-in: it puts ${kind === "value" ? "values" : kind === "event" ? "events" : "items"} from ${sourceUrl} on calendar days.\n\n- \`plugin.json\`: the manifest.\n- \`fetch.mjs\`: the fetcher (reads \`fixtures/sources/${source}\` in checks).\n- \`fixtures/\`: a real copy of each source, the records it gives, and run cases.\n\nCheck it with \`node almanac-plugin.mjs check ${id}\`; see the days with \`node almanac-plugin.mjs preview ${id}\`.\n`,
    "AGENTS.md": agents,
    "CLAUDE.md": `# ${name}: instructions for Claude\n\n@AGENTS.md\n\nRead AGENTS.md above first: it is the whole contract for this folder. The loop is: edit, \`node almanac-plugin.mjs check\`, read every finding (\`--json\` gives code, fix and docs link), repeat until it passes.\n`,
  };
  return files;
}

function agentsText(id, kind, source) {
  return `# Instructions for agents writing this Almanac plug-in

This folder is an Almanac calendar plug-in: \`plugin.json\` (the manifest) says what to download,
what to write and when; \`fetch.mjs\` (the fetcher) turns the downloaded files into dated records.
Almanac downloads the sources itself and runs the fetcher with no network. Your job is usually
to make \`fetch.mjs\` read the real files in \`fixtures/sources/\` correctly.

## The run context (stdin)
The fetcher reads one JSON object from standard input:
- \`contract\` 1; \`plugin\` "${id}"; \`now\` (UTC instant); \`today\` (YYYY-MM-DD in the manifest's zone).
- \`backfill\`: true on the first run (nothing stored); \`backfillFrom\`: the first date to print, or null for all.
- \`sources\`: source name -> file path. Read only these paths; never build paths yourself.
- \`series\`: series key -> \`{last, count}\`: the newest stored date on or before today, and how many are stored.

## Output
One JSON object per line on stdout; everything else (messages) on stderr. Record kinds:
- value: \`{"kind":"value","series","date","fields":{field: number}}\` (+ \`period\`, \`revises\` only for series dated by publication).
- event: \`{"kind":"event","series","id","date","state":"scheduled|happened|cancelled"}\` (+ \`value\`, \`title\`).
- item: \`{"kind":"item","series","date","id","title","url"}\`; the url is https to a source host or a \`links.hosts\` host.
No other keys. Every series and field must be declared in plugin.json. Nothing may be dated after
\`today\` except a scheduled event. The same record twice refuses the whole run.

## Rules that matter
- Determinism: the same files and context give the same bytes. No timestamps, random numbers,
  system clock (use \`today\` from the context) or environment. Almanac runs the fixtures twice.
- Imports: only your own \`.mjs\` files (relative paths) and \`node:\` built-ins. No packages, no network.
- When a file is not what the fetcher knows (renamed column, new status, missing list), print one
  line on stderr explaining it and exit 2. Never guess: nothing is written and the reader sees that
  the plug-in could not refresh. Exit 0 when the files read as expected, even with nothing new.
- Print the whole truth for any snapshot window on every run; on the first run print what \`backfillFrom\` allows.

## The check loop
1. Put one real copy of each source in \`fixtures/sources/<source name>\` (here: \`${source}\`).
2. \`node almanac-plugin.mjs check\` runs the fetcher on them (twice) with \`fixtures/context.json\`,
   checks the manifest, imports and every record, and compares the output byte for byte with
   \`fixtures/records.jsonl\`. \`check --update\` writes the output there instead: read the diff.
3. \`fixtures/runs/<case>/\` holds later runs: \`sources/\` (files that differ), optional \`context.json\`,
   and \`records.jsonl\` (expected output, \`backfill\` false) or \`expect.json\` (\`{"exit": 2, "reason": "words"}\`
   for a source the fetcher must refuse).
4. \`node almanac-plugin.mjs check --json\` prints every finding with its code, fix and docs link.
5. \`node almanac-plugin.mjs preview\` draws the days as a reader sees them.
Repeat until check passes. Do not edit \`fixtures/records.jsonl\` by hand to make a check pass.
`;
}

// ---------------------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------------------

export class UsageError extends Error {}
class Failure extends Error {}

function printFindings(findings, stream = process.stderr) {
  for (const p of findings) {
    const where = [p.file, p.path && p.path !== p.file ? p.path : null, p.line ? `line ${p.line}` : null].filter(Boolean).join(" ");
    stream.write(`${p.severity} ${p.code}${where ? ` (${where})` : ""}: ${p.message}\n  fix: ${CATALOG_BY_CODE.get(p.code).fix}\n  docs: ${baseUrl()}/docs/problems/${p.code}\n`);
  }
}

function folderArg(args) {
  const f = path.resolve(args.positional[0] ?? ".");
  if (!fs.existsSync(f) || !fs.statSync(f).isDirectory()) throw new Failure(`${args.positional[0] ?? "."} is not a folder`);
  return f;
}

async function cmdCheck(args) {
  const root = folderArg(args);
  const res = await checkFolder(root, { update: Boolean(args.options.update) });
  if (args.options.json) {
    process.stdout.write(JSON.stringify({ ok: res.ok, summary: res.summary, findings: res.findings.map((p) => findingJson(p)), digest: res.digest }, null, 2) + "\n");
    return res.ok ? 0 : 1;
  }
  printFindings(res.findings);
  const id = res.manifest ? `${res.manifest.id} ${res.manifest.version}` : path.basename(root);
  (res.ok ? process.stdout : process.stderr).write(`check ${id}: ${res.summary}${args.options.update && res.ok ? " (fixtures updated)" : ""}\n`);
  if (res.digest) process.stdout.write(`digest ${res.digest}\n`);
  return res.ok ? 0 : 1;
}

async function cmdDigest(args) {
  const root = folderArg(args);
  const d = computeDigest(root);
  printFindings(d.problems);
  if (args.options.files) process.stdout.write(d.files.map((f) => f + "\n").join(""));
  else process.stdout.write(d.digest + "\n");
  return d.problems.some((p) => p.severity === "error") ? 1 : 0;
}

/** Pack a checked folder into ZIP bytes (DECISIONS 5); returns {bytes, manifest, digest, files}. */
export function packBytes(root, manifest, digest) {
  const { files } = walkFolder(root);
  const entries = [];
  const listed = [];
  for (const rel of files) {
    const data = fs.readFileSync(path.join(root, rel));
    entries.push({ name: `${manifest.id}/${rel}`, data });
    listed.push({ path: rel, size: data.length, sha256: sha256(data) });
  }
  const pack = { pack: 1, contract: CONTRACT, id: manifest.id, version: manifest.version, digest, tool: TOOL_VERSION, files: listed };
  entries.push({ name: `${manifest.id}/.pack.json`, data: Buffer.from(JSON.stringify(pack, null, 2) + "\n", "utf8") });
  return { bytes: zipBytes(entries), files: listed };
}

async function cmdPack(args) {
  const root = folderArg(args);
  const res = await checkFolder(root);
  if (!res.ok) {
    printFindings(res.findings);
    process.stderr.write(`pack: refused, check ${res.summary}; nothing written\n`);
    return 1;
  }
  printFindings(res.findings);
  const readme = path.join(root, "README.md");
  if (fs.existsSync(readme) && fs.readFileSync(readme, "utf8").includes(README_MARK)) printFindings([problem("PLG-README-TEMPLATE", "README.md is still the template written by init", { path: "README.md" })]);
  const out = path.resolve(args.options.out ?? path.join(path.dirname(root), `${res.manifest.id}-${res.manifest.version}.zip`));
  const { bytes, files } = packBytes(root, res.manifest, res.digest);
  const tmp = `${out}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, bytes);
  fs.renameSync(tmp, out);
  process.stdout.write(`packed ${out}: ${files.length} files, ${bytes.length} bytes\ndigest ${res.digest}\n`);
  return 0;
}

function parseDays(text) {
  const m = /^(\d{4}-\d{2}-\d{2})\.\.(\d{4}-\d{2}-\d{2})$/.exec(text || "");
  if (!m || !isDate(m[1]) || !isDate(m[2])) throw new UsageError(`--days "${text}": write YYYY-MM-DD..YYYY-MM-DD`);
  const count = dateToDays(m[2]) - dateToDays(m[1]) + 1;
  if (count < 1) throw new UsageError(`--days "${text}": the first day is after the last`);
  if (count > 62) throw new UsageError(`--days "${text}": ${count} days; at most 62`);
  return { from: m[1], to: m[2] };
}

/** Stored records after a later run: keys replaced, a stored event id on another date marked moved. */
export function applyRun(manifest, stored, printed) {
  const dates = new Map(manifest.series.map((s) => [s.key, s.dates]));
  const byKey = new Map(stored.map((r) => [recordKey(r, dates.get(r.series)), { ...r }]));
  for (const r of printed) {
    if (r.kind === "event") {
      for (const old of byKey.values()) {
        if (old.kind === "event" && old.series === r.series && old.id === r.id && old.date !== r.date && !old.movedTo) old.movedTo = r.date;
      }
    }
    byKey.set(recordKey(r, dates.get(r.series)), r);
  }
  return [...byKey.values()];
}

function readRecordsFile(file) {
  try {
    return outputLines(fs.readFileSync(file, "utf8")).map((t) => JSON.parse(t));
  } catch {
    return [];
  }
}

async function cmdPreview(args) {
  const o = args.options;
  if (o.run !== undefined && o.live) throw new UsageError("--run and --live cannot be used together");
  if (o.html !== undefined && o.json) throw new UsageError("--html and --json cannot be used together");
  const days = o.days !== undefined ? parseDays(o.days) : null;
  const root = folderArg(args);
  const language = o.language ?? "en";
  if (!/^[a-z]{2,3}([-_][A-Za-z0-9]{2,8})?$/.test(language)) throw new UsageError(`--language "${language}" is not a language code such as en or es`);
  const check = await checkFolder(root);
  const manifest = check.manifest;
  if (!manifest || !check.context && !o.live) {
    if (o.json) process.stdout.write(JSON.stringify({ summary: check.summary, cache: null, findings: check.findings.map((p) => findingJson(p)), digest: check.digest, days: [] }, null, 2) + "\n");
    else {
      printFindings(check.findings);
      process.stderr.write(`preview: the fetcher could not run: ${check.summary}\n`);
    }
    return 1;
  }
  let today = check.context ? check.context.today : null;
  let records = check.records;
  let status = check.findings.some((p) => p.code.startsWith("PLG-RUN-") || p.code.startsWith("PLG-RECORD-")) ? "failing" : "running";
  if (status === "failing") records = readRecordsFile(path.join(root, "fixtures", "records.jsonl"));
  let cache = { mode: "fixtures", sources: manifest.sources.map((s) => ({ name: s.name, path: `fixtures/sources/${s.name}` })) };
  if (o.run !== undefined) {
    const dir = path.join(root, "fixtures", "runs", o.run);
    if (!o.run || o.run.includes("/") || !fs.existsSync(dir)) throw new UsageError(`--run "${o.run}": no fixtures/runs/${o.run}`);
    let ctx = { now: check.context.now, today };
    if (fs.existsSync(path.join(dir, "context.json"))) {
      const c = readContextFile(path.join(dir, "context.json"), manifest.timezone, `fixtures/runs/${o.run}/context.json`);
      if (!c.problem) ctx = c;
    }
    today = ctx.today;
    const sources = sourcesFor(root, manifest, dir);
    const context = buildContext(manifest, { ...ctx, backfill: false, sources, state: seriesState(manifest, records, today) });
    const readPaths = [path.join(root, "fixtures", "sources"), path.join(dir, "sources")].filter((p) => fs.existsSync(p));
    const run = await runAndCheck(root, manifest, context, readPaths, `run case ${o.run}`);
    if (run.problems.length) {
      status = "failing";
      if (!o.json) process.stderr.write(`preview: run case ${o.run} fails (${run.problems[0].message}); showing the stored records\n`);
    } else records = applyRun(manifest, records, run.records);
    cache = { mode: `run:${o.run}`, sources: manifest.sources.map((s) => ({ name: s.name, path: path.relative(root, sources[s.name]) })) };
  } else if (o.live) {
    const now = isoNow();
    today = dateInZone(new Date(now), manifest.timezone);
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "almanac-live-"));
    try {
      const dl = await downloadAll(manifest, tmp, { today, quiet: Boolean(o.json) });
      if (!dl.ok) {
        process.stderr.write(`preview --live: ${dl.reason}\n`);
        return 1;
      }
      const context = buildContext(manifest, { now, today, backfill: true, sources: dl.sources });
      const run = await runAndCheck(root, manifest, context, [tmp], "live run");
      if (run.problems.length) {
        printFindings(run.problems);
        return 1;
      }
      records = run.records;
      status = "running";
      cache = { mode: "live", sources: dl.cache };
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  }
  const range = days ?? { from: addDays(today, -3), to: addDays(today, 3) };
  const rendered = renderDays(manifest, records, { ...range, today, language, status });
  const title = pickName(manifest.name, language) ?? manifest.id;
  if (o.json) {
    process.stdout.write(JSON.stringify({ summary: check.summary, cache, findings: check.findings.map((p) => findingJson(p)), digest: check.digest, today, language, status, days: rendered }, null, 2) + "\n");
    return check.ok ? 0 : 1;
  }
  printFindings(check.findings);
  process.stdout.write(`${title} (${manifest.id} ${manifest.version}): ${range.from}..${range.to}, today ${today}, ${language}${status !== "running" ? `, ${status}` : ""}\n\n`);
  process.stdout.write(daysText(rendered, { today, colour: Boolean(process.stdout.isTTY) }));
  if (o.html !== undefined) {
    fs.writeFileSync(path.resolve(o.html), daysHtml(rendered, { title, today }));
    process.stdout.write(`\nwrote ${o.html}\n`);
  }
  return 0;
}

async function cmdProbe(args) {
  const root = folderArg(args);
  const raw = fs.existsSync(path.join(root, "plugin.json")) ? readManifestText(fs.readFileSync(path.join(root, "plugin.json"), "utf8")) : { manifest: null, problems: [problem("PLG-MANIFEST-INVALID-JSON", "plugin.json is missing")] };
  if (raw.problems.some((p) => p.severity === "error")) {
    printFindings(raw.problems);
    return 1;
  }
  const manifest = raw.manifest;
  const now = isoNow();
  const today = dateInZone(new Date(now), manifest.timezone);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "almanac-probe-"));
  try {
    const dl = await downloadAll(manifest, tmp, { today });
    if (!dl.ok) {
      process.stderr.write(`probe: ${dl.reason}\n`);
      return 1;
    }
    const context = buildContext(manifest, { now, today, backfill: true, sources: dl.sources });
    const run = await runAndCheck(root, manifest, context, [tmp], "probe run");
    printFindings(run.problems);
    if (run.problems.length) {
      process.stderr.write(`probe: the fetcher does not pass on the real sources (${run.problems.length} problem${run.problems.length > 1 ? "s" : ""})\n`);
      return 1;
    }
    const counts = {};
    for (const r of run.records) counts[r.series] = (counts[r.series] || 0) + 1;
    process.stdout.write(`probe ${manifest.id}: ${run.records.length} records on ${today} (${Object.entries(counts).map(([k, n]) => `${k} ${n}`).join(", ") || "none"})\n`);
    return 0;
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

async function cmdInit(args) {
  const id = args.positional[0];
  if (id === undefined) throw new UsageError("init needs an id: init <id>");
  if (!ID_RE.test(id)) throw new UsageError(`"${id}" is not an id: 2 to 48 lowercase letters, digits and hyphens, starting with a letter`);
  if (isReservedId(id)) throw new UsageError(`"${id}" is reserved for Almanac's own addresses`);
  const kind = args.options.kind ?? "value";
  if (!KINDS.includes(kind)) throw new UsageError(`--kind "${kind}": value, event or item`);
  let zone = args.options.timezone;
  if (zone === undefined) {
    zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    if (!isNamedZone(zone)) zone = "UTC";
  } else if (!isNamedZone(zone)) throw new UsageError(`--timezone "${zone}" is not a named IANA zone such as Europe/Berlin`);
  const root = path.resolve(id);
  if (fs.existsSync(root)) throw new Failure(`${id} already exists; init makes a new folder`);
  const now = isoNow();
  const files = templateFiles(id, kind, zone, now);
  try {
    for (const [rel, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
      fs.writeFileSync(path.join(root, rel), text);
    }
    const res = await checkFolder(root, { update: true });
    if (!res.ok) {
      printFindings(res.findings);
      throw new Failure(`init: the new folder does not pass check (${res.summary}); this is a fault of the tool`);
    }
  } catch (e) {
    fs.rmSync(root, { recursive: true, force: true });
    throw e;
  }
  process.stdout.write(`created ${id}/ (${kind}, ${zone}): plugin.json, fetch.mjs, fixtures/, README.md, AGENTS.md, CLAUDE.md\nnext: put a real copy of each source in ${id}/fixtures/sources/, edit fetch.mjs, then run: node almanac-plugin.mjs check ${id}\n`);
  return 0;
}

// ---------------------------------------------------------------------------------------------
// CLI
// ---------------------------------------------------------------------------------------------

const COMMANDS = {
  help: { run: cmdHelp, options: {}, usage: "help [<command>]", about: "Print usage for every command, or for one." },
  init: {
    run: cmdInit, options: { kind: "value", timezone: "value" }, usage: "init <id> [--kind value|event|item] [--timezone <zone>]",
    about: "Create a new folder <id> with plugin.json, fetch.mjs, fixtures/ (sources, records.jsonl, context.json at ALMANAC_PLUGIN_NOW or now, a failing run case), README.md, AGENTS.md and CLAUDE.md. It passes check as created.",
    details: ["--kind       the first series' kind (default value)", "--timezone   IANA zone of the manifest (default the machine's)", "The name is made from the id; short parts and parts without vowels stay acronyms: ecb-fx -> \"ECB FX\"."],
  },
  check: {
    run: cmdCheck, options: { update: "flag", json: "flag" }, usage: "check [<folder>] [--update] [--json]",
    about: "Check the manifest, imports, code files, fixtures; run the fetcher (twice) on fixtures/sources/ behind the guard; check every record; compare with fixtures/records.jsonl; run each fixtures/runs/<case>; check the listing; print the digest.",
    details: ["--update     write the fetcher's output to fixtures/records.jsonl (and each case's records.jsonl) instead of comparing", "--json       print one object {ok, summary, findings, digest}; each finding has code, severity, message, fix and docs"],
  },
  preview: {
    run: cmdPreview, options: { days: "value", language: "value", run: "value", live: "flag", html: "value", json: "flag" },
    usage: "preview [<folder>] [--days <from>..<to>] [--language <code>] [--run <case> | --live] [--html <file> | --json]",
    about: "Draw the days as a reader sees them (events first, values in force, last-rate and status rows).",
    details: ["--days       YYYY-MM-DD..YYYY-MM-DD, at most 62 days (default 3 days either side of the fixture's today)", "--language   the reader's language (default en)", "--run        preview fixtures/runs/<case> as a later run over the fixture records", "--live       download the real sources once and preview them", "--html       also write a self-contained page to <file>", "--json       run check first; print {summary, cache, findings, digest, today, language, status, days}"],
  },
  probe: { run: cmdProbe, options: {}, usage: "probe [<folder>]", about: "Download each real source once (https, declared hosts, maxBytes, 5 redirects, 60 s), run the fetcher and check every record. Exit 1 when a source cannot be reached." },
  pack: { run: cmdPack, options: { out: "value" }, usage: "pack [<folder>] [--out <file>]", about: "Check, then write the ZIP to upload (default <id>-<version>.zip beside the folder). Refuses and writes nothing when check fails.", details: ["--out        where to write the archive"] },
  digest: { run: cmdDigest, options: { files: "flag" }, usage: "digest [<folder>] [--files]", about: "Print the digest of the plug-in code (sha256 over the covered files).", details: ["--files      list the covered files in reading order instead"] },
};

function cmdHelp(args) {
  const name = args.positional[0];
  if (name !== undefined) {
    const c = COMMANDS[name];
    if (!c) throw new UsageError(`no command "${name}"; try: node almanac-plugin.mjs help`);
    process.stdout.write(`usage: node almanac-plugin.mjs ${c.usage}\n\n${c.about}\n${c.details ? "\n" + c.details.map((d) => `  ${d}`).join("\n") + "\n" : ""}`);
    return 0;
  }
  process.stdout.write(`almanac-plugin.mjs ${TOOL_VERSION}: the Almanac plug-in developers' tool (Node 24, no dependencies)

usage: node almanac-plugin.mjs <command> [options]

${Object.values(COMMANDS).map((c) => `  ${c.usage}\n      ${c.about}`).join("\n")}

Exit codes: 0 done or passes; 1 does not pass (problems on stderr) or a source could not be reached;
2 command not understood (unknown command or option, missing argument, refused --days).
Environment: ALMANAC_BASE_URL (default ${DEFAULT_BASE_URL}) for docs links and the User-Agent;
ALMANAC_PLUGIN_NOW (ISO instant) the moment init writes to fixtures/context.json and check uses without one.
The fetcher runs behind a guard (no network, reads only its folder and sources, limits kill it):
a safeguard, not a sandbox. Publishing commands (login, upload, submit, ...) come in a later version.
`);
  return 0;
}

/** Parse argv after the command: {positional, options}; unknown options are a UsageError. */
export function parseArgs(spec, argv) {
  const positional = [];
  const options = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--") {
      positional.push(...argv.slice(i + 1));
      break;
    }
    if (a.startsWith("--")) {
      const eq = a.indexOf("=");
      const name = a.slice(2, eq < 0 ? undefined : eq);
      const type = spec[name];
      if (!type) throw new UsageError(`unknown option --${name}`);
      if (type === "flag") {
        if (eq >= 0) throw new UsageError(`--${name} takes no value`);
        options[name] = true;
      } else {
        const v = eq >= 0 ? a.slice(eq + 1) : argv[++i];
        if (v === undefined || (eq < 0 && v.startsWith("--"))) throw new UsageError(`--${name} needs a value`);
        options[name] = v;
      }
    } else if (a.startsWith("-") && a !== "-") throw new UsageError(`unknown option ${a}`);
    else positional.push(a);
  }
  return { positional, options };
}

/** Run the tool with argv (without node and script); resolves to the exit code. */
export async function main(argv) {
  const [name, ...rest] = argv;
  try {
    if (name === undefined || name === "--help" || name === "-h") return cmdHelp({ positional: [] });
    if (name === "--version") {
      process.stdout.write(`${TOOL_VERSION}\n`);
      return 0;
    }
    const c = has(COMMANDS, name) ? COMMANDS[name] : null;
    if (!c) throw new UsageError(`unknown command "${name}"; try: node almanac-plugin.mjs help`);
    const args = parseArgs(c.options, rest);
    const maxPositional = name === "init" || name === "help" ? 1 : 1;
    if (args.positional.length > maxPositional) throw new UsageError(`${name} takes at most one argument; usage: ${c.usage}`);
    return await c.run(args);
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`almanac-plugin: ${e.message}\n`);
      return 2;
    }
    if (e instanceof Failure) {
      process.stderr.write(`almanac-plugin: ${e.message}\n`);
      return 1;
    }
    throw e;
  }
}

const invokedAsProgram = (() => {
  try {
    return process.argv[1] && fs.realpathSync(process.argv[1]) === fs.realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
})();
if (invokedAsProgram) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (e) => {
      process.stderr.write(`almanac-plugin: ${e.stack || e.message}\n`);
      process.exitCode = 1;
    },
  );
}
