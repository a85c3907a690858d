/**
 * One Ethereum JSON-RPC call through src/rails/http-json.ts, and what each way it can go wrong
 * becomes: the one place our `eth_*` failure codes are decided, with the node's errors classified
 * as go-ethereum words them (other clients, Nethermind, Erigon and the providers, use the same
 * texts for these because wallets match on them).
 *
 * Sources (ethereum/go-ethereum): rpc/errors.go (-32601 method not found, -32602 invalid params,
 * -32000 the default code of any other error, which is how txpool errors arrive),
 * internal/ethapi/errors.go (3 `execution reverted` with the revert data; -38010 nonce too low and
 * the other -380xx codes of a simulated transaction), core/txpool/errors.go and core/error.go (the
 * texts: `already known`, `replacement transaction underpriced`, `transaction underpriced`,
 * `exceeds block gas limit`, `nonce too low: next nonce N, tx nonce M`, `insufficient funds for gas
 * * price + value: balance B, tx cost C, overshot D`), eth/gasestimator/gasestimator.go (`gas
 * required exceeds allowance (N)`, what an estimate of a call that hits `assert`/INVALID says).
 */
import {
  renameTransportFailure,
  TRANSPORT_CODES,
  type HttpRequest,
  type HttpResponse,
  type TransportCode,
} from '../../rails/http-json.js'
import { RailFailure } from '../../rails/rail.js'

/** The transport: the project's HTTP helper, or a test's wrapper of it. */
export type EthRpcTransport = (req: HttpRequest) => Promise<HttpResponse>

export interface EthRpcEndpoint {
  url: string
  timeoutMs: number
  transport: EthRpcTransport
}

/** An error object the node answered with (JSON-RPC 2.0 `error`). */
export class EthRpcError extends RailFailure {
  constructor(
    code: string,
    message: string,
    retryable: boolean,
    readonly rpcCode: number,
    readonly rpcMessage: string,
  ) {
    super(code, message, retryable)
  }
}

const NO_ANSWER: Record<TransportCode, string> = {
  [TRANSPORT_CODES.timeout]: 'eth_timeout',
  [TRANSPORT_CODES.unreachable]: 'eth_unreachable',
  [TRANSPORT_CODES.tls]: 'eth_unreachable',
  [TRANSPORT_CODES.tooLarge]: 'eth_bad_response',
}

/** Answers are small (a receipt of one transfer, a block header); a much larger one is refused. */
const RESPONSE_BYTES_MAX = 1024 * 1024

/** Node text ends up in logs and failure messages: short and printable. */
export function cleanText(text: string, lengthMax = 300): string {
  return text.replace(/\p{Cc}/gu, ' ').slice(0, lengthMax)
}

/**
 * The node's error as our failure. `retryable` unless another try cannot help: a transaction the
 * node refuses for what it is (it can never be valid) or a call that reverts.
 */
export function classifyRpcError(method: string, rpcCode: number, rpcMessage: string): EthRpcError {
  const text = cleanText(rpcMessage)
  const fail = (code: string, retryable: boolean) =>
    new EthRpcError(code, `${method}: ${text} (${rpcCode})`, retryable, rpcCode, text)
  // core/txpool/errors.go, core/error.go: prefixes, since geth appends details with %w.
  if (text.startsWith('already known')) return fail('eth_already_known', true)
  if (text.startsWith('nonce too low')) return fail('eth_nonce_too_low', true)
  if (text.startsWith('nonce too high')) return fail('eth_nonce_too_high', true)
  if (text.startsWith('replacement transaction underpriced')) return fail('eth_replacement_underpriced', true)
  if (text.startsWith('transaction underpriced') || text.startsWith('transaction gas price below minimum'))
    return fail('eth_underpriced', true)
  if (text.startsWith('max fee per gas less than block base fee')) return fail('eth_underpriced', true)
  if (text.startsWith('insufficient funds for gas * price + value'))
    return fail('eth_insufficient_funds', true)
  if (text.startsWith('exceeds block gas limit')) return fail('eth_exceeds_block_gas_limit', false)
  if (text.startsWith('intrinsic gas too low')) return fail('eth_intrinsic_gas_too_low', false)
  if (text.startsWith('account limit exceeded') || text.startsWith('txpool is full'))
    return fail('eth_pool_full', true)
  // internal/ethapi/errors.go: a revert is code 3 with the revert data; eth/gasestimator: a call
  // that fails with all the gas it may have (Tether's SafeMath `assert`, an INVALID opcode).
  if (rpcCode === 3 || text.startsWith('execution reverted')) return fail('eth_execution_reverted', false)
  if (text.startsWith('gas required exceeds allowance')) return fail('eth_execution_reverted', false)
  if (text.startsWith('invalid opcode')) return fail('eth_execution_reverted', false)
  if (text.startsWith('only replay-protected')) return fail('eth_unprotected_refused', false)
  if (text.startsWith('tx fee (')) return fail('eth_fee_above_node_cap', false)
  if (text.includes('finalized block not found')) return fail('eth_no_finalized_block', true)
  if (rpcCode === -32601) return fail('eth_method_not_found', true)
  if (rpcCode === -32602) return fail('eth_invalid_params', true)
  // -32005 is the providers' (Infura, Alchemy) rate limit; -32603 an internal error.
  if (rpcCode === -32005) return fail('eth_rate_limited', true)
  return fail('eth_node_error', true)
}

let nextId = 1

/** One JSON-RPC 2.0 call; its `result` (which may be null) or a RailFailure. */
export async function rpcCall(endpoint: EthRpcEndpoint, method: string, params: unknown[]): Promise<unknown> {
  const id = nextId++
  let res: HttpResponse
  try {
    res = await endpoint.transport({
      url: endpoint.url,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
      timeoutMs: endpoint.timeoutMs,
      responseBytesMax: RESPONSE_BYTES_MAX,
      // The URL of a provider carries its key in the path: name the method, never the URL.
      label: method,
      refuseRedirects: true,
    })
  } catch (err) {
    throw renameTransportFailure(err, NO_ANSWER)
  }
  if (res.status === 401 || res.status === 403)
    throw new RailFailure(
      'eth_access_refused',
      `${method}: the node refused access (HTTP ${res.status})`,
      true,
    )
  if (res.status === 429) throw new RailFailure('eth_rate_limited', `${method}: HTTP 429`, true)
  let parsed: unknown
  try {
    parsed = JSON.parse(res.text)
  } catch {
    throw new RailFailure(
      res.status === 200 ? 'eth_bad_response' : `eth_http_${res.status}`,
      `${method} answered HTTP ${res.status} with something other than JSON`,
      true,
    )
  }
  const answer = parsed as { id?: unknown; result?: unknown; error?: { code?: unknown; message?: unknown } }
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer))
    throw new RailFailure('eth_bad_response', `${method} answered with something other than an object`, true)
  if (answer.error !== undefined && answer.error !== null) {
    const code = typeof answer.error.code === 'number' ? answer.error.code : 0
    const message = typeof answer.error.message === 'string' ? answer.error.message : 'no message'
    throw classifyRpcError(method, code, message)
  }
  if (res.status !== 200)
    throw new RailFailure(`eth_http_${res.status}`, `${method} answered HTTP ${res.status}`, true)
  if (answer.id !== id)
    throw new RailFailure('eth_bad_response', `${method}: answer to another request`, true)
  if (!('result' in answer)) throw new RailFailure('eth_bad_response', `${method}: no result`, true)
  return answer.result
}

/** A JSON-RPC quantity as a bigint, exact or refused. */
export function hexQuantity(value: unknown, what: string): bigint {
  if (typeof value !== 'string' || !/^0x[0-9a-fA-F]{1,64}$/.test(value))
    throw new RailFailure('eth_bad_response', `${what} is not a hex quantity`, true)
  return BigInt(value)
}

/** The uint256 an eth_call returned (32 bytes of data). */
export function hexWord(value: unknown, what: string): bigint {
  if (typeof value !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(value))
    throw new RailFailure('eth_bad_response', `${what} is not a 32-byte word`, true)
  return BigInt(value)
}

export function hexHash(value: unknown, what: string): string {
  if (typeof value !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(value))
    throw new RailFailure('eth_bad_response', `${what} is not a 32-byte hash`, true)
  return value.toLowerCase()
}

export function object(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new RailFailure('eth_bad_response', `${what} is not an object`, true)
  return value as Record<string, unknown>
}
