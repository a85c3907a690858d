/**
 * What Bitcoin Core's wallets hold and what they moved, for reconciliation (issue 18). The rail has
 * two wallets (see bitcoind.ts): the hot wallet that sends, and the watch-only wallet that receives
 * on the service's xpub addresses. Upstream: src/wallet/rpc/coins.cpp (getbalances, listunspent),
 * src/wallet/receive.cpp (GetBalance, CachedTxIsTrusted), src/wallet/rpc/transactions.cpp
 * (listtransactions: BTC amounts with a sign, `fee` negative on sends).
 *
 * Holdings (`reserves`): both wallets' `getbalances.mine`, trusted + untrusted_pending + immature.
 * A descriptor wallet reports watched outputs under `mine` too. Sends we made are already off the
 * balance (their change is trusted). `incoming` is what the watch wallet holds in outputs with fewer
 * confirmations than the service needs to credit a deposit (`listunspent 0 <N-1>`): arrived, not yet
 * in the books.
 *
 * Payments (`payments`): the hot wallet's sends (listtransactions `send` entries, summed per txid,
 * plus the fee once; abandoned, conflicted and replaced ones left out), and the watch wallet's
 * receipts (`receive` entries, summed per txid), each with at least N confirmations: a send or
 * deposit with fewer is not yet posted by the service, and is covered by `outgoing` or `incoming`.
 * The reference is the txid.
 */
import { asArray, asObject } from '../../rails/http-json.js'
import type { RailPayment, RailReserves } from '../../rails/rail.js'

export interface BitcoindReconcileDeps {
  /** One wallet RPC call, errors mapped to rail failures. */
  call(wallet: string, method: string, params: unknown[] | Record<string, unknown>): Promise<unknown>
  /** The watch wallet exists and is loaded (created empty when it never existed). */
  watchReady(): Promise<void>
  hotWallet: string
  watchWallet: string
  /** ONCHAIN_CONFIRMATIONS: the confirmations after which the service credits a deposit or posts a send. */
  creditConfirmations: number
  /** BTC decimal text (as the RPC writes numbers) to satoshis, exactly. */
  sats(value: unknown): bigint
}

/** listtransactions entries per page. */
const PAGE = 500
/** A bound on the entries read per wallet in one listing. */
const ENTRIES_MAX = 100_000
/**
 * How much further back than the window the wallets are read: a deposit received before the window
 * and credited inside it is still listed. Rail payments outside the window are matched against the
 * whole ledger, so reading more never makes an orphan.
 */
const LOOKBACK_MS = 2 * 86_400_000

export async function bitcoindReserves(deps: BitcoindReconcileDeps): Promise<RailReserves> {
  await deps.watchReady()
  const total = async (wallet: string) => {
    const mine = asObject(asObject(await deps.call(wallet, 'getbalances', []), 'getbalances').mine, 'mine')
    return deps.sats(mine.trusted) + deps.sats(mine.untrusted_pending) + deps.sats(mine.immature ?? '0')
  }
  const [hot, watch, young] = await Promise.all([
    total(deps.hotWallet),
    deps.watchWallet === deps.hotWallet ? Promise.resolve(0n) : total(deps.watchWallet),
    deps.call(deps.watchWallet, 'listunspent', {
      minconf: 0,
      maxconf: Math.max(0, deps.creditConfirmations - 1),
    }),
  ])
  let incoming = 0n
  for (const raw of asArray(young, 'listunspent'))
    incoming += deps.sats(asObject(raw, 'listunspent entry').amount)
  return { balances: { BTC: hot + watch }, incoming: { BTC: incoming } }
}

export async function bitcoindPayments(deps: BitcoindReconcileDeps, sinceMs: number): Promise<RailPayment[]> {
  await deps.watchReady()
  const from = sinceMs - LOOKBACK_MS
  const sends = new Map<string, RailPayment & { fee: bigint }>()
  for (const e of await entries(deps, deps.hotWallet, from)) {
    if (e.category !== 'send' || e.abandoned === true || typeof e.replaced_by_txid === 'string') continue
    if (!(Number(e.confirmations) >= deps.creditConfirmations)) continue
    const txid = String(e.txid)
    const p = sends.get(txid) ?? {
      ref: txid,
      direction: 'out',
      amountMinor: 0n,
      at: Number(e.time) * 1000,
      fee: 0n,
    }
    p.amountMinor += -deps.sats(e.amount)
    p.fee = -deps.sats(e.fee ?? '0')
    sends.set(txid, p)
  }
  const receipts = new Map<string, RailPayment>()
  for (const e of await entries(deps, deps.watchWallet, from)) {
    if (e.category !== 'receive' || !(Number(e.confirmations) >= deps.creditConfirmations)) continue
    const txid = String(e.txid)
    const p = receipts.get(txid) ?? { ref: txid, direction: 'in', amountMinor: 0n, at: Number(e.time) * 1000 }
    p.amountMinor += deps.sats(e.amount)
    receipts.set(txid, p)
  }
  return [
    ...[...sends.values()].map(({ fee, ...p }) => ({ ...p, amountMinor: p.amountMinor + fee })),
    ...receipts.values(),
  ]
}

/**
 * A wallet's listtransactions entries received since `fromMs`, newest pages first: `skip` counts
 * from the newest entry, and each page lists its entries oldest first.
 */
async function entries(
  deps: BitcoindReconcileDeps,
  wallet: string,
  fromMs: number,
): Promise<Array<Record<string, unknown>>> {
  const out: Array<Record<string, unknown>> = []
  for (let skip = 0; skip < ENTRIES_MAX; skip += PAGE) {
    const page = asArray(
      await deps.call(wallet, 'listtransactions', { label: '*', count: PAGE, skip, include_watchonly: true }),
      'listtransactions',
    ).map((raw) => asObject(raw, 'listtransactions entry'))
    let older = false
    for (const e of page) {
      if (Number(e.time) * 1000 >= fromMs) out.push(e)
      else older = true
    }
    if (page.length < PAGE || older) break
  }
  return out
}
