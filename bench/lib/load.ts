import { join } from 'node:path'
import { baseEnv, exited, spawnTs, tail } from './proc.js'
import type { LoadResult, LoadSpec } from './load-spec.js'

/** Runs the load client in its own process and returns what it measured. */
export async function runLoad(spec: LoadSpec, logDir: string): Promise<LoadResult> {
  const logFile = join(logDir, 'load-client.log')
  const child = spawnTs('bench/load-client.ts', {
    env: baseEnv(),
    logFile,
    args: [JSON.stringify(spec)],
    stdout: 'pipe',
  })
  let out = ''
  child.stdout!.on('data', (d) => (out += d))
  const code = await exited(child)
  const line = out.trim().split('\n').pop() ?? ''
  if (code !== 0 || !line.startsWith('{'))
    throw new Error(`load client failed (exit ${code}):\n${tail(logFile)}`)
  return JSON.parse(line) as LoadResult
}
