/**
 * Fault injection. Each API request draws the same number of values from one seeded stream, so a run's
 * fault sequence depends only on the seed and the request count; a rate of 1 always fires (draws are
 * < 1), a rate of 0 never does.
 */
import { type Rng, mix32, mulberry32 } from './prng.js';
import type { Reply } from './routes.js';
import type { SimSwitches } from './types.js';

export type Fault =
  | { kind: 'reset' }
  | { kind: 'rate-limit' }
  | { kind: 'server-error'; status: 500 | 502 | 503 }
  | { kind: 'none' };

export interface FaultPlan {
  fault: Fault;
  /** Delay before answering (0: none). */
  delayMs: number;
  /** For list requests: answer 200 with a non-JSON body. */
  notJson: boolean;
}

export class FaultDice {
  private readonly rng: Rng;
  constructor(seed: number) {
    this.rng = mulberry32(mix32(seed, 0x66617574));
  }

  roll(s: SimSwitches): FaultPlan {
    const [reset, limit, error, which, slow, notJson] = Array.from({ length: 6 }, this.rng);
    const delayMs = (slow as number) < s.slowRate ? s.slowMs : 0;
    let fault: Fault = { kind: 'none' };
    if ((reset as number) < s.resetRate) fault = { kind: 'reset' };
    else if ((limit as number) < s.rateLimitRate) fault = { kind: 'rate-limit' };
    else if ((error as number) < s.serverErrorRate) {
      fault = {
        kind: 'server-error',
        status: ([500, 502, 503] as const)[Math.floor((which as number) * 3)] ?? 500,
      };
    }
    return { fault, delayMs, notJson: (notJson as number) < s.notJsonRate };
  }
}

/** Bodies in the styles real stacks send: the framework's JSON for 429/500/503, a proxy's HTML for 502. */
export function faultResponse(fault: Fault, retryAfterSeconds: number): Reply {
  if (fault.kind === 'rate-limit') {
    return {
      status: 429,
      headers: { 'content-type': 'application/json', 'retry-after': String(retryAfterSeconds) },
      body: JSON.stringify({
        statusCode: 429,
        message: 'ThrottlerException: Too Many Requests',
        error: 'Too Many Requests',
      }),
    };
  }
  const status = fault.kind === 'server-error' ? fault.status : 500;
  if (status === 502) {
    return {
      status,
      headers: { 'content-type': 'text/html' },
      body: '<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center></body></html>\n',
    };
  }
  const error = status === 503 ? 'Service Unavailable' : 'Internal Server Error';
  return {
    status,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ statusCode: status, message: error, error }),
  };
}

/** What a misconfigured proxy or maintenance page answers with a 200. */
export const NOT_JSON_BODY =
  '<!DOCTYPE html><html><body><h1>Maintenance</h1><p>Back soon.</p></body></html>\n';

/**
 * `keyInErrors`: an error body that quotes the request's key, as a careless service's messages do: in a
 * JSON body's `message` (appended to an array of messages), or as a line of an HTML page.
 */
export function quotingKey(reply: Reply, secret: string | undefined, mode: 'none' | 'whole' | 'part'): Reply {
  if (mode === 'none' || secret === undefined || secret === '' || reply.status < 400) return reply;
  const note = `request-key=${mode === 'whole' || secret.length <= 8 ? secret : secret.slice(4, 32)}`;
  let body: unknown;
  try {
    body = JSON.parse(reply.body);
  } catch {
    return { ...reply, body: reply.body.replace('</body>', `<p>${note}</p></body>`) };
  }
  const fields = body !== null && typeof body === 'object' ? (body as Record<string, unknown>) : {};
  const message = fields.message;
  const quoted = Array.isArray(message)
    ? [...(message as unknown[]), note]
    : `${typeof message === 'string' ? `${message} ` : ''}(${note})`;
  return { ...reply, body: JSON.stringify({ ...fields, message: quoted }) };
}
