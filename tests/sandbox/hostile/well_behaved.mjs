// Reads its context from stdin and its source, prints one record per CSV row, and exits 2 with
// one explanatory line when the header is not the one it knows.
import fs from 'node:fs';
const context = JSON.parse(fs.readFileSync(0, 'utf8'));
const [header, ...rows] = fs.readFileSync(context.sources.rates, 'utf8').trim().split('\n');
if (header !== 'date,rate') {
  console.error('some progress note');
  console.error(`unexpected header in rates: ${header}`);
  process.exit(2);
}
for (const row of rows) {
  const [date, rate] = row.split(',');
  console.log(JSON.stringify({ series: 'rate', date, value: { rate: Number(rate) } }));
}
console.error(JSON.stringify({ context }));
