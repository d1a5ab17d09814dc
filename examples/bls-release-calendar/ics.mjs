// A reader for the iCalendar (RFC 5545) subset the BLS release schedule uses: one VCALENDAR,
// one VTIMEZONE, VEVENTs with UID, DTSTART;TZID=..., SUMMARY and an optional STATUS.

export class SourceError extends Error {}

/** Unfolds content lines (CRLF or LF; a line starting with a space or tab continues the last). */
function contentLines(text) {
  const lines = [];
  for (const raw of text.replace(/^\uFEFF/, '').split(/\r?\n/)) {
    if ((raw.startsWith(' ') || raw.startsWith('\t')) && lines.length) lines[lines.length - 1] += raw.slice(1);
    else if (raw !== '') lines.push(raw);
  }
  return lines;
}

function parseLine(line) {
  const colon = line.search(/:(?=(?:[^"]*"[^"]*")*[^"]*$)/);
  if (colon < 0) return null;
  const [name, ...params] = line.slice(0, colon).split(';');
  const parameters = {};
  for (const param of params) {
    const equals = param.indexOf('=');
    if (equals > 0) parameters[param.slice(0, equals).toUpperCase()] = param.slice(equals + 1).replace(/^"|"$/g, '');
  }
  return { name: name.toUpperCase(), parameters, value: line.slice(colon + 1) };
}

export function unescapeText(value) {
  // A line break inside a title becomes a space: titles are one line of plain text.
  return value.replace(/\\([\\;,nN])/g, (whole, character) =>
    character === 'n' || character === 'N' ? ' ' : character,
  );
}

/**
 * Parses the calendar into {properties, components}; a component is {type, properties:
 * Map(name -> [{name, parameters, value}]), children} (STANDARD and DAYLIGHT sit in VTIMEZONE).
 */
export function parseCalendar(text, sourceName) {
  const lines = contentLines(text);
  if (lines[0] !== 'BEGIN:VCALENDAR') throw new SourceError(`${sourceName} is not an iCalendar file`);
  const calendar = { properties: new Map(), components: [] };
  const stack = [];
  for (const line of lines) {
    const property = parseLine(line);
    if (!property) throw new SourceError(`${sourceName}: unreadable line "${line.slice(0, 60)}"`);
    if (property.name === 'BEGIN') {
      const component = { type: property.value.toUpperCase(), properties: new Map(), children: [] };
      if (stack.length === 1) calendar.components.push(component);
      else if (stack.length > 1) stack.at(-1).children.push(component);
      stack.push(component);
      continue;
    }
    if (property.name === 'END') {
      if (stack.pop()?.type !== property.value.toUpperCase()) {
        throw new SourceError(`${sourceName}: END:${property.value} does not close its BEGIN`);
      }
      continue;
    }
    const target = stack.length === 1 ? calendar : stack.at(-1);
    if (!target) throw new SourceError(`${sourceName}: content after END:VCALENDAR`);
    if (!target.properties.has(property.name)) target.properties.set(property.name, []);
    target.properties.get(property.name).push(property);
  }
  if (stack.length !== 0) throw new SourceError(`${sourceName}: the calendar is cut short`);
  return calendar;
}
