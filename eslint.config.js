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
  // The layout is the architecture: src/ holds the use cases and adapters, jobs/ only wires them to
  // BullMQ, and the CLI is the composition root that may use both. Import cycles are checked beside this
  // (scripts/check-import-cycles.mjs, in `npm run lint`).
  {
    files: ['src/**/*.ts'],
    ignores: ['src/cli/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/jobs/*'],
              message:
                'only the CLI (src/cli, the composition root) imports jobs/: take what you need as data or a parameter',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['jobs/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/cli/*'], message: 'jobs/ wires src/ use cases to BullMQ; it never uses the CLI' },
          ],
        },
      ],
    },
  },
);
