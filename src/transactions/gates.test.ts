import { describe, expect, it } from 'vitest'
import type { Queryable } from '../db/db.js'
import { ApiError } from '../shared/errors.js'
import {
  gatesByKind,
  PASS,
  runConfirmGates,
  runCreateGates,
  runQuoteGates,
  type ConfirmGate,
} from './gates.js'
import type { NewTxn, Txn } from './txn.js'
import type { RateSnapshot } from '../rates/service.js'

// The gates run on a Queryable they only hand on; these gates never touch it.
const q = {} as Queryable
const txn = { id: 'txn_1', kind: 'ln_send' } as Txn

function gate(
  name: string,
  kinds: string[],
  verdict: ConfirmGate['atConfirm'],
  seen: string[] = [],
): ConfirmGate {
  return {
    name,
    concerns: (kind) => kinds.includes(kind),
    atConfirm: async (...args) => {
      seen.push(name)
      return verdict(...args)
    },
  }
}

describe('confirm gates', () => {
  it('gives each kind only the gates that concern it, so a swap runs none', () => {
    const brake = gate('brake', ['ln_send', 'tron_payout'], async () => PASS)
    const approval = gate('approval', ['tron_payout'], async () => PASS)
    const byKind = gatesByKind(['swap', 'ln_send', 'tron_payout'], [brake, approval])
    expect(byKind.get('swap')).toEqual([])
    expect(byKind.get('ln_send')).toEqual([brake])
    expect(byKind.get('tron_payout')).toEqual([brake, approval])
  })

  it('throws the first refusal, and runs no gate after it', async () => {
    const seen: string[] = []
    const error = new ApiError('sends_paused', 'paused')
    const gates = [
      gate('first', ['ln_send'], async () => ({ verdict: 'refuse', error }), seen),
      gate('second', ['ln_send'], async () => PASS, seen),
    ]
    await expect(runConfirmGates(gates, q, txn, 0)).rejects.toBe(error)
    expect(seen).toEqual(['first'])
  })

  it('returns every hold for the engine to record once the funds are held, and nothing when all pass', async () => {
    const hold = { verdict: 'hold' as const, until: 5, record: async () => {} }
    const gates = [gate('a', ['ln_send'], async () => PASS), gate('b', ['ln_send'], async () => hold)]
    expect(await runConfirmGates(gates, q, txn, 0)).toEqual([hold])
    expect(await runConfirmGates([gates[0]!], q, txn, 0)).toEqual([])
  })

  it('refuses a create with the first gate that says so at create', async () => {
    const error = new ApiError('sends_paused', 'paused')
    const quiet = gate('quiet', ['ln_send'], async () => PASS)
    const refusing: ConfirmGate = { ...quiet, name: 'refusing', atCreate: async () => error }
    await expect(runCreateGates([quiet], q, 'ln_send')).resolves.toBeUndefined()
    await expect(runCreateGates([quiet, refusing], q, 'ln_send')).rejects.toBe(error)
  })
  it('refuses a quote before it is written with the first gate that says so, seeing its amounts', async () => {
    const error = new ApiError('sends_paused', 'over')
    const seen: bigint[] = []
    const quiet = gate('quiet', ['ln_send'], async () => PASS)
    const limits: ConfirmGate = {
      ...quiet,
      name: 'limits',
      atQuote: async (_q, quote) => {
        seen.push(quote.srcAmountMinor)
        return quote.srcAmountMinor > 100n ? error : undefined
      },
    }
    const rates = {} as RateSnapshot
    await expect(
      runQuoteGates([quiet, limits], q, { srcAmountMinor: 100n } as NewTxn, rates),
    ).resolves.toBeUndefined()
    await expect(runQuoteGates([quiet, limits], q, { srcAmountMinor: 101n } as NewTxn, rates)).rejects.toBe(
      error,
    )
    expect(seen).toEqual([100n, 101n])
  })
})
