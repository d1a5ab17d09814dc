// Reads the ECB's euro reference-rate XML (eurofxref-hist-90d.xml and the daily eurofxref-daily.xml).
//
// The file is one gesmes:Envelope holding Cube > Cube time="YYYY-MM-DD" > Cube currency="USD"
// rate="1.0497". Only Cube elements carry data, so the reader walks the Cube tags in order and
// refuses anything it does not recognise: a changed layout must stop the run, not be guessed at.

export class SourceError extends Error {}

const ECB_NAMESPACE = 'http://www.ecb.int/vocabulary/2002-08-01/eurofxref';
const GESMES_NAMESPACE = 'http://www.gesmes.org/xml/2002-08-01';
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const CURRENCY = /^[A-Z]{3}$/;
const RATE = /^\d+(\.\d+)?$/;

function attributes(text) {
  const found = {};
  for (const match of text.matchAll(/([A-Za-z_:][\w:.-]*)\s*=\s*("([^"]*)"|'([^']*)')/g)) {
    found[match[1]] = match[3] ?? match[4];
  }
  return found;
}

function isRealDate(text) {
  const day = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(day.getTime()) && day.toISOString().slice(0, 10) === text;
}

/**
 * Parses the XML text into [{date, rates: Map(currency -> number)}] in file order.
 * Throws SourceError with one sentence when the file is not the ECB layout this plug-in knows.
 */
export function parseEurofxref(text, sourceName) {
  const envelope = /<gesmes:Envelope\b([^>]*)>/.exec(text);
  if (!envelope) {
    throw new SourceError(`${sourceName} is not the ECB reference-rate XML: no gesmes:Envelope root`);
  }
  const namespaces = attributes(envelope[1]);
  if (namespaces.xmlns !== ECB_NAMESPACE || namespaces['xmlns:gesmes'] !== GESMES_NAMESPACE) {
    throw new SourceError(`${sourceName}: unknown XML namespaces on gesmes:Envelope`);
  }
  const days = [];
  const seen = new Set();
  let depth = 0;
  let day = null;
  for (const tag of text.matchAll(/<(\/?)Cube\b([^>]*?)(\/?)>/g)) {
    const closing = tag[1] === '/';
    const selfClosing = tag[3] === '/';
    if (closing) {
      if (depth === 2) day = null;
      depth -= 1;
      continue;
    }
    const attrs = attributes(tag[2]);
    const level = depth + 1;
    if (level === 1 && Object.keys(attrs).length === 0 && !selfClosing) {
      depth = 1;
    } else if (level === 2 && 'time' in attrs && !selfClosing) {
      if (!DATE.test(attrs.time) || !isRealDate(attrs.time)) {
        throw new SourceError(`${sourceName}: Cube time "${attrs.time}" is not a date`);
      }
      if (seen.has(attrs.time)) {
        throw new SourceError(`${sourceName}: the day ${attrs.time} appears twice`);
      }
      seen.add(attrs.time);
      day = { date: attrs.time, rates: new Map() };
      days.push(day);
      depth = 2;
    } else if (level === 3 && selfClosing && 'currency' in attrs && 'rate' in attrs) {
      if (!CURRENCY.test(attrs.currency) || !RATE.test(attrs.rate)) {
        throw new SourceError(
          `${sourceName}: ${attrs.time ?? day.date} has an unreadable rate "${attrs.currency}" = "${attrs.rate}"`,
        );
      }
      const rate = Number(attrs.rate);
      if (!Number.isFinite(rate) || rate <= 0) {
        throw new SourceError(`${sourceName}: ${day.date} ${attrs.currency} rate is not a positive number`);
      }
      day.rates.set(attrs.currency, rate);
    } else {
      throw new SourceError(`${sourceName}: unexpected Cube element <Cube${tag[2]}${tag[3]}> at depth ${level}`);
    }
  }
  if (depth !== 0 || days.length === 0) {
    throw new SourceError(`${sourceName}: no complete Cube time="..." day found`);
  }
  return days;
}
