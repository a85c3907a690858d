/**
 * The operator alert (issue 18): when a deficit appears on a rail or clears, a JSON body is POSTed
 * to `ALERT_WEBHOOK_URL`, signed like our webhooks: `X-Svcpay-Signature` is the hex HMAC-SHA256 of
 * the raw body under `ALERT_WEBHOOK_SECRET` (src/events/signature.ts), and the body carries the time
 * it was sent, so a receiver can refuse an old one replayed. One attempt, within a time limit: a
 * failure is logged, and the finding stays in the report, the gauge and the next alert.
 */
import { ConfigError } from '../config/config.js'
import { signBody } from '../events/signature.js'
import type { RailReconciliation } from './reconcile.js'

export interface AlertSettings {
  url: string
  secret: string
}

export function alertSettings(env: Record<string, string | undefined>): AlertSettings | undefined {
  const url = env.ALERT_WEBHOOK_URL
  if (!url) return undefined
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new ConfigError('ALERT_WEBHOOK_URL must be an http(s) URL')
  }
  if (!['http:', 'https:'].includes(parsed.protocol))
    throw new ConfigError('ALERT_WEBHOOK_URL must be an http(s) URL')
  const secret = env.ALERT_WEBHOOK_SECRET ?? ''
  if (secret.length < 16)
    throw new ConfigError('ALERT_WEBHOOK_SECRET (at least 16 characters) is required with ALERT_WEBHOOK_URL')
  return { url, secret }
}

export interface ReconciliationAlert {
  event:
    | 'reconciliation.deficit'
    | 'reconciliation.cleared'
    | 'reconciliation.orphans'
    | 'reconciliation.orphans_cleared'
  rail: string
  ccy: string
  /** The delta at this reading, exact decimal text (negative for a deficit). */
  delta: string | null
  ledger: string
  reported: string | null
  /** The rail's orphans at this reading (item matching). */
  orphans: number
  checkedAt: number
  sentAt: number
}

export async function sendAlert(
  settings: AlertSettings,
  findings: Array<{ event: ReconciliationAlert['event']; entry: RailReconciliation; orphans: number }>,
  checkedAt: number,
  opts: { timeoutMs: number; log: { warn(obj: object, msg: string): void } },
): Promise<void> {
  for (const { event, entry, orphans } of findings) {
    const body: ReconciliationAlert = {
      event,
      rail: entry.rail,
      ccy: entry.ccy,
      delta: entry.delta,
      ledger: entry.ledger,
      reported: entry.reported,
      orphans,
      checkedAt,
      sentAt: Date.now(),
    }
    const raw = JSON.stringify(body)
    try {
      const res = await fetch(settings.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-svcpay-signature': signBody(raw, settings.secret) },
        body: raw,
        signal: AbortSignal.timeout(opts.timeoutMs),
        redirect: 'error',
      })
      await res.body?.cancel()
      if (!res.ok)
        opts.log.warn({ status: res.status, event, rail: entry.rail }, 'the reconciliation alert was refused')
    } catch (err) {
      opts.log.warn(
        { error: (err as Error).message, event, rail: entry.rail },
        'the reconciliation alert could not be sent',
      )
    }
  }
}
