/**
 * Text a terminal will show, made inert. Whatever a service sends (a status, an id, an error message) can
 * hold control characters: ESC starts sequences that write the clipboard (OSC 52), clear the screen,
 * blink, retitle the window or rewrite what was printed before; CR overwrites a line; the C1 controls
 * (U+0080-U+009F, CSI among them) do the same on terminals that honour them; the bidirectional overrides
 * and isolates reorder what is shown. Each becomes its `\uXXXX` escape, visible as text.
 *
 * The same replacement is exact in JSON: JSON.stringify escapes C0 itself but writes C1, DEL and the
 * bidi controls raw; inside a JSON string `\uXXXX` is that very character, so JSON output keeps its
 * values and parses the same. Pure; the CLI applies it to everything it writes (src/cli/terminal.ts).
 */

// eslint-disable-next-line no-control-regex -- control characters are exactly what is matched
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
// eslint-disable-next-line no-control-regex -- as above, without line feed and tab
const CONTROLS_BUT_LINES = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

const escape = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** `text` with every control character but line feed and tab as its `\uXXXX` escape (whole outputs). */
export function neutraliseControls(text: string): string {
  CONTROLS_BUT_LINES.lastIndex = 0;
  return CONTROLS_BUT_LINES.test(text) ? text.replace(CONTROLS_BUT_LINES, escape) : text;
}

/** `text` with every control character, line feed and tab included, escaped: one table cell, one line. */
export function oneLine(text: string): string {
  CONTROLS.lastIndex = 0;
  return CONTROLS.test(text) ? text.replace(CONTROLS, escape) : text;
}
