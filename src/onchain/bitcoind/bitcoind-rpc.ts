/**
 * One JSON-RPC 1.0 call to Bitcoin Core over HTTP basic auth, how its answer is read, and what
 * each RPC error code becomes: the one place the bitcoind rail's failure codes are decided.
 */
import { isLosslessNumber, parse as losslessParse } from 'lossless-json'

import { asObject, httpRequest, TRANSPORT_CODES } from '../../rails/http-json.js'
import { RailFailure } from '../../rails/rail.js'

export type RpcParams = unknown[] | Record<string, unknown>

/** One JSON-RPC call; `wallet` null for the node's own methods (`createwallet`, `getnetworkinfo`, ...). */
export type RpcFunction = (wallet: string | null, method: string, params: RpcParams) => Promise<unknown>

/** What the calls below need of the rail's deps (bitcoind-deps.ts). */
export interface RpcDeps {
  rpc: RpcFunction
}

/** Where calls go and how they are sent; fixed when the rail is built. */
export interface BitcoindEndpoint {
  /** The base URL without a trailing slash. */
  baseUrl: string
  /** The `Basic` authorization header's value. */
  authorization: string
  timeoutMs: number
}

/** An error answer of the RPC, before it is mapped to a rail failure. */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly method: string,
  ) {
    super(message)
  }
}

/** Sends one call; failures to get an answer keep their `TRANSPORT_CODES`. */
export async function bitcoindRpc(
  endpoint: BitcoindEndpoint,
  id: string,
  wallet: string | null,
  method: string,
  params: RpcParams,
): Promise<unknown> {
  const { baseUrl, authorization, timeoutMs } = endpoint
  const res = await httpRequest({
    url: wallet === null ? `${baseUrl}/` : `${baseUrl}/wallet/${encodeURIComponent(wallet)}`,
    method: 'POST',
    headers: { authorization, 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '1.0', id, method, params }),
    timeoutMs,
  })
  return readRpcAnswer(method, res.status, res.text)
}

/** The `result` of an answer, or what its status or `error` says went wrong. */
export function readRpcAnswer(method: string, status: number, text: string): unknown {
  // Bitcoin Core answers bad credentials with a bare 401 and a refused client address with 403.
  if (status === 401 || status === 403) {
    throw new RailFailure('unauthorized', `bitcoind ${method}: HTTP ${status}`, false)
  }
  let body: Record<string, unknown>
  try {
    body = asObject(parseExact(text), `bitcoind ${method}`)
  } catch {
    // Not a JSON-RPC answer at all: a proxy page, a node shutting down. Worth another try later.
    throw new RailFailure(
      TRANSPORT_CODES.badResponse,
      `bitcoind ${method}: HTTP ${status}, not JSON-RPC`,
      true,
    )
  }
  if (body.error !== null && body.error !== undefined) {
    const error = asObject(body.error, `bitcoind ${method} error`)
    throw new RpcError(Number(error.code), String(error.message ?? ''), method)
  }
  return body.result
}

/** JSON with every number kept as its source text. */
function parseExact(text: string): unknown {
  return losslessParse(text, (_key, value) => (isLosslessNumber(value) ? value.value : value))
}

/** `rpc` with RPC errors mapped to rail failures. */
export async function call(
  deps: RpcDeps,
  wallet: string | null,
  method: string,
  params: RpcParams,
): Promise<unknown> {
  try {
    return await deps.rpc(wallet, method, params)
  } catch (err) {
    throw mapped(err)
  }
}

/**
 * `rpc` for a call some of whose error answers are expected (a wallet not loaded, a transaction
 * the wallet does not know): those come back as `refused`, every other error is mapped and thrown.
 */
export async function callExpecting(
  deps: RpcDeps,
  wallet: string | null,
  method: string,
  params: RpcParams,
  expected: readonly number[],
): Promise<{ result: unknown; refused?: undefined } | { refused: RpcError }> {
  try {
    return { result: await deps.rpc(wallet, method, params) }
  } catch (err) {
    if (err instanceof RpcError && expected.includes(err.code)) return { refused: err }
    throw mapped(err)
  }
}

/** An error of `rpc` as the rail reports it: RPC errors mapped, any other failure unchanged. */
export function mapped(err: unknown): unknown {
  return err instanceof RpcError ? mapRpcError(err) : err
}

/** Throws the mapped failure of the first unsuccessful entry of an `importdescriptors` answer. */
export function importResultOk(results: unknown[]): void {
  for (const raw of results) {
    const result = asObject(raw, 'importdescriptors result')
    if (result.success === true) continue
    const error = asObject(result.error ?? {}, 'importdescriptors error')
    throw mapRpcError(
      new RpcError(Number(error.code), String(error.message ?? 'import failed'), 'importdescriptors'),
    )
  }
}

/** Bitcoin Core's RPC error codes (src/rpc/protocol.h) mapped to our short codes. */
export function mapRpcError(err: RpcError): RailFailure {
  const text = `bitcoind ${err.method}: ${err.message} (${err.code})`
  switch (err.code) {
    case -6: // RPC_WALLET_INSUFFICIENT_FUNDS: also every other reason the wallet could not build the send.
      if (/too small|dust/i.test(err.message)) return new RailFailure('amount_too_small', text, false)
      if (/fee exceeds maximum/i.test(err.message)) return new RailFailure('fee_too_high', text, false)
      return new RailFailure('insufficient_funds', text, false)
    case -5: // RPC_INVALID_ADDRESS_OR_KEY
      return new RailFailure('invalid_address', text, false)
    case -3: // RPC_TYPE_ERROR: "Invalid amount", "Amount out of range"
      return new RailFailure('invalid_amount', text, false)
    case -8: // RPC_INVALID_PARAMETER
      return new RailFailure('invalid_parameter', text, false)
    case -25: // RPC_VERIFY_ERROR
    case -26: // RPC_VERIFY_REJECTED
      return new RailFailure('rejected', text, false)
    case -4: // RPC_WALLET_ERROR
      return new RailFailure('wallet_error', text, false)
    // The states below pass without anyone touching the request: an operator unlocks or loads the
    // wallet, or the node finishes starting. The worker tries again later.
    case -13: // RPC_WALLET_UNLOCK_NEEDED
      return new RailFailure('wallet_locked', text, true)
    case -18: // RPC_WALLET_NOT_FOUND
    case -19: // RPC_WALLET_NOT_SPECIFIED
      return new RailFailure('wallet_not_loaded', text, true)
    case -28: // RPC_IN_WARMUP
    case -9: // RPC_CLIENT_NOT_CONNECTED
    case -10: // RPC_CLIENT_IN_INITIAL_DOWNLOAD
      return new RailFailure('node_unavailable', text, true)
    case -32601: // RPC_METHOD_NOT_FOUND: a node too old for this adapter.
      return new RailFailure('method_not_found', text, false)
    default:
      return new RailFailure('node_error', text, false)
  }
}
