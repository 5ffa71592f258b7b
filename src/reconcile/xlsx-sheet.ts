/**
 * One worksheet's XML (SpreadsheetML, ECMA-376 part 1 §18.3) around its rows: the frame every sheet of
 * the pack shares, and the rows of the small sheets (summary, rejects, about) rendered from typed cells.
 * The records sheets' rows come from xlsx-record-rows.ts, between the same head and tail.
 *
 * The frame: the header row frozen (tables), fixed column widths, an autofilter over the table, and a
 * print setup a reader can use as it is: landscape, the table fitted to the page's width (as many pages
 * down as it takes), the header row repeated on every page (the workbook's Print_Titles), gridlines
 * printed, narrow margins, and a page header and footer naming the day, the sheet and the page.
 *
 * Cells: strings are inline strings (`t="inlineStr"`), the one string form whose `_xHHHH_` escapes Excel
 * and LibreOffice both decode (in `t="str"` LibreOffice shows them as typed and trims edge spaces), with
 * `xml:space="preserve"` when the text starts or ends with whitespace.
 */
import { dateSerialText, type Cell } from './xlsx-cells.js';
import { STYLE, styleOf } from './xlsx-styles.js';
import { RELATIONSHIPS_NS, SPREADSHEET_NS, XML_DECLARATION } from './xlsx-xml.js';

export interface SheetColumn {
  header: string;
  width: number;
}

export interface SheetFrame {
  columns: readonly SheetColumn[];
  /** A table (header row frozen, autofilter, header repeated on printed pages) or free rows (about). */
  table: boolean;
  /** The sheet the workbook opens on. */
  selected: boolean;
  /** Named in the printed page header. */
  day: string;
}

/** `A`…`Z`, `AA`… for a 0-based column index. */
export function columnLetters(index: number): string {
  let name = '';
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26))
    name = String.fromCharCode(65 + ((n - 1) % 26)) + name;
  return name;
}

const XML_SPECIAL = /[&<>\r]|_(?=[xX][0-9A-Fa-f]{4}_)/g;
const XML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '\r': '_x000D_',
  _: '_x005F_',
};

/**
 * Text as the content of an inline string: XML's three specials, a carriage return as the format's
 * `_x000D_` (XML would read a literal one back as a line feed), and an underscore that would start an
 * `_xHHHH_` escape written as `_x005F_` (an escaped underscore), so the text reads back as it is.
 */
export function xmlText(text: string): string {
  return text.replace(XML_SPECIAL, (c) => XML_ESCAPES[c] as string);
}

const EDGE_WHITESPACE = /^[ \t\n\r]|[ \t\n\r]$/;

/** One cell's XML at `ref` (nothing for an empty cell). */
export function cellXml(ref: string | null, cell: Cell): string {
  const { value } = cell;
  if (value === null || value === '') return '';
  const s = styleOf(cell);
  const c = ref === null ? '<c' : `<c r="${ref}"`; // no reference: the column after the previous cell
  if (typeof value === 'number') return `${c} s="${s}"><v>${cell.decimal ?? String(value)}</v></c>`;
  if (value instanceof Date) return `${c} s="${s}"><v>${dateSerialText(value.getTime())}</v></c>`;
  const space = EDGE_WHITESPACE.test(value) ? ' xml:space="preserve"' : '';
  const style = s === STYLE.text ? '' : ` s="${s}"`; // plain text needs no style: style 0 shows it as it is
  return `${c}${style} t="inlineStr"><is><t${space}>${xmlText(value)}</t></is></c>`;
}

/**
 * A records sheet's row as xlsx-row-bytes.ts writes it: a cell right after a written one carries no
 * reference (it is the next column); the first cell and a cell after an empty one do.
 */
export function recordRowXml(r: number, cells: readonly Cell[]): string {
  const present = (c: Cell | undefined) => c !== undefined && c.value !== null && c.value !== '';
  const xml = cells.map((c, j) =>
    cellXml(j > 0 && present(cells[j - 1]) ? null : `${columnLetters(j)}${r}`, c),
  );
  return `<row r="${r}">${xml.join('')}</row>`;
}

/** A row of typed cells, numbered `r` (1-based). */
export function rowXml(r: number, cells: readonly Cell[]): string {
  return `<row r="${r}">${cells.map((c, j) => cellXml(`${columnLetters(j)}${r}`, c)).join('')}</row>`;
}

/** The header row of a table. */
export function headerRowXml(columns: readonly SheetColumn[]): string {
  return rowXml(
    1,
    columns.map((c) => ({ value: c.header, header: true })),
  );
}

/** Everything before the first row. */
export function sheetHead(frame: SheetFrame): string {
  const pane = frame.table
    ? '<pane ySplit="1" topLeftCell="A2" activePane="bottomLeft" state="frozen"/><selection pane="bottomLeft" activeCell="A2" sqref="A2"/>'
    : '';
  const cols = frame.columns
    .map((c, i) => `<col min="${i + 1}" max="${i + 1}" width="${c.width}" customWidth="1"/>`)
    .join('');
  return (
    XML_DECLARATION +
    `<worksheet xmlns="${SPREADSHEET_NS}" xmlns:r="${RELATIONSHIPS_NS}">` +
    '<sheetPr><pageSetUpPr fitToPage="1"/></sheetPr>' +
    `<sheetViews><sheetView workbookViewId="0"${frame.selected ? ' tabSelected="1"' : ''}>${pane}</sheetView></sheetViews>` +
    '<sheetFormatPr defaultRowHeight="15"/>' +
    `<cols>${cols}</cols><sheetData>`
  );
}

/** The autofilter's range of a table whose last row is `lastRow`. */
export function tableRange(frame: SheetFrame, lastRow: number): string {
  return `A1:${columnLetters(frame.columns.length - 1)}${lastRow}`;
}

const headerFooterText = (s: string) => s.replace(/&/g, '&&');

/** Everything after the last row (`lastRow`: the last row's number). */
export function sheetTail(frame: SheetFrame, lastRow: number): string {
  const filter = frame.table ? `<autoFilter ref="${tableRange(frame, lastRow)}"/>` : '';
  const header = xmlText(`&L${headerFooterText(frame.day)}&C&A&RPage &P of &N`);
  return (
    `</sheetData>${filter}` +
    '<printOptions gridLines="1"/>' +
    '<pageMargins left="0.4" right="0.4" top="0.6" bottom="0.6" header="0.3" footer="0.3"/>' +
    '<pageSetup orientation="landscape" fitToWidth="1" fitToHeight="0"/>' +
    `<headerFooter><oddHeader>${header}</oddHeader></headerFooter>` +
    '</worksheet>'
  );
}

/** A whole small sheet: head, a header row when it is a table, the rows, tail. */
export function smallSheetXml(frame: SheetFrame, rows: readonly (readonly Cell[])[]): string {
  const first = frame.table ? 2 : 1;
  const body = rows.map((cells, i) => rowXml(first + i, cells)).join('');
  const header = frame.table ? headerRowXml(frame.columns) : '';
  return sheetHead(frame) + header + body + sheetTail(frame, Math.max(1, first - 1 + rows.length));
}
