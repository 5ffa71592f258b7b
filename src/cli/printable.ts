/**
 * Text from the service or from files, made safe to print on a terminal: every C0 and C1 control
 * character (newline and tab aside, where the caller allows them) is written as `\uXXXX`, so a record
 * field holding an escape sequence is shown, never run by the terminal.
 */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
// eslint-disable-next-line no-control-regex
const CONTROL_OR_LINE = /[\u0000-\u001f\u007f-\u009f]/g;

const escape = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0').toUpperCase()}`;

/** One line: line breaks and tabs escaped too. */
export function printableLine(text: string): string {
  return text.replace(CONTROL_OR_LINE, escape);
}

/** Several lines: newlines and tabs kept. */
export function printable(text: string): string {
  return text.replace(CONTROL, escape);
}
