/**
 * What every XML part of the workbook's package shares (ECMA-376): the declaration each part starts with
 * and the namespaces of SpreadsheetML and of relationships, written once for the sheets, the styles and
 * the workbook part.
 */

export const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
export const SPREADSHEET_NS = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
export const RELATIONSHIPS_NS = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
