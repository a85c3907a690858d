import { loadConfig, ConfigError } from './config/config.js'
import { operatorsConfigFromEnv } from './operators/service.js'
import { adminToken, masterKey, previousMasterKeys } from './config/local-secrets.js'
import { rateLimitConfigFromEnv } from './http/rate-limit.js'
import { createContainer } from './container.js'
import { buildApp } from './app.js'
import { createLogger } from './logger.js'
import { firstRunWelcome } from './welcome.js'
import { startWorkers } from './worker.js'
import { describeStartFailure, type StartPhase } from './startup-errors.js'
import type { Config } from './config/config.js'

/** Starts the process: config -> database -> app -> workers, and stops them on SIGTERM/SIGINT. */
async function main(): Promise<void> {
  let config: Config
  try {
    config = loadConfig()
    // Settings read by other modules are checked here too, so every bad value fails before start.
    rateLimitConfigFromEnv(config.env)
    operatorsConfigFromEnv(config.env)
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`svcpay: configuration error: ${err.message}`)
      process.exit(2)
    }
    throw err
  }
  // Each phase's failure is told with the setting it depends on (src/startup-errors.ts).
  const phase = async <T>(name: StartPhase, fn: () => T | Promise<T>): Promise<T> => {
    try {
      return await fn()
    } catch (err) {
      const failure = describeStartFailure(err, name, config)
      console.error(`svcpay: ${failure.message}`)
      process.exit(failure.exitCode)
    }
  }
  await phase('local-secrets', () => {
    masterKey(config)
    previousMasterKeys(config)
    adminToken(config)
  })
  const log = createLogger(config.logLevel)
  const c = await phase('database', () => createContainer(config, log))
  const app = config.role === 'worker' ? undefined : await buildApp(c)
  const workers = config.role === 'api' ? undefined : startWorkers(c)
  if (app) await phase('listen', () => app.listen({ port: config.port, host: config.host }))
  if (app) await firstRunWelcome(c)

  let stopping = false
  const stop = async (signal: string) => {
    if (stopping) return
    stopping = true
    log.info({ signal }, 'shutting down')
    const force = setTimeout(() => process.exit(1), 10_000).unref()
    await app?.close()
    await workers?.stop()
    await c.close()
    clearTimeout(force)
    process.exit(0)
  }
  process.on('SIGTERM', () => void stop('SIGTERM'))
  process.on('SIGINT', () => void stop('SIGINT'))
}

main().catch((err) => {
  console.error('svcpay: failed to start:', err instanceof Error ? err.message : err)
  process.exit(1)
})
