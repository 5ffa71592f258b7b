/** Removes the benchmark's throw-away database. */
import pg from 'pg';
import { databaseName, maintenanceUrl } from '../src/warehouse/migrate.js';

export async function dropBenchDatabase(url: string): Promise<void> {
  const admin = new pg.Client({ connectionString: maintenanceUrl(url) });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${admin.escapeIdentifier(databaseName(url))} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}
