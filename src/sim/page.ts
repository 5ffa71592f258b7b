/**
 * One list page as served: the one place where the list and record switches apply. The selection
 * (store.ts) is laid out as a listing (records listed twice), cut by the page plan (pages past the end,
 * cycles, trickles: listing.ts), each record serialised and edited (served.ts), then wrapped with its
 * total (`totalOffset`, `totalOverride`). With every switch at its default this is the plain page: one
 * concatenation of pre-serialised records.
 */
import {
  type Listing,
  listingWithCopies,
  listingWithCopiesInPlace,
  pagePlan,
  plainListing,
} from './listing.js';
import { chosenById } from './prng.js';
import { type Timeline, serialize } from './records.js';
import {
  type Fields,
  contradictingCopy,
  withEchoedKey,
  withExtraFields,
  withFieldChanges,
  withTimestamps,
} from './served.js';
import type { Simulator } from './sim.js';
import type { ListQuery, Selection } from './store.js';
import type { SimCopy, SimStream, SimSwitches } from './types.js';

const DUPLICATE_SALT = 0x64757073;
const FIELD_CHANGE_SALT = 0x66636867;

export interface PageRequest {
  query: ListQuery;
  page: number;
  size: number;
  wrap: boolean;
  /** The caller's key (`echoKey`). */
  secret?: string;
}

/** How a record is edited on serving (`copy`: its second listing); null when nothing is edited. */
type Editor = (json: string, record: Timeline, copy: boolean) => string;

export function recordEditor(
  s: SimSwitches,
  stream: SimStream,
  seed: number,
  secret: string | undefined,
): Editor | null {
  const extra = stream === 'payments' ? s.paymentExtraFields : s.transferExtraFields;
  const changes = s.fieldChanges.filter((c) => c.stream === stream);
  const echo = stream === 'payments' && secret !== undefined ? s.echoKey : [];
  const overrides = s.timestampOverrides;
  const contradicts = s.copyVariant !== 'identical' || s.copyUpdatedAt !== 'same';
  const idle = Object.keys(extra).length === 0 && changes.length === 0 && echo.length === 0 && !contradicts;
  if (idle && Object.keys(overrides).length === 0) return null;
  return (json, record, copy) => {
    if (record.raw !== undefined) return json;
    const id = record.id;
    const override = Object.hasOwn(overrides, id) ? overrides[id] : undefined;
    const mine = changes.filter((c) => chosenById(id, seed, FIELD_CHANGE_SALT, c.rate));
    if (!(copy && contradicts) && !override && mine.length === 0 && echo.length === 0)
      return withExtraFields(json, extra);
    let f = JSON.parse(json) as Fields;
    if (copy && contradicts) f = contradictingCopy(f, s.copyVariant, s.copyUpdatedAt);
    if (override) f = withTimestamps(f, override);
    if (mine.length > 0) f = withFieldChanges(f, mine);
    if (echo.length > 0) f = withEchoedKey(f, secret as string, echo);
    return withExtraFields(JSON.stringify(f), extra);
  };
}

/** Whether a record is listed twice under the switches. */
function listedTwice(sim: Simulator): (record: Timeline) => boolean {
  const s = sim.switches();
  const ids = new Set(s.duplicateIds);
  return (r) => ids.has(r.id) || chosenById(r.id, sim.seed, DUPLICATE_SALT, s.duplicateRate);
}

function listingOf(sim: Simulator, selection: Selection<Timeline>): Listing {
  const s = sim.switches();
  const { items, start, end } = selection;
  if (s.duplicateRate === 0 && s.duplicateIds.length === 0) return plainListing(end - start);
  const key = [items, start, end, sim.store.version, s];
  const twice = listedTwice(sim);
  const lay = s.duplicateInPlace ? listingWithCopiesInPlace : listingWithCopies;
  return sim.listings.get(key, () =>
    lay(end - start, (i) => twice(items[start + i] as Timeline), s.duplicateOffset),
  );
}

/** The body of a list page: a bare array, or the wrapper around it. */
export function servePage(sim: Simulator, request: PageRequest): string {
  const s = sim.switches();
  const { query, page, size } = request;
  const now = sim.now();
  const selection = sim.store.select(query, now);
  const listing = listingOf(sim, selection);
  const plan = pagePlan(listing.length, page, size, s);
  const edit = recordEditor(s, query.stream, sim.seed, request.secret);
  const parts: string[] = new Array(plan.count);
  for (let i = 0; i < plan.count; i++) {
    const position = (plan.start + i) % listing.length;
    const record = selection.items[selection.start + listing.source(position)] as Timeline;
    const json = serialize(query.stream, record, now);
    parts[i] = edit ? edit(json, record, listing.isCopy(position)) : json;
  }
  const data = `[${parts.join(',')}]`;
  if (!request.wrap) return data;
  const total = s.totalOverride ?? Math.max(0, listing.length + s.totalOffset);
  const tail = `"total":${total},"page":${page},"size":${size},"totalPages":${Math.ceil(total / size)}`;
  return `{"data":${data},${tail}}`;
}

/** The records of an organisation's stream listed twice now, with both listings as served. */
export function servedCopies(sim: Simulator, organizationId: string, stream: SimStream): SimCopy[] {
  const now = sim.now();
  const query = { stream, organizationId, fromInclusive: true, toInclusive: true, order: 'asc' } as const;
  const { items, start, end } = sim.store.select(query, now);
  const s = sim.switches();
  const twice = listedTwice(sim);
  const edit = recordEditor(s, stream, sim.seed, undefined) ?? ((json: string) => json);
  const served = (record: Timeline, copy: boolean) =>
    JSON.parse(edit(serialize(stream, record, now), record, copy)) as Record<string, unknown>;
  const inPlace = s.duplicateInPlace
    ? listingWithCopiesInPlace(end - start, (i) => twice(items[start + i] as Timeline), s.duplicateOffset)
    : null;
  const out: SimCopy[] = [];
  for (let i = start; i < end; i++) {
    const record = items[i] as Timeline;
    if (record.raw !== undefined || !twice(record)) continue;
    const pair: SimCopy = { original: served(record, false), copy: served(record, true) };
    if (inPlace) {
      const at = inPlace.displaced.get(i - start);
      if (at === undefined) continue; // no copy made
      pair.displaced = served(items[start + at] as Timeline, false);
    }
    out.push(pair);
  }
  return out;
}
