/**
 * The `.env` file of the working directory: a convenience for paysync's own settings, never a way to
 * send a key elsewhere. A working directory is often writable by more people than the environment of a
 * service manager or a Kubernetes Secret, so `.env` is trusted less than the environment:
 *
 * - the environment wins: a setting set there is never replaced by `.env`;
 * - a key and the address it is sent to come from the same place: while the environment holds an API
 *   key (PAYMENTS_API_KEY, or a variable a sources file names as `apiKeyEnv`), a `.env` that brings
 *   PAYMENTS_BASE_URL, PAYSYNC_SOURCES_FILE or PAYMENTS_ALLOW_HTTP is refused (exit 2, one line naming
 *   the setting). A `.env` holding both the key and the address (a developer's machine) is fine;
 * - only paysync's settings and the key variables the sources file names are taken from it. Anything
 *   else a `.env` holds (NODE_TLS_REJECT_UNAUTHORIZED=0, which Node reads at each TLS connection and
 *   would let anyone on the path read the key; proxies; NODE_OPTIONS) never reaches the process.
 */
import { readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { ConfigError } from '../errors.js';

/** Settings that decide where, and how, a key is sent. */
export const ADDRESS_SETTINGS = ['PAYMENTS_BASE_URL', 'PAYSYNC_SOURCES_FILE', 'PAYMENTS_ALLOW_HTTP'] as const;

/** The variables of a `.env` file, or null when there is none. */
export function readDotenv(path: string): Record<string, string> | null {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new ConfigError(`.env could not be read: ${(error as Error).message}`);
  }
  const values: Record<string, string> = {};
  for (const [name, value] of Object.entries(parseEnv(text))) if (value !== undefined) values[name] = value;
  return values;
}

/** The `apiKeyEnv` names a sources file lists (unreadable or malformed: none; the settings report it). */
function keyVariablesOf(path: string | undefined): string[] {
  if (!path) return [];
  try {
    const parsed: unknown = JSON.parse(readFileSync(path, 'utf8'));
    if (!Array.isArray(parsed)) return [];
    return parsed.flatMap((entry: unknown) => {
      const name = (entry as { apiKeyEnv?: unknown } | null)?.apiKeyEnv;
      return typeof name === 'string' && name !== '' ? [name] : [];
    });
  } catch {
    return [];
  }
}

/**
 * Copies into `env` the values of `file` (a `.env`) for `settings` and for the key variables, where
 * `env` has none; refuses a `.env` that would choose where a key from the environment is sent.
 */
export function applyDotenv(
  env: NodeJS.ProcessEnv,
  file: Readonly<Record<string, string>>,
  settings: readonly string[],
): void {
  const present = (name: string) => env[name] !== undefined && env[name] !== '';
  const brought = (name: string) => !present(name) && (file[name] ?? '') !== '';
  const sourcesFile = present('PAYSYNC_SOURCES_FILE') ? env.PAYSYNC_SOURCES_FILE : file.PAYSYNC_SOURCES_FILE;
  const keyVariables = ['PAYMENTS_API_KEY', ...keyVariablesOf(sourcesFile)];
  const keyInEnv = keyVariables.find(present);
  const redirect = ADDRESS_SETTINGS.find(brought);
  if (keyInEnv !== undefined && redirect !== undefined) {
    throw new ConfigError(
      `${redirect} comes from .env while the API key ${keyInEnv} comes from the environment: a .env ` +
        `cannot choose where that key is sent; set ${redirect} in the environment, or remove it from .env`,
    );
  }
  for (const name of new Set([...settings, ...keyVariables])) if (brought(name)) env[name] = file[name];
}
