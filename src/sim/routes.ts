/**
 * The four endpoints of the service's interface (docs/upstream.md) over the Simulator: auth with the
 * exact 401/403 bodies per endpoint, list queries, both list shapes, and initialize's validation.
 *
 * Open points answered here (each can be switched, see switches.ts):
 * - dateFrom/dateTo are Unix seconds compared with createdAt in ms: `createdAt >= dateFrom*1000`
 *   (`>` when exclusive) and `createdAt <= dateTo*1000` (`<` when exclusive). So a record at
 *   12:00:00.500 is outside dateTo=12:00:00 either way, and one at exactly 12:00:00.000 is inside only
 *   when inclusive.
 * - Unparsable page/size/dateFrom/dateTo are ignored (treated as absent); size below 1 likewise.
 * - The `forbidden` key gets 403 `Forbidden resource` on initialize too (the interface lists only 400
 *   and 401 there; a key with no rights is the one case where a 403 is the honest answer).
 */
import type { ApiKey, KeyRights } from './keys.js';
import { servePage } from './page.js';
import type { Simulator } from './sim.js';
import type { ListQuery, StreamName } from './store.js';

export type Endpoint = 'byKey' | 'organisation' | 'transfers' | 'initialize';

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body: string;
}

export const ROUTES: Record<string, Endpoint> = {
  'GET /api/paiements/api-key': 'byKey',
  'GET /api/paiements/organisations': 'organisation',
  'GET /api/transferts': 'transfers',
  'POST /api/paiements/initialize': 'initialize',
};

const DENIALS: Record<Endpoint, { 401: string; 403: string }> = {
  byKey: { 401: 'Invalid API key', 403: 'API key does not have permission to access payments' },
  organisation: { 401: 'Invalid or missing API key', 403: 'Forbidden resource' },
  transfers: { 401: 'Invalid or missing API key', 403: 'Forbidden resource' },
  initialize: { 401: 'Invalid or missing API key', 403: 'Forbidden resource' },
};

const ALLOWED: Record<KeyRights, readonly Endpoint[]> = {
  org: ['byKey', 'organisation', 'transfers', 'initialize'],
  byKey: ['byKey', 'initialize'],
  none: [],
};

export function json(status: number, value: unknown, headers: Record<string, string> = {}): Reply {
  return {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
    body: JSON.stringify(value),
  };
}

/** The key when it may use the endpoint, else the exact 401/403 reply. */
export function authorize(sim: Simulator, endpoint: Endpoint, secret: string | undefined): ApiKey | Reply {
  const key = sim.authenticate(secret);
  if (!key) return json(401, { statusCode: 401, message: DENIALS[endpoint][401], error: 'Unauthorized' });
  if (!ALLOWED[key.rights].includes(endpoint)) {
    return json(403, { statusCode: 403, message: DENIALS[endpoint][403], error: 'Forbidden' });
  }
  return key;
}

function intParam(params: URLSearchParams, name: string, min: number): number | undefined {
  const text = params.get(name);
  if (text === null || !/^\s*-?\d+\s*$/.test(text)) return undefined;
  const n = Number(text);
  return n >= min ? n : undefined;
}

function secondsParam(params: URLSearchParams, name: string): number | undefined {
  const text = params.get(name);
  if (text === null || text.trim() === '') return undefined;
  const n = Number(text);
  return Number.isFinite(n) ? n * 1000 : undefined;
}

function textParam(params: URLSearchParams, name: string): string | undefined {
  const text = params.get(name);
  return text === null || text === '' ? undefined : text;
}

/** The list query an endpoint's request asks for, under the current switches. */
export function listQuery(
  sim: Simulator,
  endpoint: Endpoint,
  key: ApiKey,
  params: URLSearchParams,
): ListQuery {
  const s = sim.switches();
  const stream: StreamName = endpoint === 'transfers' ? 'transfers' : 'payments';
  const base = {
    stream,
    organizationId: key.organizationId,
    fromInclusive: s.dateFromInclusive,
    toInclusive: s.dateToInclusive,
  };
  if (stream === 'transfers') return { ...base, order: s.transferOrder };
  const dated = !s.ignoreDateFilter;
  return {
    ...base,
    order: s.paymentOrder,
    apiKeyId: endpoint === 'byKey' ? key.id : undefined,
    status: textParam(params, 'status'),
    type: textParam(params, 'transaction_type'),
    fromMs: dated ? secondsParam(params, 'dateFrom') : undefined,
    toMs: dated ? secondsParam(params, 'dateTo') : undefined,
  };
}

/** One page of a list endpoint, in the shape the switches say (page.ts); drift happens after it is cut. */
export function listPage(
  sim: Simulator,
  endpoint: Endpoint,
  key: ApiKey,
  params: URLSearchParams,
  wrap: boolean,
): Reply {
  const s = sim.switches();
  const query = listQuery(sim, endpoint, key, params);
  const requested = intParam(params, 'size', 1) ?? s.defaultPageSize;
  const size = s.pageCap === null ? requested : Math.min(requested, s.pageCap);
  const page = s.ignorePage ? 0 : (intParam(params, 'page', 0) ?? 0);
  const body = servePage(sim, { query, page, size, wrap, secret: key.secret });
  if (query.stream === 'payments' && s.driftPerPage > 0) sim.drift(key, query.fromMs, query.toMs);
  if (query.stream === 'transfers' && s.transferDriftPerPage > 0) sim.driftTransfers(key.organizationId);
  return { status: 200, headers: { 'content-type': 'application/json; charset=utf-8' }, body };
}

function initializeProblems(body: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const { amount, description, extra_data: extra } = body;
  if (typeof amount !== 'number' || !Number.isFinite(amount) || amount <= 0) {
    problems.push('amount must be a positive number');
  }
  if (description === undefined || description === null || description === '') {
    problems.push('description should not be empty');
  } else if (typeof description !== 'string') problems.push('description must be a string');
  if (extra !== undefined && (extra === null || typeof extra !== 'object' || Array.isArray(extra))) {
    problems.push('extra_data must be an object');
  }
  return problems;
}

const badRequest = (message: string[]): Reply =>
  json(400, { statusCode: 400, message, error: 'Bad Request' });

export function initialize(sim: Simulator, key: ApiKey, bodyText: string, paymentUrl: string): Reply {
  let body: unknown;
  try {
    body = JSON.parse(bodyText);
  } catch {
    return badRequest(['request body must be a JSON object']);
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return badRequest(['request body must be a JSON object']);
  }
  const fields = body as Record<string, unknown>;
  const problems = initializeProblems(fields);
  if (problems.length > 0) return badRequest(problems);
  const {
    amount,
    description,
    extra_data: extra,
  } = fields as { amount: number; description: string; extra_data?: object };
  const record = sim.createPayment(key, amount, description, extra ?? {});
  return json(sim.switches().initializeStatus, {
    amount,
    payment_status: 'INIT',
    currency: 'XOF',
    when_created: new Date(record.createdAt).toISOString(),
    launch_url: `${paymentUrl}/${record.reference}`,
    reference: record.reference,
  });
}
