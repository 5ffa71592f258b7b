/**
 * The workbook's package parts around its sheets (ECMA-376 parts 1 and 2): content types, relationships,
 * the workbook part (the sheets in the order a reader sees them, the one it opens on, each table's
 * autofilter range and printed title row as defined names) and the document properties. Pure: the same
 * sheets and day give the same bytes; no clock is read (the document's date is the day's start).
 */
import { columnLetters, xmlText } from './xlsx-sheet.js';

export interface BookSheet {
  name: string;
  /** Its part, `xl/worksheets/sheetN.xml` (N: the order it was written in, not the order shown). */
  part: string;
  table: boolean;
  columns: number;
  lastRow: number;
}

const XML = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
const MAIN = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const PKG_REL = 'http://schemas.openxmlformats.org/package/2006/relationships';
const TYPE = 'application/vnd.openxmlformats-officedocument';

export function contentTypesXml(sheets: readonly BookSheet[]): string {
  const sheetTypes = sheets
    .map((s) => `<Override PartName="/${s.part}" ContentType="${TYPE}.spreadsheetml.worksheet+xml"/>`)
    .join('');
  return (
    `${XML}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
    `<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>` +
    `<Default Extension="xml" ContentType="application/xml"/>` +
    `<Override PartName="/xl/workbook.xml" ContentType="${TYPE}.spreadsheetml.sheet.main+xml"/>` +
    `<Override PartName="/xl/styles.xml" ContentType="${TYPE}.spreadsheetml.styles+xml"/>` +
    sheetTypes +
    `<Override PartName="/docProps/core.xml" ContentType="application/vnd.openxmlformats-package.core-properties+xml"/>` +
    `<Override PartName="/docProps/app.xml" ContentType="${TYPE}.extended-properties+xml"/>` +
    '</Types>'
  );
}

export function rootRelsXml(): string {
  return (
    `${XML}<Relationships xmlns="${PKG_REL}">` +
    `<Relationship Id="rId1" Type="${REL}/officeDocument" Target="xl/workbook.xml"/>` +
    `<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties" Target="docProps/core.xml"/>` +
    `<Relationship Id="rId3" Type="${REL}/extended-properties" Target="docProps/app.xml"/>` +
    '</Relationships>'
  );
}

/** `sheets` in the order shown; the first is the one the workbook opens on. */
export function workbookRelsXml(sheets: readonly BookSheet[]): string {
  const rels = sheets.map(
    (s, i) =>
      `<Relationship Id="rId${i + 1}" Type="${REL}/worksheet" Target="${s.part.slice('xl/'.length)}"/>`,
  );
  rels.push(`<Relationship Id="rId${sheets.length + 1}" Type="${REL}/styles" Target="styles.xml"/>`);
  return `${XML}<Relationships xmlns="${PKG_REL}">${rels.join('')}</Relationships>`;
}

const quoted = (name: string) => `'${name.replace(/'/g, "''")}'`;

export function workbookXml(sheets: readonly BookSheet[]): string {
  const list = sheets
    .map((s, i) => `<sheet name="${xmlText(s.name)}" sheetId="${i + 1}" r:id="rId${i + 1}"/>`)
    .join('');
  const names: string[] = [];
  sheets.forEach((s, i) => {
    if (!s.table) return;
    const last = columnLetters(s.columns - 1);
    const ref = `${quoted(s.name)}!$A$1:$${last}$${s.lastRow}`;
    names.push(
      `<definedName name="_xlnm._FilterDatabase" localSheetId="${i}" hidden="1">${xmlText(ref)}</definedName>`,
    );
    names.push(
      `<definedName name="_xlnm.Print_Titles" localSheetId="${i}">${xmlText(`${quoted(s.name)}!$1:$1`)}</definedName>`,
    );
  });
  return (
    `${XML}<workbook xmlns="${MAIN}" xmlns:r="${REL}">` +
    '<bookViews><workbookView activeTab="0"/></bookViews>' +
    `<sheets>${list}</sheets>` +
    (names.length > 0 ? `<definedNames>${names.join('')}</definedNames>` : '') +
    '</workbook>'
  );
}

export function coreXml(created: Date): string {
  const at = created.toISOString().replace(/\.\d{3}Z$/, 'Z');
  return (
    `${XML}<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" ` +
    'xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" ' +
    'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">' +
    '<dc:creator>paysync</dc:creator><cp:lastModifiedBy>paysync</cp:lastModifiedBy>' +
    `<dcterms:created xsi:type="dcterms:W3CDTF">${at}</dcterms:created>` +
    `<dcterms:modified xsi:type="dcterms:W3CDTF">${at}</dcterms:modified>` +
    '</cp:coreProperties>'
  );
}

export function appXml(): string {
  return (
    `${XML}<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties">` +
    '<Application>paysync</Application></Properties>'
  );
}
