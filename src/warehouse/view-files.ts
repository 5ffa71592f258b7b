/**
 * The view files: `sql/views/<view>.sql`, one per view of the reporting schema, each holding that view's
 * current definition (CREATE OR REPLACE VIEW reporting.<view>, its comments, and any function only it
 * uses), identified by file name and a SHA-256 of its exact bytes. Read, checked and ordered here; applied
 * by apply-views.ts.
 *
 * Order: derived from the SQL, not listed by hand (a hand-kept list goes stale the day a view is added):
 * a file that names another file's view (`reporting.<view>`, comments aside) comes after it; ties go by
 * name, so the order is the same on every run. A cycle is refused (PostgreSQL could not create it anyway).
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MigrationError } from '../errors.js';
import { checksumOf } from './migration-files.js';

export interface ViewFile {
  /** The file name, e.g. `daily_totals.sql`: the key of its ledger row. */
  name: string;
  /** The view it defines, in schema reporting: the file name without `.sql`. */
  view: string;
  sql: string;
  checksum: string;
  /** Views of other files this one reads. */
  dependsOn: string[];
}

const FILE_NAME = /^([a-z_][a-z0-9_]*)\.sql$/;
const REFERENCE = /\breporting\s*\.\s*"?([a-z_][a-z0-9_]*)"?/gi;
const CREATED_VIEW = /\bCREATE\s+(OR\s+REPLACE\s+)?VIEW\s+reporting\s*\.\s*"?([a-z_][a-z0-9_]*)"?/gi;

/** `sql/views` beside the numbered migrations. */
export function viewsDirOf(sqlDir: string): string {
  return join(sqlDir, 'views');
}

/** The SQL without its comments: what dependencies and checks are read from (comments may name anything). */
function withoutComments(sql: string): string {
  return sql.replace(/\/\*[\s\S]*?\*\//g, ' ').replace(/--[^\n]*/g, ' ');
}

/** A file defines its own view, with CREATE OR REPLACE, and nothing it would have to DROP first. */
function checkFile(name: string, view: string, code: string): void {
  const where = `sql/views/${name}`;
  if (/\bDROP\b/i.test(code)) {
    throw new MigrationError(
      `${where} holds a DROP: a view file only creates or replaces (a change that needs a DROP goes in a numbered migration)`,
    );
  }
  const created = [...code.matchAll(CREATED_VIEW)];
  const own = created.filter((m) => m[2]?.toLowerCase() === view);
  if (own.length === 0 || own.some((m) => !m[1])) {
    throw new MigrationError(`${where} must define its view as CREATE OR REPLACE VIEW reporting.${view}`);
  }
  const other = created.find((m) => m[2]?.toLowerCase() !== view);
  if (other) throw new MigrationError(`${where} also defines reporting.${other[2]}: one view per file`);
}

async function readView(dir: string, name: string): Promise<Omit<ViewFile, 'dependsOn'> & { code: string }> {
  const view = FILE_NAME.exec(name)?.[1];
  if (!view) throw new MigrationError(`view file sql/views/${name} is not named <view>.sql (lowercase)`);
  const sql = await readFile(join(dir, name), 'utf8');
  const code = withoutComments(sql);
  checkFile(name, view, code);
  return { name, view, sql, checksum: checksumOf(sql), code };
}

/** Reads `<sqlDir>/views/*.sql` in dependency order; none when the folder does not exist. */
export async function readViews(sqlDir: string): Promise<ViewFile[]> {
  const dir = viewsDirOf(sqlDir);
  const names = await readdir(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw error;
  });
  const read = await Promise.all(names.filter((n) => n.endsWith('.sql')).map((n) => readView(dir, n)));
  const views = new Set(read.map((r) => r.view));
  const files = read.map(({ code, ...file }) => {
    const named = [...code.matchAll(REFERENCE)].map((m) => (m[1] ?? '').toLowerCase());
    const dependsOn = [...new Set(named)].filter((v) => v !== file.view && views.has(v)).sort();
    return { ...file, dependsOn };
  });
  return inDependencyOrder(files);
}

/** Each view after the views it reads (Kahn's algorithm, smallest name first among the ready ones). */
export function inDependencyOrder(files: readonly ViewFile[]): ViewFile[] {
  const waiting = [...files].sort((a, b) => (a.name < b.name ? -1 : 1));
  const placed = new Set<string>();
  const ordered: ViewFile[] = [];
  while (waiting.length > 0) {
    const next = waiting.findIndex((f) => f.dependsOn.every((d) => placed.has(d)));
    if (next < 0) {
      const names = waiting.map((f) => `${f.view} (reads ${f.dependsOn.join(', ')})`).join('; ');
      throw new MigrationError(`sql/views: these views read each other in a cycle: ${names}`);
    }
    const [file] = waiting.splice(next, 1);
    placed.add(file!.view);
    ordered.push(file!);
  }
  return ordered;
}
