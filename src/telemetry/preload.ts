/**
 * Imported by bin/paysync.js before anything else, and only when the environment names an OTEL_*
 * variable (so with none, paysync loads no tracing code at all). Decides from the standard variables
 * (otel-settings.ts); when tracing is on, registers the ESM loader hook the instrumentations need (under
 * ESM, `pg` and `node:http` get spans only if the hook is in place before they are imported), then starts
 * the SDK. A variable paysync cannot honour stops it with one line naming it, exit 2.
 */
import { register } from 'node:module';
import { decideTracing, TracingSettingError, type TracingDecision } from './otel-settings.js';

let decision: TracingDecision;
try {
  decision = decideTracing(process.env);
} catch (error) {
  if (!(error instanceof TracingSettingError)) throw error;
  process.stderr.write(`paysync: ${error.message}\n`);
  process.exit(2);
}
if (decision.on) {
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url);
  const { startTracing } = await import('./otel.js');
  startTracing(decision.protocol);
}
