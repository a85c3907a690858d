/**
 * TronGrid's own v1 API over the stand-in's chain: `GET /v1/accounts/{address}/transactions/trc20`,
 * the TRC-20 transfers an account sent or received, indexed from the token contracts' Transfer
 * events. It is not part of java-tron (TronGrid runs it beside the nodes), so its behaviour is taken
 * from TronGrid's documentation: the TRON-US/trongrid README (the v1 "TG3" API: base58 or hex
 * addresses, `only_confirmed`/`only_unconfirmed`/`only_to`/`only_from`, `limit` default 20 and at
 * most 200, `fingerprint` paging, `min_timestamp`/`max_timestamp`, `order_by`), and
 * developers.tron.network "TRC-20 transaction history" (`contract_address`, same filters kept
 * while paging). Test code only.
 *
 * Answers as TronGrid does: `{data, success: true, meta: {at, page_size, fingerprint?, links?}}`,
 * each item `{transaction_id, token_info: {symbol, address, decimals, name}, block_timestamp, from,
 * to, type: 'Transfer', value}` with base58 addresses and the value as the token's integer text.
 * Quirks kept: the default order is newest first; a page that is full carries a fingerprint even
 * when nothing follows (the next page is then empty); "confirmed" means in a solidified block, and
 * transactions still in a node's pool are not indexed at all; a failed transfer emits no event and
 * is not listed. A bad request is HTTP 400 `{success: false, error, statusCode: 400}` (the error
 * texts here are ours: TronGrid's exact wording is not documented).
 */
import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js'
import { createBase58check } from '@scure/base'
import type { TronGridStandIn } from './trongrid.js'

const base58check = createBase58check(sha256)

/** One Transfer event of the token, as the stand-in's chain executed it. */
export interface Trc20Transfer {
  txId: string
  /** 41-prefixed hex addresses. */
  from: string
  to: string
  value: bigint
  blockNumber: number
  timestamp: number
}

const LIMIT_DEFAULT = 20
const LIMIT_MAX = 200

type Answer = { status?: number; json?: unknown }

const bad = (error: string): Answer => ({ status: 400, json: { success: false, error, statusCode: 400 } })

export function base58Of(hex41: string): string {
  return base58check.encode(hexToBytes(hex41))
}

/** Base58 (`T...`) or hex (`41...`, `0x...`) to 41-prefixed hex; undefined when it is neither. */
function hexOf(address: string): string | undefined {
  if (/^(41|0x)[0-9a-fA-F]{40}$/.test(address)) return ('41' + address.slice(2)).toLowerCase()
  try {
    const bytes = base58check.decode(address)
    return bytes.length === 21 && bytes[0] === 0x41 ? bytesToHex(bytes) : undefined
  } catch {
    return undefined
  }
}

/** Query parameters come in snake_case or camelCase (TronGrid README, "Parameters"). */
function param(query: URLSearchParams, snake: string): string | null {
  const camel = snake.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())
  return query.get(snake) ?? query.get(camel)
}

export function trc20History(node: TronGridStandIn, address: string, query: URLSearchParams): Answer {
  const account = hexOf(address)
  if (!account) return bad('Invalid address provided')
  const flag = (name: string) => param(query, name) === 'true'
  if (flag('only_confirmed') && flag('only_unconfirmed'))
    return bad('only_confirmed and only_unconfirmed cannot be used together')
  const limitText = param(query, 'limit')
  const limit = limitText === null ? LIMIT_DEFAULT : Number(limitText)
  if (!Number.isInteger(limit) || limit < 1 || limit > LIMIT_MAX)
    return bad(`limit must be between 1 and ${LIMIT_MAX}`)
  const contractText = param(query, 'contract_address')
  const contract = contractText === null ? undefined : hexOf(contractText)
  if (contractText !== null && !contract) return bad('Invalid contract_address provided')
  const minTs = Number(param(query, 'min_timestamp') ?? param(query, 'min_block_timestamp') ?? 0)
  const maxTs = Number(param(query, 'max_timestamp') ?? param(query, 'max_block_timestamp') ?? node.timeMs)
  const order = param(query, 'order_by') ?? 'block_timestamp,desc'
  if (!/^block_timestamp,(asc|desc)$/.test(order)) return bad('Invalid order_by provided')
  // The stand-in runs one token: every event is the USDT contract's.
  if (contract !== undefined && contract !== node.usdtContract) return page(node, address, [], limit, query)
  // Without only_from/only_to both directions are listed (the README: the filters are not exclusive).
  const from = flag('only_from')
  const to = flag('only_to')
  let events = node.transfers.filter(
    (t) =>
      (t.from === account || t.to === account) &&
      (!from || to || t.from === account) &&
      (!to || from || t.to === account) &&
      t.timestamp >= minTs &&
      t.timestamp <= maxTs &&
      (!flag('only_confirmed') || t.blockNumber <= node.solidNumber) &&
      (!flag('only_unconfirmed') || t.blockNumber > node.solidNumber),
  )
  if (order.endsWith('desc')) events = [...events].reverse()
  const fingerprint = param(query, 'fingerprint')
  const start = fingerprint === null ? 0 : decodeFingerprint(fingerprint)
  if (start === undefined) return bad('Invalid fingerprint provided')
  return page(node, address, events.slice(start), limit, query, start)
}

function page(
  node: TronGridStandIn,
  address: string,
  events: Trc20Transfer[],
  limit: number,
  query: URLSearchParams,
  start = 0,
): Answer {
  const data = events.slice(0, limit).map((t) => ({
    transaction_id: t.txId,
    token_info: { symbol: 'USDT', address: base58Of(node.usdtContract), decimals: 6, name: 'Tether USD' },
    block_timestamp: t.timestamp,
    from: base58Of(t.from),
    to: base58Of(t.to),
    type: 'Transfer',
    value: t.value.toString(),
  }))
  const meta: Record<string, unknown> = { at: node.timeMs, page_size: data.length }
  if (data.length === limit) {
    const fingerprint = encodeFingerprint(start + data.length)
    const next = new URLSearchParams(query)
    next.set('fingerprint', fingerprint)
    meta.fingerprint = fingerprint
    meta.links = { next: `${node.url}/v1/accounts/${address}/transactions/trc20?${next}` }
  }
  return { json: { data, success: true, meta } }
}

/** TronGrid's fingerprints are opaque; here, the position of the next item, base64url. */
function encodeFingerprint(position: number): string {
  return Buffer.from(`p:${position}`).toString('base64url')
}

function decodeFingerprint(text: string): number | undefined {
  const m = /^p:(\d{1,9})$/.exec(Buffer.from(text, 'base64url').toString('utf8'))
  return m ? Number(m[1]) : undefined
}
