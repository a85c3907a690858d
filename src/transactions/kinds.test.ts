import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { ANNOUNCED_METHODS, KIND_DECLARATIONS, serviceKinds } from '../kinds.js'
import { checkKinds, createKindRegistry, type KindDeclaration } from './kinds.js'

/** The kind registry: every declared kind is complete, and an incomplete or clashing one is refused. */

const MIGRATIONS = resolve(dirname(fileURLToPath(import.meta.url)), '../db/migrations')
const migrationsText = readdirSync(MIGRATIONS)
  .filter((f) => f.endsWith('.sql'))
  .map((f) => readFileSync(join(MIGRATIONS, f), 'utf8'))
  .join('\n')

const kinds = serviceKinds()
const scratch: KindDeclaration = {
  kind: 'scratch_payout',
  pairs: [
    {
      source: { method: 'svcpay', ccys: ['USD'], wallet: true },
      dest: { method: 'scratch', ccys: ['USD'], wallet: false },
    },
  ],
  transitions: { quoted: ['completed', 'expired', 'usercanceled', 'failed'] },
  rail: 'bank',
  direction: 'out',
  caps: { receiveMax: false, bitcoinSupply: false },
  destAmountFrom: null,
  approval: false,
  confirmationWaits: [],
  stuckWatch: true,
  payerWaits: [],
  reconcile: null,
}

describe('the kind registry', () => {
  it('declares every kind the service serves, each complete (checked as the container does at start)', () => {
    expect(() => checkKinds(KIND_DECLARATIONS)).not.toThrow()
    expect([...kinds.kinds].sort()).toEqual(
      [
        'deposit',
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

  it('refuses a declaration with a missing fact', () => {
    for (const fact of Object.keys(scratch) as Array<keyof KindDeclaration>) {
      const { [fact]: _left, ...rest } = scratch
      expect(() => createKindRegistry([...KIND_DECLARATIONS, rest as KindDeclaration]), fact).toThrow(
        fact === 'kind' ? /kind/ : new RegExp(`does not declare its ${fact}`),
      )
    }
  })

  it('refuses a duplicate kind, a duplicate method pair and contradictory facts', () => {
    const swap = kinds.declaration('swap')
    expect(() => createKindRegistry([...KIND_DECLARATIONS, { ...scratch, kind: 'swap' }])).toThrow(
      /swap is declared twice/,
    )
    expect(() => createKindRegistry([...KIND_DECLARATIONS, { ...scratch, pairs: swap.pairs }])).toThrow(
      /method pair svcpay>svcpay is declared by both swap and scratch_payout/,
    )
    expect(() => createKindRegistry([{ ...scratch, approval: true }])).toThrow(/processing/)
    expect(() => createKindRegistry([{ ...scratch, payerWaits: ['srccreated'] }])).toThrow(/never waits/)
    expect(() => createKindRegistry([{ ...scratch, transitions: { quoted: ['sent' as never] } }])).toThrow(
      /no state sent/,
    )
    expect(() =>
      createKindRegistry([...KIND_DECLARATIONS, { ...scratch, reconcile: { ccy: 'VND' } }]),
    ).toThrow(/rail bank is reconciled by both vnd_payout and scratch_payout/)
    expect(() => createKindRegistry([{ ...scratch, rail: null }])).toThrow(
      /watched when stuck but has no rail/,
    )
  })

  it('serves a new kind from its declaration alone: its pair, transitions and rail', () => {
    const more = createKindRegistry([...KIND_DECLARATIONS, scratch], ANNOUNCED_METHODS)
    const input = {
      accountId: 'acc_x',
      deductNetworkFeesFromDest: false,
      sourceReq: { method: 'svcpay', ccy: 'USD' },
      destReq: { method: 'scratch', ccy: 'USD' },
    }
    expect(more.kindFor(input, ['BTC', 'USD'])).toBe('scratch_payout')
    expect(more.canTransition('scratch_payout', 'quoted', 'completed')).toBe(true)
    expect(more.railOfSend('scratch_payout')).toBe('bank')
    expect(more.railOfDestination('scratch')).toBe('bank')
  })

  it('derives the tables the scattered modules kept', () => {
    expect(kinds.railCurrencies).toEqual([
      { rail: 'lightning', ccy: 'BTC', kind: 'ln_send' },
      { rail: 'onchain', ccy: 'BTC', kind: 'onchain_send' },
      { rail: 'tron', ccy: 'USDT', kind: 'tron_payout' },
      { rail: 'bank', ccy: 'VND', kind: 'vnd_payout' },
    ])
    expect(kinds.kindsWith((d) => d.approval)).toEqual(['onchain_send', 'tron_payout', 'vnd_payout'])
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
      },
    )
    expect(
      ['lightning', 'on-chain', 'tron', 'vnd-instant', 'svcpay', 'eth'].map(kinds.railOfDestination),
    ).toEqual(['lightning', 'onchain', 'tron', 'bank', undefined, undefined])
    expect(kinds.kinds.map(kinds.railOfSend).filter(Boolean)).toEqual([
      'lightning',
      'onchain',
      'tron',
      'bank',
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
