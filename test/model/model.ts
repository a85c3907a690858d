import { expect } from 'vitest'
import { checkBooks } from '../../src/ledger/ledger.js'
import { STREAMS_PER_ACCOUNT, toMinor, type RunAccounts, type World } from './world.js'

/**
 * The model: what the service must show after each command, kept small and exact. Per account and
 * currency a wallet (amount and available, minor units); per transaction its state, `msg`,
 * `amtSettled` and the events (state, msg) it must have announced; per account its Lightning
 * Address. Where the service may choose (ids, addresses, memos, invoices, fees) the model takes
 * what the service answered. Test code only.
 */

export type Who = 'a' | 'b'
export type Ccy = 'BTC' | 'VND'
export type Rail = 'onchain' | 'ln' | 'vnd' | 'lnsend' | 'vndout'

export const DECIMALS: Record<Ccy, number> = { BTC: 8, VND: 0 }

export interface MEvent {
  state: string
  msg: string
}

export interface MTxn {
  id: string
  who: Who
  rail: Rail
  /** A receive asked for by the account, or a deposit the service created for money that came. */
  kind: 'receive' | 'deposit' | 'send'
  ccy: Ccy
  /** What the receive asked the payer for (source side), minor units. */
  requested: bigint
  state: string
  msg: string
  /** Source amtSettled: what arrived; null until the receive settles. */
  settled: bigint | null
  /** An on-chain payment seen in the mempool, credited when a block confirms it. */
  pending: bigint | null
  /** For a send: what its quote holds (amount and fees, from the service's answer). */
  held: bigint
  events: MEvent[]
  address?: string
  memo?: string
  paymentRequest?: string
  /** A VND payout: what the sandbox bank will answer (contract section 9, by the account number). */
  outcome?: BankOutcome
  /** A VND payout: the bank's reference once a worker handed it over (the first one, kept). */
  bankRef?: string
  /** A VND payout claimed by a worker that died: the rows it held until its lease runs out. */
  leasedBy?: string[]
}

/**
 * The sandbox bank's answers (contract section 9): an account number ending 0000 is rejected, one
 * ending 1111 fails after it was accepted, any other is paid. The reasons are docs/payouts.md's.
 */
export type BankOutcome = 'paid' | 'failed' | 'rejected'
export const BANK_ACCOUNTS: Record<BankOutcome, string> = {
  paid: '0011223344',
  failed: '0011221111',
  rejected: '0011220000',
}
export const BANK_REASONS: Record<BankOutcome, string> = {
  paid: '',
  failed: 'beneficiary_account_closed',
  rejected: 'rejected_by_bank',
}

export interface Wallet {
  amount: bigint
  available: bigint
}

export interface Model {
  wallets: Record<Who, Record<Ccy, Wallet>>
  txns: MTxn[]
  /** The username each account holds, if any. */
  lnAddress: Record<Who, string | undefined>
  receiverUp: boolean
  /** The commands run so far, for the failure message (fast-check prints the shrunk list too). */
  log: string[]
}

export function initialModel(): Model {
  const w = (): Record<Ccy, Wallet> => ({
    BTC: { amount: 0n, available: 0n },
    VND: { amount: 0n, available: 0n },
  })
  return {
    wallets: { a: w(), b: w() },
    txns: [],
    lnAddress: { a: undefined, b: undefined },
    receiverUp: true,
    log: [],
  }
}

/** Contract section 11: a receive completes with what arrived, `underpaid` or `overpaid` when it differs. */
export function settledMsg(requested: bigint, arrived: bigint): string {
  if (arrived < requested) return 'underpaid'
  if (arrived > requested) return 'overpaid'
  return ''
}

export function move(t: MTxn, state: string, msg = ''): void {
  t.state = state
  t.msg = msg
  t.events.push({ state, msg })
}

/** Money arrived in a wallet (a receive completed, a deposit credited, test money). */
export function credit(m: Model, who: Who, ccy: Ccy, minor: bigint): void {
  m.wallets[who][ccy].amount += minor
  m.wallets[who][ccy].available += minor
}

/** A receive completes with what arrived. */
export function complete(m: Model, t: MTxn, arrived: bigint): void {
  t.settled = arrived
  t.pending = null
  move(t, 'completed', settledMsg(t.requested, arrived))
  credit(m, t.who, t.ccy, arrived)
}

/** A quote's hold is released (cancel, expiry): available comes back, amount never moved. */
export function release(m: Model, t: MTxn): void {
  if (t.held > 0n) m.wallets[t.who][t.ccy].available += t.held
  t.held = 0n
}

/** A payout's hold is posted: the money left the wallet (amount falls; available fell at the hold). */
export function post(m: Model, t: MTxn): void {
  m.wallets[t.who][t.ccy].amount -= t.held
  t.held = 0n
}

export const FINAL = new Set(['completed', 'failed', 'rejected', 'expired', 'usercanceled', 'error'])

/**
 * Compares the service with the model: the wallets, every transaction (and that there are no
 * others), the events recorded and the webhooks received, the Lightning Addresses, and the books.
 */
export async function verify(m: Model, w: World, run: RunAccounts): Promise<void> {
  const where = () => `after: ${m.log.join(' ; ')}`
  for (const who of ['a', 'b'] as const) {
    const acct = run[who]
    const wallets = await w.api('GET', `/api/v2/account/${acct.accountId}/wallet/`, acct.token)
    expect(wallets.status, wallets.raw).toBe(200)
    for (const ccy of ['BTC', 'VND'] as const) {
      const got = wallets.body.data.find((x: any) => x.ccy === ccy)
      const d = DECIMALS[ccy]
      expect(
        { who, ccy, amount: toMinor(got.amount, d), available: toMinor(got.availableBalance, d) },
        where(),
      ).toEqual({ who, ccy, amount: m.wallets[who][ccy].amount, available: m.wallets[who][ccy].available })
    }
    // Exactly the transactions the model knows, no more (a lost or invented deposit shows here).
    const listed = await w.api('GET', '/api/v2/transaction?limit=100', acct.token)
    expect(listed.status, listed.raw).toBe(200)
    const ids = listed.body.data.map((t: any) => t.txnId).sort()
    const known = m.txns
      .filter((t) => t.who === who)
      .map((t) => t.id)
      .sort()
    expect({ who, txns: ids }, where()).toEqual({ who, txns: known })

    const addr = await w.api('GET', `/api/v2/account/${acct.accountId}/lightning-address`, acct.token)
    const expected = m.lnAddress[who]
    expect(
      { who, status: addr.status, username: addr.body?.data?.username ?? null },
      `Lightning Address of ${who}, ${where()}`,
    ).toEqual({ who, status: expected ? 200 : 404, username: expected ?? null })
  }

  for (const t of m.txns) {
    const acct = run[t.who]
    const r = await w.api('GET', `/api/v2/transaction/${t.id}`, acct.token)
    expect(r.status, r.raw).toBe(200)
    const d = DECIMALS[t.ccy]
    expect(
      {
        id: t.id,
        rail: t.rail,
        txnState: r.body.txnState,
        msg: r.body.msg,
        amtSettled: t.kind === 'send' ? null : toMinor(r.body.sourceReq.amtSettled, d),
      },
      where(),
    ).toEqual({
      id: t.id,
      rail: t.rail,
      txnState: t.state,
      msg: t.msg,
      amtSettled: t.kind === 'send' ? null : t.settled,
    })
  }

  // The events recorded with each change (outbox), in order, and what the receiver got of them.
  const ids = m.txns.map((t) => t.id)
  if (ids.length > 0) {
    const { rows } = await w.h.c.db.query<{ id: string; txn_id: string; txn_state: string; msg: string }>(
      'SELECT e.id::text AS id, e.txn_id, e.txn_state, e.msg FROM events e WHERE e.txn_id = ANY($1) ORDER BY e.id',
      [ids],
    )
    for (const t of m.txns) {
      const got = rows.filter((e) => e.txn_id === t.id).map((e) => ({ state: e.txn_state, msg: e.msg }))
      expect({ id: t.id, events: got }, `events of ${t.rail} ${t.kind}, ${where()}`).toEqual({
        id: t.id,
        events: t.events,
      })
    }
    if (m.receiverUp) {
      // Account A has a webhook: with the receiver up, every one of its events has arrived, as recorded.
      const seen = new Map<string, any>()
      for (const r of w.receiver.received) {
        const id = String(r.headers['x-svcpay-event-id'] ?? '')
        if (r.signatureValid) seen.set(id, r.body)
      }
      const mine = new Set(m.txns.filter((t) => t.who === 'a').map((t) => t.id))
      for (const e of rows.filter((x) => mine.has(x.txn_id))) {
        const body = seen.get(`evt_${e.id}`)
        expect(
          { event: e.id, txnId: body?.txnId, txnState: body?.txnState, msg: body?.msg },
          `webhook of event ${e.id}, ${where()}`,
        ).toEqual({ event: e.id, txnId: e.txn_id, txnState: e.txn_state, msg: e.msg })
      }
    }
  }

  // A payout is handed to the bank once at most, whatever died on the way (the bank's own record).
  for (const t of m.txns.filter((x) => x.rail === 'vndout')) {
    const { rows } = await w.h.c.db.query<{ ref: string }>(
      `SELECT ref FROM sandbox_payouts WHERE request_id = $1 AND kind = 'bank'`,
      [t.id],
    )
    expect({ id: t.id, bankRefs: rows.map((r) => r.ref) }, `bank transfers of ${t.id}, ${where()}`).toEqual({
      id: t.id,
      bankRefs: t.bankRef ? [t.bankRef] : [],
    })
  }

  await verifyStreams(m, w, run, where)

  const report = await checkBooks(w.h.c.db)
  expect(report, JSON.stringify(report)).toMatchObject({
    ok: true,
    unbalancedEntries: 0,
    walletMismatches: 0,
    holdMismatches: 0,
  })
}

/**
 * The status stream of every transaction (docs/webhooks.md, "The status stream"), opened from its
 * first event as the model learns of it and kept open for the run: after each step it must have
 * sent exactly the model's events, in order, with the recorded event ids, and have ended once the
 * transaction is final. An account holds at most STREAMS_PER_ACCOUNT at once; a transaction seen
 * while its account holds them all is opened at a later step, from its first event all the same.
 */
async function verifyStreams(m: Model, w: World, run: RunAccounts, where: () => string): Promise<void> {
  for (const t of m.txns) {
    if (run.streams.has(t.id)) continue
    const open = [...run.streams.values()].filter((s) => s.who === t.who && !s.ended).length
    if (open >= STREAMS_PER_ACCOUNT) continue
    const s = await w.openStream(t.id, run[t.who].token, t.who)
    if (s) run.streams.set(t.id, s)
  }
  const ids = m.txns.map((t) => t.id)
  if (ids.length === 0) return
  const { rows } = await w.h.c.db.query<{ id: string; txn_id: string }>(
    'SELECT e.id::text AS id, e.txn_id FROM events e WHERE e.txn_id = ANY($1) ORDER BY e.id',
    [ids],
  )
  const deadline = Date.now() + 5_000
  for (const t of m.txns) {
    const s = run.streams.get(t.id)
    if (!s) continue
    const final = FINAL.has(t.state)
    // Changes reach a stream through the notifier, a moment after their commit.
    while ((s.messages.length < t.events.length || (final && !s.ended)) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 10))
    const eventIds = rows.filter((e) => e.txn_id === t.id).map((e) => e.id)
    expect(
      { id: t.id, stream: s.messages, ended: s.ended },
      `status stream of ${t.rail} ${t.kind}, ${where()}`,
    ).toEqual({
      id: t.id,
      stream: t.events.map((e, i) => ({ id: eventIds[i], state: e.state, msg: e.msg })),
      ended: final,
    })
  }
}
