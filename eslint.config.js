import js from '@eslint/js'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      'data/**',
      'dist/**',
      'test-artifacts/**',
      'bench/results/**',
      'packages/*/dist/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  {
    // Notifications go through Queryable.notify (src/db/db.ts), which alone knows how each engine
    // sends them after the commit; a NOTIFY written as SQL would bypass it.
    files: ['src/**/*.ts', 'bench/**/*.ts'],
    ignores: ['src/db/db.ts', '**/*.test.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector:
            'Literal[value=/pg_notify|\\bNOTIFY\\b/], TemplateElement[value.raw=/pg_notify|\\bNOTIFY\\b/]',
          message: 'Notify with q.notify(channel, payload) and a channel from src/events/channels.ts.',
        },
      ],
    },
  },
)
