import { describe, expect, it } from 'vitest'
import { checkRails, formatRailsCheck } from './check.js'
import { RailFailure, type CheckableRail, type RailCheckReport } from './rail.js'

/**
 * The aggregator behind `svcpay rails check`: it only calls the CheckableRail interface, so the
 * rails here are plain objects implementing it (the adapters' own checks are tested with their
 * stand-ins, and the whole path in test/foundation/rails-check.test.ts).
 */
const report = (over: Partial<RailCheckReport> = {}): RailCheckReport => ({
  rail: 'bank',
  adapter: 'bank-http',
  reachable: true,
  problems: [],
  ...over,
})
const answering = (r: RailCheckReport): CheckableRail => ({ check: async () => r })

describe('checkRails', () => {
  it('is ok when every rail is ok or sandbox, in rail order, with each report', async () => {
    const lnd = report({
      rail: 'lightning',
      adapter: 'lnd',
      version: '0.18.3-beta',
      network: 'mainnet',
      synced: true,
    })
    const result = await checkRails(
      [
        { rail: 'bank', adapter: 'sandbox', impl: {} },
        { rail: 'lightning', adapter: 'lnd', impl: answering(lnd) },
        { rail: 'tron', adapter: 'sandbox', impl: answering(report({ rail: 'tron', adapter: 'sandbox' })) },
        { rail: 'onchain', adapter: 'sandbox', impl: {} },
      ],
      1_000,
    )
    expect(result.ok).toBe(true)
    expect(result.rails.map((e) => [e.rail, e.verdict])).toEqual([
      ['lightning', 'ok'],
      ['onchain', 'sandbox'],
      ['tron', 'sandbox'],
      ['bank', 'sandbox'],
    ])
    expect(result.rails[0]!.report).toEqual(lnd)
    expect(result.rails.every((e) => e.problems.length === 0)).toBe(true)
  })

  it('a real rail without check(), with problems, unreachable, slow or failing is a problem', async () => {
    const result = await checkRails(
      [
        { rail: 'lightning', adapter: 'lnd', impl: {} },
        {
          rail: 'onchain',
          adapter: 'bitcoind',
          impl: answering(
            report({ rail: 'onchain', adapter: 'bitcoind', problems: ['chain is test, not main'] }),
          ),
        },
        { rail: 'tron', adapter: 'trongrid', impl: { check: () => new Promise<RailCheckReport>(() => {}) } },
        {
          rail: 'bank',
          adapter: 'bank-http',
          impl: {
            check: async () => {
              throw new RailFailure('bank_unreachable', 'GET /v1/balance:\n connect ECONNREFUSED', true)
            },
          },
        },
      ],
      200,
    )
    expect(result.ok).toBe(false)
    expect(result.rails.map((e) => [e.rail, e.verdict, e.problems])).toEqual([
      ['lightning', 'not_checked', ['the lnd adapter cannot be checked yet (it has no check())']],
      ['onchain', 'problem', ['chain is test, not main']],
      ['tron', 'problem', ['no answer within 200 ms']],
      ['bank', 'problem', ['the check failed: GET /v1/balance: connect ECONNREFUSED']],
    ])
    expect(result.rails[2]!.durationMs).toBeGreaterThanOrEqual(190)
    const unreachable = await checkRails(
      [{ rail: 'bank', adapter: 'bank-http', impl: answering(report({ reachable: false })) }],
      1_000,
    )
    expect(unreachable.rails[0]!.problems).toEqual(['the bank-http rail is not reachable'])
  })

  it('prints a table, the problems, and the verdict', async () => {
    const result = await checkRails(
      [
        { rail: 'lightning', adapter: 'sandbox', impl: {} },
        {
          rail: 'bank',
          adapter: 'bank-http',
          impl: answering(
            report({ balances: { VND: '75000000' }, problems: ['the partner refused our key'] }),
          ),
        },
      ],
      1_000,
    )
    const text = formatRailsCheck(result)
    const lines = text.split('\n')
    expect(lines[0]).toMatch(/^RAIL\s+ADAPTER\s+VERDICT\s+VERSION\s+NETWORK\s+SYNCED\s+BALANCES$/)
    expect(lines[1]).toMatch(/^lightning\s+sandbox\s+sandbox\s+-\s+-\s+-\s+-$/)
    expect(lines[2]).toMatch(/^bank\s+bank-http\s+problem\s+-\s+-\s+-\s+75000000 VND$/)
    expect(text).toContain('Problems:\n  bank: the partner refused our key')
    expect(lines.at(-1)).toMatch(/^NOT READY/)
  })
})
