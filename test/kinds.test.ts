import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { KIND_DECLARATIONS, serviceKinds } from '../src/wiring/kinds.js'
import { checkKinds } from '../src/transactions/kinds.js'

/**
 * The kinds this service declares (src/wiring/kinds.ts): each complete, and the tables the engine and its
 * neighbours kept before the registry (kind.ts, stuck.ts, amount-limits.ts, approvals/policy.ts,
 * reconcile/refs.ts and brake.ts, repository.ts) derived from them unchanged.
 */

const MIGRATIONS = resolve(dirname(fileURLToPath(import.meta.url)), '../src/db/migrations')
const migrationsText = readdirSync(MIGRATIONS)
  .filter((f) => f.endsWith('.sql'))
  .map((f) => readFileSync(join(MIGRATIONS, f), 'utf8'))
  .join('\n')

const kinds = serviceKinds()

describe("the service's kinds", () => {
  it('declares every kind the service serves, each complete (checked as the container does at start)', () => {
    expect(() => checkKinds(KIND_DECLARATIONS)).not.toThrow()
    expect([...kinds.kinds].sort()).toEqual(
      [
        'deposit',
        'eth_payout',
        'ln_receive',
        'ln_send',
        'onchain_receive',
        'onchain_send',
        'payout_return',
        'swap',
        'tron_payout',
        'vnd_payout',
        'vnd_receive',
      ].sort(),
    )
  })

  it('derives the tables the scattered modules kept', () => {
    expect(kinds.railCurrencies).toEqual([
      { rail: 'lightning', ccy: 'BTC', kind: 'ln_send', leaves: 'hold-less-fee' },
      { rail: 'onchain', ccy: 'BTC', kind: 'onchain_send', leaves: 'hold-less-fee' },
      { rail: 'tron', ccy: 'USDT', kind: 'tron_payout', leaves: 'destination' },
      { rail: 'bank', ccy: 'VND', kind: 'vnd_payout', leaves: 'destination' },
      { rail: 'ethereum', ccy: 'USDT', kind: 'eth_payout', leaves: 'destination' },
    ])
    expect(kinds.kindsWith((d) => d.approval)).toEqual([
      'ln_send',
      'onchain_send',
      'tron_payout',
      'vnd_payout',
      'eth_payout',
    ])
    expect(kinds.kindsWith((d) => d.caps.receiveMax)).toEqual(['ln_receive', 'onchain_receive'])
    expect(kinds.kindsWith((d) => d.caps.bitcoinSupply)).toEqual(['ln_send', 'onchain_send'])
    expect(kinds.confirmationWaits).toEqual([
      { kind: 'onchain_receive', state: 'srccreated' },
      { kind: 'onchain_send', state: 'destsent' },
      { kind: 'deposit', state: 'srccreated' },
    ])
    expect(kinds.payerWaits).toEqual([
      { kind: 'ln_receive', state: 'srccreated' },
      { kind: 'onchain_receive', state: 'srcintent' },
    ])
    expect(Object.fromEntries(kinds.kindsWith((d) => d.stuckWatch).map((k) => [k, kinds.railOf(k)]))).toEqual(
      {
        ln_receive: 'lightning',
        ln_send: 'lightning',
        onchain_receive: 'onchain',
        onchain_send: 'onchain',
        deposit: 'onchain',
        tron_payout: 'tron',
        vnd_payout: 'bank',
        eth_payout: 'ethereum',
      },
    )
    expect(
      ['lightning', 'on-chain', 'tron', 'vnd-instant', 'svcpay', 'eth'].map(kinds.railOfDestination),
    ).toEqual(['lightning', 'onchain', 'tron', 'bank', undefined, 'ethereum'])
    expect(kinds.kinds.map(kinds.railOfSend).filter(Boolean)).toEqual([
      'lightning',
      'onchain',
      'tron',
      'bank',
      'ethereum',
    ])
  })

  it('agrees with the SQL that names a kind as text: the left-chain index of on-chain sends', () => {
    // stuck.ts writes this predicate out (the planner needs the literal to use the partial index).
    expect(migrationsText).toContain(
      "WHERE kind = 'onchain_send' AND state = 'completed' AND (dest_details->>'leftChainAt') IS NOT NULL",
    )
    const send = kinds.declaration('onchain_send')
    expect([send.rail, send.direction, send.transitions.destsent]).toEqual([
      'onchain',
      'out',
      ['completed', 'failed', 'error'],
    ])
  })

  it('declares every kind a CHECK constraint of the migrations allows (there is none on transactions.kind yet)', () => {
    // The table's definition, and any constraint added to it later, that names the kind column.
    const table = /CREATE TABLE transactions \(([\s\S]*?)\n\);/.exec(migrationsText)![1]!
    const added = [...migrationsText.matchAll(/ALTER TABLE transactions[^;]*CHECK \(kind IN \(([^)]*)\)/g)]
    const checks = [
      ...table.split('\n').filter((line) => /^\s*kind\s/.test(line)),
      ...added.map((m) => m[1]!),
    ]
    const listed = checks.flatMap((text) => [...text.matchAll(/'(\w+)'/g)].map((m) => m[1]!))
    for (const kind of listed) expect(kinds.kinds, kind).toContain(kind)
  })
})
