/**
 * The obvious, slow check the scrubber is held to: every piece of `key` of 8 characters (the promise:
 * no run of 8 or more of its characters), in every form a service could write it (as is, URL-encoded,
 * JSON-escaped, base64), looked up in `text`. Independent of src/scrub.ts on purpose.
 */
const RUN = 8;

function pieces(form: string): string[] {
  const out: string[] = [];
  for (let at = 0; at + RUN <= form.length; at++) out.push(form.slice(at, at + RUN));
  return out;
}

/** The pieces of `key` (8 characters of one of its forms) that `text` holds; empty when none. */
export function keyRunsIn(text: string, key: string): string[] {
  const forms = [key, encodeURIComponent(key), JSON.stringify(key).slice(1, -1)];
  forms.push(Buffer.from(key).toString('base64').replace(/=+$/, ''));
  return [...new Set(forms.flatMap(pieces))].filter((piece) => text.includes(piece));
}
