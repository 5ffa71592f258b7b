/**
 * A streaming ZIP writer for the pack's workbook (an .xlsx is a ZIP of XML parts, APPNOTE 6.3): entries
 * one after another, each deflated as it is written, sizes and CRC-32 in a data descriptor after its data
 * (so nothing is held to know them first), the central directory at the end.
 *
 * Why not archiver (what exceljs uses): it computes CRC-32 in JavaScript, which alone cost more than the
 * goal allows for the whole workbook of a 100k-payment day, and it stamps every entry with the time of
 * writing. Here CRC-32 is node's native zlib.crc32, deflate runs on libuv's thread pool, and every entry
 * carries one fixed date, so the same content always gives the same bytes (deflate is deterministic for
 * a given level, whatever the sizes of the writes).
 *
 * What it guarantees: flat memory (a write resolves when deflate has taken it, and deflate's output waits
 * for the file); the SHA-256 and size of the bytes written; ZIP64 is never written: a part or offset
 * beyond 4 GiB is refused (a sheet holds at most 1,048,576 rows, far below).
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { crc32, createDeflateRaw, type DeflateRaw, type ZlibOptions } from 'node:zlib';

/** MS-DOS date 1980-01-01 (the format's first day), time 00:00:00: what reproducible builds use. */
export const FIXED_DOS_DATE = (0 << 9) | (1 << 5) | 1;
export const FIXED_DOS_TIME = 0;
const LIMIT = 0xffffffff;
/** Bit 3: sizes and CRC follow the data. */
const FLAGS = 0x0008;
const DEFLATE = 8;
const VERSION = 20;

export class ZipLayoutError extends Error {
  readonly code = 'ZIP_LAYOUT';
}

interface Written {
  name: Buffer;
  offset: number;
  crc: number;
  compressed: number;
  size: number;
}

export class ZipWriter {
  readonly hash = createHash('sha256');
  bytes = 0;
  private readonly entries: Written[] = [];
  private current: { entry: Written; deflate: DeflateRaw; done: Promise<void> } | null = null;

  constructor(
    private readonly out: Writable,
    private readonly level: number,
  ) {}

  /** Writes bytes of the archive itself, waiting when the file asks to. */
  private async emit(chunk: Buffer): Promise<void> {
    this.hash.update(chunk);
    this.bytes += chunk.length;
    if (this.bytes > LIMIT) throw new ZipLayoutError('zip: archive beyond 4 GiB (ZIP64 is not written)');
    if (!this.out.write(chunk)) await once(this.out, 'drain');
  }

  /** Starts an entry; its data goes through `write` until `endEntry`. */
  async beginEntry(name: string): Promise<void> {
    if (this.current) throw new ZipLayoutError(`zip: ${name} begun before the previous entry ended`);
    const entry: Written = {
      name: Buffer.from(name, 'utf8'),
      offset: this.bytes,
      crc: 0,
      compressed: 0,
      size: 0,
    };
    const header = Buffer.alloc(30);
    header.writeUInt32LE(0x04034b50, 0);
    header.writeUInt16LE(VERSION, 4);
    header.writeUInt16LE(FLAGS, 6);
    header.writeUInt16LE(DEFLATE, 8);
    header.writeUInt16LE(FIXED_DOS_TIME, 10);
    header.writeUInt16LE(FIXED_DOS_DATE, 12);
    header.writeUInt16LE(entry.name.length, 26);
    await this.emit(Buffer.concat([header, entry.name]));
    // a deep input buffer: deflate works on the thread pool while the caller makes the next rows
    const options = { level: this.level, chunkSize: 1 << 16, highWaterMark: 1 << 22 }; // stream options too
    const deflate = createDeflateRaw(options as ZlibOptions);
    // deflate's output goes to the file in order; a full file pauses deflate until it drains
    const pump = async () => {
      for await (const chunk of deflate as AsyncIterable<Buffer>) {
        entry.compressed += chunk.length;
        await this.emit(chunk);
      }
    };
    this.current = { entry, deflate, done: pump() };
    this.current.done.catch(() => undefined); // awaited in endEntry; an abort must not leave it unhandled
  }

  /** Adds uncompressed bytes to the current entry; resolves when deflate has room for more. */
  async write(chunk: Buffer | string): Promise<void> {
    const current = this.current;
    if (!current) throw new ZipLayoutError('zip: write outside an entry');
    const data = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    if (data.length === 0) return;
    current.entry.crc = crc32(data, current.entry.crc);
    current.entry.size += data.length;
    if (current.entry.size > LIMIT) throw new ZipLayoutError('zip: an entry beyond 4 GiB');
    if (!current.deflate.write(data)) await once(current.deflate, 'drain');
  }

  /** Ends the current entry: its last compressed bytes, then its data descriptor. */
  async endEntry(): Promise<void> {
    const current = this.current;
    if (!current) throw new ZipLayoutError('zip: no entry to end');
    current.deflate.end();
    await current.done;
    this.current = null;
    const { entry } = current;
    const descriptor = Buffer.alloc(16);
    descriptor.writeUInt32LE(0x08074b50, 0);
    descriptor.writeUInt32LE(entry.crc >>> 0, 4);
    descriptor.writeUInt32LE(entry.compressed, 8);
    descriptor.writeUInt32LE(entry.size, 12);
    await this.emit(descriptor);
    this.entries.push(entry);
  }

  /** A whole entry at once (the small parts). */
  async addEntry(name: string, content: string | Buffer): Promise<void> {
    await this.beginEntry(name);
    await this.write(content);
    await this.endEntry();
  }

  /** Writes the central directory and ends the file; resolves when it is flushed. */
  async finish(): Promise<{ sha256: string; bytes: number }> {
    if (this.current) throw new ZipLayoutError('zip: finished with an entry still open');
    const start = this.bytes;
    for (const e of this.entries) {
      const header = Buffer.alloc(46);
      header.writeUInt32LE(0x02014b50, 0);
      header.writeUInt16LE(VERSION, 4);
      header.writeUInt16LE(VERSION, 6);
      header.writeUInt16LE(FLAGS, 8);
      header.writeUInt16LE(DEFLATE, 10);
      header.writeUInt16LE(FIXED_DOS_TIME, 12);
      header.writeUInt16LE(FIXED_DOS_DATE, 14);
      header.writeUInt32LE(e.crc >>> 0, 16);
      header.writeUInt32LE(e.compressed, 20);
      header.writeUInt32LE(e.size, 24);
      header.writeUInt16LE(e.name.length, 28);
      header.writeUInt32LE(e.offset, 42);
      await this.emit(Buffer.concat([header, e.name]));
    }
    const end = Buffer.alloc(22);
    end.writeUInt32LE(0x06054b50, 0);
    end.writeUInt16LE(this.entries.length, 8);
    end.writeUInt16LE(this.entries.length, 10);
    end.writeUInt32LE(this.bytes - start, 12);
    end.writeUInt32LE(start, 16);
    await this.emit(end);
    const closed = once(this.out, 'close'); // the file stream is opened with flush: on disk when closed
    this.out.end();
    await closed;
    return { sha256: this.hash.digest('hex'), bytes: this.bytes };
  }

  /** Stops writing (on an error): the deflate stream and the file are destroyed. */
  abort(): void {
    this.current?.deflate.destroy();
    this.current = null;
    this.out.destroy();
  }
}
