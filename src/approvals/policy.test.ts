import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../config/config.js'
import { approvalReasons as reasons } from './policy.js'
import { reqStatuses } from '../transactions/txn.js'
import { serviceKinds } from '../wiring/kinds.js'
import { canTransition as canTransitionIn } from '../transactions/repository.js'
import type { TxnState } from '../transactions/state-machine.js'

const kinds = serviceKinds()
const canTransition = (kind: string, from: TxnState, to: TxnState) =>
  canTransitionIn(kinds.transitions, kind, from, to)
/** The reasons, with the approval rule of the transaction's kind as declared. */
const approvalReasons = (txn: Parameters<typeof reasons>[1], t: Parameters<typeof reasons>[2]) =>
  reasons(kinds.declaration(txn.kind), txn, t)

const thresholds = (env: Record<string, string>) => loadConfig(env).approvalThresholds

describe('approval thresholds (APPROVAL_THRESHOLD_<CCY>)', () => {
  it('reads exact decimal text into minor units, and none by default', () => {
    expect(thresholds({})).toEqual({})
    expect(
      thresholds({
        APPROVAL_THRESHOLD_BTC: '0.5',
        APPROVAL_THRESHOLD_USDT: '10000.000001',
        APPROVAL_THRESHOLD_VND: '50000000',
        APPROVAL_THRESHOLD_USD: '0',
        APPROVAL_THRESHOLD_CAD: '',
      }),
    ).toEqual({ BTC: 50_000_000n, USDT: 10_000_000_001n, VND: 50_000_000n, USD: 0n })
    // Far beyond a float's exact integers, still exact.
    expect(thresholds({ APPROVAL_THRESHOLD_USDT: '123456789012.123456' }).USDT).toBe(123_456_789_012_123_456n)
  })

  it('refuses a threshold that is not an exact amount of a known currency', () => {
    for (const [name, text] of [
      ['APPROVAL_THRESHOLD_VND', '1000.5'],
      // Thousands separators are not decimals: "1000.000" dong is refused, never read as 1000.
      ['APPROVAL_THRESHOLD_VND', '1000.000'],
      ['APPROVAL_THRESHOLD_BTC', '0.100000000'],
      ['APPROVAL_THRESHOLD_BTC', '0.000000001'],
      ['APPROVAL_THRESHOLD_USDT', '1e6'],
      ['APPROVAL_THRESHOLD_USDT', '-5'],
      ['APPROVAL_THRESHOLD_USDT', ' 5'],
      ['APPROVAL_THRESHOLD_XYZ', '5'],
    ])
      expect(() => loadConfig({ [name!]: text! }), `${name}=${text}`).toThrow(ConfigError)
  })

  it('reads APPROVAL_TTL_S within its bounds', () => {
    expect(loadConfig({}).approvalTtlS).toBe(86_400)
    expect(loadConfig({ APPROVAL_TTL_S: '600' }).approvalTtlS).toBe(600)
    expect(() => loadConfig({ APPROVAL_TTL_S: '5' })).toThrow(/APPROVAL_TTL_S/)
  })
})

describe('which sends wait for approval', () => {
  const t = { USDT: 100_000_000n, VND: 5_000_000n, BTC: 100_000n }
  const txn = (kind: any, src: [string, bigint], dest: [string, bigint]) => ({
    kind,
    srcCcy: src[0],
    srcAmountMinor: src[1],
    destCcy: dest[0],
    destAmountMinor: dest[1],
  })

  it('waits strictly above the threshold of either side', () => {
    expect(approvalReasons(txn('tron_payout', ['USDT', 100_000_000n], ['USDT', 100_000_000n]), t)).toEqual([])
    expect(approvalReasons(txn('tron_payout', ['USDT', 100_000_001n], ['USDT', 100_000_001n]), t)).toEqual([
      { side: 'source', ccy: 'USDT', amount: '100.000001', threshold: '100' },
    ])
    // A VND payout from BTC: caught by what leaves (VND) and by what the wallet pays (BTC).
    expect(approvalReasons(txn('vnd_payout', ['BTC', 50_000n], ['VND', 6_000_000n]), t)).toEqual([
      { side: 'destination', ccy: 'VND', amount: '6000000', threshold: '5000000' },
    ])
    expect(approvalReasons(txn('vnd_payout', ['BTC', 200_000n], ['VND', 6_000_000n]), t)).toHaveLength(2)
    expect(approvalReasons(txn('onchain_send', ['BTC', 100_001n], ['BTC', 100_001n]), t)).toHaveLength(1)
    // A Lightning send is held by the same BTC threshold (issue 31: one rule for every rail).
    expect(approvalReasons(txn('ln_send', ['BTC', 100_001n], ['BTC', 100_001n]), t)).toHaveLength(1)
  })

  it('never holds other kinds, nor currencies without a threshold', () => {
    expect(approvalReasons(txn('swap', ['BTC', 10n ** 12n], ['USD', 10n ** 12n]), t)).toEqual([])
    expect(approvalReasons(txn('tron_payout', ['USDT', 10n ** 15n], ['USDT', 10n ** 15n]), {})).toEqual([])
  })

  it('fits processing into the state machine between confirm and the send', () => {
    for (const kind of ['onchain_send', 'tron_payout', 'vnd_payout'] as const) {
      expect(canTransition(kind, 'quoted', 'processing')).toBe(true)
      expect(canTransition(kind, 'processing', 'srccreated')).toBe(true)
      expect(canTransition(kind, 'processing', 'rejected')).toBe(true)
      expect(canTransition(kind, 'processing', 'destsent')).toBe(false)
      expect(canTransition(kind, 'processing', 'completed')).toBe(false)
    }
    // A Lightning send waits there too (issue 31), and an approval may settle an invoice of ours at once.
    expect(canTransition('ln_send', 'quoted', 'processing')).toBe(true)
    expect(canTransition('ln_send', 'processing', 'completed')).toBe(true)
    expect(canTransition('swap', 'quoted', 'processing')).toBe(false)
    expect(reqStatuses('processing')).toEqual({ src: '1', dest: '0' })
  })
})
