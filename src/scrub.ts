/**
 * Taking secrets out of text before it becomes an error message (and so a log line, BullMQ's failedReason
 * and stacktrace in Redis, a checkpoint's lastErrorMessage, /status). A service can echo a key in any
 * form, so every form is scrubbed: as configured, trimmed, URL-encoded (both ways of encoding a space),
 * and JSON-escaped. URLs lose their user name, password, query and fragment: a transport error that
 * quotes the URL must not carry credentials or parameters into the logs.
 *
 * The ground floor (errors.ts, log.ts) scrubs with it, and config/secret.ts registers every key it holds,
 * so nothing here imports a higher layer.
 */

/** Every secret this process holds: errors are scrubbed of them as they are created (errors.ts). */
const REGISTERED = new Set<string>();

/** Remembers a secret of this process (config/secret.ts, for each Secret made); shorter than 4: ignored. */
export function registerSecret(value: string): void {
  if (value.length >= 4) REGISTERED.add(value);
}

/** `text` without any form of any secret registered in this process. */
export function scrubRegisteredSecrets(text: string): string {
  return REGISTERED.size === 0 ? text : scrubSecrets(text, [...REGISTERED]);
}

/** The texts a secret can appear as, longest first. Values shorter than 4 characters are not secrets. */
export function secretForms(secret: string): string[] {
  const forms = new Set<string>();
  for (const value of [secret, secret.trim()]) {
    if (value.length < 4) continue;
    forms.add(value);
    forms.add(encodeURIComponent(value));
    forms.add(encodeURIComponent(value).replace(/%20/g, '+'));
    forms.add(encodeURI(value));
    forms.add(JSON.stringify(value).slice(1, -1));
    forms.add(JSON.stringify(JSON.stringify(value).slice(1, -1)).slice(1, -1)); // escaped twice
  }
  return [...forms].sort((a, b) => b.length - a.length);
}

/** `text` with every form of every secret replaced by [redacted]. */
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  let clean = text;
  for (const secret of secrets)
    for (const form of secretForms(secret)) clean = clean.split(form).join('[redacted]');
  return clean;
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
