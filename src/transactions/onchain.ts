import { postEntry, voidHolds } from '../ledger/ledger.js'
import { validateAddress } from '../rails/onchain/address.js'
import { buildBip21, satsToBtcText } from '../rails/onchain/bip21.js'
import { estimateSendVsize, networkFeeSats } from '../rails/onchain/vsize.js'
import { RailFailure } from '../rails/rail.js'
import { formatMinor } from '../shared/amount.js'
import { assert, InvariantError } from '../shared/assert.js'
import { fieldError } from '../shared/errors.js'
import { ONE } from '../rates/fx.js'
import type { Flow } from './flow.js'
import { requestedAmount, walletAmounts, walletOutPostings } from './money.js'
import { decimalDetail } from './present.js'
import type { TxnRow } from './repository.js'
import {
  checkAgainAt,
  invoicePageUrl,
  newPageId,
  nodeCall,
  receiveQuote,
  wakeWorkers,
  type BitcoinDeps,
} from './bitcoin-common.js'
import { advanceDeposit, nextAddressCheck, newWatchedAddress, sweepAddress } from './deposits.js'

/** The smallest on-chain send: 0.00001 BTC. */
export const ONCHAIN_SEND_MIN_SATS = 1_000n
/** Confirmation target of the fee estimate we quote: about half an hour. */
export const FEE_TARGET_BLOCKS = 3
const ADDRESS_FIELD = 'destReq.reqDetails.address'
/** A sent or received transaction is asked about for confirmations this often; `mine` wakes it at once. */
const CONFIRMATION_POLL_MS = 30_000
const RAIL_RETRY_MS = 15_000

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
      const account = await deps.accounts.get(txn.account_id)
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
          txn.account_id,
          txn.id,
          prepared.index,
          expiresAt,
          nextAddressCheck({ kind: 'txn', expires_at: BigInt(expiresAt) }, ctx.now),
          ctx.now,
        ],
      )
      const pageId = newPageId()
      const amountBtc = satsToBtcText(txn.src_amount)
      return ctx.transition('srcintent', {
        src_details: {
          address: prepared.address,
          amount: decimalDetail(formatMinor(txn.src_amount, 'BTC')),
          invoice: buildBip21({
            address: prepared.address,
            amountBtc,
            ...(prepared.label ? { label: prepared.label } : {}),
          }),
          invoicePageUrl: invoicePageUrl(config, pageId),
          expiredAt: new Date(expiresAt).toISOString(),
        },
        page_id: pageId,
        rail_ref: prepared.address,
        expires_at: BigInt(expiresAt),
        next_check_at: expiresAt,
      })
    },

    async advance(txn) {
      if (txn.state === 'srccreated') return advanceDeposit(deps, txn, RAIL_RETRY_MS, CONFIRMATION_POLL_MS)
      if (txn.state !== 'srcintent') return
      if (BigInt(now()) < txn.expires_at) {
        await checkAgainAt(deps.db, txn, Number(txn.expires_at))
        return
      }
      // Look once more before giving up: a payment seen now still settles this receive.
      try {
        await sweepAddress(deps, String(txn.src_details.address))
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
 * confirm holds amount + fees (srccreated). The worker broadcasts (idempotent by transaction id),
 * posts the entry and moves it to destsent with the txid, then to completed once confirmed.
 */
export function onchainSendFlow(deps: BitcoinDeps): Flow {
  const { config, rails } = deps
  const now = deps.now ?? Date.now

  async function fail(txnId: string, reason: string) {
    await deps.transactions().apply(txnId, async (q, t, move) => {
      if (t.state !== 'srccreated') return
      await voidHolds(q, t.id, now())
      await move('failed', { msg: reason })
    })
  }

  async function broadcast(txn: TxnRow) {
    let txid: string
    try {
      ;({ txid } = await rails.onchain.send({
        address: String(txn.dest_details.address),
        amountSats: txn.dest_amount,
        feeRateSatPerVb: BigInt(String(txn.dest_details.feeRateSatPerVb)),
        requestId: txn.id,
      }))
    } catch (err) {
      if (!(err instanceof RailFailure)) throw err
      if (err.retryable) await checkAgainAt(deps.db, txn, now() + RAIL_RETRY_MS)
      else await fail(txn.id, err.code)
      return
    }
    await deps.transactions().apply(txn.id, async (q, t, move) => {
      if (t.state !== 'srccreated') return
      const wallet = await deps.accounts.walletFor(q, t.account_id, 'BTC')
      assert(wallet, 'the sending account has a BTC wallet')
      const at = now()
      await postEntry(q, {
        txnId: t.id,
        kind: 'onchain_send',
        now: at,
        settleHolds: true,
        postings: walletOutPostings(t, wallet.id, { system: 'onchain' }),
      })
      await move('destsent', {
        dest_details: { ...t.dest_details, txid },
        src_settled: t.src_amount,
        next_check_at: at + CONFIRMATION_POLL_MS,
      })
    })
  }

  async function watchConfirmations(txn: TxnRow) {
    let tx: { confirmations: number } | null
    try {
      tx = await rails.onchain.getTransaction(String(txn.dest_details.txid))
    } catch (err) {
      if (!(err instanceof RailFailure)) throw err
      await checkAgainAt(deps.db, txn, now() + RAIL_RETRY_MS)
      return
    }
    if (!tx || tx.confirmations < config.onchainConfirmations) {
      await checkAgainAt(deps.db, txn, now() + CONFIRMATION_POLL_MS)
      return
    }
    await deps.transactions().apply(txn.id, async (_q, t, move) => {
      if (t.state === 'destsent') await move('completed', { dest_settled: t.dest_amount })
    })
  }

  return {
    kind: 'onchain_send',
    async quote({ input }) {
      const raw = input.destReq.reqDetails?.address
      if (typeof raw !== 'string' || raw.trim() === '')
        throw fieldError('invalid_address', ADDRESS_FIELD, 'is required')
      const address = raw.trim()
      const check = validateAddress(address, config.network)
      if (!check.ok) throw fieldError('invalid_address', ADDRESS_FIELD, check.issue)
      const requested = requestedAmount(input)!
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
      if (amounts.destAmount < ONCHAIN_SEND_MIN_SATS) throw belowMinimum()
      return {
        ...amounts,
        srcNetworkFee: networkFee,
        fxRate: ONE,
        srcDetails: {},
        destDetails: { address, feeRateSatPerVb: Number(feeRate) },
        fromWallet: true,
      }
    },

    async confirm(q, _txn, ctx) {
      await wakeWorkers(q)
      return ctx.transition('srccreated', { next_check_at: ctx.now })
    },

    async advance(txn) {
      if (txn.state === 'srccreated') return broadcast(txn)
      if (txn.state === 'destsent') return watchConfirmations(txn)
    },
  }
}
