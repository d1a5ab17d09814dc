// Reads GOV.UK's bank-holidays.json: {"england-and-wales": {"division": ..., "events": [{title,
// date, notes, bunting}]}, "scotland": ..., "northern-ireland": ...}.

export class SourceError extends Error {}

export const DIVISIONS = ['england-and-wales', 'scotland', 'northern-ireland'];
const EVENT_KEYS = ['bunting', 'date', 'notes', 'title'];
const NOTES = new Set(['', 'Substitute day']);

function isRealDate(text) {
  if (typeof text !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(text)) return false;
  const day = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(day.getTime()) && day.toISOString().slice(0, 10) === text;
}

/** Parses the file into Map(division -> [{title, date, notes}]); SourceError when unknown. */
export function parseBankHolidays(text, sourceName) {
  let data;
  try {
    data = JSON.parse(text);
  } catch {
    throw new SourceError(`${sourceName} is not JSON, so not GOV.UK's bank-holidays.json`);
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw new SourceError(`${sourceName} is not a JSON object of divisions`);
  }
  const keys = Object.keys(data).sort();
  if (keys.join(',') !== [...DIVISIONS].sort().join(',')) {
    throw new SourceError(
      `${sourceName} has divisions ${keys.join(', ')}; this plug-in knows ${DIVISIONS.join(', ')}`,
    );
  }
  const divisions = new Map();
  for (const division of DIVISIONS) {
    const entry = data[division];
    if (entry?.division !== division || !Array.isArray(entry.events)) {
      throw new SourceError(`${sourceName}: "${division}" is not {division, events}`);
    }
    divisions.set(
      division,
      entry.events.map((event, index) => {
        const where = `${sourceName}: ${division} event ${index + 1}`;
        const keysOf = event !== null && typeof event === 'object' ? Object.keys(event).sort().join(',') : '';
        if (keysOf !== EVENT_KEYS.join(',')) {
          throw new SourceError(`${where} does not have exactly the keys ${EVENT_KEYS.join(', ')}`);
        }
        if (typeof event.title !== 'string' || event.title.trim() === '') {
          throw new SourceError(`${where} has no title`);
        }
        if (!isRealDate(event.date)) throw new SourceError(`${where} has no valid date`);
        // A new kind of note ("Cancelled"?) may change what the date means: stop and let the
        // publisher decide rather than print it as an ordinary holiday.
        if (!NOTES.has(event.notes)) throw new SourceError(`${where} has an unknown note "${event.notes}"`);
        return { title: event.title.trim(), date: event.date, notes: event.notes };
      }),
    );
  }
  return divisions;
}
