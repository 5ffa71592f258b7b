/**
 * Taking secrets out of text before it becomes an error message (and so a log line, BullMQ's failedReason
 * and stacktrace in Redis, a checkpoint's lastErrorMessage, /status), and out of the fields a service sends
 * before they are stored. A service can echo a key in any form, or quote a piece of one, so every form is
 * scrubbed: as configured, trimmed, URL-encoded (both ways of encoding a space), JSON-escaped (once and
 * twice), base64 (standard and URL-safe, at any byte alignment), and any run of MIN_SECRET_RUN or more
 * consecutive characters of any of these forms (secret-runs.ts). URLs lose their user name, password,
 * query and fragment: a transport error that quotes the URL must not carry credentials or parameters.
 *
 * The ground floor (errors.ts, log.ts) scrubs with it, and config/secret.ts registers every key it holds,
 * so nothing here imports a higher layer. Keys shorter than MIN_SECRET_RUN are refused as settings
 * (config/secret.ts): a shorter key would make every run of its characters a secret.
 */
import { runMatcher, type RunMatcher } from './secret-runs.js';

export { MIN_SECRET_RUN } from './secret-runs.js';

/** What replaces a secret (or any run of it) in text: errors, logs, and stored fields the service sent. */
export const SECRET_MARKER = '[redacted]';

/** Every secret this process holds: errors are scrubbed of them as they are created (errors.ts). */
const REGISTERED = new Set<string>();
let registeredMatcher: RunMatcher | null = null;

/** Remembers a secret of this process (config/secret.ts, for each Secret made); empty: ignored. */
export function registerSecret(value: string): void {
  if (value.length === 0 || REGISTERED.has(value)) return;
  REGISTERED.add(value);
  registeredMatcher = null; // rebuilt on next use
}

function registered(): RunMatcher | null {
  if (REGISTERED.size === 0) return null;
  registeredMatcher ??= matcherFor([...REGISTERED]);
  return registeredMatcher;
}

/** Whether `text` holds any form, or any run of MIN_SECRET_RUN characters, of a registered secret. */
export function containsSecret(text: string): boolean {
  return registered()?.contains(text) ?? false;
}

/**
 * Whether any of `values` (null and undefined skipped) holds a form or run of a registered secret: what
 * the loader asks of each record's fields, in one call.
 */
export function anyContainsSecret(values: ReadonlyArray<string | null | undefined>): boolean {
  return registered()?.containsAny(values) ?? false;
}

/** `text` with every form and run of every registered secret replaced by `marker`. */
export function replaceSecrets(text: string, marker: string = SECRET_MARKER): string {
  const matcher = registered();
  return matcher ? matcher.replace(text, marker) : text;
}

/** `text` without any form of any secret registered in this process (errors.ts). */
export function scrubRegisteredSecrets(text: string): string {
  return replaceSecrets(text);
}

/** The middle of base64(prefix + secret) that depends on the secret's bytes alone. */
function base64Middle(bytes: Buffer, shift: number, urlSafe: boolean): string {
  const encoded = Buffer.concat([Buffer.alloc(shift), bytes]).toString(urlSafe ? 'base64url' : 'base64');
  if (shift === 0) return encoded.replace(/=+$/, '');
  // the first 4 characters mix the prefix's bytes in; the last group may be partial or padded
  return encoded.slice(4, encoded.length - 4);
}

/** The texts a secret can appear as, longest first. */
export function secretForms(secret: string): string[] {
  const forms = new Set<string>();
  for (const value of [secret, secret.trim()]) {
    if (value.length === 0) continue;
    forms.add(value);
    forms.add(encodeURIComponent(value));
    forms.add(encodeURIComponent(value).replace(/%20/g, '+'));
    forms.add(encodeURI(value));
    forms.add(JSON.stringify(value).slice(1, -1));
    forms.add(JSON.stringify(JSON.stringify(value).slice(1, -1)).slice(1, -1)); // escaped twice
    const bytes = Buffer.from(value, 'utf8');
    for (const shift of [0, 1, 2])
      for (const urlSafe of [false, true]) forms.add(base64Middle(bytes, shift, urlSafe));
  }
  forms.delete('');
  return [...forms].sort((a, b) => b.length - a.length);
}

/** A matcher for `secrets`; the last few are kept, as the HTTP client scrubs with the same key often. */
const MATCHERS = new Map<string, RunMatcher>();
function matcherFor(secrets: readonly string[]): RunMatcher {
  const id = JSON.stringify(secrets);
  let matcher = MATCHERS.get(id);
  if (!matcher) {
    matcher = runMatcher(secrets.flatMap(secretForms));
    if (MATCHERS.size >= 16) MATCHERS.delete(MATCHERS.keys().next().value as string);
    MATCHERS.set(id, matcher);
  }
  return matcher;
}

/** A reusable scrubber for `secrets` (the logger builds one per output stream). */
export function secretScrubber(secrets: readonly string[]): (text: string) => string {
  const matcher = matcherFor(secrets.filter((s) => s.length > 0));
  return (text) => matcher.replace(text, SECRET_MARKER);
}

/** `text` with every form and run of every one of `secrets` replaced by SECRET_MARKER. */
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  const present = secrets.filter((s) => s.length > 0);
  return present.length === 0 ? text : matcherFor(present).replace(text, SECRET_MARKER);
}

const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]+/gi;

/** Every URL in `text` without credentials, query or fragment (`http://u:p@h/x?k=1` → `http://h/x`). */
export function stripUrlSecrets(text: string): string {
  return text.replace(URL_IN_TEXT, (found) => {
    try {
      const url = new URL(found);
      return `${url.protocol}//${url.host}${url.pathname}`;
    } catch {
      return found.replace(/\/\/[^/@\s]*@/, '//').replace(/[?#].*$/, '');
    }
  });
}
