import { inspect } from 'node:util';

/**
 * A secret (the API key). It prints as `[redacted]` everywhere — String(), JSON, util.inspect, template
 * strings — so an accidental log of a settings object or a source cannot leak it. Only `reveal()` gives
 * the value, and only the HTTP client calls it, to set the `X-API-Key` header.
 */
export class Secret {
  readonly #value: string;
  constructor(value: string) {
    this.#value = value;
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
