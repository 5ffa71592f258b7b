/**
 * A records sheet of the workbook, fed the bytes of its records file's COPY (pack-writer.ts tees them
 * here while it writes the CSV): the rows are made as the bytes pass (xlsx-rows.ts) and deflated into the
 * workbook's ZIP, so the day is read from the warehouse once for both files and never held whole.
 */
import type { ClientBase } from 'pg';
import { DateTime } from 'luxon';
import type { ByteSink } from './pack-writer.js';
import type { TableReport } from './pack-xlsx-about.js';
import { allAmountsExactSql, recordsColumns, type RecordsSheet } from './pack-xlsx-query.js';
import type { AmountLook } from './xlsx-cells.js';
import { RecordRowsTranscoder, SHEET_BREAK, type RowsPiece } from './xlsx-rows.js';
import { headerRowXml, sheetHead, sheetTail, type SheetFrame } from './xlsx-sheet.js';
import type { ZipWriter } from './xlsx-zip.js';

export type { ByteSink };

/** What the workbook needs to know of each sheet part it wrote (xlsx-book.ts). */
export interface WrittenSheet {
  name: string;
  part: string;
  frame: SheetFrame;
  lastRow: number;
}

export interface RecordsSheetInput {
  zip: ZipWriter;
  sheet: RecordsSheet;
  zone: string;
  day: string;
  maxRows: number;
  /** Names the next sheet part (`xl/worksheets/sheetN.xml`). */
  nextPart: () => string;
  /** Told each sheet part once it is complete, and the table's report at the end. */
  onSheet: (sheet: WrittenSheet) => void;
  onDone: (report: TableReport, look: AmountLook) => void;
}

/** The amount column's look for the day's records of `sheet`, read in the caller's snapshot. */
export async function amountLookOf(
  client: ClientBase,
  sheet: RecordsSheet,
  range: [Date, Date],
): Promise<AmountLook> {
  const { rows } = await client.query<{ exact: boolean }>(allAmountsExactSql(sheet.file.table), range);
  return rows[0]?.exact === false ? 'text' : 'number';
}

/** A sink taking the records file's CSV bytes (PostgreSQL's, header line first) for `input.sheet`. */
export async function recordsSheetSink(input: RecordsSheetInput, look: AmountLook): Promise<ByteSink> {
  const { zip, sheet, zone } = input;
  const frame: SheetFrame = {
    columns: recordsColumns(sheet, zone),
    table: true,
    selected: false,
    day: input.day,
  };
  const transcoder = new RecordRowsTranscoder({
    kinds: sheet.kinds,
    look,
    offsetMinutes: (ms) => DateTime.fromMillis(ms, { zone }).offset,
    maxRows: input.maxRows,
  });
  const report: TableReport = { rows: 0, sheets: [], flags: transcoder.flags };
  let part = '';
  const begin = async () => {
    const n = report.sheets.length + 1;
    report.sheets.push(n === 1 ? sheet.name : `${sheet.name} (${n})`);
    part = input.nextPart();
    await zip.beginEntry(part);
    await zip.write(sheetHead(frame) + headerRowXml(frame.columns));
  };
  // a sheet breaks exactly when full, so only the last one's rows need counting
  const close = async (full: boolean) => {
    const lastRow = full
      ? input.maxRows
      : 1 + transcoder.rows - (input.maxRows - 1) * (report.sheets.length - 1);
    await zip.write(sheetTail(frame, lastRow));
    await zip.endEntry();
    input.onSheet({ name: report.sheets.at(-1) as string, part, frame, lastRow });
  };
  const put = async (pieces: RowsPiece[]) => {
    for (const piece of pieces) {
      if (piece === SHEET_BREAK) {
        await close(true);
        await begin();
      } else await zip.write(piece);
    }
  };
  await begin();
  return {
    write: (chunk) => put(transcoder.transcode(chunk)),
    end: async () => {
      await put(transcoder.finish());
      await close(false);
      report.rows = transcoder.rows;
      input.onDone(report, look);
    },
  };
}
