import { decodeInvoice } from '../lightning/bolt11.js'
import type { TxnKind } from '../transactions/state-machine.js'
import { bankAccount, normalise, type Destination, type DestType } from './normalise.js'

/**
 * Where each kind that sends money out pays, read from its destination details: one line per kind,
 * so a new send or payout method (issue 33's `eth`) adds one line here. The screening gate refuses
 * to start when a kind that sends out has no line (screening.ts), so no method is left unscreened.
 */
type Details = Record<string, unknown>
type Extract = (details: Details) => Destination[]

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined)

/** One destination of `type` from a field of the details, if it is one. */
function field(type: DestType, name: string): Extract {
  return (details) => one(type, text(details[name]))
}

function one(type: DestType, raw: string | undefined): Destination[] {
  const value = raw === undefined ? undefined : normalise(type, raw)
  return value === undefined ? [] : [{ type, value }]
}

/**
 * A Lightning send: the payee node of its invoice (decoded and verified: the key that signed it),
 * and the Lightning Address or LNURL the invoice was fetched from. A send to an address of this
 * service has no invoice until its confirm, and pays no outside node.
 */
const lightning: Extract = (details) => {
  const out: Destination[] = []
  const invoice = text(details.paymentRequest)
  if (invoice) {
    const decoded = decodeInvoice(invoice)
    if (!('error' in decoded)) out.push(...one('lightning_node', decoded.payeeNodeKey))
  }
  out.push(...one('lightning', text(details.lnAddress)), ...one('lightning', text(details.lnurl)))
  return out
}

const bank: Extract = (details) => {
  const institution = text(details.institutionCode)
  const number = text(details.bankAcctNum)
  const value = institution && number ? bankAccount(institution, number) : undefined
  return value === undefined ? [] : [{ type: 'bank', value }]
}

export const DESTINATIONS_BY_KIND: Readonly<Record<TxnKind, Extract>> = {
  ln_send: lightning,
  onchain_send: field('bitcoin', 'address'),
  tron_payout: field('tron', 'address'),
  vnd_payout: bank,
  // issue 33's USDT over Ethereum (on main; this line waits for it harmlessly until the merge).
  eth_payout: field('ethereum', 'address'),
}

/** The destinations a transaction of `kind` pays, from its destination details. */
export function destinationsOf(kind: TxnKind, details: Details): Destination[] {
  return DESTINATIONS_BY_KIND[kind]?.(details) ?? []
}

/** Whether screening knows where `kind` pays. */
export function screensKind(kind: TxnKind): boolean {
  return Object.hasOwn(DESTINATIONS_BY_KIND, kind)
}
