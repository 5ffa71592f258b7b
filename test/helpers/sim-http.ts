/** Plain HTTP against a simulator, as the simulator's own tests read it: one page, or every page. */
import type { RunningSimulator } from '../../src/sim/types.js';

export const BY_KEY = '/api/paiements/api-key';
export const ORG = '/api/paiements/organisations';
export const TRANSFERS = '/api/transferts';
export const INIT = '/api/paiements/initialize';

export type Item = Record<string, unknown> & { id: string };

export interface Wrapper {
  data: Item[];
  total: number;
  page: number;
  size: number;
  totalPages: number;
}

export function get(sim: RunningSimulator, path: string, key?: string): Promise<Response> {
  return fetch(`${sim.url}${path}`, { headers: key === undefined ? {} : { 'X-API-Key': key } });
}

/** The parsed body of a 200 answer (throws on any other status). */
export async function body(sim: RunningSimulator, path: string, key: string): Promise<unknown> {
  const res = await get(sim, path, key);
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** The items of one page, whichever shape it came in. */
export async function pageItems(sim: RunningSimulator, path: string, key: string): Promise<Item[]> {
  const value = await body(sim, path, key);
  return Array.isArray(value) ? (value as Item[]) : (value as Wrapper).data;
}

/** Pages `path` with `size` until a short page; each page's items, in order. */
export async function pages(
  sim: RunningSimulator,
  path: string,
  key: string,
  size: number,
): Promise<Item[][]> {
  const out: Item[][] = [];
  const sep = path.includes('?') ? '&' : '?';
  for (let page = 0; page < 1000; page++) {
    const items = await pageItems(sim, `${path}${sep}page=${page}&size=${size}`, key);
    out.push(items);
    if (items.length < size) return out;
  }
  throw new Error('paging did not end');
}

export const ids = (items: readonly { id: unknown }[]): unknown[] => items.map((item) => item.id);

/** The first organisation and its key. */
export function firstOrg(sim: RunningSimulator): { org: string; key: string } {
  const org = sim.organisations[0] as string;
  return { org, key: sim.keys.organisation[org] as string };
}
