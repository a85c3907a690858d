#!/usr/bin/env node
// The installed `svcpay` command: runs the TypeScript command line through tsx.
import { register } from 'tsx/esm/api'

register()
await import('../src/cli/main.ts')
