/**
 * What the transfers sync has learnt about the service's transfer list: whether it is newest-first, and
 * when the last full scan completed. Kept in Redis beside the checkpoints; when lost, the next tick simply
 * does a full scan (the safe default), which re-learns both.
 */
import type { Redis } from 'ioredis';

export interface TransferFindings {
  newestFirst: boolean | null;
  lastFullScanAt: Date | null;
}

export class TransferStateStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private key(source: string): string {
    return `${this.prefix}:transfers-state:${source}`;
  }

  async get(source: string): Promise<TransferFindings> {
    const h = await this.redis.hgetall(this.key(source));
    return {
      newestFirst: h.newestFirst === undefined ? null : h.newestFirst === '1',
      lastFullScanAt: h.lastFullScanAt ? new Date(Number(h.lastFullScanAt)) : null,
    };
  }

  async recordScan(source: string, full: boolean, newestFirst: boolean, at: Date): Promise<void> {
    const fields: Record<string, string> = { newestFirst: newestFirst ? '1' : '0' };
    if (full) fields.lastFullScanAt = String(at.getTime());
    await this.redis.hset(this.key(source), fields);
  }
}
