/**
 * The migration files: `sql/NNN_name.sql`, applied in numeric order, each identified by its file name
 * and a SHA-256 of its statements: its exact bytes after the comment block at its head, which documents
 * the file and may be reworded. An applied file whose statements change (anything after that block, a
 * comment there included) is refused, never re-run.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MigrationError } from '../errors.js';

export interface MigrationFile {
  name: string;
  number: number;
  sql: string;
  /** SHA-256 of its statements (statementsOf): what a new ledger row records. */
  checksum: string;
  /**
   * What a ledger may hold for the same statements: the checksum itself, the SHA-256 of the file's whole
   * bytes (what ledgers recorded before the head comment was left out), and HEAD_REWORDED's.
   */
  accepted: readonly string[];
}

/**
 * SHA-256 of a file's whole bytes before its head comment was reworded, by file name: ledgers written
 * then hold it, for statements that are the file's own.
 */
const HEAD_REWORDED: Readonly<Record<string, readonly string[]>> = {
  '016_first_status_on_row.sql': ['75c2b47e0413bd599df4abd8efb20b22c75226dd68c92d3e8aee910627343c81'],
};

/** The file after the comment lines (and blank lines) at its head. */
export function statementsOf(sql: string): string {
  const lines = sql.split('\n');
  let first = 0;
  while (first < lines.length && /^\s*(--.*)?$/.test(lines[first] as string)) first++;
  return lines.slice(first).join('\n');
}

const FILE_NAME = /^(\d{3,})_[a-z0-9_-]+\.sql$/;

/** `sql/` at the package root, whether running from src/ (tests) or dist/src/ (built). */
export function defaultSqlDir(): string {
  const here = fileURLToPath(new URL('.', import.meta.url));
  return here.includes(`${join('dist', 'src')}`) ? join(here, '../../../sql') : join(here, '../../sql');
}

export function checksumOf(sql: string): string {
  return createHash('sha256').update(sql, 'utf8').digest('hex');
}

/** Reads and orders the migration files; a stray or duplicate-numbered `.sql` file is an error. */
export async function readMigrations(sqlDir: string): Promise<MigrationFile[]> {
  const names = (await readdir(sqlDir)).filter((name) => name.endsWith('.sql')).sort();
  const files: MigrationFile[] = [];
  for (const name of names) {
    const match = FILE_NAME.exec(name);
    if (!match) throw new MigrationError(`migration file ${name} is not named NNN_name.sql`);
    const sql = await readFile(join(sqlDir, name), 'utf8');
    const checksum = checksumOf(statementsOf(sql));
    const accepted = [checksum, checksumOf(sql), ...(HEAD_REWORDED[name] ?? [])];
    files.push({ name, number: Number(match[1]), sql, checksum, accepted });
  }
  files.sort((a, b) => a.number - b.number);
  files.forEach((file, i) => {
    if (i > 0 && files[i - 1]?.number === file.number) {
      throw new MigrationError(`two migration files share number ${file.number}: ${file.name}`);
    }
  });
  return files;
}

/** Checksum of a set of files (by name and checksum): names a template database built from exactly them. */
export function setChecksum(files: ReadonlyArray<{ name: string; checksum: string }>): string {
  return checksumOf(files.map((f) => `${f.name}:${f.checksum}`).join('\n'));
}
