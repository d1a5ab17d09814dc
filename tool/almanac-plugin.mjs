#!/usr/bin/env node
// almanac-plugin.mjs: the Almanac plug-in developers' tool. One file, Node 24, no dependencies.
//
//   node almanac-plugin.mjs help
//
// Sections: constants and catalog (with its pages), small helpers, manifest rules, update
// rules, record rules, digest, imports, zip writer, guard/runner, run context, check, listing,
// review.json, preview renderer, downloads (probe), init templates, commands, publishing (login
// and the portal's commands), refusals (the error object of --json), the MCP server, check
// --against, CLI. The file can be imported (tests use renderDays, validateManifest,
// validateRecords, computeDigest, ...) and run as a program.

// Node's modules are taken with process.getBuiltinModule, not imported: an import also builds
// each one's ES module facade, some 6% of every start of the tool (node:crypto and node:zlib:
// see nodeCrypto).
const fs = process.getBuiltinModule("node:fs");
const os = process.getBuiltinModule("node:os");
const path = process.getBuiltinModule("node:path");
const { execFile, spawn } = process.getBuiltinModule("node:child_process");
const { builtinModules } = process.getBuiltinModule("node:module");
const { fileURLToPath, pathToFileURL } = process.getBuiltinModule("node:url");

// ---------------------------------------------------------------------------------------------
// Constants and the problem catalog
// ---------------------------------------------------------------------------------------------

export const TOOL_VERSION = "1.6.0";
export const CONTRACT = 1;
/**
 * The service's address when neither ALMANAC_BASE_URL nor a login names one. A service serving
 * this file (GET {base}/tool/almanac-plugin.mjs) writes its own public address on this line, so
 * a downloaded copy links to the docs of the service it came from; the repository's copy holds
 * the server's own default.
 */
export const DEFAULT_BASE_URL = "http://127.0.0.1:8000";

/** The folder of the tool's own files (token, last uploads): ALMANAC_PLUGIN_HOME, else
 * $XDG_CONFIG_HOME/almanac, else ~/.config/almanac. */
export function configHome(env = process.env) {
  if (env.ALMANAC_PLUGIN_HOME) return path.resolve(env.ALMANAC_PLUGIN_HOME);
  const config = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : path.join(env.HOME || os.homedir(), ".config");
  return path.join(config, "almanac");
}

const savedServers = new Map();
/** The `server` that `login --server` keeps beside the token (plugin-token.json), or null. */
export function savedServer(env = process.env) {
  const file = path.join(configHome(env), "plugin-token.json");
  if (!savedServers.has(file)) {
    let server = null;
    try {
      const saved = JSON.parse(fs.readFileSync(file, "utf8"));
      const url = new URL(saved.server);
      if (url.protocol === "https:" || url.protocol === "http:") server = saved.server;
    } catch {
      // No login yet, or a file this version cannot read: the next source of the address holds.
    }
    savedServers.set(file, server);
  }
  return savedServers.get(file);
}

/** The service's address for docs links and the User-Agent: ALMANAC_BASE_URL, else the server
 * of the last `login`, else DEFAULT_BASE_URL. */
export function baseUrl(env = process.env) {
  return (env.ALMANAC_BASE_URL || savedServer(env) || DEFAULT_BASE_URL).replace(/\/+$/, "");
}

// The catalog: the same entries as src/almanac/platform/contract/problems.json (a test fails
// when they differ). BEGIN CATALOG
export const CATALOG = [
  {"code":"PLG-INVALID","severity":"error","area":"manifest","title":"Generic contract 1 violation","fix":"Change the plug-in so it follows contract 1 as the message describes.","retired":false},
  {"code":"PLG-MANIFEST-INVALID-JSON","severity":"error","area":"manifest","title":"plugin.json is not JSON","fix":"Make plugin.json valid JSON (UTF-8, no comments, no trailing commas).","retired":false},
  {"code":"PLG-MANIFEST-NOT-OBJECT","severity":"error","area":"manifest","title":"The manifest is not one JSON object","fix":"Make plugin.json a single JSON object { ... }.","retired":false},
  {"code":"PLG-MANIFEST-UNKNOWN-KEY","severity":"error","area":"manifest","title":"A key contract 1 does not know","fix":"Remove the key or correct its spelling; only $schema may be added.","retired":false},
  {"code":"PLG-MANIFEST-CONTRACT","severity":"error","area":"manifest","title":"contract is not 1","fix":"Set \"contract\": 1.","retired":false},
  {"code":"PLG-MANIFEST-ID","severity":"error","area":"manifest","title":"The id breaks the id rule","fix":"Use 2 to 48 lowercase letters, digits and hyphens, starting with a letter.","retired":false},
  {"code":"PLG-MANIFEST-NAME","severity":"error","area":"manifest","title":"A name is missing or too long","fix":"Give a Names object keyed by language code, each value 1 to 80 characters, with an en entry.","retired":false},
  {"code":"PLG-MANIFEST-VERSION","severity":"error","area":"manifest","title":"The version is not major.minor.patch","fix":"Write the version as three dot-separated non-negative integers, such as 1.0.0.","retired":false},
  {"code":"PLG-MANIFEST-TIMEZONE","severity":"error","area":"manifest","title":"Not a named IANA time zone","fix":"Use a named IANA zone such as Europe/Berlin; offsets such as +01:00 are refused.","retired":false},
  {"code":"PLG-MANIFEST-AUDIENCE","severity":"error","area":"manifest","title":"The audience is not public, private or local","fix":"Set audience to public, private or local.","retired":false},
  {"code":"PLG-MANIFEST-SCHEDULE","severity":"error","area":"manifest","title":"The schedule is not a five-field cron","fix":"Write the schedule as five cron fields (minute hour day-of-month month day-of-week), at most 100 characters.","retired":false},
  {"code":"PLG-MANIFEST-BACKFILL","severity":"error","area":"manifest","title":"backfill is not all or a window","fix":"Set backfill to \"all\" or a window such as \"90d\" or \"2y\" (1 to 4 digits, then d or y).","retired":false},
  {"code":"PLG-MANIFEST-SOURCES","severity":"error","area":"manifest","title":"A source is malformed","fix":"Give each source a unique name (a Key), a url and, optionally, maxBytes from 1 to 20971520; at most 16 sources.","retired":false},
  {"code":"PLG-MANIFEST-SOURCE-URL","severity":"error","area":"manifest","title":"A source URL is not https with a lowercase host","fix":"Use an https URL with a lowercase host name (no IP address, no user name or password), at most 500 characters; only {today}, {year} and {month} may be filled in.","retired":false},
  {"code":"PLG-MANIFEST-SERIES","severity":"error","area":"manifest","title":"A series is malformed","fix":"Give each series a unique key, a kind, a cadence, dates and a name; value series need 1 to 16 fields; see the message for the field.","retired":false},
  {"code":"PLG-MANIFEST-LINKS","severity":"error","area":"manifest","title":"links.hosts is malformed","fix":"Give links.hosts as an array of at most 16 lowercase host names, each at most 253 characters.","retired":false},
  {"code":"PLG-MANIFEST-LIMITS","severity":"error","area":"manifest","title":"A limit is out of range","fix":"Set limits.seconds from 1 to 120 and limits.megabytes from 16 to 256, or leave them out.","retired":false},
  {"code":"PLG-MANIFEST-LICENCE","severity":"error","area":"manifest","title":"The licence block is incomplete","fix":"Give licence.holder (1 to 200 characters), licence.terms (text up to 500 characters, or null) and licence.retain (yes, no or unknown); attribution is optional, 1 to 40 characters.","retired":false},
  {"code":"PLG-ID-RESERVED","severity":"error","area":"manifest","title":"The id is reserved","fix":"Choose another id: store, publish, search, markets, the service's own path words and ids starting with almanac, alm-, chk- or test- are reserved.","retired":false},
  {"code":"PLG-REVIEW-INVALID","severity":"error","area":"folder","title":"review.json does not have its shape","fix":"Write review.json with the keys of the catalog: examples (date, series, expect, note), negatives (kind, why and the kind's fields), sources (source, holder, terms, basis, evidence), releaseNotes and notes.","retired":false},
  {"code":"PLG-REVIEW-EXAMPLE","severity":"error","area":"folder","title":"A review example is not in what the fixtures produce","fix":"Give each example day the figures, state or title the fixture run prints for that series and day.","retired":false},
  {"code":"PLG-LISTING-INVALID","severity":"error","area":"listing","title":"The listing is not a listing","fix":"Make listing.json one JSON object with \"listing\": 1 and only the keys of the listing table.","retired":false},
  {"code":"PLG-LISTING-ID","severity":"error","area":"listing","title":"The listing's plugin differs from the manifest id","fix":"Set listing.plugin to the manifest id.","retired":false},
  {"code":"PLG-LISTING-PUBLISHER","severity":"error","area":"listing","title":"No publisher domain","fix":"Set publisher.domain to your organization's verified domain.","retired":false},
  {"code":"PLG-LISTING-TAGLINE","severity":"error","area":"listing","title":"Tagline missing or too long","fix":"Give a one-line tagline per language, at most 80 characters each, with an en entry.","retired":false},
  {"code":"PLG-LISTING-DESCRIPTION","severity":"error","area":"listing","title":"Description missing or too long","fix":"Give a plain-text description per language, at most 2,000 characters each, with an en entry.","retired":false},
  {"code":"PLG-LISTING-LANGUAGE-MISSING","severity":"error","area":"listing","title":"No English text","fix":"Add an en entry to every per-language text of the listing.","retired":false},
  {"code":"PLG-LISTING-CATEGORY","severity":"error","area":"listing","title":"Unknown category","fix":"Choose one of the listed categories.","retired":false},
  {"code":"PLG-LISTING-KEYWORDS","severity":"error","area":"listing","title":"Too many keywords","fix":"Give at most 12 keywords, each at most 30 characters.","retired":false},
  {"code":"PLG-LISTING-LINK","severity":"error","area":"listing","title":"A link is not https","fix":"Use https for every link in the listing.","retired":false},
  {"code":"PLG-NO-PRIVACY-POLICY","severity":"error","area":"listing","title":"No privacy policy link","fix":"Set links.privacy to the https address of your privacy policy.","retired":false},
  {"code":"PLG-NO-SUPPORT-CONTACT","severity":"error","area":"listing","title":"No support url or e-mail","fix":"Set links.support to an object with a url, an email, or both.","retired":false},
  {"code":"PLG-LISTING-SOURCE","severity":"error","area":"listing","title":"A listed source is not declared or is incomplete","fix":"List every declared source once with name, title, page and licence (name and url).","retired":false},
  {"code":"PLG-LISTING-EXAMPLE","severity":"error","area":"listing","title":"Example days are wrong","fix":"Give 1 to 3 example days, each a date the fixtures cover, with an en caption.","retired":false},
  {"code":"PLG-LISTING-LINK-DEAD","severity":"error","area":"listing","title":"A listing link does not answer","fix":"Point each listing link at an https page on a public address that answers within 10 seconds.","retired":false},
  {"code":"PLG-LISTING-MISSING","severity":"warning","area":"listing","title":"The version has no listing.json","fix":"Add listing.json (and listing/icon.png) to the folder to list the plug-in in the store; without one it can be published but never listed.","retired":false},
  {"code":"PLG-LISTING-ICON","severity":"error","area":"listing","title":"The icon is not a 256x256 PNG of at most 64 KB","fix":"Put a 256x256 PNG of at most 64 KB at listing/icon.png.","retired":false},
  {"code":"PLG-RECORD-TODAY","severity":"error","area":"record","title":"The run context had no valid today","fix":"The service built a bad run context; report this to the service operator.","retired":false},
  {"code":"PLG-RECORD-TOO-MANY","severity":"error","area":"record","title":"More than 250,000 records","fix":"Print at most 250,000 records in one run; narrow the backfill window.","retired":false},
  {"code":"PLG-RECORD-INVALID","severity":"error","area":"record","title":"A record breaks contract 1","fix":"Print each record as one JSON object with the required fields, real dates (YYYY-MM-DD) and finite numbers.","retired":false},
  {"code":"PLG-RECORD-SERIES","severity":"error","area":"record","title":"Series not declared, or kind differs","fix":"Use a series key declared in the manifest, with the kind it was declared with.","retired":false},
  {"code":"PLG-RECORD-UNKNOWN-KEY","severity":"error","area":"record","title":"A key the record kind does not have","fix":"Remove the key; each record kind accepts only its own keys.","retired":false},
  {"code":"PLG-RECORD-AFTER-TODAY","severity":"error","area":"record","title":"A record is dated after today","fix":"Date records on or before today from the run context; only a scheduled event may be after today.","retired":false},
  {"code":"PLG-RECORD-LINK","severity":"error","area":"record","title":"An item link is not https to an allowed host","fix":"Link items over https to a source host or a host listed in links.hosts, at most 1,000 characters.","retired":false},
  {"code":"PLG-RECORD-REPEATED","severity":"error","area":"record","title":"The same record key twice in one run","fix":"Print each record key once per run (an event id only once).","retired":false},
  {"code":"PLG-FOLDER-ID","severity":"error","area":"folder","title":"The folder name differs from the id","fix":"Name the folder exactly as the manifest id.","retired":false},
  {"code":"PLG-FETCH-MISSING","severity":"error","area":"folder","title":"No fetch.mjs","fix":"Put the fetcher at fetch.mjs at the top of the plug-in folder.","retired":false},
  {"code":"PLG-IMPORT-OUTSIDE","severity":"error","area":"folder","title":"Import from outside the folder","fix":"Import only your own modules inside the plug-in folder.","retired":false},
  {"code":"PLG-IMPORT-PACKAGE","severity":"error","area":"folder","title":"Import of an undeclared package","fix":"Import only your own files and node: built-in modules (write node:fs, not fs).","retired":false},
  {"code":"PLG-FIXTURE-SOURCE-MISSING","severity":"error","area":"folder","title":"No fixture file for a declared source","fix":"Put a real copy of each declared source at fixtures/sources/<source name>.","retired":false},
  {"code":"PLG-FIXTURE-CONTEXT-INVALID","severity":"error","area":"folder","title":"context.json is invalid","fix":"Give fixtures/context.json a now (ISO instant) and a today equal to the date of now in the manifest zone.","retired":false},
  {"code":"PLG-FIXTURE-RECORDS-MISSING","severity":"error","area":"folder","title":"No fixtures/records.jsonl","fix":"Run check --update to write fixtures/records.jsonl, then read it.","retired":false},
  {"code":"PLG-FIXTURE-MISMATCH","severity":"error","area":"folder","title":"Output differs from fixtures/records.jsonl","fix":"Fix the fetcher, or run check --update if the new output is right.","retired":false},
  {"code":"PLG-RUN-FAILED","severity":"error","area":"run","title":"The fetcher exited non-zero","fix":"Read the fetcher's last stderr line and fix the cause.","retired":false},
  {"code":"PLG-RUN-KILLED","severity":"error","area":"run","title":"The fetcher was stopped at its limits","fix":"Make the fetcher finish within its time, memory and output limits.","retired":false},
  {"code":"PLG-RUN-NETWORK","severity":"error","area":"run","title":"The fetcher tried the network","fix":"Read only the files named in the run context's sources; the fetcher has no network.","retired":false},
  {"code":"PLG-RUN-EXPECTED-FAILURE","severity":"error","area":"run","title":"A failing case did not fail as expected","fix":"Make the fetcher exit non-zero with the expected reason on its last stderr line, printing no records.","retired":false},
  {"code":"PLG-RUN-READ-OUTSIDE","severity":"error","area":"run","title":"The fetcher read a file outside its folder and sources","fix":"Read only your own files and the paths in the run context's sources.","retired":false},
  {"code":"PLG-ID-TAKEN","severity":"error","area":"upload","title":"Another publisher has the id","fix":"Choose another id.","retired":false},
  {"code":"PLG-VERSION-REUSED","severity":"error","area":"upload","title":"The same version with different code","fix":"Raise `version` (major.minor.patch) for every change of the code; a version number names one code only.","retired":false},
  {"code":"PLG-VERSION-NOT-GREATER","severity":"error","area":"upload","title":"The version does not exceed every version kept","fix":"Give the new code a version greater than every version of this plug-in kept so far.","retired":false},
  {"code":"PLG-VERSION-KEPT","severity":"error","area":"upload","title":"The code is a kept version other than the current one","fix":"Give changed code a version greater than every version kept; to run an earlier approved version again, a service operator rolls back to it at the host, with a reason.","retired":false},
  {"code":"PLG-ID-RETIRED","severity":"error","area":"upload","title":"The id was retired","fix":"Choose another id; retired ids are never used again.","retired":false},
  {"code":"PLG-STORE-AUDIENCE","severity":"error","area":"upload","title":"A store plug-in is not public","fix":"Set audience to public to list the plug-in in the store.","retired":false},
  {"code":"PLG-LICENCE-TERMS-MISSING","severity":"error","area":"upload","title":"licence.terms is missing for a store plug-in","fix":"Quote or link the holder's terms in licence.terms.","retired":false},
  {"code":"PLG-SCHEDULE-TOO-FREQUENT","severity":"error","area":"upload","title":"More than 24 runs a day","fix":"Choose a schedule that runs at most 24 times on any day.","retired":false},
  {"code":"PLG-QUOTA-UPLOADS","severity":"error","area":"upload","title":"Over 20 uploads a day","fix":"Wait until tomorrow to upload again.","retired":false},
  {"code":"PLG-QUOTA-CHECKING","severity":"error","area":"upload","title":"Three versions are being checked","fix":"Wait until the checks of a version reach their final state, or withdraw one, then upload or re-run again.","retired":false},
  {"code":"PLG-CHECK-DEADLINE","severity":"error","area":"upload","title":"A check outlived its deadline","fix":"Re-run the checks; if they time out again, make the fetcher finish well within its time limit.","retired":false},
  {"code":"CHECK-NETWORK-UNAVAILABLE","severity":"warning","area":"upload","title":"The service could not reach the network","fix":"Nothing to do: the service runs the check again by itself once it reaches the network.","retired":false},
  {"code":"PLG-SOURCE-DOWNLOAD","severity":"error","area":"upload","title":"A real source could not be downloaded","fix":"Make sure each source URL answers over https from a public address within 60 seconds and within maxBytes.","retired":false},
  {"code":"PLG-ZIP-TOO-LARGE","severity":"error","area":"zip","title":"The archive is too large","fix":"Keep the archive at most 8 MiB.","retired":false},
  {"code":"PLG-ZIP-NOT-ZIP","severity":"error","area":"zip","title":"Not a ZIP archive","fix":"Upload the ZIP written by the tool's pack command.","retired":false},
  {"code":"PLG-ZIP-PREPENDED","severity":"error","area":"zip","title":"Data before the archive's first file","fix":"Upload the ZIP as pack wrote it, with nothing before it.","retired":false},
  {"code":"PLG-ZIP-MULTI-DISK","severity":"error","area":"zip","title":"Split or spanned archive","fix":"Upload one single-part ZIP.","retired":false},
  {"code":"PLG-ZIP-ZIP64","severity":"error","area":"zip","title":"ZIP64 archive","fix":"Upload a plain ZIP (not ZIP64), as pack writes it.","retired":false},
  {"code":"PLG-ZIP-ENCRYPTED","severity":"error","area":"zip","title":"An encrypted entry","fix":"Upload an archive with no encrypted entries.","retired":false},
  {"code":"PLG-ZIP-METHOD","severity":"error","area":"zip","title":"Compression other than deflate or stored","fix":"Compress entries with deflate (8) or store them (0).","retired":false},
  {"code":"PLG-ZIP-TOO-MANY-ENTRIES","severity":"error","area":"zip","title":"More than 500 entries","fix":"Keep the archive at most 500 files.","retired":false},
  {"code":"PLG-ZIP-UNCOMPRESSED-TOO-LARGE","severity":"error","area":"zip","title":"Uncompressed size above its limit","fix":"Keep the unpacked files within 32 MiB, code within 1 MiB, and each entry's compression ratio at most 100 to 1.","retired":false},
  {"code":"PLG-ZIP-DAMAGED","severity":"error","area":"zip","title":"The archive is damaged","fix":"Pack the folder again with the tool's pack command and upload the file unchanged.","retired":false},
  {"code":"PLG-ZIP-FOLDER","severity":"error","area":"zip","title":"Entries are not all in one plug-in folder","fix":"Pack one plug-in folder: every entry under <id>/, as pack writes it.","retired":false},
  {"code":"PLG-ZIP-PATH","severity":"error","area":"zip","title":"An entry path is not allowed","fix":"Use relative paths separated by /: no .., no absolute path, no backslash or control character, no path twice, UTF-8 names.","retired":false},
  {"code":"PLG-ZIP-LINK","severity":"error","area":"zip","title":"A link or special file in the archive","fix":"Pack plain files only; copy a linked file into the folder instead of linking it.","retired":false},
  {"code":"PLG-ZIP-TOO-DEEP","severity":"error","area":"zip","title":"An entry is more than 8 folders deep","fix":"Keep every file within 8 folders inside the plug-in folder.","retired":false},
  {"code":"PLG-ZIP-CASE","severity":"error","area":"zip","title":"Two paths differ only in case","fix":"Rename a file or folder so that no two paths differ only in upper and lower case.","retired":false},
  {"code":"PLG-ZIP-PACK-JSON","severity":"error","area":"zip","title":".pack.json does not match the files","fix":"Pack the folder again with the tool; do not edit the archive after packing.","retired":false},
  {"code":"PLG-RETIRE-CONFIRM","severity":"error","area":"portal","title":"Retire without typing the id","fix":"Type the plug-in id to confirm retiring it.","retired":false},
  {"code":"AGENT_MAY_NOT_PUBLISH","severity":"error","area":"portal","title":"The agent may not publish","fix":"Ask an owner or admin to publish, or to approve an agent allowed to publish.","retired":false},
  {"code":"AGENT_FORBIDDEN","severity":"error","area":"portal","title":"Agents may not do this","fix":"A person must do this in the portal.","retired":false},
  {"code":"PLG-LOCAL-NOT-APPROVED","severity":"error","area":"host","title":"A local plug-in cannot be approved","fix":"Choose audience public or private for a plug-in the service runs; a local plug-in runs on its developer's machine only.","retired":false},
  {"code":"PLG-PURGE-CONFIRM","severity":"error","area":"host","title":"Purge without typing the id","fix":"Type the plug-in id exactly to confirm the purge; it removes the records and revisions for good.","retired":false},
  {"code":"PLG-CODE-SYMLINK","severity":"error","area":"code","title":"A symbolic link in the plug-in folder","fix":"Replace the link with the file itself; links are never followed.","retired":false},
  {"code":"PLG-CODE-FILE-TYPE","severity":"error","area":"code","title":"A code file of a kind not allowed","fix":"Keep only .mjs, .json, .md, .txt and LICENSE files outside fixtures/ and listing/.","retired":false},
  {"code":"PLG-UPDATE-TIMEZONE","severity":"error","area":"update","title":"The update changes the time zone","fix":"Keep the time zone of the published version; publish a new plug-in for another zone.","retired":false},
  {"code":"PLG-UPDATE-SERIES-KIND","severity":"error","area":"update","title":"The update changes a series' kind","fix":"Keep the series' kind; add a series with a new key instead.","retired":false},
  {"code":"PLG-UPDATE-SERIES-UNIT","severity":"error","area":"update","title":"The update changes a series' unit","fix":"Keep the series' unit; add a series with a new key instead.","retired":false},
  {"code":"PLG-UPDATE-SERIES-DATES","severity":"error","area":"update","title":"The update changes a series' dates","fix":"Keep the series' dates; add a series with a new key instead.","retired":false},
  {"code":"PLG-UPDATE-SERIES-REMOVED","severity":"warning","area":"update","title":"The update removes a series","fix":"Its records are kept; check that readers no longer need the series.","retired":false},
  {"code":"PLG-UPDATE-FIELD-REMOVED","severity":"warning","area":"update","title":"The update removes a field","fix":"Stored records keep the field; check that readers no longer need it.","retired":false},
  {"code":"PLG-UPDATE-SOURCE-HOST-ADDED","severity":"warning","area":"update","title":"The update adds a source host","fix":"The reviewer will check the new host is the same data holder's.","retired":false},
  {"code":"PLG-README-TEMPLATE","severity":"warning","area":"folder","title":"README.md is still the template","fix":"Describe the plug-in, its sources and its terms in README.md.","retired":false},
  {"code":"PLG-CONTEXT-INVALID","severity":"error","area":"record","title":"The run context is invalid","fix":"The service built a bad run context; report this to the service operator.","retired":false},
  {"code":"PLG-RUN-NOT-DETERMINISTIC","severity":"error","area":"run","title":"The fetcher printed different output for the same files","fix":"Print the same bytes for the same files and context: no timestamps, random numbers, system clock or unordered iteration.","retired":false},
  {"code":"REQUEST-MALFORMED","severity":"error","area":"api","title":"The request is not well-formed","fix":"Send a body that parses as JSON, with the content type application/json.","retired":false},
  {"code":"REQUEST-INVALID","severity":"error","area":"api","title":"A field of the request is missing or invalid","fix":"Correct the fields named in the findings and send the request again.","retired":false},
  {"code":"REQUEST-TOO-LARGE","severity":"error","area":"api","title":"The request body is too large","fix":"Send a smaller body; requests to the API are at most 64 KiB unless a route says otherwise.","retired":false},
  {"code":"AUTH-REQUIRED","severity":"error","area":"api","title":"Not signed in","fix":"Sign in, or send a valid, unrevoked token as Authorization: Bearer <token>.","retired":false},
  {"code":"AUTH-FAILED","severity":"error","area":"api","title":"The e-mail address or password is wrong","fix":"Check the e-mail address and password and sign in again.","retired":false},
  {"code":"EMAIL-UNVERIFIED","severity":"error","area":"api","title":"The e-mail address is not verified yet","fix":"Open the link in the verification e-mail, or ask for a new one, then try again.","retired":false},
  {"code":"FORBIDDEN","severity":"error","area":"api","title":"Your account may not do this","fix":"Ask an owner or admin of the organization, or a service operator, for the role this needs.","retired":false},
  {"code":"NOT-FOUND","severity":"error","area":"api","title":"Nothing is here, or it is not visible to you","fix":"Check the address and that you are signed in with an account that may see it.","retired":false},
  {"code":"METHOD-NOT-ALLOWED","severity":"error","area":"api","title":"The address does not take this method","fix":"Use a method the API documents for this address (see /api/v1/openapi.json).","retired":false},
  {"code":"ACCOUNT-EXISTS","severity":"error","area":"api","title":"An account with this e-mail address exists","fix":"Sign in with that address instead, or use another address.","retired":false},
  {"code":"VERIFICATION-INVALID","severity":"error","area":"api","title":"The verification link is unknown, used or expired","fix":"Ask for a new verification e-mail and open its link within 24 hours.","retired":false},
  {"code":"MEMBER-EXISTS","severity":"error","area":"api","title":"The person is already a member of the organization","fix":"Change the member's role instead of adding the person again.","retired":false},
  {"code":"LAST-OWNER","severity":"error","area":"api","title":"The organization would be left without an owner","fix":"Make another member an owner first.","retired":false},
  {"code":"RATE-LIMITED","severity":"error","area":"api","title":"Too many requests","fix":"Wait until the limit named in the message resets, then try again.","retired":false},
  {"code":"SIGN-IN-LOCKED","severity":"error","area":"api","title":"Too many failed sign-ins for this e-mail address","fix":"Wait the time the message names (the Retry-After header, in seconds), then sign in with the right password; if you forgot it, do not keep guessing.","retired":false},
  {"code":"SIGN-IN-ADDRESS-LIMITED","severity":"error","area":"api","title":"Too many failed sign-ins from this network address","fix":"Wait the time the message names (the Retry-After header, in seconds); behind a proxy, the operator lets the service see each client's own address.","retired":false},
  {"code":"DEVICE-CODE-LIMITED","severity":"error","area":"api","title":"Too many login codes asked for from this network address","fix":"Wait the time the message names (the Retry-After header, in seconds); run login again within a code's 10 minutes to wait for the same code.","retired":false},
  {"code":"DOMAIN-CHECK-LIMITED","severity":"error","area":"portal","title":"Check now was used too often for this organization","fix":"Wait the time the message names (the Retry-After header, in seconds); a new TXT record can take a while to reach every DNS server, so check less often.","retired":false},
  {"code":"INTERNAL-ERROR","severity":"error","area":"api","title":"The service failed to handle the request","fix":"Try again later; if it keeps failing, tell the service operator.","retired":false},
  {"code":"READER-TOO-MANY-DAYS","severity":"error","area":"api","title":"Too many days asked for at once","fix":"Ask for at most 62 days at once, from and to both included.","retired":false},
  {"code":"READER-LIST-TOO-LONG","severity":"error","area":"api","title":"The reader list of a private plug-in is too long","fix":"List at most 500 people and 100 organizations; give an organization instead of its members.","retired":false},
  {"code":"AUDIENCE-NOT-PRIVATE","severity":"error","area":"api","title":"The plug-in is not private","fix":"Reader lists and organization defaults apply to private plug-ins only; anyone signed in reads a public plug-in.","retired":false},
  {"code":"AUDIENCE-ORGANIZATION-NOT-LISTED","severity":"error","area":"api","title":"The organization is not on the plug-in's reader list","fix":"Ask a service operator to add the organization to the plug-in's reader list first.","retired":false},
  {"code":"DIGEST-CHANGED","severity":"error","area":"api","title":"The files changed since the page was shown","fix":"Read the current version's page again and approve the digest it shows.","retired":false},
  {"code":"STATE-CONFLICT","severity":"error","area":"api","title":"The plug-in's state does not allow this","fix":"Reload the plug-in; the detail says which states allow this move.","retired":false},
  {"code":"NOTHING-HELD","severity":"error","area":"api","title":"Nothing is held","fix":"Only a plug-in showing Held waits for Accept removals or Keep them.","retired":false},
  {"code":"PURGE-NOT-OFFERED","severity":"error","area":"api","title":"Purge is offered only while the retain answer is no","fix":"Read the terms and record the answer no first, if they do not allow keeping the records.","retired":false},
  {"code":"TAKEDOWN-DIGEST","severity":"error","area":"api","title":"Restorable only for the digest taken down","fix":"Restore the plug-in only with the code that was taken down; a changed version stays down.","retired":false},
  {"code":"DIGEST-NOT-CURRENT","severity":"error","area":"api","title":"The digest is not the current version's","fix":"Approve the digest the current version's page shows; the digest given was never this plug-in's code.","retired":false},
  {"code":"ROLLBACK-NOT-APPROVED","severity":"error","area":"api","title":"The version was never approved","fix":"Roll back only to a version a person approved before; a version never approved is reviewed and approved by its digest instead.","retired":false},
  {"code":"REQUEST-MEDIA-TYPE","severity":"error","area":"api","title":"The body is not of the media type the route takes","fix":"Send the packed archive as the raw body with Content-Type: application/zip (curl --data-binary @pack.zip -H 'Content-Type: application/zip').","retired":false},
  {"code":"DOMAIN-IP-ADDRESS","severity":"error","area":"portal","title":"An IP address is not a domain","fix":"Name the organization's domain, such as example.org, not an IP address.","retired":false},
  {"code":"DOMAIN-NO-DOT","severity":"error","area":"portal","title":"The domain has no dot","fix":"Name a whole domain with a dot, such as example.org.","retired":false},
  {"code":"DOMAIN-INVALID","severity":"error","area":"portal","title":"Not a domain name","fix":"Name a domain of dot-separated labels of letters, digits and hyphens, such as example.org.","retired":false},
  {"code":"DOMAIN-PUBLIC-SUFFIX","severity":"error","area":"portal","title":"A public suffix is not one publisher's domain","fix":"Name your own domain registered under the suffix, such as example.co.uk, not the suffix itself.","retired":false},
  {"code":"DOMAIN-SHARED-HOSTING","severity":"error","area":"portal","title":"A name on a shared hosting domain","fix":"Name a domain your organization holds itself; a name on a shared host such as someone.github.io does not identify a publisher.","retired":false},
  {"code":"DOMAIN-TAKEN","severity":"error","area":"portal","title":"Another organization has verified the domain","fix":"Name your organization's own domain; if the domain is yours, ask the other organization's owners to name another, or write to the service.","retired":false},
  {"code":"DOMAIN-NOT-VERIFIED","severity":"error","area":"portal","title":"The organization's domain is not verified","fix":"Name the domain, publish the TXT record or the well-known file the portal shows, and press Check now.","retired":false},
  {"code":"DOMAIN-LAPSED","severity":"error","area":"portal","title":"The domain's verification lapsed","fix":"Restore the TXT record or the well-known file and press Check now to verify the domain again.","retired":false},
  {"code":"DOMAIN-NOT-INVITED","severity":"error","area":"portal","title":"No invitation for the organization's domain","fix":"Ask to be invited for your domain (POST /api/developers/invitations) and wait for the invitation e-mail.","retired":false},
  {"code":"AGREEMENT-NOT-ACCEPTED","severity":"error","area":"portal","title":"The Developer Agreement in effect is not accepted","fix":"An owner or admin reads the version in effect and accepts it in the portal.","retired":false},
  {"code":"AGREEMENT-NOT-IN-EFFECT","severity":"error","area":"portal","title":"Not the agreement version in effect","fix":"Read the version in effect (GET /api/v1/portal/agreement) and accept that version.","retired":false},
  {"code":"AGREEMENT-EFFECTIVE-DATE","severity":"error","area":"api","title":"The new agreement version's effective date is too early","fix":"Give a date from today on, after the effective date of the newest version.","retired":false},
  {"code":"INVITATION-NOT-OPEN","severity":"error","area":"api","title":"The invitation request was answered already","fix":"Answer only open requests; GET /api/v1/staff/invitations lists them.","retired":false},
  {"code":"SUBMIT-REFUSED","severity":"error","area":"portal","title":"The version may not be submitted yet","fix":"Meet each condition the findings name (checks, review information, attestations, agreement, domain, invitation, versions in review), then submit again.","retired":false},
  {"code":"SUBMIT-CHECKS-NOT-PASSED","severity":"error","area":"portal","title":"A check of the version has not passed","fix":"Fix what the failed checks name and upload again, or wait until the checks being made pass.","retired":false},
  {"code":"SUBMIT-ATTESTATION-MISSING","severity":"error","area":"portal","title":"An attestation for the version is not made","fix":"An owner or admin makes the five attestations for the version (POST .../uploads/{id}/attestations).","retired":false},
  {"code":"PLG-REVIEW-INCOMPLETE","severity":"error","area":"portal","title":"The review information is not complete","fix":"Give five example days, at least one negative case, one source entry per manifest source with a basis of open-licence, public-domain, official-publication or permission, and, for an update, release notes in English.","retired":false},
  {"code":"PLG-QUOTA-REVIEW","severity":"error","area":"upload","title":"Five versions are in review","fix":"Wait for a reviewer's decision on a version in review, or withdraw one, then submit again; a newer upload of a plug-in in review replaces it without waiting.","retired":false},
  {"code":"REVIEW-CONTENT-CHANGED","severity":"error","area":"portal","title":"The version changed after it was reviewed","fix":"Read the version again on the review desk and decide on what it holds now.","retired":false},
  {"code":"REVIEW-SAME-ORGANIZATION","severity":"error","area":"portal","title":"A reviewer from the publishing organization approves","fix":"Leave the approval to a reviewer outside the publishing organization.","retired":false},
  {"code":"STORE-NOT-LISTED","severity":"error","area":"api","title":"The plug-in is not in the store","fix":"Install a plug-in the store lists; this one was unlisted, taken off the shelf, taken down or retired.","retired":false},
  {"code":"LISTING-NOT-RELISTABLE","severity":"error","area":"portal","title":"The plug-in cannot be listed again","fix":"List again only after your own Unpublish; the service lists a shelved plug-in again, a taken-down one is restored by the service, a retired one never returns.","retired":false},
  {"code":"TOOL-SERVICE-UNREACHABLE","severity":"error","area":"tool","title":"The tool could not reach the service","fix":"Give login the service's own address (https, or http only to this machine; one that answers without a redirect), make sure the service is up, then run the command again.","retired":false},
];
// END CATALOG
const CATALOG_BY_CODE = new Map(CATALOG.map((e) => [e.code, e]));

// Each code's page beyond its entry (problem_pages.json: the rule, why, an example that fails
// and one that passes), for the MCP server's resources: inside a function, so that a start of
// the tool only scans them. BEGIN PAGES
export function problemPages() {
  return {
    "PLG-INVALID": {"rule":"A plug-in follows contract 1 in every part no more specific code names. In plugin.json that is `$schema`: when present, a string of at most 500 characters, which the service ignores.","why":"Contract 1 is checked word for word by both the service and the tool; a part outside it could mean one thing to one of them and another to the other, so it is refused rather than guessed at.","failing":{"where":"plugin.json","text":"{\n  \"$schema\": 42,\n  \"contract\": 1,\n  \"id\": \"ecb-rates\",\n  ...\n}"},"passing":{"where":"plugin.json","text":"{\n  \"$schema\": \"https://example.org/schemas/almanac-plugin-1.json\",\n  \"contract\": 1,\n  \"id\": \"ecb-rates\",\n  ...\n}"}},
    "PLG-MANIFEST-INVALID-JSON": {"rule":"plugin.json is strict JSON in UTF-8: double-quoted keys and strings, no comments, no trailing commas, no NaN or Infinity.","why":"The service, the tool and the portal each read the manifest; only strict JSON reads the same in all of them, so a lenient reader can never see a different plug-in than the one approved.","failing":{"where":"plugin.json","text":"{\n  // the ECB publishes at 16:00 CET\n  \"contract\": 1,\n  \"id\": \"ecb-rates\",\n}"},"passing":{"where":"plugin.json","text":"{\n  \"contract\": 1,\n  \"id\": \"ecb-rates\"\n}"}},
    "PLG-MANIFEST-NOT-OBJECT": {"rule":"plugin.json holds exactly one JSON object: not an array, a string, a number or null.","why":"Every rule of the manifest names a key of that one object; any other shape leaves nothing to check.","failing":{"where":"plugin.json","text":"[\n  { \"contract\": 1, \"id\": \"ecb-rates\", ... }\n]"},"passing":{"where":"plugin.json","text":"{ \"contract\": 1, \"id\": \"ecb-rates\", ... }"}},
    "PLG-MANIFEST-UNKNOWN-KEY": {"rule":"Only the keys of the manifest tables are allowed, at every level (plug-in, source, series, snapshot, links, limits, licence); the one exception is `$schema` at the top.","why":"A misspelt key (`timeZone`, `max_bytes`) would otherwise be ignored and the plug-in run on a default it never asked for. Refusing unknown keys shows the typo at once and keeps room for contract 1 to grow without changing what an old plug-in means.","failing":{"where":"plugin.json","text":"\"series\": [\n  { \"key\": \"usd\", \"kind\": \"value\", \"cadence\": \"business-day\", \"dates\": \"observation\",\n    \"name\": { \"en\": \"US dollar\" }, \"fields\": [\"rate\"], \"colour\": \"green\" }\n]"},"passing":{"where":"plugin.json","text":"\"series\": [\n  { \"key\": \"usd\", \"kind\": \"value\", \"cadence\": \"business-day\", \"dates\": \"observation\",\n    \"name\": { \"en\": \"US dollar\" }, \"fields\": [\"rate\"] }\n]"}},
    "PLG-MANIFEST-CONTRACT": {"rule":"`contract` is the integer 1: not a string, not 2, not missing.","why":"The contract number says which rules the plug-in was written for. Contract 1 only grows; a breaking change would be contract 2, run beside it, so the number must be exact.","failing":{"where":"plugin.json","text":"\"contract\": \"1\""},"passing":{"where":"plugin.json","text":"\"contract\": 1"}},
    "PLG-MANIFEST-ID": {"rule":"The id is 2 to 48 characters: lowercase letters, digits and hyphens, starting with a letter. It equals the folder's name and is never used again once retired.","why":"The id appears in addresses, folder and file names, the archive and each reader's preference `plugins.<id>.shown`; this narrow alphabet is safe in all of them on every system.","failing":{"where":"plugin.json","text":"\"id\": \"ECB_Rates\""},"passing":{"where":"plugin.json","text":"\"id\": \"ecb-rates\""}},
    "PLG-MANIFEST-NAME": {"rule":"Every Names object (the plug-in's `name`, each series' `name`, each `fieldNames` entry) is an object keyed by a language code (two or three lowercase letters, optionally a region such as `pt-BR`), each value 1 to 80 characters. Give an `en` entry.","why":"Names are the labels readers see on small calendar days. Readers get their language, then `en`, then the first listed; an empty, overlong or wrongly keyed name leaves a row without a readable label.","failing":{"where":"plugin.json","text":"\"name\": { \"EN\": \"\", \"english\": \"ECB reference rates\" }"},"passing":{"where":"plugin.json","text":"\"name\": { \"en\": \"ECB reference rates\", \"de\": \"EZB-Referenzkurse\" }"}},
    "PLG-MANIFEST-VERSION": {"rule":"`version` is three dot-separated non-negative integers without leading zeros: major.minor.patch. No `v` prefix, no pre-release or build tag.","why":"The service orders versions number by number to refuse an update that does not go up; a tag or prefix cannot be ordered the same way by every reader of the number.","failing":{"where":"plugin.json","text":"\"version\": \"v1.0-beta\""},"passing":{"where":"plugin.json","text":"\"version\": \"1.0.0\""}},
    "PLG-MANIFEST-TIMEZONE": {"rule":"`timezone` is a named IANA zone of 1 to 100 characters, such as `Europe/Berlin`. Offsets (`+01:00`, `UTC+1`) and names that only state an offset (`Etc/GMT+5`, `GMT+0`, `EST`, `MST`, `HST`) are refused; `UTC` and every place zone are fine.","why":"The zone decides the run's `today`, when the schedule fires and how `{today}`, `{year}` and `{month}` fill source URLs. A fixed offset is wrong for half the year wherever clocks change.","failing":{"where":"plugin.json","text":"\"timezone\": \"+01:00\""},"passing":{"where":"plugin.json","text":"\"timezone\": \"Europe/Berlin\""}},
    "PLG-MANIFEST-AUDIENCE": {"rule":"`audience` is `public`, `private` or `local`.","why":"The audience decides who may read the records (anyone signed in, a list of people and organizations, or only the developer) and whether the service runs the plug-in at all; there is no safe default to fall back on.","failing":{"where":"plugin.json","text":"\"audience\": \"everyone\""},"passing":{"where":"plugin.json","text":"\"audience\": \"public\""}},
    "PLG-MANIFEST-SCHEDULE": {"rule":"`schedule` is a classic five-field cron (minute, hour, day of month, month, day of week), at most 100 characters, read on the clock of the manifest's zone. No seconds field, no `?`, `L` or `W`, no `@daily` shorthands.","why":"The service decides each minute whether a plug-in is due, and the tool shows the same reading; only the classic five fields mean the same thing to every cron dialect.","failing":{"where":"plugin.json","text":"\"schedule\": \"0 0 17 ? * MON-FRI\""},"passing":{"where":"plugin.json","text":"\"schedule\": \"0 17 * * 1-5\""}},
    "PLG-MANIFEST-BACKFILL": {"rule":"`backfill` is `all`, or a window: 1 to 4 digits followed by `d` (days) or `y` (years), counted back from the run's today.","why":"The first run prints what `backfill` allows: the service gives the fetcher `backfillFrom`, today minus the window (null for `all`). The window must read the same to the service and the tool.","failing":{"where":"plugin.json","text":"\"backfill\": \"2 years\""},"passing":{"where":"plugin.json","text":"\"backfill\": \"2y\""}},
    "PLG-MANIFEST-SOURCES": {"rule":"`sources` is an array of at most 16 objects, each with a `name` (a Key: lowercase letters, digits, `-` and `_`, starting with a letter, at most 48 characters; unique), a `url` and optionally `maxBytes`, an integer from 1 to 20,971,520.","why":"The name is the key under which the fetcher finds the file (`context.sources.<name>`) and the name of its fixture copy; `maxBytes` bounds every download. Two sources of one name could not both be found.","failing":{"where":"plugin.json","text":"\"sources\": [\n  { \"name\": \"daily\", \"url\": \"https://www.ecb.europa.eu/stats/eurofxref/eurofxref.zip\" },\n  { \"name\": \"daily\", \"url\": \"https://www.ecb.europa.eu/stats/eurofxref/eurofxref-hist.zip\", \"maxBytes\": 0 }\n]"},"passing":{"where":"plugin.json","text":"\"sources\": [\n  { \"name\": \"daily\", \"url\": \"https://www.ecb.europa.eu/stats/eurofxref/eurofxref.zip\" },\n  { \"name\": \"history\", \"url\": \"https://www.ecb.europa.eu/stats/eurofxref/eurofxref-hist.zip\", \"maxBytes\": 2097152 }\n]"}},
    "PLG-MANIFEST-SOURCE-URL": {"rule":"A source `url` is https, at most 500 characters, with a lowercase host name of at least two labels (no IP address), an optional port, no user name or password, no spaces or backslashes, and `{...}` only as `{today}`, `{year}` or `{month}` after the host.","why":"The service downloads only from hosts the manifest names, checks every address they resolve to, and shows the reviewer each address it will fetch. An IP address, credentials or a placeholder in the host would get around those checks.","failing":{"where":"plugin.json","text":"\"url\": \"http://198.51.100.7/{source}/rates.csv\""},"passing":{"where":"plugin.json","text":"\"url\": \"https://www.bancentral.gov.do/rates/{year}/{month}/tasa-{today}.csv\""}},
    "PLG-MANIFEST-SERIES": {"rule":"`series` holds 1 to 64 objects. Each has a unique `key` (a Key), `kind` (`value`, `event` or `item`), `cadence` (`business-day`, `daily`, `weekly`, `monthly`, `quarterly`, `irregular`), `dates` (`observation` or `publication`) and a `name`; optionally `unit` (at most 16 characters) and `snapshot` (`back` and `ahead` windows). A value series has 1 to 16 `fields` (Keys); `fieldNames` and `change` name declared fields only; event and item series have no fields.","why":"Every record is checked against its series, and the series decides how readers see it: its row label, the order of rows, which figure's change is shown and how a screen reader says it.","failing":{"where":"plugin.json","text":"\"series\": [\n  { \"key\": \"usd\", \"kind\": \"value\", \"cadence\": \"business-day\", \"dates\": \"observation\",\n    \"name\": { \"en\": \"US dollar\" }, \"change\": \"mid\" }\n]"},"passing":{"where":"plugin.json","text":"\"series\": [\n  { \"key\": \"usd\", \"kind\": \"value\", \"cadence\": \"business-day\", \"dates\": \"observation\",\n    \"name\": { \"en\": \"US dollar\" }, \"unit\": \"DOP\", \"fields\": [\"buy\", \"sell\"], \"change\": \"sell\" }\n]"}},
    "PLG-MANIFEST-LINKS": {"rule":"`links.hosts` is an array of at most 16 lowercase host names, each at most 253 characters, no IP addresses and no URLs.","why":"An item's link may point only at a source host or one of these hosts, so readers are never sent to a place the reviewer has not seen.","failing":{"where":"plugin.json","text":"\"links\": { \"hosts\": [\"https://www.ecb.europa.eu/press/\"] }"},"passing":{"where":"plugin.json","text":"\"links\": { \"hosts\": [\"www.ecb.europa.eu\"] }"}},
    "PLG-MANIFEST-LIMITS": {"rule":"`limits.seconds` is an integer from 1 to 120 and `limits.megabytes` an integer from 16 to 256; both are optional. They can only lower the defaults of 120 seconds and 256 MB.","why":"The locked room stops every run at its limits. A plug-in may ask for less, so a runaway run fails sooner; it can never ask for more than other plug-ins get.","failing":{"where":"plugin.json","text":"\"limits\": { \"seconds\": 300, \"megabytes\": 8 }"},"passing":{"where":"plugin.json","text":"\"limits\": { \"seconds\": 60, \"megabytes\": 64 }"}},
    "PLG-MANIFEST-LICENCE": {"rule":"`licence` has `holder` (1 to 200 characters), `terms` (text of at most 500 characters, or null when there are none) and `retain` (`yes`, `no` or `unknown`); `attribution` is optional, 1 to 40 characters.","why":"The holder's name or attribution ends every value row; the terms and `retain` tell the service and its people whether the records may be kept for good or must be offered for purge.","failing":{"where":"plugin.json","text":"\"licence\": { \"holder\": \"European Central Bank\" }"},"passing":{"where":"plugin.json","text":"\"licence\": {\n  \"holder\": \"European Central Bank\",\n  \"attribution\": \"ECB\",\n  \"terms\": \"Reproduction is permitted provided that the source is acknowledged.\",\n  \"retain\": \"yes\"\n}"}},
    "PLG-ID-RESERVED": {"rule":"An id may not be `store`, `publish`, `search`, `markets`, or a word the service's own addresses use (`api`, `portal`, `host`, `reader`, `docs`, `tool`, `static`, `login`, `admin`, `health`, ...), and may not start with `almanac`, `alm-`, `chk-` or `test-`.","why":"Ids become addresses beside the service's own pages; a plug-in called `docs` would clash with them, and one called `almanac-rates` would pass for the service's own.","failing":{"where":"plugin.json","text":"\"id\": \"almanac-rates\""},"passing":{"where":"plugin.json","text":"\"id\": \"ecb-rates\""}},
    "PLG-LISTING-INVALID": {"rule":"listing.json is one JSON object with `\"listing\": 1` and only the keys of the listing table: `listing`, `plugin`, `publisher`, `tagline`, `description`, `category`, `keywords`, `links`, `sources`, `examples` (and only the known keys inside each).","why":"The store shows exactly these fields. An unknown key is most often a misspelt one whose text would silently never show.","failing":{"where":"listing.json","text":"{\n  \"listing\": 1,\n  \"plugin\": \"ecb-rates\",\n  \"summary\": { \"en\": \"Euro reference rates\" },\n  ...\n}"},"passing":{"where":"listing.json","text":"{\n  \"listing\": 1,\n  \"plugin\": \"ecb-rates\",\n  \"tagline\": { \"en\": \"Euro reference rates\" },\n  ...\n}"}},
    "PLG-LISTING-ID": {"rule":"The listing's `plugin` is the manifest's `id`.","why":"A listing describes one plug-in; one copied from another folder would put another plug-in's words in the store.","failing":{"where":"listing.json (manifest id ecb-rates)","text":"\"plugin\": \"ecb-fx\""},"passing":{"where":"listing.json (manifest id ecb-rates)","text":"\"plugin\": \"ecb-rates\""}},
    "PLG-LISTING-PUBLISHER": {"rule":"`publisher.domain` is a lowercase host name: the organization's verified domain.","why":"Readers see who publishes a plug-in; the store shows the verified mark only for the domain the organization proved it holds.","failing":{"where":"listing.json","text":"\"publisher\": { \"domain\": \"https://Example.org/\" }"},"passing":{"where":"listing.json","text":"\"publisher\": { \"domain\": \"example.org\" }"}},
    "PLG-LISTING-TAGLINE": {"rule":"`tagline` is an object of language code to text: one line of plain text, at most 80 characters each, with an `en` entry.","why":"The tagline is the one line under the plug-in's name in the store's lists; a second line or markup would break the list.","failing":{"where":"listing.json","text":"\"tagline\": { \"en\": \"Euro reference rates\\nfor every working day, straight from the European Central Bank\" }"},"passing":{"where":"listing.json","text":"\"tagline\": { \"en\": \"Euro reference rates on the day they apply\" }"}},
    "PLG-LISTING-DESCRIPTION": {"rule":"`description` is an object of language code to plain text of at most 2,000 characters, paragraphs separated by a blank line, with an `en` entry. No HTML tags or character references.","why":"The store shows the description as plain paragraphs in every language; markup would show as raw text or be a way to slip content past review.","failing":{"where":"listing.json","text":"\"description\": { \"en\": \"<b>Daily</b> reference rates &amp; history\" }"},"passing":{"where":"listing.json","text":"\"description\": { \"en\": \"The ECB publishes reference rates each working day.\\n\\nOne row a day, with the change.\" }"}},
    "PLG-LISTING-LANGUAGE-MISSING": {"rule":"Every per-language text of the listing (`tagline`, `description`) has an `en` entry.","why":"Readers whose language is not listed see `en`; without it they would see nothing at all.","failing":{"where":"listing.json","text":"\"tagline\": { \"de\": \"Euro-Referenzkurse am Tag ihrer Geltung\" }"},"passing":{"where":"listing.json","text":"\"tagline\": { \"en\": \"Euro reference rates on the day they apply\", \"de\": \"Euro-Referenzkurse am Tag ihrer Geltung\" }"}},
    "PLG-LISTING-CATEGORY": {"rule":"`category` is one of `finance`, `economy`, `central-banks`, `holidays`, `government`, `statistics`, `weather`, `science`, `transport`, `culture`, `sports`, `other`.","why":"Readers browse the store by these categories; a plug-in outside them could not be found.","failing":{"where":"listing.json","text":"\"category\": \"money\""},"passing":{"where":"listing.json","text":"\"category\": \"central-banks\""}},
    "PLG-LISTING-KEYWORDS": {"rule":"`keywords` (optional) is an array of at most 12 entries, each 1 to 30 characters of plain text.","why":"Keywords feed the store's search; a handful of exact words finds a plug-in, a long list is keyword stuffing.","failing":{"where":"listing.json","text":"\"keywords\": [\"euro\", \"eur\", \"exchange rates\", \"fx\", \"forex\", \"currency\", \"ecb\", \"usd\", \"gbp\", \"jpy\", \"chf\", \"rates\", \"reference rates of the european central bank\"]"},"passing":{"where":"listing.json","text":"\"keywords\": [\"euro\", \"exchange rates\", \"ECB\"]"}},
    "PLG-LISTING-LINK": {"rule":"Every link in the listing (`links.privacy`, `links.support.url`, each source's `page` and `licence.url`) is an https URL of at most 1,000 characters with a host name.","why":"Readers open these links from the store; https keeps what they read from being changed on the way.","failing":{"where":"listing.json","text":"\"links\": { \"privacy\": \"http://example.org/privacy\", ... }"},"passing":{"where":"listing.json","text":"\"links\": { \"privacy\": \"https://example.org/privacy\", ... }"}},
    "PLG-NO-PRIVACY-POLICY": {"rule":"`links.privacy` is required: the https address of the publisher's privacy policy.","why":"Readers who report a problem or write to support give the publisher something; they must be able to read what the publisher does with it.","failing":{"where":"listing.json","text":"\"links\": { \"support\": { \"email\": \"plugins@example.org\" } }"},"passing":{"where":"listing.json","text":"\"links\": {\n  \"privacy\": \"https://example.org/privacy\",\n  \"support\": { \"email\": \"plugins@example.org\" }\n}"}},
    "PLG-NO-SUPPORT-CONTACT": {"rule":"`links.support` is required: an object with a `url` (https), an `email`, or both.","why":"A reader who sees a wrong figure needs someone to tell; the store shows this contact on the plug-in's page.","failing":{"where":"listing.json","text":"\"support\": \"plugins@example.org\""},"passing":{"where":"listing.json","text":"\"support\": { \"url\": \"https://example.org/support\", \"email\": \"plugins@example.org\" }"}},
    "PLG-LISTING-SOURCE": {"rule":"`sources` lists every declared source once: `name` (a source of the manifest), `title`, `page` (https) and `licence` with `name` and `url`.","why":"The store tells readers where each figure comes from and under which terms, for every file the plug-in downloads.","failing":{"where":"listing.json (sources daily and history)","text":"\"sources\": [\n  { \"name\": \"daily\", \"title\": \"Euro reference rates\" }\n]"},"passing":{"where":"listing.json (sources daily and history)","text":"\"sources\": [\n  { \"name\": \"daily\", \"title\": \"Euro reference rates\",\n    \"page\": \"https://www.ecb.europa.eu/stats/policy_and_exchange_rates/\",\n    \"licence\": { \"name\": \"ECB copyright\", \"url\": \"https://www.ecb.europa.eu/services/disclaimer/\" } },\n  { \"name\": \"history\", \"title\": \"History of the reference rates\",\n    \"page\": \"https://www.ecb.europa.eu/stats/policy_and_exchange_rates/\",\n    \"licence\": { \"name\": \"ECB copyright\", \"url\": \"https://www.ecb.europa.eu/services/disclaimer/\" } }\n]"}},
    "PLG-LISTING-EXAMPLE": {"rule":"`examples` holds 1 to 3 days, each `{date, caption}`: a date the fixtures cover (a date of `fixtures/records.jsonl`), each shown once, and a one-line caption per language of at most 200 characters with an `en` entry.","why":"The store draws each example day from the fixture records, so readers see real rows; a day the fixtures do not cover would show an empty day.","failing":{"where":"listing.json (fixtures cover 2024-05-06..2024-05-10)","text":"\"examples\": [{ \"date\": \"2019-01-02\", \"caption\": { \"de\": \"Ein Freitag\" } }]"},"passing":{"where":"listing.json (fixtures cover 2024-05-06..2024-05-10)","text":"\"examples\": [{ \"date\": \"2024-05-10\", \"caption\": { \"en\": \"A Friday's rates\" } }]"}},
    "PLG-LISTING-MISSING": {"rule":"A portal upload without `listing.json` is warned at once, in its `listing` check: such a version can be checked, reviewed and published, and runs for the readers who have it, but the store lists only a published version with a listing, so it can never be listed.","why":"Nothing else stops a publisher from publishing a plug-in nobody can find; the warning says so before the review, not after the store stays empty.","failing":{"where":"the uploaded folder","text":"plugin.json, fetch.mjs, fixtures/ and review.json, no listing.json"},"passing":{"where":"the uploaded folder","text":"plugin.json, fetch.mjs, fixtures/, review.json, listing.json and listing/icon.png"}},
    "PLG-LISTING-ICON": {"rule":"`listing/icon.png` is a PNG of 256x256 pixels and at most 64 KB (65,536 bytes), judged from its bytes (signature, header, chunk checksums, end); legible at 14 pixels.","why":"The icon is drawn small beside the plug-in's rows and in the store; one size keeps it sharp everywhere and quick to load.","failing":{"where":"listing/icon.png","text":"a 512x512 PNG of 210 KB, or a JPEG renamed icon.png"},"passing":{"where":"listing/icon.png","text":"a 256x256 PNG of 9 KB: a simple shape, two colours, no small text"}},
    "PLG-RECORD-TODAY": {"rule":"The run context the service writes to the fetcher's standard input has a `today`: a real date YYYY-MM-DD, the date of `now` in the manifest's zone. This is the service's side of the contract, not the plug-in's.","why":"Every date rule of a record (nothing after today except a scheduled event) is judged against today; without a valid one no record can be judged, so the check stops.","failing":{"where":"run context (stdin)","text":"{ \"contract\": 1, \"plugin\": \"ecb-rates\", \"now\": \"2026-06-10T15:00:00Z\", \"today\": \"10/06/2026\", ... }"},"passing":{"where":"run context (stdin)","text":"{ \"contract\": 1, \"plugin\": \"ecb-rates\", \"now\": \"2026-06-10T15:00:00Z\", \"today\": \"2026-06-10\", ... }"}},
    "PLG-RECORD-TOO-MANY": {"rule":"One run prints at most 250,000 records; on a first run, print only what `backfillFrom` allows.","why":"A run is checked line by line and written in one transaction; a bounded batch keeps each run quick and its memory small, and the one-at-a-time queue moving.","failing":{"where":"plugin.json and fetch.mjs","text":"\"backfill\": \"all\"\n\n// prints every day since 1999 for 40 currencies\nfor (const row of history) for (const c of CURRENCIES) print(row, c);"},"passing":{"where":"plugin.json and fetch.mjs","text":"\"backfill\": \"10y\"\n\nconst from = context.backfillFrom ?? \"0000-01-01\";\nfor (const row of history) if (row.date >= from) for (const c of CURRENCIES) print(row, c);"}},
    "PLG-RECORD-INVALID": {"rule":"Each output line is one JSON object of one kind with its required keys: real dates written YYYY-MM-DD, finite numbers, ids of 1 to 64 characters without spaces, plain-text titles (no HTML, at most 200 characters), a valid event `state`. No empty lines inside the output.","why":"One bad line refuses the whole batch, so readers never see half a run, and a figure is never stored that the fetcher did not really read.","failing":{"where":"fetcher output","text":"{\"kind\":\"value\",\"series\":\"usd\",\"date\":\"2024-5-10\",\"fields\":{\"rate\":\"1.0812\"}}"},"passing":{"where":"fetcher output","text":"{\"kind\":\"value\",\"series\":\"usd\",\"date\":\"2024-05-10\",\"fields\":{\"rate\":1.0812}}"}},
    "PLG-RECORD-SERIES": {"rule":"A record's `series` is a key declared in plugin.json, and its `kind` is the kind that series was declared with.","why":"The series says how a record is checked, stored and drawn; a record of an undeclared series, or of the wrong kind, has no rules to follow.","failing":{"where":"fetcher output (series usd is a value series)","text":"{\"kind\":\"event\",\"series\":\"usd\",\"id\":\"r1\",\"date\":\"2024-05-10\",\"state\":\"happened\"}"},"passing":{"where":"fetcher output (series usd is a value series)","text":"{\"kind\":\"value\",\"series\":\"usd\",\"date\":\"2024-05-10\",\"fields\":{\"rate\":1.0812}}"}},
    "PLG-RECORD-UNKNOWN-KEY": {"rule":"Each record kind takes only its own keys. value: `kind`, `series`, `date`, `fields`, `period`, `revises`. event: `kind`, `series`, `id`, `date`, `state`, `value`, `title`. item: `kind`, `series`, `date`, `id`, `title`, `url`.","why":"A key the service does not store would be dropped without a word; refusing it shows the mistake while it can still be fixed.","failing":{"where":"fetcher output","text":"{\"kind\":\"value\",\"series\":\"usd\",\"date\":\"2024-05-10\",\"fields\":{\"rate\":1.0812},\"source\":\"ecb\"}"},"passing":{"where":"fetcher output","text":"{\"kind\":\"value\",\"series\":\"usd\",\"date\":\"2024-05-10\",\"fields\":{\"rate\":1.0812}}"}},
    "PLG-RECORD-AFTER-TODAY": {"rule":"No record is dated after the run's `today` except a `scheduled` event. A `happened` or `cancelled` event after today is refused too: leave a cancelled future event out until its day.","why":"A value or item from the future is almost always a date read in the wrong zone or format; only a planned event really lies ahead.","failing":{"where":"fetcher output (today 2026-06-10)","text":"{\"kind\":\"value\",\"series\":\"usd\",\"date\":\"2026-06-11\",\"fields\":{\"rate\":1.0812}}"},"passing":{"where":"fetcher output (today 2026-06-10)","text":"{\"kind\":\"value\",\"series\":\"usd\",\"date\":\"2026-06-10\",\"fields\":{\"rate\":1.0812}}\n{\"kind\":\"event\",\"series\":\"meetings\",\"id\":\"2026-07-23\",\"date\":\"2026-07-23\",\"state\":\"scheduled\"}"}},
    "PLG-RECORD-LINK": {"rule":"An item's `url` is https, at most 1,000 characters, with no user name, to a host that is a source's host or listed in `links.hosts`.","why":"Readers follow item links from their calendar; the reviewer checks only the hosts the manifest names, so links may go nowhere else.","failing":{"where":"fetcher output (source host www.ecb.europa.eu)","text":"{\"kind\":\"item\",\"series\":\"press\",\"date\":\"2024-05-10\",\"id\":\"pr240510\",\"title\":\"Monetary policy decisions\",\"url\":\"http://bit.ly/3xYz\"}"},"passing":{"where":"fetcher output (source host www.ecb.europa.eu)","text":"{\"kind\":\"item\",\"series\":\"press\",\"date\":\"2024-05-10\",\"id\":\"pr240510\",\"title\":\"Monetary policy decisions\",\"url\":\"https://www.ecb.europa.eu/press/pr/date/2024/html/pr240510.en.html\"}"}},
    "PLG-RECORD-REPEATED": {"rule":"Each record key appears once per run. The key of a value is its series and date (and `period` for a series dated by publication); of an event, its series and id; of an item, its series, date and id.","why":"Two lines with one key would make what is stored depend on the order of the lines; the later line is refused and with it the batch.","failing":{"where":"fetcher output","text":"{\"kind\":\"value\",\"series\":\"usd\",\"date\":\"2024-05-10\",\"fields\":{\"rate\":1.0812}}\n{\"kind\":\"value\",\"series\":\"usd\",\"date\":\"2024-05-10\",\"fields\":{\"rate\":1.0813}}"},"passing":{"where":"fetcher output","text":"{\"kind\":\"value\",\"series\":\"usd\",\"date\":\"2024-05-09\",\"fields\":{\"rate\":1.0812}}\n{\"kind\":\"value\",\"series\":\"usd\",\"date\":\"2024-05-10\",\"fields\":{\"rate\":1.0813}}"}},
    "PLG-FOLDER-ID": {"rule":"The plug-in folder is named exactly as the manifest's `id`.","why":"The archive, the service's copy and every message find a plug-in by its folder; one name for both means the folder you check is the plug-in you upload.","failing":{"where":"folder","text":"ecb_rates/\n  plugin.json      \"id\": \"ecb-rates\"\n  fetch.mjs"},"passing":{"where":"folder","text":"ecb-rates/\n  plugin.json      \"id\": \"ecb-rates\"\n  fetch.mjs"}},
    "PLG-FETCH-MISSING": {"rule":"The fetcher is a file named `fetch.mjs` at the top of the plug-in folder.","why":"The service always starts `node fetch.mjs` in the plug-in folder; there is no setting that names another file.","failing":{"where":"folder","text":"ecb-rates/\n  plugin.json\n  src/fetch.mjs"},"passing":{"where":"folder","text":"ecb-rates/\n  plugin.json\n  fetch.mjs\n  src/parse.mjs"}},
    "PLG-IMPORT-OUTSIDE": {"rule":"A relative import resolves to a file inside the plug-in folder.","why":"Only the folder's covered files are approved by digest and copied into the locked room; a module from outside was never reviewed and is not there when the service runs the fetcher.","failing":{"where":"fetch.mjs","text":"import { parseCsv } from \"../shared/csv.mjs\";"},"passing":{"where":"fetch.mjs","text":"import { parseCsv } from \"./lib/csv.mjs\";"}},
    "PLG-IMPORT-PACKAGE": {"rule":"A fetcher imports only its own files and Node's built-in modules, written with the `node:` prefix. No packages, not even installed ones.","why":"The locked room has no packages and the digest covers only your own files. The `node:` prefix names the built-in module itself, which no package of the same name can stand in for.","failing":{"where":"fetch.mjs","text":"import { readFileSync } from \"fs\";\nimport Papa from \"papaparse\";"},"passing":{"where":"fetch.mjs","text":"import { readFileSync } from \"node:fs\";\nimport { parseCsv } from \"./csv.mjs\";"}},
    "PLG-FIXTURE-SOURCE-MISSING": {"rule":"Every declared source has one real copy in `fixtures/sources/`, named exactly as the source's `name`.","why":"`check` runs the fetcher on these files with no network, and reviewers read them to see what the real source looks like.","failing":{"where":"folder (one source named daily)","text":"fixtures/sources/eurofxref-daily.csv"},"passing":{"where":"folder (one source named daily)","text":"fixtures/sources/daily"}},
    "PLG-FIXTURE-CONTEXT-INVALID": {"rule":"`fixtures/context.json` (and a run case's `context.json`) is a JSON object with `now` (an ISO instant, any offset) and `today`, the date of `now` in the manifest's zone; it may give `backfill`, `backfillFrom` and some series' `{last, count}`, never `sources`.","why":"The fixture run must be a run the service could really make: the service's today is always the date of now in the manifest's zone.","failing":{"where":"fixtures/context.json (zone Asia/Tokyo)","text":"{ \"now\": \"2026-06-10T23:30:00Z\", \"today\": \"2026-06-10\" }"},"passing":{"where":"fixtures/context.json (zone Asia/Tokyo)","text":"{ \"now\": \"2026-06-10T23:30:00Z\", \"today\": \"2026-06-11\" }"}},
    "PLG-FIXTURE-RECORDS-MISSING": {"rule":"`fixtures/records.jsonl` holds the fetcher's expected output on the fixtures, and each `fixtures/runs/<case>/` holds either `records.jsonl` (a later run) or `expect.json` (a run that must fail): one of them, not both.","why":"`check` compares the fetcher's output byte for byte with these files; without them nothing says what the fetcher should print.","failing":{"where":"folder","text":"fixtures/runs/holiday/\n  sources/daily"},"passing":{"where":"folder","text":"fixtures/runs/holiday/\n  sources/daily\n  records.jsonl"}},
    "PLG-FIXTURE-MISMATCH": {"rule":"On the fixtures the fetcher prints exactly the bytes of `fixtures/records.jsonl` (and of each run case's `records.jsonl`). `check --update` writes its output there instead of comparing.","why":"The stored output is the expectation the reviewer read. A change in what the fetcher prints must be seen and accepted, never slip through: run `check --update` and read the diff.","failing":{"where":"fetcher output against fixtures/records.jsonl","text":"printed: {\"kind\":\"value\",\"series\":\"usd\",\"date\":\"2024-05-10\",\"fields\":{\"rate\":1.0813}}\nfile:    {\"kind\":\"value\",\"series\":\"usd\",\"date\":\"2024-05-10\",\"fields\":{\"rate\":1.0812}}"},"passing":{"where":"fetcher output against fixtures/records.jsonl","text":"printed: {\"kind\":\"value\",\"series\":\"usd\",\"date\":\"2024-05-10\",\"fields\":{\"rate\":1.0812}}\nfile:    {\"kind\":\"value\",\"series\":\"usd\",\"date\":\"2024-05-10\",\"fields\":{\"rate\":1.0812}}"}},
    "PLG-RUN-FAILED": {"rule":"On files it knows the fetcher exits 0, even with nothing new. A non-zero exit fails the run, and its last stderr line is the reason.","why":"A failed run writes nothing and readers see the could-not-refresh row; at `check` it means the fetcher cannot read its own fixture.","failing":{"where":"fetch.mjs","text":"// throws on the empty line at the end of the file\nconst rates = text.split(\"\\n\").map((line) => line.split(\",\")[1].trim());"},"passing":{"where":"fetch.mjs","text":"const rates = text.split(/\\r?\\n/).filter((line) => line !== \"\").map((line) => line.split(\",\")[1].trim());"}},
    "PLG-RUN-KILLED": {"rule":"A run finishes within `limits.seconds` (120 at most), uses at most `limits.megabytes` of memory above Node's own (256 at most; Buffers count) and prints at most 64 MB.","why":"Runs go one at a time; a runaway fetcher would hold up every other plug-in, so the room stops it at its limits.","failing":{"where":"fetch.mjs","text":"const all = [];\nfor (const line of text.split(\"\\n\")) all.push(Buffer.from(line.repeat(1000)));"},"passing":{"where":"fetch.mjs","text":"for (const line of text.split(\"\\n\")) if (line) process.stdout.write(toRecord(line) + \"\\n\");"}},
    "PLG-RUN-NETWORK": {"rule":"The fetcher never opens a connection: no `fetch`, `http`, `https`, `net`, `tls`, `dgram`, `dns` or WebSocket. Declare each file in `sources` and read it from `context.sources`.","why":"The service downloads the declared sources itself, under its checks (https, public addresses, declared hosts, size and time limits); the locked room has no network, so a fetcher that tries fails there.","failing":{"where":"fetch.mjs","text":"const res = await fetch(\"https://www.ecb.europa.eu/stats/eurofxref/eurofxref-daily.xml\");\nconst text = await res.text();"},"passing":{"where":"fetch.mjs","text":"const text = readFileSync(context.sources.daily, \"utf8\");"}},
    "PLG-RUN-EXPECTED-FAILURE": {"rule":"A case with `expect.json` must fail: exit non-zero (or exactly `exit` when given), print nothing on stdout, and end stderr with a line containing `reason` (case-insensitive).","why":"When a source changes shape the fetcher must stop rather than guess, so readers see could-not-refresh instead of wrong figures; the case proves it does.","failing":{"where":"fetch.mjs (case expect.json: {\"exit\": 2, \"reason\": \"unknown status\"})","text":"const state = STATES[event.status] ?? \"scheduled\";"},"passing":{"where":"fetch.mjs (case expect.json: {\"exit\": 2, \"reason\": \"unknown status\"})","text":"const state = STATES[event.status];\nif (!state) {\n  process.stderr.write(`calendar: unknown status \"${event.status}\"\\n`);\n  process.exit(2);\n}"}},
    "PLG-RUN-READ-OUTSIDE": {"rule":"The fetcher reads only its own code files and the paths in `context.sources`.","why":"`fixtures/`, `listing/` and README.md are not copied into the locked room; a fetcher reading them passes on your machine and fails on the service.","failing":{"where":"fetch.mjs","text":"const text = readFileSync(new URL(\"./fixtures/sources/daily\", import.meta.url), \"utf8\");"},"passing":{"where":"fetch.mjs","text":"const text = readFileSync(context.sources.daily, \"utf8\");"}},
    "PLG-ID-TAKEN": {"rule":"An id belongs to the publisher that registered it first.","why":"Readers, preferences and links name a plug-in by its id; one id has one publisher.","failing":{"where":"plugin.json (ecb-rates is another publisher's)","text":"\"id\": \"ecb-rates\""},"passing":{"where":"plugin.json","text":"\"id\": \"examplebank-ecb-rates\""}},
    "PLG-VERSION-REUSED": {"rule":"A version number names one code: the same `version` with other files is refused.","why":"The host, the reviewers and the history identify code by its version; two codes under one number would make \"version 1.2.0\" mean two things.","failing":{"where":"upload (1.2.0 is kept with other code)","text":"fetch.mjs changed, plugin.json still \"version\": \"1.2.0\""},"passing":{"where":"upload (1.2.0 is kept with other code)","text":"fetch.mjs changed, plugin.json \"version\": \"1.2.1\""}},
    "PLG-VERSION-NOT-GREATER": {"rule":"New code carries a version greater than every version of the plug-in kept so far.","why":"Versions only go up, so the newest code is always the greatest number and nobody takes an older line for the current one.","failing":{"where":"upload (kept: 1.2.0 and 1.3.0)","text":"\"version\": \"1.2.5\""},"passing":{"where":"upload (kept: 1.2.0 and 1.3.0)","text":"\"version\": \"1.3.1\""}},
    "PLG-VERSION-KEPT": {"rule":"The code of a kept version other than the current one is not uploaded again; changed code gets a new, greater version, and going back to an earlier approved version is the host's roll back.","why":"Uploading old code again would quietly replace the version running now. Going back is an explicit move at the host, kept in the history with who did it and why.","failing":{"where":"upload (current 1.3.0)","text":"the files of 1.2.0 again, \"version\": \"1.2.0\""},"passing":{"where":"host (current 1.3.0)","text":"POST /api/v1/host/plugins/ecb-rates/rollback\n{\"version\": \"1.2.0\", \"reason\": \"1.3.0 reads the new file layout wrongly\"}"}},
    "PLG-ID-RETIRED": {"rule":"A retired id is never used again, by anyone.","why":"Readers keep the records of a retired plug-in under its id; a new plug-in under that id would mix with them.","failing":{"where":"plugin.json (ecb-rates was retired)","text":"\"id\": \"ecb-rates\""},"passing":{"where":"plugin.json","text":"\"id\": \"ecb-reference-rates\""}},
    "PLG-STORE-AUDIENCE": {"rule":"A plug-in listed in the store has `\"audience\": \"public\"`.","why":"The store is for everyone; a private plug-in is shown only to the people on its list, and a local one runs only on its developer's machine.","failing":{"where":"plugin.json with listing.json","text":"\"audience\": \"private\""},"passing":{"where":"plugin.json with listing.json","text":"\"audience\": \"public\""}},
    "PLG-LICENCE-TERMS-MISSING": {"rule":"A store plug-in quotes or links the holder's terms in `licence.terms` (not null, not empty).","why":"Readers and reviewers must see under which terms the data may be shown to everyone; choose public only when the terms allow it.","failing":{"where":"plugin.json with listing.json","text":"\"licence\": { \"holder\": \"European Central Bank\", \"terms\": null, \"retain\": \"yes\" }"},"passing":{"where":"plugin.json with listing.json","text":"\"licence\": { \"holder\": \"European Central Bank\", \"retain\": \"yes\",\n  \"terms\": \"Reproduction is permitted provided that the source is acknowledged: https://www.ecb.europa.eu/services/disclaimer/\" }"}},
    "PLG-SCHEDULE-TOO-FREQUENT": {"rule":"The schedule runs at most 24 times on any day, read in the manifest's zone.","why":"Plug-ins are not for live data. Runs go one at a time, so a frequent plug-in would delay everyone else's.","failing":{"where":"plugin.json","text":"\"schedule\": \"*/30 * * * *\""},"passing":{"where":"plugin.json","text":"\"schedule\": \"30 16 * * 1-5\""}},
    "PLG-QUOTA-UPLOADS": {"rule":"An organization uploads at most 20 times a day.","why":"Each upload runs checks in the locked room; the quota keeps them for everyone. `check`, `preview` and `probe` run on your own machine without counting.","failing":{"where":"organization","text":"a 21st upload today, after each small change"},"passing":{"where":"organization","text":"check and preview on your machine until they pass, then one upload"}},
    "PLG-ZIP-TOO-LARGE": {"rule":"The archive is at most 8 MiB.","why":"Archives are read whole and checked entry by entry before anything is kept; a plug-in is code and small fixtures, not a data store.","failing":{"where":"archive","text":"ecb-rates-1.0.0.zip, 12 MiB: fixtures/sources/history holds 25 years of rates"},"passing":{"where":"archive","text":"ecb-rates-1.0.0.zip, 310 KiB: fixtures/sources/history holds the last year"}},
    "PLG-ZIP-NOT-ZIP": {"rule":"The upload is a ZIP archive, as the tool's `pack` writes it.","why":"The service reads only ZIP; other formats would need other readers, each a new way to be fooled.","failing":{"where":"upload","text":"tar czf ecb-rates.tar.gz ecb-rates   # then upload ecb-rates.tar.gz"},"passing":{"where":"upload","text":"node almanac-plugin.mjs pack ecb-rates   # then upload ecb-rates-1.0.0.zip"}},
    "PLG-ZIP-PREPENDED": {"rule":"Nothing comes before the archive's first entry.","why":"Bytes before the first entry (a self-extractor, a joined file) can hide content that one ZIP reader sees and another does not.","failing":{"where":"upload","text":"cat stub.exe ecb-rates-1.0.0.zip > ecb-rates.zip"},"passing":{"where":"upload","text":"ecb-rates-1.0.0.zip exactly as pack wrote it"}},
    "PLG-ZIP-MULTI-DISK": {"rule":"The archive is one single-part ZIP: not split or spanned over several files.","why":"A split archive cannot be read from the one file uploaded.","failing":{"where":"upload","text":"zip -s 1m -r ecb-rates.zip ecb-rates   # writes ecb-rates.z01, ecb-rates.zip"},"passing":{"where":"upload","text":"node almanac-plugin.mjs pack ecb-rates"}},
    "PLG-ZIP-ZIP64": {"rule":"The archive is a plain ZIP, without ZIP64 records or sizes.","why":"Plug-ins are far below ZIP64's sizes; refusing its records means every reader agrees on every size and offset.","failing":{"where":"upload","text":"zip -fz -r ecb-rates.zip ecb-rates   # forces ZIP64"},"passing":{"where":"upload","text":"node almanac-plugin.mjs pack ecb-rates"}},
    "PLG-ZIP-ENCRYPTED": {"rule":"No entry is encrypted.","why":"The service must read every file to check and approve it; plug-in code is public to its reviewers anyway.","failing":{"where":"upload","text":"zip -e -r ecb-rates.zip ecb-rates   # asks for a password"},"passing":{"where":"upload","text":"node almanac-plugin.mjs pack ecb-rates"}},
    "PLG-ZIP-METHOD": {"rule":"Every entry is stored (method 0) or compressed with deflate (method 8).","why":"Two methods every ZIP reader knows; others (bzip2, LZMA, zstd) would need more decoders on the service.","failing":{"where":"upload","text":"7z a -tzip -mm=BZip2 ecb-rates.zip ecb-rates"},"passing":{"where":"upload","text":"node almanac-plugin.mjs pack ecb-rates"}},
    "PLG-ZIP-TOO-MANY-ENTRIES": {"rule":"The archive holds at most 500 entries.","why":"A plug-in needs a manifest, a fetcher, a few modules and one fixture per source; thousands of entries only slow every check.","failing":{"where":"folder","text":"fixtures/sources/daily-2001-01-02 ... daily-2024-05-10   (6,000 files)"},"passing":{"where":"folder","text":"fixtures/sources/daily, fixtures/sources/history   (one file per source)"}},
    "PLG-ZIP-UNCOMPRESSED-TOO-LARGE": {"rule":"Unpacked, the files take at most 32 MiB in all, the files the digest covers at most 1 MiB, and no entry unpacks to more than 100 times its packed size.","why":"The limits keep an archive from unpacking into far more than it looks (a zip bomb) and keep the code a reviewer reads small.","failing":{"where":"folder","text":"fixtures/sources/history   40 MiB\nrates-table.json (covered)  3 MiB"},"passing":{"where":"folder","text":"fixtures/sources/history   2 MiB (the last years)\nthe table built by fetch.mjs from the source at run time"}},
    "PLG-ZIP-DAMAGED": {"rule":"The archive reads whole: its directory matches its entries, every entry inflates to its recorded size and checksum.","why":"A damaged archive could be read differently by different readers; the service keeps only what reads cleanly.","failing":{"where":"upload","text":"an archive cut short by an interrupted copy, or edited in place by another program"},"passing":{"where":"upload","text":"pack the folder again and upload the file unchanged (its sha256 equal to pack's)"}},
    "PLG-ZIP-FOLDER": {"rule":"Every entry lies in one top folder named as the plug-in: `<id>/...`, as pack writes it.","why":"The service unpacks one plug-in folder; entries outside it, or several top folders, would not say which plug-in they belong to.","failing":{"where":"archive entries","text":"plugin.json\nfetch.mjs\nfixtures/sources/daily"},"passing":{"where":"archive entries","text":"ecb-rates/plugin.json\necb-rates/fetch.mjs\necb-rates/fixtures/sources/daily"}},
    "PLG-ZIP-PATH": {"rule":"Entry paths are relative and `/`-separated, UTF-8: no `..`, `.` or empty part, no absolute path, no backslash or control character, no path twice, no path that is both a file and a folder.","why":"Such paths could write outside the unpacked folder, or unpack differently on another system.","failing":{"where":"archive entries","text":"ecb-rates/../../etc/cron.d/x\necb-rates\\fetch.mjs"},"passing":{"where":"archive entries","text":"ecb-rates/fetch.mjs\necb-rates/lib/csv.mjs"}},
    "PLG-ZIP-LINK": {"rule":"The archive holds plain files only: no symbolic links, devices or other special entries.","why":"A link points outside what was reviewed and could unpack to anywhere; the digest covers file bytes only.","failing":{"where":"archive entries","text":"ecb-rates/lib -> ../shared/lib   (a symbolic link)"},"passing":{"where":"archive entries","text":"ecb-rates/lib/csv.mjs   (the file itself)"}},
    "PLG-ZIP-TOO-DEEP": {"rule":"Every file lies at most 8 folders deep inside the plug-in folder.","why":"Deep trees make paths long and awkward to review; a plug-in needs very few folders.","failing":{"where":"archive entries","text":"ecb-rates/src/lib/parse/csv/v2/impl/core/util/x.mjs"},"passing":{"where":"archive entries","text":"ecb-rates/lib/csv.mjs"}},
    "PLG-ZIP-CASE": {"rule":"No two paths differ only in upper and lower case.","why":"On many systems such files are one file: the unpacked folder would depend on where it is unpacked.","failing":{"where":"archive entries","text":"ecb-rates/Fetch.mjs\necb-rates/fetch.mjs"},"passing":{"where":"archive entries","text":"ecb-rates/fetch.mjs\necb-rates/fetch-helpers.mjs"}},
    "PLG-ZIP-PACK-JSON": {"rule":"The archive's `<id>/.pack.json` matches its files: id, version, digest, and each file's path, size and SHA-256.","why":"`.pack.json` records what pack checked; an archive edited after packing would go up with checks it never passed.","failing":{"where":"upload","text":"pack, then edit ecb-rates/fetch.mjs inside the ZIP with an archive manager"},"passing":{"where":"upload","text":"edit the folder, run check, pack again, upload the new ZIP"}},
    "PLG-RETIRE-CONFIRM": {"rule":"Retiring a plug-in needs its id typed exactly.","why":"Retiring stops the plug-in for good and its id is never used again; typing the id makes sure it is the one meant.","failing":{"where":"portal (retiring ecb-rates)","text":"confirm: \"ecb\""},"passing":{"where":"portal (retiring ecb-rates)","text":"confirm: \"ecb-rates\""}},
    "AGENT_MAY_NOT_PUBLISH": {"rule":"An agent publishes, unpublishes or relists only when the owner or admin who approved it allowed publishing.","why":"Publishing puts code in front of readers; the person approving an agent decides whether it may do that without them.","failing":{"where":"agent approved without publishing","text":"node almanac-plugin.mjs publish"},"passing":{"where":"portal","text":"an owner or admin presses Publish, or approves a new agent with publishing allowed"}},
    "AGENT_FORBIDDEN": {"rule":"Some acts are a person's only: verifying the domain, accepting the agreement, approving or revoking agents, naming a domain, asking to be invited, retiring a plug-in.","why":"These acts commit the organization; an agent's token never reaches them.","failing":{"where":"agent","text":"node almanac-plugin.mjs retire ecb-rates"},"passing":{"where":"portal","text":"a person opens the plug-in, chooses Retire and types ecb-rates"}},
    "PLG-LOCAL-NOT-APPROVED": {"rule":"The service approves only plug-ins whose audience is `public` or `private`; `local` runs on its developer's machine only.","why":"A local plug-in's records are never stored or sent anywhere; approving one on the server would do both.","failing":{"where":"plugin.json at the host","text":"\"audience\": \"local\""},"passing":{"where":"plugin.json at the host","text":"\"audience\": \"public\""}},
    "PLG-PURGE-CONFIRM": {"rule":"A purge needs the plug-in's id typed exactly.","why":"A purge removes the records and their revisions for good; typing the id makes sure it is the one meant.","failing":{"where":"host","text":"POST /api/v1/host/plugins/ecb-rates/purge\n{\"typed_id\": \"ecb\"}"},"passing":{"where":"host","text":"POST /api/v1/host/plugins/ecb-rates/purge\n{\"typed_id\": \"ecb-rates\"}"}},
    "PLG-CODE-SYMLINK": {"rule":"No symbolic link anywhere in the plug-in folder, fixtures included.","why":"A link can point anywhere on the machine; the digest covers the bytes of files in the folder, and a link is never followed.","failing":{"where":"folder","text":"ecb-rates/lib/csv.mjs -> ../../shared/csv.mjs"},"passing":{"where":"folder","text":"ecb-rates/lib/csv.mjs   (a copy of the file)"}},
    "PLG-CODE-FILE-TYPE": {"rule":"The files the digest covers (everything outside `fixtures/` and `listing/`, less README.md, AGENTS.md, CLAUDE.md, listing.json and review.json) are `.mjs`, `.json`, `.md`, `.txt` or `LICENSE`.","why":"The code a reviewer approves stays small and readable; data belongs in fixtures, where any file type is fine.","failing":{"where":"folder","text":"ecb-rates/parse.js\necb-rates/currencies.csv"},"passing":{"where":"folder","text":"ecb-rates/parse.mjs\necb-rates/currencies.json\necb-rates/fixtures/sources/daily   (any type)"}},
    "PLG-UPDATE-TIMEZONE": {"rule":"An update keeps the published version's `timezone`.","why":"Stored records were dated in the old zone; a new zone would move what each date means and the schedule under readers' feet. Publish a new plug-in for another zone.","failing":{"where":"plugin.json (published: Europe/Berlin)","text":"\"timezone\": \"UTC\""},"passing":{"where":"plugin.json (published: Europe/Berlin)","text":"\"timezone\": \"Europe/Berlin\""}},
    "PLG-UPDATE-SERIES-KIND": {"rule":"An update keeps each series' `kind`.","why":"Stored records of the series have the old kind; add a series with a new key for the new kind.","failing":{"where":"plugin.json (published: usd is a value series)","text":"{ \"key\": \"usd\", \"kind\": \"event\", ... }"},"passing":{"where":"plugin.json (published: usd is a value series)","text":"{ \"key\": \"usd\", \"kind\": \"value\", ... },\n{ \"key\": \"usd-auctions\", \"kind\": \"event\", ... }"}},
    "PLG-UPDATE-SERIES-UNIT": {"rule":"An update keeps each series' `unit`: not changed, added or removed.","why":"Stored figures are in the old unit; a new unit would change what readers are told they mean and how their change is measured. Add a series with a new key instead.","failing":{"where":"plugin.json (published: \"unit\": \"USD\")","text":"{ \"key\": \"rate\", \"unit\": \"EUR\", ... }"},"passing":{"where":"plugin.json (published: \"unit\": \"USD\")","text":"{ \"key\": \"rate\", \"unit\": \"USD\", ... },\n{ \"key\": \"rate-eur\", \"unit\": \"EUR\", ... }"}},
    "PLG-UPDATE-SERIES-DATES": {"rule":"An update keeps each series' `dates` (`observation` or `publication`).","why":"Stored records are keyed by the old kind of date; switching would put old and new records on different kinds of day. Add a series with a new key instead.","failing":{"where":"plugin.json (published: \"dates\": \"observation\")","text":"{ \"key\": \"cpi\", \"dates\": \"publication\", ... }"},"passing":{"where":"plugin.json (published: \"dates\": \"observation\")","text":"{ \"key\": \"cpi\", \"dates\": \"observation\", ... },\n{ \"key\": \"cpi-releases\", \"dates\": \"publication\", ... }"}},
    "PLG-UPDATE-SERIES-REMOVED": {"rule":"An update may remove a series; it is reported as a warning to the publisher and the reviewer.","why":"The series' records are kept but no longer refreshed; readers who used them see them stop, so the removal should be meant.","failing":{"where":"plugin.json (published: usd and gbp)","text":"\"series\": [{ \"key\": \"usd\", ... }]"},"passing":{"where":"plugin.json (published: usd and gbp)","text":"\"series\": [{ \"key\": \"usd\", ... }, { \"key\": \"gbp\", ... }]"}},
    "PLG-UPDATE-FIELD-REMOVED": {"rule":"An update may remove a field of a value series; it is reported as a warning.","why":"Stored records keep the field, but new records no longer carry it, so readers lose that figure from then on.","failing":{"where":"plugin.json (published: \"fields\": [\"buy\", \"sell\"])","text":"\"fields\": [\"sell\"]"},"passing":{"where":"plugin.json (published: \"fields\": [\"buy\", \"sell\"])","text":"\"fields\": [\"buy\", \"sell\"]"}},
    "PLG-UPDATE-SOURCE-HOST-ADDED": {"rule":"An update may download from a host no earlier source named; it is reported as a warning.","why":"A plug-in draws on one data holder; the reviewer checks that the new host is that holder's own publication.","failing":{"where":"plugin.json (published: www.ecb.europa.eu)","text":"{ \"name\": \"mirror\", \"url\": \"https://rates.example.net/eurofxref.csv\" }"},"passing":{"where":"plugin.json (published: www.ecb.europa.eu)","text":"{ \"name\": \"history\", \"url\": \"https://www.ecb.europa.eu/stats/eurofxref/eurofxref-hist.zip\" }"}},
    "PLG-README-TEMPLATE": {"rule":"README.md no longer starts with the template's marker line that `init` wrote.","why":"The README tells reviewers and readers what the plug-in does, from which sources and under which terms; the template says none of that.","failing":{"where":"README.md","text":"<!-- almanac-plugin: template README; replace it with your own words and delete this line -->\n# ECB Rates\n\nAn Almanac calendar plug-in: ..."},"passing":{"where":"README.md","text":"# ECB reference rates\n\nThe euro reference rates the European Central Bank publishes each working day\naround 16:00 CET, one row a day. Source: eurofxref-daily.xml; ECB copyright, reuse\npermitted with the source acknowledged."}},
    "PLG-CONTEXT-INVALID": {"rule":"The run context the service writes to the fetcher follows the Run context table: `contract` 1, `plugin` the id, `now` a UTC instant, `today`, `backfill`, `backfillFrom`, `sources` and every declared series' `{last, count}`. This is the service's side of the contract.","why":"A fetcher must be able to trust its context; a context that breaks the table stops the run before the fetcher sees it.","failing":{"where":"run context (stdin)","text":"{ \"contract\": 1, \"plugin\": \"ecb-rates\", \"now\": \"2026-06-10T17:00:00+02:00\", ... }"},"passing":{"where":"run context (stdin)","text":"{ \"contract\": 1, \"plugin\": \"ecb-rates\", \"now\": \"2026-06-10T15:00:00Z\", ... }"}},
    "PLG-RUN-NOT-DETERMINISTIC": {"rule":"The same files and context give the same output bytes: no timestamps, random numbers, system clock, environment or unordered iteration in what is printed.","why":"The service runs the fixtures twice and compares; output that changes by itself would make every run look like a revision and no check could be trusted.","failing":{"where":"fetch.mjs","text":"out.push(JSON.stringify({ kind: \"event\", series: \"meetings\", id: `m-${Date.now()}`, date, state }));"},"passing":{"where":"fetch.mjs","text":"out.push(JSON.stringify({ kind: \"event\", series: \"meetings\", id: `m-${date}`, date, state }));"}},
    "REQUEST-MALFORMED": {"rule":"A request body parses as JSON and is sent with `Content-Type: application/json` (routes that take a file say so).","why":"A body that does not parse cannot be checked field by field; the answer says so at once.","failing":{"where":"request","text":"POST /api/v1/auth/signup\nContent-Type: application/json\n\n{email: \"ada@example.org\"}"},"passing":{"where":"request","text":"POST /api/v1/auth/signup\nContent-Type: application/json\n\n{\"email\": \"ada@example.org\", \"password\": \"correct horse battery staple\"}"}},
    "REQUEST-INVALID": {"rule":"Every field a route takes is present and valid as its OpenAPI description says (`/api/v1/openapi.json`); the answer's `findings` name each wrong field.","why":"The service acts only on a request it fully understands; the findings say what to correct without echoing what was sent.","failing":{"where":"request","text":"POST /api/v1/auth/signin\n\n{\"email\": [\"ada@example.org\"]}"},"passing":{"where":"request","text":"POST /api/v1/auth/signin\n\n{\"email\": \"ada@example.org\", \"password\": \"correct horse battery staple\"}"}},
    "REQUEST-TOO-LARGE": {"rule":"A request body is at most 64 KiB, unless a route says otherwise (a packed plug-in may be 8 MiB).","why":"Bodies are refused before they are read whole, so a large one cannot tie up the service.","failing":{"where":"request","text":"POST /api/v1/auth/signup with a 70 KiB body"},"passing":{"where":"request","text":"POST /api/v1/auth/signup with the two fields it takes"}},
    "AUTH-REQUIRED": {"rule":"The route needs a signed-in account: the session cookie of the web pages, or `Authorization: Bearer <token>` with a valid, unrevoked token.","why":"Who asks decides what may be seen and done; without a person behind the request there is nothing to decide on.","failing":{"where":"request","text":"GET /api/v1/auth/me"},"passing":{"where":"request","text":"GET /api/v1/auth/me\nAuthorization: Bearer alm_..."}},
    "AUTH-FAILED": {"rule":"Sign-in needs the account's e-mail address and its password.","why":"The answer is the same for an unknown address and a wrong password, so it never tells anyone who has an account.","failing":{"where":"request","text":"POST /api/v1/auth/signin\n\n{\"email\": \"ada@example.org\", \"password\": \"wrong\"}"},"passing":{"where":"request","text":"POST /api/v1/auth/signin\n\n{\"email\": \"ada@example.org\", \"password\": \"correct horse battery staple\"}"}},
    "EMAIL-UNVERIFIED": {"rule":"Creating an organization and managing its members need a verified e-mail address: open the link in the verification mail first.","why":"Owners and admins act for an organization; the service needs to know their address is really theirs.","failing":{"where":"request (address not verified)","text":"POST /api/v1/organizations\n\n{\"name\": \"Example Bank\"}"},"passing":{"where":"request","text":"GET /api/v1/auth/verify?token=...   (the mailed link)\nPOST /api/v1/organizations\n\n{\"name\": \"Example Bank\"}"}},
    "FORBIDDEN": {"rule":"The account needs the role the action asks for: an owner or admin of the organization, or a service operator or reviewer.","why":"Roles keep each decision with the people responsible for it.","failing":{"where":"request","text":"POST /api/v1/staff/roles   (signed in as an organization member)\n\n{\"email\": \"rev@example.org\", \"role\": \"reviewer\"}"},"passing":{"where":"request","text":"POST /api/v1/staff/roles   (signed in as a service operator)\n\n{\"email\": \"rev@example.org\", \"role\": \"reviewer\"}"}},
    "NOT-FOUND": {"rule":"The address names something that exists and that this account may see. A private plug-in is reported as not existing to anyone not on its list.","why":"One answer for unknown and not visible, so the service never tells who publishes what privately.","failing":{"where":"request","text":"GET /api/v1/reader/plugins/ecb-ratez"},"passing":{"where":"request","text":"GET /api/v1/reader/plugins/ecb-rates"}},
    "METHOD-NOT-ALLOWED": {"rule":"Each address takes the methods the API documents for it (`/api/v1/openapi.json`).","why":"A method an address does not take would otherwise be a guess at what was meant.","failing":{"where":"request","text":"DELETE /api/v1/auth/me"},"passing":{"where":"request","text":"POST /api/v1/auth/signout"}},
    "ACCOUNT-EXISTS": {"rule":"One account per e-mail address.","why":"The address identifies the person for verification, invitations and private reader lists.","failing":{"where":"request (ada@example.org has an account)","text":"POST /api/v1/auth/signup\n\n{\"email\": \"ada@example.org\", \"password\": \"...\"}"},"passing":{"where":"request","text":"POST /api/v1/auth/signin\n\n{\"email\": \"ada@example.org\", \"password\": \"...\"}"}},
    "VERIFICATION-INVALID": {"rule":"A verification link works once, within 24 hours of being mailed.","why":"A link that worked for ever, or more than once, could verify an address for someone who later read the old mail.","failing":{"where":"request","text":"GET /api/v1/auth/verify?token=...   (opened a second time, or two days later)"},"passing":{"where":"request","text":"POST /api/v1/auth/verify/resend   (signed in), then open the new link"}},
    "MEMBER-EXISTS": {"rule":"A person is added to an organization once; a member's role is changed, not added again.","why":"One membership per person keeps their role unambiguous.","failing":{"where":"request (ada is a member)","text":"POST /api/v1/organizations/7/members\n\n{\"email\": \"ada@example.org\", \"role\": \"admin\"}"},"passing":{"where":"request (ada is member 12)","text":"PATCH /api/v1/organizations/7/members/12\n\n{\"role\": \"admin\"}"}},
    "LAST-OWNER": {"rule":"An organization always keeps at least one owner.","why":"Without an owner nobody could manage its members, agents or plug-ins.","failing":{"where":"request (12 is the only owner)","text":"PATCH /api/v1/organizations/7/members/12\n\n{\"role\": \"member\"}"},"passing":{"where":"request","text":"PATCH /api/v1/organizations/7/members/15\n\n{\"role\": \"owner\"}\nthen\nPATCH /api/v1/organizations/7/members/12\n\n{\"role\": \"member\"}"}},
    "RATE-LIMITED": {"rule":"Some requests are limited per address or per day (for example 5 invitation requests a day per address); the message names the limit and how long to wait, and the Retry-After header gives the wait in seconds.","why":"Limits keep one sender from flooding the service and the people it mails.","failing":{"where":"request","text":"a sixth POST /api/developers/invitations from one address today"},"passing":{"where":"request","text":"the same request tomorrow"}},
    "SIGN-IN-LOCKED": {"rule":"At most 10 failed sign-ins for one e-mail address in any 15 minutes. Past that every sign-in for the address is refused, the right password too, until the oldest of those failures is 15 minutes old; the message and the Retry-After header say how long. It never says which part of the credentials was wrong, and an address with no account is locked the same way.","why":"Guessing a password online needs many tries; ten in a quarter of an hour is more than a person who mistypes makes and far too few for a guesser. Refusing the right password as well keeps the answer from telling a guesser when a guess was right.","failing":{"where":"request (10 wrong passwords for ada@example.org in the last 5 minutes)","text":"POST /api/v1/auth/signin\n\n{\"email\": \"ada@example.org\", \"password\": \"...\"}\n\n429, Retry-After: 600"},"passing":{"where":"request (10 minutes later)","text":"POST /api/v1/auth/signin\n\n{\"email\": \"ada@example.org\", \"password\": \"the right one\"}\n\n200"}},
    "SIGN-IN-ADDRESS-LIMITED": {"rule":"At most 30 failed sign-ins from one network address (an IPv6 client by its /64) in any 15 minutes, whatever e-mail addresses they name; a successful sign-in in between takes no failure away. Past that every sign-in from the address is refused until the oldest of those failures is 15 minutes old; the message and the Retry-After header say how long.","why":"One guess at each of many accounts stays under any limit per account; a limit per address stops it, while the people of an office or school behind one address stay well under it.","failing":{"where":"request (30 failed sign-ins from 203.0.113.9 in the last 15 minutes, for 30 accounts)","text":"POST /api/v1/auth/signin from 203.0.113.9\n\n429, Retry-After: 900"},"passing":{"where":"request (15 minutes later)","text":"POST /api/v1/auth/signin from 203.0.113.9\n\n200 or 401"}},
    "DEVICE-CODE-LIMITED": {"rule":"At most 10 agent login codes (POST /api/v1/device/code) from one network address in any hour. Past that the request is refused with this problem (429, not an OAuth error) until the oldest of those codes was asked for an hour ago; the message and the Retry-After header say how long.","why":"A login needs one code, valid 10 minutes, and running login again within them waits for the same code. A limit keeps one address from filling the service with codes an approver could mistype into.","failing":{"where":"shell (login run 10 times this hour from one machine, each after its code expired)","text":"node almanac-plugin.mjs login\n\nalmanac-plugin: DEVICE-CODE-LIMITED: login: too many login codes asked for from your network address (at most 10 an hour); try again in 40 minutes"},"passing":{"where":"shell","text":"node almanac-plugin.mjs login\n\nthen approve the code in the portal within its 10 minutes"}},
    "DOMAIN-CHECK-LIMITED": {"rule":"Check now runs at most 10 times an hour for one organization, whoever of its owners and admins presses it. Past that it is refused, with no look-up made, until the oldest of those checks is an hour old; the message and the Retry-After header say how long. The service's own periodic re-checks do not count.","why":"Each check asks DNS and fetches a web address the organization chose, from the service's own address; the limit keeps the service from being made to send requests at someone else's server.","failing":{"where":"request (Check now pressed 10 times in the last 20 minutes)","text":"POST /api/v1/portal/organizations/7/domain/check\n\n429, Retry-After: 2400"},"passing":{"where":"request","text":"publish the TXT record, wait a few minutes for it to spread, then one POST /api/v1/portal/organizations/7/domain/check"}},
    "INTERNAL-ERROR": {"rule":"The service answers every well-formed request; this code means it failed to, through no fault of the request.","why":"The failure is logged for the operator; the answer carries no detail of the service's insides.","failing":{"where":"request","text":"GET /api/v1/reader/days?from=2026-06-01&to=2026-06-07 while the database is down"},"passing":{"where":"request","text":"the same request once GET /health answers {\"status\": \"ok\", \"database\": \"ok\"}"}},
    "READER-TOO-MANY-DAYS": {"rule":"A reader asks for at most 62 days at once, `from` and `to` both included.","why":"Days are drawn on request for every shown plug-in; a bounded range keeps each answer quick.","failing":{"where":"request","text":"GET /api/v1/reader/days?from=2026-01-01&to=2026-03-31"},"passing":{"where":"request","text":"GET /api/v1/reader/days?from=2026-01-01&to=2026-03-03"}},
    "READER-LIST-TOO-LONG": {"rule":"A private plug-in's reader list holds at most 500 people and 100 organizations.","why":"Large audiences are organizations: list the organization, and its active members read the plug-in.","failing":{"where":"request","text":"PUT /api/v1/host/plugins/bank-rates/readers\n\n{\"emails\": [\"a1@example.org\", ..., \"a600@example.org\"]}"},"passing":{"where":"request","text":"PUT /api/v1/host/plugins/bank-rates/readers\n\n{\"emails\": [\"auditor@example.net\"], \"organizations\": [7]}"}},
    "AUDIENCE-NOT-PRIVATE": {"rule":"Reader lists and organization defaults apply to private plug-ins only.","why":"Anyone signed in reads a public plug-in; a list on it would suggest a restriction that does not exist.","failing":{"where":"request (ecb-rates is public)","text":"PUT /api/v1/host/plugins/ecb-rates/readers\n\n{\"emails\": [\"ada@example.org\"]}"},"passing":{"where":"request (bank-rates is private)","text":"PUT /api/v1/host/plugins/bank-rates/readers\n\n{\"emails\": [\"ada@example.org\"]}"}},
    "AUDIENCE-ORGANIZATION-NOT-LISTED": {"rule":"An organization turns a private plug-in on for its members only when the organization is on the plug-in's reader list.","why":"The reader list decides who may read a private plug-in; an organization's default cannot widen it.","failing":{"where":"request (organization 7 is not listed)","text":"PUT /api/v1/reader/organizations/7/plugins/bank-rates/shown\n\n{\"shown\": true}"},"passing":{"where":"requests","text":"an operator: PUT /api/v1/host/plugins/bank-rates/readers {\"organizations\": [7]}\nthen the owner: PUT /api/v1/reader/organizations/7/plugins/bank-rates/shown {\"shown\": true}"}},
    "DIGEST-CHANGED": {"rule":"Approval names the digest of the current version, as its page shows it; a digest of an earlier version means the files changed since the page was shown.","why":"A person approves exactly the code they looked at; if it changed, they look again.","failing":{"where":"request (the page was read before 1.3.0 arrived)","text":"POST /api/v1/host/plugins/ecb-rates/approve\n\n{\"digest\": \"sha256:<digest of 1.2.0>\"}"},"passing":{"where":"request","text":"GET /api/v1/host/plugins/ecb-rates   (read the current digest)\nPOST /api/v1/host/plugins/ecb-rates/approve\n\n{\"digest\": \"sha256:<digest of 1.3.0>\"}"}},
    "STATE-CONFLICT": {"rule":"Each move at the host is allowed from some states only (the approved plug-in table): resume a Paused plug-in, pause an Approved or Failing one, approve a Pending or Removed one, and so on.","why":"The state machine is what readers and runs rely on; a move from the wrong state would leave it inconsistent.","failing":{"where":"request (ecb-rates is Approved)","text":"POST /api/v1/host/plugins/ecb-rates/resume"},"passing":{"where":"request (ecb-rates is Approved)","text":"POST /api/v1/host/plugins/ecb-rates/pause\nlater: POST /api/v1/host/plugins/ecb-rates/resume"}},
    "NOTHING-HELD": {"rule":"Accept removals or Keep them answers a plug-in showing Held: a run that would have withdrawn too many records at once.","why":"The answer applies to the withdrawals that were held back; with none waiting there is nothing to answer.","failing":{"where":"request (ecb-rates is not Held)","text":"POST /api/v1/host/plugins/ecb-rates/held\n\n{\"decision\": \"accept-removals\"}"},"passing":{"where":"request (ecb-rates shows Held)","text":"POST /api/v1/host/plugins/ecb-rates/held\n\n{\"decision\": \"keep-them\"}"}},
    "PURGE-NOT-OFFERED": {"rule":"A purge is offered only while the retain answer a person recorded at the host is `no`.","why":"Records are deleted for good only when the holder's terms do not allow keeping them, and a person read those terms.","failing":{"where":"request (retain answer unknown)","text":"POST /api/v1/host/plugins/ecb-rates/purge"},"passing":{"where":"requests","text":"POST /api/v1/host/plugins/ecb-rates/retention {\"answer\": \"no\", \"terms_read\": true}\nGET /api/v1/host/plugins/ecb-rates/purge   (the dry run)\nPOST /api/v1/host/plugins/ecb-rates/purge {\"typed_id\": \"ecb-rates\"}"}},
    "TAKEDOWN-DIGEST": {"rule":"A taken-down plug-in is restored only with the code that was taken down.","why":"A takedown judged one code; changed code has not been judged and stays down.","failing":{"where":"request (files changed since the takedown)","text":"POST /api/v1/host/plugins/ecb-rates/takedown/restore"},"passing":{"where":"request","text":"POST /api/v1/host/plugins/ecb-rates/takedown/restore   (with the code taken down)"}},
    "DIGEST-NOT-CURRENT": {"rule":"The digest given for approval is the current version's: one this plug-in's code really had.","why":"A digest that was never the plug-in's is a typo or a page of another plug-in; nothing is approved on it.","failing":{"where":"request","text":"POST /api/v1/host/plugins/ecb-rates/approve\n\n{\"digest\": \"sha256:0000000000000000000000000000000000000000000000000000000000000000\"}"},"passing":{"where":"request","text":"POST /api/v1/host/plugins/ecb-rates/approve\n\n{\"digest\": \"sha256:<the digest the page shows>\"}"}},
    "ROLLBACK-NOT-APPROVED": {"rule":"A roll back goes to a kept version a person approved before.","why":"Rolling back approves again without a new review; that is safe only for code that was reviewed and approved once.","failing":{"where":"request (1.3.0 was never approved)","text":"POST /api/v1/host/plugins/ecb-rates/rollback\n\n{\"version\": \"1.3.0\", \"reason\": \"...\"}"},"passing":{"where":"request (1.2.0 was approved)","text":"POST /api/v1/host/plugins/ecb-rates/rollback\n\n{\"version\": \"1.2.0\", \"reason\": \"1.3.0 reads the new file layout wrongly\"}"}},
    "REQUEST-MEDIA-TYPE": {"rule":"A route that takes a file takes it as the raw body with its own media type: the packed plug-in as `Content-Type: application/zip`.","why":"The archive is checked byte for byte as pack wrote it; a form upload or a JSON wrapper is not that archive.","failing":{"where":"request","text":"curl -F file=@ecb-rates-1.0.0.zip https://almanac.example/api/v1/host/plugins/pack"},"passing":{"where":"request","text":"curl --data-binary @ecb-rates-1.0.0.zip -H 'Content-Type: application/zip' https://almanac.example/api/v1/host/plugins/pack"}},
    "DOMAIN-IP-ADDRESS": {"rule":"An organization's domain is a domain name; an IP address is refused.","why":"An address changes hands with the hosting, and proves nothing about who publishes.","failing":{"where":"request","text":"PUT /api/v1/portal/organizations/7/domain\n\n{\"domain\": \"93.184.216.34\"}"},"passing":{"where":"request","text":"PUT /api/v1/portal/organizations/7/domain\n\n{\"domain\": \"examplebank.org\"}"}},
    "DOMAIN-NO-DOT": {"rule":"An organization's domain has at least two labels, such as `example.org`; a single name such as `localhost` or `org` is refused.","why":"A name with no dot is a top-level domain or a local name, never one publisher's domain.","failing":{"where":"request","text":"PUT /api/v1/portal/organizations/7/domain\n\n{\"domain\": \"examplebank\"}"},"passing":{"where":"request","text":"PUT /api/v1/portal/organizations/7/domain\n\n{\"domain\": \"examplebank.org\"}"}},
    "DOMAIN-INVALID": {"rule":"An organization's domain is a host name: labels of 1 to 63 letters, digits and hyphens (not at either end), at most 253 characters, the last label not a number.","why":"The TXT record and the well-known file are looked up under the name; a name DNS cannot hold can never be proved.","failing":{"where":"request","text":"PUT /api/v1/portal/organizations/7/domain\n\n{\"domain\": \"example_bank.org\"}"},"passing":{"where":"request","text":"PUT /api/v1/portal/organizations/7/domain\n\n{\"domain\": \"example-bank.org\"}"}},
    "DOMAIN-PUBLIC-SUFFIX": {"rule":"A public suffix of the Public Suffix List (ICANN and private sections), such as `co.uk`, `github.io` or `herokuapp.com`, is refused as a domain.","why":"Anyone may register names under a public suffix; whoever could prove the suffix would stand for every publisher below it.","failing":{"where":"request","text":"PUT /api/v1/portal/organizations/7/domain\n\n{\"domain\": \"co.uk\"}"},"passing":{"where":"request","text":"PUT /api/v1/portal/organizations/7/domain\n\n{\"domain\": \"examplebank.co.uk\"}"}},
    "DOMAIN-SHARED-HOSTING": {"rule":"A name under a shared hosting domain of the Public Suffix List's private section, such as `someone.github.io` or `app.herokuapp.com`, is refused as a domain.","why":"A tenant of a shared host can publish the proof file or record under its name, but the name is the host's, and one tenant could pass for another.","failing":{"where":"request","text":"PUT /api/v1/portal/organizations/7/domain\n\n{\"domain\": \"examplebank.github.io\"}"},"passing":{"where":"request","text":"PUT /api/v1/portal/organizations/7/domain\n\n{\"domain\": \"examplebank.org\"}"}},
    "DOMAIN-TAKEN": {"rule":"A domain proves one publisher: a domain another organization has verified (its grace included) is refused, when named and when proved.","why":"Readers see the verified domain as the publisher's identity; two organizations behind one domain would make it mean nothing.","failing":{"where":"request (examplebank.org is verified by another organization)","text":"PUT /api/v1/portal/organizations/7/domain\n\n{\"domain\": \"examplebank.org\"}"},"passing":{"where":"request","text":"PUT /api/v1/portal/organizations/7/domain\n\n{\"domain\": \"rates.examplebank.org\"}"}},
    "DOMAIN-NOT-VERIFIED": {"rule":"Submitting, and reserving an id before the first upload, need a verified domain: a TXT record `_almanac-verify.<domain>` or a file `https://<domain>/.well-known/almanac-verify.txt` holding `almanac-verify=<token>`.","why":"The verified domain is the publisher's identity readers and reviewers rely on.","failing":{"where":"DNS (no record yet)","text":"_almanac-verify.examplebank.org. TXT (none)"},"passing":{"where":"DNS","text":"_almanac-verify.examplebank.org. 3600 IN TXT \"almanac-verify=<token the portal shows>\""}},
    "DOMAIN-LAPSED": {"rule":"A verified domain is checked again every 30 days; when the proof is gone it has 14 days of grace, then it lapses and must be verified again before the next submission.","why":"A domain that changed hands, or whose proof was removed, no longer shows who publishes; its published plug-ins keep running without the verified mark.","failing":{"where":"DNS (the record was removed)","text":"_almanac-verify.examplebank.org. TXT (none)"},"passing":{"where":"DNS","text":"_almanac-verify.examplebank.org. 3600 IN TXT \"almanac-verify=<token the portal shows>\""}},
    "DOMAIN-NOT-INVITED": {"rule":"Submitting needs an invitation for the organization's verified domain; the invitation belongs to the domain, whoever asked for it.","why":"Publishing is by invitation while the store grows; uninvited organizations may still upload and run checks.","failing":{"where":"request (nobody asked for examplebank.org)","text":"GET /api/v1/portal/organizations/7/gate"},"passing":{"where":"request","text":"POST /api/developers/invitations\n\n{\"email\": \"ada@examplebank.org\", \"organization\": \"Example Bank\", \"domain\": \"examplebank.org\", \"note\": \"Exchange rates\"}"}},
    "AGREEMENT-NOT-ACCEPTED": {"rule":"Submitting needs the organization's acceptance of the Developer Agreement version in effect; a new version is accepted again before the next submission.","why":"Each submission is made under an agreement the publisher accepted; published versions keep running under the version they were accepted under.","failing":{"where":"request (version 2 is in effect, version 1 was accepted)","text":"GET /api/v1/portal/organizations/7/gate"},"passing":{"where":"request","text":"POST /api/v1/portal/organizations/7/agreement\n\n{\"version\": 2}"}},
    "AGREEMENT-NOT-IN-EFFECT": {"rule":"Only the Developer Agreement version in effect today is accepted: not an older one, not one whose effective date has not come.","why":"The acceptance records what the publisher agreed to; accepting a version that does not apply would record nothing useful.","failing":{"where":"request (version 2 is in effect)","text":"POST /api/v1/portal/organizations/7/agreement\n\n{\"version\": 1}"},"passing":{"where":"request (version 2 is in effect)","text":"POST /api/v1/portal/organizations/7/agreement\n\n{\"version\": 2}"}},
    "AGREEMENT-EFFECTIVE-DATE": {"rule":"A new Developer Agreement version takes effect today or later, and after the newest version posted before it.","why":"Publishers accept the version in effect; a date in the past would change what was in effect when they accepted.","failing":{"where":"request (version 1 takes effect on 2026-10-01)","text":"POST /api/v1/staff/agreement/versions\n\n{\"effective_on\": \"2026-09-01\", \"changes\": \"...\", \"text\": \"...\"}"},"passing":{"where":"request","text":"POST /api/v1/staff/agreement/versions\n\n{\"effective_on\": \"2027-01-01\", \"changes\": \"Reports are answered within 30 days.\", \"text\": \"...\"}"}},
    "INVITATION-NOT-OPEN": {"rule":"Staff invite or decline an open invitation request, once.","why":"An invitation mails the requester; answering a request twice would mail them again or undo an answer given.","failing":{"where":"request (request 12 was invited)","text":"POST /api/v1/staff/invitations/12/decline"},"passing":{"where":"request (request 13 is open)","text":"POST /api/v1/staff/invitations/13/invite"}},
    "PLG-QUOTA-CHECKING": {"rule":"At most 3 versions of an organization are being checked at once (an upload or a re-run starts checks).","why":"The locked-room checks take a share of the service's machines; the quota keeps them for every publisher.","failing":{"where":"organization","text":"a 4th upload while the checks of 3 earlier uploads are still queued or running"},"passing":{"where":"organization","text":"upload again once the checks of an earlier upload are passed or failed"}},
    "PLG-REVIEW-INVALID": {"rule":"review.json, when present, is one JSON object with only the keys examples, negatives, sources, releaseNotes and notes, each of its shape: at most five examples of date, series, expect and note; negatives of kind no-record (date, series), in-force (date, from, series) or source-fails (case), each with a why; sources with source, holder, terms, basis and evidence.","why":"The reviewer reads the examples, negatives and sources; the checks run the examples against the fixtures. A file of another shape cannot be read by either.","failing":{"where":"review.json","text":"{\"examples\": [{\"day\": \"2026-01-02\", \"series\": \"usd\"}]}"},"passing":{"where":"review.json","text":"{\"examples\": [{\"date\": \"2026-01-02\", \"series\": \"usd\", \"expect\": {\"rate\": 1.0345}}]}"}},
    "PLG-CHECK-DEADLINE": {"rule":"Every check of an uploaded version ends passed or failed; a locked-room check not final 15 minutes after it was queued fails with this code.","why":"A version is never left being checked: the publisher sees a final answer and the checks quota is freed.","failing":{"where":"checks","text":"the fixtures check still running 15 minutes after the upload"},"passing":{"where":"checks","text":"the fixtures check passed a minute after the upload"}},
    "CHECK-NETWORK-UNAVAILABLE": {"rule":"When every host a sources or links check tried failed without an answer from the network, and the operator's probe (ALMANAC_NETWORK_PROBE) failed too or, with none set, the name lookups got no answer at all or the machine had no route, the check could not run: it is neither passed nor failed, and it runs again by itself when the network is back.","why":"A service cut off from the network cannot tell a publisher's URL is broken; blaming the URLs would send publishers to repair what works. The operators are told instead.","failing":{"where":"checks","text":"sources: could not run: could not download rates: could not resolve www.cnb.cz: [Errno -3] Temporary failure in name resolution (the probe failed too)"},"passing":{"where":"checks","text":"sources: passed, the same check run again by itself once the service reached the network"}},
    "PLG-SOURCE-DOWNLOAD": {"rule":"The checks download each declared source once, as a scheduled run would (https, public addresses, maxBytes, 60 seconds, 5 redirects).","why":"A plug-in whose real sources cannot be downloaded would fail every scheduled run once published.","failing":{"where":"plugin.json","text":"\"url\": \"https://data.example.org/rates.json\" answering 404"},"passing":{"where":"plugin.json","text":"\"url\": \"https://data.example.org/rates.json\" answering 200 with the file"}},
    "PLG-REVIEW-EXAMPLE": {"rule":"Each example day of review.json is in what the fixtures produce: for a value the figures by field, for an event its state and title, for an item its title, on that day in that series.","why":"The reviewer compares the examples with the holder's publication; an example the fetcher does not produce shows nothing true.","failing":{"where":"review.json","text":"{\"date\": \"2025-02-25\", \"series\": \"usd\", \"expect\": {\"rate\": 1.05}} when the fixtures print 1.0497"},"passing":{"where":"review.json","text":"{\"date\": \"2025-02-25\", \"series\": \"usd\", \"expect\": {\"rate\": 1.0497}}"}},
    "PLG-LISTING-LINK-DEAD": {"rule":"Each link of the listing (privacy, support, each source's page and licence) answers over https from a public address within 10 seconds.","why":"Readers and reviewers follow these links; a dead one leaves them without the publisher's policy, support or the source.","failing":{"where":"listing.json","text":"\"privacy\": \"https://example.org/privacy\" answering 404"},"passing":{"where":"listing.json","text":"\"privacy\": \"https://example.org/privacy\" answering 200"}},
    "SUBMIT-REFUSED": {"rule":"A submit is refused, with every reason at once in its findings, until all its conditions hold: every check passed, the review information complete, the five attestations made, the agreement in effect accepted, the domain verified and invited, fewer than 5 versions in review.","why":"A reviewer's time goes only to versions the publisher can stand behind; naming every reason at once saves the publisher a round trip per condition.","failing":{"where":"upload 12 (checks still queued, no attestations)","text":"POST /api/v1/portal/organizations/7/uploads/12/submit\n\n409 SUBMIT-REFUSED, findings: SUBMIT-CHECKS-NOT-PASSED, SUBMIT-ATTESTATION-MISSING (5)"},"passing":{"where":"upload 12 (every condition met)","text":"POST /api/v1/portal/organizations/7/uploads/12/submit\n\n200, upload 12 in_review"}},
    "SUBMIT-CHECKS-NOT-PASSED": {"rule":"Only a version whose every check (static and locked-room) passed is submitted.","why":"The reviewer reviews code the service has already seen run as its fixtures say; a failing or unfinished check would leave that unproved.","failing":{"where":"upload","text":"checks: fixtures failed, links queued"},"passing":{"where":"upload","text":"checks: every one passed"}},
    "SUBMIT-ATTESTATION-MISSING": {"rule":"Five attestations are made in the organization's name with each version: it may publish the data; each source is its holder's own publication; no record names a private person; the fetcher never tries the network; its words inform without selling or persuading.","why":"The publisher answers for what it publishes; the attestations are kept with who made them and when.","failing":{"where":"request","text":"POST /api/v1/portal/organizations/7/uploads/12/attestations\n\n{\"attestations\": [\"may-publish-the-data\"]}"},"passing":{"where":"request","text":"POST /api/v1/portal/organizations/7/uploads/12/attestations\n\n{\"attestations\": [\"may-publish-the-data\", \"sources-are-holders-own-publication\", \"no-record-names-a-private-person\", \"fetcher-never-tries-the-network\", \"words-inform-without-selling\"]}"}},
    "PLG-REVIEW-INCOMPLETE": {"rule":"Submitting needs complete review information: five example days, at least one case that must fail, an entry per source (holder, terms, basis among open-licence, public-domain, official-publication, permission, evidence) and, for an update, releaseNotes with en.","why":"The reviewer checks the plug-in against what the publisher says it does and under what right it uses each source.","failing":{"where":"review.json (an update)","text":"{\"examples\": [... 3 days ...], \"negatives\": [...], \"sources\": [{\"source\": \"rates\", \"basis\": \"found-online\", ...}], \"releaseNotes\": {\"de\": \"...\"}}"},"passing":{"where":"review.json (an update)","text":"{\"examples\": [... 5 days ...], \"negatives\": [...], \"sources\": [{\"source\": \"rates\", \"basis\": \"open-licence\", ...}], \"releaseNotes\": {\"en\": \"...\"}}"}},
    "PLG-QUOTA-REVIEW": {"rule":"At most 5 versions of an organization are in review at once; a newer upload of a plug-in already in review takes its place and does not count twice.","why":"Reviewers' time is shared by every publisher.","failing":{"where":"organization","text":"a 6th plug-in submitted while 5 versions are in review"},"passing":{"where":"organization","text":"a newer version of one of the 5 plug-ins in review, submitted in its place"}},
    "REVIEW-CONTENT-CHANGED": {"rule":"A decision names the reviewed-content digest the desk showed (every uploaded file, the review information and the attestations); an approval binds exactly that content, and publishing checks it again.","why":"Approval binds exactly the reviewed content: a version that changed after the reviewer read it must be read again, never approved unseen.","failing":{"where":"request","text":"POST /api/v1/review/uploads/12/decision\n\n{\"decision\": \"approve\", \"reason\": \"ok\", \"reviewed\": \"sha256:<digest of an earlier content>\"}"},"passing":{"where":"request","text":"POST /api/v1/review/uploads/12/decision\n\n{\"decision\": \"approve\", \"reason\": \"ok\", \"reviewed\": \"sha256:<the digest the desk shows now>\"}"}},
    "REVIEW-SAME-ORGANIZATION": {"rule":"A reviewer who belongs to the organization that submitted the version does not approve it while another reviewer, outside that organization, can.","why":"Review is a second pair of eyes: the publisher approving its own version would make it none.","failing":{"where":"desk","text":"reviewer ana@example.org, a member of Example Rates, approves example-rates 1.1.0 while reviewer bo@example.net exists"},"passing":{"where":"desk","text":"reviewer bo@example.net, outside Example Rates, approves example-rates 1.1.0"}},
    "STORE-NOT-LISTED": {"rule":"Only a plug-in in the store (published, listed, not shelved, taken down or retired) is newly installed; a plug-in no longer listed stays for the readers who installed it.","why":"Unpublishing stops new readers without taking the plug-in away from those who rely on it.","failing":{"where":"request","text":"POST /api/v1/store/plugins/example-rates/install  (example-rates was unpublished)"},"passing":{"where":"request","text":"POST /api/v1/store/plugins/example-rates/install  (example-rates is listed)"}},
    "LISTING-NOT-RELISTABLE": {"rule":"List again follows Unpublish only: never after a takedown, the service's shelf, or retirement.","why":"The service's shelf and takedown are the service's decisions, and a retired id is gone for good; the publisher's own listing switch must not undo them.","failing":{"where":"request","text":"POST /api/v1/portal/organizations/7/plugins/example-rates/relist  (taken off the shelf by the service)"},"passing":{"where":"request","text":"POST /api/v1/portal/organizations/7/plugins/example-rates/relist  (unpublished by the publisher)"}},
    "TOOL-SERVICE-UNREACHABLE": {"rule":"The publishing commands of the tool speak only to the address given to `login` and follow no redirect. A request that gets no answer there (no connection, a time-out), or an answer that redirects elsewhere, stops the command: nothing is sent to any other address.","why":"The agent's token goes only to the service that issued it. Following a redirect, or trying another address, could hand the token to someone else; a stopped command that says so costs one more try.","failing":{"where":"command line","text":"node almanac-plugin.mjs status 12 --json\n{\"ok\": false, \"error\": {\"kind\": \"unreachable\", \"code\": \"TOOL-SERVICE-UNREACHABLE\", \"message\": \"could not reach https://almanac.example: ECONNREFUSED\", ...}}"},"passing":{"where":"command line","text":"node almanac-plugin.mjs status 12 --json\n{\"ok\": true, \"checks\": \"passed\", ...}"}},
  };
}
// END PAGES

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

/** The catalog page of a code on the service at `base` (DECISIONS section 3). */
export const docsLink = (code, base = baseUrl()) => `${base}/docs/problems/${code}`;

/** The finding as `check --json` prints it: code, severity, message, fix, docs link. */
export function findingJson(p, base = baseUrl()) {
  const entry = CATALOG_BY_CODE.get(p.code);
  const out = { code: p.code, severity: p.severity, message: p.message, fix: entry.fix, docs: docsLink(p.code, base) };
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
// node:crypto and node:zlib load on first use: together they cost a quarter of the tool's own
// start, which a check would otherwise pay before its fetcher runs begin.
const nodeCrypto = () => process.getBuiltinModule("node:crypto");
const nodeZlib = () => process.getBuiltinModule("node:zlib");
const sha256 = (buf) => nodeCrypto().createHash("sha256").update(buf).digest("hex");

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

// Named zones whose date is always the UTC date: known and read without ICU's zone list and
// calendar data, whose first load costs more than the rest of a small plug-in's check.
const UTC_ZONES = new Set(["UTC", "Etc/UTC", "GMT", "Etc/GMT"]);

/** Today in the zone at the instant (a Date). */
export function dateInZone(instant, zone) {
  const year = instant.getUTCFullYear();
  if (UTC_ZONES.has(zone) && year >= 1 && year <= 9999) return instant.toISOString().slice(0, 10);
  const parts = new Intl.DateTimeFormat("en-US", { timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit" }).formatToParts(instant);
  const get = (t) => parts.find((p) => p.type === t).value;
  return `${get("year").padStart(4, "0")}-${get("month")}-${get("day")}`;
}

/**
 * Fixed-offset names of the IANA database that the contract refuses as offsets (shared rule
 * with the server; tests/conformance/manifests/timezone-offset-zones.json): `Etc/GMT+5`,
 * `Etc/GMT-14`, `GMT+0` (any signed GMT offset, with or without `Etc/`) and the legacy
 * fixed-offset zones EST, MST and HST. UTC, Etc/UTC, GMT and every place zone stay named zones.
 */
export function isOffsetZoneName(zone) {
  return /^(Etc\/)?GMT[+-]\d+$/.test(zone) || ["EST", "MST", "HST"].includes(zone);
}

// The canonical zones Intl lists, each its own resolved name. Reading the list costs a few ms;
// the first DateTimeFormat some 30 ms (ICU's calendar data), so a listed zone skips it.
let listedZones = null;

/** A named IANA zone (offsets, fixed-offset names and abbreviation-like names refused). */
export function isNamedZone(zone) {
  if (typeof zone !== "string" || chars(zone) < 1 || chars(zone) > 100) return false;
  if (!/^[A-Za-z][A-Za-z0-9_+\-]*(\/[A-Za-z0-9_+\-]+)*$/.test(zone)) return false;
  if (/^(GMT|UTC)?[+-]\d/.test(zone)) return false;
  if (isOffsetZoneName(zone)) return false;
  if (UTC_ZONES.has(zone)) return true;
  listedZones ??= new Set([...Intl.supportedValuesOf("timeZone"), "UTC"]);
  if (listedZones.has(zone)) return true;
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


// ---------------------------------------------------------------------------------------------
// Manifest rules ("Resources and their fields": Manifest; "Errors": Manifest and listing).
// The same rules, codes and paths as src/almanac/platform/contract/manifest.py and rules.py;
// tests/conformance/manifests/ holds the shared cases.
// ---------------------------------------------------------------------------------------------

export const ID_RE = /^[a-z][a-z0-9-]{1,47}$/;
export const KEY_RE = /^[a-z][a-z0-9_-]{0,47}$/;
const LANG_RE = /^[a-z]{2,3}(-([A-Z]{2}|[0-9]{3}))?$/;
const VERSION_RE = /^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$/;
const LABEL = "[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?";
const HOST_RE = new RegExp(`^${LABEL}(?:\\.${LABEL})+$`);
const IPV4_LIKE = /^(?:.*\.)?(?:[0-9]+|0[xX][0-9a-fA-F]*)\.?$/; // the last label is a number: URL parsers read IPv4
const MAX_BYTES = 20971520;
/** DECISIONS 1: reserved ids (the server's list) and prefixes. */
export const RESERVED_IDS = new Set([
  "store", "publish", "search", "markets",
  "api", "portal", "host", "reader", "docs", "tool", "static", "login", "logout",
  "admin", "health", "plugins", "plugin", "problems", "invitations", "invite",
  "developers", "agents", "agent", "auth", "oauth", "device", "account", "accounts",
  "organizations", "orgs", "settings", "review", "reviews", "reports", "report",
  "assets", "metrics", "status", "signup", "register", "verify", "mail", "outbox",
  "dagster", "openapi", "about", "help", "support", "terms", "privacy", "www",
]);
const RESERVED_PREFIXES = ["almanac", "alm-", "chk-", "test-"];
const TOP_KEYS = ["$schema", "contract", "id", "name", "version", "timezone", "audience", "schedule", "backfill", "sources", "series", "links", "limits", "licence"];
const REQUIRED_TOP = {
  contract: "PLG-MANIFEST-CONTRACT", id: "PLG-MANIFEST-ID", name: "PLG-MANIFEST-NAME", version: "PLG-MANIFEST-VERSION",
  timezone: "PLG-MANIFEST-TIMEZONE", audience: "PLG-MANIFEST-AUDIENCE", schedule: "PLG-MANIFEST-SCHEDULE",
  backfill: "PLG-MANIFEST-BACKFILL", sources: "PLG-MANIFEST-SOURCES", series: "PLG-MANIFEST-SERIES", licence: "PLG-MANIFEST-LICENCE",
};
const SOURCE_KEYS = ["name", "url", "maxBytes"];
const SERIES_KEYS = ["key", "kind", "cadence", "dates", "name", "unit", "fields", "fieldNames", "change", "snapshot"];
const CADENCES = ["business-day", "daily", "weekly", "monthly", "quarterly", "irregular"];
const KINDS = ["value", "event", "item"];
const DATINGS = ["observation", "publication"];
const AUDIENCES = ["public", "private", "local"];
const RETAINS = ["yes", "no", "unknown"];

/** Whether an id is reserved (DECISIONS 1). */
export function isReservedId(id) {
  return RESERVED_IDS.has(id) || RESERVED_PREFIXES.some((p) => id.startsWith(p));
}

const show = (v) => {
  let t;
  try {
    t = JSON.stringify(v);
  } catch {
    t = String(v);
  }
  if (t === undefined) t = String(v);
  return t.length <= 60 ? t : t.slice(0, 57) + "...";
};

/** Why a host is not a lowercase host name of at most 253 characters (no IP), or null. */
export function hostProblem(host) {
  if (typeof host !== "string" || !host) return "must be a host name";
  if (chars(host) > 253) return `is ${chars(host)} characters long; a host name has at most 253`;
  if (host.startsWith("[") || host.includes(":") || IPV4_LIKE.test(host)) return `${host} is an IP address; use a host name`;
  if (host !== host.toLowerCase()) return `${host} must be written in lowercase`;
  if (!HOST_RE.test(host)) return `${host} is not a host name (lowercase labels of letters, digits and hyphens)`;
  return null;
}

/** [host, rest] of an https URL, or the reason it is not a plain https URL with a host. */
function splitHttpsUrl(url) {
  if (!url.startsWith("https://")) return "must start with https://";
  if (/[\x00-\x20\x7f\\]/.test(url)) return "must not contain spaces, control characters or backslashes";
  const m = /^https:\/\/([^/?#]*)([/?#][\s\S]*)?$/.exec(url);
  if (!m) return "is not an https URL";
  const authority = m[1];
  const rest = m[2] || "";
  if (authority.includes("@")) return "must not carry a user name or password";
  let host = authority;
  if (!authority.startsWith("[") && authority.includes(":")) {
    const i = authority.indexOf(":");
    host = authority.slice(0, i);
    const port = authority.slice(i + 1);
    if (!/^[0-9]{1,5}$/.test(port) || !(Number(port) > 0 && Number(port) < 65536)) return `has a bad port ${port}`;
  } else if (authority.startsWith("[") && authority.includes("]:")) host = authority.slice(0, authority.indexOf("]") + 1);
  if (!host) return "has no host";
  return [host, rest];
}

/** Why a source URL breaks the Source url rule, or null. */
export function sourceUrlProblem(url) {
  if (typeof url !== "string") return "must be a string";
  if (chars(url) > 500) return `is ${chars(url)} characters long; at most 500`;
  const parts = splitHttpsUrl(url);
  if (typeof parts === "string") return parts;
  const [host, rest] = parts;
  const hp = hostProblem(host);
  if (hp) return `host ${hp}`;
  for (const m of rest.matchAll(/\{([^{}]*)\}/g)) if (!["today", "year", "month"].includes(m[1])) return `placeholder {${m[1]}} is not one of {today}, {year}, {month}`;
  const left = rest.replace(/\{([^{}]*)\}/g, "");
  if (left.includes("{") || left.includes("}")) return "has an unmatched { or }";
  return null;
}

/** The host of an https URL, or null. */
function urlHost(url) {
  if (typeof url !== "string") return null;
  const parts = splitHttpsUrl(url);
  return typeof parts === "string" ? null : parts[0];
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
      else {
        a = num(m[1]);
        b = m[2] ? hi : a;
      }
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
  for (let m = 1; m <= 12; m++) {
    if (c.months && !c.months.has(m)) continue;
    if (!c.dom || c.dow) return true;
    for (const d of c.dom) if (d <= daysInMonth(2028, m)) return true;
  }
  return false;
}
/** Most runs on any day: minutes x hours (a wall time repeated by a clock change runs once). */
export function maxRunsPerDay(cron) {
  return cron.minutes.size * cron.hours.size;
}

class ManifestCheck {
  constructor() {
    this.problems = [];
  }
  add(code, p, detail) {
    this.problems.push(problem(code, p ? `${p}: ${detail}` : detail, { path: p }));
  }
  object(v, p, code) {
    if (isObject(v)) return true;
    this.add(code, p, `must be an object, not ${show(v)}`);
    return false;
  }
  unknownKeys(obj, known, prefix) {
    for (const k of Object.keys(obj)) if (!known.includes(k)) this.add("PLG-MANIFEST-UNKNOWN-KEY", prefix ? `${prefix}.${k}` : k, `${show(k)} is not a key contract 1 knows here`);
  }
  required(obj, keys, prefix) {
    for (const [k, code] of Object.entries(keys)) if (!has(obj, k)) this.add(code, prefix ? `${prefix}.${k}` : k, "is required");
  }
  text(v, p, code, low, high) {
    if (typeof v !== "string") {
      this.add(code, p, `must be a string, not ${show(v)}`);
      return false;
    }
    if (chars(v) < low || chars(v) > high) {
      this.add(code, p, `must be ${low} to ${high} characters, not ${chars(v)}`);
      return false;
    }
    return true;
  }
  names(v, p) {
    const code = "PLG-MANIFEST-NAME";
    if (!this.object(v, p, code)) return;
    if (!Object.keys(v).length) this.add(code, p, "must have at least one language entry");
    for (const [lang, text] of Object.entries(v)) {
      const entry = `${p}.${lang}`;
      if (!LANG_RE.test(lang)) this.add(code, entry, `${show(lang)} is not a language code (two or three lowercase letters, optionally a region such as pt-BR)`);
      this.text(text, entry, code, 1, 80);
    }
  }
  key(v, p, code) {
    if (typeof v === "string" && KEY_RE.test(v)) return true;
    this.add(code, p, `${show(v)} is not a key (1 to 48 lowercase letters, digits, hyphens and underscores, starting with a letter)`);
    return false;
  }
  window(v, p, code) {
    if (!(typeof v === "string" && WINDOW_RE.test(v))) this.add(code, p, `${show(v)} is not a window (1 to 4 digits followed by d or y)`);
  }
  integer(v, p, code, low, high) {
    if (!isInt(v)) this.add(code, p, `must be an integer, not ${show(v)}`);
    else if (v < low || v > high) this.add(code, p, `must be ${low} to ${high}, not ${show(v)}`);
  }
  choice(v, p, code, allowed) {
    if (typeof v !== "string" || !allowed.includes(v)) this.add(code, p, `${show(v)} is not one of ${allowed.join(", ")}`);
  }
}

/**
 * Check a manifest object against every contract 1 rule ("Manifest (plugin.json)"). `folder`
 * is the folder name when known (PLG-FOLDER-ID). Problems carry `path` in the JSON-path form
 * `sources[0].url`, `series[1].fieldNames.rate.en`; whole-document problems have no path.
 */
export function validateManifest(doc, { folder = null } = {}) {
  if (!isObject(doc)) return [problem("PLG-MANIFEST-NOT-OBJECT", `plugin.json must be one JSON object, not ${show(doc)}`)];
  const c = new ManifestCheck();
  c.unknownKeys(doc, TOP_KEYS, "");
  c.required(doc, REQUIRED_TOP, "");
  if (has(doc, "$schema")) c.text(doc.$schema, "$schema", "PLG-INVALID", 0, 500);
  if (has(doc, "contract") && doc.contract !== 1) c.add("PLG-MANIFEST-CONTRACT", "contract", `must be 1, not ${show(doc.contract)}`);
  if (has(doc, "id")) {
    const v = doc.id;
    if (!(typeof v === "string" && ID_RE.test(v))) c.add("PLG-MANIFEST-ID", "id", `${show(v)} is not an id (2 to 48 lowercase letters, digits and hyphens, starting with a letter)`);
    if (typeof v === "string" && isReservedId(v)) c.add("PLG-ID-RESERVED", "id", `${show(v)} is reserved for Almanac's own addresses`);
    if (folder !== null && v !== folder) c.add("PLG-FOLDER-ID", "id", `${show(v)} differs from the folder name ${show(folder)}`);
  }
  if (has(doc, "name")) c.names(doc.name, "name");
  if (has(doc, "version") && !(typeof doc.version === "string" && VERSION_RE.test(doc.version))) c.add("PLG-MANIFEST-VERSION", "version", `${show(doc.version)} is not major.minor.patch (three non-negative integers without leading zeros)`);
  if (has(doc, "timezone") && c.text(doc.timezone, "timezone", "PLG-MANIFEST-TIMEZONE", 1, 100) && !isNamedZone(doc.timezone)) c.add("PLG-MANIFEST-TIMEZONE", "timezone", isOffsetZoneName(doc.timezone) ? `${show(doc.timezone)} is a fixed offset, not a named IANA time zone; use the place's zone, such as America/New_York` : `${show(doc.timezone)} is not a named IANA time zone`);
  if (has(doc, "audience")) c.choice(doc.audience, "audience", "PLG-MANIFEST-AUDIENCE", AUDIENCES);
  if (has(doc, "schedule") && c.text(doc.schedule, "schedule", "PLG-MANIFEST-SCHEDULE", 1, 100)) {
    try {
      const runs = maxRunsPerDay(parseCron(doc.schedule));
      if (runs > 24) c.add("PLG-SCHEDULE-TOO-FREQUENT", "schedule", `${show(doc.schedule)} runs up to ${runs} times a day; at most 24`);
    } catch (e) {
      c.add("PLG-MANIFEST-SCHEDULE", "schedule", e.message);
    }
  }
  if (has(doc, "backfill") && doc.backfill !== "all") c.window(doc.backfill, "backfill", "PLG-MANIFEST-BACKFILL");
  if (has(doc, "sources")) checkSources(c, doc.sources);
  if (has(doc, "series")) checkSeriesList(c, doc.series);
  if (has(doc, "links") && c.object(doc.links, "links", "PLG-MANIFEST-LINKS")) {
    const l = doc.links;
    const code = "PLG-MANIFEST-LINKS";
    c.unknownKeys(l, ["hosts"], "links");
    c.required(l, { hosts: code }, "links");
    if (has(l, "hosts")) {
      if (!Array.isArray(l.hosts)) c.add(code, "links.hosts", `must be an array of host names, not ${show(l.hosts)}`);
      else {
        if (l.hosts.length > 16) c.add(code, "links.hosts", `has ${l.hosts.length} hosts; at most 16`);
        l.hosts.forEach((h, i) => {
          const why = hostProblem(h);
          if (why) c.add(code, `links.hosts[${i}]`, why);
        });
      }
    }
  }
  if (has(doc, "limits") && c.object(doc.limits, "limits", "PLG-MANIFEST-LIMITS")) {
    c.unknownKeys(doc.limits, ["seconds", "megabytes"], "limits");
    if (has(doc.limits, "seconds")) c.integer(doc.limits.seconds, "limits.seconds", "PLG-MANIFEST-LIMITS", 1, 120);
    if (has(doc.limits, "megabytes")) c.integer(doc.limits.megabytes, "limits.megabytes", "PLG-MANIFEST-LIMITS", 16, 256);
  }
  if (has(doc, "licence") && c.object(doc.licence, "licence", "PLG-MANIFEST-LICENCE")) {
    const l = doc.licence;
    const code = "PLG-MANIFEST-LICENCE";
    c.unknownKeys(l, ["holder", "attribution", "terms", "retain"], "licence");
    c.required(l, { holder: code, terms: code, retain: code }, "licence");
    if (has(l, "holder")) c.text(l.holder, "licence.holder", code, 1, 200);
    if (has(l, "attribution")) c.text(l.attribution, "licence.attribution", code, 1, 40);
    if (has(l, "terms") && l.terms !== null) c.text(l.terms, "licence.terms", code, 0, 500);
    if (has(l, "retain")) c.choice(l.retain, "licence.retain", code, RETAINS);
  }
  return c.problems;
}

function checkSources(c, v) {
  const code = "PLG-MANIFEST-SOURCES";
  if (!Array.isArray(v)) return c.add(code, "sources", `must be an array, not ${show(v)}`);
  if (v.length > 16) c.add(code, "sources", `has ${v.length} sources; at most 16`);
  const seen = new Set();
  v.forEach((s, i) => {
    const p = `sources[${i}]`;
    if (!c.object(s, p, code)) return;
    c.unknownKeys(s, SOURCE_KEYS, p);
    c.required(s, { name: code, url: "PLG-MANIFEST-SOURCE-URL" }, p);
    if (has(s, "name") && c.key(s.name, `${p}.name`, code)) {
      if (seen.has(s.name)) c.add(code, `${p}.name`, `${show(s.name)} names an earlier source too`);
      seen.add(s.name);
    }
    if (has(s, "url")) {
      const why = sourceUrlProblem(s.url);
      if (why) c.add("PLG-MANIFEST-SOURCE-URL", `${p}.url`, why);
    }
    if (has(s, "maxBytes")) c.integer(s.maxBytes, `${p}.maxBytes`, code, 1, MAX_BYTES);
  });
}

function checkSeriesList(c, v) {
  const code = "PLG-MANIFEST-SERIES";
  if (!Array.isArray(v)) return c.add(code, "series", `must be an array, not ${show(v)}`);
  if (v.length < 1 || v.length > 64) c.add(code, "series", `has ${v.length} series; 1 to 64`);
  const seen = new Set();
  v.forEach((s, i) => {
    const p = `series[${i}]`;
    if (!c.object(s, p, code)) return;
    if (has(s, "key") && c.key(s.key, `${p}.key`, code)) {
      if (seen.has(s.key)) c.add(code, `${p}.key`, `${show(s.key)} is the key of an earlier series too`);
      seen.add(s.key);
    }
    checkSeries(c, s, p);
  });
}

function checkSeries(c, s, p) {
  const code = "PLG-MANIFEST-SERIES";
  c.unknownKeys(s, SERIES_KEYS, p);
  c.required(s, { key: code, kind: code, cadence: code, dates: code, name: "PLG-MANIFEST-NAME" }, p);
  const kind = s.kind;
  if (has(s, "kind")) c.choice(kind, `${p}.kind`, code, KINDS);
  if (has(s, "cadence")) c.choice(s.cadence, `${p}.cadence`, code, CADENCES);
  if (has(s, "dates")) c.choice(s.dates, `${p}.dates`, code, DATINGS);
  if (has(s, "name")) c.names(s.name, `${p}.name`);
  if (has(s, "unit")) c.text(s.unit, `${p}.unit`, code, 0, 16);
  let fields = new Set();
  if (has(s, "fields")) fields = checkFields(c, s.fields, `${p}.fields`, kind);
  else if (kind === "value") {
    c.add(code, `${p}.fields`, "is required for a value series");
    fields = null;
  }
  if (has(s, "fieldNames") && c.object(s.fieldNames, `${p}.fieldNames`, code)) {
    for (const [f, names] of Object.entries(s.fieldNames)) {
      const entry = `${p}.fieldNames.${f}`;
      if (fields !== null && !fields.has(f)) c.add(code, entry, `${show(f)} is not a declared field of the series`);
      c.names(names, entry);
    }
  }
  if (has(s, "change")) {
    const known = c.key(s.change, `${p}.change`, code);
    if (known && fields !== null && !fields.has(s.change)) c.add(code, `${p}.change`, `${show(s.change)} is not a declared field of the series`);
  }
  if (has(s, "snapshot") && c.object(s.snapshot, `${p}.snapshot`, code)) {
    const w = s.snapshot;
    c.unknownKeys(w, ["back", "ahead"], `${p}.snapshot`);
    c.required(w, { back: code, ahead: code }, `${p}.snapshot`);
    for (const side of ["back", "ahead"]) if (has(w, side)) c.window(w[side], `${p}.snapshot.${side}`, code);
  }
}

/** `fields`: only value series; 1 to 16 unique Keys. Null when they cannot be known. */
function checkFields(c, v, p, kind) {
  const code = "PLG-MANIFEST-SERIES";
  if (kind !== "value") {
    if (KINDS.includes(kind)) {
      c.add(code, p, `only value series have fields, not ${kind} series`);
      return new Set();
    }
    return null;
  }
  if (!Array.isArray(v)) {
    c.add(code, p, `must be an array of keys, not ${show(v)}`);
    return null;
  }
  if (v.length < 1 || v.length > 16) c.add(code, p, `has ${v.length} fields; 1 to 16`);
  const declared = new Set();
  v.forEach((f, i) => {
    if (c.key(f, `${p}[${i}]`, code)) {
      if (declared.has(f)) c.add(code, `${p}[${i}]`, `${show(f)} is declared twice`);
      declared.add(f);
    }
  });
  return declared;
}

/** Parse plugin.json text into {manifest, problems} (NaN and Infinity are not JSON here either). */
export function readManifestText(text, opts = {}) {
  let m;
  try {
    m = JSON.parse(text);
  } catch (e) {
    return { manifest: null, problems: [problem("PLG-MANIFEST-INVALID-JSON", `plugin.json is not JSON: ${e.message}`)] };
  }
  return { manifest: m, problems: validateManifest(m, opts) };
}

// ---------------------------------------------------------------------------------------------
// Update rules ("Versioning" rule 4): a candidate manifest against the published one. The same
// findings, order and paths as src/almanac/platform/contract/updates.py; tests/conformance/updates/
// holds the cases. Both manifests are expected to pass validateManifest.
// ---------------------------------------------------------------------------------------------

/**
 * Every Versioning rule 4 finding of `candidate` as an update of `published`, in order: time
 * zone, then series by the candidate's order, removed series, then new source hosts. Paths point
 * into the candidate; a removed series has the path `series` and its key in the message.
 */
export function compareManifests(published, candidate) {
  const out = [];
  const shown = (v) => (v === undefined || v === null ? "none" : JSON.stringify(v));
  if (candidate.timezone !== published.timezone) out.push(problem("PLG-UPDATE-TIMEZONE", `timezone: the update changes ${published.timezone} to ${candidate.timezone}`, { path: "timezone" }));
  const before = new Map(published.series.map((s) => [s.key, s]));
  candidate.series.forEach((series, index) => {
    const old = before.get(series.key);
    if (!old) return;
    const at = `series[${index}]`;
    let kindChanged = false;
    for (const [code, name] of [["PLG-UPDATE-SERIES-KIND", "kind"], ["PLG-UPDATE-SERIES-UNIT", "unit"], ["PLG-UPDATE-SERIES-DATES", "dates"]]) {
      const was = old[name] ?? null;
      const now = series[name] ?? null;
      if (was !== now) {
        if (name === "kind") kindChanged = true;
        out.push(problem(code, `${at}.${name}: series ${series.key} changes ${name} from ${shown(was)} to ${shown(now)}`, { path: `${at}.${name}` }));
      }
    }
    if (kindChanged) return;
    const fields = new Set(series.fields || []);
    for (const field of old.fields || []) {
      if (!fields.has(field)) out.push(problem("PLG-UPDATE-FIELD-REMOVED", `${at}.fields: series ${series.key} no longer has field ${field}`, { path: `${at}.fields` }));
    }
  });
  const kept = new Set(candidate.series.map((s) => s.key));
  for (const series of published.series) {
    if (!kept.has(series.key)) out.push(problem("PLG-UPDATE-SERIES-REMOVED", `series: the update removes series ${series.key} (its records are kept)`, { path: "series" }));
  }
  const oldHosts = new Set(published.sources.map((s) => urlHost(s.url)));
  const seen = new Set();
  candidate.sources.forEach((source, index) => {
    const host = urlHost(source.url);
    if (oldHosts.has(host) || seen.has(host)) return;
    seen.add(host);
    out.push(problem("PLG-UPDATE-SOURCE-HOST-ADDED", `sources[${index}].url: the update adds the source host ${host}`, { path: `sources[${index}].url` }));
  });
  return out;
}

// ---------------------------------------------------------------------------------------------
// Record rules ("Records (fetcher output)"; "Errors": Records of a run). The same rules, codes
// and lines as src/almanac/platform/contract/records.py; tests/conformance/records/ holds the cases.
// ---------------------------------------------------------------------------------------------

export const MAX_RECORDS = 250000;
const RECORD_KEYS = {
  value: ["kind", "series", "date", "period", "fields", "revises"],
  event: ["kind", "series", "id", "date", "state", "value", "title"],
  item: ["kind", "series", "date", "id", "title", "url"],
};
const A_KIND = { value: "a value", event: "an event", item: "an item" };
const MARKUP_RE = /<[A-Za-z/!?]|&(?:[A-Za-z][A-Za-z0-9]*|#[0-9]+|#[xX][0-9A-Fa-f]+);/;
const CONTROL_RE = /[\x00-\x1f\x7f]/;
const WS_OR_CONTROL_RE = /[\x00-\x20\x7f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]/;
const isFiniteNumber = (v) => typeof v === "number" && Number.isFinite(v);

/** Hosts an item link may point to: every source's host and `links.hosts`. */
export function linkHosts(manifest) {
  const hosts = new Set();
  for (const s of Array.isArray(manifest.sources) ? manifest.sources : []) {
    const h = urlHost(s && s.url);
    if (h) hosts.add(h);
  }
  for (const h of isObject(manifest.links) && Array.isArray(manifest.links.hosts) ? manifest.links.hosts : []) hosts.add(h);
  return hosts;
}

/** The record key: value = series + date (+ period when dated by publication); others + id. */
export function recordKey(record, dates) {
  if (record.kind === "value") return JSON.stringify([record.series, record.date, dates === "publication" ? record.period || "" : ""]);
  return JSON.stringify([record.series, record.date, record.id]);
}

function plainTextProblem(v, low) {
  if (typeof v !== "string") return `must be a string, not ${show(v)}`;
  if (chars(v) < low || chars(v) > 200) return `must be ${low} to 200 characters, not ${chars(v)}`;
  if (CONTROL_RE.test(v)) return "must be one line of plain text, without control characters";
  if (MARKUP_RE.test(v)) return "must be plain text, without markup such as tags or character references";
  return null;
}
const idOk = (v) => typeof v === "string" && chars(v) > 0 && chars(v) <= 64 && !WS_OR_CONTROL_RE.test(v);

/**
 * Check the lines a run printed against the manifest ("Records"; batch rules). `lines` are the
 * raw text lines without "\n" (a final "" is not a record). Returns {problems, records};
 * problems carry `line` (1-based) and the record `path`. One bad line refuses the batch.
 */
export function validateRecords(manifest, lines, today) {
  const problems = [];
  if (!(typeof today === "string" && isDate(today))) return { problems: [problem("PLG-RECORD-TODAY", `today: ${show(today)} is not a valid today (YYYY-MM-DD) for this run`, { path: "today" })], records: [] };
  let texts = lines;
  if (texts.length && texts[texts.length - 1] === "") texts = texts.slice(0, -1);
  if (texts.length > MAX_RECORDS) return { problems: [problem("PLG-RECORD-TOO-MANY", `the run printed ${texts.length} records; at most 250,000`)], records: [] };
  const kinds = new Map();
  const seriesDecl = new Map();
  for (const s of manifest.series) {
    kinds.set(s.key, s.kind);
    seriesDecl.set(s.key, s);
  }
  const hosts = linkHosts(manifest);
  const seen = new Set();
  const seenEvents = new Set();
  const records = [];
  const add = (code, line, p, detail) => problems.push(problem(code, `line ${line}${p ? `: ${p}` : ""}: ${detail}`, { path: p, line }));
  const missing = (key, line) => add("PLG-RECORD-INVALID", line, key, "is required");
  const unknownKeys = (r, kind, line) => {
    for (const k of Object.keys(r)) if (!RECORD_KEYS[kind].includes(k)) add("PLG-RECORD-UNKNOWN-KEY", line, k, `${show(k)} is not a key of ${A_KIND[kind]} record`);
  };
  const seriesProblem = (r, kind, line) => {
    if (!has(r, "series")) return missing("series", line);
    const key = r.series;
    if (typeof key !== "string") return add("PLG-RECORD-INVALID", line, "series", `must be a string, not ${show(key)}`);
    const declared = kinds.get(key);
    if (declared === undefined) add("PLG-RECORD-SERIES", line, "series", `${show(key)} is not a declared series`);
    else add("PLG-RECORD-SERIES", line, "series", `${show(key)} is declared as ${A_KIND[declared]} series, not ${A_KIND[kind]} series`);
  };
  const dateOk = (r, line) => {
    if (typeof r.date === "string" && isDate(r.date)) return true;
    if (!has(r, "date")) missing("date", line);
    else add("PLG-RECORD-INVALID", line, "date", `${show(r.date)} is not a real calendar date written YYYY-MM-DD`);
    return false;
  };
  const afterToday = (r, line, what) => add("PLG-RECORD-AFTER-TODAY", line, "date", `${r.date} is after today (${today}); ${what}`);
  const idCheck = (r, line) => {
    if (!has(r, "id")) {
      missing("id", line);
      return false;
    }
    if (idOk(r.id)) return true;
    add("PLG-RECORD-INVALID", line, "id", `${show(r.id)} is not an id (1 to 64 characters, no spaces)`);
    return false;
  };
  const repeated = (key, set, line, what) => {
    if (set.has(key)) {
      add("PLG-RECORD-REPEATED", line, null, `${what} was printed before in this run`);
      return true;
    }
    set.add(key);
    return false;
  };
  const checkValue = (r, line) => {
    let ok = true;
    if (Object.keys(r).some((k) => !RECORD_KEYS.value.includes(k))) {
      unknownKeys(r, "value", line);
      ok = false;
    }
    const decl = typeof r.series === "string" && kinds.get(r.series) === "value" ? seriesDecl.get(r.series) : null;
    if (!decl) {
      seriesProblem(r, "value", line);
      ok = false;
    }
    if (dateOk(r, line)) {
      if (r.date > today) {
        afterToday(r, line, "a value is never dated after today");
        ok = false;
      }
    } else ok = false;
    if (has(r, "fields")) {
      const f = r.fields;
      if (!isObject(f) || !Object.keys(f).length) {
        add("PLG-RECORD-INVALID", line, "fields", `must be an object of at least one declared field, not ${show(f)}`);
        ok = false;
      } else {
        for (const [name, num] of Object.entries(f)) {
          if (!isFiniteNumber(num)) {
            add("PLG-RECORD-INVALID", line, `fields.${name}`, `${show(num)} is not a finite number`);
            ok = false;
          }
        }
        if (decl) {
          for (const name of Object.keys(f)) {
            if (!decl.fields.includes(name)) {
              add("PLG-RECORD-INVALID", line, `fields.${name}`, `${show(name)} is not a declared field of series ${show(r.series)}`);
              ok = false;
            }
          }
        }
      }
    } else {
      missing("fields", line);
      ok = false;
    }
    if (decl) {
      for (const key of ["period", "revises"]) {
        if (!has(r, key)) continue;
        const v = r[key];
        if (decl.dates !== "publication") {
          add("PLG-RECORD-INVALID", line, key, `series ${show(r.series)} is dated by observation; only a series dated by publication takes ${key}`);
          ok = false;
        } else if (key === "period" && !(typeof v === "string" && chars(v) <= 32)) {
          add("PLG-RECORD-INVALID", line, key, `must be a string of at most 32 characters, not ${show(v)}`);
          ok = false;
        } else if (key === "revises" && !(typeof v === "string" && isDate(v))) {
          add("PLG-RECORD-INVALID", line, key, `${show(v)} is not a real calendar date written YYYY-MM-DD`);
          ok = false;
        }
      }
    }
    if (!ok) return false;
    let what = `the value of series ${show(r.series)} on ${r.date}`;
    if (decl.dates === "publication" && r.period) what += ` for period ${show(r.period)}`;
    return !repeated(recordKey(r, decl.dates), seen, line, what);
  };
  const checkEvent = (r, line) => {
    let ok = true;
    if (Object.keys(r).some((k) => !RECORD_KEYS.event.includes(k))) {
      unknownKeys(r, "event", line);
      ok = false;
    }
    if (!(typeof r.series === "string" && kinds.get(r.series) === "event")) {
      seriesProblem(r, "event", line);
      ok = false;
    }
    if (!idCheck(r, line)) ok = false;
    const stateOk = typeof r.state === "string" && ["scheduled", "happened", "cancelled"].includes(r.state);
    if (!stateOk) {
      ok = false;
      if (!has(r, "state")) missing("state", line);
      else add("PLG-RECORD-INVALID", line, "state", `${show(r.state)} is not one of scheduled, happened, cancelled`);
    }
    if (dateOk(r, line)) {
      if (stateOk && r.state !== "scheduled" && r.date > today) {
        afterToday(r, line, `a ${r.state} event is past news; only a scheduled event may come later`);
        ok = false;
      }
    } else ok = false;
    if (has(r, "value") && !isFiniteNumber(r.value)) {
      add("PLG-RECORD-INVALID", line, "value", `${show(r.value)} is not a finite number`);
      ok = false;
    }
    if (has(r, "title")) {
      const why = plainTextProblem(r.title, 0);
      if (why) {
        add("PLG-RECORD-INVALID", line, "title", why);
        ok = false;
      }
    }
    if (!ok) return false;
    return !repeated(JSON.stringify([r.series, r.id]), seenEvents, line, `event ${show(r.id)} of series ${show(r.series)}`);
  };
  const checkItem = (r, line) => {
    let ok = true;
    if (Object.keys(r).some((k) => !RECORD_KEYS.item.includes(k))) {
      unknownKeys(r, "item", line);
      ok = false;
    }
    if (!(typeof r.series === "string" && kinds.get(r.series) === "item")) {
      seriesProblem(r, "item", line);
      ok = false;
    }
    if (dateOk(r, line)) {
      if (r.date > today) {
        afterToday(r, line, "an item is never dated after today");
        ok = false;
      }
    } else ok = false;
    if (!idCheck(r, line)) ok = false;
    if (has(r, "title")) {
      const why = plainTextProblem(r.title, 1);
      if (why) {
        add("PLG-RECORD-INVALID", line, "title", why);
        ok = false;
      }
    } else {
      missing("title", line);
      ok = false;
    }
    if (has(r, "url")) {
      const url = r.url;
      if (typeof url !== "string") {
        add("PLG-RECORD-INVALID", line, "url", `must be a string, not ${show(url)}`);
        ok = false;
      } else {
        let detail = null;
        if (chars(url) > 1000) detail = `is ${chars(url)} characters long; at most 1000`;
        else {
          const parts = splitHttpsUrl(url);
          if (typeof parts === "string") detail = `${show(url)} ${parts}`;
          else if (!hosts.has(parts[0])) detail = `host "${parts[0]}" is neither a source host nor listed in links.hosts`;
        }
        if (detail) {
          add("PLG-RECORD-LINK", line, "url", detail);
          ok = false;
        }
      }
    } else {
      missing("url", line);
      ok = false;
    }
    if (!ok) return false;
    return !repeated(recordKey(r, seriesDecl.get(r.series).dates), seen, line, `item ${show(r.id)} of series ${show(r.series)} on ${r.date}`);
  };
  const checks = { value: checkValue, event: checkEvent, item: checkItem };
  texts.forEach((text, i) => {
    const line = i + 1;
    let r;
    try {
      r = JSON.parse(text);
    } catch (e) {
      if (!text.trim()) add("PLG-RECORD-INVALID", line, null, "is empty; print one JSON object per line");
      else add("PLG-RECORD-INVALID", line, null, `is not JSON (${e.message})`);
      return;
    }
    if (!isObject(r)) return add("PLG-RECORD-INVALID", line, null, `is not a JSON object: ${show(r)}`);
    const check = typeof r.kind === "string" && has(checks, r.kind) ? checks[r.kind] : null;
    if (!check) return add("PLG-RECORD-INVALID", line, "kind", has(r, "kind") ? `${show(r.kind)} is not one of value, event, item` : "is required (value, event or item)");
    if (check(r, line)) records.push(r);
  });
  return problems.length ? { problems, records: [] } : { problems, records };
}

/** Split fetcher output into lines: newline-terminated; a final line without newline counts. */
export function outputLines(text) {
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
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
    const crc = nodeZlib().crc32(data) >>> 0;
    const deflated = nodeZlib().deflateRawSync(data, { level: 9 });
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
const load = process.getBuiltinModule;
const { registerHooks, syncBuiltinESMExports } = load("node:module");
const say = (s) => { try { process.stderr.write("\\n${MARK} " + s + "\\n"); } catch {} };
const deny = (what) => function () {
  say("network " + what);
  const e = new Error("network access is not allowed in a plug-in fetcher (" + what + ")");
  e.code = "ERR_ALMANAC_NETWORK";
  throw e;
};
const block = (mod, names, prefix) => { for (const n of names) if (mod && n in mod) { try { mod[n] = deny(prefix + "." + n); } catch {} } };
const dnsNames = ["lookup", "lookupService", "resolve", "resolve4", "resolve6", "resolveAny", "resolveCaa", "resolveCname", "resolveMx", "resolveNaptr", "resolveNs", "resolvePtr", "resolveSoa", "resolveSrv", "resolveTxt", "reverse"];
// Network modules are patched when the fetcher first reaches them (loading them all up front
// would cost more than the fetcher's own start).
const patchers = {
  net: (m) => { block(m, ["connect", "createConnection", "createServer"], "net"); m.Socket.prototype.connect = deny("net.Socket.connect"); },
  tls: (m) => block(m, ["connect", "createServer"], "tls"),
  dgram: (m) => block(m, ["createSocket"], "dgram"),
  http: (m) => { block(m, ["request", "get", "createServer"], "http"); try { m.Agent.prototype.createConnection = deny("http.Agent"); } catch {} },
  https: (m) => { block(m, ["request", "get", "createServer"], "https"); try { m.Agent.prototype.createConnection = deny("https.Agent"); } catch {} },
  http2: (m) => block(m, ["connect", "createServer", "createSecureServer"], "http2"),
  dns: (m) => { block(m, dnsNames, "dns"); block(m.promises, dnsNames, "dns.promises"); try { m.Resolver = function () { deny("dns.Resolver")(); }; m.promises.Resolver = function () { deny("dns.Resolver")(); }; } catch {} },
};
patchers["dns/promises"] = () => patch("dns");
const patched = new Set();
function patch(id) {
  const name = String(id).replace(/^node:/, "");
  if (patched.has(name) || !patchers[name]) return;
  patched.add(name);
  patchers[name](load("node:" + name));
  syncBuiltinESMExports();
}
process.getBuiltinModule = function getBuiltinModule(id) { patch(id); return load(id); };
registerHooks({ resolve(specifier, context, next) { const r = next(specifier, context); if (r && typeof r.url === "string" && r.url.startsWith("node:")) patch(r.url); return r; } });
// net at once; the one syncBuiltinESMExports below also covers it (each sync costs a ms).
patched.add("net");
patchers.net(load("node:net"));
// Assigned, not defined: defining over Node's lazy fetch and WebSocket loads their HTTP client
// first (some 35 ms of every run); assigning replaces them unloaded.
for (const n of ["fetch", "WebSocket", "EventSource"]) {
  const f = deny(n);
  try { globalThis[n] = f; } catch {}
  if (globalThis[n] !== f) { try { Object.defineProperty(globalThis, n, { value: f, writable: true, configurable: true }); } catch {} }
}
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
const fsm = load("node:fs");
const { writeSync } = fsm;
wrapAll(fsm);
wrapAll(fsm.promises);
syncBuiltinESMExports();
// Memory: Node's own resident memory with the guard loaded, before the fetcher's code (the
// parent counts the limit above it), and the peak at exit (a spike between the parent's
// samples is still seen). Written straight to fd 2, so even an exit handler's line arrives.
const usage = process.resourceUsage;
try { writeSync(2, "\\n${MARK} rss " + process.memoryUsage.rss() + "\\n"); } catch {}
process.on("exit", () => { try { writeSync(2, "\\n${MARK} peak " + usage().maxRSS * 1024 + "\\n"); } catch {} });
`;

function realOrSelf(p) {
  try {
    return fs.realpathSync(p);
  } catch {
    return p;
  }
}

/**
 * What the fetcher may read of its folder: the files the locked room would have ("The locked
 * room" rule 2), that is the digest-covered files. Top-level covered files one by one, and each
 * top-level folder other than fixtures/, listing/, .git/ and node_modules/ whole (everything in
 * such a folder is covered except .DS_Store; a whole folder can also be listed). Symbolic links
 * are left out (PLG-CODE-SYMLINK).
 */
export function roomReadPaths(folder) {
  const out = [];
  let entries = [];
  try {
    entries = fs.readdirSync(folder, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const ent of entries) {
    const rel = ent.name;
    if (ent.isSymbolicLink() || NEVER_PACKED(rel)) continue;
    if (ent.isDirectory()) {
      if (!["fixtures", "listing"].includes(rel)) out.push(path.join(folder, rel));
    } else if (ent.isFile() && isCovered(rel)) out.push(path.join(folder, rel));
  }
  return out.sort();
}

/** Resident memory of a process in bytes, or null: /proc/<pid>/status on Linux. */
function procResident(pid) {
  try {
    const m = /^VmRSS:\s*(\d+)\s*kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, "latin1"));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

export const MEMORY_POLL_MS = process.platform === "linux" ? 10 : 100;
/**
 * Sample a child's resident memory every MEMORY_POLL_MS until the returned stop is called:
 * /proc/<pid>/status (VmRSS) on Linux, `ps -o rss= -p <pid>` elsewhere.
 */
function watchResident(pid, onSample) {
  let stopped = false;
  let busy = false;
  const linux = process.platform === "linux" && procResident(pid) !== null;
  const tick = () => {
    if (stopped || busy) return;
    if (linux) {
      const bytes = procResident(pid);
      if (bytes !== null) onSample(bytes);
      return;
    }
    busy = true;
    execFile("ps", ["-o", "rss=", "-p", String(pid)], { timeout: 5000 }, (err, out) => {
      busy = false;
      const kb = parseInt(String(out).trim(), 10);
      if (!stopped && !err && kb > 0) onSample(kb * 1024);
    });
  };
  const timer = setInterval(tick, MEMORY_POLL_MS);
  tick();
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}

/**
 * Run `node fetch.mjs` in `folder` with the context on stdin, behind the guard.
 * Returns {exit, signal, stdout: Buffer, stderr, lastLine, killed: "time"|"memory"|"output"|"cancelled"|null,
 * network: [what], denied: [{permission, resource}], seconds, limits: {seconds, megabytes},
 * memory: {baseline, peak, used} (bytes; used is the peak above Node's own start)}.
 */
export function runFetcher({ folder, context, readPaths = [], limits = {} }) {
  const seconds = isInt(limits.seconds) ? Math.min(limits.seconds, 120) : 120;
  const megabytes = isInt(limits.megabytes) ? Math.min(limits.megabytes, 256) : 256;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "almanac-run-"));
  // The guard is read from a file in the run's folder (by its real path, as the loader reads it):
  // imported from a data: URL, its decoding cost each run's start more than the guard itself.
  const guard = path.join(realOrSelf(tmp), "guard.mjs");
  fs.writeFileSync(guard, GUARD_SOURCE);
  // Reads: the files the room would have (never fixtures/, listing/ or README.md) and the run's
  // sources; each as written and as its real path, so a linked folder reads its own files (1.3.0).
  folder = path.resolve(folder);
  const reads = new Set();
  for (const p of [...roomReadPaths(folder), ...readPaths]) {
    reads.add(path.resolve(p));
    reads.add(realOrSelf(path.resolve(p)));
  }
  const args = ["--permission", ...[...reads].map((p) => `--allow-fs-read=${p}`), ...[...new Set([tmp, realOrSelf(tmp)])].map((p) => `--allow-fs-read=${p}`), `--allow-fs-write=${tmp}`, `--max-old-space-size=${megabytes}`, "--disable-warning=ExperimentalWarning", `--import=${pathToFileURL(guard).href}`, "fetch.mjs"];
  const started = Date.now();
  return new Promise((resolve) => {
    // The temporary folder is the run's own, as /tmp is in the locked room: os.tmpdir() names it,
    // and the fetcher may read back what it wrote there.
    const child = spawn(process.execPath, args, { cwd: folder, env: { LANG: "C.UTF-8", PATH: process.env.PATH || "/usr/bin:/bin", TMPDIR: tmp }, stdio: ["pipe", "pipe", "pipe"] });
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
    // An MCP tool call cancelled: its runs end now.
    const signal = cancelSignal();
    const cancel = () => kill("cancelled");
    if (signal?.aborted) cancel();
    else signal?.addEventListener("abort", cancel, { once: true });
    // Memory: the V8 heap is capped above; Buffers, typed arrays and native memory are not, so
    // the child's resident memory above Node's own start (reported first thing by the guard) is
    // watched from here, and the peak the guard reports at exit is compared too.
    const limitBytes = megabytes * 1024 * 1024;
    let baseline = null;
    let peak = 0;
    const overLimit = (bytes) => baseline !== null && bytes - baseline > limitBytes;
    const stopWatch = child.pid ? watchResident(child.pid, (bytes) => {
      peak = Math.max(peak, bytes);
      if (overLimit(bytes)) kill("memory");
    }) : () => {};
    child.stdout.on("data", (d) => {
      outBytes += d.length;
      if (outBytes > OUTPUT_LIMIT) return kill("output");
      out.push(d);
    });
    child.stderr.on("data", (d) => {
      if (err.length < 4 * 1024 * 1024) err += d.toString("utf8");
      if (baseline === null) {
        const m = new RegExp(`(?:^|\\n)${MARK} rss (\\d+)\\n`).exec(err);
        if (m) baseline = Number(m[1]);
      }
    });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(context) + "\n");
    child.on("error", (e) => {
      err += `\n${e.message}`;
    });
    child.on("close", (exit, exitSignal) => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", cancel);
      stopWatch();
      fs.rmSync(tmp, { recursive: true, force: true });
      if (!killed && /JavaScript heap out of memory|Reached heap limit|Allocation failed/.test(err)) killed = "memory";
      const network = [];
      const denied = [];
      const plain = [];
      for (const line of err.split("\n")) {
        if (line.startsWith(`${MARK} rss `)) continue;
        if (line.startsWith(`${MARK} peak `)) {
          peak = Math.max(peak, Number(line.slice(MARK.length + 6)) || 0);
          continue;
        }
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
      const lastLine = reasonLine(plain).slice(0, 300);
      if (!killed && overLimit(peak)) killed = "memory";
      const memory = { baseline, peak, used: baseline !== null && peak ? Math.max(0, peak - baseline) : null };
      resolve({ exit, signal: exitSignal, stdout: Buffer.concat(out), stderr: plain.join("\n"), lastLine, killed, network, denied, seconds: (Date.now() - started) / 1000, limits: { seconds, megabytes }, memory });
    });
  });
}

/**
 * The fetcher's last stderr line. When Node printed an uncaught error (the stack, the error's
 * properties, then "Node.js v24..."), its message line is the reason instead.
 */
function reasonLine(stderrLines) {
  const lines = stderrLines.map((l) => l.trimEnd()).filter((l) => l.trim() !== "");
  if (lines.length && /^Node\.js v\d+/.test(lines[lines.length - 1])) {
    lines.pop();
    const message = lines.find((l) => /^(\w*Error|Uncaught \w+)(\s*\[\w+\])?: /.test(l));
    if (message) return message;
  }
  return lines.length ? lines[lines.length - 1] : "";
}

/** Problems of one guarded run (network, read outside, killed, failed). `label` names the run. */
export function runProblems(res, label, { expectFailure = false } = {}) {
  const out = [];
  if (res.network.length) out.push(problem("PLG-RUN-NETWORK", `${label}: the fetcher tried the network (${[...new Set(res.network)].join(", ")}); fetchers read only the files in context.sources`));
  const reads = res.denied.filter((d) => d.permission === "FileSystemRead");
  if (reads.length) out.push(problem("PLG-RUN-READ-OUTSIDE", `${label}: the fetcher read ${reads.map((d) => d.resource || "a file").filter((v, i, a) => a.indexOf(v) === i).join(", ")} outside its code and sources (the locked room has only the files the digest covers, and the sources; no fixtures, listing or README)`));
  if (res.killed) {
    const why = { time: `ran past ${res.limits.seconds} seconds (limits.seconds)`, memory: `used more than ${res.limits.megabytes} MB of memory (limits.megabytes, counted above Node's own start)`, output: "printed more than 64 MB of output (the output limit)", cancelled: "was cancelled with the tool call that ran it" }[res.killed];
    out.push(problem("PLG-RUN-KILLED", `${label}: the fetcher was stopped: it ${why}`));
  }
  if (!expectFailure && !out.length && res.exit !== 0) out.push(problem("PLG-RUN-FAILED", `${label}: the fetcher exited with ${res.exit ?? res.signal}: ${res.lastLine || "(no message on stderr)"}`));
  return out;
}

// ---------------------------------------------------------------------------------------------
// Run context ("Run context", "Series context"; fixtures/context.json). The same rules as
// src/almanac/platform/contract/context.py; tests/conformance/contexts/ holds the cases.
// ---------------------------------------------------------------------------------------------

const CONTEXT_KEYS = ["contract", "plugin", "now", "today", "backfill", "backfillFrom", "sources", "series"];
const INSTANT_RE = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,6})?(Z|[+-](\d{2}):(\d{2}))$/;

/** An ISO 8601 instant with seconds and an offset (Z, +hh:mm), at most 40 characters; a Date or null. */
export function parseInstant(s, { utcOnly = false } = {}) {
  if (typeof s !== "string" || chars(s) > 40) return null;
  const m = INSTANT_RE.exec(s);
  if (!m || !isDate(m[1]) || +m[2] > 23 || +m[3] > 59 || +m[4] > 59) return null;
  if (m[7] !== undefined && (+m[7] > 23 || +m[8] > 59)) return null;
  if (utcOnly && !(m[6] === "Z" || m[6] === "+00:00")) return null;
  const t = new Date(s.replace(/(\.\d{3})\d+/, "$1"));
  return Number.isNaN(t.getTime()) ? null : t;
}
/** `now` as the context writes it: UTC, whole seconds, Z. */
export function formatInstant(t) {
  return new Date(Math.floor(t.getTime() / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/**
 * The run context of one run (Run context table). `state` maps a series key to {last, count};
 * a declared series missing from it has {last: null, count: 0}. `backfill` undefined means true
 * exactly when nothing is stored. `sources` maps each source name to its file path.
 */
export function buildContext(manifest, { now, state = {}, backfill, sources }) {
  const stamp = formatInstant(now instanceof Date ? now : parseInstant(now));
  const today = dateInZone(new Date(stamp), manifest.timezone);
  const series = {};
  for (const s of manifest.series) {
    const st = state[s.key] || { last: null, count: 0 };
    series[s.key] = { last: st.last ?? null, count: st.count ?? 0 };
  }
  if (backfill === undefined || backfill === null) backfill = Object.values(series).every((s) => s.count === 0);
  return {
    contract: CONTRACT,
    plugin: manifest.id,
    now: stamp,
    today,
    backfill,
    backfillFrom: manifest.backfill === "all" ? null : windowStart(today, manifest.backfill),
    sources: sources ?? Object.fromEntries(manifest.sources.map((s) => [s.name, `/sources/${s.name}`])),
    series,
  };
}

function checkSeriesState(add, value, manifest, today, everySeries) {
  if (!isObject(value)) return add("series", "must be an object of series key to {last, count}");
  const declared = manifest.series.map((s) => s.key);
  for (const k of Object.keys(value)) if (!declared.includes(k)) add(`series.${k}`, "is not a declared series");
  if (everySeries) for (const k of declared) if (!has(value, k)) add(`series.${k}`, "is missing; every declared series has a state");
  for (const [k, st] of Object.entries(value)) {
    if (!declared.includes(k)) continue;
    const p = `series.${k}`;
    if (!isObject(st)) {
      add(p, "must be an object {last, count}");
      continue;
    }
    for (const extra of Object.keys(st)) if (!["last", "count"].includes(extra)) add(`${p}.${extra}`, "is not a series context key");
    if (!has(st, "last") || !has(st, "count")) add(p, "needs both last and count");
    const last = st.last;
    const count = st.count;
    if (last !== null && last !== undefined) {
      if (!(typeof last === "string" && isDate(last))) add(`${p}.last`, `${show(last)} is not a date YYYY-MM-DD or null`);
      else if (today !== null && last > today) add(`${p}.last`, `${last} is after today ${today}`);
    }
    if (has(st, "count") && (!isInt(count) || count < 0)) add(`${p}.count`, `${show(count)} is not an integer of at least 0`);
    else if (last !== null && last !== undefined && count === 0) add(p, "has a last date but a count of 0");
  }
}

/** Every way a built run context breaks the Run context table (PLG-CONTEXT-INVALID, PLG-RECORD-TODAY). */
export function checkRunContext(ctx, manifest) {
  const out = [];
  const add = (p, detail, code = "PLG-CONTEXT-INVALID") => out.push(problem(code, `run context${p ? ` ${p}` : ""}: ${detail}`, { path: p }));
  if (!isObject(ctx)) {
    add(null, "must be one JSON object");
    return out;
  }
  for (const k of Object.keys(ctx)) if (!CONTEXT_KEYS.includes(k)) add(k, "is not a run context key");
  for (const k of ["contract", "plugin", "now", "today", "backfill", "sources", "series"]) if (!has(ctx, k)) add(k, "is missing", k === "today" ? "PLG-RECORD-TODAY" : undefined);
  if (has(ctx, "contract") && ctx.contract !== 1) add("contract", "must be 1");
  if (has(ctx, "plugin") && ctx.plugin !== manifest.id) add("plugin", `${show(ctx.plugin)} is not the plug-in id "${manifest.id}"`);
  let now = null;
  if (has(ctx, "now")) {
    now = parseInstant(ctx.now, { utcOnly: true });
    if (!now) add("now", `${show(ctx.now)} is not a UTC ISO 8601 instant of at most 40 characters`);
  }
  let today = null;
  if (has(ctx, "today")) {
    if (!(typeof ctx.today === "string" && isDate(ctx.today))) add("today", `${show(ctx.today)} is not a date YYYY-MM-DD`, "PLG-RECORD-TODAY");
    else if (now && ctx.today !== dateInZone(now, manifest.timezone)) add("today", `${ctx.today} is not the date of now in ${manifest.timezone} (${dateInZone(now, manifest.timezone)})`, "PLG-RECORD-TODAY");
    else today = ctx.today;
  }
  if (has(ctx, "backfill") && typeof ctx.backfill !== "boolean") add("backfill", "must be true or false");
  if (has(ctx, "backfillFrom")) {
    const v = ctx.backfillFrom;
    if (manifest.backfill === "all") {
      if (v !== null) add("backfillFrom", "must be null for backfill all");
    } else if (!(typeof v === "string" && isDate(v))) add("backfillFrom", `${show(v)} is not a date YYYY-MM-DD`);
    else if (today !== null && v !== windowStart(today, manifest.backfill)) add("backfillFrom", `${v} is not today minus ${manifest.backfill}`);
  }
  if (has(ctx, "sources")) {
    const expected = Object.fromEntries(manifest.sources.map((s) => [s.name, `/sources/${s.name}`]));
    const got = ctx.sources;
    const same = isObject(got) && Object.keys(got).length === Object.keys(expected).length && Object.entries(expected).every(([k, v]) => got[k] === v);
    if (!same) add("sources", `must be exactly ${JSON.stringify(expected)}`);
  }
  if (has(ctx, "series")) checkSeriesState(add, ctx.series, manifest, today, true);
  return out;
}

/**
 * fixtures/context.json rules: run context keys (not `sources`), `now` an ISO instant with an
 * offset and `today` the date of `now` in the manifest zone (PLG-FIXTURE-CONTEXT-INVALID).
 */
export function checkFixtureContext(fixture, manifest, file = "fixtures/context.json") {
  const out = [];
  const add = (p, detail) => out.push(problem("PLG-FIXTURE-CONTEXT-INVALID", `${file}${p ? ` ${p}` : ""}: ${detail}`, { path: p, file }));
  if (!isObject(fixture)) {
    add(null, "must be one JSON object");
    return out;
  }
  for (const k of Object.keys(fixture)) if (!CONTEXT_KEYS.includes(k) || k === "sources") add(k, "is not a key fixtures/context.json may set");
  let now = null;
  if (!has(fixture, "now")) add("now", "is missing");
  else {
    now = parseInstant(fixture.now);
    if (!now) add("now", `${show(fixture.now)} is not an ISO 8601 instant with an offset, such as 2026-11-21T09:00:00Z`);
  }
  let today = null;
  if (!has(fixture, "today")) add("today", "is missing");
  else if (!(typeof fixture.today === "string" && isDate(fixture.today))) add("today", `${show(fixture.today)} is not a date YYYY-MM-DD`);
  else if (now && fixture.today !== dateInZone(now, manifest.timezone)) add("today", `${fixture.today} is not the date of now in ${manifest.timezone} (${dateInZone(now, manifest.timezone)})`);
  else today = fixture.today;
  if (has(fixture, "contract") && fixture.contract !== 1) add("contract", "must be 1");
  if (has(fixture, "plugin") && fixture.plugin !== manifest.id) add("plugin", `must be the plug-in id "${manifest.id}"`);
  if (has(fixture, "backfill") && typeof fixture.backfill !== "boolean") add("backfill", "must be true or false");
  if (has(fixture, "backfillFrom") && fixture.backfillFrom !== null && !(typeof fixture.backfillFrom === "string" && isDate(fixture.backfillFrom))) add("backfillFrom", `${show(fixture.backfillFrom)} is not a date YYYY-MM-DD or null`);
  if (has(fixture, "series")) checkSeriesState(add, fixture.series, manifest, today, false);
  return out;
}

/** The run context check gives the fetcher for a valid fixture context (series it names, else none stored). */
export function contextFromFixture(fixture, manifest, { sources, state = {}, backfill } = {}) {
  const st = { ...state };
  for (const [k, v] of Object.entries(fixture.series || {})) st[k] = { last: v.last ?? null, count: v.count ?? 0 };
  const ctx = buildContext(manifest, { now: parseInstant(fixture.now), state: st, backfill: has(fixture, "backfill") ? fixture.backfill : backfill, sources });
  if (has(fixture, "backfillFrom")) ctx.backfillFrom = fixture.backfillFrom;
  return ctx;
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

/** Read a fixture context file: {fixture} or {problems}. */
export function readFixtureContext(file, manifest, rel) {
  let c;
  try {
    c = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch (e) {
    return { problems: [problem("PLG-FIXTURE-CONTEXT-INVALID", `${rel} is not JSON (${e.message})`, { file: rel })] };
  }
  const problems = checkFixtureContext(c, manifest, rel);
  return problems.length ? { problems } : { fixture: c };
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
  // Fetcher and imports
  const hasFetch = fs.existsSync(path.join(root, "fetch.mjs")) && fs.lstatSync(path.join(root, "fetch.mjs")).isFile();
  const code = hasFetch ? checkImports(root) : [problem("PLG-FETCH-MISSING", "fetch.mjs is missing at the top of the folder", { path: "fetch.mjs" })];
  // Fixtures
  const fixtures = path.join(root, "fixtures");
  const recordsFile = path.join(fixtures, "records.jsonl");
  const fixtureProblems = [];
  let fixture = null;
  if (manifest && hasFetch) {
    for (const s of manifest.sources) {
      const f = path.join(fixtures, "sources", s.name);
      if (!fs.existsSync(f) || !fs.statSync(f).isFile()) fixtureProblems.push(problem("PLG-FIXTURE-SOURCE-MISSING", `fixtures/sources/${s.name} is missing: save one real copy of source "${s.name}" (${s.url}) under that name`, { path: `fixtures/sources/${s.name}` }));
    }
    const ctxFile = path.join(fixtures, "context.json");
    if (fs.existsSync(ctxFile)) {
      const c = readFixtureContext(ctxFile, manifest, "fixtures/context.json");
      if (c.problems) fixtureProblems.push(...c.problems);
      else fixture = c.fixture;
    } else {
      const now = isoNow(env);
      fixture = { now, today: dateInZone(new Date(now), manifest.timezone) };
    }
    if (!update && !fs.existsSync(recordsFile)) fixtureProblems.push(problem("PLG-FIXTURE-RECORDS-MISSING", "fixtures/records.jsonl is missing; run check --update to write the fetcher's output there, then read it", { path: "fixtures/records.jsonl" }));
  }
  // The runs start before the remaining checks, which their processes' start-up outlasts (it is
  // most of a check's time); the findings keep their order all the same.
  const runnable = manifest && hasFetch && !fixtureProblems.length && !code.some((p) => p.code.startsWith("PLG-IMPORT-"));
  const runs = runnable ? startRuns(root, manifest, fixture, { update, runTwice }) : null;
  try {
    // Digest and code file rules
    const d = computeDigest(root);
    result.digest = d.digest;
    result.files = d.files;
    add(...d.problems, ...code);
    // Listing (when present): judged against the days fixtures/records.jsonl covers.
    if (manifest && fs.existsSync(path.join(root, "listing.json"))) add(...checkListingFolder(root, manifest, readRecordsFile(recordsFile)));
    // review.json (when present): its shape, and its example days in fixtures/records.jsonl.
    if (manifest && fs.existsSync(path.join(root, "review.json"))) add(...checkReviewFolder(root, manifest, readRecordsFile(recordsFile)));
  } catch (e) {
    await runs?.all; // no fetcher is left running after the check
    throw e;
  }
  if (!manifest || !hasFetch) return finish(result);
  add(...fixtureProblems);
  if (!runs) return finish(result);
  const { context, cases, runCases, expected, early } = runs;
  result.context = context;
  const [first, second] = await runs.fixtureRuns;
  add(...first.problems);
  if (first.problems.length) {
    await early; // no fetcher is left running after the check
    return finish(result);
  }
  result.records = first.records;
  result.output = first.text;
  if (second && (second.exit !== 0 || !second.stdout.equals(first.res.stdout))) {
    const diff = firstDifference(second.stdout.toString("utf8"), first.text);
    add(problem("PLG-RUN-NOT-DETERMINISTIC", `the fetcher printed different output on a second run of the same files${diff ? ` (line ${diff.line}: ${diff.want} then ${diff.got})` : ""}`, diff ? { line: diff.line } : {}));
  }
  if (update) fs.writeFileSync(recordsFile, first.res.stdout);
  else if (expected !== first.text) {
    const diff = firstDifference(first.text, expected);
    add(problem("PLG-FIXTURE-MISMATCH", `fixtures/records.jsonl line ${diff.line} differs: the fetcher printed ${diff.got}, the file has ${diff.want}; fix the fetcher, or run check --update and read the diff`, { path: "fixtures/records.jsonl", line: diff.line }));
  }
  // Later runs and failing cases
  if (cases.length) {
    const started = early ? await early : null;
    const results = started && expected === first.text ? started : await runCases(first.records);
    for (const ps of results) {
      result.runs.total++;
      add(...ps);
      if (!ps.some((p) => p.severity === "error")) result.runs.passed++;
    }
  }
  return finish(result);
}

/**
 * Start the fixture runs of a folder whose manifest, fetcher and fixtures passed: the base run
 * twice, side by side (the service runs fixtures twice too: their bytes are compared), and, unless
 * `update`, the run cases. Returns {context, cases, runCases, expected, early, fixtureRuns, all}:
 * `fixtureRuns` resolves to [checked first run, second run or null], `early` to the run cases'
 * problems (or is null), `all` when every started run has ended.
 */
function startRuns(root, manifest, fixture, { update, runTwice }) {
  const fixtures = path.join(root, "fixtures");
  const sources = sourcesFor(root, manifest);
  const context = contextFromFixture(fixture, manifest, { sources });
  const readPaths = [path.join(fixtures, "sources")];
  const runsDir = path.join(fixtures, "runs");
  const cases = fs.existsSync(runsDir) ? fs.readdirSync(runsDir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name).sort() : [];
  const runCases = (baseRecords) => Promise.all(cases.map((name) => checkRunCase(root, manifest, name, { fixture, baseRecords, update })));
  // The run cases see the records the fixture run printed. Without --update that must be
  // fixtures/records.jsonl, so they start at once from its records, beside the fixture runs;
  // should the run print anything else, they run again from what it printed.
  const expected = update ? null : fs.readFileSync(path.join(fixtures, "records.jsonl"), "utf8");
  const early = expected === null || !cases.length ? null : runCases(validateRecords(manifest, outputLines(expected), context.today).records);
  const fixtureRuns = Promise.all([
    runAndCheck(root, manifest, context, readPaths, "fixture run"),
    runTwice ? runFetcher({ folder: root, context, readPaths, limits: manifest.limits || {} }) : null,
  ]);
  return { context, cases, runCases, expected, early, fixtureRuns, all: Promise.all([fixtureRuns, early]) };
}

/** One fixtures/runs/<case>: a later run (records.jsonl) or a run that must fail (expect.json). */
export async function checkRunCase(root, manifest, name, { fixture, baseRecords, update = false }) {
  const rel = `fixtures/runs/${name}`;
  const dir = path.join(root, rel);
  const out = [];
  let ctx = { now: fixture.now, today: fixture.today };
  if (fs.existsSync(path.join(dir, "context.json"))) {
    const c = readFixtureContext(path.join(dir, "context.json"), manifest, `${rel}/context.json`);
    if (c.problems) return c.problems;
    ctx = c.fixture;
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
  const context = contextFromFixture(ctx, manifest, { sources, state, backfill: false });
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
  const runs = result.runs.total ? `, ${result.runs.passed} of ${result.runs.total} run case${result.runs.total === 1 ? "" : "s"} passed` : "";
  result.summary = result.ok
    ? `passes: ${result.records.length} records${runs}${warnings ? `, ${warnings} warning${warnings > 1 ? "s" : ""}` : ""}`
    : `does not pass: ${errors} problem${errors > 1 ? "s" : ""}${warnings ? `, ${warnings} warning${warnings > 1 ? "s" : ""}` : ""}${runs}`;
  return result;
}

// ---------------------------------------------------------------------------------------------
// Listing rules ("Listing (listing.json)") and the icon read from its bytes. The same rules as
// src/almanac/platform/contract/listing.py; tests/conformance/listings/ holds the cases.
// ---------------------------------------------------------------------------------------------

/** The store's categories (the spec lists none; Almanac's list, shared with the server). */
export const CATEGORIES = ["finance", "economy", "central-banks", "holidays", "government", "statistics", "weather", "science", "transport", "culture", "sports", "other"];
const LISTING_KEYS = ["listing", "plugin", "publisher", "tagline", "description", "category", "keywords", "links", "sources", "examples"];
const LINE_BREAKS_RE = /[\n\r\u0085\u2028\u2029]/;
const DESCRIPTION_CONTROL_RE = /[\x00-\x09\x0b-\x1f\x7f]/;
const LOCAL_PART_RE = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const PNG_CHANNELS = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };
const PNG_DEPTHS = { 0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16] };

function listingLinkProblem(v) {
  if (typeof v !== "string") return "must be an https URL string";
  if (chars(v) > 1000) return `is ${chars(v)} characters long; at most 1000`;
  const parts = splitHttpsUrl(v);
  if (typeof parts === "string") return parts;
  const why = hostProblem(parts[0].toLowerCase());
  return why ? `host ${why}` : null;
}
function emailProblem(v) {
  if (typeof v !== "string" || v.split("@").length !== 2) return "is not an e-mail address";
  const [local, domain] = v.split("@");
  if (chars(local) > 64 || !LOCAL_PART_RE.test(local)) return "has a bad part before @";
  if (hostProblem(domain.toLowerCase())) return "has a domain that is not a host name";
  return null;
}

/** Why icon bytes are not a 256x256 PNG of at most 64 KB (CRCs, IEND, image data size), or null. */
export function iconProblem(icon) {
  if (icon.length > 65536) return `is ${icon.length} bytes; at most 65536`;
  if (!icon.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return "is not a PNG (no PNG signature)";
  let offset = 8;
  let index = 0;
  let header = null;
  const data = [];
  for (;;) {
    if (offset + 12 > icon.length) return "is a cut-off PNG (no IEND chunk)";
    const length = icon.readUInt32BE(offset);
    const kind = icon.toString("latin1", offset + 4, offset + 8);
    const end = offset + 12 + length;
    if (end > icon.length) return `is a cut-off PNG (chunk ${kind} runs past the end)`;
    const body = icon.subarray(offset + 8, end - 4);
    if ((nodeZlib().crc32(icon.subarray(offset + 4, end - 4)) >>> 0) !== icon.readUInt32BE(end - 4)) return `is a damaged PNG (bad CRC in chunk ${kind})`;
    if (index === 0) {
      if (kind !== "IHDR" || length !== 13) return "is not a PNG (the first chunk is not IHDR)";
      header = { width: body.readUInt32BE(0), height: body.readUInt32BE(4), depth: body[8], colour: body[9], interlace: body[12] };
    } else if (kind === "IDAT") data.push(body);
    else if (kind === "IEND") break;
    offset = end;
    index++;
  }
  const { width, height, depth, colour, interlace } = header;
  if (width !== 256 || height !== 256) return `is ${width}x${height}; it must be 256x256`;
  if (!(PNG_DEPTHS[colour] || []).includes(depth)) return `has an invalid colour type ${colour} with bit depth ${depth}`;
  if (!data.length) return "is a PNG with no image data";
  const expected = height * (1 + Math.floor((width * PNG_CHANNELS[colour] * depth + 7) / 8));
  let raw;
  try {
    raw = nodeZlib().inflateSync(Buffer.concat(data), { finishFlush: nodeZlib().constants.Z_SYNC_FLUSH, maxOutputLength: expected + 1 });
  } catch (e) {
    if (e instanceof RangeError || e.code === "ERR_BUFFER_TOO_LARGE") raw = { length: expected + 1 };
    else return "is a damaged PNG (image data does not inflate)";
  }
  if (interlace === 0 && raw.length !== expected) return "is a damaged PNG (image data is not the size its header gives)";
  return null;
}

/**
 * Check a listing (text or parsed object) for a manifest, its icon bytes (null when
 * listing/icon.png is absent) and the dates the fixtures cover.
 */
export function validateListing(listing, manifest, { icon = null, fixtureDates = new Set(), verifiedDomain = null } = {}) {
  const out = [];
  const absent = (v) => v === undefined || v === null;
  const add = (code, p, detail) => out.push(problem(code, p ? `listing.json ${p}: ${detail}` : `listing.json: ${detail}`, { path: p }));
  const unknown = (obj, known, prefix) => {
    for (const k of Object.keys(obj)) if (!known.includes(k)) add("PLG-LISTING-INVALID", prefix ? `${prefix}.${k}` : k, "is not a listing key");
  };
  const link = (v, p) => {
    const why = listingLinkProblem(v);
    if (why) add("PLG-LISTING-LINK", p, `${show(v)} ${why}`);
  };
  const texts = (value, p, code, high, oneLine, missingEn) => {
    if (value === undefined || value === null) return add(code, p, "is missing");
    if (!isObject(value) || !Object.keys(value).length) return add(code, p, "must be an object of language code to text, with en");
    for (const [lang, text] of Object.entries(value)) {
      const at = `${p}.${lang}`;
      if (!LANG_RE.test(lang)) add(code, at, `${show(lang)} is not a language code such as en or pt-BR`);
      else if (typeof text !== "string" || !text.trim()) add(code, at, "must be a non-empty string");
      else if (chars(text) > high) add(code, at, `is ${chars(text)} characters long; at most ${high}`);
      else if (oneLine && LINE_BREAKS_RE.test(text)) add(code, at, "must be one line");
      else if ((oneLine ? CONTROL_RE : DESCRIPTION_CONTROL_RE).test(text)) add(code, at, "holds a control character");
      else if (MARKUP_RE.test(text)) add(code, at, "must be plain text, without HTML markup or references");
    }
    if (!has(value, "en")) add(missingEn, `${p}.en`, "has no English (en) text");
  };
  let doc = listing;
  if (typeof listing === "string") {
    try {
      doc = JSON.parse(listing);
    } catch (e) {
      add("PLG-LISTING-INVALID", null, `is not JSON (${e.message})`);
      return out;
    }
  }
  if (!isObject(doc)) {
    add("PLG-LISTING-INVALID", null, `must be one JSON object, not ${show(doc)}`);
    return out;
  }
  unknown(doc, LISTING_KEYS, "");
  if (doc.listing !== 1) add("PLG-LISTING-INVALID", "listing", "must be 1");
  if (doc.plugin !== manifest.id) add("PLG-LISTING-ID", "plugin", absent(doc.plugin) ? `is missing; set it to ${manifest.id}` : `${show(doc.plugin)} is not ${manifest.id}`);
  const pub = doc.publisher;
  if (!isObject(pub)) add("PLG-LISTING-PUBLISHER", "publisher.domain", "is missing");
  else {
    unknown(pub, ["domain"], "publisher");
    const d = pub.domain;
    const why = d !== undefined && d !== null ? hostProblem(d) : "is missing";
    if (why) add("PLG-LISTING-PUBLISHER", "publisher.domain", why);
    else if (verifiedDomain !== null && d !== verifiedDomain) add("PLG-LISTING-PUBLISHER", "publisher.domain", `${d} is not the organization's verified domain ${verifiedDomain}`);
  }
  texts(doc.tagline, "tagline", "PLG-LISTING-TAGLINE", 80, true, "PLG-LISTING-LANGUAGE-MISSING");
  texts(doc.description, "description", "PLG-LISTING-DESCRIPTION", 2000, false, "PLG-LISTING-LANGUAGE-MISSING");
  if (!CATEGORIES.includes(doc.category)) add("PLG-LISTING-CATEGORY", "category", `${absent(doc.category) ? "is missing; choose" : `${show(doc.category)} is not`} one of ${CATEGORIES.join(", ")}`);
  if (has(doc, "keywords")) {
    const kw = doc.keywords;
    if (!Array.isArray(kw)) add("PLG-LISTING-KEYWORDS", "keywords", "must be an array of strings");
    else {
      if (kw.length > 12) add("PLG-LISTING-KEYWORDS", "keywords", `has ${kw.length} entries; at most 12`);
      kw.forEach((w, i) => {
        if (typeof w !== "string" || !w.trim() || chars(w) > 30) add("PLG-LISTING-KEYWORDS", `keywords[${i}]`, `${show(w)} must be 1 to 30 characters`);
        else if (CONTROL_RE.test(w) || MARKUP_RE.test(w)) add("PLG-LISTING-KEYWORDS", `keywords[${i}]`, "must be plain text");
      });
    }
  }
  const links = doc.links;
  if (links === undefined || links === null) {
    add("PLG-NO-PRIVACY-POLICY", "links.privacy", "is missing");
    add("PLG-NO-SUPPORT-CONTACT", "links.support", "is missing");
  } else if (!isObject(links)) add("PLG-LISTING-INVALID", "links", "must be an object {privacy, support}");
  else {
    unknown(links, ["privacy", "support"], "links");
    const privacy = links.privacy;
    if (privacy === undefined || privacy === null || privacy === "") add("PLG-NO-PRIVACY-POLICY", "links.privacy", "is missing");
    else link(privacy, "links.privacy");
    const support = links.support;
    if (!isObject(support)) add("PLG-NO-SUPPORT-CONTACT", "links.support", support === undefined || support === null ? "is missing" : "must be an object with url, email or both");
    else {
      unknown(support, ["url", "email"], "links.support");
      const url = support.url ?? null;
      const email = support.email ?? null;
      if (url === null && email === null) add("PLG-NO-SUPPORT-CONTACT", "links.support", "has neither url nor email");
      if (url !== null) link(url, "links.support.url");
      if (email !== null) {
        const why = emailProblem(email);
        if (why) add("PLG-NO-SUPPORT-CONTACT", "links.support.email", `${show(email)} ${why}`);
      }
    }
  }
  const declared = manifest.sources.map((s) => s.name);
  const sources = doc.sources;
  if (sources === undefined || sources === null) {
    if (declared.length) add("PLG-LISTING-SOURCE", "sources", "is missing; list every declared source");
  } else if (!Array.isArray(sources)) add("PLG-LISTING-SOURCE", "sources", "must be an array, one entry per source");
  else {
    const listed = new Set();
    sources.forEach((entry, i) => {
      const at = `sources[${i}]`;
      if (!isObject(entry)) return add("PLG-LISTING-SOURCE", at, "must be an object {name, title, page, licence}");
      unknown(entry, ["name", "title", "page", "licence"], at);
      const name = entry.name;
      if (!declared.includes(name)) add("PLG-LISTING-SOURCE", `${at}.name`, absent(name) ? `is missing; name a declared source (${declared.join(", ")})` : `${show(name)} is not a declared source`);
      else if (listed.has(name)) add("PLG-LISTING-SOURCE", `${at}.name`, `${name} is listed twice`);
      else listed.add(name);
      const title = entry.title;
      if (typeof title !== "string" || !title.trim() || chars(title) > 200) add("PLG-LISTING-SOURCE", `${at}.title`, "must be 1 to 200 characters");
      else if (CONTROL_RE.test(title) || MARKUP_RE.test(title)) add("PLG-LISTING-SOURCE", `${at}.title`, "must be one line of plain text");
      if (!has(entry, "page")) add("PLG-LISTING-SOURCE", `${at}.page`, "is missing");
      else link(entry.page, `${at}.page`);
      const lic = entry.licence;
      if (!isObject(lic)) return add("PLG-LISTING-SOURCE", `${at}.licence`, "must be an object {name, url}");
      unknown(lic, ["name", "url"], `${at}.licence`);
      if (typeof lic.name !== "string" || !lic.name.trim() || chars(lic.name) > 200) add("PLG-LISTING-SOURCE", `${at}.licence.name`, "must be 1 to 200 characters");
      if (!has(lic, "url")) add("PLG-LISTING-SOURCE", `${at}.licence.url`, "is missing");
      else link(lic.url, `${at}.licence.url`);
    });
    for (const name of declared) if (!listed.has(name)) add("PLG-LISTING-SOURCE", "sources", `declared source ${name} is not listed`);
  }
  const ex = doc.examples;
  if (!Array.isArray(ex) || ex.length < 1 || ex.length > 3) add("PLG-LISTING-EXAMPLE", "examples", "must be an array of 1 to 3 days");
  if (Array.isArray(ex)) {
    const seenDays = new Set();
    ex.forEach((entry, i) => {
      const at = `examples[${i}]`;
      if (!isObject(entry)) return add("PLG-LISTING-EXAMPLE", at, "must be an object {date, caption}");
      unknown(entry, ["date", "caption"], at);
      const day = entry.date;
      if (!(typeof day === "string" && isDate(day))) add("PLG-LISTING-EXAMPLE", `${at}.date`, absent(day) ? "is missing; give a day the fixtures cover, YYYY-MM-DD" : `${show(day)} is not a date YYYY-MM-DD`);
      else if (!fixtureDates.has(day)) add("PLG-LISTING-EXAMPLE", `${at}.date`, `${day} is not a day the fixtures cover`);
      else if (seenDays.has(day)) add("PLG-LISTING-EXAMPLE", `${at}.date`, `${day} is shown twice`);
      else seenDays.add(day);
      texts(entry.caption, `${at}.caption`, "PLG-LISTING-EXAMPLE", 200, true, "PLG-LISTING-EXAMPLE");
    });
  }
  const why = icon === null || icon === undefined ? "is missing" : iconProblem(icon);
  if (why) out.push(problem("PLG-LISTING-ICON", `listing/icon.png ${why}`, { path: "listing/icon.png" }));
  return out;
}

// ---------------------------------------------------------------------------------------------
// review.json ("Review information"): its shape (PLG-REVIEW-INVALID) and its example days in
// what the fixtures produce (PLG-REVIEW-EXAMPLE). The same rules as
// src/almanac/platform/contract/review.py; tests/conformance/reviews/ holds the cases.
// ---------------------------------------------------------------------------------------------

const REVIEW_KEYS = ["examples", "negatives", "sources", "releaseNotes", "notes"];
const REVIEW_EXAMPLE_KEYS = ["date", "series", "expect", "note"];
const REVIEW_NEGATIVE_FIELDS = { "no-record": ["date", "series"], "in-force": ["date", "from", "series"], "source-fails": ["case"] };
const REVIEW_SOURCE_KEYS = ["source", "holder", "terms", "basis", "evidence"];
const REVIEW_MAX_TEXT = 2000;
const REVIEW_LANGUAGE = /^[a-z]{2,3}(?:-[A-Za-z0-9]{2,8})*$/;

const reviewText = (v) => typeof v === "string" && v.trim() !== "" && [...v].length <= REVIEW_MAX_TEXT;
const reviewDay = (v) => {
  if (typeof v !== "string" || !/^\d{4}-\d{2}-\d{2}$/.test(v)) return false;
  const d = new Date(`${v}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === v;
};
const sameValue = (a, b) => {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a), kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => has(b, k) && sameValue(a[k], b[k]));
};

/** Every way review.json (its text, or parsed object) breaks its shape for this manifest. */
export function validateReview(review, manifest) {
  const out = [];
  const add = (at, message) => out.push(problem("PLG-REVIEW-INVALID", `${at ? `review.json ${at}` : "review.json"}: ${message}`, at ? { path: at } : {}));
  let doc = review;
  if (typeof review === "string") {
    try {
      doc = JSON.parse(review);
    } catch (e) {
      add("", `is not JSON (${e.message})`);
      return out;
    }
  }
  if (!isObject(doc)) {
    add("", "must be one JSON object");
    return out;
  }
  const keys = (o, allowed, at) => { for (const k of Object.keys(o)) if (!allowed.includes(k)) add(`${at}${k}`, `is not a key here (${allowed.join(", ")})`); };
  keys(doc, REVIEW_KEYS, "");
  const series = new Set(manifest.series.map((s) => s.key));
  if (has(doc, "examples")) {
    const value = doc.examples;
    if (!Array.isArray(value)) add("examples", "must be an array of example days");
    else {
      if (value.length > 5) add("examples", `has ${value.length} entries; at most 5`);
      value.forEach((ex, i) => {
        const at = `examples[${i}]`;
        if (!isObject(ex)) return add(at, "must be an object with date, series and expect");
        keys(ex, REVIEW_EXAMPLE_KEYS, `${at}.`);
        if (!reviewDay(ex.date)) add(`${at}.date`, "must be a day YYYY-MM-DD");
        if (!series.has(ex.series)) add(`${at}.series`, `${JSON.stringify(ex.series ?? null)} is not a series of the manifest`);
        if (!isObject(ex.expect) || !Object.keys(ex.expect).length) add(`${at}.expect`, "must be an object: figures by field, or state and title");
        if (has(ex, "note") && !reviewText(ex.note)) add(`${at}.note`, `must be text of 1 to ${REVIEW_MAX_TEXT} characters`);
      });
    }
  }
  if (has(doc, "negatives")) {
    const value = doc.negatives;
    if (!Array.isArray(value) || !value.length) add("negatives", "must be an array of at least one case that must fail");
    else value.forEach((neg, i) => {
      const at = `negatives[${i}]`;
      if (!isObject(neg)) return add(at, "must be an object with kind and why");
      const needed = typeof neg.kind === "string" && has(REVIEW_NEGATIVE_FIELDS, neg.kind) ? REVIEW_NEGATIVE_FIELDS[neg.kind] : null;
      if (!needed) return add(`${at}.kind`, `${JSON.stringify(neg.kind ?? null)} is not one of ${Object.keys(REVIEW_NEGATIVE_FIELDS).join(", ")}`);
      keys(neg, ["kind", "why", ...needed], `${at}.`);
      if (!reviewText(neg.why)) add(`${at}.why`, "must say why the case fails");
      for (const name of needed) {
        const found = neg[name];
        if ((name === "date" || name === "from") && !reviewDay(found)) add(`${at}.${name}`, "must be a day YYYY-MM-DD");
        else if (name === "series" && !series.has(found)) add(`${at}.series`, `${JSON.stringify(found ?? null)} is not a series of the manifest`);
        else if (name === "case" && !(typeof found === "string" && found && !found.includes("/"))) add(`${at}.case`, "must name a folder of fixtures/runs/");
      }
    });
  }
  if (has(doc, "sources")) {
    const value = doc.sources;
    const declared = new Set(manifest.sources.map((s) => s.name));
    if (!Array.isArray(value)) add("sources", "must be an array with an entry per source");
    else value.forEach((entry, i) => {
      const at = `sources[${i}]`;
      if (!isObject(entry)) return add(at, `must be an object with ${REVIEW_SOURCE_KEYS.join(", ")}`);
      keys(entry, REVIEW_SOURCE_KEYS, `${at}.`);
      if (!declared.has(entry.source)) add(`${at}.source`, `${JSON.stringify(entry.source ?? null)} is not a source of the manifest`);
      for (const name of REVIEW_SOURCE_KEYS.slice(1)) if (!reviewText(entry[name])) add(`${at}.${name}`, `must be text of 1 to ${REVIEW_MAX_TEXT} characters`);
    });
  }
  if (has(doc, "releaseNotes")) {
    const notes = doc.releaseNotes;
    if (!isObject(notes) || !Object.keys(notes).length || !Object.entries(notes).every(([k, v]) => REVIEW_LANGUAGE.test(k) && reviewText(v))) add("releaseNotes", "must be an object of texts by language code (en, pt-BR)");
  }
  if (has(doc, "notes") && !reviewText(doc.notes)) add("notes", `must be text of 1 to ${REVIEW_MAX_TEXT} characters`);
  return out;
}

/** Each example day of review.json (parsed) not in `records` (what the fixtures produce). */
export function reviewExampleProblems(review, records) {
  if (!isObject(review) || !Array.isArray(review.examples)) return [];
  const byDay = new Map();
  for (const r of records) {
    const k = JSON.stringify([r.series ?? null, r.date ?? null]);
    if (!byDay.has(k)) byDay.set(k, []);
    byDay.get(k).push(r);
  }
  const matches = (r, expect) => r.kind === "value"
    ? Object.entries(expect).every(([k, v]) => isObject(r.fields) && has(r.fields, k) && sameValue(r.fields[k], v))
    : Object.entries(expect).every(([k, v]) => has(r, k) && sameValue(r[k], v));
  const out = [];
  review.examples.forEach((ex, i) => {
    if (!isObject(ex) || !isObject(ex.expect) || !Object.keys(ex.expect).length) return;
    const found = byDay.get(JSON.stringify([ex.series ?? null, ex.date ?? null])) || [];
    if (found.some((r) => matches(r, ex.expect))) return;
    const given = found.length ? found.slice(0, 3).map((r) => JSON.stringify(r.kind === "value" ? r.fields || {} : r.kind === "event" ? { state: r.state, title: r.title } : { title: r.title })).join("; ") : "no record";
    out.push(problem("PLG-REVIEW-EXAMPLE", `review.json examples[${i}]: on ${ex.date} series ${ex.series} the fixtures give ${given}, not ${JSON.stringify(ex.expect)}`, { path: `examples[${i}]` }));
  });
  return out;
}

function checkReviewFolder(root, manifest, records) {
  const text = fs.readFileSync(path.join(root, "review.json"), "utf8");
  const out = validateReview(text, manifest);
  let doc = null;
  try {
    doc = JSON.parse(text);
  } catch {
    doc = null;
  }
  out.push(...reviewExampleProblems(doc, records));
  for (const p of out) p.file = "review.json";
  return out;
}

function checkListingFolder(root, manifest, records) {
  const text = fs.readFileSync(path.join(root, "listing.json"), "utf8");
  const iconFile = path.join(root, "listing", "icon.png");
  const icon = fs.existsSync(iconFile) ? fs.readFileSync(iconFile) : null;
  const out = validateListing(text, manifest, { icon, fixtureDates: new Set(records.map((r) => r.date)) });
  for (const p of out) p.file = "listing.json";
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

/**
 * `x` rounded to `places` decimals, half away from zero on its decimal text: the shortest
 * digits that read back as the same number (String(x)), which are the digits the source
 * printed when it printed at most 17 significant ones. So 15.905 shows 15.91 and 2.675 shows
 * 2.68, although both are stored a little below. Every digit is written (never an exponent),
 * and a zero never carries a sign. `x` is finite.
 */
export function roundDecimal(x, places) {
  const [, sign, whole, fraction = "", exponent = "0"] = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(x));
  let digits = whole + fraction;
  let point = whole.length + Number(exponent);
  if (point < 0) {
    digits = "0".repeat(-point) + digits;
    point = 0;
  }
  const keep = point + places;
  digits = digits.padEnd(keep + 1, "0");
  let kept = BigInt(digits.slice(0, keep) || "0");
  if (digits[keep] >= "5") kept += 1n;
  const text = kept.toString().padStart(places + 1, "0");
  const shown = places ? `${text.slice(0, -places)}.${text.slice(-places)}` : text;
  return sign && kept !== 0n ? `-${shown}` : shown;
}
/** Two decimals, half away from zero on the decimal text (roundDecimal); never "-0.00". */
export function twoDecimals(x) {
  return roundDecimal(x, 2);
}
function signed(text) {
  return /^-/.test(text) || /^0(\.0+)?$/.test(text) ? text : `+${text}`;
}
/** Change from prev to cur: basis points when the unit is %, else a signed percent; null without a base or when it overflows. */
export function changeOf(cur, prev, unit) {
  if (typeof cur !== "number" || typeof prev !== "number") return null;
  if (unit === "%") {
    // Steadied to 6 decimals first, so 5.75 - 5.5 is 25 bp, not 24.999...
    const scaled = (cur - prev) * 100;
    if (!Number.isFinite(scaled)) return null;
    return { text: `${signed(roundDecimal(Number(roundDecimal(scaled, 6)), 0))} bp`, unit: "bp" };
  }
  if (prev === 0) return null;
  const ratio = ((cur - prev) / Math.abs(prev)) * 100;
  if (!Number.isFinite(ratio)) return null;
  return { text: `${signed(twoDecimals(ratio))}%`, unit: "percent" };
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
  const attribution = manifest.licence.attribution ?? manifest.licence.holder;
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
    return { type: "value", series: s.key, label, date: r.date, figures, change, style, note, attribution };
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
    const base = { type: "event", series: s.key, id: r.id, label: title, date: r.date, figures: [], change: null };
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
    if (row.figures.length) parts.push(row.figures.map((f) => f.text).join("  "));
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
/** The web calendar's own stylesheet block (src/almanac/api/pages/static/almanac.css, between
 * its "shared with the tool" marks; tests/tool/page.test.mjs keeps the two equal). */
export const CALENDAR_CSS = `/* shared with the tool: begin */
/* The calendar's colours and its agenda of days with their rows: "preview --html" of
   tool/almanac-plugin.mjs embeds this block as it stands here (tests/tool/page.test.mjs). */
:root {
  --ink: #1d1d1f; --soft: #555a60; --faint: #5f6368; --line: #d9d9d4; --bg: #f7f7f5;
  --card: #fff; --accent: #1f55c6; --accent-bg: #e8effd; --weekend: #f1f1ee; --danger: #a3231b;
  --focus: #ffbf47;
}
.sr-only { position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; border: 0; }
.c.cancelled, .row.cancelled .name { text-decoration: line-through; }
.marker { color: var(--accent); }
.agenda { list-style: none; margin: 0; padding: 0; }
.agenda-day { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 10px 14px; margin-bottom: 10px; }
.agenda-day.today { border-color: var(--accent); box-shadow: inset 4px 0 0 var(--accent); }
.agenda-day h2 { font-size: 1rem; margin: 0 0 4px; }
.agenda-day h2 a { color: var(--ink); text-decoration: none; }
.today-mark { font-size: .8rem; color: #fff; background: var(--accent); border-radius: 4px; padding: 1px 6px; margin-left: 6px; }
.section-name { font-size: .8rem; text-transform: uppercase; letter-spacing: .04em; color: var(--soft); margin: 10px 0 2px; }
ul.rows { list-style: none; margin: 0; padding: 0; }
.row { display: flex; flex-wrap: wrap; gap: 4px 8px; align-items: baseline; padding: 4px 0; border-bottom: 1px solid #eeeeea; }
.row:last-child { border-bottom: 0; }
.row .name { font-weight: 500; }
.row .lab, .row .change, .row .note, .row .attr { color: var(--soft); font-size: .88rem; }
.row .num { font-variant-numeric: tabular-nums; }
.row .attr { margin-left: auto; }
.row.in-force, .row.last, .row.status { color: var(--faint); }
.row.in-force .name, .row.last .name { font-weight: 400; }
/* shared with the tool: end */`;
const LONG_DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const LONG_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
/** `Friday 5 June 2026`, as the calendar writes a day. */
const longDate = (d) => `${LONG_DAYS[((dateToDays(d) % 7) + 11) % 7]} ${Number(d.slice(8, 10))} ${LONG_MONTHS[Number(d.slice(5, 7)) - 1]} ${d.slice(0, 4)}`;

/** A self-contained page drawn as the web calendar's agenda draws days: the same markup for
 * each row and the same stylesheet, so a publisher previews what readers will see. Days with
 * nothing stay out, as in the agenda; today is marked. */
export function daysHtml(days, { title, today }) {
  const rowClass = (row) => `row ${row.type}${row.type === "value" ? ` ${row.style}` : row.type === "event" ? ` ${row.state}` : row.type === "status" ? ` ${row.status}` : ""}`;
  const rowHtml = (row) => {
    const open = `<li class="${esc(rowClass(row))}" data-type="${esc(row.type)}"${row.type !== "status" ? ` data-series="${esc(row.series)}"` : ""}>`;
    if (row.type === "item") return `${open}<a class="name" href="${esc(row.href)}" rel="noopener noreferrer">${esc(row.label)}</a></li>`;
    if (row.type === "status") return `${open}<span class="note">${esc(row.note)}</span></li>`;
    const marker = row.type === "event" && row.state === "scheduled" ? `<span class="marker" aria-hidden="true">◆</span> ` : "";
    // An event's one figure is labelled with the series name the row already shows.
    const figs = (row.figures || []).map((f) => ` <span class="fig">${row.type === "value" ? `<span class="lab">${esc(f.label)}</span> ` : ""}<span class="num" aria-hidden="true">${esc(f.text)}</span><span class="sr-only spoken">${esc(f.spoken)}</span></span>`).join("");
    return `${open}${marker}<span class="name">${esc(row.label)}</span>${figs}${row.change ? ` <span class="change">${esc(row.change.text)}</span>` : ""}${row.note ? ` <span class="note">${esc(row.note)}</span>` : ""}${row.type === "value" ? ` <span class="attr">${esc(row.attribution)}</span>` : ""}</li>`;
  };
  const sectionHtml = (s) => `<div class="section" data-plugin="${esc(s.plugin)}"><h3 class="section-name">${esc(s.name)}</h3><ul class="rows">${s.rows.map(rowHtml).join("")}</ul></div>`;
  const body = days
    .filter((day) => day.sections.length || day.date === today)
    .map((day) => `<li class="agenda-day${day.date === today ? " today" : ""}" data-date="${esc(day.date)}"><h2>${esc(longDate(day.date))}${day.date === today ? ` <span class="today-mark">Today</span>` : ""}</h2>${day.sections.map(sectionHtml).join("")}</li>`)
    .join("\n");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}: preview</title>
<style>
${CALENDAR_CSS}
* { box-sizing: border-box; }
html { font: 16px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: var(--bg); }
body { margin: 0; }
main { max-width: 44rem; margin: 0 auto; padding: 12px 16px 32px; }
h1 { font-size: 1.6rem; margin: .4rem 0 .8rem; }
a { color: var(--accent); }
</style></head><body><main><h1>${esc(title)}</h1>
<ol class="agenda">
${body}
</ol>
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

/**
 * Host names pinned to addresses by ALMANAC_PLUGIN_RESOLVE ("host=address,host=address"), as
 * curl's --resolve: for trying a source served from this machine. TLS still checks the name.
 */
function resolveOverrides(env = process.env) {
  const map = new Map();
  for (const pair of (env.ALMANAC_PLUGIN_RESOLVE || "").split(",").filter(Boolean)) {
    const i = pair.indexOf("=");
    if (i > 0) map.set(pair.slice(0, i).trim().toLowerCase(), pair.slice(i + 1).trim());
  }
  return map;
}

export const DOWNLOAD_SECONDS = 60;
/**
 * Download one source: {ok: true, body} or {ok: false, detail}. `seconds` (60, the spec's
 * limit; a parameter for tests) bounds the whole download, redirects included, not only a
 * silence between packets.
 */
export async function downloadSource(source, { today, hosts, base = baseUrl(), onProgress = () => {}, seconds = DOWNLOAD_SECONDS }) {
  const https = await import("node:https");
  const limit = source.maxBytes || MAX_BYTES;
  let url = fillUrl(source.url, today);
  const deadline = Date.now() + seconds * 1000;
  const late = `took over ${seconds} seconds`;
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
    const res = await new Promise((settle) => {
      const left = deadline - Date.now();
      if (left <= 0) return settle({ ok: false, detail: late });
      let timer = null;
      const resolve = (v) => {
        clearTimeout(timer);
        settle(v);
      };
      const pinned = resolveOverrides().get(u.hostname);
      const lookup = pinned ? (_h, opts, cb) => (opts && opts.all ? cb(null, [{ address: pinned, family: pinned.includes(":") ? 6 : 4 }]) : cb(null, pinned, pinned.includes(":") ? 6 : 4)) : undefined;
      const req = https.request(u, { method: "GET", lookup, headers: { "user-agent": `Almanac plug-ins (+${base})`, accept: "*/*" } }, (resp) => {
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
      timer = setTimeout(() => {
        resolve({ ok: false, detail: late });
        req.destroy();
      }, left);
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

// Well-known acronyms that have a vowel (a part without one is an acronym anyway): central
// banks, statistics offices, currencies, places and common indicators.
export const KNOWN_ACRONYMS = new Set([
  "ecb", "fed", "fomc", "imf", "oecd", "ons", "boe", "boj", "snb", "rba", "bis", "eia", "iea", "opec", "ilo", "wto", "nber", "bea", "noaa", "nasa", "nyse", "sec", "eu", "un", "uk", "us", "usa", "uae",
  "usd", "eur", "gbp", "jpy", "aud", "cad", "nzd", "cny", "sek", "nok", "dop", "mxn", "inr", "hkd", "sgd", "zar", "brl",
  "cpi", "ppi", "pmi", "ism", "api",
]);
/**
 * The display name of an id (tool 1.4.0: acronyms kept). Each hyphen-separated part becomes a
 * word. A part is an acronym, written in capitals, when it has no vowel (a, e, i, o, u, y:
 * bls, fx, gdp, bcrd, h10) or is a well-known acronym of KNOWN_ACRONYMS (ecb, fed, fomc, imf,
 * oecd, ons, usd, eur, uk, us, eu, un, cpi, ...); every other part gets a capital first letter.
 * `ecb-fx-rates` -> "ECB FX Rates", `my-value-plugin` -> "My Value Plugin".
 */
export function nameFromId(id) {
  return id.split("-").filter(Boolean).map((part) => {
    const acronym = !/[aeiouy]/.test(part) || KNOWN_ACRONYMS.has(part);
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
    value: { key: "rate", kind: "value", cadence: "business-day", dates: "observation", name: { en: "Rate" }, fields: ["rate"], fieldNames: { rate: { en: "Rate" } } },
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
    let v = 58.1275;
    for (let i = 10; i >= 0; i--) {
      const day = d(-i);
      const wd = ((dateToDays(day) % 7) + 11) % 7;
      if (wd === 0 || wd === 6) continue;
      rows.push(`${day},${v.toFixed(4)}`);
      v += i % 3 === 0 ? -0.1375 : 0.0625;
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

// The first run (backfill true) prints every day backfillFrom allows (null: all of them). A
// later run prints from the newest stored day on: days missed since then fill in, and that day
// is printed again in case the source corrected it. Start earlier if the source revises older days.
const { backfill, backfillFrom = null, series } = context;
const from = (backfill ? backfillFrom : series.rate.last ?? backfillFrom) ?? "0000-01-01";
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

// Each run restates the snapshot window of plugin.json ("back": "30d"): an event left out
// there is counted missing, and withdrawn after three runs.
const SNAPSHOT_BACK_DAYS = 30;
function daysBefore(date, days) {
  const day = new Date(\`\${date}T00:00:00Z\`);
  day.setUTCDate(day.getUTCDate() - days);
  return day.toISOString().slice(0, 10);
}
// The first run (backfill true) prints every event backfillFrom allows (null: all of them). A
// later run prints the snapshot window, and further back to the newest stored event when that
// is older, so missed days fill in.
const { backfill, backfillFrom = null, series, today } = context;
const windowStart = daysBefore(today, SNAPSHOT_BACK_DAYS);
const last = series.meetings.last;
const from = (backfill ? backfillFrom : last !== null && last < windowStart ? last : windowStart) ?? "0000-01-01";
const out = [];
for (const event of calendar.events) {
  const state = STATES[event.status];
  if (!state) fail(\`calendar: unknown status "\${event.status}" for event \${event.id}\`);
  if (event.date < from) continue;
  // Only a scheduled event may lie after today; a cancelled one is left out until its day.
  if (event.date > today && state !== "scheduled") continue;
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

// The first run (backfill true) prints every notice backfillFrom allows (null: all of them).
// A later run prints from the newest stored day on, so days missed since then fill in.
const { backfill, backfillFrom = null, series } = context;
const from = (backfill ? backfillFrom : series.notices.last ?? backfillFrom) ?? "0000-01-01";
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
  // A later run a day on, on the same files: backfill false and the state the fixture run left.
  const nextNow = new Date(Date.parse(now) + 86400000).toISOString().replace(/\.\d+Z$/, "Z");
  const files = {
    "plugin.json": JSON.stringify(manifest, null, 2) + "\n",
    "fetch.mjs": fetcher,
    [`fixtures/sources/${source}`]: sample,
    "fixtures/context.json": JSON.stringify({ now, today }, null, 2) + "\n",
    [`fixtures/runs/source-changed/sources/${source}`]: broken,
    "fixtures/runs/source-changed/expect.json": JSON.stringify({ exit: 2, reason: failReason }, null, 2) + "\n",
    "fixtures/runs/next-day/context.json": JSON.stringify({ now: nextNow, today: dateInZone(new Date(nextNow), zone) }, null, 2) + "\n",
    "README.md": `${README_MARK}\n# ${name}\n\nAn Almanac calendar plug-in: it puts ${kind === "value" ? "values" : kind === "event" ? "events" : "items"} from ${sourceUrl} on calendar days.\n\n- \`plugin.json\`: the manifest.\n- \`fetch.mjs\`: the fetcher (reads \`fixtures/sources/${source}\` in checks).\n- \`fixtures/\`: a real copy of each source, the records it gives, and run cases.\n\nCheck it with \`node almanac-plugin.mjs check ${id}\`; see the days with \`node almanac-plugin.mjs preview ${id}\`.\n`,
    "AGENTS.md": AGENTS_MD,
    "CLAUDE.md": CLAUDE_MD,
  };
  return files;
}

// AGENTS.md and CLAUDE.md name nothing of the template (no id, source or series), so they stay
// true when the plug-in's keys are renamed.
const AGENTS_MD = `# Instructions for agents writing this Almanac plug-in

This folder is an Almanac calendar plug-in: \`plugin.json\` (the manifest) says what to download,
what to write and when; \`fetch.mjs\` (the fetcher) turns the downloaded files into dated records.
Almanac downloads the sources itself and runs the fetcher with no network. Your job is usually
to make \`fetch.mjs\` read the real files in \`fixtures/sources/\` correctly.

## The run context (stdin)
The fetcher reads one JSON object from standard input:
- \`contract\` 1; \`plugin\` the manifest's \`id\`; \`now\` (UTC instant); \`today\` (YYYY-MM-DD in the manifest's zone).
- \`backfill\`: true on the first run (nothing stored); \`backfillFrom\`: the first date a backfill prints, or null for all.
- \`sources\`: source name -> file path. Read only these paths; never build paths yourself.
- \`series\`: series key -> \`{last, count}\`: the newest stored date on or before today, and how many are stored.

## Output
One JSON object per line on stdout; everything else (messages) on stderr. Record kinds:
- value: \`{"kind":"value","series","date","fields":{field: number}}\` (+ \`period\`, \`revises\` only for series dated by publication).
- event: \`{"kind":"event","series","id","date","state":"scheduled|happened|cancelled"}\` (+ \`value\`, \`title\`).
- item: \`{"kind":"item","series","date","id","title","url"}\`; the url is https to a source host or a \`links.hosts\` host.
No other keys. Every series and field must be declared in plugin.json. Nothing may be dated after
\`today\` except a scheduled event. The same record twice refuses the whole run.
A series' \`unit\` (at most 16 characters, such as \`USD\` or \`%\`) is optional: give it when the
figures have one; it decides how a change is shown (basis points for \`%\`) and how a screen reader
says the figure.

## Rules that matter
- Determinism: the same files and context give the same bytes. No timestamps, random numbers,
  system clock (use \`today\` from the context) or environment. Almanac runs the fixtures twice.
- Imports: only your own \`.mjs\` files (relative paths) and \`node:\` built-ins. No packages, no network.
- Read only the paths in \`context.sources\` and your own code files: \`fixtures/\`, \`listing/\` and
  README.md are not there when Almanac runs the fetcher (PLG-RUN-READ-OUTSIDE).
- Stay within \`limits\` (seconds; megabytes of memory above Node's own, Buffers included) and 64 MB of output.
- When a file is not what the fetcher knows (renamed column, new status, missing list), print one
  line on stderr explaining it and exit 2. Never guess: nothing is written and the reader sees that
  the plug-in could not refresh. Exit 0 when the files read as expected, even with nothing new.
- First run (\`backfill\` true): print what \`backfillFrom\` allows. Later runs: print at least each
  series' snapshot window, and further back to the series' \`last\` when that is older, so missed
  days fill. Print the whole truth for a snapshot window on every run: a record left out there is
  counted missing and withdrawn after three runs.

## The check loop
Commands below name the tool \`almanac-plugin.mjs\`: give its path from where you run them.
1. Put one real copy of each source in \`fixtures/sources/<source name>\`, named as the source's
   \`name\` in plugin.json.
2. \`node almanac-plugin.mjs check\` runs the fetcher on them (twice) with \`fixtures/context.json\`,
   checks the manifest, imports and every record, and compares the output byte for byte with
   \`fixtures/records.jsonl\`. \`check --update\` writes the output there instead: read the diff.
3. \`fixtures/runs/<case>/\` holds later runs: \`sources/\` (files that differ), optional \`context.json\`,
   and \`records.jsonl\` (expected output of a later run: \`backfill\` false, each series' \`last\` and
   \`count\` from \`fixtures/records.jsonl\`) or \`expect.json\` (\`{"exit": 2, "reason": "words"}\` for a
   source the fetcher must refuse).
4. \`node almanac-plugin.mjs check --json\` prints every finding with its code, fix and docs link.
5. \`node almanac-plugin.mjs preview\` draws the days as a reader sees them.
Repeat until check passes. Do not edit \`fixtures/records.jsonl\` by hand to make a check pass.

## Publishing (an agent login approved by a person)
Every publishing command takes \`--json\` (one JSON object on stdout) and exits 0 done, 1 not
logged in, unreachable or refused (the code and message on stderr, then \`next:\`), 2 not
understood. Do what each \`next:\` line (or \`next\` with \`--json\`) says.
1. \`node almanac-plugin.mjs login --server <address> --name <your name>\` prints a code and an
   address: ask an owner or admin of the organization to open it and approve (they choose whether
   you may publish). It waits; run it again within 10 minutes and it waits for the same code.
2. For an update, \`node almanac-plugin.mjs check --against <version id>\` first: the version number
   and the update rules, as the server applies them at upload.
3. \`node almanac-plugin.mjs upload\` checks, packs and uploads this folder (nothing is sent when
   check fails), then \`status --wait\` follows the checks until they are final. \`status\` exits
   0 when every check passed, 1 when one failed (fix it, raise \`version\`, upload again), 3 while
   they are still being made; it also shows a reviewer's decision with its reason and note.
4. \`node almanac-plugin.mjs review --file review.json --attest\` sends the review information and
   makes the five attestations in the organization's name: make them only when they are true.
5. \`node almanac-plugin.mjs submit\`: refused with every reason until all conditions hold; the
   reasons for a person (domain, agreement, invitation) are theirs to settle in the portal.
   Then \`status\` shows the reviewer's decision: changes requested come with the reason and note.
6. Once approved, \`publish\` (and later \`unpublish\`, \`relist\`) only when your login allows
   publishing (else AGENT_MAY_NOT_PUBLISH): otherwise tell a person it is ready.
Never: verify the domain, accept the agreement, approve agents, or retire (AGENT_FORBIDDEN).
\`logout\` revokes your token when you are done.

## The tool as an MCP server
\`node almanac-plugin.mjs mcp\` serves these commands as Model Context Protocol tools over
standard input and output (\`node almanac-plugin.mjs help mcp\` prints the entry for a client's
configuration, such as \`.mcp.json\`: command \`node\`, arguments the tool's path and \`mcp\`).
Each tool answers with the object its command's \`--json\` prints; a refusal carries its code,
fix, docs link and \`next\`. The \`login\` tool only gives the command a person approves, and
\`retire\` is refused. Its resources hold every problem code's page (\`almanac://problems/<code>\`)
and this guide (\`almanac://guide/agents\`), with no network.
`;

const CLAUDE_MD = `# Instructions for Claude

@AGENTS.md

Read AGENTS.md above first: it is the whole contract for this folder. The loop is: edit, \`node almanac-plugin.mjs check\` (with the tool's path), read every finding (\`--json\` gives code, fix and docs link), repeat until it passes.

To publish, follow "Publishing" in AGENTS.md: login (a person approves the code), upload, status, review --file review.json --attest, submit; publish only when your login allows it. Use \`--json\` and read the exit code of every command.

The same commands are MCP tools when the tool runs as a server: \`claude mcp add almanac -- node <path to almanac-plugin.mjs> mcp\`, or the entry \`node almanac-plugin.mjs help mcp\` prints. Each tool's answer is its command's \`--json\` object; do what a refusal's \`next\` says.
`;

// ---------------------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------------------

export class UsageError extends Error {}
class Failure extends Error {}

/**
 * Where a command's answer goes: `json`, the one object --json prints; `text`, its words for a
 * person; `note`, findings, refusals and progress. The terminal's puts the object and the text
 * on stdout and notes on stderr; the MCP server gives each tool call its own (callTool), so its
 * standard output carries only protocol messages.
 */
const terminal = {
  json: (object) => process.stdout.write(JSON.stringify(object, null, 2) + "\n"),
  text: (text) => process.stdout.write(text),
  note: (text) => process.stderr.write(text),
};

/** The path shown beside a finding's code: none when its message begins with it already (the
 * update and manifest rules' messages do: "series: the update removes ..."). */
const shownPath = (p) => (p.path && p.path !== p.file && !String(p.message).startsWith(`${p.path}:`) ? p.path : null);

function printFindings(findings, out) {
  const base = baseUrl();
  for (const p of findings) {
    const where = [p.file, shownPath(p), p.line ? `line ${p.line}` : null].filter(Boolean).join(" ");
    out.note(`${p.severity} ${p.code}${where ? ` (${where})` : ""}: ${p.message}\n  fix: ${CATALOG_BY_CODE.get(p.code).fix}\n  docs: ${docsLink(p.code, base)}\n`);
  }
}

function folderArg(args) {
  const f = path.resolve(args.positional[0] ?? ".");
  if (!fs.existsSync(f) || !fs.statSync(f).isDirectory()) throw new Failure(`${args.positional[0] ?? "."} is not a folder`);
  return f;
}

/** A folder as the next step names it: relative to the current folder when that is shorter. */
function folderWord(root) {
  const relative = path.relative(process.cwd(), root) || ".";
  return shellWord(!commandsFromAnywhere && relative.length < root.length ? relative : root);
}

async function cmdCheck(args) {
  const { out } = args;
  const root = folderArg(args);
  const res = await checkFolder(root, { update: Boolean(args.options.update) });
  if (args.options.against !== undefined && res.manifest) {
    // Versioning 3 and 4 as the server applies them at upload, before anything is sent.
    const against = await againstVersion(args.options.against);
    res.findings.push(...updateRuleFindings(against.manifest, res.manifest, res.digest, against.digest));
    finish(res);
  }
  if (args.options.json) {
    out.json({ ok: res.ok, summary: res.summary, findings: res.findings.map((p) => findingJson(p)), digest: res.digest });
    return res.ok ? 0 : 1;
  }
  printFindings(res.findings, out);
  const id = res.manifest ? `${res.manifest.id} ${res.manifest.version}` : path.basename(root);
  (res.ok ? out.text : out.note)(`check ${id}: ${res.summary}${args.options.update && res.ok ? " (fixtures updated)" : ""}\n`);
  if (res.digest) out.text(`digest ${res.digest}\n`);
  return res.ok ? 0 : 1;
}

async function cmdDigest(args) {
  const { out } = args;
  const root = folderArg(args);
  const d = computeDigest(root);
  const ok = !d.problems.some((p) => p.severity === "error");
  if (args.options.json) {
    out.json({ ok, digest: d.digest, files: d.files, findings: d.problems.map((p) => findingJson(p)) });
    return ok ? 0 : 1;
  }
  printFindings(d.problems, out);
  if (args.options.files) out.text(d.files.map((f) => f + "\n").join(""));
  else out.text(d.digest + "\n");
  return ok ? 0 : 1;
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

/** pack and upload refused by the check: nothing written or sent. The first error names the
 * code; every finding comes with it. */
function checkRefusal(res, what, base = baseUrl()) {
  const first = res.findings.find((p) => p.severity === "error");
  return new PublishFailure("check", `${what}: refused, check ${res.summary}; nothing ${what === "pack" ? "written" : "sent"}`, { code: first.code, findings: res.findings.map((p) => findingJson(p, base)), docs: docsLink(first.code, base) });
}

async function cmdPack(args) {
  const { out } = args;
  const root = folderArg(args);
  const res = await checkFolder(root);
  if (!res.ok) throw checkRefusal(res, "pack");
  const readme = path.join(root, "README.md");
  if (fs.existsSync(readme) && fs.readFileSync(readme, "utf8").includes(README_MARK)) res.findings.push(problem("PLG-README-TEMPLATE", "README.md is still the template written by init", { path: "README.md" }));
  const file = path.resolve(args.options.out ?? path.join(path.dirname(root), `${res.manifest.id}-${res.manifest.version}.zip`));
  const { bytes, files } = packBytes(root, res.manifest, res.digest);
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, bytes);
  fs.renameSync(tmp, file);
  if (args.options.json) {
    out.json({ ok: true, file, files: files.length, bytes: bytes.length, digest: res.digest, findings: res.findings.map((p) => findingJson(p)) });
    return 0;
  }
  printFindings(res.findings, out);
  out.text(`packed ${file}: ${files.length} files, ${bytes.length} bytes\ndigest ${res.digest}\n`);
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

/** A real source that could not be downloaded (probe, preview --live), as a finding. */
const downloadProblem = (reason) => problem("PLG-SOURCE-DOWNLOAD", reason);

async function cmdPreview(args) {
  const { out } = args;
  const o = args.options;
  if (o.run !== undefined && o.live) throw new UsageError("--run and --live cannot be used together");
  if (o.html !== undefined && o.json) throw new UsageError("--html and --json cannot be used together");
  const days = o.days !== undefined ? parseDays(o.days) : null;
  const root = folderArg(args);
  const language = o.language ?? "en";
  if (!/^[a-z]{2,3}([-_][A-Za-z0-9]{2,8})?$/.test(language)) throw new UsageError(`--language "${language}" is not a language code such as en or es`);
  const check = await checkFolder(root);
  const manifest = check.manifest;
  // Nothing to draw: --json says so in its object (ok false, no days), the text on stderr.
  const cannot = (findings, why) => {
    if (o.json) out.json({ ok: false, summary: check.summary, cache: null, findings: findings.map((p) => findingJson(p)), digest: check.digest, days: [] });
    else {
      printFindings(findings, out);
      out.note(`preview${o.live ? " --live" : ""}: ${why}\n`);
    }
    return 1;
  };
  if (!manifest || !check.context && !o.live) return cannot(check.findings, `the fetcher could not run: ${check.summary}`);
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
      const c = readFixtureContext(path.join(dir, "context.json"), manifest, `fixtures/runs/${o.run}/context.json`);
      if (!c.problems) ctx = c.fixture;
    }
    today = ctx.today;
    const sources = sourcesFor(root, manifest, dir);
    const context = contextFromFixture(ctx, manifest, { sources, state: seriesState(manifest, records, today), backfill: false });
    const readPaths = [path.join(root, "fixtures", "sources"), path.join(dir, "sources")].filter((p) => fs.existsSync(p));
    const run = await runAndCheck(root, manifest, context, readPaths, `run case ${o.run}`);
    if (run.problems.length) {
      status = "failing";
      if (!o.json) out.note(`preview: run case ${o.run} fails (${run.problems[0].message}); showing the stored records\n`);
    } else records = applyRun(manifest, records, run.records);
    cache = { mode: `run:${o.run}`, sources: manifest.sources.map((s) => ({ name: s.name, path: path.relative(root, sources[s.name]) })) };
  } else if (o.live) {
    const now = isoNow();
    today = dateInZone(new Date(now), manifest.timezone);
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "almanac-live-"));
    try {
      const dl = await downloadAll(manifest, tmp, { today, quiet: Boolean(o.json) });
      if (!dl.ok) return cannot([...check.findings, downloadProblem(dl.reason)], dl.reason);
      const context = buildContext(manifest, { now, backfill: true, sources: dl.sources });
      const run = await runAndCheck(root, manifest, context, [tmp], "live run");
      if (run.problems.length) return cannot([...check.findings, ...run.problems], "the fetcher does not pass on the real sources");
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
    out.json({ ok: check.ok, summary: check.summary, cache, findings: check.findings.map((p) => findingJson(p)), digest: check.digest, today, language, status, days: rendered });
    return check.ok ? 0 : 1;
  }
  printFindings(check.findings, out);
  out.text(`${title} (${manifest.id} ${manifest.version}): ${range.from}..${range.to}, today ${today}, ${language}${status !== "running" ? `, ${status}` : ""}\n\n`);
  out.text(daysText(rendered, { today, colour: Boolean(process.stdout.isTTY) && out === terminal }));
  if (o.html !== undefined) {
    fs.writeFileSync(path.resolve(o.html), daysHtml(rendered, { title, today }));
    out.text(`\nwrote ${o.html}\n`);
  }
  return 0;
}

async function cmdProbe(args) {
  const { out } = args;
  const root = folderArg(args);
  const raw = fs.existsSync(path.join(root, "plugin.json")) ? readManifestText(fs.readFileSync(path.join(root, "plugin.json"), "utf8")) : { manifest: null, problems: [problem("PLG-MANIFEST-INVALID-JSON", "plugin.json is missing")] };
  const answer = (findings, extra, line) => {
    const ok = !findings.some((p) => p.severity === "error");
    if (args.options.json) out.json({ ok, ...extra, findings: findings.map((p) => findingJson(p)) });
    else {
      printFindings(findings, out);
      (ok ? out.text : out.note)(`${line}\n`);
    }
    return ok ? 0 : 1;
  };
  if (raw.problems.some((p) => p.severity === "error")) return answer(raw.problems, { today: null, records: 0, series: {} }, "probe: plugin.json does not pass");
  const manifest = raw.manifest;
  const now = isoNow();
  const today = dateInZone(new Date(now), manifest.timezone);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "almanac-probe-"));
  try {
    const dl = await downloadAll(manifest, tmp, { today, quiet: Boolean(args.options.json) });
    if (!dl.ok) return answer([downloadProblem(dl.reason)], { today, records: 0, series: {} }, `probe: ${dl.reason}`);
    const context = buildContext(manifest, { now, backfill: true, sources: dl.sources });
    const run = await runAndCheck(root, manifest, context, [tmp], "probe run");
    const series = {};
    for (const r of run.records) series[r.series] = (series[r.series] || 0) + 1;
    const n = run.problems.length;
    const line = n ? `probe: the fetcher does not pass on the real sources (${n} problem${n > 1 ? "s" : ""})` : `probe ${manifest.id}: ${run.records.length} records on ${today} (${Object.entries(series).map(([k, c]) => `${k} ${c}`).join(", ") || "none"})`;
    return answer(run.problems, { today, records: run.records.length, series }, line);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

async function cmdInit(args) {
  const { out } = args;
  const target = args.positional[0];
  if (target === undefined) throw new UsageError("init needs an id: init <id>");
  // init <id> makes ./<id>; init <folder>/<id> makes it inside that folder.
  const id = path.basename(target);
  if (!ID_RE.test(id)) throw new UsageError(`"${id}" is not an id: 2 to 48 lowercase letters, digits and hyphens, starting with a letter`);
  if (isReservedId(id)) throw new UsageError(`"${id}" is reserved for Almanac's own addresses`);
  const kind = args.options.kind ?? "value";
  if (!KINDS.includes(kind)) throw new UsageError(`--kind "${kind}": value, event or item`);
  let zone = args.options.timezone;
  if (zone === undefined) {
    zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    if (!isNamedZone(zone)) zone = "UTC";
  } else if (!isNamedZone(zone)) throw new UsageError(`--timezone "${zone}" is not a named IANA zone such as Europe/Berlin`);
  const root = path.resolve(target);
  if (fs.existsSync(root)) throw new Failure(`${target} already exists; init makes a new folder`);
  if (!fs.existsSync(path.dirname(root))) throw new Failure(`${path.dirname(target)} is not a folder`);
  const now = isoNow();
  const files = templateFiles(id, kind, zone, now);
  try {
    for (const [rel, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
      fs.writeFileSync(path.join(root, rel), text);
    }
    const res = await checkFolder(root, { update: true });
    if (!res.ok) {
      printFindings(res.findings, out);
      throw new Failure(`init: the new folder does not pass check (${res.summary}); this is a fault of the tool`);
    }
  } catch (e) {
    fs.rmSync(root, { recursive: true, force: true });
    throw e;
  }
  const folder = folderWord(root);
  const next = `put a real copy of each source in ${folder}/fixtures/sources/, edit fetch.mjs, then run: ${toolCommand()} check ${folder}`;
  if (args.options.json) {
    out.json({ ok: true, id, folder: root, kind, timezone: zone, files: Object.keys(files).sort(), next });
    return 0;
  }
  out.text(`created ${folder}/ (${kind}, ${zone}): plugin.json, fetch.mjs, fixtures/, README.md, AGENTS.md, CLAUDE.md\nnext: ${next}\n`);
  return 0;
}

const shellWord = (word) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`);
/** Whether the next steps name the tool and folders by their whole paths: the MCP server's
 * do, since the agent reading them may run them from any folder. */
let commandsFromAnywhere = false;
/** This tool as a command typed in the current folder: `node <its path>`, relative when that
 * is shorter, quoted for a shell when needed. */
export function toolCommand(cwd = process.cwd()) {
  const file = toolFile();
  const relative = path.relative(cwd, file);
  return `node ${shellWord(!commandsFromAnywhere && relative.length < file.length ? relative : file)}`;
}

/** The path of this file: the program run, or the module imported. */
function toolFile() {
  return invokedAsProgram ? path.resolve(process.argv[1]) : fileURLToPath(import.meta.url);
}

// ---------------------------------------------------------------------------------------------
// Publishing: the agent's login (OAuth 2.0 device grant, RFC 8628), its local files, and the
// commands that speak to the service's `portal` and `device` areas (DECISIONS 10). They talk
// only to the server given to `login` (kept beside the token), send the token nowhere else and
// follow no redirect. Exit 1: not logged in, unreachable, or refused (code and message on
// stderr, then what to do next); with --json one object on stdout, {ok: true, ...} or
// {ok: false, error} (see Refusals). status exits by the version's checks: 0 passed, 1 failed,
// 3 being made.
// ---------------------------------------------------------------------------------------------

export const CLIENT_ID = "almanac-plugin";
const DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";
const TOKEN_FILE = "plugin-token.json";
const LOGIN_FILE = "plugin-login.json";
const MACHINE_FILE = "machine.json";
export const ATTESTATIONS = ["may-publish-the-data", "sources-are-holders-own-publication", "no-record-names-a-private-person", "fetcher-never-tries-the-network", "words-inform-without-selling"];
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);
const REQUEST_TIMEOUT_MS = 120000;

/** A command that did not get done: kind not-logged-in, unreachable, redirect, refused (by the
 * service, or by the tool for an agent), or check (pack and upload when the check fails);
 * `code` and `findings` when the service refused with a problem, `fix` and `docs` when the
 * tool or the service says them, `next` what to do about it (else Refusals works it out),
 * `server` the service asked, `retryAfter` (ms) when the service said when to ask again. */
class PublishFailure extends Failure {
  constructor(kind, message, { status = null, code = null, findings = [], next = null, retryAfter = null, fix = null, docs = null, server = null, extra = {} } = {}) {
    super(message);
    this.kind = kind;
    this.status = status;
    this.code = code;
    this.findings = findings;
    this.next = next;
    this.retryAfter = retryAfter;
    this.fix = fix;
    this.docs = docs;
    this.server = server;
    this.extra = extra;
  }
}

/** A Retry-After header (RFC 9110 10.2.3: seconds, or an HTTP date) in milliseconds from
 * `now`, or null when absent or unreadable. */
export function retryAfterMs(value, now = Date.now()) {
  if (value === null || value === undefined) return null;
  const text = String(value).trim();
  if (/^[0-9]+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** The server address `login --server` takes: https, or http only to this machine (127.0.0.1,
 * ::1, localhost); no user name, password, query or fragment. A UsageError (exit 2) otherwise. */
export function checkServer(text) {
  let url;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`--server "${text}" is not an address such as https://almanac.example`);
  }
  if (url.protocol !== "https:" && !(url.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname))) {
    throw new UsageError(`--server "${text}": give an https address, or http only to this machine (127.0.0.1, ::1, localhost)`);
  }
  if (url.username || url.password || url.search || url.hash) throw new UsageError(`--server "${text}": give the address alone, without a name, password, query or fragment`);
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
}

/** Write a JSON file readable only by the user (0600) in the tool's folder (0700). */
function writePrivate(file, value, env = process.env) {
  const home = configHome(env);
  fs.mkdirSync(home, { recursive: true, mode: 0o700 });
  fs.chmodSync(home, 0o700);
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  fs.chmodSync(path.dirname(file), 0o700);
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(value, null, 2) + "\n", { mode: 0o600 });
  fs.chmodSync(tmp, 0o600);
  fs.renameSync(tmp, file);
}

function readJsonFile(file) {
  try {
    return JSON.parse(fs.readFileSync(file, "utf8"));
  } catch {
    return null;
  }
}

/** This machine's id (made once, kept in machine.json): a new login here revokes the token of
 * the login before it. */
function machineId(env = process.env) {
  const file = path.join(configHome(env), MACHINE_FILE);
  const kept = readJsonFile(file);
  if (kept && typeof kept.machine_id === "string" && /^[A-Za-z0-9_-]{8,64}$/.test(kept.machine_id)) return kept.machine_id;
  const made = nodeCrypto().randomBytes(18).toString("base64url");
  writePrivate(file, { machine_id: made }, env);
  return made;
}

/** The saved login: {server, token, organization_id, agent_id, agent_name, may_publish}, else a
 * not-logged-in PublishFailure. */
function savedLogin(env = process.env) {
  const saved = readJsonFile(path.join(configHome(env), TOKEN_FILE));
  if (!saved || typeof saved.token !== "string" || typeof saved.server !== "string" || !Number.isInteger(saved.organization_id)) {
    throw new PublishFailure("not-logged-in", `not logged in: run ${toolCommand()} login --server <address>`, { code: "AUTH-REQUIRED", server: env.ALMANAC_BASE_URL || null });
  }
  return saved;
}

const userAgent = (server) => `almanac-plugin/${TOOL_VERSION} (+${server})`;

/** One request to `server` + `pathname` (only there; the token only in its Authorization
 * header), never following a redirect. Resolves to {status, body}; a network failure is
 * unreachable, a 3xx a redirect failure. */
async function serviceRequest(server, method, pathname, { token = null, json, form, bytes, accept = "application/json" } = {}) {
  const base = new URL(server);
  const url = new URL(`${server}${pathname}`);
  if (url.origin !== base.origin) throw new Error(`a request outside ${server}: ${url}`);
  const headers = { accept, "user-agent": userAgent(server) };
  let body;
  if (token) headers.authorization = `Bearer ${token}`;
  if (json !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(json);
  } else if (form !== undefined) {
    headers["content-type"] = "application/x-www-form-urlencoded";
    body = new URLSearchParams(form).toString();
  } else if (bytes !== undefined) {
    headers["content-type"] = "application/zip";
    body = bytes;
  }
  // A cancelled MCP tool call ends its request too.
  const signal = cancelSignal();
  let res;
  try {
    res = await fetch(url, { method, headers, body, redirect: "manual", signal: signal ? AbortSignal.any([signal, AbortSignal.timeout(REQUEST_TIMEOUT_MS)]) : AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  } catch (e) {
    if (signal?.aborted) throw e;
    const why = e.cause?.code || e.cause?.message || e.message;
    throw new PublishFailure("unreachable", `could not reach ${server}: ${why}`, { code: "TOOL-SERVICE-UNREACHABLE", server });
  }
  if (res.status >= 300 && res.status < 400) {
    const where = res.headers.get("location");
    throw new PublishFailure("redirect", `${server} answered ${res.status} with a redirect${where ? ` to ${where}` : ""}; the tool follows no redirect: check the address given to login`, { status: res.status, code: "TOOL-SERVICE-UNREACHABLE", server });
  }
  const text = await res.text();
  let parsed = null;
  if (text) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = null;
    }
  }
  return { status: res.status, body: parsed, retryAfter: retryAfterMs(res.headers.get("retry-after")) };
}

/** A problem+json answer of `server` as a refused PublishFailure (code and detail, with its
 * findings; its `type` is the code's docs link). */
function refusal(res, what, server) {
  const b = res.body && typeof res.body === "object" ? res.body : {};
  const docs = typeof b.type === "string" && b.type.startsWith(server) ? b.type : null;
  if (res.status === 401) {
    return new PublishFailure("not-logged-in", `${what}: ${b.detail || "the token is not accepted"} (run login again)`, { status: 401, code: b.code || "AUTH-REQUIRED", docs, server });
  }
  const findings = Array.isArray(b.findings) ? b.findings : [];
  return new PublishFailure("refused", `${what}: ${b.detail || b.title || `the service answered ${res.status}`}`, { status: res.status, code: b.code || (res.status >= 500 ? "INTERNAL-ERROR" : "REQUEST-INVALID"), findings, retryAfter: res.retryAfter, docs, server });
}

/** A call of the portal with the saved token: the answer's body, or a PublishFailure. */
async function portal(login, method, pathname, what, options = {}) {
  return (await portalAnswer(login, method, pathname, what, options)).body;
}

/** The same call's whole answer, {status, body, retryAfter}, when it is a success. */
async function portalAnswer(login, method, pathname, what, options = {}) {
  const res = await serviceRequest(login.server, method, pathname, { ...options, token: login.token });
  if (res.status >= 200 && res.status < 300) return res;
  throw refusal(res, what, login.server);
}

const orgPath = (login) => `/api/v1/portal/organizations/${login.organization_id}`;
const pluginFile = (id, env = process.env) => path.join(configHome(env), "plugins", `${id}.json`);

/** Print a publishing command's answer: --json one object; else the lines of `text`. */
function answer(args, object, text) {
  if (args.options.json) args.out.json({ ok: true, ...object });
  else args.out.text(text.endsWith("\n") ? text : `${text}\n`);
  return 0;
}

/** The fixes the tool gives in place of the service's for refusals it has a command for: the
 * service's words name the portal or its API, an agent runs the tool. */
const TOOL_FIXES = {
  "SUBMIT-ATTESTATION-MISSING": (t, id) => `make the five attestations with ${t} review ${id} --file review.json --attest (in your organization's name; the checks run again: ${t} status ${id} --wait, then submit again)`,
  "SUBMIT-CHECKS-NOT-PASSED": (t, id) => `${t} status ${id} --wait shows the checks (exit 3 still being made, exit 1 one failed: fix what it names and upload a new version)`,
  "PLG-REVIEW-INCOMPLETE": (t, id) => `complete review.json, then send it: ${t} review ${id} --file review.json`,
};

/** A refusal of upload `id` with the tool's own fix for each finding it has a command for. */
function withToolFixes(failure, id) {
  for (const f of failure.findings) {
    const fix = has(TOOL_FIXES, f.code) ? TOOL_FIXES[f.code] : null;
    if (fix) f.fix = fix(toolCommand(), id);
  }
  return failure;
}

/** Wait `ms`; a cancelled MCP tool call stops waiting at once. */
function sleep(ms) {
  const signal = cancelSignal();
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const stop = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", stop);
      resolve();
    }, ms);
    signal?.addEventListener("abort", stop, { once: true });
  });
}

async function cmdLogin(args) {
  const env = process.env;
  const server = checkServer(args.options.server ?? (env.ALMANAC_BASE_URL || DEFAULT_BASE_URL));
  const name = (args.options.name ?? `almanac-plugin on ${os.hostname()}`).trim();
  if (!name || name.length > 80) throw new UsageError("--name: give 1 to 80 characters");
  if (args.positional.length) throw new UsageError("login takes no argument; see: help login");
  const loginFile = path.join(configHome(env), LOGIN_FILE);
  // A login run again within the code's 10 minutes waits for the same code.
  let pending = readJsonFile(loginFile);
  const reuse = pending && pending.server === server && typeof pending.device_code === "string" && Date.now() < Date.parse(pending.expires_at) - 2000;
  if (!reuse) {
    const res = await serviceRequest(server, "POST", "/api/v1/device/code", { form: { client_id: CLIENT_ID, agent_name: name, machine_id: machineId(env) } });
    if (res.status !== 200 || !res.body?.device_code) throw oauthFailure(res, "login", server);
    const b = res.body;
    pending = { server, agent_name: name, device_code: b.device_code, user_code: b.user_code, verification_uri: b.verification_uri, verification_uri_complete: b.verification_uri_complete, interval: b.interval, expires_at: new Date(Date.now() + b.expires_in * 1000).toISOString() };
    writePrivate(loginFile, pending, env);
  }
  const until = new Date(pending.expires_at);
  const say = args.options.json ? args.out.note : args.out.text;
  say(`${reuse ? "Still waiting for the same code. " : ""}An owner or admin of your organization approves this agent (${pending.agent_name}):\n  open ${pending.verification_uri}\n  and enter the code ${pending.user_code}\n  (or open ${pending.verification_uri_complete})\nThe code is valid until ${until.toISOString().slice(11, 16)} UTC. Waiting...\n`);
  let interval = Math.max(1, Number(pending.interval) || 5);
  for (;;) {
    await sleep(interval * 1000);
    const res = await serviceRequest(server, "POST", "/api/v1/device/token", { form: { grant_type: DEVICE_GRANT, device_code: pending.device_code, client_id: CLIENT_ID } });
    if (res.status === 200 && typeof res.body?.access_token === "string") {
      const b = res.body;
      const saved = { server, token: b.access_token, agent_id: b.agent_id, agent_name: b.agent_name, organization_id: b.organization_id, may_publish: b.may_publish, saved_at: new Date().toISOString() };
      writePrivate(path.join(configHome(env), TOKEN_FILE), saved, env);
      savedServers.delete(path.join(configHome(env), TOKEN_FILE));
      fs.rmSync(loginFile, { force: true });
      const { token: _secret, ...shown } = saved;
      return answer(args, shown, `logged in to ${server} as agent "${b.agent_name}" for organization ${b.organization_id} (${b.may_publish ? "publishing allowed" : "publishing not allowed"}); token kept in ${path.join(configHome(env), TOKEN_FILE)}`);
    }
    const error = res.body?.error;
    if (res.status === 400 && error === "authorization_pending") continue;
    if (res.status === 400 && error === "slow_down") {
      interval = Number(res.body.interval) || interval + 5;
      continue;
    }
    if (error === "access_denied" || error === "expired_token" || error === "invalid_grant") fs.rmSync(loginFile, { force: true });
    throw oauthFailure(res, "login", server);
  }
}

/** An OAuth error answer (RFC 6749 5.2) as a refused PublishFailure: its `error` is the code. */
function oauthFailure(res, what, server) {
  const b = res.body && typeof res.body === "object" ? res.body : {};
  if (!b.error) return refusal(res, what, server);
  const words = { access_denied: "an owner or admin denied this login", expired_token: "the code expired before it was approved; run login again for a new code", invalid_grant: "the code is unknown or used already; run login again" };
  return new PublishFailure("refused", `${what}: ${words[b.error] || b.error_description || b.error}`, { status: res.status, code: b.error, server });
}

async function cmdLogout(args) {
  if (args.positional.length) throw new UsageError("logout takes no argument");
  const login = savedLogin();
  const res = await serviceRequest(login.server, "POST", "/api/v1/device/logout", { token: login.token });
  // Revoked already (401) is as good as revoked now: either way the token is deleted here.
  if (res.status !== 204 && res.status !== 401) throw refusal(res, "logout", login.server);
  fs.rmSync(path.join(configHome(), TOKEN_FILE), { force: true });
  return answer(args, { server: login.server, revoked: true }, `logged out of ${login.server}: the token is revoked and deleted from this machine`);
}

/** The plug-in id of a folder (its plugin.json), or null. */
function folderPluginId(dir) {
  const m = readJsonFile(path.join(dir, "plugin.json"));
  return m && typeof m.id === "string" ? m.id : null;
}

/** The last upload from this machine of plug-in `id`, or of any plug-in when id is null. */
function lastUpload(id, env = process.env) {
  if (id !== null) return readJsonFile(pluginFile(id, env));
  const dir = path.join(configHome(env), "plugins");
  let newest = null;
  for (const f of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
    if (!f.endsWith(".json")) continue;
    const kept = readJsonFile(path.join(dir, f));
    if (kept && Number.isInteger(kept.upload_id) && (!newest || String(kept.uploaded_at) > String(newest.uploaded_at))) newest = kept;
  }
  return newest;
}

/** The upload a `<version>` argument names: an upload id, a folder or a plug-in id (its last
 * upload from here); by default the plug-in in the current folder, else the last upload. */
function versionArg(args, login) {
  const arg = args.positional[0];
  args.organization = login.organization_id;
  if (arg !== undefined && /^[0-9]+$/.test(arg)) return (args.version = Number(arg));
  let id = null;
  if (arg === undefined) id = folderPluginId(process.cwd());
  else if (fs.existsSync(arg) && fs.statSync(arg).isDirectory()) {
    id = folderPluginId(path.resolve(arg));
    if (id === null) throw new UsageError(`${arg} has no plugin.json with an id`);
  } else id = arg;
  const kept = lastUpload(id);
  if (!kept || kept.server !== login.server || kept.organization_id !== login.organization_id) {
    const folder = arg !== undefined && fs.existsSync(arg) ? folderWord(path.resolve(arg)) : "<folder>";
    throw new PublishFailure("refused", `${id === null ? "no upload" : `no upload of ${id}`} from this machine to ${login.server} yet: give a version id, or run upload first`, { code: "NOT-FOUND", server: login.server, next: `${toolCommand()} upload ${folder} (or give the version id an upload printed)` });
  }
  return (args.version = kept.upload_id);
}

/** The plug-in a `<plug-in>` argument names: an id or a folder; default the current folder. */
function pluginArg(args) {
  const arg = args.positional[0];
  if (arg !== undefined && !fs.existsSync(arg) && ID_RE.test(arg)) return arg;
  const dir = path.resolve(arg ?? ".");
  const id = fs.existsSync(dir) && fs.statSync(dir).isDirectory() ? folderPluginId(dir) : null;
  if (id === null) throw new UsageError(`${arg ?? "the current folder"} is neither a plug-in id nor a folder with a plugin.json`);
  return id;
}

function checksLine(upload) {
  const parts = upload.checks.map((c) => `${c.name} ${c.status}`);
  return `upload ${upload.id}: ${upload.plugin_id} ${upload.version}, ${upload.state}${parts.length ? `; checks: ${parts.join(", ")}` : ""}`;
}

/** The upload's line, then each finding of its checks once (its warnings, update warnings
 * among them, are findings of a check too), then who uploaded it. */
function uploadText(upload) {
  const lines = [checksLine(upload)];
  const found = upload.checks.flatMap((c) => c.findings.map((f) => ({ ...f, check: c.name })));
  for (const f of found) lines.push(`  ${f.severity || "error"} ${f.code}${f.check ? ` (${f.check})` : ""}: ${f.message}${f.fix ? `\n    fix: ${f.fix}` : ""}${f.docs ? `\n    docs: ${f.docs}` : ""}`);
  if (upload.agent_name) lines.push(`  uploaded by agent ${upload.agent_name}`);
  return lines.join("\n");
}

async function cmdUpload(args) {
  const root = folderArg(args);
  const login = savedLogin();
  const res = await checkFolder(root);
  if (!res.ok) throw checkRefusal(res, "upload", login.server);
  const { bytes } = packBytes(root, res.manifest, res.digest);
  const upload = await portal(login, "POST", `${orgPath(login)}/uploads`, "upload", { bytes });
  args.version = upload.id;
  writePrivate(pluginFile(upload.plugin_id), { plugin_id: upload.plugin_id, upload_id: upload.id, version: upload.version, digest: upload.digest, organization_id: login.organization_id, server: login.server, uploaded_at: new Date().toISOString() });
  const next = `${toolCommand()} status ${upload.id} --wait`;
  return answer(args, { upload, next }, `uploaded ${upload.plugin_id} ${upload.version} (digest ${upload.digest})\n${uploadText(upload)}\nnext: ${next}`);
}

// status: the version's checks decide the exit code, so an agent never reads failed checks as
// success. 0 every check passed, 1 the checks are final and one failed, 3 still being made.
export const STATUS_EXIT = Object.freeze({ passed: 0, failed: 1, checking: 3 });
const WAIT_FIRST_MS = 1000;
const WAIT_MAX_MS = 15000;
const DECIDED = { approve: "approved", "request-changes": "changes requested", reject: "rejected" };

/** Where the version's checks stand: passed, failed or checking. */
export function checksOutcome(upload) {
  if (!upload.checks_final) return "checking";
  return upload.checks_passed ? "passed" : "failed";
}

/** The portal page of an upload, where a person acts on it. */
const uploadPage = (login, upload) => `${login.server}/portal/${upload.organization_id}/uploads/${upload.id}`;

/** What to do next with the version, from its checks and its state ("Version in the portal"). */
export function nextStep(upload, { server, may_publish: mayPublish }, t = toolCommand()) {
  const id = upload.id;
  const page = uploadPage({ server }, upload);
  const outcome = checksOutcome(upload);
  if (outcome === "checking") return `wait for the checks: ${t} status ${id} --wait`;
  switch (upload.state) {
    case "checked":
      if (outcome === "failed") return `fix what the failed checks name, raise version in plugin.json, ${t} check, then ${t} upload (a source or link that was only down: a person re-runs the checks on ${page})`;
      return `${t} submit ${id} (refused with each reason still open: review information, attestations, agreement, domain, invitation)`;
    case "in_review":
      return `wait for a reviewer's decision: ${t} status ${id} shows it`;
    case "changes_requested":
      return `make the changes the reviewer asks for: new code or fixtures are a new version (raise version in plugin.json, then ${t} upload); for review information alone, ${t} review ${id} --file review.json, then ${t} submit ${id}`;
    case "rejected":
      return `a rejected version is never published: answer the reason in a new version (raise version in plugin.json), then ${t} upload`;
    case "approved":
      if (mayPublish) return `${t} publish ${id}`;
      return `an owner or admin publishes it on ${page} (this agent may not publish; an agent approved with publishing allowed may: ${t} publish ${id})`;
    case "published":
      return "nothing: it is live within 15 minutes of publishing";
    case "superseded":
      return "nothing: a later version took its place";
    case "withdrawn":
      return `nothing for this version; to go on, ${t} upload`;
    default:
      return `${t} status ${id}`;
  }
}

/** The latest reviewer's decision, as lines: what, when, the reason and the note. */
function decisionText(decision) {
  if (!decision) return [];
  const lines = [`decision: ${DECIDED[decision.decision] || decision.decision} on ${String(decision.decided_at).slice(0, 16).replace("T", " ")} UTC`, `  reason: ${decision.reason}`];
  const note = String(decision.note || "").trim();
  if (note) lines.push("  note:", ...note.split("\n").map((l) => `    ${l}`));
  return lines;
}

/** Print status's answer; resolves to its exit code (STATUS_EXIT). */
function statusAnswer(args, upload, login, waited, rollout = null) {
  const checks = checksOutcome(upload);
  const next = nextStep(upload, login);
  const code = STATUS_EXIT[checks];
  if (args.options.json) {
    args.out.json({ ok: code === 0, checks, upload, decision: upload.decision ?? null, rollout, next });
    return code;
  }
  const said = { passed: "checks passed", failed: "checks failed", checking: waited ? `checks still being made after ${args.options.timeout} s` : "checks still being made" }[checks];
  const lines = [uploadText(upload), said, ...decisionText(upload.decision), ...(rollout ? [rolloutText(rollout)] : []), `next: ${next}`];
  args.out.text(lines.join("\n") + "\n");
  if (code !== 0) args.out.note(`almanac-plugin: status: upload ${upload.id}: ${said} (exit ${code})\n`);
  return code;
}

/** --timeout: seconds, more than 0. */
function waitTimeout(args) {
  const text = args.options.timeout;
  if (text === undefined) return null;
  if (!args.options.wait) throw new UsageError("--timeout goes with --wait");
  const seconds = Number(text);
  if (!/^[0-9]+(\.[0-9]+)?$/.test(text) || !(seconds > 0)) throw new UsageError(`--timeout "${text}": give the seconds to wait, a number above 0`);
  return seconds * 1000;
}

async function cmdStatus(args) {
  const timeout = waitTimeout(args);
  const login = savedLogin();
  const id = versionArg(args, login);
  const where = `${orgPath(login)}/uploads/${id}`;
  if (!args.options.wait) {
    const upload = await portal(login, "GET", where, "status");
    return statusAnswer(args, upload, login, false, await rolloutOf(login, upload));
  }
  const tty = Boolean(process.stdout.isTTY) && !args.options.json && args.out === terminal;
  const until = timeout === null ? Infinity : Date.now() + timeout;
  let delay = WAIT_FIRST_MS;
  let shown = null;
  let upload = null;
  for (;;) {
    let after = null;
    try {
      const res = await portalAnswer(login, "GET", where, "status");
      upload = res.body;
      after = res.retryAfter;
    } catch (e) {
      // A service (or a proxy before it) that is busy says so: ask again, when it says.
      if (!(e instanceof PublishFailure) || ![429, 503].includes(e.status)) throw e;
      after = e.retryAfter;
    }
    if (upload !== null && upload.checks_final) break;
    if (upload !== null && !args.options.json) {
      const line = checksLine(upload);
      if (line !== shown) args.out.text(tty ? `\r\x1b[2K${line}` : `${line}\n`);
      shown = line;
    }
    const left = until - Date.now();
    if (left <= 0) break;
    const wait = after ?? delay;
    delay = Math.min(delay * 2, WAIT_MAX_MS);
    await sleep(Math.min(wait, left));
  }
  if (tty && shown !== null) args.out.text("\r\x1b[2K");
  if (upload === null) throw new PublishFailure("unreachable", `status: ${login.server} stayed busy for ${args.options.timeout} s`, { code: "RATE-LIMITED", server: login.server });
  return statusAnswer(args, upload, login, !upload.checks_final, await rolloutOf(login, upload));
}

async function cmdReview(args) {
  if (args.options.file === undefined) throw new UsageError("review needs --file <review.json>");
  let document;
  try {
    document = JSON.parse(fs.readFileSync(path.resolve(args.options.file), "utf8"));
  } catch (e) {
    throw new UsageError(`--file "${args.options.file}": ${e.code === "ENOENT" ? "no such file" : `not a JSON file (${e.message})`}`);
  }
  if (document === null || typeof document !== "object" || Array.isArray(document)) throw new UsageError(`--file "${args.options.file}": review.json is one JSON object`);
  const login = savedLogin();
  const id = versionArg(args, login);
  let upload;
  try {
    upload = await portal(login, "PUT", `${orgPath(login)}/uploads/${id}/review`, "review", { json: document });
  } catch (e) {
    // Refused while its checks are being made: say to wait for them, then send it again.
    if (e instanceof PublishFailure && e.code === "STATE-CONFLICT") {
      const now = await portal(login, "GET", `${orgPath(login)}/uploads/${id}`, "review");
      if (now.state === "checking") e.next = `wait for the checks: ${toolCommand()} status ${id} --wait, then run this review again`;
    }
    throw withToolFixes(e, id);
  }
  let attestations = null;
  if (args.options.attest) attestations = await portal(login, "POST", `${orgPath(login)}/uploads/${id}/attestations`, "attest", { json: { attestations: ATTESTATIONS } });
  const text = [`review information sent for upload ${id}; its checks run again`, checksLine(upload)];
  if (attestations) text.push(`attestations made: ${attestations.map((a) => a.attestation).join(", ")}`);
  const next = `${toolCommand()} status ${id} --wait, then ${toolCommand()} submit ${id}`;
  text.push(`next: ${next}`);
  return answer(args, { upload, attestations, next }, text.join("\n"));
}

async function cmdSubmit(args) {
  const login = savedLogin();
  const id = versionArg(args, login);
  let done;
  try {
    done = await portal(login, "POST", `${orgPath(login)}/uploads/${id}/submit`, "submit");
  } catch (e) {
    throw e instanceof PublishFailure ? withToolFixes(e, id) : e;
  }
  const replaced = done.replaced ? `\nupload ${done.replaced.id} (${done.replaced.version}) left review: this one takes its place` : "";
  const next = nextStep(done.upload, login);
  return answer(args, { upload: done.upload, replaced: done.replaced, next }, `submitted upload ${id}: ${done.upload.plugin_id} ${done.upload.version} is ${done.upload.state}${replaced}\nnext: ${next}`);
}

/** --shadow: the runs (0 to 5) an update runs beside the current version before promotion. */
function shadowRuns(args) {
  const text = args.options.shadow;
  if (text === undefined) return 0;
  if (!/^[0-5]$/.test(text)) throw new UsageError(`--shadow "${text}": give the shadow period in runs, 0 to 5 (0 publishes at once)`);
  return Number(text);
}

async function cmdPublish(args) {
  const shadow = shadowRuns(args);
  const login = savedLogin();
  const id = versionArg(args, login);
  const upload = await portal(login, "POST", `${orgPath(login)}/uploads/${id}/publish`, "publish", { json: { shadow } });
  if (shadow === 0) return answer(args, { upload, rollout: null, next: nextStep(upload, login) }, `published upload ${id}: ${upload.plugin_id} ${upload.version} is ${upload.state}; live within 15 minutes`);
  const rollout = await rolloutOf(login, upload);
  const next = `${toolCommand()} status ${id} after its runs; ${toolCommand()} promote ${upload.plugin_id} --reason <why> promotes it early, ${toolCommand()} stop ${upload.plugin_id} --reason <why> stops it`;
  return answer(args, { upload, rollout, next }, `upload ${id}: ${upload.plugin_id} ${upload.version} runs beside the current version for its next ${shadow} runs, writing nothing; promoted after them unless one fails\nnext: ${next}`);
}

// -- rollouts (README, Rollouts) -----------------------------------------------------------------

/** The rollout of this upload's version, or null; only an approved or published version has
 * one, so nothing is asked for the others. */
async function rolloutOf(login, upload) {
  if (!["approved", "published", "superseded"].includes(upload.state)) return null;
  const all = await portal(login, "GET", `${orgPath(login)}/plugins/${encodeURIComponent(upload.plugin_id)}/rollouts`, "status").catch((e) => {
    if (e instanceof PublishFailure && e.status === 404) return [];
    throw e;
  });
  return (Array.isArray(all) ? all : []).find((r) => r.upload_id === upload.id) ?? null;
}

function rolloutText(rollout) {
  const lines = [`rollout of ${rollout.version} (from ${rollout.from_version}): ${rollout.state}, ${rollout.runs_done} of ${rollout.shadow_runs} shadow runs`];
  for (const s of rollout.shadows) {
    const counts = Object.entries(s.summary).map(([k, c]) => `${k} +${c.new} ~${c.revised} >${c.moved} -${c.missing}`).join("; ");
    const removed = Object.entries(s.removed_series).map(([k, n]) => `${k} removed (${n} kept)`).join("; ");
    lines.push(`  beside run ${s.run_id} (${s.today}): ${s.passed ? "passed" : `failed: ${s.reason}`}${counts ? ` · ${counts}` : ""}${removed ? ` · ${removed}` : ""}`);
  }
  if (rollout.reason && rollout.state !== "shadowing") lines.push(`  ${rollout.state} by ${rollout.ended_by}: ${rollout.reason}`);
  return lines.join("\n");
}

const ROLLOUT_MOVES = {
  promote: { path: "promote", done: "promoted" },
  stop: { path: "stop", done: "stopped" },
  rollback: { path: "roll-back", done: "rolled back" },
};

function rolloutCommand(move) {
  return async (args) => {
    const reason = args.options.reason;
    if (reason === undefined || !reason.trim()) throw new UsageError(`${move} needs --reason <why>: it is kept in the plug-in's history`);
    const id = pluginArg(args);
    const login = savedLogin();
    const rollout = await portal(login, "POST", `${orgPath(login)}/plugins/${encodeURIComponent(id)}/rollout/${ROLLOUT_MOVES[move].path}`, move, { json: { reason } });
    return answer(args, { rollout }, `${ROLLOUT_MOVES[move].done} ${id}: ${rolloutText(rollout)}`);
  };
}

function listingText(listing) {
  const flags = ["listed", "shelved", "taken_down", "retired"].filter((k) => listing[k]);
  return `${listing.plugin_id}: ${flags.length ? flags.join(", ") : "not listed"}`;
}

// Unpublish and List again repeated do nothing the second time ("Listing of a published
// plug-in"): the tool reads the listing first, to say which happened.
const LISTING_WORDS = {
  unpublish: { listed: false, done: "unpublished", now: "nobody new can install it; its readers keep it", already: "was already unpublished: nothing changed" },
  relist: { listed: true, done: "listed", now: "it is in the store again", already: "was already listed: nothing changed" },
};

function listingCommand(move) {
  return async (args) => {
    const id = pluginArg(args);
    const login = savedLogin();
    const at = `${orgPath(login)}/plugins/${encodeURIComponent(id)}`;
    // Not readable (say, never published): the move's own refusal says why, not the read's.
    const before = await portal(login, "GET", at, move).catch((e) => {
      if (e instanceof PublishFailure) return null;
      throw e;
    });
    const listing = await portal(login, "POST", `${at}/${move}`, move);
    const words = LISTING_WORDS[move];
    const changed = before === null || before.listed !== words.listed;
    const text = changed ? `${words.done} ${id}: ${words.now} (${listingText(listing)})` : `${id} ${words.already} (${listingText(listing)})`;
    return answer(args, { listing, changed }, text);
  };
}

async function cmdRetire(args) {
  const id = pluginArg(args);
  let where = "the portal";
  try {
    const login = savedLogin();
    where = `${login.server}/portal/${login.organization_id}/plugins/${encodeURIComponent(id)}`;
  } catch {
    // Not logged in: the refusal is the same, without the address.
  }
  const message = `retire: an agent never retires a plug-in; a person retires ${id} in the portal (${where}), typing its id`;
  throw new PublishFailure("refused", message, { code: "AGENT_FORBIDDEN", extra: { portal: where }, next: `nothing for an agent: ask an owner or admin of your organization to retire ${id} on ${where}, typing its id` });
}

// ---------------------------------------------------------------------------------------------
// Refusals: the error object --json prints and an MCP tool's result carries, {ok: false, error}
// with the error's kind, code, message, fix, docs link and next, the command that moves things
// on (with status, findings and retryAfter when the service refused)
// ---------------------------------------------------------------------------------------------

/** The command a refused command line runs again as: `node <tool> <its words>`. */
const commandAgain = (args) => `${toolCommand()} ${args.argv.map(shellWord).join(" ")}`;

/** The error object of a refusal (a PublishFailure, a UsageError or a Failure). */
export function errorObject(e, args) {
  const base = e.server ?? baseUrl();
  if (!(e instanceof PublishFailure)) {
    const usage = e instanceof UsageError;
    return { kind: usage ? "usage" : "refused", code: "REQUEST-INVALID", message: e.message, fix: usage ? `Give ${args.name} the arguments its usage names: ${COMMANDS[args.name]?.usage ?? "help"}.` : "Name a folder or file that exists, as the message says.", docs: docsLink("REQUEST-INVALID", base), next: `${toolCommand()} help ${args.name}` };
  }
  const entry = CATALOG_BY_CODE.get(e.code);
  const error = { kind: e.kind, code: e.code, message: e.message };
  if (e.status !== null) error.status = e.status;
  if (e.findings.length) error.findings = e.findings;
  if (e.retryAfter !== null) error.retryAfter = Math.ceil(e.retryAfter / 1000);
  Object.assign(error, e.extra);
  error.fix = e.fix ?? (e.kind === "not-logged-in" ? `Log in again: ${toolCommand()} login --server ${e.server ?? "<the service's address>"} prints a code for an owner or admin of your organization to approve.` : has(TOOL_FIXES, e.code) ? TOOL_FIXES[e.code](toolCommand(), args.version ?? "<version>") : entry?.fix ?? "Do what the message says, then run the command again.");
  error.docs = e.docs ?? (entry ? docsLink(e.code, base) : null);
  error.next = e.next ?? nextAfter(e, args);
  return error;
}

/** What moves things on after a refusal the command gave no next step of its own. */
function nextAfter(e, args) {
  const t = toolCommand();
  const again = commandAgain(args);
  switch (e.kind) {
    case "not-logged-in":
      return `${t} login --server ${e.server ?? "<the service's address>"} (it prints a code for an owner or admin of your organization to approve, and waits), then ${again}`;
    case "unreachable":
      return `${again}, once ${e.server ?? "the service"} answers (is it the address given to login?)`;
    case "redirect":
      return `${t} login --server <the service's own address, not one that redirects>, then ${again}`;
    case "check":
      return `fix each finding (its fix and docs say how), ${t} check ${folderWord(folderArg(args))} until it passes, then ${again}`;
  }
  const toolFix = e.findings.find((f) => has(TOOL_FIXES, f.code));
  if (toolFix) return toolFix.fix;
  const inPortal = args.version !== undefined && args.organization !== undefined ? `the version's page, ${uploadPage({ server: e.server }, { organization_id: args.organization, id: args.version })}` : "the portal";
  if (e.code === "SUBMIT-REFUSED" && e.findings.length) return `an owner or admin of your organization settles ${e.findings.map((f) => f.code).join(", ")} in the portal (${inPortal}), then ${again}`;
  if (e.code === "AGENT_MAY_NOT_PUBLISH") return `an owner or admin does it in the portal (${inPortal}); or log in again, approved with publishing allowed (${t} login --server ${e.server}), then ${again}`;
  if (e.retryAfter !== null) return `${again}, in ${Math.ceil(e.retryAfter / 1000)} s`;
  if (args.version !== undefined) return `${t} status ${args.version} (it says what the version's state allows next)`;
  return `${t} help ${args.name}`;
}

/** Say a refusal: --json's object, then the code and message (and its findings, and next) on
 * stderr. Exit 2 when the command was not understood, else 1. */
function refuse(e, args) {
  const error = errorObject(e, args);
  if (args.options?.json) args.out.json({ ok: false, error });
  args.out.note(`almanac-plugin: ${e instanceof PublishFailure && e.code ? `${e.code}: ` : ""}${e.message}\n`);
  if (e instanceof PublishFailure) {
    if (e.kind === "check") printFindings(e.findings, args.out);
    else for (const f of e.findings) args.out.note(`  ${f.code}: ${f.message}${f.fix ? `\n    fix: ${f.fix}` : ""}\n`);
    args.out.note(`next: ${error.next}\n`);
  }
  return e instanceof UsageError ? 2 : 1;
}

// ---------------------------------------------------------------------------------------------
// MCP server (`mcp`): the commands as tools of the Model Context Protocol, over standard input
// and output, one JSON-RPC 2.0 message a line; logs go to standard error. Dual-era: a request
// whose _meta names revision 2026-07-28 is served on its own (server/discover; resultType and
// cache hints on results); an initialize handshake (2025-11-25 back to 2024-11-05) serves the
// process at the revision it agrees. Written here rather than with an MCP SDK so the tool stays
// one file with no dependencies; the tests drive it with the official Python SDK's client.
// ---------------------------------------------------------------------------------------------

const MCP_MODERN = ["2026-07-28"];
const MCP_HANDSHAKE = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
/** Revisions whose tools carry outputSchema and structuredContent (2025-06-18 on). */
const MCP_STRUCTURED = new Set(["2026-07-28", "2025-11-25", "2025-06-18"]);
const MCP_META = { version: "io.modelcontextprotocol/protocolVersion", capabilities: "io.modelcontextprotocol/clientCapabilities", serverInfo: "io.modelcontextprotocol/serverInfo" };
const RPC = { parse: -32700, invalidRequest: -32600, methodNotFound: -32601, invalidParams: -32602, internal: -32603, resourceNotFound: -32002, unsupportedVersion: -32022 };
const MCP_SERVER = { name: "almanac-plugin", title: "Almanac plug-in developers' tool", version: TOOL_VERSION };
/** The tools and resources are this file's: a client may keep their lists for an hour. */
const MCP_CACHE = { cacheScope: "public", ttlMs: 3600000 };

/** Each tool call's cancel signal (AsyncLocalStorage, made when the server starts): the fetcher
 * runs, requests and waits a call starts end with it, without a signal passed through every
 * function between the tool and them. */
let mcpCalls = null;
/** The signal of the MCP tool call this code runs for, or null (the CLI). */
function cancelSignal() {
  return mcpCalls?.getStore()?.signal ?? null;
}

// Input schemas. `cli` says how an argument becomes the command's: its one positional argument,
// or the option of the same name (a flag when boolean); it is not sent to clients.
const FOLDER = { type: "string", description: "The plug-in folder: a path, absolute or relative to the server's working folder; default that folder.", cli: "positional" };
const VERSION = { type: ["string", "integer"], description: "The uploaded version: its id (as upload printed it), or a plug-in id or folder for its last upload from this machine; default the plug-in in the server's working folder.", cli: "positional" };
const PLUGIN = { type: "string", description: "The plug-in: its id, or its folder; default the plug-in in the server's working folder.", cli: "positional" };

// Output schemas: the object the command's --json prints. Every one has ok; a refusal has
// error (the result is then isError) with the fields of Refusals.
const FINDING = { type: "object", properties: { code: { type: "string" }, severity: { type: "string" }, message: { type: "string" }, fix: { type: "string" }, docs: { type: "string" }, path: { type: "string" }, line: { type: "integer" }, file: { type: "string" } }, required: ["code", "severity", "message"] };
const FINDINGS = { type: "array", items: FINDING };
const ERROR = { type: "object", properties: { kind: { type: "string" }, code: { type: "string" }, message: { type: "string" }, status: { type: "integer" }, findings: { type: "array" }, retryAfter: { type: "integer" }, fix: { type: "string" }, docs: { type: ["string", "null"] }, next: { type: "string" } }, required: ["kind", "code", "message", "fix", "docs", "next"] };
const UPLOAD = { type: "object", properties: { id: { type: "integer" }, plugin_id: { type: "string" }, version: { type: "string" }, state: { type: "string" }, checks_final: { type: "boolean" }, checks: { type: "array" } }, required: ["id", "plugin_id", "version", "state"] };
const LISTING = { type: "object", properties: { plugin_id: { type: "string" }, listed: { type: "boolean" } }, required: ["plugin_id", "listed"] };
const answerOf = (properties) => ({ type: "object", properties: { ok: { type: "boolean" }, error: ERROR, next: { type: "string" }, ...properties }, required: ["ok"] });

/** The tools: each a command, its arguments, a paragraph for the model, and its answer. */
const MCP_TOOLS = [
  {
    name: "init", title: "Make a new plug-in folder",
    description: "Create a new plug-in folder that passes check as created: plugin.json (the manifest), fetch.mjs (the fetcher), fixtures/ (a source file, context.json, records.jsonl and two run cases), README.md, AGENTS.md and CLAUDE.md. `id` is the new folder's path, whose last part is the plug-in id (2 to 48 lowercase letters, digits and hyphens); it must not exist yet. Then put one real copy of each source in fixtures/sources/, make fetch.mjs read it, and call check until it passes; almanac://guide/agents is the contract.",
    input: { id: { type: "string", description: "The new folder: the plug-in id (made in the server's working folder), or a path ending in it.", cli: "positional" }, kind: { type: "string", enum: KINDS, description: "The first series' kind: value (figures), event (dated happenings) or item (dated links); default value." }, timezone: { type: "string", description: "The manifest's named IANA zone, such as Europe/Berlin; default the machine's." } },
    required: ["id"],
    output: answerOf({ id: { type: "string" }, folder: { type: "string" }, kind: { type: "string" }, timezone: { type: "string" }, files: { type: "array", items: { type: "string" } } }),
  },
  {
    name: "check", title: "Check a plug-in folder",
    description: "Check a plug-in folder as the service will: the manifest, imports and code files, the fetcher run twice on fixtures/sources/ behind a guard with no network, every record, the output against fixtures/records.jsonl, each fixtures/runs/<case>, review.json and the listing; it gives the digest. A plug-in that does not pass is an answer, not an error: ok is false and each finding has its code, message, fix and docs (read almanac://problems/<code> for the rule and examples). `update` writes the fetcher's output to fixtures/records.jsonl instead of comparing (read what changed). `against` also applies the version-number and update rules against a pack, a folder or an uploaded version id, as the server does at upload.",
    input: { folder: FOLDER, update: { type: "boolean", description: "Write the fetcher's output to fixtures/records.jsonl (and each case's) instead of comparing." }, against: { type: "string", description: "A pack (.zip), a folder, or an uploaded version id of your organization to check this one as an update of." } },
    output: answerOf({ summary: { type: "string" }, findings: FINDINGS, digest: { type: ["string", "null"] } }),
  },
  {
    name: "preview", title: "Show the days as a reader sees them",
    description: "Run check, then draw the plug-in's days as the calendar shows them to a reader (events first, values in force, last-rate and status rows), as JSON: one object a day with its rows. The default is the fixtures' today and 3 days either side; `days` picks up to 62 days. `run` previews fixtures/runs/<case> as a later run over the fixture records; `live` downloads the real sources once (the network; within the manifest's hosts and limits). ok is false when check does not pass.",
    input: { folder: FOLDER, days: { type: "string", pattern: "^\\d{4}-\\d{2}-\\d{2}\\.\\.\\d{4}-\\d{2}-\\d{2}$", description: "YYYY-MM-DD..YYYY-MM-DD, at most 62 days." }, language: { type: "string", description: "The reader's language, such as en or es; default en." }, run: { type: "string", description: "A case of fixtures/runs/ to preview as a later run." }, live: { type: "boolean", description: "Download the real sources once and preview them." } },
    output: answerOf({ summary: { type: "string" }, findings: FINDINGS, digest: { type: ["string", "null"] }, today: { type: ["string", "null"] }, language: { type: "string" }, status: { type: "string" }, cache: { type: ["object", "null"] }, days: { type: "array" } }),
  },
  {
    name: "digest", title: "The digest of the plug-in code",
    description: "Compute the digest of the plug-in code (sha256 over the files it covers, in reading order): the version's identity the service compares at upload and approval. `files` lists the covered files. ok is false when a code file breaks the code-file rules (each a finding).",
    input: { folder: FOLDER },
    output: answerOf({ digest: { type: ["string", "null"] }, files: { type: "array", items: { type: "string" } }, findings: FINDINGS }),
  },
  {
    name: "pack", title: "Pack the folder into the ZIP to upload",
    description: "Check the folder, then write the ZIP archive the service takes (default <id>-<version>.zip beside the folder; `out` names another file). Refused, writing nothing, when check does not pass: the error names the first finding's code and carries every finding. upload packs by itself, so pack is for looking at or keeping the archive.",
    input: { folder: FOLDER, out: { type: "string", description: "Where to write the archive." } },
    output: answerOf({ file: { type: "string" }, files: { type: "integer" }, bytes: { type: "integer" }, digest: { type: "string" }, findings: FINDINGS }),
  },
  {
    name: "probe", title: "Try the fetcher on the real sources",
    description: "Download each real source once (https, the manifest's hosts, maxBytes, 5 redirects, 60 seconds), run the fetcher on them behind the guard and check every record: whether the plug-in still reads the live files as it reads its fixtures. Uses the network; never part of check. ok is false with findings when a source cannot be downloaded (PLG-SOURCE-DOWNLOAD) or the fetcher fails on it; records counts what it printed, by series.",
    input: { folder: FOLDER },
    output: answerOf({ today: { type: ["string", "null"] }, records: { type: "integer" }, series: { type: "object" }, findings: FINDINGS }),
  },
  {
    name: "login", title: "How to log in (a person approves)",
    description: "Never logs in: an agent's login is approved by a person (an owner or admin of the organization opens an address and enters a code, choosing whether the agent may publish). This answers with the exact command to run in a terminal, which prints the code and address and waits until they approve; the publishing tools work once it has finished. When already logged in, it says as whom.",
    input: { server: { type: "string", description: "The service's address: https, or http only to this machine; default ALMANAC_BASE_URL, else the last login's." }, name: { type: "string", description: "The agent's name on the approval screen." } },
    output: answerOf({ server: { type: "string" }, agent_name: { type: "string" }, organization_id: { type: "integer" }, may_publish: { type: "boolean" }, command: { type: "string" } }),
  },
  {
    name: "upload", title: "Upload the plug-in",
    description: "Check and pack the folder and upload it to your organization as a new version (nothing is sent when check does not pass: the error carries the findings). The answer is the version (upload.id is its version id for the next tools), its state and its checks, which the service now runs in its locked room; next is status with wait. Needs a login.",
    input: { folder: FOLDER },
    output: answerOf({ upload: UPLOAD }),
  },
  {
    name: "status", title: "Where an uploaded version stands",
    description: "Show an uploaded version: its state, its checks and their findings, the latest reviewer's decision with its reason and note, and next, what to do now. checks is passed, failed or checking; ok is true only when every check passed. With `wait`, ask again (1 s, doubling to 15 s, or as the service says) until the checks are final or `timeout` seconds pass: give a timeout below your client's limit on a call. Needs a login.",
    input: { version: VERSION, wait: { type: "boolean", description: "Ask again until the checks are final." }, timeout: { type: "number", exclusiveMinimum: 0, description: "With wait: stop after this many seconds." } },
    output: answerOf({ checks: { type: "string", enum: ["passed", "failed", "checking"] }, upload: UPLOAD, decision: { type: ["object", "null"] } }),
  },
  {
    name: "review", title: "Send the review information",
    description: "Send review.json (the examples, negatives, sources and notes a reviewer reads) for an uploaded version; its checks run again, so wait with status before submit. With `attest`, also make the five attestations in your organization's name (the data may be published, the sources are the holders' own, no record names a private person, the fetcher never tries the network, the words inform without selling): make them only when they are true. Refused while the version's checks are being made. Needs a login.",
    input: { version: VERSION, file: { type: "string", description: "The review.json to send, a path relative to the server's working folder." }, attest: { type: "boolean", description: "Make the five attestations too." } },
    required: ["file"],
    output: answerOf({ upload: UPLOAD, attestations: { type: ["array", "null"] } }),
  },
  {
    name: "submit", title: "Submit a version for review",
    description: "Submit an uploaded version whose checks passed for a reviewer's decision. Refused with every reason still open, each a finding with its fix: checks, review information, attestations (review with attest), and the person's (the organization's domain, the Developer Agreement, the invitation) that an owner or admin settles in the portal. status then shows the decision. Needs a login.",
    input: { version: VERSION },
    output: answerOf({ upload: UPLOAD, replaced: { type: ["object", "null"] } }),
  },
  {
    name: "publish", title: "Publish an approved version",
    description: "Publish a version a reviewer approved: it goes live within 15 minutes. With `shadow` (1 to 5), an update of a live plug-in first runs beside the current version for its next that many scheduled runs, on the same downloads, writing nothing; each shadow run's record diff (new, revised, moved, missing per series) is in rollout.shadows, and it is promoted after them unless one fails or would withdraw more than the Held limits allow (then held: the current version runs on). Only an agent whose login allows publishing (else AGENT_MAY_NOT_PUBLISH: an owner or admin publishes it in the portal). Needs a login.",
    input: { version: VERSION, shadow: { type: "integer", minimum: 0, maximum: 5, description: "The shadow period in scheduled runs, 1 to 5; 0 (the default) publishes at once." } },
    output: answerOf({ upload: UPLOAD, rollout: { type: ["object", "null"] } }),
  },
  ...Object.entries({
    promote: ["Promote a shadowing version early", "Promote the version shadowing a plug-in before its shadow period ends: it becomes current as publishing makes it (readers move at the next run). Refused (STATE-CONFLICT) unless a rollout is shadowing."],
    stop: ["Stop a rollout", "Stop a rollout shadowing or held: the current version keeps running, the new one stays approved and unpublished. Refused (STATE-CONFLICT) when none is under way."],
    rollback: ["Roll back a promoted version", "After a promotion, go back to the version it superseded while the promoted one is still current: it is current at once, its approval standing; the records the promoted version wrote stay, as revisions once rewritten. The operators see the move at the host."],
  }).map(([name, [title, what]]) => ({
    name, title,
    description: `${what} \`reason\` is kept in the plug-in's history with who moved it. Only an agent whose login allows publishing (else AGENT_MAY_NOT_PUBLISH: its next says who can). Needs a login.`,
    input: { plugin: PLUGIN, reason: { type: "string", minLength: 1, maxLength: 500, description: "Why: kept in the plug-in's history." } },
    required: ["reason"],
    output: answerOf({ rollout: { type: "object" } }),
  })),
  {
    name: "unpublish", title: "Take a plug-in out of the store",
    description: "Take a published plug-in out of the store: nobody new can install it, its readers keep it. Repeated, nothing changes (changed is false). Only an agent whose login allows publishing. Needs a login.",
    input: { plugin: PLUGIN },
    output: answerOf({ listing: LISTING, changed: { type: "boolean" } }),
  },
  {
    name: "relist", title: "List an unpublished plug-in again",
    description: "Put a plug-in you unpublished back in the store; refused for a plug-in the service shelved or took down, or one retired. Repeated, nothing changes (changed is false). Only an agent whose login allows publishing. Needs a login.",
    input: { plugin: PLUGIN },
    output: answerOf({ listing: LISTING, changed: { type: "boolean" } }),
  },
  {
    name: "retire", title: "Retire a plug-in (a person's move)",
    description: "Always refused for an agent (AGENT_FORBIDDEN): retiring ends a plug-in for its readers for good, so only a person does it, in the portal, typing its id. The refusal names the portal page.",
    input: { plugin: PLUGIN },
    output: answerOf({}),
  },
];
const MCP_TOOL = new Map(MCP_TOOLS.map((t) => [t.name, t]));

/** A tool as tools/list gives it at `version`: the schemas without the `cli` notes. */
function toolListing(t, version) {
  const properties = Object.fromEntries(Object.entries(t.input).map(([k, { cli: _cli, ...schema }]) => [k, schema]));
  const listed = { name: t.name, title: t.title, description: t.description, inputSchema: { type: "object", properties, additionalProperties: false, ...(t.required ? { required: t.required } : {}) } };
  if (MCP_STRUCTURED.has(version)) listed.outputSchema = t.output;
  return listed;
}

/** The first way `args` breaks the tool's input schema (JSON Schema, the keywords used above),
 * or null. */
function argumentProblem(t, args) {
  for (const name of t.required ?? []) if (!has(args, name)) return `${name} is required`;
  for (const [name, value] of Object.entries(args)) {
    const schema = t.input[name];
    if (!schema) return `${name} is not an argument of ${t.name}; it takes ${Object.keys(t.input).join(", ")}`;
    const types = [schema.type].flat();
    const typeOf = typeof value === "number" ? (Number.isInteger(value) ? "integer" : "number") : typeof value;
    if (!types.includes(typeOf) && !(typeOf === "integer" && types.includes("number"))) return `${name} is ${JSON.stringify(value)}: give ${types.join(" or ")}`;
    if (schema.enum && !schema.enum.includes(value)) return `${name} is ${JSON.stringify(value)}: give one of ${schema.enum.join(", ")}`;
    if (schema.pattern && !new RegExp(schema.pattern).test(value)) return `${name} is ${JSON.stringify(value)}: it does not match ${schema.pattern}`;
    if (schema.exclusiveMinimum !== undefined && !(value > schema.exclusiveMinimum)) return `${name} is ${value}: give more than ${schema.exclusiveMinimum}`;
    if (schema.minimum !== undefined && !(value >= schema.minimum)) return `${name} is ${value}: give ${schema.minimum} or more`;
    if (schema.maximum !== undefined && !(value <= schema.maximum)) return `${name} is ${value}: give ${schema.maximum} or less`;
  }
  return null;
}

/** The command line a tool call runs: its positional argument, its options, --json. */
function argvOf(t, args) {
  const argv = [t.name];
  for (const [name, schema] of Object.entries(t.input)) {
    const value = args[name];
    if (value === undefined || value === false) continue;
    if (schema.cli === "positional") argv.splice(1, 0, String(value));
    else if (value === true) argv.push(`--${name}`);
    else argv.push(`--${name}`, String(value));
  }
  return [...argv, "--json"];
}

/** login as a tool: never a login (a person approves it), but the command that logs in. */
function loginAnswer(args) {
  const server = checkServer(args.server ?? (process.env.ALMANAC_BASE_URL || savedServer() || DEFAULT_BASE_URL));
  const name = args.name ?? "Claude";
  const command = `${toolCommand()} login --server ${shellWord(server)} --name ${shellWord(name)}`;
  const run = `run ${command} in a terminal: it prints a code and an address for an owner or admin of your organization to approve (they choose whether you may publish), and waits until they have`;
  let saved = null;
  try {
    saved = savedLogin();
  } catch {
    // Not logged in: the answer is the command.
  }
  if (saved && saved.server === server) {
    return { ok: true, server, agent_name: saved.agent_name, organization_id: saved.organization_id, may_publish: Boolean(saved.may_publish), command, next: `already logged in as agent "${saved.agent_name}" for organization ${saved.organization_id}${saved.may_publish ? "" : " (publishing not allowed)"}; to log in again, ${run}` };
  }
  return { ok: false, error: { kind: "not-logged-in", code: "AUTH-REQUIRED", message: `an agent's login needs a person: the login tool never logs in${saved ? ` (logged in to ${saved.server}, not ${server})` : ""}`, fix: `Ask a person to approve your login: ${run}.`, docs: docsLink("AUTH-REQUIRED", server), next: run }, command };
}

/** A tool call: the object the command's --json prints (or a refusal's), never a throw. */
async function callTool(t, args, signal) {
  const problemWithArgs = argumentProblem(t, args);
  if (problemWithArgs) {
    return { ok: false, error: { kind: "usage", code: "REQUEST-INVALID", message: `${t.name}: ${problemWithArgs}`, fix: "Give the arguments the tool's input schema names, of their types.", docs: docsLink("REQUEST-INVALID"), next: `${toolCommand()} help ${t.name}` } };
  }
  if (t.name === "login") {
    try {
      return loginAnswer(args);
    } catch (e) {
      if (!(e instanceof UsageError)) throw e;
      return { ok: false, error: errorObject(e, { name: "login", argv: ["login"] }) };
    }
  }
  // A login made meanwhile (in a terminal) names the service the docs links go to.
  savedServers.clear();
  let answered = null;
  const sink = { json: (object) => (answered = object), text: (text) => process.stderr.write(text), note: (text) => process.stderr.write(text) };
  const argv = argvOf(t, args);
  await mcpCalls.run({ signal }, () => runCommand(argv[0], argv.slice(1), sink));
  return answered ?? { ok: false, error: { kind: "refused", code: "INTERNAL-ERROR", message: `${t.name} gave no answer: a fault of the tool`, fix: "Run the same command in a terminal to see what it says.", docs: docsLink("INTERNAL-ERROR"), next: `${toolCommand()} ${argv.map(shellWord).join(" ")}` } };
}

/** A tool's answer as a CallToolResult at `version`: the object as JSON text and, from
 * 2025-06-18, as structuredContent; a refusal (error) is isError. */
function toolResult(object, version) {
  const result = { content: [{ type: "text", text: JSON.stringify(object) }] };
  if (MCP_STRUCTURED.has(version)) result.structuredContent = object;
  if (object.error) result.isError = true;
  return result;
}

// Resources: the problem catalog, each code's page, and the contract an agent writing a
// plug-in reads (the AGENTS.md init writes), all from this file: no network.
const RESOURCE_GUIDE = "almanac://guide/agents";
const RESOURCE_CATALOG = "almanac://problems";

function mcpResources() {
  return [
    { uri: RESOURCE_GUIDE, name: "agents-guide", title: "Instructions for agents writing an Almanac plug-in", description: "The contract of a plug-in folder: the run context, the records, the rules that matter, the check loop and the publishing path (the AGENTS.md that init writes).", mimeType: "text/markdown" },
    { uri: RESOURCE_CATALOG, name: "problem-catalog", title: "The problem catalog", description: "Every problem code: its severity, area, title and fix, and its page's address.", mimeType: "application/json" },
    ...CATALOG.map((e) => ({ uri: `${RESOURCE_CATALOG}/${e.code}`, name: e.code, title: e.title, description: `${e.severity} (${e.area}): the rule, why it exists, an example that ${e.severity === "warning" ? "is warned" : "fails"} and one that ${e.severity === "warning" ? "is not" : "passes"}, and the fix.`, mimeType: "text/markdown" })),
  ];
}

const MCP_TEMPLATES = [{ uriTemplate: `${RESOURCE_CATALOG}/{code}`, name: "problem", title: "A problem code's page", description: "One code of the catalog (as a finding names it): the rule, why it exists, an example that fails and one that passes, and the fix.", mimeType: "text/markdown" }];

/** A code's page as Markdown: the rule, why, the two examples and the fix. */
function problemMarkdown(entry) {
  const page = problemPages()[entry.code];
  const fence = (text) => "`".repeat(Math.max(3, ...[...text.matchAll(/`+/g)].map((m) => m[0].length + 1)));
  const example = (label, ex) => `## ${label}: ${ex.where}\n\n${fence(ex.text)}\n${ex.text}\n${fence(ex.text)}\n`;
  const [bad, good] = entry.severity === "warning" ? ["Warned", "Not warned"] : ["Fails", "Passes"];
  return `# ${entry.code}: ${entry.title}\n\nSeverity ${entry.severity}, area ${entry.area}.${entry.retired ? " This code is retired." : ""}\n\n## The rule\n\n${page.rule}\n\n## Why\n\n${page.why}\n\n${example(bad, page.failing)}\n${example(good, page.passing)}\n## Fix\n\n${entry.fix}\n\nThe page on the service: ${docsLink(entry.code)}\n`;
}

/** The contents of a resource, or null when there is none at `uri`. */
function readResource(uri) {
  if (uri === RESOURCE_GUIDE) return { uri, mimeType: "text/markdown", text: AGENTS_MD };
  if (uri === RESOURCE_CATALOG) return { uri, mimeType: "application/json", text: JSON.stringify({ catalog: 1, problems: CATALOG.map((e) => ({ ...e, page: `${RESOURCE_CATALOG}/${e.code}`, docs: docsLink(e.code) })) }, null, 2) };
  const entry = uri.startsWith(`${RESOURCE_CATALOG}/`) ? CATALOG_BY_CODE.get(uri.slice(RESOURCE_CATALOG.length + 1)) : null;
  return entry ? { uri, mimeType: "text/markdown", text: problemMarkdown(entry) } : null;
}

/** What the server tells a client about itself (initialize's and server/discover's). */
function mcpInstructions() {
  return `The Almanac plug-in developers' tool: write, check and publish a calendar plug-in. Folder and file arguments are paths, absolute or relative to ${process.cwd()}. Read ${RESOURCE_GUIDE} first (the plug-in contract), and ${RESOURCE_CATALOG}/<code> for any finding's rule and examples. Writing: init, then check (and preview) until it passes. Publishing: login gives the command a person approves in a terminal; then upload, status with wait, review with the review.json and attest, status with wait, submit; a reviewer decides (status shows it); publish, unpublish and relist only when the login allows publishing; retire is a person's. Each answer is the object the command's --json prints; a refusal is isError with error {code, message, fix, docs, next}: do what next says (it names the command line; each is the tool of the same name with the same arguments).`;
}

/** One MCP session over a pair of streams: `send` writes one message. */
class McpServer {
  constructor(send) {
    this.send = send;
    this.handshake = null; // the revision an initialize agreed, else null
    this.inFlight = new Map(); // request id -> AbortController of its tool call
  }

  /** One line from the client. */
  receive(line) {
    if (!line.trim()) return;
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      return this.fail(null, RPC.parse, "Parse error: the line is not JSON");
    }
    if (Array.isArray(message)) return this.fail(null, RPC.invalidRequest, "Invalid Request: batches are not taken; send one message a line");
    const id = isObject(message) && (typeof message.id === "string" || isInt(message.id)) ? message.id : null;
    if (!isObject(message) || message.jsonrpc !== "2.0") return this.fail(id, RPC.invalidRequest, "Invalid Request: not a JSON-RPC 2.0 message");
    if (typeof message.method !== "string") {
      // A response: this server sends no requests, so there is nothing it answers.
      if (has(message, "result") || has(message, "error")) return;
      return this.fail(id, RPC.invalidRequest, "Invalid Request: a message with no method");
    }
    if (!has(message, "id")) return this.notification(message);
    if (id === null) return this.fail(null, RPC.invalidRequest, "Invalid Request: an id is a string or an integer");
    if (this.inFlight.has(id)) return this.fail(id, RPC.invalidRequest, `Invalid Request: request ${JSON.stringify(id)} is still in flight`);
    if (message.params !== undefined && !isObject(message.params)) return this.fail(id, RPC.invalidParams, "Invalid params: params is an object");
    this.request(id, message.method, message.params ?? {}).catch((e) => {
      process.stderr.write(`almanac-plugin mcp: ${message.method}: ${e.stack || e.message}\n`);
      this.fail(id, RPC.internal, `Internal error: ${e.message}`);
    });
  }

  notification({ method, params }) {
    if (method === "notifications/cancelled" && isObject(params)) {
      const call = this.inFlight.get(params.requestId);
      if (call) call.abort(new Error(`cancelled${params.reason ? `: ${params.reason}` : ""}`));
    }
    // notifications/initialized and any other notification: nothing to answer.
  }

  /** The revision a request is served at: {version, modern}, or an error to answer. */
  eraOf(method, params) {
    const meta = isObject(params._meta) ? params._meta : {};
    const asked = meta[MCP_META.version];
    if (method === "initialize" || (method === "ping" && asked === undefined)) return { version: this.handshake, modern: false };
    if (asked !== undefined) {
      if (MCP_MODERN.includes(asked)) {
        if (!isObject(meta[MCP_META.capabilities])) return { error: [RPC.invalidParams, `Invalid params: _meta has no ${MCP_META.capabilities}`] };
        return { version: asked, modern: true };
      }
      if (this.handshake === null || asked !== this.handshake) return { error: [RPC.unsupportedVersion, "Unsupported protocol version", { supported: [...MCP_MODERN, ...MCP_HANDSHAKE], requested: asked }] };
    }
    if (this.handshake === null) return { error: [RPC.invalidParams, `Invalid params: no ${MCP_META.version} in _meta, and no initialize before: name the revision in each request's _meta (${MCP_MODERN.join(", ")}), or send initialize first (${MCP_HANDSHAKE.join(", ")})`] };
    return { version: this.handshake, modern: false };
  }

  async request(id, method, params) {
    const era = this.eraOf(method, params);
    if (era.error) return this.fail(id, ...era.error);
    const answer = (result, cacheable = false) => this.reply(id, era.modern ? { resultType: "complete", ...result, ...(cacheable ? MCP_CACHE : {}), _meta: { [MCP_META.serverInfo]: MCP_SERVER } } : result);
    const capabilities = { tools: {}, resources: {} };
    if (params.cursor !== undefined && method.endsWith("/list")) return this.fail(id, RPC.invalidParams, "Invalid params: this server gives every item at once, so it issued no cursor");
    switch (era.modern ? method : `legacy ${method}`) {
      case "legacy initialize": {
        const asked = params.protocolVersion;
        this.handshake = MCP_HANDSHAKE.includes(asked) ? asked : MCP_HANDSHAKE[0];
        process.stderr.write(`almanac-plugin mcp: initialize: revision ${this.handshake}${asked === this.handshake ? "" : ` (asked ${asked})`}\n`);
        return answer({ protocolVersion: this.handshake, capabilities, serverInfo: MCP_SERVER, instructions: mcpInstructions() });
      }
      case "legacy ping":
        return answer({});
      case "server/discover":
        return answer({ supportedVersions: [...MCP_MODERN, ...MCP_HANDSHAKE], capabilities, instructions: mcpInstructions() }, true);
      case "tools/list":
      case "legacy tools/list":
        return answer({ tools: MCP_TOOLS.map((t) => toolListing(t, era.version)) }, true);
      case "resources/list":
      case "legacy resources/list":
        return answer({ resources: mcpResources() }, true);
      case "resources/templates/list":
      case "legacy resources/templates/list":
        return answer({ resourceTemplates: MCP_TEMPLATES }, true);
      case "resources/read":
      case "legacy resources/read": {
        const contents = typeof params.uri === "string" ? readResource(params.uri) : null;
        if (!contents) return this.fail(id, era.modern ? RPC.invalidParams : RPC.resourceNotFound, "Resource not found", { uri: params.uri ?? null });
        return answer({ contents: [contents] }, true);
      }
      case "tools/call":
      case "legacy tools/call":
        return this.call(id, params, era, answer);
      default:
        return this.fail(id, RPC.methodNotFound, `Method not found: ${method}`);
    }
  }

  /** tools/call: an unknown tool or arguments that are not an object are the protocol's
   * errors; everything the tool says, refusals included, is its result. */
  async call(id, params, era, answer) {
    const t = typeof params.name === "string" ? MCP_TOOL.get(params.name) : null;
    if (!t) return this.fail(id, RPC.invalidParams, `Unknown tool: ${params.name}`);
    if (params.arguments !== undefined && !isObject(params.arguments)) return this.fail(id, RPC.invalidParams, "Invalid params: arguments is an object");
    const controller = new AbortController();
    this.inFlight.set(id, controller);
    const started = Date.now();
    let object;
    try {
      object = await callTool(t, params.arguments ?? {}, controller.signal);
    } catch (e) {
      if (!controller.signal.aborted) process.stderr.write(`almanac-plugin mcp: ${t.name}: ${e.stack || e.message}\n`);
      object = { ok: false, error: { kind: "refused", code: "INTERNAL-ERROR", message: `${t.name} failed: ${e.message}`, fix: "A fault of the tool: run the same command in a terminal to see more, and tell the service operator.", docs: docsLink("INTERNAL-ERROR"), next: `${toolCommand()} ${argvOf(t, params.arguments ?? {}).map(shellWord).join(" ")}` } };
    } finally {
      this.inFlight.delete(id);
    }
    // A cancelled call is not answered: the client said it will not read the answer.
    if (controller.signal.aborted) return process.stderr.write(`almanac-plugin mcp: ${t.name}: cancelled\n`);
    process.stderr.write(`almanac-plugin mcp: ${t.name}: ${object.error ? `refused, ${object.error.code}` : "answered"} (${Date.now() - started} ms)\n`);
    return answer(toolResult(object, era.version));
  }

  reply(id, result) {
    this.send({ jsonrpc: "2.0", id, result });
  }

  fail(id, code, message, data) {
    this.send({ jsonrpc: "2.0", id, error: data === undefined ? { code, message } : { code, message, data } });
  }

  /** The end of input: every call still running is cancelled, and ends. */
  async close() {
    const running = [...this.inFlight.values()];
    for (const c of running) c.abort(new Error("the client closed the connection"));
    while (this.inFlight.size) await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function cmdMcp(args) {
  if (args.positional.length) throw new UsageError("mcp takes no argument");
  const { AsyncLocalStorage } = process.getBuiltinModule("node:async_hooks");
  mcpCalls = new AsyncLocalStorage();
  commandsFromAnywhere = true;
  // Standard output carries protocol messages only: whatever else would be written there goes
  // to standard error.
  const stdout = process.stdout.write.bind(process.stdout);
  process.stdout.write = (chunk, encoding, done) => process.stderr.write(chunk, encoding, done);
  const server = new McpServer((message) => stdout(JSON.stringify(message) + "\n"));
  process.stderr.write(`almanac-plugin mcp ${TOOL_VERSION}: serving ${process.cwd()} (revisions ${[...MCP_MODERN, ...MCP_HANDSHAKE].join(", ")})\n`);
  let pending = "";
  process.stdin.setEncoding("utf8");
  for await (const chunk of process.stdin) {
    pending += chunk;
    let end;
    while ((end = pending.indexOf("\n")) >= 0) {
      server.receive(pending.slice(0, end).replace(/\r$/, ""));
      pending = pending.slice(end + 1);
    }
  }
  server.receive(pending);
  await server.close();
  return 0;
}

// ---------------------------------------------------------------------------------------------
// check --against: the update rules (Versioning 3 and 4) against a pack, a folder or a version
// ---------------------------------------------------------------------------------------------

/** The files of a ZIP archive (stored or deflate entries): Map(name -> Buffer). */
export function readZip(bytes) {
  let end = -1;
  for (let i = bytes.length - 22; i >= Math.max(0, bytes.length - 22 - 65535); i--) {
    if (bytes.readUInt32LE(i) === 0x06054b50) {
      end = i;
      break;
    }
  }
  if (end < 0) throw new Error("not a ZIP archive");
  const count = bytes.readUInt16LE(end + 10);
  let at = bytes.readUInt32LE(end + 16);
  const files = new Map();
  for (let n = 0; n < count; n++) {
    if (bytes.readUInt32LE(at) !== 0x02014b50) throw new Error("a damaged ZIP archive");
    const method = bytes.readUInt16LE(at + 10);
    const size = bytes.readUInt32LE(at + 20);
    const nameLength = bytes.readUInt16LE(at + 28);
    const extra = bytes.readUInt16LE(at + 30);
    const comment = bytes.readUInt16LE(at + 32);
    const local = bytes.readUInt32LE(at + 42);
    const name = bytes.subarray(at + 46, at + 46 + nameLength).toString("utf8");
    const start = local + 30 + bytes.readUInt16LE(local + 26) + bytes.readUInt16LE(local + 28);
    const data = bytes.subarray(start, start + size);
    if (method === 8) files.set(name, nodeZlib().inflateRawSync(data));
    else if (method === 0) files.set(name, Buffer.from(data));
    else throw new Error(`${name}: compression method ${method}`);
    at += 46 + nameLength + extra + comment;
  }
  return files;
}

/** {manifest, digest} of what `--against` names: a pack (.zip), a folder, or a version id of
 * the logged-in organization (fetched from the server given to login). */
async function againstVersion(text) {
  if (/^[0-9]+$/.test(text) && !fs.existsSync(text)) {
    const login = savedLogin();
    const upload = await portal(login, "GET", `${orgPath(login)}/uploads/${text}`, "check --against");
    const manifest = await portal(login, "GET", `${orgPath(login)}/uploads/${text}/manifest`, "check --against");
    return { manifest, digest: upload.digest, label: `version ${text} (${upload.plugin_id} ${upload.version})` };
  }
  const file = path.resolve(text);
  if (!fs.existsSync(file)) throw new UsageError(`--against "${text}": no such pack, folder or version id`);
  if (fs.statSync(file).isDirectory()) {
    const manifest = validAgainst(readJsonFile(path.join(file, "plugin.json")), text);
    return { manifest, digest: computeDigest(file).digest, label: text };
  }
  let files;
  try {
    files = readZip(fs.readFileSync(file));
  } catch (e) {
    throw new UsageError(`--against "${text}": ${e.message}`);
  }
  const manifestName = [...files.keys()].find((n) => /^[^/]+\/plugin\.json$/.test(n));
  const packName = [...files.keys()].find((n) => /^[^/]+\/\.pack\.json$/.test(n));
  if (!manifestName) throw new UsageError(`--against "${text}": the pack holds no <id>/plugin.json`);
  let pack = null;
  try {
    pack = packName ? JSON.parse(files.get(packName).toString("utf8")) : null;
  } catch {
    pack = null;
  }
  return { manifest: validAgainst(readManifestText(files.get(manifestName).toString("utf8")).manifest, text), digest: pack?.digest ?? null, label: text };
}

function validAgainst(manifest, text) {
  if (!manifest || typeof manifest !== "object" || validateManifest(manifest).some((p) => p.severity === "error")) throw new UsageError(`--against "${text}": its plugin.json does not pass the manifest rules`);
  return manifest;
}

function versionKey(v) {
  return String(v).split(".").map(Number);
}

/** The version-number rule (Versioning 3) and the update rules (Versioning 4) of `candidate`
 * (digest `digest`) as an update of `published`. */
export function updateRuleFindings(published, candidate, digest, publishedDigest) {
  const out = [];
  if (published.id !== candidate.id) return [problem("PLG-INVALID", `--against names plug-in ${published.id}, this folder is ${candidate.id}`, { path: "id" })];
  const [a, b] = [versionKey(candidate.version), versionKey(published.version)];
  const order = a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
  if (order === 0 && publishedDigest && digest !== publishedDigest) out.push(problem("PLG-VERSION-REUSED", `version ${candidate.version} names other code already (digest ${publishedDigest}); raise the version`, { path: "version" }));
  if (order < 0) out.push(problem("PLG-VERSION-NOT-GREATER", `version ${candidate.version} does not exceed ${published.version}`, { path: "version" }));
  out.push(...compareManifests(published, candidate).map((p) => ({ ...p, file: "plugin.json" })));
  return out;
}

// ---------------------------------------------------------------------------------------------
// CLI
// ---------------------------------------------------------------------------------------------

const COMMANDS = {
  help: { run: cmdHelp, options: {}, usage: "help [<command>]", about: "Print usage for every command, or for one." },
  init: {
    run: cmdInit, options: { kind: "value", timezone: "value", json: "flag" }, usage: "init <id> [--kind value|event|item] [--timezone <zone>] [--json]",
    about: "Create a new folder <id> with plugin.json, fetch.mjs, fixtures/ (sources, records.jsonl, context.json at ALMANAC_PLUGIN_NOW or now, a failing run case), README.md, AGENTS.md and CLAUDE.md. It passes check as created. <id> may be a path ending in the id (init plugins/ecb-rates).",
    details: ["--kind       the first series' kind (default value)", "--timezone   IANA zone of the manifest (default the machine's)", "--json       print one object {ok, id, folder, kind, timezone, files, next}", "The name is made from the id; parts without a vowel and well-known acronyms (ecb, fed, imf, oecd, usd, uk, cpi, ...) stay in capitals: ecb-fx-rates -> \"ECB FX Rates\", my-value-plugin -> \"My Value Plugin\"."],
  },
  check: {
    run: cmdCheck, options: { update: "flag", json: "flag", against: "value" }, usage: "check [<folder>] [--update] [--json] [--against <pack, folder or version id>]",
    about: "Check the manifest, imports, code files, fixtures; run the fetcher (twice) on fixtures/sources/ behind the guard; check every record; compare with fixtures/records.jsonl; run each fixtures/runs/<case>; check the listing; print the digest.",
    details: ["--update     write the fetcher's output to fixtures/records.jsonl (and each case's records.jsonl) instead of comparing", "--json       print one object {ok, summary, findings, digest}; each finding has code, severity, message, fix and docs", "--against    also run the version-number rule and the update rules (Versioning 3 and 4) against a pack, a folder or an uploaded version id of your organization (after login), as the server does at upload"],
  },
  preview: {
    run: cmdPreview, options: { days: "value", language: "value", run: "value", live: "flag", html: "value", json: "flag" },
    usage: "preview [<folder>] [--days <from>..<to>] [--language <code>] [--run <case> | --live] [--html <file> | --json]",
    about: "Draw the days as a reader sees them (events first, values in force, last-rate and status rows).",
    details: ["--days       YYYY-MM-DD..YYYY-MM-DD, at most 62 days (default 3 days either side of the fixture's today)", "--language   the reader's language (default en)", "--run        preview fixtures/runs/<case> as a later run over the fixture records", "--live       download the real sources once and preview them", "--html       also write a self-contained page to <file>", "--json       run check first; print {ok, summary, cache, findings, digest, today, language, status, days} (ok: check passes)"],
  },
  probe: { run: cmdProbe, options: { json: "flag" }, usage: "probe [<folder>] [--json]", about: "Download each real source once (https, declared hosts, maxBytes, 5 redirects, 60 s), run the fetcher and check every record. Exit 1 when a source cannot be reached (PLG-SOURCE-DOWNLOAD) or the fetcher fails on it.", details: ["--json       print one object {ok, today, records, series, findings}: records is how many the fetcher printed, series how many of each"] },
  pack: { run: cmdPack, options: { out: "value", json: "flag" }, usage: "pack [<folder>] [--out <file>] [--json]", about: "Check, then write the ZIP to upload (default <id>-<version>.zip beside the folder). Refuses and writes nothing when check fails.", details: ["--out        where to write the archive", "--json       print one object {ok, file, files, bytes, digest, findings}; refused: {ok: false, error} with the findings"] },
  digest: { run: cmdDigest, options: { files: "flag", json: "flag" }, usage: "digest [<folder>] [--files] [--json]", about: "Print the digest of the plug-in code (sha256 over the covered files).", details: ["--files      list the covered files in reading order instead", "--json       print one object {ok, digest, files, findings}"] },
  mcp: {
    run: cmdMcp, options: {}, usage: "mcp",
    about: "Serve the commands to an agent as a Model Context Protocol server over standard input and output (revision 2026-07-28, and 2025-11-25 back to 2024-11-05 by initialize); logs on standard error. Tools init, check, preview, digest, pack, probe, upload, status, review, submit, publish, unpublish and relist answer with the object their --json prints (a refusal as an error result with code, message, fix, docs and next); login answers with the command a person approves, retire is refused. Resources: the problem catalog, each code's page and the plug-in contract (almanac://guide/agents).",
    details: mcpHelp,
  },
};

// The publishing commands ("Command line"): they speak to the server given to login.
const json = { json: "flag" };
const PUBLISHING_COMMANDS = {
  login: {
    run: cmdLogin, options: { server: "value", name: "value", ...json }, usage: "login [--server <url>] [--name <agent name>] [--json]",
    about: "Sign this machine's agent in: prints a code and an address where an owner or admin of your organization approves it (choosing the organization and whether it may publish), waits, then keeps the token and the server's address in plugin-token.json (0600, see ALMANAC_PLUGIN_HOME). Run again within the code's 10 minutes, it waits for the same code. A new login on this machine revokes the token of the one before.",
    details: ["--server     the service's address: https, or http only to this machine (127.0.0.1, ::1, localhost); default ALMANAC_BASE_URL, else " + DEFAULT_BASE_URL, "--name       the agent's name on the approval screen (default \"almanac-plugin on <this machine's name>\")", "--json       print one object {ok, server, agent_id, agent_name, organization_id, may_publish} (the code and address go to stderr)"],
  },
  logout: { run: cmdLogout, options: json, usage: "logout [--json]", about: "Revoke the token at the service and delete it from this machine.", details: ["--json       print one object {ok, server, revoked}"] },
  upload: {
    run: cmdUpload, options: json, usage: "upload [<folder>] [--json]",
    about: "Check and pack the folder (nothing is sent when check fails), upload it to your organization, and print the version, its status and the findings. The version is kept as the plug-in's last upload from this machine (plugins/<id>.json).",
    details: ["--json       print one object {ok, upload, next}; upload has id, plugin_id, version, digest, state, checks, warnings, agent_name, ..."],
  },
  status: {
    run: cmdStatus, options: { wait: "flag", timeout: "value", ...json }, usage: "status [<version>] [--wait [--timeout <seconds>]] [--json]",
    about: "Show an uploaded version: its state, its checks and their findings, the latest reviewer's decision with its reason and note, and what to do next. <version> is a version id, or a folder or plug-in id for its last upload from here; default the plug-in in the current folder, else the last upload. The checks decide the exit code: 0 every check passed, 1 the checks are final and one failed, 3 the checks are still being made.",
    details: ["--wait       ask again until the checks are final (a progress line on a terminal, plain lines otherwise), waiting 1 s, then twice as long each time up to 15 s, or as long as the service's Retry-After says", "--timeout    with --wait, stop after this many seconds (exit 3 when the checks are still being made then)", "--json       print one object {ok, checks, upload, decision, next}: ok is true only when every check passed; checks is passed, failed or checking; decision is the latest reviewer's {decision, reason, note, decided_at} or null; next says what to do"],
  },
  review: {
    run: cmdReview, options: { file: "value", attest: "flag", ...json }, usage: "review [<version>] --file <review.json> [--attest] [--json]",
    about: "Send the review information (review.json's object; it replaces the upload's review.json and its checks run again); --attest makes the five attestations in your organization's name, recorded with the agent's name. Refused while the version's checks are being made: wait for them with status --wait, then send it again.",
    details: ["--file       the review.json to send (required)", "--attest     make the five attestations: " + ATTESTATIONS.join(", "), "--json       print one object {ok, upload, attestations, next}"],
  },
  submit: { run: cmdSubmit, options: json, usage: "submit [<version>] [--json]", about: "Submit a version for review; refused with each reason (checks, review information, attestations, agreement, domain, invitation) until its conditions hold.", details: ["--json       print one object {ok, upload, replaced, next}"] },
  publish: { run: cmdPublish, options: { shadow: "value", ...json }, usage: "publish [<version>] [--shadow <runs>] [--json]", about: "Publish an approved version; only an agent allowed to publish (else AGENT_MAY_NOT_PUBLISH). With --shadow, an update of a live plug-in first runs beside the current version for that many runs, writing nothing, and is promoted after them unless one fails or would withdraw too much (then it is held).", details: ["--shadow     the shadow period in runs, 1 to 5; 0 (the default) publishes at once", "--json       print one object {ok, upload, rollout, next}"] },
  promote: { run: rolloutCommand("promote"), options: { reason: "value", ...json }, usage: "promote [<plug-in>] --reason <why> [--json]", about: "Promote the version shadowing a plug-in before its shadow period ends: it becomes current as publishing makes it. Only an agent allowed to publish.", details: ["--reason     why (required; kept in the plug-in's history)", "--json       print one object {ok, rollout}"] },
  stop: { run: rolloutCommand("stop"), options: { reason: "value", ...json }, usage: "stop [<plug-in>] --reason <why> [--json]", about: "Stop a rollout shadowing or held: the current version keeps running. Only an agent allowed to publish.", details: ["--reason     why (required; kept in the plug-in's history)", "--json       print one object {ok, rollout}"] },
  rollback: { run: rolloutCommand("rollback"), options: { reason: "value", ...json }, usage: "rollback [<plug-in>] --reason <why> [--json]", about: "After a promotion, go back to the version it superseded: current at once, its approval standing; records the promoted version wrote stay as revisions. Only an agent allowed to publish.", details: ["--reason     why (required; kept in the plug-in's history, shown at the host)", "--json       print one object {ok, rollout}"] },
  unpublish: { run: listingCommand("unpublish"), options: json, usage: "unpublish [<plug-in>] [--json]", about: "Take a plug-in out of the store (an id or a folder; default the current folder); current readers keep it. Repeated, nothing changes and it says it was already unpublished. Only an agent allowed to publish.", details: ["--json       print one object {ok, listing, changed}"] },
  relist: { run: listingCommand("relist"), options: json, usage: "relist [<plug-in>] [--json]", about: "List an unpublished plug-in again; refused for taken-down, shelved or retired plug-ins. Repeated, nothing changes and it says it was already listed. Only an agent allowed to publish.", details: ["--json       print one object {ok, listing, changed}"] },
  retire: { run: cmdRetire, options: json, usage: "retire [<plug-in>] [--json]", about: "Always refused for an agent (AGENT_FORBIDDEN, exit 1): prints where a person retires the plug-in in the portal, typing its id.", details: ["--json       print one object {ok: false, error: {kind, code, message, portal, fix, docs, next}}"] },
};
Object.assign(COMMANDS, PUBLISHING_COMMANDS);

const PUBLISHING_EXITS = "Exit codes: 0 done; 1 not logged in, the service unreachable, or refused (its code and message on stderr, then next: what to do; with --json the object on stdout, {ok: false, error: {kind, code, message, fix, docs, next}}); 2 command not understood. status: 0 every check passed, 1 a check failed, 3 the checks are still being made.";

/** help mcp's lines: how a client starts this server (the MCP configuration clients read). */
function mcpHelp() {
  const config = { mcpServers: { almanac: { command: "node", args: [toolFile(), "mcp"] } } };
  return [
    "Register it with an MCP client (its configuration file, such as .mcp.json in a project):",
    ...JSON.stringify(config, null, 2).split("\n").map((l) => `  ${l}`),
    "The server works in the folder the client starts it in: folder and file arguments are relative to it.",
    "Set env (ALMANAC_PLUGIN_HOME, ALMANAC_BASE_URL) in the same entry to give it another home or service.",
    "A person still approves the login: run login in a terminal first (the login tool prints the command).",
  ];
}

function cmdHelp(args) {
  const name = args.positional[0];
  if (name !== undefined) {
    const c = has(COMMANDS, name) ? COMMANDS[name] : null;
    if (!c) throw new UsageError(`no command "${name}"; the commands are ${Object.keys(COMMANDS).join(", ")}; try: node almanac-plugin.mjs help`);
    const exits = has(PUBLISHING_COMMANDS, name) ? `\n${PUBLISHING_EXITS}\n` : "";
    const details = typeof c.details === "function" ? c.details() : c.details;
    args.out.text(`usage: node almanac-plugin.mjs ${c.usage}\n\n${c.about}\n${details ? "\n" + details.map((d) => `  ${d}`).join("\n") + "\n" : ""}${exits}`);
    return 0;
  }
  args.out.text(`almanac-plugin.mjs ${TOOL_VERSION}: the Almanac plug-in developers' tool (Node 24, no dependencies)

usage: node almanac-plugin.mjs <command> [options]

${Object.values(COMMANDS).map((c) => `  ${c.usage}\n      ${c.about}`).join("\n")}

Exit codes: 0 done or passes; 1 does not pass (problems on stderr), a source could not be reached,
or for a publishing command: not logged in, the service unreachable or refused (code and message
on stderr); 2 command not understood (unknown command or option, missing argument, refused
--days, --server, --file or --timeout); 3 status: the version's checks are still being made.
status exits by the version's checks: 0 every check passed, 1 they are final and one failed
(ok false with --json), 3 still being made (status --wait waits for them).
Environment: ALMANAC_BASE_URL, the service for docs links and the User-Agent (else the server of
the last login, kept in ${path.join(configHome(), "plugin-token.json")}; else ${DEFAULT_BASE_URL});
ALMANAC_PLUGIN_HOME the folder of the tool's own files (default $XDG_CONFIG_HOME/almanac or ~/.config/almanac);
ALMANAC_PLUGIN_NOW (ISO instant) the moment init writes to fixtures/context.json and check uses without one;
ALMANAC_PLUGIN_RESOLVE ("host=address,...") pins source hosts to addresses for probe and preview --live.
The fetcher runs behind a guard (no network, reads only its code files and sources, limits kill it):
a safeguard, not a sandbox. The publishing commands (${Object.keys(PUBLISHING_COMMANDS).join(", ")})
talk only to the server given to login, send its token nowhere else and follow no redirect.
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

/** Run command `name` with the words after it, its answer to `out`; resolves to the exit
 * code. A refusal is said (Refusals): with --json, its object too, even when the words were
 * not understood. */
async function runCommand(name, words, out) {
  const c = COMMANDS[name];
  const args = { name, argv: [name, ...words], positional: [], options: {}, out };
  try {
    Object.assign(args, parseArgs(c.options, words));
    if (args.positional.length > 1) throw new UsageError(`${name} takes at most one argument; usage: ${c.usage}`);
    return await c.run(args);
  } catch (e) {
    if (!(e instanceof UsageError || e instanceof Failure)) throw e;
    if (c.options.json && words.includes("--json")) args.options.json = true;
    return refuse(e, args);
  }
}

/** Run the tool with argv (without node and script); resolves to the exit code. */
export async function main(argv) {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h") return cmdHelp({ positional: [], out: terminal });
  if (name === "--version") {
    process.stdout.write(`${TOOL_VERSION}\n`);
    return 0;
  }
  if (!has(COMMANDS, name)) {
    process.stderr.write(`almanac-plugin: unknown command "${name}"; try: node almanac-plugin.mjs help\n`);
    return 2;
  }
  return runCommand(name, rest, terminal);
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
