/* global fetch, AbortSignal */
// The image's HEALTHCHECK: exit 0 when the URL answers 200 within 4 s, else 1 with the reason on stderr.
// Default URL: the worker's /healthz on METRICS_PORT (its readiness: Redis and PostgreSQL reachable,
// migrations applied, taking jobs; /livez is the liveness probe).
// No curl in node:*-slim, and Node 20 has fetch: this file needs nothing else.
const port = process.env.METRICS_PORT;
const url = process.argv[2] ?? (port ? `http://127.0.0.1:${port}/healthz` : undefined);
if (!url) {
  console.error('healthcheck: METRICS_PORT is not set, so there is no /healthz to check');
  process.exit(1);
}
try {
  const res = await fetch(url, { signal: AbortSignal.timeout(4_000) });
  if (res.status !== 200) {
    console.error(`healthcheck: ${url} answered ${res.status}: ${(await res.text()).slice(0, 500)}`);
    process.exit(1);
  }
} catch (error) {
  console.error(`healthcheck: ${url} did not answer: ${error.message}`);
  process.exit(1);
}
