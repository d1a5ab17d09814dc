// Tries to read what lies outside /plugin, /sources and /tmp.
import fs from 'node:fs';
const outcome = {};
for (const path of ['/etc/passwd', '/proc/self/environ', '/proc/1/environ', '/root', '/root/.bashrc',
                    '/plugin/../etc/passwd', '/', '/usr/bin/node', '/dev/null']) {
  try { fs.statSync(path); outcome[path] = fs.readFileSync(path).length; }
  catch (error) { outcome[path] = error.code; }
}
console.log(JSON.stringify(outcome));
