// Tries the host's loopback server (fetch and a bare node:net connection), a public address and
// name resolution; prints what each did.
import fs from 'node:fs';
import net from 'node:net';
import dns from 'node:dns/promises';
const context = JSON.parse(fs.readFileSync(0, 'utf8'));
const outcome = {};
const attempt = async (name, fn) => {
  const began = Date.now();
  try { await fn(); outcome[name] = 'reached'; }
  catch (error) { outcome[name] = String(error.cause?.code ?? error.code ?? error.message); }
  outcome[`${name}_ms`] = Date.now() - began;
};
await attempt('fetch_loopback', () => fetch(`http://127.0.0.1:${context.port}/`));
await attempt('tcp_loopback', () => new Promise((resolve, reject) => {
  const socket = net.connect(context.port, '127.0.0.1', () => { socket.destroy(); resolve(); });
  socket.on('error', reject);
}));
await attempt('fetch_public', () => fetch('http://93.184.215.14/', { signal: AbortSignal.timeout(5000) }));
await attempt('tcp_public', () => new Promise((resolve, reject) => {
  const socket = net.connect(443, '1.1.1.1', resolve); socket.on('error', reject);
}));
await attempt('dns_lookup', () => dns.lookup('example.com'));
await attempt('dns_resolve', () => dns.resolve4('example.com'));
console.log(JSON.stringify(outcome));
