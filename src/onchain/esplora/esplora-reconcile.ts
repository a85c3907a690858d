/**
 * What the service's addresses hold and what moved through them, read from Esplora, for
 * reconciliation (issue 18). Esplora has no wallet: the rail is told which addresses are ours, the
 * receive addresses the service has handed out (derived from its xpub) and, where the operator's
 * signer says, the addresses its sends spend from and return change to. Upstream: electrs
 * src/rest.rs (`/address/:addr/utxo`, `/address/:addr/txs`, `/txs/chain/:last_seen_txid`) and
 * src/new_index/query.rs `utxo` (confirmed outputs not spent in the mempool, plus the mempool's).
 *
 * Holdings (`reserves`): the sum of every such address's unspent outputs, mempool included;
 * `incoming` the part on receive addresses with fewer confirmations than a deposit needs.
 * Payments (`payments`): per transaction with enough confirmations, what it paid to receive
 * addresses (`in`), and what left the signer's addresses (inputs from them less outputs back to
 * them: amount plus fee, `out`). The reference is the txid.
 */
import { checkTxid, asArray, asObject, TRANSPORT_CODES } from '../../rails/http-json.js'
import { RailFailure, type RailPayment, type RailReserves } from '../../rails/rail.js'
import { canonicalAddress } from '../../shared/address-spelling.js'

export interface EsploraReconcileDeps {
  getJson(path: string): Promise<unknown>
  tipHeight(): Promise<number>
  /** The receive addresses the service handed out. */
  receiveAddresses(): Promise<string[]>
  /** The addresses of the operator's signer (its coins and change), where it tells them. */
  walletAddresses(): Promise<string[]>
  creditConfirmations: number
}

/** Addresses read at once. */
const PARALLEL = 4
/** A bound on the confirmed-history pages read per address (25 transactions each). */
const CHAIN_PAGES_MAX = 40

export async function esploraReserves(deps: EsploraReconcileDeps): Promise<RailReserves> {
  const [receive, wallet, tip] = await Promise.all([
    deps.receiveAddresses(),
    deps.walletAddresses(),
    deps.tipHeight(),
  ])
  const receiving = new Set(receive.map(canonicalAddress))
  let balance = 0n
  let incoming = 0n
  await eachLimited([...new Set([...receive, ...wallet])], async (address) => {
    for (const raw of asArray(await deps.getJson(`/address/${address}/utxo`), 'utxo')) {
      const utxo = asObject(raw, 'utxo')
      const value = sats(utxo.value)
      balance += value
      if (
        receiving.has(canonicalAddress(address)) &&
        confirmations(utxo.status, tip) < deps.creditConfirmations
      )
        incoming += value
    }
  })
  return { balances: { BTC: balance }, incoming: { BTC: incoming } }
}

export async function esploraPayments(deps: EsploraReconcileDeps, sinceMs: number): Promise<RailPayment[]> {
  const [receive, wallet, tip] = await Promise.all([
    deps.receiveAddresses(),
    deps.walletAddresses(),
    deps.tipHeight(),
  ])
  const receiving = new Set(receive.map(canonicalAddress))
  const ours = new Set(wallet.map(canonicalAddress))
  const txs = new Map<string, Record<string, unknown>>()
  await eachLimited([...new Set([...receive, ...wallet])], async (address) => {
    for (const tx of await confirmedHistory(deps, address, sinceMs)) txs.set(String(tx.txid), tx)
  })
  const out: RailPayment[] = []
  for (const [txid, tx] of txs) {
    const status = asObject(tx.status ?? {}, 'tx status')
    if (confirmations(status, tip) < deps.creditConfirmations) continue
    const at = Number(status.block_time) * 1000
    let received = 0n
    let back = 0n
    let spent = 0n
    for (const raw of asArray(tx.vout, 'vout')) {
      const o = asObject(raw, 'vout entry')
      const address =
        typeof o.scriptpubkey_address === 'string' ? canonicalAddress(o.scriptpubkey_address) : ''
      if (receiving.has(address)) received += sats(o.value)
      if (ours.has(address)) back += sats(o.value)
    }
    for (const raw of asArray(tx.vin, 'vin')) {
      const prevout = asObject(raw, 'vin entry').prevout
      if (prevout === null || prevout === undefined) continue
      const p = asObject(prevout, 'prevout')
      if (typeof p.scriptpubkey_address === 'string' && ours.has(canonicalAddress(p.scriptpubkey_address)))
        spent += sats(p.value)
    }
    if (received > 0n) out.push({ ref: txid, direction: 'in', amountMinor: received, at })
    if (spent > 0n) out.push({ ref: txid, direction: 'out', amountMinor: spent - back, at })
  }
  return out
}

/**
 * The confirmed transactions of an address, newest first, down to those mined before `sinceMs`
 * (less a day of slack, for a block's time is only roughly the wall clock's).
 */
async function confirmedHistory(deps: EsploraReconcileDeps, address: string, sinceMs: number) {
  const from = sinceMs - 86_400_000
  const out: Array<Record<string, unknown>> = []
  let path = `/address/${address}/txs/chain`
  for (let pages = 0; pages < CHAIN_PAGES_MAX; pages++) {
    const page = asArray(await deps.getJson(path), 'chain txs').map((t) => asObject(t, 'tx'))
    let older = false
    for (const tx of page) {
      const status = asObject(tx.status ?? {}, 'tx status')
      if (Number(status.block_time) * 1000 < from) older = true
      else out.push(tx)
    }
    if (page.length === 0 || older) return out
    const last = String(page[page.length - 1]!.txid)
    checkTxid(last)
    path = `/address/${address}/txs/chain/${last}`
  }
  throw new RailFailure(
    'too_many_items',
    `esplora: more than ${CHAIN_PAGES_MAX} pages of history for ${address}`,
    false,
  )
}

function confirmations(status: unknown, tip: number): number {
  const s = asObject(status ?? {}, 'status')
  if (s.confirmed !== true) return 0
  return Math.max(1, tip - Number(s.block_height) + 1)
}

function sats(value: unknown): bigint {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)
    throw new RailFailure(TRANSPORT_CODES.badResponse, 'esplora: a value that is not whole satoshis', true)
  return BigInt(value)
}

async function eachLimited<T>(items: T[], work: (item: T) => Promise<void>): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({ length: Math.min(PARALLEL, items.length) }, async () => {
      while (next < items.length) await work(items[next++]!)
    }),
  )
}
