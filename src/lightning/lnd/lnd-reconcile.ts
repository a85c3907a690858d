/**
 * What an LND node holds and what it paid or received, for reconciliation (issue 18), through its
 * REST gateway. Upstream: lnrpc/lightning.swagger.json and rpcserver.go (WalletBalance,
 * ChannelBalance, ListPayments, ListInvoices); every int64 comes as a decimal string.
 *
 * Holdings (`reserves`), in satoshis:
 * - the channels (ChannelBalance, in msat): `local_balance` (our side of every open channel's
 *   commitment, HTLCs we sent still in flight already taken off), `pending_open_local_balance`
 *   (channels whose funding has not confirmed), `unsettled_local_balance` (HTLCs coming in to us,
 *   not settled yet: reported as `incoming` too);
 * - the node's on-chain wallet (WalletBalance, in sat): `total_balance` (outputs with any number of
 *   confirmations) plus `locked_balance` (outputs leased for a channel funding under way, which
 *   `total_balance` leaves out). Money moves between the two when a channel opens or closes.
 * Millisatoshis are rounded down to whole satoshis once, on the sum.
 *
 * Payments (`payments`): ListPayments without `include_incomplete` (only SUCCEEDED payments, by
 * payments/db/kv_store.go QueryPayments), value plus routing fee; ListInvoices, the SETTLED ones by
 * their `settle_date` and `amt_paid_msat` (what the payer actually paid).
 */
import { RailFailure, type RailPayment, type RailReserves } from '../../rails/rail.js'
import { TRANSPORT_CODES } from '../../rails/http-json.js'
import { ceilDiv } from '../../shared/amount.js'

/** A GET on the node's REST gateway that answers the body, or throws a RailFailure. */
export type LndGet = (path: string) => Promise<Record<string, unknown>>

/** Items asked for per page of ListPayments / ListInvoices (LND's own default is 100 for both). */
const PAGE = 500
/** A bound on the pages read in one listing: 200,000 items. */
const PAGES_MAX = 400
/**
 * How much further back than the window the node is read. Payments and invoices are listed by
 * creation date (payments/db/kv_store.go and channeldb/invoices.go filter on it), and the ledger
 * posts a payment when it completes and an invoice when it is paid: a payment started before the
 * window and finished inside it, or an invoice created before it and paid inside, must still be
 * listed. Payments older than the window are matched against the whole ledger, so reading more
 * never makes an orphan. Longer than any receive's expiry.
 */
const LOOKBACK_S = 2 * 86_400

export async function lndReserves(get: LndGet): Promise<RailReserves> {
  const [channels, wallet] = await Promise.all([get('/v1/balance/channels'), get('/v1/balance/blockchain')])
  const local = amountMsat(channels.local_balance, 'local_balance')
  const pendingOpen = amountMsat(channels.pending_open_local_balance, 'pending_open_local_balance')
  const unsettled = amountMsat(channels.unsettled_local_balance, 'unsettled_local_balance')
  const onchainSat =
    int(wallet.total_balance, 'total_balance') + int(wallet.locked_balance ?? '0', 'locked_balance')
  const msat = local + pendingOpen + unsettled + onchainSat * 1000n
  return { balances: { BTC: msat / 1000n }, incoming: { BTC: unsettled / 1000n } }
}

export async function lndPayments(get: LndGet, sinceMs: number): Promise<RailPayment[]> {
  const fromS = Math.max(0, Math.floor(sinceMs / 1000) - LOOKBACK_S)
  const out: RailPayment[] = []
  await paginate(
    (offset) => get(`/v1/payments?creation_date_start=${fromS}&index_offset=${offset}&max_payments=${PAGE}`),
    'payments',
    (p) => {
      // Without include_incomplete LND lists only SUCCEEDED payments; a later version might not.
      if (p.status !== 'SUCCEEDED') return
      const at = Number(int(p.creation_time_ns, 'creation_time_ns') / 1_000_000n)
      // As the send is booked (src/lightning/receive.ts): the amount, and the routing fee
      // rounded up to a satoshi. Rounding their msat sum down would miss a satoshi of every payment
      // whose fee is not whole, and report it as an amount mismatch.
      const amountMinor =
        ceilDiv(int(p.value_msat, 'value_msat'), 1000n) + ceilDiv(int(p.fee_msat, 'fee_msat'), 1000n)
      out.push({ ref: hash(p.payment_hash), direction: 'out', amountMinor, at })
    },
  )
  await paginate(
    (offset) =>
      get(`/v1/invoices?creation_date_start=${fromS}&index_offset=${offset}&num_max_invoices=${PAGE}`),
    'invoices',
    (inv) => {
      if (inv.state !== 'SETTLED') return
      const at = Number(int(inv.settle_date, 'settle_date')) * 1000
      if (at < fromS * 1000) return
      const ref = Buffer.from(String(inv.r_hash ?? ''), 'base64').toString('hex')
      if (ref.length !== 64) throw bad('an invoice without a 32-byte r_hash')
      out.push({ ref, direction: 'in', amountMinor: int(inv.amt_paid_msat, 'amt_paid_msat') / 1000n, at })
    },
  )
  return out
}

/**
 * Reads a list forwards from the start: `index_offset` is exclusive and the next page starts after
 * `last_index_offset`. LND's paginator counts only the items that pass the query's filters, so a
 * page shorter than asked for is the last one.
 */
async function paginate(
  page: (offset: string) => Promise<Record<string, unknown>>,
  field: 'payments' | 'invoices',
  each: (item: Record<string, unknown>) => void,
): Promise<void> {
  let offset = '0'
  for (let i = 0; i < PAGES_MAX; i++) {
    const body = await page(offset)
    const items = body[field] ?? []
    if (!Array.isArray(items)) throw bad(`${field} is not a list`)
    for (const item of items) {
      if (item === null || typeof item !== 'object') throw bad(`a ${field} entry is not an object`)
      each(item as Record<string, unknown>)
    }
    if (items.length < PAGE) return
    const next = String(body.last_index_offset ?? '')
    if (!/^\d{1,20}$/.test(next) || BigInt(next) <= BigInt(offset))
      throw bad(`${field}: no progress in paging`)
    offset = next
  }
  throw new RailFailure('too_many_items', `LND lists more than ${PAGE * PAGES_MAX} ${field}`, false)
}

function hash(value: unknown): string {
  if (typeof value !== 'string' || !/^[0-9a-f]{64}$/.test(value)) throw bad('a payment without its hash')
  return value
}

/** An `lnrpc.Amount` (`{ sat, msat }`, uint64 as strings): its msat. Absent counts as none. */
function amountMsat(value: unknown, field: string): bigint {
  if (value === undefined || value === null) return 0n
  if (typeof value !== 'object') throw bad(`${field} is not an amount`)
  return int((value as Record<string, unknown>).msat, `${field}.msat`)
}

function int(value: unknown, field: string): bigint {
  if (typeof value === 'string' && /^\d{1,20}$/.test(value)) return BigInt(value)
  throw bad(`${field} is not a non-negative integer string: ${JSON.stringify(value)}`)
}

function bad(text: string): RailFailure {
  return new RailFailure(TRANSPORT_CODES.badResponse, `LND: ${text}`, true)
}
