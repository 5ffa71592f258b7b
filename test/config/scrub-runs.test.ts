/**
 * No form of the key leaves in text: whole, trimmed, URL-encoded, JSON-escaped, base64 at any byte
 * alignment, and any run of 8 or more of its characters (a service quoting a piece of the key). Text
 * holding no such run comes back unchanged. The registered-secret functions (containsSecret,
 * replaceSecrets with a marker) are what the loader calls on stored fields.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  MIN_SECRET_RUN,
  SECRET_MARKER,
  containsSecret,
  registerSecret,
  replaceSecrets,
  scrubSecrets,
  secretForms,
} from '../../src/scrub.js';

const KEY = 'sk_live_9fQ2/xR+7t"Zm~Lw04kPq8Y';

/** Whether `text` still holds a run of MIN_SECRET_RUN characters of `secret` (the slow, obvious way). */
function holdsRun(text: string, secret: string): boolean {
  for (let at = 0; at + MIN_SECRET_RUN <= secret.length; at++)
    if (text.includes(secret.slice(at, at + MIN_SECRET_RUN))) return true;
  return false;
}

describe('key runs', () => {
  it('a 28-character piece of the key quoted by the service is scrubbed (the leak it closes)', () => {
    const piece = KEY.slice(2, 30);
    const message = `the page wrapper names "request-key=${piece}" twice`;
    const clean = scrubSecrets(message, [KEY]);
    expect(clean).toBe(`the page wrapper names "request-key=${SECRET_MARKER}" twice`);
    expect(holdsRun(clean, KEY)).toBe(false);
  });

  it('any run of 8 or more of its characters, anywhere, is scrubbed; 7 are left', () => {
    fc.assert(
      fc.property(
        fc.nat({ max: KEY.length - MIN_SECRET_RUN }),
        fc.nat({ max: KEY.length }),
        fc.string(),
        fc.string(),
        (start, extra, before, after) => {
          const piece = KEY.slice(start, Math.min(KEY.length, start + MIN_SECRET_RUN + extra));
          const clean = scrubSecrets(`${before}${piece}${after}`, [KEY]);
          expect(holdsRun(clean, KEY)).toBe(false);
        },
      ),
    );
    const seven = KEY.slice(3, 10);
    expect(scrubSecrets(`a ${seven} b`, [KEY])).toBe(`a ${seven} b`);
  });

  it('text holding no run of the key is returned unchanged', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 400 }), (text) => {
        fc.pre(!holdsRun(text, KEY));
        expect(scrubSecrets(text, [KEY])).toBe(text);
      }),
    );
  });

  it('base64 of the key, at every alignment, standard and URL-safe, and in Basic auth', () => {
    for (const prefix of ['', 'a', 'ab', 'abc', 'user:']) {
      for (const encoding of ['base64', 'base64url'] as const) {
        const encoded = Buffer.from(`${prefix}${KEY}`).toString(encoding);
        const clean = scrubSecrets(`Authorization: Basic ${encoded}`, [KEY]);
        expect(clean).toContain(SECRET_MARKER);
        const left = clean.replace('Authorization: Basic ', '').split(SECRET_MARKER).join('');
        expect(left.length).toBeLessThanOrEqual(12); // what the prefix and the padding encode
      }
    }
  });

  it('URL-encoded and JSON-escaped forms, whole and in pieces', () => {
    const encoded = encodeURIComponent(KEY);
    const escaped = JSON.stringify(KEY).slice(1, -1);
    for (const form of [encoded, escaped, encoded.slice(5, 20), escaped.slice(4, 16)])
      expect(scrubSecrets(`x=${form};`, [KEY])).toBe(`x=${SECRET_MARKER};`);
  });

  it("registered secrets: containsSecret and replaceSecrets with the loader's marker", () => {
    const registered = 'pk_registered_Hq93kd0Zx';
    registerSecret(registered);
    const field = `echo:${registered.slice(4, 17)}:end`;
    expect(containsSecret(field)).toBe(true);
    expect(containsSecret('nothing secret here at all')).toBe(false);
    expect(replaceSecrets(field, '[api key removed]')).toBe('echo:[api key removed]:end');
    expect(replaceSecrets(field)).toBe(`echo:${SECRET_MARKER}:end`);
  });

  it('containsSecret (a filter on aligned 4-character stretches first) finds a run at every offset, of every form', () => {
    const registered = 'pk_aligned_7Tq/Wz+0v"Lm~9';
    registerSecret(registered);
    const forms = secretForms(registered);
    // the obvious way: some run of MIN_SECRET_RUN characters of the text is one of a form
    const obvious = (text: string) =>
      forms.some((form) => {
        for (let at = 0; at + MIN_SECRET_RUN <= form.length; at++)
          if (text.includes(form.slice(at, at + MIN_SECRET_RUN))) return true;
        return false;
      });
    fc.assert(
      fc.property(
        fc.nat({ max: forms.length - 1 }),
        fc.nat({ max: 40 }),
        fc.integer({ min: 6, max: 12 }),
        fc.string({ maxLength: 13 }),
        fc.string({ maxLength: 40 }),
        (f, start, length, before, after) => {
          const form = forms[f] as string;
          const at = start % Math.max(1, form.length - length + 1);
          const text = `${before}${form.slice(at, at + length)}${after}`;
          expect(containsSecret(text)).toBe(obvious(text));
        },
      ),
      { numRuns: 2000 },
    );
  });
});
