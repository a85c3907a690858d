#!/usr/bin/env node
// The installed `svcpay` command. `svcpay serve` runs the compiled server (`npm run build` makes
// dist/) without loading tsx at all; every other command runs the TypeScript command line through
// tsx.
import { existsSync } from 'node:fs'
import process from 'node:process'
import { URL } from 'node:url'

const compiled = new URL('../dist/src/cli/main.js', import.meta.url)
if (process.argv[2] === 'serve' && existsSync(compiled)) {
  await import(compiled.href)
} else {
  const { register } = await import('tsx/esm/api')
  register()
  await import('../src/cli/main.ts')
}
