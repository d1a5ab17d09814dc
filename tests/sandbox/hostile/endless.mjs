// Ignores SIGTERM and never ends.
process.on('SIGTERM', () => {});
process.on('SIGINT', () => {});
for (;;) {}
