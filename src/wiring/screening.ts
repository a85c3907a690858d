import type { Db } from '../db/db.js'
import type { ResolveHost } from '../events/outbound-guard.js'
import { httpScreeningProvider } from '../screening/provider.js'
import { createScreeningService, type ScreeningMetrics, type ScreeningService } from '../screening/service.js'
import { screeningConfigFromEnv } from '../screening/settings.js'
import type { KindRegistry } from '../transactions/kinds.js'

/**
 * Screening (src/screening, docs/screening.md): its settings from the environment, the HTTP
 * provider when SCREENING_URL is set, and the service whose gate, review check and deposit check
 * the container hands to the engine, the approval gate and the deposit watcher.
 */
export function wireScreening(deps: {
  env: Record<string, string | undefined>
  db: Db
  kinds: KindRegistry
  metrics: ScreeningMetrics
  log: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void }
  resolveHost?: ResolveHost | undefined
}): ScreeningService {
  const settings = screeningConfigFromEnv(deps.env)
  const provider = settings.provider
    ? httpScreeningProvider({ ...settings.provider, resolveHost: deps.resolveHost })
    : undefined
  return createScreeningService({
    db: deps.db,
    kinds: deps.kinds,
    settings,
    provider,
    metrics: deps.metrics,
    log: deps.log,
  })
}
