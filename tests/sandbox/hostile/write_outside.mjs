// Tries to write outside the temporary folder, also through node:sqlite, which ignores Node's
// permission model (DECISIONS 9); only read-only mounts keep it in.
import fs from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
const outcome = {};
for (const path of ['/plugin/fetch.mjs', '/plugin/new.mjs', '/sources/evil', '/evil']) {
  try { fs.writeFileSync(path, 'x'); outcome[path] = 'written'; }
  catch (error) { outcome[path] = error.code; }
}
for (const path of ['/plugin/evil.db', '/sources/evil.db', '/evil.db', '/tmp/ok.db']) {
  try {
    const db = new DatabaseSync(path);
    db.exec('create table t(x); insert into t values (1)');
    db.close();
    outcome[`sqlite ${path}`] = 'written';
  } catch (error) { outcome[`sqlite ${path}`] = error.code ?? error.message; }
}
fs.writeFileSync('/tmp/a', 'x');
try { fs.renameSync('/tmp/a', '/tmp/b'); outcome.rename_tmp = 'ok'; } catch (e) { outcome.rename_tmp = e.code; }
console.log(JSON.stringify(outcome));
