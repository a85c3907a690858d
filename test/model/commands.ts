import fc from 'fast-check'
import { expect } from 'vitest'
import {
  BANK_ACCOUNTS,
  BANK_REASONS,
  complete,
  post,
  credit,
  DECIMALS,
  move,
  release,
  verify,
  type BankOutcome,
  type Ccy,
  type Model,
  type MTxn,
  type Rail,
  type Who,
} from './model.js'
import { fromMinor, toMinor, type RunAccounts, type World } from './world.js'

/**
 * One fast-check AsyncCommand per action of the API or the world. Each `run` acts on the real
 * service, applies the expected transition to the model, and then compares the two (verify).
 * Transactions are picked by an index into the candidates the model has at that moment, so a
 * shrunk sequence still picks something meaningful. Test code only.
 */

export interface Real {
  w: World
  run: RunAccounts
}

type Cmd = fc.AsyncCommand<Model, Real>

const who = fc.constantFrom<Who>('a', 'b')
/** Amounts asked for, small and few: what matters is short, exact and over. */
const BTC_SATS = [10_000n, 50_000n, 120_000n]
const VND_DONG = [20_000n, 150_000n]
type Paid = 'short' | 'exact' | 'over'
const paidArb = fc.constantFrom<Paid>('short', 'exact', 'over')
const paidOf = (requested: bigint, paid: Paid): bigint =>
  paid === 'short' ? requested / 2n : paid === 'over' ? requested + requested / 4n : requested

function pick(m: Model, index: number, pred: (t: MTxn) => boolean): MTxn | undefined {
  const c = m.txns.filter(pred)
  return c.length ? c[index % c.length] : undefined
}

async function listIds(r: Real, w: Who): Promise<string[]> {
  const acct = r.run[w]
  const l = await r.w.api('GET', '/api/v2/transaction?limit=100', acct.token)
  expect(l.status, l.raw).toBe(200)
  return l.body.data.map((t: any) => t.txnId)
}

/** The transactions the service created for `w` that the model does not know yet. */
async function newIds(m: Model, r: Real, w: Who): Promise<string[]> {
  const known = new Set(m.txns.map((t) => t.id))
  return (await listIds(r, w)).filter((id) => !known.has(id))
}

function receiveBody(rail: Exclude<Rail, 'lnsend'>, minor: bigint) {
  if (rail === 'vnd')
    return {
      sourceReq: { ccy: 'VND', method: 'vnd-instant', reqDetails: {} },
      destReq: { ccy: 'VND', method: 'svcpay', amtRequested: fromMinor(minor, 0), reqDetails: {} },
    }
  return {
    sourceReq: { ccy: 'BTC', method: rail === 'ln' ? 'lightning' : 'on-chain', reqDetails: {} },
    destReq: { ccy: 'BTC', method: 'svcpay', amtRequested: fromMinor(minor, 8), reqDetails: {} },
  }
}

/** What a confirmed receive hands out, kept in the model: its address, invoice or memo. */
function takeDetails(t: MTxn, body: any): void {
  const d = body.sourceReq.reqDetails ?? {}
  if (t.rail === 'onchain' && d.address) t.address = d.address
  if (t.rail === 'ln' && d.paymentRequest) t.paymentRequest = d.paymentRequest
  if (t.rail === 'vnd' && d.memo) t.memo = d.memo
}

function confirmInModel(t: MTxn): void {
  if (t.rail === 'onchain') move(t, 'srcintent')
  else move(t, 'srccreated')
}

class CreateReceive implements Cmd {
  constructor(
    readonly who: Who,
    readonly rail: Exclude<Rail, 'lnsend'>,
    readonly amountIdx: number,
    readonly confirm: boolean,
  ) {}
  check = () => true
  async run(m: Model, r: Real) {
    const ccy: Ccy = this.rail === 'vnd' ? 'VND' : 'BTC'
    const list = ccy === 'VND' ? VND_DONG : BTC_SATS
    const minor = list[this.amountIdx % list.length]!
    m.log.push(this.toString())
    const acct = r.run[this.who]
    const q = await r.w.api('POST', '/api/v2/transaction', acct.token, receiveBody(this.rail, minor))
    expect(q.status, q.raw).toBe(200)
    expect(q.body.txnState).toBe('quoted')
    // Receive fees are 0 (world.ts ENV): the payer is asked exactly the wallet's amount.
    expect(toMinor(q.body.sourceReq.amtRequested, DECIMALS[ccy])).toBe(minor)
    const t: MTxn = {
      id: q.body.txnId,
      who: this.who,
      rail: this.rail,
      kind: 'receive',
      ccy,
      requested: minor,
      state: 'quoted',
      msg: '',
      settled: null,
      pending: null,
      held: 0n,
      events: [{ state: 'quoted', msg: '' }],
    }
    m.txns.push(t)
    if (this.confirm) {
      const c = await r.w.api('PUT', `/api/v2/transaction/${t.id}/confirm`, acct.token)
      expect(c.status, c.raw).toBe(200)
      confirmInModel(t)
      takeDetails(t, c.body)
    }
    await r.w.settle()
    await verify(m, r.w, r.run)
  }
  toString = () => `create(${this.who}, ${this.rail}, ${this.amountIdx}${this.confirm ? ', confirmed' : ''})`
}

/** A Lightning send quoted to an outside invoice: its amount and fees are held until it ends. */
class QuoteSend implements Cmd {
  constructor(
    readonly who: Who,
    readonly sats: bigint,
  ) {}
  check = (m: Readonly<Model>) => m.wallets[this.who].BTC.available >= this.sats * 2n
  async run(m: Model, r: Real) {
    m.log.push(this.toString())
    const inv = await r.w.admin('POST', '/admin/sandbox/lightning/invoice', {
      amount: fromMinor(this.sats, 8),
    })
    expect(inv.status, inv.raw).toBe(200)
    const acct = r.run[this.who]
    const q = await r.w.api('POST', '/api/v2/transaction', acct.token, {
      sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
      destReq: { ccy: 'BTC', method: 'lightning', reqDetails: { paymentRequest: inv.body.paymentRequest } },
    })
    expect(q.status, q.raw).toBe(200)
    const s = q.body.sourceReq
    const held = toMinor(s.amtRequested, 8)! + toMinor(s.svcpayFees, 8)! + toMinor(s.networkFees, 8)!
    expect(toMinor(s.amtRequested, 8)).toBe(this.sats)
    m.txns.push({
      id: q.body.txnId,
      who: this.who,
      rail: 'lnsend',
      kind: 'send',
      ccy: 'BTC',
      requested: this.sats,
      state: 'quoted',
      msg: '',
      settled: null,
      pending: null,
      held,
      events: [{ state: 'quoted', msg: '' }],
    })
    m.wallets[this.who].BTC.available -= held
    await r.w.settle()
    await verify(m, r.w, r.run)
  }
  toString = () => `quoteSend(${this.who}, ${this.sats} sats)`
}

/** Test money: 0.01 BTC or 1,000,000 VND. */
const FUNDING: Record<Ccy, { text: string; minor: bigint }> = {
  BTC: { text: '0.01', minor: 1_000_000n },
  VND: { text: '1000000', minor: 1_000_000n },
}

class Fund implements Cmd {
  constructor(
    readonly who: Who,
    readonly ccy: Ccy = 'BTC',
  ) {}
  check = () => true
  async run(m: Model, r: Real) {
    m.log.push(this.toString())
    const f = await r.w.admin('POST', '/admin/sandbox/fund', {
      accountId: r.run[this.who].accountId,
      ccy: this.ccy,
      amount: FUNDING[this.ccy].text,
    })
    expect(f.status, f.raw).toBe(200)
    credit(m, this.who, this.ccy, FUNDING[this.ccy].minor)
    await verify(m, r.w, r.run)
  }
  toString = () => `fund(${this.who}, ${FUNDING[this.ccy].text} ${this.ccy})`
}

/**
 * A VND payout to a bank account (docs/payouts.md), quoted: amount and fees, as the service
 * quotes them, are held from the VND wallet until it ends. The account number decides what the
 * sandbox bank will answer (contract section 9).
 */
class QuotePayout implements Cmd {
  constructor(
    readonly who: Who,
    readonly dong: bigint,
    readonly outcome: BankOutcome,
    /** Confirmed at once (and how its worker fares), or left quoted. */
    readonly confirm: Crash | undefined,
  ) {}
  check = () => true
  async run(m: Model, r: Real) {
    // Twice the amount leaves room for any fee, so the quote holds at create (contract section 5);
    // a wallet short of that gets test money first, so that payouts come often in short runs.
    if (m.wallets[this.who].VND.available < this.dong * 2n) await new Fund(this.who, 'VND').run(m, r)
    m.log.push(this.toString())
    const acct = r.run[this.who]
    const q = await r.w.api('POST', '/api/v2/transaction', acct.token, {
      sourceReq: { ccy: 'VND', method: 'svcpay', reqDetails: {} },
      destReq: {
        ccy: 'VND',
        method: 'vnd-instant',
        amtRequested: fromMinor(this.dong, 0),
        reqDetails: { bankAcctNum: BANK_ACCOUNTS[this.outcome], institutionCode: '970415' },
        kyc: { type: 'individual', details: { legalFullName: 'Lê Văn Cường', countryCode: 'VN' } },
      },
      sourceOfFunds: { purpose: 1, source: 3, relationship: 1 },
    })
    expect(q.status, q.raw).toBe(200)
    expect(q.body.txnState).toBe('quoted')
    expect(toMinor(q.body.destReq.amtRequested, 0)).toBe(this.dong)
    // What the wallet gives: the amount and the fees the service quoted (read, never guessed).
    const s = q.body.sourceReq
    const held = toMinor(s.amtRequested, 0)! + toMinor(s.svcpayFees, 0)! + toMinor(s.networkFees, 0)!
    m.txns.push({
      id: q.body.txnId,
      who: this.who,
      rail: 'vndout',
      kind: 'send',
      ccy: 'VND',
      requested: this.dong,
      state: 'quoted',
      msg: '',
      settled: null,
      pending: null,
      held,
      events: [{ state: 'quoted', msg: '' }],
      outcome: this.outcome,
    })
    m.wallets[this.who].VND.available -= held
    await r.w.settle()
    if (this.confirm) await confirmPayout(m, r, m.txns[m.txns.length - 1]!, this.confirm)
    await verify(m, r.w, r.run)
  }
  toString = () =>
    `quotePayout(${this.who}, ${this.dong} VND, ${this.outcome}${this.confirm ? `, confirmed (${this.confirm})` : ''})`
}

type Crash = 'none' | 'before-bank' | 'after-bank'
const crashArb = fc.constantFrom<Crash>('none', 'none', 'before-bank', 'after-bank')

/**
 * Confirm a quoted payout: `srccreated`, its funds still held, and the worker hands it to the bank
 * (`destsent`, with the bank's reference). Or the worker dies on the way: having claimed it
 * (`before-bank`), or after the bank accepted it but before recording that (`after-bank`). The
 * payout then waits, held, for the dead worker's lease to run out (LeaseLapses): no other worker
 * touches it meanwhile.
 *
 * A real process killed and restarted would wait CLAIM_LEASE_MS (30 s) for its lease, too slow
 * for a model run of many steps; the lease's end is moved into the past instead, the way the model
 * passes every other deadline. The dead worker is the production claim (claimDue) and, for
 * `after-bank`, the bank call the payout step makes, with the same request id.
 */
class ConfirmPayout implements Cmd {
  constructor(
    readonly idx: number,
    readonly crash: Crash,
  ) {}
  check = (m: Readonly<Model>) => m.txns.some((t) => t.rail === 'vndout' && t.state === 'quoted')
  async run(m: Model, r: Real) {
    const t = pick(m, this.idx, (x) => x.rail === 'vndout' && x.state === 'quoted')!
    await confirmPayout(m, r, t, this.crash)
    await verify(m, r.w, r.run)
  }
  toString = () => `confirmPayout(#${this.idx}, ${this.crash})`
}

async function confirmPayout(m: Model, r: Real, t: MTxn, crash: Crash): Promise<void> {
  m.log.push(`confirmPayout(${t.outcome} ${t.id}${crash === 'none' ? '' : `, worker dies ${crash}`})`)
  const c = await r.w.api('PUT', `/api/v2/transaction/${t.id}/confirm`, r.run[t.who].token)
  expect(c.status, c.raw).toBe(200)
  expect(c.body.txnState).toBe('srccreated')
  move(t, 'srccreated')
  if (crash !== 'none') {
    const dead = await r.w.crashWorker(crash === 'after-bank' ? { txnId: t.id } : undefined)
    expect(dead.claimed, 'the dead worker had claimed the payout').toContain(t.id)
    t.leasedBy = dead.claimed
    if (dead.bankRef) t.bankRef = dead.bankRef
    // The living workers run: a payout under another worker's lease is left alone.
    await r.w.settle()
  } else {
    await r.w.settle()
    move(t, 'destsent')
    t.bankRef = await bankRefOf(r, t)
  }
}

async function bankRefOf(r: Real, t: MTxn): Promise<string> {
  const g = await r.w.api('GET', `/api/v2/transaction/${t.id}`, r.run[t.who].token)
  expect(g.status, g.raw).toBe(200)
  const ref = g.body.destReq?.reqDetails?.bankRef
  expect(typeof ref, `bankRef of ${t.id}: ${g.raw}`).toBe('string')
  return ref
}

/** The dead worker's lease runs out: a new worker takes the payout on and sends it, once. */
class LeaseLapses implements Cmd {
  constructor(readonly idx: number) {}
  check = (m: Readonly<Model>) => m.txns.some((t) => t.leasedBy)
  async run(m: Model, r: Real) {
    const t = pick(m, this.idx, (x) => !!x.leasedBy)!
    await r.w.leaseLapses(t.leasedBy!)
    t.leasedBy = undefined
    move(t, 'destsent')
    const ref = await bankRefOf(r, t)
    // After the bank accepted it, the new worker's submission finds that same transfer.
    if (t.bankRef) expect(ref, 'the payout keeps the transfer the dead worker made').toBe(t.bankRef)
    t.bankRef = ref
    await verify(m, r.w, r.run)
  }
  toString = () => `leaseLapses(#${this.idx})`
}

/** The sandbox bank settles a payout it accepted: paid (hold posted), failed or rejected (released). */
class BankSettles implements Cmd {
  constructor(readonly idx: number) {}
  static due = (t: MTxn) => t.rail === 'vndout' && t.state === 'destsent'
  check = (m: Readonly<Model>) => m.txns.some(BankSettles.due)
  async run(m: Model, r: Real) {
    const t = pick(m, this.idx, BankSettles.due)!
    await r.w.bankSettles(t.id)
    if (t.outcome === 'paid') {
      move(t, 'completed')
      post(m, t)
    } else {
      move(t, t.outcome!, BANK_REASONS[t.outcome!])
      release(m, t)
    }
    await verify(m, r.w, r.run)
  }
  toString = () => `bankSettles(#${this.idx})`
}

class Confirm implements Cmd {
  constructor(readonly idx: number) {}
  check = (m: Readonly<Model>) => m.txns.some((t) => t.state === 'quoted' && t.kind === 'receive')
  async run(m: Model, r: Real) {
    const t = pick(m, this.idx, (x) => x.state === 'quoted' && x.kind === 'receive')!
    m.log.push(`confirm(${t.rail} ${t.id})`)
    const c = await r.w.api('PUT', `/api/v2/transaction/${t.id}/confirm`, r.run[t.who].token)
    expect(c.status, c.raw).toBe(200)
    confirmInModel(t)
    takeDetails(t, c.body)
    await r.w.settle()
    await verify(m, r.w, r.run)
  }
  toString = () => `confirm(#${this.idx})`
}

/** Cancel any transaction: a quote becomes usercanceled; anything else is refused and unchanged. */
class Cancel implements Cmd {
  constructor(readonly idx: number) {}
  check = (m: Readonly<Model>) => m.txns.length > 0
  async run(m: Model, r: Real) {
    const t = pick(m, this.idx, () => true)!
    m.log.push(`cancel(${t.rail} ${t.state} ${t.id})`)
    const c = await r.w.api('PUT', `/api/v2/transaction/${t.id}/cancel`, r.run[t.who].token)
    if (t.state === 'quoted') {
      expect(c.status, c.raw).toBe(200)
      move(t, 'usercanceled', 'user_canceled')
      release(m, t)
    } else {
      const code = t.state === 'expired' && t.msg === 'quote_expired' ? 'quote_expired' : 'invalid_state'
      expect([c.status, c.body?.error], c.raw).toEqual([409, code])
    }
    await r.w.settle()
    await verify(m, r.w, r.run)
  }
  toString = () => `cancel(#${this.idx})`
}

/** Time reaches a transaction's deadline: its quote, its address's lifetime, its invoice or memo. */
class PassDeadline implements Cmd {
  constructor(readonly idx: number) {}
  static open = (t: MTxn) =>
    t.state === 'quoted' ||
    (t.rail === 'onchain' && t.state === 'srcintent') ||
    ((t.rail === 'ln' || t.rail === 'vnd') && t.state === 'srccreated')
  check = (m: Readonly<Model>) => m.txns.some(PassDeadline.open)
  async run(m: Model, r: Real) {
    const t = pick(m, this.idx, PassDeadline.open)!
    m.log.push(`deadline(${t.rail} ${t.state} ${t.id})`)
    // A Lightning invoice is watched for a minute past its expiry (src/lightning/receive.ts).
    await r.w.passDeadline(t.id, t.rail === 'ln' && t.state === 'srccreated' ? 61_000 : 0)
    if (t.state === 'quoted') {
      move(t, 'expired', 'quote_expired')
      release(m, t)
    } else if (t.rail === 'onchain') move(t, 'expired', 'address_expired')
    else if (t.rail === 'ln') move(t, 'expired', 'invoice_expired')
    else move(t, 'expired', 'receive_expired')
    await verify(m, r.w, r.run)
  }
  toString = () => `deadline(#${this.idx})`
}

/** An outside payer sends bitcoin to a receive's address: short, exact, over, late or again. */
class PayOnchain implements Cmd {
  constructor(
    readonly idx: number,
    readonly paid: Paid,
  ) {}
  check = (m: Readonly<Model>) => m.txns.some((t) => t.rail === 'onchain' && t.address)
  async run(m: Model, r: Real) {
    const t = pick(m, this.idx, (x) => x.rail === 'onchain' && !!x.address)!
    const sats = paidOf(t.requested, this.paid)
    m.log.push(`payOnchain(${t.state} ${t.id}, ${this.paid} ${sats})`)
    const s = await r.w.admin('POST', '/admin/sandbox/onchain/send', {
      address: t.address,
      amount: fromMinor(sats, 8),
    })
    expect(s.status, s.raw).toBe(200)
    await r.w.settle()
    if (t.state === 'srcintent') {
      t.pending = sats
      move(t, 'srccreated')
    } else {
      // Late, or a second payment to a used address: a deposit of its own, for what arrived.
      const fresh = await newIds(m, r, t.who)
      expect(fresh, `one deposit for the payment to ${t.id}`).toHaveLength(1)
      m.txns.push(deposit(fresh[0]!, t.who, 'onchain', 'BTC', sats, 'srccreated'))
    }
    await verify(m, r.w, r.run)
  }
  toString = () => `payOnchain(#${this.idx}, ${this.paid})`
}

function deposit(id: string, w: Who, rail: Rail, ccy: Ccy, minor: bigint, state: string): MTxn {
  return {
    id,
    who: w,
    rail,
    kind: 'deposit',
    ccy,
    requested: minor,
    state,
    msg: '',
    settled: null,
    pending: minor,
    held: 0n,
    events: [{ state, msg: '' }],
  }
}

/** A payment to the account's static address: always a deposit transaction that completes. */
class PayStatic implements Cmd {
  constructor(
    readonly who: Who,
    readonly sats: bigint,
  ) {}
  check = () => true
  async run(m: Model, r: Real) {
    m.log.push(this.toString())
    const acct = r.run[this.who]
    const a = await r.w.api('GET', '/api/v2/account/onchain-address', acct.token)
    expect(a.status, a.raw).toBe(200)
    const s = await r.w.admin('POST', '/admin/sandbox/onchain/send', {
      address: a.body.staticOnchainAddress,
      amount: fromMinor(this.sats, 8),
    })
    expect(s.status, s.raw).toBe(200)
    await r.w.settle()
    const fresh = await newIds(m, r, this.who)
    expect(fresh, 'one deposit for the payment to the static address').toHaveLength(1)
    m.txns.push(deposit(fresh[0]!, this.who, 'onchain', 'BTC', this.sats, 'srccreated'))
    await verify(m, r.w, r.run)
  }
  toString = () => `payStatic(${this.who}, ${this.sats} sats)`
}

/** A block: every on-chain payment seen is confirmed (ONCHAIN_CONFIRMATIONS 1) and credited. */
class Mine implements Cmd {
  check = () => true
  async run(m: Model, r: Real) {
    m.log.push('mine')
    const b = await r.w.admin('POST', '/admin/sandbox/onchain/mine', { blocks: 1 })
    expect(b.status, b.raw).toBe(200)
    await r.w.settle()
    for (const t of m.txns)
      if (t.rail === 'onchain' && t.state === 'srccreated' && t.pending !== null) complete(m, t, t.pending)
    await verify(m, r.w, r.run)
  }
  toString = () => 'mine'
}

/** The outside payer pays a Lightning invoice of ours: once; paid or expired is refused. */
class PayLightning implements Cmd {
  constructor(readonly idx: number) {}
  check = (m: Readonly<Model>) => m.txns.some((t) => t.rail === 'ln' && t.paymentRequest)
  async run(m: Model, r: Real) {
    const t = pick(m, this.idx, (x) => x.rail === 'ln' && !!x.paymentRequest)!
    m.log.push(`payLightning(${t.state} ${t.id})`)
    const p = await r.w.admin('POST', '/admin/sandbox/lightning/pay', { paymentRequest: t.paymentRequest })
    if (t.state === 'srccreated') {
      expect(p.status, p.raw).toBe(200)
      complete(m, t, t.requested)
    } else {
      expect([p.status, p.body?.error], p.raw).toEqual([400, 'invalid_payment_request'])
    }
    await r.w.settle()
    await verify(m, r.w, r.run)
  }
  toString = () => `payLightning(#${this.idx})`
}

/** A customer's bank transfer with a receive's memo: short, exact, over, late or again. */
class TransferVnd implements Cmd {
  constructor(
    readonly idx: number,
    readonly paid: Paid,
  ) {}
  check = (m: Readonly<Model>) => m.txns.some((t) => t.rail === 'vnd' && t.memo)
  async run(m: Model, r: Real) {
    const t = pick(m, this.idx, (x) => x.rail === 'vnd' && !!x.memo)!
    const dong = paidOf(t.requested, this.paid)
    m.log.push(`transferVnd(${t.state} ${t.id}, ${this.paid} ${dong})`)
    const s = await r.w.admin('POST', '/admin/sandbox/vnd/transfer', {
      memo: t.memo,
      amount: fromMinor(dong, 0),
    })
    expect(s.status, s.raw).toBe(200)
    await r.w.settle()
    if (t.state === 'srccreated') complete(m, t, dong)
    else {
      const fresh = await newIds(m, r, t.who)
      expect(fresh, `one deposit for the transfer to ${t.id}`).toHaveLength(1)
      const d = deposit(fresh[0]!, t.who, 'vnd', 'VND', dong, 'srccreated')
      complete(m, d, dong)
      m.txns.push(d)
    }
    await verify(m, r.w, r.run)
  }
  toString = () => `transferVnd(#${this.idx}, ${this.paid})`
}

/** PUT the Lightning Address: one per account; a name held by another account is 409, nothing changes. */
class ClaimAddress implements Cmd {
  constructor(
    readonly who: Who,
    readonly nameIdx: number,
  ) {}
  check = () => true
  async run(m: Model, r: Real) {
    const name = r.run.names[this.nameIdx % r.run.names.length]!
    m.log.push(`claim(${this.who}, ${name})`)
    const acct = r.run[this.who]
    const other: Who = this.who === 'a' ? 'b' : 'a'
    const res = await r.w.api('PUT', `/api/v2/account/${acct.accountId}/lightning-address`, acct.token, {
      username: name,
      creditCcy: 'BTC',
    })
    if (m.lnAddress[other] === name) {
      expect([res.status, res.body?.error], res.raw).toEqual([409, 'invalid_state'])
    } else {
      expect(res.status, res.raw).toBe(200)
      expect(res.body.data.username).toBe(name)
      m.lnAddress[this.who] = name
    }
    await verify(m, r.w, r.run)
  }
  toString = () => `claim(${this.who}, name ${this.nameIdx})`
}

class ReleaseAddress implements Cmd {
  constructor(readonly who: Who) {}
  check = () => true
  async run(m: Model, r: Real) {
    m.log.push(this.toString())
    const acct = r.run[this.who]
    const res = await r.w.api('DELETE', `/api/v2/account/${acct.accountId}/lightning-address`, acct.token)
    if (m.lnAddress[this.who]) {
      expect(res.status, res.raw).toBe(204)
      m.lnAddress[this.who] = undefined
    } else expect([res.status, res.body?.error], res.raw).toEqual([404, 'not_found'])
    await verify(m, r.w, r.run)
  }
  toString = () => `release(${this.who})`
}

/** A wallet pays a Lightning Address (LUD-16 look-up, LUD-06 callback, then the invoice). */
class PayAddress implements Cmd {
  constructor(
    readonly nameIdx: number,
    readonly sats: bigint,
  ) {}
  check = () => true
  async run(m: Model, r: Real) {
    const name = r.run.names[this.nameIdx % r.run.names.length]!
    m.log.push(`payAddress(${name}, ${this.sats} sats)`)
    const holder = (['a', 'b'] as const).find((x) => m.lnAddress[x] === name)
    const look = await r.w.api('GET', `/.well-known/lnurlp/${name}`, undefined)
    if (!holder) {
      // LUD-06's refusal, with HTTP 200 (docs/lightning-address.md).
      expect([look.status, look.body?.status], look.raw).toEqual([200, 'ERROR'])
      await verify(m, r.w, r.run)
      return
    }
    expect(look.status, look.raw).toBe(200)
    const path = new URL(look.body.callback).pathname
    const cb = await r.w.api('GET', `${path}?amount=${this.sats * 1000n}`, undefined)
    expect(cb.status, cb.raw).toBe(200)
    const p = await r.w.admin('POST', '/admin/sandbox/lightning/pay', { paymentRequest: cb.body.pr })
    expect(p.status, p.raw).toBe(200)
    await r.w.settle()
    const fresh = await newIds(m, r, holder)
    expect(fresh, `one receive for the payment to ${name}`).toHaveLength(1)
    const t: MTxn = {
      id: fresh[0]!,
      who: holder,
      rail: 'ln',
      kind: 'receive',
      ccy: 'BTC',
      requested: this.sats,
      state: 'srccreated',
      msg: '',
      settled: null,
      pending: null,
      held: 0n,
      events: [
        { state: 'quoted', msg: '' },
        { state: 'srccreated', msg: '' },
      ],
      paymentRequest: cb.body.pr,
    }
    complete(m, t, this.sats)
    m.txns.push(t)
    await verify(m, r.w, r.run)
  }
  toString = () => `payAddress(name ${this.nameIdx}, ${this.sats} sats)`
}

/** The webhook receiver goes down (503) or comes back; deliveries retry until it answers. */
class Receiver implements Cmd {
  constructor(readonly up: boolean) {}
  check = (m: Readonly<Model>) => m.receiverUp !== this.up
  async run(m: Model, r: Real) {
    m.log.push(this.toString())
    r.w.setReceiverUp(this.up)
    m.receiverUp = this.up
    await r.w.settle()
    await verify(m, r.w, r.run)
  }
  toString = () => `receiver ${this.up ? 'up' : 'down'}`
}

/**
 * The commands and their weights: creating receives, paying them, blocks and address claims come
 * more often, so that a short sequence already combines them (a short payment and its block, two
 * claims of one name).
 */
export function commandArbs(): fc.Arbitrary<Cmd>[] {
  const idx = fc.nat({ max: 20 })
  const weighted: Array<[number, fc.Arbitrary<Cmd>]> = [
    [
      3,
      fc
        .tuple(
          who,
          fc.constantFrom<'onchain' | 'ln' | 'vnd'>('onchain', 'ln', 'vnd'),
          fc.nat({ max: 2 }),
          fc.boolean(),
        )
        .map(([w, rail, a, c]) => new CreateReceive(w, rail, a, c)),
    ],
    [1, idx.map((i) => new Confirm(i))],
    [1, idx.map((i) => new Cancel(i))],
    [1, idx.map((i) => new PassDeadline(i))],
    [2, fc.tuple(idx, paidArb).map(([i, p]) => new PayOnchain(i, p))],
    [1, fc.tuple(who, fc.constantFrom(7_000n, 33_000n)).map(([w, s]) => new PayStatic(w, s))],
    [2, fc.constant(new Mine())],
    [1, idx.map((i) => new PayLightning(i))],
    [1, fc.tuple(idx, paidArb).map(([i, p]) => new TransferVnd(i, p))],
    [3, fc.tuple(who, fc.nat({ max: 1 })).map(([w, n]) => new ClaimAddress(w, n))],
    [1, who.map((w) => new ReleaseAddress(w))],
    [1, fc.tuple(fc.nat({ max: 1 }), fc.constantFrom(2_000n, 25_000n)).map(([n, s]) => new PayAddress(n, s))],
    [1, who.map((w) => new Fund(w))],
    [
      1,
      fc
        .tuple(
          who,
          fc.constantFrom(50_000n, 200_000n),
          fc.constantFrom<BankOutcome>('paid', 'failed', 'rejected'),
          fc.option(crashArb, { nil: undefined, freq: 3 }),
        )
        .map(([w, d, o, c]) => new QuotePayout(w, d, o, c)),
    ],
    [1, fc.tuple(idx, crashArb).map(([i, c]) => new ConfirmPayout(i, c))],
    [1, idx.map((i) => new LeaseLapses(i))],
    [2, idx.map((i) => new BankSettles(i))],
    [1, fc.tuple(who, fc.constantFrom(5_000n, 40_000n)).map(([w, s]) => new QuoteSend(w, s))],
    [1, fc.boolean().map((up) => new Receiver(up))],
  ]
  return weighted.flatMap(([n, arb]) => Array.from({ length: n }, () => arb))
}
