/**
 * A text or jsonb field of the COPY's CSV as a records sheet's cell, written as bytes: xlsx-cells.ts's
 * textCell (after pack-rejects.ts's compactJson for jsonb) applied to the field's bytes, same result.
 * - text: an inline string; `&`, `<`, `>` escaped; CR as `_x000D_`; an underscore starting `_xHHHH_` as
 *   `_x005F_`; other control characters and U+FFFE/U+FFFF visible (`\u0001`) and the cell flagged; a text
 *   longer than 32,767 characters (UTF-16 units, as Excel counts) cut before a whole character, ended
 *   with `…` and flagged; `xml:space="preserve"` when it starts or ends with whitespace.
 * - json: the same, with the spaces PostgreSQL prints outside strings dropped (the service's compact form;
 *   jsonb text holds no other whitespace outside strings).
 * A quoted field's doubled quotes are one quote of the text. NULL and '' make no cell.
 */
import { MAX_CELL_TEXT, type FlagReason } from './xlsx-cells.js';
import { ascii, type RowBytes } from './xlsx-row-bytes.js';
import { STYLE } from './xlsx-styles.js';

const QUOTE = 0x22;
const LF = 0x0a;
const CR = 0x0d;
/** Below this many bytes a field cannot reach MAX_CELL_TEXT units, even if every byte became `\uXXXX`. */
const SHORT_FIELD = Math.floor((MAX_CELL_TEXT - 1) / 6);

const AMP = ascii('&amp;');
const LT = ascii('&lt;');
const GT = ascii('&gt;');
const CR_ESCAPE = ascii('_x000D_');
const UNDERSCORE_ESCAPE = ascii('_x005F_');
const ELLIPSIS = Buffer.from('…', 'utf8');

/** Bytes the text loop must look at (everything else is copied in runs). */
const SPECIAL = new Uint8Array(256);
for (let b = 0; b < 0x20; b++) if (b !== 0x09 && b !== LF) SPECIAL[b] = 1;
for (const b of [QUOTE, 0x26, 0x3c, 0x3e, 0x5f, 0x7f, 0xef]) SPECIAL[b] = 1;
const JSON_SPECIAL = Uint8Array.from(SPECIAL);
JSON_SPECIAL[0x20] = 1;
JSON_SPECIAL[0x5c] = 1;

const isHex = (b: number) => (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66);
const isSpace = (b: number | undefined) => b === 0x20 || b === 0x09 || b === LF || b === CR;

/**
 * Writes the cell of input[s, e) (a field's content, inside its quotes when `quoted`) at `cell` of the
 * current row: unstyled (style 0 is text's look), or written again with the flag's style if flagged.
 * Returns why the cell is flagged, if it is.
 */
export function writeTextCell(
  w: RowBytes,
  input: Buffer,
  s: number,
  e: number,
  quoted: boolean,
  json: boolean,
  cell: number,
): FlagReason | null {
  if (s === e) return null; // NULL or '': no cell
  if (!json && e - s <= SHORT_FIELD) {
    // most text needs nothing but copying
    let i = s;
    while (i < e && SPECIAL[input[i] as number] === 0) i++;
    if (i === e && !isSpace(input[s]) && !isSpace(input[e - 1])) {
      w.ref(cell);
      w.openText(false);
      w.copy(input, s, e);
      w.closeText();
      return null;
    }
  }
  const start = w.o;
  const preserve = isSpace(input[s]) || isSpace(input[e - 1]);
  w.ref(cell);
  w.openText(preserve);
  const reason = textContent(w, input, s, e, quoted, json);
  if (reason) {
    w.rewindCell(start); // rare: the row is still in the buffer (the row's writer made room for all of it)
    w.open(cell, STYLE.textFlagged);
    // a cut text ends with `…`: only its start can be whitespace
    w.openText(reason === 'text-cut' ? isSpace(input[s]) : preserve);
    textContent(w, input, s, e, quoted, json);
  }
  w.closeText();
  return reason;
}

/** Writes a text's content; returns why the cell must be flagged, if it must. */
function textContent(
  w: RowBytes,
  input: Buffer,
  s: number,
  e: number,
  quoted: boolean,
  json: boolean,
): FlagReason | null {
  const special = json ? JSON_SPECIAL : SPECIAL;
  const counted = e - s > SHORT_FIELD; // only a long text can reach a cell's limit
  const out = w.out;
  let units = 0;
  let escaped = false;
  let inString = false;
  let backslash = false;
  let run = s;
  for (let i = s; i < e; i++) {
    const b = input[i] as number;
    if (!counted && special[b] === 0) {
      backslash = false;
      continue;
    }
    if (i > run) w.copy(input, run, i);
    run = i + 1;
    let bytes: Buffer | null = null;
    let add = 1;
    let skip = 0;
    if (b === QUOTE) {
      if (quoted) skip = 1; // a doubled quote: one quote of the text
      if (json && !backslash) inString = !inString;
      backslash = false;
    } else if (b === 0x5c && json) {
      backslash = inString && !backslash;
    } else {
      backslash = false;
      if (b === 0x20 && json && !inString) continue; // PostgreSQL's space after `:` and `,`
      if (b === 0x26) bytes = AMP;
      else if (b === 0x3c) bytes = LT;
      else if (b === 0x3e) bytes = GT;
      else if (b === CR) bytes = CR_ESCAPE;
      else if (b === 0x5f) {
        if (i + 6 < e && (input[i + 1] === 0x78 || input[i + 1] === 0x58) && input[i + 6] === 0x5f) {
          if (isHex(input[i + 2] as number) && isHex(input[i + 3] as number))
            if (isHex(input[i + 4] as number) && isHex(input[i + 5] as number)) bytes = UNDERSCORE_ESCAPE;
        }
      } else if (b < 0x20 && b !== 0x09 && b !== LF) {
        bytes = ascii(`\\u${b.toString(16).toUpperCase().padStart(4, '0')}`);
        escaped = true;
        add = 6;
      } else if (b === 0x7f) {
        bytes = ascii('\\u007F');
        escaped = true;
        add = 6;
      } else if (b === 0xef && input[i + 1] === 0xbf && (input[i + 2] === 0xbe || input[i + 2] === 0xbf)) {
        bytes = ascii(input[i + 2] === 0xbe ? '\\uFFFE' : '\\uFFFF');
        escaped = true;
        add = 6;
        skip = 2;
      } else if (b >= 0x80) {
        // a whole UTF-8 character: 2-4 bytes, 1 UTF-16 unit (2 from four bytes)
        skip = b >= 0xf0 ? 3 : b >= 0xe0 ? 2 : b >= 0xc0 ? 1 : 0;
        if (b >= 0xf0) add = 2;
      }
    }
    if (counted && units + add > MAX_CELL_TEXT - 1) {
      w.put(ELLIPSIS);
      return 'text-cut';
    }
    units += add;
    if (bytes) w.put(bytes);
    else {
      out[w.o++] = b;
      if (skip > 0 && b !== QUOTE) w.copy(input, i + 1, i + 1 + skip);
    }
    i += skip;
    run = i + 1;
  }
  if (e > run) w.copy(input, run, e);
  return escaped ? 'text-escaped' : null;
}
