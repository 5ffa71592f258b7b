/**
 * The simulator's port under the `outage` switch: closed while it is `refused` (new connections get
 * ECONNREFUSED, open ones are cut), listening again on the same address after. Changes run one after
 * another; `settled()` resolves when the port follows the last one asked for.
 */
import type { Server } from 'node:http';

export class Listener {
  private open = true;
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly server: Server,
    private readonly host: string,
    private readonly port: number,
  ) {}

  follow(refused: boolean): void {
    this.chain = this.chain.catch(() => undefined).then(() => this.apply(!refused));
  }

  settled(): Promise<void> {
    return this.chain;
  }

  /** Closes the port for good (the simulator stops). */
  async close(): Promise<void> {
    await this.chain.catch(() => undefined);
    await this.apply(false);
  }

  private apply(open: boolean): Promise<void> {
    if (open === this.open) return Promise.resolve();
    this.open = open;
    return new Promise<void>((resolve, reject) => {
      if (open) {
        this.server.once('error', reject);
        this.server.listen(this.port, this.host, () => {
          this.server.off('error', reject);
          resolve();
        });
      } else {
        this.server.close((error) => (error ? reject(error) : resolve()));
        this.server.closeAllConnections();
      }
    });
  }
}
