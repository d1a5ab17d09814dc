// Tries every way out Node offers: child processes, workers, native addons, WASI.
import fs from 'node:fs';
import childProcess from 'node:child_process';
import { Worker } from 'node:worker_threads';
import { WASI } from 'node:wasi';
const outcome = {};
const attempt = (name, fn) => {
  try { fn(); outcome[name] = 'allowed'; } catch (error) { outcome[name] = error.code ?? error.message; }
};
attempt('spawnSync', () => childProcess.spawnSync('/usr/bin/node', ['-e', '1']));
attempt('execSync', () => childProcess.execSync('id'));
attempt('spawn', () => childProcess.spawn('/usr/bin/node'));
attempt('worker', () => new Worker('setInterval(() => {}, 1000)', { eval: true }));
attempt('dlopen', () => process.dlopen({ exports: {} }, '/plugin/addon.node'));
attempt('wasi', () => new WASI({ version: 'preview1' }));
const workers = [];
attempt('thread_bomb', () => { for (let i = 0; i < 100; i++) workers.push(new Worker('for(;;){}', { eval: true })); });
console.log(JSON.stringify(outcome));
