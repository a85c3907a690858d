import { Redis } from 'ioredis'
import type { Logger } from 'pino'
import type { Config } from '../config/config.js'
import type { Metrics } from '../http/observability.js'
import { createRateLimiter, rateLimitConfigFromEnv, type RateLimiter } from '../http/rate-limit.js'

/**
 * The shared Redis connection (with REDIS_URL) and the rate limiter on it, with the gauge that says
 * whether the counters are shared. Without Redis, or while it is away, limits are per instance.
 */
export async function wireRateLimits(
  config: Config,
  metrics: Metrics,
  log: Logger,
): Promise<{ redis: Redis | undefined; rateLimiter: RateLimiter }> {
  const redis = config.redisUrl
    ? new Redis(config.redisUrl, {
        enableOfflineQueue: false,
        commandTimeout: 500,
        maxRetriesPerRequest: 1,
        lazyConnect: true,
      })
    : undefined
  const backendGauge = metrics.gauge(
    'svcpay_rate_limit_backend_redis',
    '1 while rate-limit counters are shared in Redis, 0 on per-instance memory',
  )
  const rateLimiter = createRateLimiter({
    redis,
    config: rateLimitConfigFromEnv(config.env),
    keyPrefix: config.env.RATE_LIMIT_REDIS_PREFIX || 'svcpay:rl',
    log,
    onBackendChange: (backend) => backendGauge.set(backend === 'redis' ? 1 : 0),
  })
  if (redis) {
    // The limiter has already asked the lazy client to connect; wait for that attempt rather than
    // start a second one (which ioredis refuses, and which then read as Redis being unreachable).
    const ready = await redisReady(redis, REDIS_START_WAIT_MS)
    backendGauge.set(ready ? 1 : 0)
    if (!ready) {
      log.warn(
        { redisStatus: redis.status },
        'Redis unreachable at start; limits are per instance until it returns',
      )
      // Once it answers, the gauge follows the limiter again (which switches back on its own).
      redis.once('ready', () => backendGauge.set(rateLimiter.backend() === 'redis' ? 1 : 0))
    }
  }
  return { redis, rateLimiter }
}

/** How long the start waits for Redis before serving on per-instance limits. */
const REDIS_START_WAIT_MS = 2_000

/** Resolves true once the client is ready; false at its first error or after `timeoutMs`. */
async function redisReady(redis: Redis, timeoutMs: number): Promise<boolean> {
  if (redis.status === 'ready') return true
  if (redis.status === 'wait') redis.connect().catch(() => undefined)
  return new Promise<boolean>((resolve) => {
    const done = (ready: boolean) => {
      clearTimeout(timer)
      redis.off('ready', onReady)
      redis.off('error', onError)
      resolve(ready)
    }
    const onReady = () => done(true)
    const onError = () => done(false)
    const timer = setTimeout(() => done(redis.status === 'ready'), timeoutMs)
    redis.once('ready', onReady)
    redis.once('error', onError)
  })
}
