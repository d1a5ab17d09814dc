// BCRD reference dollar: the daily sheet "Diaria" of TASA_DOLAR_REFERENCIA_MC.xlsx, one value
// record per business day with fields `buy` (Compra) and `sell` (Venta), in DOP per 1 USD.
//
// Protocol (spec "Fetcher process interface"): run context JSON on stdin, one record per line on
// stdout, exit 2 with one line on stderr when the workbook is not what this plug-in knows.

import { readFileSync } from 'node:fs';
import { readSheet } from './workbook.mjs';
import { ZipError } from './zip.mjs';

class SourceError extends Error {}

const SOURCE = 'tasa-dolar-xlsx';
const SERIES = 'reference-dollar';
const SHEET = 'Diaria';
const HEADER_ROW = 3;
const HEADER = ['Año', 'Mes', 'Día', 'Compra', 'Venta'];
const MONTHS = ['Ene', 'Feb', 'Mar', 'Abr', 'May', 'Jun', 'Jul', 'Ago', 'Sep', 'Oct', 'Nov', 'Dic'];
const SNAPSHOT_BACK_DAYS = 30; // plugin.json: snapshot.back "30d"

function isoDate(year, month, day) {
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) {
    return null;
  }
  return date.toISOString().slice(0, 10);
}

function daysBefore(isoDay, days) {
  const date = new Date(`${isoDay}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() - days);
  return date.toISOString().slice(0, 10);
}

// The workbook keeps binary floats (54.474899999999998); the BCRD publishes four decimals.
function fourDecimals(value) {
  return Number(value.toFixed(4));
}

function readDaily(buffer) {
  let rows;
  try {
    rows = readSheet(buffer, SHEET);
  } catch (error) {
    if (error instanceof ZipError) {
      throw new SourceError(`${SOURCE} is not a readable xlsx workbook: ${error.message}`);
    }
    throw error;
  }
  if (!rows) throw new SourceError(`${SOURCE}: the workbook has no sheet named "${SHEET}"`);
  const header = (rows.get(HEADER_ROW) ?? []).slice(0, HEADER.length).map((cell) => String(cell ?? '').trim());
  if (header.join('|') !== HEADER.join('|')) {
    throw new SourceError(
      `${SOURCE}: sheet "${SHEET}" row ${HEADER_ROW} reads "${header.join(' | ')}", expected "${HEADER.join(' | ')}"`,
    );
  }
  const days = new Map();
  for (const [rowNumber, cells] of [...rows].sort((a, b) => a[0] - b[0])) {
    if (rowNumber <= HEADER_ROW) continue;
    const [year, monthName, day, buy, sell] = cells;
    if (cells.slice(0, 5).every((cell) => cell === undefined || cell === '')) continue;
    const month = typeof monthName === 'string' ? MONTHS.indexOf(monthName.trim()) + 1 : 0;
    const date =
      Number.isInteger(year) && Number.isInteger(day) && month > 0 ? isoDate(year, month, day) : null;
    if (!date) {
      throw new SourceError(
        `${SOURCE}: sheet "${SHEET}" row ${rowNumber} has no readable date (${year} ${monthName} ${day})`,
      );
    }
    for (const [name, value] of [['Compra', buy], ['Venta', sell]]) {
      if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
        throw new SourceError(`${SOURCE}: sheet "${SHEET}" row ${rowNumber} ${name} is not a positive number`);
      }
    }
    if (days.has(date)) throw new SourceError(`${SOURCE}: sheet "${SHEET}" has ${date} twice (row ${rowNumber})`);
    days.set(date, { buy: fourDecimals(buy), sell: fourDecimals(sell) });
  }
  if (days.size === 0) throw new SourceError(`${SOURCE}: sheet "${SHEET}" has no data rows`);
  return days;
}

function firstDate(context) {
  if (context.backfill) return context.backfillFrom ?? '0000-01-01';
  // Later runs restate the snapshot window, and reach further back when the newest stored
  // record is older, so days missed while the plug-in was failing fill in.
  const windowStart = daysBefore(context.today, SNAPSHOT_BACK_DAYS);
  const last = context.series?.[SERIES]?.last;
  if (typeof last !== 'string') return '0000-01-01';
  return last < windowStart ? last : windowStart;
}

function records(context) {
  const path = context.sources?.[SOURCE];
  if (typeof path !== 'string') throw new SourceError(`the run context names no source ${SOURCE}`);
  const days = readDaily(readFileSync(path));
  const from = firstDate(context);
  const lines = [];
  for (const date of [...days.keys()].sort()) {
    if (date < from || date > context.today) continue;
    lines.push(JSON.stringify({ kind: 'value', series: SERIES, date, fields: days.get(date) }));
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
