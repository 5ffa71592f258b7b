/**
 * Makes a written .xlsx (a ZIP file) reproducible: every entry's modification date, which the zip
 * writer (archiver, under exceljs) stamps with the time of writing and offers no option to fix, is set
 * to one fixed date in the local file headers and the central directory. Everything else in the file is
 * already a function of its content (entries are added in a fixed order, deflate is deterministic), so
 * two writes of the same workbook give the same bytes and the same SHA-256.
 *
 * The ZIP format (APPNOTE 6.3): the end-of-central-directory record (EOCD) at the end of the file gives
 * the central directory's offset and size; each central directory header gives its entry's local header
 * offset; both headers hold the MS-DOS time and date at fixed offsets. ZIP64 archives (over 4 GiB or
 * 65,535 entries) are refused rather than half-patched: a pack workbook is far smaller.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;
const EOCD_SIZE = 22;
const CENTRAL_SIZE = 46;
/** MS-DOS date 1980-01-01 (the format's first day), time 00:00:00: what reproducible builds use. */
export const FIXED_DOS_DATE = (0 << 9) | (1 << 5) | 1;
export const FIXED_DOS_TIME = 0;

export class ZipLayoutError extends Error {
  readonly code = 'ZIP_LAYOUT';
}

async function readAt(file: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  const { bytesRead } = await file.read(buffer, 0, length, position);
  if (bytesRead !== length) throw new ZipLayoutError(`zip: short read at ${position}`);
  return buffer;
}

/** Offset and size of the central directory, from the EOCD record (searched back over a comment). */
async function centralDirectory(file: FileHandle, size: number): Promise<{ offset: number; size: number }> {
  const tailLength = Math.min(size, EOCD_SIZE + 0xffff);
  const tail = await readAt(file, size - tailLength, tailLength);
  for (let i = tail.length - EOCD_SIZE; i >= 0; i--) {
    if (tail.readUInt32LE(i) !== EOCD) continue;
    const cdSize = tail.readUInt32LE(i + 12);
    const cdOffset = tail.readUInt32LE(i + 16);
    if (cdSize === 0xffffffff || cdOffset === 0xffffffff)
      throw new ZipLayoutError('zip: ZIP64 not supported');
    return { offset: cdOffset, size: cdSize };
  }
  throw new ZipLayoutError('zip: no end-of-central-directory record');
}

function stamp(buffer: Buffer, at: number): void {
  buffer.writeUInt16LE(FIXED_DOS_TIME, at);
  buffer.writeUInt16LE(FIXED_DOS_DATE, at + 2);
}

/** Sets every entry's date in the ZIP at `path` to FIXED_DOS_DATE, in place, and flushes it to disk. */
export async function fixZipEntryDates(path: string): Promise<void> {
  const file = await open(path, 'r+');
  try {
    const { size } = await file.stat();
    const cd = await centralDirectory(file, size);
    const central = await readAt(file, cd.offset, cd.size);
    for (let at = 0; at < central.length;) {
      if (central.readUInt32LE(at) !== CENTRAL) throw new ZipLayoutError(`zip: bad central header at ${at}`);
      stamp(central, at + 12);
      const localOffset = central.readUInt32LE(at + 42);
      const local = await readAt(file, localOffset, 14);
      if (local.readUInt32LE(0) !== LOCAL)
        throw new ZipLayoutError(`zip: bad local header at ${localOffset}`);
      stamp(local, 10);
      await file.write(local, 10, 4, localOffset + 10);
      at +=
        CENTRAL_SIZE +
        central.readUInt16LE(at + 28) +
        central.readUInt16LE(at + 30) +
        central.readUInt16LE(at + 32);
    }
    await file.write(central, 0, central.length, cd.offset);
    await file.sync();
  } finally {
    await file.close();
  }
}

/** SHA-256 and size of a file, read as a stream. */
export async function hashFile(path: string): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    bytes += chunk.length;
  }
  return { sha256: hash.digest('hex'), bytes };
}
