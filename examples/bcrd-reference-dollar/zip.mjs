// A small reader for ZIP archives (an .xlsx workbook is one), using node: modules only.
//
// It reads the central directory at the end of the file, then each wanted entry's local header,
// and inflates deflated entries with node:zlib. ZIP64, encryption and methods other than stored
// (0) and deflate (8) are refused: the BCRD workbook uses none of them.

import { crc32, inflateRawSync } from 'node:zlib';

export class ZipError extends Error {}

const END_OF_CENTRAL_DIRECTORY = 0x06054b50;
const CENTRAL_FILE_HEADER = 0x02014b50;
const LOCAL_FILE_HEADER = 0x04034b50;

function findEndOfCentralDirectory(buffer) {
  // The end record is 22 bytes plus a comment of at most 65,535 bytes.
  const lowest = Math.max(0, buffer.length - 22 - 0xffff);
  for (let at = buffer.length - 22; at >= lowest; at -= 1) {
    if (buffer.readUInt32LE(at) === END_OF_CENTRAL_DIRECTORY) return at;
  }
  throw new ZipError('not a ZIP archive (no end of central directory)');
}

/** Lists the archive's entries: Map(name -> {method, flags, crc, compressedSize, size, offset}). */
export function readCentralDirectory(buffer) {
  if (buffer.length < 22) throw new ZipError('not a ZIP archive (too short)');
  const end = findEndOfCentralDirectory(buffer);
  const disk = buffer.readUInt16LE(end + 4);
  const count = buffer.readUInt16LE(end + 10);
  const size = buffer.readUInt32LE(end + 12);
  const offset = buffer.readUInt32LE(end + 16);
  if (disk !== 0) throw new ZipError('split ZIP archives are not supported');
  if (count === 0xffff || offset === 0xffffffff) throw new ZipError('ZIP64 archives are not supported');
  if (offset + size > end) throw new ZipError('central directory lies outside the file');
  const entries = new Map();
  let at = offset;
  for (let index = 0; index < count; index += 1) {
    if (at + 46 > end || buffer.readUInt32LE(at) !== CENTRAL_FILE_HEADER) {
      throw new ZipError(`central directory entry ${index + 1} is damaged`);
    }
    const nameLength = buffer.readUInt16LE(at + 28);
    const extraLength = buffer.readUInt16LE(at + 30);
    const commentLength = buffer.readUInt16LE(at + 32);
    const name = buffer.toString('utf8', at + 46, at + 46 + nameLength);
    entries.set(name, {
      flags: buffer.readUInt16LE(at + 8),
      method: buffer.readUInt16LE(at + 10),
      crc: buffer.readUInt32LE(at + 16),
      compressedSize: buffer.readUInt32LE(at + 20),
      size: buffer.readUInt32LE(at + 24),
      offset: buffer.readUInt32LE(at + 42),
    });
    at += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

/** The bytes of one entry, checked against its size and CRC-32. */
export function readEntry(buffer, entries, name) {
  const entry = entries.get(name);
  if (!entry) throw new ZipError(`the archive has no ${name}`);
  if (entry.flags & 0x1) throw new ZipError(`${name} is encrypted`);
  const at = entry.offset;
  if (at + 30 > buffer.length || buffer.readUInt32LE(at) !== LOCAL_FILE_HEADER) {
    throw new ZipError(`the local header of ${name} is damaged`);
  }
  const start = at + 30 + buffer.readUInt16LE(at + 26) + buffer.readUInt16LE(at + 28);
  const stored = buffer.subarray(start, start + entry.compressedSize);
  if (stored.length !== entry.compressedSize) throw new ZipError(`${name} is cut short`);
  let data;
  if (entry.method === 0) data = stored;
  else if (entry.method === 8) {
    try {
      data = inflateRawSync(stored);
    } catch {
      throw new ZipError(`${name} does not inflate`);
    }
  } else throw new ZipError(`${name} uses compression method ${entry.method}`);
  if (data.length !== entry.size || crc32(data) !== entry.crc) {
    throw new ZipError(`${name} fails its size or CRC-32 check`);
  }
  return data;
}
