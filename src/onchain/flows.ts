import { postEntry, voidHolds } from '../ledger/ledger.js'
import { validateAddress } from './address.js'
import { buildBip21, satsToBtcText } from './bip21.js'
import { estimateSendVsize, networkFeeSats } from './vsize.js'
import { isPassingRefusal } from './refusal.js'
import { RailFailure, type OnchainTxState } from '../rails/rail.js'
import type { Queryable } from '../db/db.js'
import { formatMinor } from '../shared/amount.js'
import { assert, InvariantError } from '../shared/assert.js'
import { fieldError } from '../shared/errors.js'
import { ONE } from '../rates/fx.js'
import type { Flow } from '../transactions/flow.js'
import { requestedAmount, walletAmounts, walletOutPostings } from '../transactions/money.js'
import { isMoneyError } from '../transactions/errors.js'
import { decimalDetail } from '../transactions/present.js'
import { getTxn, recordSendRate, setDestDetails } from '../transactions/repository.js'
import { onchainSendDetails, type OnchainSendDetails } from './send-details.js'
import type { Txn } from '../transactions/txn.js'
import {
  checkAgainAt,
  invoicePageUrl,
  newPageId,
  nodeCall,
  receiveQuote,
  wakeWorkers,
  type BitcoinDeps,
} from '../bitcoin/common.js'
import { approvedAt } from '../approvals/repository.js'
import { advanceDeposit, nextAddressCheck, newWatchedAddress, sweepAddress } from './deposits.js'

/** The smallest on-chain send: 0.00001 BTC. */
export const ONCHAIN_SEND_MIN_SATS = 1_000n
/** Confirmation target of the fee estimate we quote: about half an hour. */
export const FEE_TARGET_BLOCKS = 3
const ADDRESS_FIELD = 'destReq.reqDetails.address'
/** A sent or received transaction is asked about for confirmations this often; `mine` wakes it at once. */
const CONFIRMATION_POLL_MS = 30_000
const RAIL_RETRY_MS = 15_000
/** How long a send waits for the network fee to come back within its quote before it fails. */
export const FEE_WAIT_MAX_MS = 30 * 60_000
/** How often the fee is looked at again meanwhile. */
const FEE_RECHECK_MS = 60_000

/**
 * On-chain receive: confirm hands out a fresh BIP84 address (srcintent) with a BIP21 URI and a
 * hosted page. The deposit watcher (deposits.ts) moves it to srccreated when a payment is seen;
 * `advance` then counts confirmations and credits what arrived (completed). Unpaid at its expiry,
 * it expires; the address stays watched, and a later payment becomes a `deposit` of its own.
 */
export function onchainReceiveFlow(deps: BitcoinDeps): Flow {
  const { config } = deps
  const now = deps.now ?? Date.now

  return {
    kind: 'onchain_receive',
    async quote({ input }) {
      return receiveQuote(input, config.fees.onchain_receive!, { address: null, invoicePageUrl: null })
    },

    async prepareConfirm(txn) {
      const account = await deps.accounts.get(txn.accountId)
      return { ...(await newWatchedAddress(deps)), label: account?.displayName }
    },

    async confirm(q, txn, ctx) {
      const prepared = ctx.prepared as { address: string; index: number; label?: string }
      assert(prepared, 'the address was derived before confirm')
      const expiresAt = ctx.now + config.onchainReceiveTtlS * 1000
      await q.query(
        `INSERT INTO onchain_addresses (address, account_id, txn_id, kind, derivation_index, expires_at, next_check_at, created_at)
         VALUES ($1, $2, $3, 'txn', $4, $5, $6, $7)`,
        [
          prepared.address,
          txn.accountId,
          txn.id,
          prepared.index,
          expiresAt,
          nextAddressCheck({ kind: 'txn', expires_at: BigInt(expiresAt) }, ctx.now),
          ctx.now,
        ],
      )
      const pageId = newPageId()
      const amountBtc = satsToBtcText(txn.srcAmountMinor)
      return ctx.transition('srcintent', {
        srcDetails: {
          address: prepared.address,
          amount: decimalDetail(formatMinor(txn.srcAmountMinor, 'BTC')),
          invoice: buildBip21({
            address: prepared.address,
            amountBtc,
            ...(prepared.label ? { label: prepared.label } : {}),
          }),
          invoicePageUrl: invoicePageUrl(config, pageId),
          expiredAt: new Date(expiresAt).toISOString(),
        },
        pageId: pageId,
        railRef: prepared.address,
        expiresAtMs: expiresAt,
        nextCheckAtMs: expiresAt,
      })
    },

    async advance(txn) {
      if (txn.state === 'srccreated') return advanceDeposit(deps, txn, RAIL_RETRY_MS, CONFIRMATION_POLL_MS)
      if (txn.state !== 'srcintent') return
      if (now() < txn.expiresAtMs) {
        await checkAgainAt(deps.db, txn, txn.expiresAtMs)
        return
      }
      // Look once more before giving up: a payment seen now still settles this receive.
      try {
        await sweepAddress(deps, String(txn.srcDetails.address))
      } catch (err) {
        if (!(err instanceof RailFailure)) throw err
        await checkAgainAt(deps.db, txn, now() + RAIL_RETRY_MS)
        return
      }
      await deps.transactions().apply(txn.id, async (_q, t, move) => {
        if (t.state === 'srcintent') await move('expired', { msg: 'address_expired' })
      })
    },
  }
}

/** A deposit to an address no waiting receive was made for: created by the watcher, completed here. */
export function depositFlow(deps: BitcoinDeps): Flow {
  return {
    kind: 'deposit',
    async quote() {
      throw new InvariantError('deposits are created by the watcher, never quoted')
    },
    async confirm() {
      throw new InvariantError('deposits are created by the watcher, never confirmed')
    },
    async advance(txn) {
      if (txn.state === 'srccreated') await advanceDeposit(deps, txn, RAIL_RETRY_MS, CONFIRMATION_POLL_MS)
    },
  }
}

/**
 * On-chain send: quote checks the address and prices the network fee from the node's estimate;
 * confirm holds amount + fees (srccreated). The worker estimates the fee again and broadcasts at
 * the current rate, never above the quoted one (idempotent by transaction id), then moves it to
 * destsent with the txid, keeping the hold. Once confirmed the hold is posted (completed). A send
 * the network refused, or one whose transaction can never confirm (refused on rebroadcast, or in
 * conflict with the chain), fails and its hold is released: nothing was posted, so nothing is
 * reversed. A fee bump (`bumpOnchainSend`) replaces the transaction; the send follows the txid.
 */
export function onchainSendFlow(deps: BitcoinDeps): Flow {
  const { config, rails } = deps
  const now = deps.now ?? Date.now

  /** Release the hold and end the send failed, from the state the caller saw (once: under the row lock). */
  async function fail(txnId: string, from: 'srccreated' | 'destsent', reason: string) {
    await deps.transactions().apply(txnId, async (q, t, move) => {
      if (t.state !== from) return
      await releaseSend(deps, q, t, now())
      await move('failed', { msg: reason })
    })
  }

  function sendInput(txn: Txn, feeRateSatPerVb: bigint) {
    return {
      address: onchainSendDetails(txn).address,
      amountSats: txn.destAmountMinor,
      feeRateSatPerVb,
      requestId: txn.id,
    }
  }

  /**
   * The rate to send at: the network's current estimate, never above the rate the customer was
   * quoted (the network fee they pay was priced on it). Null, with the send put off, while the
   * network wants more than that; failed once it has for longer than FEE_WAIT_MAX_MS.
   */
  async function sendRate(txn: Txn): Promise<bigint | null> {
    const quoted = BigInt(onchainSendDetails(txn).feeRateSatPerVb)
    let current: bigint
    try {
      current = await rails.onchain.estimateFeeRate(FEE_TARGET_BLOCKS)
    } catch (err) {
      if (!(err instanceof RailFailure)) throw err
      // No estimate now: the quoted rate was the network's own a moment ago and is the cap anyway.
      if (!err.retryable) return quoted
      await checkAgainAt(deps.db, txn, now() + RAIL_RETRY_MS)
      return null
    }
    if (current <= quoted) return current
    // The wait counts from when the send was free to go: its quote, or its approval when it waited
    // for one (docs/operators.md, "Approvals").
    const waitedMs = now() - ((await approvedAt(deps.db, txn.id)) ?? txn.createdAtMs)
    if (waitedMs >= FEE_WAIT_MAX_MS) {
      deps.log?.warn(
        { txnId: txn.id, quotedSatPerVb: quoted.toString(), neededSatPerVb: current.toString() },
        'on-chain send failed: the network fee rose above the quoted rate',
      )
      await fail(txn.id, 'srccreated', 'network_fee_above_quote')
      return null
    }
    deps.log?.warn(
      { txnId: txn.id, quotedSatPerVb: quoted.toString(), neededSatPerVb: current.toString() },
      'on-chain send waits: the network fee is above the quoted rate',
    )
    await checkAgainAt(deps.db, txn, now() + FEE_RECHECK_MS)
    return null
  }

  async function broadcast(txn: Txn) {
    // A send already attempted (its answer lost, a crash) may be in the network: it is only ever
    // asked for again at the same rate, never re-priced or failed for its fee.
    const attempted = onchainSendDetails(txn).feeRateSentSatPerVb
    let rate: bigint
    if (attempted !== undefined) rate = BigInt(String(attempted))
    else {
      const chosen = await sendRate(txn)
      if (chosen === null) return
      rate = chosen
      await recordSendRate(deps.db, txn.id, Number(rate))
    }
    let txid: string
    try {
      ;({ txid } = await rails.onchain.send(sendInput(txn, rate)))
    } catch (err) {
      if (!(err instanceof RailFailure)) throw err
      if (err.retryable) {
        deps.log?.warn({ txnId: txn.id, code: err.code, error: err.message }, 'on-chain send will be retried')
        await checkAgainAt(deps.db, txn, now() + RAIL_RETRY_MS)
      } else {
        deps.log?.warn({ txnId: txn.id, code: err.code, error: err.message }, 'on-chain send refused')
        await fail(txn.id, 'srccreated', err.code)
      }
      return
    }
    await deps.transactions().apply(txn.id, async (_q, t, move) => {
      if (t.state !== 'srccreated') return
      const at = now()
      // The hold stays open: the money is posted once the transaction confirms.
      await move('destsent', {
        destDetails: { ...t.destDetails, txid, feeRateSentSatPerVb: Number(rate) },
        nextCheckAtMs: at + CONFIRMATION_POLL_MS,
      })
    })
  }

  /** Put the send on the txid of the transaction that replaced its own (a fee bump). */
  async function followReplacement(txn: Txn, replacement: string) {
    await deps.transactions().apply(txn.id, async (q, t) => {
      if (t.state !== 'destsent' || onchainSendDetails(t).txid !== onchainSendDetails(txn).txid) return
      const replaced = onchainSendDetails(t).replacedTxids ?? []
      await setDestDetails(
        q,
        t.id,
        {
          ...t.destDetails,
          txid: replacement,
          replacedTxids: [...replaced, String(onchainSendDetails(t).txid)],
        },
        now(),
      )
    })
  }

  async function watchConfirmations(txn: Txn) {
    const txid = String(onchainSendDetails(txn).txid)
    let tx: OnchainTxState | null
    try {
      tx = await rails.onchain.getTransaction(txid)
    } catch (err) {
      if (!(err instanceof RailFailure)) throw err
      await checkAgainAt(deps.db, txn, now() + RAIL_RETRY_MS)
      return
    }
    if (tx?.replacedBy) return followReplacement(txn, tx.replacedBy)
    if (tx?.conflictedDepth !== undefined) {
      // Another transaction spent the same coins and is in the chain: ours can never confirm. Once
      // that is as deep as a deposit needs to be credited, the money is known not to have left.
      if (tx.conflictedDepth >= config.onchainConfirmations) {
        deps.log?.error({ txnId: txn.id, txid }, 'on-chain send conflicted by a transaction in the chain')
        await fail(txn.id, 'destsent', 'conflicted')
      } else await checkAgainAt(deps.db, txn, now() + CONFIRMATION_POLL_MS)
      return
    }
    if (tx === null && !rails.onchain.resendsSameTransaction) {
      // The wallet that sent it no longer knows it. Sending again could pay twice: a person decides.
      deps.log?.error({ txnId: txn.id, txid }, 'the node no longer knows an on-chain send')
      await deps.transactions().apply(txn.id, async (_q, t, move) => {
        if (t.state === 'destsent') await move('error', { msg: 'transaction_unknown' })
      })
      return
    }
    if (tx === null || tx.inMempool === false) return rebroadcast(txn, txid)
    if (tx.confirmations < config.onchainConfirmations) {
      await checkAgainAt(deps.db, txn, now() + CONFIRMATION_POLL_MS)
      return
    }
    await deps.transactions().apply(txn.id, async (q, t, move) => {
      if (t.state !== 'destsent') return
      const wallet = await deps.accounts.walletFor(q, t.accountId, 'BTC')
      assert(wallet, 'the sending account has a BTC wallet')
      // A send that reached destsent before holds were kept there was posted then; never twice.
      if (!(await hasEntry(q, t.id)))
        await postEntry(q, {
          txnId: t.id,
          kind: 'onchain_send',
          now: now(),
          settleHolds: true,
          postings: walletOutPostings(t, wallet.id, { system: 'onchain' }),
        })
      await move('completed', { srcSettledMinor: t.srcAmountMinor, destSettledMinor: t.destAmountMinor })
    })
  }

  /**
   * The node does not know the send, or holds it outside its mempool: offer the same transaction
   * again (the rail rebroadcasts it, never builds another). Refused, it can never confirm, and the
   * send fails with its hold released.
   */
  async function rebroadcast(txn: Txn, txid: string) {
    const rate = BigInt(
      onchainSendDetails(txn).feeRateSentSatPerVb ?? onchainSendDetails(txn).feeRateSatPerVb,
    )
    try {
      const again = await rails.onchain.send(sendInput(txn, rate))
      if (again.txid !== txid) return followReplacement(txn, again.txid)
    } catch (err) {
      if (!(err instanceof RailFailure)) throw err
      if (err.retryable) {
        await checkAgainAt(deps.db, txn, now() + RAIL_RETRY_MS)
        return
      }
      if (isPassingRefusal(err.message)) {
        // Refused for now (a fee, a mempool conflict): other nodes may still hold it and a miner
        // include it, so it is not dead. It waits, in the log and the stuck list; a fee bump helps.
        deps.log?.warn(
          { txnId: txn.id, txid, error: err.message },
          'on-chain send not relayed by the node for now',
        )
        await checkAgainAt(deps.db, txn, now() + CONFIRMATION_POLL_MS)
        return
      }
      deps.log?.error(
        { txnId: txn.id, txid, code: err.code, error: err.message },
        'on-chain send refused on rebroadcast',
      )
      await fail(txn.id, 'destsent', err.code === 'rejected' ? 'broadcast_refused' : err.code)
      return
    }
    await checkAgainAt(deps.db, txn, now() + CONFIRMATION_POLL_MS)
  }

  return {
    kind: 'onchain_send',
    async quote({ input }) {
      const raw = input.destReq.reqDetails?.address
      if (typeof raw !== 'string' || raw.trim() === '')
        throw fieldError('invalid_address', ADDRESS_FIELD, 'is required')
      const check = validateAddress(raw.trim(), config.network)
      if (!check.ok) throw fieldError('invalid_address', ADDRESS_FIELD, check.issue)
      // Stored, sent and compared in its one canonical spelling (bech32 in lower case).
      const address = check.address
      const requested = requestedAmount(input)
      if (isMoneyError(requested)) return requested
      const amountField = requested.side === 'src' ? 'sourceReq.amtRequested' : 'destReq.amtRequested'
      const belowMinimum = () =>
        fieldError(
          'amount_below_minimum',
          amountField,
          `the smallest on-chain send is ${formatMinor(ONCHAIN_SEND_MIN_SATS, 'BTC')} BTC`,
        )
      if (requested.minor < ONCHAIN_SEND_MIN_SATS) throw belowMinimum()
      const feeRate = await nodeCall('Bitcoin node fee estimate', () =>
        rails.onchain.estimateFeeRate(FEE_TARGET_BLOCKS),
      )
      const networkFee = networkFeeSats(feeRate, estimateSendVsize(check.type))
      const amounts = walletAmounts({
        requested,
        srcCcy: 'BTC',
        destCcy: 'BTC',
        fx: ONE,
        feeRule: config.fees.onchain_send!,
        networkFee,
        deduct: input.deductNetworkFeesFromDest,
      })
      if (isMoneyError(amounts)) return amounts
      if (amounts.destAmount < ONCHAIN_SEND_MIN_SATS) throw belowMinimum()
      return {
        ...amounts,
        srcNetworkFee: networkFee,
        fxRate: ONE,
        srcDetails: {},
        destDetails: { address, feeRateSatPerVb: Number(feeRate) } satisfies OnchainSendDetails,
        fromWallet: true,
      }
    },

    async confirm(q, _txn, ctx) {
      await wakeWorkers(q)
      return ctx.transition('srccreated', { nextCheckAtMs: ctx.now })
    },

    async advance(txn) {
      if (txn.state === 'srccreated') return broadcast(txn)
      if (txn.state === 'destsent') return watchConfirmations(txn)
    },
  }
}

/** Whether a transaction has a journal entry (money moved). */
async function hasEntry(q: Queryable, txnId: string): Promise<boolean> {
  const { rows } = await q.query('SELECT 1 FROM journal_entries WHERE txn_id = $1 LIMIT 1', [txnId])
  return rows.length > 0
}

/**
 * Give back what a send that never left holds: its open hold, or, for a send posted at destsent
 * before holds were kept until confirmation, the entry reversed by an opposite one.
 */
async function releaseSend(deps: BitcoinDeps, q: Queryable, txn: Txn, at: number): Promise<void> {
  await voidHolds(q, txn.id, at)
  if (txn.state !== 'destsent' || !(await hasEntry(q, txn.id))) return
  const wallet = await deps.accounts.walletFor(q, txn.accountId, 'BTC')
  assert(wallet, 'the sending account has a BTC wallet')
  await postEntry(q, {
    txnId: txn.id,
    kind: 'onchain_send_reversal',
    now: at,
    postings: walletOutPostings(txn, wallet.id, { system: 'onchain' }).map((p) => ({
      ...p,
      amount: -p.amount,
    })),
  })
}

/** What `bumpOnchainSend` reports. */
export interface BumpResult {
  txnId: string
  replacedTxid: string
  txid: string
  feeRateSatPerVb: number
  feeSats?: string
}

/**
 * The operator's fee bump of a stuck send (`svcpay onchain bumpfee`): the rail replaces the
 * transaction (BIP 125) at `feeRateSatPerVb`, by default the network's current estimate, and the
 * send follows the replacement. The extra fee is the operator's: the customer paid the quote.
 */
export async function bumpOnchainSend(
  deps: BitcoinDeps,
  txnId: string,
  feeRateSatPerVb?: bigint,
): Promise<BumpResult | { error: string; message: string }> {
  const txn = await getTxn(deps.db, txnId)
  if (!txn || txn.kind !== 'onchain_send')
    return { error: 'not_found', message: 'no on-chain send with that id' }
  if (txn.state !== 'destsent')
    return {
      error: 'invalid_state',
      message: `the send is ${txn.state}: only a broadcast send (destsent) can be bumped`,
    }
  const bump = deps.rails.onchain.bumpFee
  if (!bump)
    return { error: 'not_supported', message: `the ${deps.rails.onchain.name} rail cannot bump fees` }
  const txid = String(onchainSendDetails(txn).txid)
  try {
    // By default the next-block estimate, and at least 1 sat/vB more than the send pays now: a
    // replacement must pay the incremental relay fee on top (BIP 125 rule 4).
    const sent = BigInt(
      onchainSendDetails(txn).feeRateSentSatPerVb ?? onchainSendDetails(txn).feeRateSatPerVb,
    )
    let rate = feeRateSatPerVb
    if (rate === undefined) {
      const estimate = await deps.rails.onchain.estimateFeeRate(1)
      rate = estimate > sent ? estimate : sent + 1n
    }
    const result = await bump.call(deps.rails.onchain, txid, rate)
    await deps.transactions().apply(txn.id, async (q, t) => {
      if (t.state !== 'destsent' || onchainSendDetails(t).txid !== txid) return
      const replaced = onchainSendDetails(t).replacedTxids ?? []
      await setDestDetails(q, t.id, {
        ...t.destDetails,
        txid: result.txid,
        replacedTxids: [...replaced, txid],
        feeRateSentSatPerVb: Number(rate),
      })
    })
    deps.log?.warn(
      { txnId, replacedTxid: txid, txid: result.txid, feeRateSatPerVb: rate.toString() },
      'on-chain send fee bumped',
    )
    return {
      txnId,
      replacedTxid: txid,
      txid: result.txid,
      feeRateSatPerVb: Number(rate),
      ...(result.feeSats !== undefined ? { feeSats: result.feeSats.toString() } : {}),
    }
  } catch (err) {
    if (!(err instanceof RailFailure)) throw err
    return { error: err.code, message: err.message }
  }
}
