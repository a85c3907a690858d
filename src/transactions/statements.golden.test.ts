import { describe, expect, it } from 'vitest'
import type { Queryable } from '../db/db.js'
import { Sql, sql, toQuery } from '../db/sql.js'
import { entryCtes, holdCtes } from '../ledger/ledger.js'
import { walletOutPostings } from './money.js'
import { createTxnRepository } from './repository.js'
import { serviceKinds } from '../wiring/kinds.js'
import type { Txn } from './txn.js'

/**
 * The text of the hardest statements, pinned: the swap confirm (one statement that locks the quote,
 * settles its hold, writes the entry and the transition with its outbox event), a hold and a
 * journal entry. Their behaviour is tested against both engines elsewhere; these files make any
 * change to what is sent to the database show up in review as a diff of SQL. After a deliberate
 * change, run `npx vitest run src/transactions/statements.golden.test.ts -u` and read the diff.
 */

const NOW = 1_767_225_600_000

/** A statement and its parameters as one reviewable text. */
function golden(statement: Sql): string {
  const { text, values } = toQuery(statement)
  const shown = values.map((v, i) => `-- $${i + 1} = ${typeof v === 'bigint' ? `${v}n` : JSON.stringify(v)}`)
  return `${text.trim()}\n\n${shown.join('\n')}\n`
}

const swap = {
  id: 'txn_0000000000000000000000swap',
  accountId: 'acc_00000000000000000000000001',
  kind: 'swap',
  state: 'quoted',
  srcCcy: 'BTC',
  destCcy: 'USD',
  srcAmountMinor: 100_000n,
  srcFeeMinor: 500n,
  srcNetworkFeeMinor: 0n,
  destAmountMinor: 9_500n,
  deductFeesFromDest: false,
} as Txn

describe('statement text', () => {
  // The outbox stamps its event with the repository's clock, not the transition's time: a still one.
  const repository = createTxnRepository({ kinds: serviceKinds(), webhookVariant: 'a', now: () => NOW })

  it('the swap confirm', async () => {
    const sent: Sql[] = []
    // Records the statement and answers as a quote that is no longer confirmable would: no row.
    const recorder: Queryable = {
      query: async (statement) => {
        expect(statement).toBeInstanceOf(Sql)
        sent.push(statement as Sql)
        return { rows: [], rowCount: 0 }
      },
      notify: async () => {},
    }
    const entry = {
      txnId: swap.id,
      kind: 'swap',
      now: NOW,
      postings: walletOutPostings(swap, 'wal_btc', { wallet: 'wal_usd' }),
    }
    const row = await repository.settleQuoted(
      recorder,
      swap,
      { entry, to: 'completed', patch: {} },
      { now: NOW },
    )
    expect(row).toBeUndefined()
    expect(sent).toHaveLength(1)
    await expect(golden(sent[0]!)).toMatchFileSnapshot('golden/swap-confirm.sql')
  })

  it('a hold', async () => {
    const hold = holdCtes({
      txnId: swap.id,
      accountId: swap.accountId,
      ccy: 'BTC',
      amount: 100_500n,
      now: NOW,
    })
    await expect(golden(hold)).toMatchFileSnapshot('golden/hold.sql')
  })

  it('a journal entry that settles its holds', async () => {
    const entry = entryCtes({
      txnId: swap.id,
      kind: 'onchain_send',
      now: NOW,
      settleHolds: true,
      postings: walletOutPostings({ ...swap, destCcy: 'BTC', destAmountMinor: 100_000n }, 'wal_btc', {
        system: 'onchain',
      }),
    })
    expect(entry).toBeDefined()
    await expect(golden(sql`WITH ${entry!.ctes} SELECT ${entry!.check} AS ok`)).toMatchFileSnapshot(
      'golden/entry.sql',
    )
  })
})
