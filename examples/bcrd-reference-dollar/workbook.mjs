// Reads one worksheet of an .xlsx workbook (Office Open XML) into rows of cell values.
//
// Only what the BCRD workbook uses is supported: shared strings (t="s"), inline and formula
// strings, and plain numbers. The sheet is found by its name through xl/workbook.xml and its
// relationship file, never by a fixed file name, so a reordered workbook still reads.

import { readCentralDirectory, readEntry } from './zip.mjs';

const ENTITIES = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decodeXml(text) {
  return text.replace(/&(#x[0-9a-fA-F]+|#\d+|amp|lt|gt|quot|apos);/g, (whole, name) => {
    if (name[0] !== '#') return ENTITIES[name];
    return String.fromCodePoint(name[1] === 'x' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10));
  });
}

function attributes(text) {
  const found = {};
  for (const match of text.matchAll(/([A-Za-z_:][\w:.-]*)\s*=\s*("([^"]*)"|'([^']*)')/g)) {
    found[match[1]] = decodeXml(match[3] ?? match[4]);
  }
  return found;
}

function textOf(xml) {
  // Rich text splits a string into runs: the value is every <t> joined.
  let text = '';
  for (const match of xml.matchAll(/<t(?:\s[^>]*)?>([^<]*)<\/t>|<t(?:\s[^>]*)?\/>/g)) {
    text += decodeXml(match[1] ?? '');
  }
  return text;
}

function columnIndex(reference) {
  const letters = /^([A-Z]+)\d+$/.exec(reference)?.[1];
  if (!letters) return -1;
  let index = 0;
  for (const letter of letters) index = index * 26 + (letter.charCodeAt(0) - 64);
  return index - 1;
}

function sheetPath(workbookXml, relsXml, sheetName) {
  let relationId = null;
  for (const match of workbookXml.matchAll(/<sheet\b([^>]*)\/?>/g)) {
    const attrs = attributes(match[1]);
    if (attrs.name === sheetName) relationId = attrs['r:id'];
  }
  if (!relationId) return null;
  for (const match of relsXml.matchAll(/<Relationship\b([^>]*)\/?>/g)) {
    const attrs = attributes(match[1]);
    if (attrs.Id === relationId) {
      return attrs.Target.startsWith('/') ? attrs.Target.slice(1) : `xl/${attrs.Target}`;
    }
  }
  return null;
}

/**
 * Returns Map(rowNumber -> array of cell values) for the named sheet, or null when the workbook
 * has no sheet of that name. A value is a string, a number, or undefined for an empty cell.
 */
export function readSheet(buffer, sheetName) {
  const entries = readCentralDirectory(buffer);
  const read = (name) => readEntry(buffer, entries, name).toString('utf8');
  const path = sheetPath(read('xl/workbook.xml'), read('xl/_rels/workbook.xml.rels'), sheetName);
  if (!path) return null;
  const shared = entries.has('xl/sharedStrings.xml')
    ? [...read('xl/sharedStrings.xml').matchAll(/<si>([\s\S]*?)<\/si>|<si\/>/g)].map((m) => textOf(m[1] ?? ''))
    : [];
  const rows = new Map();
  for (const row of read(path).matchAll(/<row\b([^>]*?)(?:\/>|>([\s\S]*?)<\/row>)/g)) {
    const rowNumber = Number(attributes(row[1]).r);
    const cells = [];
    for (const cell of (row[2] ?? '').matchAll(/<c\b([^>]*?)(?:\/>|>([\s\S]*?)<\/c>)/g)) {
      const attrs = attributes(cell[1]);
      const index = columnIndex(attrs.r ?? '');
      const body = cell[2] ?? '';
      const raw = /<v>([^<]*)<\/v>/.exec(body)?.[1];
      let value;
      if (attrs.t === 's') value = raw === undefined ? undefined : shared[Number(raw)];
      else if (attrs.t === 'inlineStr') value = textOf(body);
      else if (attrs.t === 'str') value = raw === undefined ? undefined : decodeXml(raw);
      else if (raw !== undefined && (attrs.t === undefined || attrs.t === 'n')) value = Number(raw);
      else if (raw !== undefined) value = decodeXml(raw);
      if (index >= 0) cells[index] = value;
    }
    rows.set(rowNumber, cells);
  }
  return rows;
}
