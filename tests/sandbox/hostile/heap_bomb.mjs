// Grows arrays until something stops it.
const hoard = [];
for (;;) hoard.push(new Array(100000).fill({ grow: hoard.length }));
