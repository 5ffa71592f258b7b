/**
 * The transfers sync's memory of the service's transfer list (sql/013): per id, the position it held at
 * the last read that saw it; per source, the order and page geometry those positions are counted in.
 * Also the few questions the transfers sync asks of `reporting.transfers` (which ones are unsettled).
 */
import type pg from 'pg';
import type {
  PositionEntry,
  TransferList,
  TransferMemory,
  UnsettledTransfers,
} from '../sync/transfer-state.js';

interface ListRow {
  list_order: TransferList['order'];
  page_size: number;
  served_size: number;
  anonymous: number;
  last_full_scan_at: Date | null;
}

export class PgTransferMemory implements TransferMemory {
  constructor(private readonly pool: pg.Pool) {}

  async list(source: string): Promise<TransferList | null> {
    const { rows } = await this.pool.query<ListRow>(
      `SELECT list_order, page_size, served_size, anonymous, last_full_scan_at
         FROM reporting.transfer_lists WHERE source = $1`,
      [source],
    );
    const r = rows[0];
    if (!r) return null;
    return {
      order: r.list_order,
      pageSize: r.page_size,
      servedSize: r.served_size,
      anonymous: r.anonymous,
      lastFullScanAt: r.last_full_scan_at,
    };
  }

  async saveList(source: string, list: TransferList, at: Date): Promise<void> {
    await this.pool.query(
      `INSERT INTO reporting.transfer_lists
              (source, list_order, page_size, served_size, anonymous, last_full_scan_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (source) DO UPDATE SET
         list_order = EXCLUDED.list_order, page_size = EXCLUDED.page_size,
         served_size = EXCLUDED.served_size, anonymous = EXCLUDED.anonymous,
         last_full_scan_at = GREATEST(reporting.transfer_lists.last_full_scan_at, EXCLUDED.last_full_scan_at),
         updated_at = EXCLUDED.updated_at`,
      [source, list.order, list.pageSize, list.servedSize, list.anonymous, list.lastFullScanAt, at],
    );
  }

  /** Upserts positions; `seen_at` only moves forward, so a slower concurrent read cannot undo a newer one. */
  async remember(source: string, entries: readonly PositionEntry[], at: Date): Promise<void> {
    if (entries.length === 0) return;
    const byId = new Map(entries.map((e) => [e.id, e.position])); // one row per id (the last copy wins)
    await this.pool.query(
      `INSERT INTO reporting.transfer_positions (source, id, position, seen_at)
       SELECT $1, id, position, $4 FROM unnest($2::text[], $3::int[]) AS u(id, position)
       ON CONFLICT (source, id) DO UPDATE SET position = EXCLUDED.position,
         seen_at = GREATEST(reporting.transfer_positions.seen_at, EXCLUDED.seen_at)`,
      [source, [...byId.keys()], [...byId.values()], at],
    );
  }

  async known(source: string, ids: readonly string[]): Promise<number> {
    if (ids.length === 0) return 0;
    const { rows } = await this.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM reporting.transfer_positions WHERE source = $1 AND id = ANY($2::text[])`,
      [source, ids],
    );
    return rows[0]?.n ?? 0;
  }

  async held(source: string): Promise<number> {
    const { rows } = await this.pool.query<{ n: number }>(
      // kept by sql/017's triggers: count(*) of the source's transfer_positions, without reading them
      `SELECT ids::int AS n FROM reporting.transfer_positions_held WHERE source = $1`,
      [source],
    );
    return rows[0]?.n ?? 0;
  }

  async forgetUnseen(source: string, before: Date): Promise<number> {
    const { rowCount } = await this.pool.query(
      `DELETE FROM reporting.transfer_positions WHERE source = $1 AND seen_at < $2`,
      [source, before],
    );
    return rowCount ?? 0;
  }

  async unsettled(source: string, since: Date): Promise<UnsettledTransfers> {
    const { rows } = await this.pool.query<{ id: string; created_at: Date; position: number | null }>(
      `SELECT t.id, t.created_at, p.position
         FROM reporting.transfers t
         LEFT JOIN reporting.transfer_positions p ON p.source = t.source AND p.id = t.id
        WHERE t.source = $1 AND t.status NOT IN ('COMPLETE', 'FAILED') AND t.created_at >= $2`,
      [source, since],
    );
    let oldestAt: Date | null = null;
    let oldestPosition: number | null = null;
    let unpositioned = 0;
    for (const r of rows) {
      if (!oldestAt || r.created_at < oldestAt) oldestAt = r.created_at;
      if (r.position === null) unpositioned += 1;
      else oldestPosition = Math.min(oldestPosition ?? r.position, r.position);
    }
    return { ids: rows.map((r) => r.id), oldestAt, oldestPosition, unpositioned };
  }
}

/**
 * The organisation a source's transfers belong to: the interface gives none, the source's payments do
 * (the one most of them belong to). Read from the per-organisation counts sql/017's triggers keep, not
 * by grouping every payment of the source (seconds at 20M payments, on every transfers tick).
 */
export async function organisationOfSource(pool: pg.Pool, source: string): Promise<string | null> {
  const { rows } = await pool.query<{ organization_id: string }>(
    `SELECT organization_id FROM reporting.payments_by_organisation
      WHERE source = $1 AND records > 0 ORDER BY records DESC, organization_id LIMIT 1`,
    [source],
  );
  return rows[0]?.organization_id ?? null;
}
