import { decodeInvoice } from '../lightning/bolt11.js'
import type { Txn } from '../transactions/txn.js'

/**
 * Where a send goes, normalised so that one destination is always written the same way: the key the
 * velocity rules (a destination never paid before), the allow-lists and the operator's tools use.
 * Keyed by the destination method, one line per method: a new kind of send adds its line here. A
 * method without a line has no destination
 * key (its sends are still counted; the allow-list mode refuses them, since nothing can be approved).
 */
type Destination = (details: Record<string, unknown>) => string | undefined

const text = (v: unknown): string | undefined =>
  typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined

/** A Lightning payee: the node that signed the invoice; else the address or LNURL it came from. */
const lightning: Destination = (d) => {
  const invoice = text(d.paymentRequest)
  if (invoice) {
    const decoded = decodeInvoice(invoice)
    if (!('error' in decoded)) return `ln:${decoded.payeeNodeKey.toLowerCase()}`
  }
  const address = text(d.lnAddress) ?? text(d.localUsername)
  if (address) return `lnaddr:${address.toLowerCase()}`
  const lnurl = text(d.lnurl)
  return lnurl ? `lnurl:${lnurl.toLowerCase()}` : undefined
}

export const DESTINATIONS: Readonly<Record<string, Destination>> = {
  lightning,
  // Bech32 is case-insensitive and stored lower-case (migration 020); base58 addresses keep their case.
  'on-chain': (d) => {
    const a = text(d.address)
    return a ? `btc:${/^(bc|tb|bcrt)1/i.test(a) ? a.toLowerCase() : a}` : undefined
  },
  // TRON's base58check addresses are case-sensitive.
  tron: (d) => {
    const a = text(d.address)
    return a ? `tron:${a}` : undefined
  },
  // An Ethereum address: hex, so its EIP-55 capitals are spelling, not identity.
  eth: (d) => {
    const a = text(d.address)
    return a ? `eth:${a.toLowerCase()}` : undefined
  },
  // A bank account: the institution's code and the account number, digits only.
  'vnd-instant': (d) => {
    const bank = text(d.institutionCode)
    const acct = text(d.bankAcctNum)
    return bank && acct ? `bank:${bank.toUpperCase()}:${acct.replace(/[\s-]/g, '')}` : undefined
  },
}

/** The normalised destination of a send; undefined for a method without one. */
export function destinationOf(txn: Pick<Txn, 'destMethod' | 'destDetails'>): string | undefined {
  return DESTINATIONS[txn.destMethod]?.(txn.destDetails)
}

/**
 * An operator's spelling of a destination for an allow-list (`tron:T…`, `eth:0x…`, `btc:bc1…`, `ln:<node key>`,
 * `bank:<institution>:<account>`), normalised as a send's would be; undefined when it is none of them.
 */
export function normaliseDestination(input: string): string | undefined {
  const m = /^([a-z]+):(.+)$/i.exec(input.trim())
  if (!m) return undefined
  const [, scheme, rest] = m as unknown as [string, string, string]
  switch (scheme.toLowerCase()) {
    case 'ln':
      return /^(02|03)[0-9a-f]{64}$/i.test(rest) ? `ln:${rest.toLowerCase()}` : undefined
    case 'lnaddr':
    case 'lnurl':
      return `${scheme.toLowerCase()}:${rest.toLowerCase()}`
    case 'btc':
      return DESTINATIONS['on-chain']!({ address: rest })
    case 'tron':
      return DESTINATIONS.tron!({ address: rest })
    case 'eth':
      return /^0x[0-9a-f]{40}$/i.test(rest) ? DESTINATIONS.eth!({ address: rest }) : undefined
    case 'bank': {
      const [bank, acct] = rest.split(':')
      return DESTINATIONS['vnd-instant']!({ institutionCode: bank, bankAcctNum: acct })
    }
    default:
      return undefined
  }
}
