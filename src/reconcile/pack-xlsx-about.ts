/**
 * The workbook's "about" sheet, as rows of typed cells (pure): the manifest's facts (day, time zone,
 * version, state, totals, files, reconcile result, what changed since the previous version) and notes
 * on how to read the other sheets, including every flagged cell. Built from the Manifest object the
 * export is about to publish, read defensively (any field another version of paysync adds or leaves out
 * is shown generically or skipped), and nothing in it depends on the clock: the same manifest gives the
 * same sheet.
 */
import {
  amountCell,
  amountLook,
  textCell,
  type AmountLook,
  type Cell,
  type FlagReason,
} from './xlsx-cells.js';

/** What a table of the workbook wrote: data rows, sheets used, and flagged cells by reason. */
export interface TableReport {
  rows: number;
  sheets: string[];
  flags: Partial<Record<FlagReason, number>>;
}

export interface AboutInput {
  /** The manifest being published (its `generatedAt` is not shown: the workbook depends on content only). */
  manifest: Record<string, unknown>;
  tables: Record<string, TableReport>;
  /** How the amount column of each table looks. */
  looks: Record<string, AmountLook>;
  hasRejects: boolean;
}

const FLAG_TEXT: Record<FlagReason, string> = {
  'amount-as-text': 'amount that is not a plain decimal (NaN), written as the text PostgreSQL holds',
  'text-escaped':
    'text holding control characters (invisible in a cell, dropped by some spreadsheets), written visibly as \\uXXXX',
  'text-cut': 'text longer than a cell holds (32,767 characters), cut and ended with …',
};

const t = (value: unknown): Cell =>
  value === null || value === undefined
    ? { value: null }
    : textCell(typeof value === 'string' ? value : JSON.stringify(value));
const n = (value: unknown): Cell => (typeof value === 'number' ? { value, count: true } : t(value));
const amountText = (value: unknown) => (typeof value === 'string' ? value : null);
/** Amount cells of one column (the one-look rule over the column's values). */
function amounts(values: readonly unknown[]): Cell[] {
  const look = amountLook(values.map(amountText));
  return values.map((v) => (typeof v === 'string' ? amountCell(v, look) : t(v)));
}
const record = (value: unknown): Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};

/** Nested objects one level deep become `key.sub` columns (`status.old`, `status.new`). */
function flatten(row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row)) {
    const inner = record(value);
    if (Object.keys(inner).length > 0) for (const [k, v] of Object.entries(inner)) out[`${key}.${k}`] = v;
    else out[key] = value;
  }
  return out;
}

/** A list of objects as a header row and value rows (columns: every key, in first-seen order). */
function table(items: unknown, lead: Cell[] = []): Cell[][] {
  const rows = (Array.isArray(items) ? items : []).map((item) => flatten(record(item)));
  if (rows.length === 0) return [];
  const keys = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const columns = keys.map((k) =>
    /amount/i.test(k)
      ? amounts(rows.map((r) => r[k]))
      : rows.map((r) => (typeof r[k] === 'number' ? n(r[k]) : t(r[k]))),
  );
  return [
    [...lead.map(() => t('')), ...keys.map(t)],
    ...rows.map((_, i) => [...lead, ...columns.map((c) => c[i] as Cell)]),
  ];
}

function factRows(m: Record<string, unknown>): Cell[][] {
  const rows: Cell[][] = [
    [t('day'), t(m.day)],
    [t('time zone'), t(m.timeZone)],
    [t('version'), n(m.version)],
    [
      t('layout'),
      n(m.layout ?? 1),
      t("the version of the pack's layout (files, sheets, formats) this version was written with"),
    ],
    [t('state'), t(m.state)],
  ];
  if (m.stateReason !== undefined) rows.push([t('state reason'), t(m.stateReason)]);
  rows.push([], [t('totals'), t('records'), t('amount')]);
  const totals = Object.entries(record(m.totals));
  const totalAmounts = amounts(totals.map(([, total]) => record(total).amount));
  totals.forEach(([stream, total], i) =>
    rows.push([t(stream), n(record(total).records), totalAmounts[i] as Cell]),
  );
  rows.push([], [t('files'), t('rows'), t('SHA-256')]);
  for (const file of Object.values(record(m.files))) {
    const f = record(file);
    rows.push([t(f.path), n(f.rows), t(f.sha256)]);
  }
  return rows;
}

function reconcileRows(value: unknown): Cell[][] {
  if (value === null || value === undefined) {
    return [
      [
        t('reconcile'),
        t(
          "none when this version was written; the latest result is in the day's top manifest.json, `paysync status` and reporting.reconcile_results",
        ),
      ],
    ];
  }
  const r = record(value);
  return [
    [t('reconcile checked at (UTC)'), t(r.checkedAt)],
    [t('unexplained differences'), n(r.mismatches)],
    ...table(r.rows, [t('')]),
  ];
}

function restatementRows(value: unknown): Cell[][] {
  if (value === null || value === undefined) {
    return [[t('changes'), t('none listed: the first version of the day')]];
  }
  const r = record(value);
  const rows: Cell[][] = [[t('changes since version'), n(r.previousVersion)]];
  for (const kind of ['added', 'removed', 'changed']) {
    const part = record(r[kind]);
    if (Object.keys(part).length === 0) continue;
    rows.push([t(`records ${kind}`), n(part.count)]);
    rows.push(...table(part.records, [t(kind)]));
  }
  if (r.truncated === true)
    rows.push([t('note'), t('the lists hold the first records only; the counts are complete')]);
  return rows;
}

function noteRows(input: AboutInput): Cell[][] {
  const m = input.manifest;
  const textColumns = Object.entries(input.looks)
    .filter(([, look]) => look === 'text')
    .map(([sheet]) => sheet);
  const rows: Cell[][] = [
    [t('notes')],
    [
      t('times'),
      t(
        `date-time cells show the wall-clock time in ${String(m.timeZone)}; the "… UTC" column beside each holds the exact instant (ISO 8601)`,
      ),
    ],
    [
      t('amounts'),
      t(
        'exact, with thousands separators, one look per column: numbers, each shown with its own decimals (1,500 / 1,500.5 / 0.05), when every amount of the column has at most 15 significant digits (what a spreadsheet number holds exactly); otherwise the whole column is text, each amount its exact decimal, right-aligned',
      ),
    ],
    [
      t('amounts as text'),
      t(
        textColumns.length > 0
          ? `in ${textColumns.join(', ')}: an amount there has more than 15 significant digits; the CSV files hold the same decimals`
          : 'none: every amount column is numbers',
      ),
    ],
    [
      t('totals'),
      t(
        'summary: under each stream, its total of all statuses, then its settled money (COMPLETE); the grand total and its settled money last; quarantined records are counted, never summed',
      ),
    ],
    [
      t('sums'),
      t(
        'the summary and the totals are summed by PostgreSQL on exact decimals; the workbook holds no formula',
      ),
    ],
    [
      t('text'),
      t(
        'ids, references, phones and all free text are text cells: shown as the service sent them, never evaluated',
      ),
    ],
    [
      t('rejects'),
      t(
        input.hasRejects
          ? 'records of the day the service sent that failed validation (by their createdAt)'
          : 'none for this day',
      ),
    ],
  ];
  for (const [name, report] of Object.entries(input.tables)) {
    if (report.sheets.length > 1) rows.push([t(name), t(`continued on sheets ${report.sheets.join(', ')}`)]);
    for (const [flag, count] of Object.entries(report.flags)) {
      rows.push([t(`highlighted in ${name}`), n(count), t(FLAG_TEXT[flag as FlagReason])]);
    }
  }
  const flagged = Object.values(input.tables).some((r) => Object.keys(r.flags).length > 0);
  rows.push([
    t('highlighted cells'),
    t(
      flagged
        ? 'see above; the CSV files hold the exact values'
        : 'none: every cell shows the warehouse value exactly',
    ),
  ]);
  return rows;
}

export function aboutRows(input: AboutInput): Cell[][] {
  const m = input.manifest;
  return [
    [
      t('pack.xlsx'),
      t('the reconciliation pack for people; the CSV files beside it are the same data for machines'),
    ],
    ...factRows(m),
    [],
    ...reconcileRows(m.reconcile),
    [],
    ...restatementRows(m.restatement),
    [],
    ...noteRows(input),
  ];
}
