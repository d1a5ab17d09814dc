// Allocates Buffers outside V8's heap until something stops it.
const hoard = [];
for (;;) hoard.push(Buffer.alloc(4 * 1024 * 1024, 1));
