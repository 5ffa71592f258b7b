/**
 * Streams one query's rows into a CSV file: a Postgres cursor (1,000 rows at a time) → csv-stringify →
 * 64 KiB chunks → the file, hashing as it goes. Memory stays flat whatever the day's size: at most one
 * cursor batch and one chunk are held, and backpressure from the file holds the cursor back.
 * The caller gives a temporary path and renames it when the whole pack is written.
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { stringify } from 'csv-stringify';
import type { PoolClient } from 'pg';
import Cursor from 'pg-cursor';

export interface CsvQuery {
  sql: string;
  values: unknown[];
  header: readonly string[];
  /** Turns one row (array mode, text columns) into the cells written. */
  toCells: (row: unknown[]) => unknown[];
}

export interface WrittenFile {
  rows: number;
  bytes: number;
  sha256: string;
}

const BATCH_ROWS = 1_000;
const CHUNK_BYTES = 64 * 1024;

/** Rows of a cursor as an object stream; `read()` fetches the next batch only when asked (backpressure). */
function cursorRows(client: PoolClient, query: CsvQuery, counter: { rows: number }): Readable {
  const cursor = client.query(new Cursor(query.sql, query.values, { rowMode: 'array' }));
  let busy = false;
  return new Readable({
    objectMode: true,
    highWaterMark: BATCH_ROWS,
    read() {
      if (busy) return;
      busy = true;
      cursor.read(BATCH_ROWS).then(
        (rows: unknown[][]) => {
          busy = false;
          if (rows.length === 0) {
            cursor.close().then(
              () => this.push(null),
              (error: Error) => this.destroy(error),
            );
            return;
          }
          counter.rows += rows.length;
          for (const row of rows) this.push(query.toCells(row));
        },
        (error: Error) => this.destroy(error),
      );
    },
    destroy(error, callback) {
      cursor.close().then(
        () => callback(error),
        () => callback(error),
      );
    },
  });
}

/** Joins csv-stringify's one-chunk-per-row output into large chunks, hashing and counting bytes. */
class HashingChunker extends Transform {
  readonly hash = createHash('sha256');
  bytes = 0;
  private parts: string[] = [];
  private pending = 0;

  override _transform(chunk: Buffer | string, _enc: BufferEncoding, done: TransformCallback): void {
    const text = typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    this.parts.push(text);
    this.pending += text.length;
    if (this.pending >= CHUNK_BYTES) this.emitChunk();
    done();
  }

  override _flush(done: TransformCallback): void {
    this.emitChunk();
    done();
  }

  private emitChunk(): void {
    if (this.parts.length === 0) return;
    const buffer = Buffer.from(this.parts.join(''), 'utf8');
    this.parts = [];
    this.pending = 0;
    this.hash.update(buffer);
    this.bytes += buffer.length;
    this.push(buffer);
  }
}

/**
 * Writes the CSV (RFC 4180: CRLF line ends, fields with a comma, quote or line break quoted, quotes
 * doubled; UTF-8; a header row of `query.header`) to `path`, flushed to disk before it returns.
 */
export async function writeCsvFile(client: PoolClient, query: CsvQuery, path: string): Promise<WrittenFile> {
  const counter = { rows: 0 };
  const chunker = new HashingChunker();
  const out = createWriteStream(path, { flags: 'wx', flush: true });
  await pipeline(
    cursorRows(client, query, counter),
    stringify({ header: true, columns: [...query.header], record_delimiter: 'windows' }),
    chunker,
    out,
  );
  return { rows: counter.rows, bytes: chunker.bytes, sha256: chunker.hash.digest('hex') };
}

/** Writes small, already computed rows (the summary) the same way. */
export async function writeSmallCsv(
  rows: readonly unknown[][],
  header: readonly string[],
  path: string,
): Promise<WrittenFile> {
  const chunker = new HashingChunker();
  const out = createWriteStream(path, { flags: 'wx', flush: true });
  await pipeline(
    Readable.from(rows),
    stringify({ header: true, columns: [...header], record_delimiter: 'windows' }),
    chunker,
    out,
  );
  return { rows: rows.length, bytes: chunker.bytes, sha256: chunker.hash.digest('hex') };
}
