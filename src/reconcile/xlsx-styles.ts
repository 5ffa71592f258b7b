/**
 * The workbook's cell styles (xl/styles.xml) and the index of each: a fixed table, so a cell's style is a
 * constant the writers put in its `s` attribute. Text and flagged text have one-digit indexes (1 and 2, 6
 * and 7), so the records writer can flag a cell after its opening tag is written by changing one byte.
 */
import { amountFormat, DATE_TIME_FORMAT, MAX_SCALE, type Cell } from './xlsx-cells.js';

export const STYLE = {
  text: 1,
  textFlagged: 2,
  header: 3,
  date: 4,
  count: 5,
  amountText: 6,
  amountTextFlagged: 7,
  boldText: 8,
  boldCount: 9,
  boldAmountText: 10,
} as const;
/** Amount numbers at scale 0…30 are styles AMOUNT_BASE + scale; their bold twins BOLD_AMOUNT_BASE + scale. */
export const AMOUNT_BASE = 11;
export const BOLD_AMOUNT_BASE = AMOUNT_BASE + MAX_SCALE + 1;

/** The style index of a small sheet's cell (records sheets set theirs in xlsx-rows.ts). */
export function styleOf(cell: Cell): number {
  if (cell.header) return STYLE.header;
  if (cell.flag) return cell.amountText ? STYLE.amountTextFlagged : STYLE.textFlagged;
  if (cell.scale !== undefined) return (cell.bold ? BOLD_AMOUNT_BASE : AMOUNT_BASE) + cell.scale;
  if (cell.amountText) return cell.bold ? STYLE.boldAmountText : STYLE.amountText;
  if (cell.value instanceof Date) return STYLE.date;
  if (typeof cell.value === 'number') return cell.bold ? STYLE.boldCount : STYLE.count;
  return cell.bold ? STYLE.boldText : STYLE.text;
}

const TEXT_FORMAT = 49; // the built-in "@"
const COUNT_FORMAT = 3; // the built-in "#,##0"
const DATE_FORMAT_ID = 164;
const AMOUNT_FORMAT_BASE = 165;

const xf = (
  numFmtId: number,
  opts: { bold?: boolean; fill?: boolean; right?: boolean; wrap?: boolean } = {},
) =>
  `<xf numFmtId="${numFmtId}" fontId="${opts.bold ? 1 : 0}" fillId="${opts.fill ? 2 : 0}" borderId="0" xfId="0"` +
  ` applyNumberFormat="1"${opts.bold ? ' applyFont="1"' : ''}${opts.fill ? ' applyFill="1"' : ''}` +
  (opts.right || opts.wrap
    ? ` applyAlignment="1"><alignment${opts.right ? ' horizontal="right"' : ''}${opts.wrap ? ' wrapText="1"' : ''}/></xf>`
    : '/>');

const escapeAttr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

export function stylesXml(): string {
  const scales = [...Array(MAX_SCALE + 1).keys()];
  const numFmts = [
    `<numFmt numFmtId="${DATE_FORMAT_ID}" formatCode="${escapeAttr(DATE_TIME_FORMAT)}"/>`,
    ...scales.map((s) => `<numFmt numFmtId="${AMOUNT_FORMAT_BASE + s}" formatCode="${amountFormat(s)}"/>`),
  ];
  // in STYLE's order, then the amounts
  const xfs = [
    xf(0),
    xf(TEXT_FORMAT),
    xf(TEXT_FORMAT, { fill: true }),
    xf(TEXT_FORMAT, { bold: true, wrap: true }),
    xf(DATE_FORMAT_ID),
    xf(COUNT_FORMAT),
    xf(TEXT_FORMAT, { right: true }),
    xf(TEXT_FORMAT, { right: true, fill: true }),
    xf(TEXT_FORMAT, { bold: true }),
    xf(COUNT_FORMAT, { bold: true }),
    xf(TEXT_FORMAT, { bold: true, right: true }),
    ...scales.map((s) => xf(AMOUNT_FORMAT_BASE + s)),
    ...scales.map((s) => xf(AMOUNT_FORMAT_BASE + s, { bold: true })),
  ];
  return (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n' +
    '<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">' +
    `<numFmts count="${numFmts.length}">${numFmts.join('')}</numFmts>` +
    '<fonts count="2"><font><sz val="11"/><name val="Calibri"/><family val="2"/></font>' +
    '<font><b/><sz val="11"/><name val="Calibri"/><family val="2"/></font></fonts>' +
    '<fills count="3"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill>' +
    '<fill><patternFill patternType="solid"><fgColor rgb="FFFFEB9C"/><bgColor indexed="64"/></patternFill></fill></fills>' +
    '<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>' +
    '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>' +
    `<cellXfs count="${xfs.length}">${xfs.join('')}</cellXfs>` +
    '<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles>' +
    '</styleSheet>'
  );
}
