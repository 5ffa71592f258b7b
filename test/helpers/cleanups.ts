import { afterEach } from '@jest/globals';

/**
 * After each test: the cleanups a test deferred, newest first (workers before the runtimes they use),
 * then `last` (the test's harness). Returns the list to push cleanups onto.
 */
export function cleanupsAfterEach(last: () => Promise<void>): Array<() => Promise<unknown>> {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    await last();
  });
  return cleanups;
}
