import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'exports/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  // The layout is the architecture: which folder may import which (jobs/ and the CLI on top, the
  // composition root src/runtime.ts, ops and reconcile, the sync core, its adapters, config, the ground
  // floor) is one table, checked with import cycles in `npm run lint` (scripts/check-layers.mjs).
);
