import { describe, expect, it } from 'vitest'
import { limitsConfig } from '../config/limits.js'
import { loadConfig } from '../config/config.js'
import { serviceKinds } from '../wiring/kinds.js'
import { limitsConcern } from './gate.js'
import { refValue } from './engine.js'
import { parseRate } from '../shared/amount.js'

/** The limits' settings and which kinds they concern: no database. */
describe('limits settings', () => {
  it('reads tiers, methods, counts and hot-wallet caps, exact to the minor unit', () => {
    const c = limitsConfig({
      LIMITS_STANDARD_PER_TRANSACTION: '1000.01',
      LIMITS_STANDARD_DAILY_OUTGOING_ON_CHAIN: '5000',
      LIMITS_VIP_SENDS_PER_HOUR: '20',
      LIMITS_VIP_NEW_DESTINATION_COOLDOWN_S: '3600',
      HOT_WALLET_CAP_TRON_PER_HOUR: '10000.5',
    })
    expect(c.ccy).toBe('USD')
    expect(c.tiers.standard).toEqual({
      all: { per_transaction: 100_001n },
      byMethod: { ON_CHAIN: { daily_outgoing: 500_000n } },
    })
    expect(c.tiers.vip!.all).toEqual({ sends_per_hour: 20n, new_destination_cooldown: 3600n })
    expect(c.hotWalletCaps).toEqual({ tron: '10000.5' })
  })

  it('refuses a misspelt limit, too many decimals, an unknown rail or reference currency', () => {
    expect(() => limitsConfig({ LIMITS_STANDARD_DAILY: '1' })).toThrow(/LIMITS_<TIER>_<LIMIT>/)
    expect(() => limitsConfig({ LIMITS_STANDARD_PER_TRANSACTION: '1.001' })).toThrow(/at most 2 decimals/)
    expect(() => limitsConfig({ LIMITS_CCY: 'VND', LIMITS_STANDARD_PER_TRANSACTION: '1.5' })).toThrow(
      /at most 0/,
    )
    expect(() => limitsConfig({ HOT_WALLET_CAP_ETH_PER_HOUR: '1' })).toThrow(/no rail ETH/)
    expect(() => limitsConfig({ LIMITS_CCY: 'XYZ' })).toThrow(/LIMITS_CCY/)
    expect(() => loadConfig({ LIMITS_STANDARD_SENDS_PER_HOUR: 'many' })).toThrow(/SENDS_PER_HOUR/)
  })

  it('concerns sends and confirmed receives only when set, and never a swap or a deposit', () => {
    const kinds = serviceKinds()
    const concerned = (env: Record<string, string>) =>
      kinds.kinds.filter((k) => limitsConcern(limitsConfig(env), kinds.declaration(k)))
    expect(concerned({})).toEqual([])
    expect(concerned({ LIMITS_STANDARD_DAILY_OUTGOING: '1' })).toEqual(
      kinds.kindsWith((d) => d.direction === 'out'),
    )
    const both = concerned({ LIMITS_STANDARD_DAILY_OUTGOING: '1', LIMITS_STANDARD_DAILY_INCOMING: '1' })
    expect(both).not.toContain('swap')
    expect(both).not.toContain('deposit')
    expect(both).toContain('ln_receive')
  })

  it('values an amount in the reference currency rounded up to its minor unit', () => {
    const usd = parseRate('95000')
    const usdt = parseRate('95010')
    // 1.0001 USDT = 0.99999473... USD -> 1.00; 1.0002 USDT = 1.0000947... USD -> 1.01
    expect(refValue(1_000_100n, 'USDT', 'USD', usdt, usd)).toBe(100n)
    expect(refValue(1_000_200n, 'USDT', 'USD', usdt, usd)).toBe(101n)
    // 0.001 BTC at 95000 USD is exactly 95.00.
    expect(refValue(100_000n, 'BTC', 'USD', parseRate('1'), usd)).toBe(9500n)
    expect(refValue(123n, 'USD', 'USD', usd, usd)).toBe(123n)
  })
})
