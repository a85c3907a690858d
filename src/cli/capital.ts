import { randomUUID } from 'node:crypto'
import { serviceKinds } from '../wiring/kinds.js'
import { CliError, need, type Command, type Commands } from './args.js'
import { call, type DataList } from './client.js'

/** The currency each rail holds (the kind registry's `railCurrencies`, src/wiring/kinds.ts). */
const RAIL_CCY: Record<string, string> = Object.fromEntries(
  serviceKinds().railCurrencies.map((r) => [r.rail, r.ccy]),
)

interface Booked {
  replayed?: boolean
  direction: string
  rail: string
  amount: string
  ccy: string
  reference: string
}

interface CapitalRow {
  at: number
  rail: string
  direction: string
  amount: string
  ccy: string
  reference: string
  operatorId: string
  note: string
}

// Adding and withdrawing differ only in the direction, which the verb names.
const book: Command = async ({ verb, flags, print }) => {
  const rail = need(flags, 'rail')
  const ccy = flags.ccy === undefined ? RAIL_CCY[rail] : need(flags, 'ccy').toUpperCase()
  if (!ccy) throw new CliError('--rail: one of tron, bank, lightning, onchain, ethereum')
  // The same --reference books once however often the command is run; without one, a fresh
  // reference is made, and printed so that a retry can reuse it.
  const reference = flags.reference === undefined ? `cli-${randomUUID()}` : need(flags, 'reference')
  const r = await call<Booked>(
    'POST',
    '/admin/capital',
    {
      rail,
      ccy,
      direction: verb === 'add' ? 'in' : 'out',
      amount: need(flags, 'amount'),
      note: need(flags, 'note'),
    },
    { 'idempotency-key': reference },
  )
  return print(
    r,
    `${r.replayed ? 'already booked' : 'booked'}: ${r.direction === 'in' ? 'put on' : 'taken off'} ${r.rail}: ${r.amount} ${r.ccy} (reference ${r.reference})`,
  )
}

/** Operator capital (issue 18): see docs/reconciliation.md "Operator capital". */
export const capitalCommands: Commands = {
  'capital add': book,
  'capital withdraw': book,

  async 'capital list'({ print }) {
    const r = await call<DataList<CapitalRow>>('GET', '/admin/capital')
    return print(
      r.data,
      r.data
        .map(
          (c) =>
            `${new Date(c.at).toISOString()}  ${c.rail.padEnd(9)}  ${c.direction === 'in' ? '+' : '-'}${c.amount} ${c.ccy}  ${c.reference}  ${c.operatorId}  ${c.note}`,
        )
        .join('\n') || '(none)',
    )
  },
}
