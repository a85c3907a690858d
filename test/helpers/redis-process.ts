import { spawn, type ChildProcess } from 'node:child_process'
import { Redis } from 'ioredis'
import { freePort, sleep } from './service-process.js'

/**
 * A Redis server of the test's own on a free loopback port, so that a suite can stop and start it
 * without touching the shared one on 6379. Nothing is written to disk. Test code only.
 */
export interface RedisProcess {
  port: number
  url: string
  /** Starts it (again) on the same port; resolves once it answers PING. */
  start(): Promise<void>
  /** Stops it at once (SIGKILL): clients see the connection drop, as in a crash. */
  stop(): Promise<void>
}

export async function startRedisProcess(): Promise<RedisProcess> {
  const port = await freePort()
  let proc: ChildProcess | undefined
  let exited: Promise<unknown> = Promise.resolve()
  const handle: RedisProcess = {
    port,
    url: `redis://127.0.0.1:${port}`,
    async start() {
      proc = spawn(
        'redis-server',
        ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
        {
          stdio: 'ignore',
        },
      )
      const p = proc
      exited = new Promise((done) => p.on('exit', done))
      const probe = new Redis(handle.url, {
        lazyConnect: true,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
      })
      probe.on('error', () => {})
      try {
        for (const deadline = Date.now() + 15_000; ; await sleep(50)) {
          if (p.exitCode !== null) throw new Error(`redis-server exited with ${p.exitCode}`)
          const ok = await probe
            .connect()
            .then(() => probe.ping())
            .then(
              (r) => r === 'PONG',
              () => false,
            )
          if (ok) return
          probe.disconnect()
          if (Date.now() > deadline) throw new Error('redis-server did not start')
        }
      } finally {
        probe.disconnect()
      }
    },
    async stop() {
      if (proc && proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL')
      await exited
    },
  }
  await handle.start()
  return handle
}
