/**
 * Destinations as screening compares them: pure, no I/O. Every destination a send names, every
 * source of a deposit and every entry of a deny list is brought to one normal spelling for its
 * type, so that a list that writes an address one way catches a request that writes it another.
 */

export const DEST_TYPES = ['bitcoin', 'lightning_node', 'lightning', 'tron', 'bank', 'ethereum'] as const
export type DestType = (typeof DEST_TYPES)[number]

/** One destination (or deposit source) to screen: its type and its normal spelling. */
export interface Destination {
  type: DestType
  value: string
}

/** The longest entry a list may hold; no destination of any type is longer. */
export const ENTRY_CHARS_MAX = 200

const BECH32_HRP = /^(bc|tb|bcrt)1/i
const BASE58 = /^[1-9A-HJ-NP-Za-km-z]{25,62}$/
const BECH32 = /^(bc|tb|bcrt)1[02-9ac-hj-np-z]{6,90}$/
const NODE_KEY = /^(02|03)[0-9a-f]{64}$/
const TRON = /^T[1-9A-HJ-NP-Za-km-z]{33}$/
const ETH = /^0x[0-9a-f]{40}$/
const INSTITUTION = /^[A-Z0-9]{2,20}$/
const ACCOUNT_NUMBER = /^[0-9A-Z]{4,34}$/

/**
 * The normal spelling of `raw` as a destination of `type`, or undefined when it is not one: a
 * bech32 Bitcoin address in lower case (its checksum does not depend on case), a base58 one as it
 * is (its case is the address); a node key in lower-case hex; a TRON address as it is (base58); an
 * Ethereum address in lower case (EIP-55 case is only a checksum); a bank account as
 * `INSTITUTION:NUMBER`, upper case, without spaces, dashes or dots; a Lightning Address or LNURL in
 * lower case.
 */
export function normalise(type: DestType, raw: string): string | undefined {
  const text = raw.trim()
  if (text === '' || text.length > ENTRY_CHARS_MAX) return undefined
  switch (type) {
    case 'bitcoin': {
      if (BECH32_HRP.test(text)) {
        const lower = text.toLowerCase()
        return BECH32.test(lower) ? lower : undefined
      }
      return BASE58.test(text) ? text : undefined
    }
    case 'lightning_node': {
      const lower = text.toLowerCase()
      return NODE_KEY.test(lower) ? lower : undefined
    }
    case 'lightning':
      return text.toLowerCase()
    case 'tron':
      return TRON.test(text) ? text : undefined
    case 'ethereum': {
      const lower = text.toLowerCase()
      return ETH.test(lower) ? lower : undefined
    }
    case 'bank': {
      const colon = text.indexOf(':')
      if (colon < 0) return undefined
      return bankAccount(text.slice(0, colon), text.slice(colon + 1))
    }
  }
}

/** A bank account (institution code and account number) in its normal spelling. */
export function bankAccount(institution: string, number: string): string | undefined {
  const inst = institution.trim().toUpperCase()
  const num = number.replace(/[\s.-]/g, '').toUpperCase()
  return INSTITUTION.test(inst) && ACCOUNT_NUMBER.test(num) ? `${inst}:${num}` : undefined
}

export function isDestType(text: string): text is DestType {
  return (DEST_TYPES as readonly string[]).includes(text)
}

/** Lines of a list file at most, and its size. */
export const LIST_ENTRIES_MAX = 200_000
export const LIST_BYTES_MAX = 16 * 1024 * 1024

export interface ParsedList {
  entries: Destination[]
  /** Lines that are not a destination, by line number (the first few), for the operator. */
  rejected: Array<{ line: number; text: string }>
}
const REJECTED_SHOWN_MAX = 20

/**
 * A list file: one destination a line, either `value` (of `defaultType`) or `type,value` (CSV; a
 * bank account is `bank,INSTITUTION,NUMBER` or `bank,INSTITUTION:NUMBER`). Blank lines and lines
 * starting with `#` are skipped; a header line `type,value` too. Duplicates count once.
 */
export function parseList(
  text: string,
  defaultType?: DestType,
): ParsedList | { error: string; rejected?: ParsedList['rejected'] } {
  const lines = text.split(/\r?\n/)
  const seen = new Set<string>()
  const entries: Destination[] = []
  const rejected: ParsedList['rejected'] = []
  let rejectedCount = 0
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim()
    if (line === '' || line.startsWith('#') || /^type\s*,\s*value/i.test(line)) continue
    const entry = parseLine(line, defaultType)
    if (!entry) {
      rejectedCount++
      if (rejected.length < REJECTED_SHOWN_MAX) rejected.push({ line: i + 1, text: line.slice(0, 100) })
      continue
    }
    const key = `${entry.type}|${entry.value}`
    if (seen.has(key)) continue
    seen.add(key)
    entries.push(entry)
    if (entries.length > LIST_ENTRIES_MAX)
      return { error: `a list holds at most ${LIST_ENTRIES_MAX} entries` }
  }
  if (rejectedCount > 0) return { error: `${rejectedCount} line(s) are not a destination`, rejected }
  return { entries, rejected }
}

function parseLine(line: string, defaultType: DestType | undefined): Destination | undefined {
  const cells = line.split(',').map((c) => c.trim().replace(/^"(.*)"$/, '$1'))
  if (cells.length === 1) {
    if (!defaultType) return undefined
    const value = normalise(defaultType, cells[0]!)
    return value === undefined ? undefined : { type: defaultType, value }
  }
  const type = cells[0]!.toLowerCase()
  if (!isDestType(type)) return undefined
  const raw = type === 'bank' && cells.length === 3 ? `${cells[1]}:${cells[2]}` : cells.slice(1).join(',')
  if (type !== 'bank' && cells.length !== 2) return undefined
  const value = normalise(type, raw)
  return value === undefined ? undefined : { type, value }
}
