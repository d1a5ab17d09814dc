// Prints 100 MB of output.
import fs from 'node:fs';
const line = Buffer.alloc(1024 * 1024, 'a');
for (let i = 0; i < 100; i++) fs.writeSync(1, line);
