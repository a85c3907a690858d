import type { ProviderSettings } from './provider.js'
import type { ScreeningSettings } from './service.js'

/**
 * Screening's settings, read once at start from the environment (docs/screening.md,
 * docs/configuration.md): a value that is not one of the choices stops the service.
 */
export interface ScreeningConfig extends ScreeningSettings {
  provider: Omit<ProviderSettings, 'resolveHost'> | undefined
}

const TIMEOUT_MS_DEFAULT = 2_000
const TIMEOUT_MS_MAX = 30_000

export function screeningConfigFromEnv(env: Record<string, string | undefined>): ScreeningConfig {
  const choice = (name: string): 'refuse' | 'review' => {
    const raw = (env[name] ?? '').trim() || 'refuse'
    if (raw !== 'refuse' && raw !== 'review') throw new Error(`${name} must be refuse or review, not ${raw}`)
    return raw
  }
  const url = (env.SCREENING_URL ?? '').trim()
  let provider: ScreeningConfig['provider']
  if (url) {
    let parsed: URL
    try {
      parsed = new URL(url)
    } catch {
      throw new Error('SCREENING_URL is not a URL')
    }
    const allowPrivate = /^(1|true|yes)$/i.test(env.SCREENING_ALLOW_PRIVATE ?? '')
    if (parsed.protocol !== 'https:' && !(parsed.protocol === 'http:' && allowPrivate))
      throw new Error(
        'SCREENING_URL must be https (http only with SCREENING_ALLOW_PRIVATE, for a provider beside the service)',
      )
    if (parsed.username || parsed.password)
      throw new Error('SCREENING_URL must not carry credentials; use SCREENING_API_KEY')
    const rawTimeout = (env.SCREENING_TIMEOUT_MS ?? '').trim()
    const timeoutMs = rawTimeout === '' ? TIMEOUT_MS_DEFAULT : Number(rawTimeout)
    if (!Number.isInteger(timeoutMs) || timeoutMs < 50 || timeoutMs > TIMEOUT_MS_MAX)
      throw new Error(`SCREENING_TIMEOUT_MS must be a whole number from 50 to ${TIMEOUT_MS_MAX}`)
    provider = { url: parsed.href, apiKey: env.SCREENING_API_KEY ?? '', timeoutMs, allowPrivate }
  }
  return { onHit: choice('SCREENING_ON_HIT'), onError: choice('SCREENING_ON_ERROR'), provider }
}
