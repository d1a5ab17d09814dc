// ECB euro reference rates: one value series per currency, field `rate` = units of the currency
// per 1 euro, dated by the ECB's reference date (observation dates, Europe/Berlin).
//
// Protocol (spec "Fetcher process interface"): run context JSON on stdin, one record per line on
// stdout, exit 2 with one line on stderr when the file is not what this plug-in knows.

import { readFileSync } from 'node:fs';
import { parseEurofxref, SourceError } from './ecb-xml.mjs';

const SOURCE = 'ecb-90d';

// Series keys are the lowercase ISO 4217 codes declared in plugin.json, in display order.
const CURRENCIES = ['USD', 'JPY', 'GBP', 'CHF', 'CNY', 'CAD', 'AUD', 'SEK', 'NOK', 'DKK', 'PLN', 'CZK'];

function records(context) {
  const path = context.sources?.[SOURCE];
  if (typeof path !== 'string') throw new SourceError(`the run context names no source ${SOURCE}`);
  const days = parseEurofxref(readFileSync(path, 'utf8'), SOURCE);

  // A currency the ECB stops quoting would silently vanish from every day; its stored history
  // would then be withdrawn by the snapshot window. Stop instead, so the publisher decides.
  for (const currency of CURRENCIES) {
    if (!days.some((day) => day.rates.has(currency))) {
      throw new SourceError(`${SOURCE}: the ECB no longer quotes ${currency} in this file`);
    }
  }

  // The file is the whole 90-day snapshot window: print all of it every run (on the first run
  // only what backfillFrom allows), never a day after today.
  const from = context.backfill && context.backfillFrom ? context.backfillFrom : '0000-01-01';
  const lines = [];
  for (const day of [...days].sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0))) {
    if (day.date < from || day.date > context.today) continue;
    for (const currency of CURRENCIES) {
      if (!day.rates.has(currency)) continue; // a currency not fixed that day: no record
      const record = {
        kind: 'value',
        series: currency.toLowerCase(),
        date: day.date,
        fields: { rate: day.rates.get(currency) },
      };
      lines.push(JSON.stringify(record));
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
