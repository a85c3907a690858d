import type { Queryable } from '../db/db.js'
import type { LimitsConfig } from '../config/limits.js'
import type { Metrics } from '../http/observability.js'
import type { RateSnapshot, RatesService } from '../rates/service.js'
import { ApiError } from '../shared/errors.js'
import { PASS, type ConfirmGate } from '../transactions/gates.js'
import type { KindDeclaration, KindRegistry } from '../transactions/kinds.js'
import type { NewTxn, Txn } from '../transactions/txn.js'
import { destinationOf } from './destinations.js'
import { checkLimits, refValue } from './engine.js'
import { lockAccountLimits, markCounted, quotedUsage, writeQuoted, type UsageRow } from './repository.js'

export interface LimitsGateDeps {
  config: LimitsConfig
  kinds: Pick<KindRegistry, 'declaration'>
  rates: Pick<RatesService, 'current'>
  metrics?: Pick<Metrics, 'counter'>
}

/** Whether any tier sets a limit of `direction` (an outgoing one: also velocity and the cool-down). */
function anyLimit(config: LimitsConfig, direction: 'in' | 'out'): boolean {
  const names =
    direction === 'out'
      ? [
          'per_transaction',
          'daily_outgoing',
          'monthly_outgoing',
          'sends_per_hour',
          'new_destination_cooldown',
        ]
      : ['daily_incoming', 'monthly_incoming']
  return Object.values(config.tiers).some((t) =>
    [t.all, ...Object.values(t.byMethod)].some((set) => names.some((n) => n in set)),
  )
}

/**
 * Which kinds the limits concern, from the kind registry: every send (direction 'out' with a rail)
 * while any outgoing limit, a hot-wallet cap or LIMITS_ENABLED is set; every receive a customer
 * confirms (direction 'in', with method pairs) while an incoming cap is set. Never a swap ('internal'),
 * which keeps its one-statement confirm, nor a kind the service creates itself (a deposit).
 */
export function limitsConcern(config: LimitsConfig, d: KindDeclaration): boolean {
  if (d.rail === null || d.pairs.length === 0) return false
  if (d.direction === 'out')
    return config.enabled || anyLimit(config, 'out') || Object.keys(config.hotWalletCaps).length > 0
  if (d.direction === 'in') return anyLimit(config, 'in')
  return false
}

/**
 * The limits as a confirm gate of the engine (src/transactions/gates.ts). At quote it works out what
 * the quote will count (its value in LIMITS_CCY at the quote's rates, the amount leaving its rail,
 * its destination), refuses it if it would already go over a limit (informative: nothing is
 * locked), and writes that down. At confirm, inside the confirm's database transaction and under a
 * lock that serialises the account's confirms, it checks again (binding) and counts the
 * transaction from that moment. The hold follows in the same transaction, so no number of parallel
 * confirms on any number of instances passes a limit.
 */
export function limitsGate(deps: LimitsGateDeps): ConfirmGate {
  const { config, kinds } = deps
  const refusals = deps.metrics?.counter(
    'svcpay_limit_refusals_total',
    'Quotes and confirms refused by a limit, by limit and stage',
    ['limit', 'stage'],
  )
  const counted = (stage: 'quote' | 'confirm') => (err: unknown) => {
    if (err instanceof ApiError && err.code === 'limit_exceeded')
      refusals?.inc({ limit: err.details?.[0]?.limit ?? 'unknown', stage })
    throw err
  }

  /** What `txn` counts, at the rates of `rates`. */
  function usageOf(txn: NewTxn | Txn, rates: RateSnapshot, at: number): UsageRow | undefined {
    const d = kinds.declaration(txn.kind)
    if (d.direction !== 'in' && d.direction !== 'out') return undefined
    const refPerBtc = rates.rates.get(config.ccy)
    const destPerBtc = rates.rates.get(txn.destCcy)
    if (!refPerBtc || !destPerBtc)
      throw new ApiError('rate_unavailable', `No rate for ${txn.destCcy} in ${config.ccy}`)
    const destination = d.direction === 'out' ? destinationOf(txn) : undefined
    return {
      txnId: txn.id,
      accountId: txn.accountId,
      direction: d.direction,
      method: d.direction === 'out' ? txn.destMethod : txn.srcMethod,
      rail: d.rail,
      refCcy: config.ccy,
      refMinor: refValue(txn.destAmountMinor, txn.destCcy, config.ccy, destPerBtc, refPerBtc),
      railMinor: txn.destAmountMinor,
      destination: destination ?? null,
      quotedAt: at,
    }
  }

  const candidate = (u: UsageRow) => ({
    txnId: u.txnId,
    accountId: u.accountId,
    direction: u.direction,
    method: u.method,
    refMinor: u.refMinor,
    destination: u.destination ?? undefined,
  })

  return {
    name: 'limits',
    concerns: (kind) => limitsConcern(config, kinds.declaration(kind)),
    async atQuote(q: Queryable, quote: NewTxn, rates: RateSnapshot) {
      const usage = usageOf(quote, rates, quote.createdAtMs)
      if (!usage) return undefined
      await checkLimits(q, config, candidate(usage), quote.createdAtMs, 'quote').catch(counted('quote'))
      await writeQuoted(q, usage)
      return undefined
    },
    async atConfirm(q, txn, at) {
      await lockAccountLimits(q, txn.accountId)
      // A quote written before the limits were on (or by an older version) is valued now.
      let usage = await quotedUsage(q, txn.id)
      if (!usage || usage.refCcy !== config.ccy) {
        usage = usageOf(txn, await deps.rates.current(), txn.createdAtMs)
        if (!usage) return PASS
        await writeQuoted(q, usage)
      }
      await checkLimits(q, config, candidate(usage), at, 'confirm').catch(counted('confirm'))
      await markCounted(q, txn.id, at)
      return PASS
    },
  }
}
