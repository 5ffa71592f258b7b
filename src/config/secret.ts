import { inspect } from 'node:util';
import { isLoopbackHost } from '../host-names.js';
import { MIN_SECRET_RUN, registerSecret } from '../scrub.js';

/**
 * A secret (the API key). It prints as `[redacted]` everywhere — String(), JSON, util.inspect, template
 * strings — so an accidental log of a settings object or a source cannot leak it. Only `reveal()` gives
 * the value, and only the HTTP client calls it, to set the `X-API-Key` header.
 */
export class Secret {
  readonly #value: string;
  constructor(value: string) {
    this.#value = value;
    registerSecret(value); // errors are scrubbed of it from now on (errors.ts)
  }
  reveal(): string {
    return this.#value;
  }
  toString(): string {
    return '[redacted]';
  }
  toJSON(): string {
    return '[redacted]';
  }
  [inspect.custom](): string {
    return '[redacted]';
  }
}

/**
 * Why a value cannot be used as an API key, or null. A key with surrounding whitespace or a control
 * character is a copy-paste accident: the service may trim it (and then echo the trimmed form back in an
 * error, a form nothing would scrub), or an HTTP library may refuse the header. A key shorter than
 * MIN_SECRET_RUN characters cannot be scrubbed safely: every run of its characters would count as the key
 * ("401 Invalid API key Q~z" would go out as is, or every "Q~z" in every text would be redacted).
 * Refused at start-up.
 */
export function apiKeyProblem(value: string): string | null {
  if (value.trim() !== value) return 'has spaces or line breaks around it (remove them)';
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
  if (/[\u0000-\u001f\u007f]/.test(value)) return 'contains a control character';
  if (value.length < MIN_SECRET_RUN)
    return `must be at least ${MIN_SECRET_RUN} characters long (got ${value.length}): a shorter key cannot be kept out of logs and errors`;
  return null;
}

/** Why a service base URL cannot be used, or null: credentials in it would travel into errors and logs. */
export function baseUrlProblem(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null; // the URL check reports it
  }
  if (url.username !== '' || url.password !== '')
    return 'must not carry a user name or password: the service takes its key as X-API-Key';
  if (url.search !== '' || url.hash !== '') return 'must not contain a query string or fragment';
  return null;
}

/**
 * Why the key cannot be sent to this base URL, or null: over `http://` to any host but this machine the
 * key would travel in clear text, readable and replayable by anyone on the path. `allowHttp` is the
 * PAYMENTS_ALLOW_HTTP opt-in (a simulator on a private network, as in docker compose).
 */
export function clearTextProblem(text: string, allowHttp: boolean): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null; // the URL check reports it
  }
  if (url.protocol !== 'http:' || allowHttp || isLoopbackHost(url.hostname)) return null;
  return (
    `${text} would send the API key in clear text to ${url.hostname}: use https://, ` +
    'or set PAYMENTS_ALLOW_HTTP=1 if that network is private'
  );
}
