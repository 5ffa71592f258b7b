/**
 * Writes the pack's CSV files.
 * - The day's records: PostgreSQL writes the CSV itself (`COPY (query) TO STDOUT WITH (FORMAT csv,
 *   HEADER)`), streamed through pack-csv.ts (CRLF record ends, neutralised free text, compact jsonb) into
 *   the file, hashing as
 *   it goes. Memory stays flat whatever the day's size: the stream holds a few chunks, and backpressure
 *   from the file holds the connection back. (COPY rather than a cursor through csv-stringify: about 3x
 *   faster on a 200k-payment day; see bench/export.ts.)
 * - The summary: a few computed rows through csv-stringify.
 * Both are RFC 4180 (CRLF record ends; a field with a comma, quote or line break quoted, quotes doubled),
 * UTF-8, with a header row. The caller gives a temporary path and renames it when the whole pack is written.
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { stringify } from 'csv-stringify/sync';
import type { ClientBase } from 'pg';
import copyStreams from 'pg-copy-streams';
import { PackCsvStream, type PackCsvColumns } from './pack-csv.js';

export interface WrittenFile {
  rows: number;
  bytes: number;
  sha256: string;
}

export interface CopyCsv {
  /** `COPY (…) TO STDOUT WITH (FORMAT csv, HEADER)`. */
  sql: string;
  /** The free-text columns to neutralise and the jsonb column to compact. */
  columns: PackCsvColumns;
}

/** Where a stream of bytes goes, one awaited write at a time (the workbook's records sheets). */
export interface ByteSink {
  write(chunk: Buffer): Promise<void>;
  end(): Promise<void>;
}

/** Hands every chunk to `sink` as well (waiting for it: its pace holds the COPY back too), then ends it. */
function tee(sink: ByteSink): Transform {
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      sink.write(chunk).then(() => done(null, chunk), done);
    },
    flush(done) {
      sink.end().then(() => done(), done);
    },
  });
}

/**
 * Streams one COPY's CSV into `path`, flushed to disk before it returns. `also` gets PostgreSQL's own
 * bytes as they come (the workbook's records sheet: one read of the warehouse for both files).
 */
export async function writeCsvFile(
  client: ClientBase,
  copy: CopyCsv,
  path: string,
  also?: ByteSink,
): Promise<WrittenFile> {
  const pack = new PackCsvStream(copy.columns);
  const file = createWriteStream(path, { flags: 'wx', flush: true });
  const source = client.query(copyStreams.to(copy.sql));
  await (also ? pipeline(source, tee(also), pack, file) : pipeline(source, pack, file));
  return { rows: pack.records - 1, bytes: pack.bytes, sha256: pack.hash.digest('hex') };
}

/** Writes small, already computed rows (the summary) with csv-stringify. */
export async function writeSmallCsv(
  rows: readonly unknown[][],
  header: readonly string[],
  path: string,
): Promise<WrittenFile> {
  const text = stringify(rows as unknown[][], {
    header: true,
    columns: [...header],
    record_delimiter: 'windows',
    quote_record_delimiter: true, // a lone CR or LF is quoted too (RFC 4180), not only CRLF
  });
  const buffer = Buffer.from(text, 'utf8');
  await writeFile(path, buffer, { flag: 'wx', flush: true });
  return {
    rows: rows.length,
    bytes: buffer.length,
    sha256: createHash('sha256').update(buffer).digest('hex'),
  };
}
