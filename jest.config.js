/** Jest runs the TypeScript tests as ESM (got is ESM-only), through ts-jest, with `--experimental-vm-modules`. */
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: { '^.+\\.ts$': ['ts-jest', { useESM: true }] },
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  testTimeout: 60_000,
  // Two test files at a time, whatever the core count (jest's default on 2 cores is one): most of a file's
  // time is spent waiting on PostgreSQL, Redis, the simulator and child processes, and each file has its
  // own database and queue prefix. Not more: each file opens pools, and PostgreSQL's default allows 100
  // connections in all.
  maxWorkers: 2,
  reporters: ['default', '<rootDir>/test/helpers/summary-reporter.js'],
};
