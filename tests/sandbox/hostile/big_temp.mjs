// Writes a 2 GB file to the temporary folder.
import fs from 'node:fs';
const chunk = Buffer.alloc(8 * 1024 * 1024, 1);
const fd = fs.openSync('/tmp/big', 'w');
for (let i = 0; i < 256; i++) fs.writeSync(fd, chunk);
console.error('wrote 2 GB');
