import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  resolve: {
    // Inside the repository the SDK runs from its TypeScript sources (the `svcpay-source` export
    // condition, as tsconfig.json's customConditions); its package.json exports built files.
    alias: [
      {
        find: /^@svcpay\/sdk$/,
        replacement: fileURLToPath(new URL('./packages/sdk/src/index.ts', import.meta.url)),
      },
    ],
  },
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default'],
  },
})
