/**
 * Sending through Esplora: the operator's signer builds and signs the transaction, its txid is
 * checked here, and Esplora broadcasts it; what each broadcast refusal means.
 */
import { hex } from '@scure/base'
import { Transaction } from '@scure/btc-signer'

import { checkAddressText, TRANSPORT_CODES } from '../../rails/http-json.js'
import { RailFailure, type OnchainRail } from '../../rails/rail.js'
import type { EsploraDeps } from './esplora-deps.js'

const RPC_ERROR_PREFIX = 'sendrawtransaction RPC error: '

/** `OnchainRail.send`. */
export async function send(
  deps: EsploraDeps,
  input: Parameters<OnchainRail['send']>[0],
): Promise<{ txid: string }> {
  checkAddressText(input.address)
  const { broadcast: signer } = deps.options
  if (!signer) {
    throw new RailFailure('not_supported', 'esplora holds no keys: configure a signer or use bitcoind', false)
  }
  const { rawTxHex } = await signer.sign(input)
  const txid = txidOf(rawTxHex)
  await broadcast(deps, rawTxHex, txid)
  return { txid }
}

/**
 * POST /tx. electrs answers every failed broadcast with HTTP 400 and text: the node's refusal as
 * `sendrawtransaction RPC error: {"code":..,"message":..}`, or `Connection error` when electrs could
 * not reach its node (src/rest.rs, the POST /tx arm; src/daemon.rs, parse_jsonrpc_reply). A refusal
 * of a transaction the index already holds (a rebroadcast) counts as sent; a refusal of one it does
 * not hold is final; anything else is retried.
 */
async function broadcast(deps: EsploraDeps, rawTxHex: string, txid: string): Promise<void> {
  let answer: string | null
  try {
    answer = await deps.request('/tx', rawTxHex)
  } catch (err) {
    if (!(err instanceof RailFailure) || err.retryable) throw err
    const refusal = parseBroadcastRefusal(err.message)
    if (!refusal) throw new RailFailure('node_unavailable', err.message, true)
    if ((await deps.request(`/tx/${txid}`)) !== null) return
    throw new RailFailure(
      'rejected',
      `esplora refused the transaction: ${refusal.message} (${refusal.code})`,
      false,
    )
  }
  if (answer === null) throw new RailFailure('node_error', 'esplora POST /tx: not found', false)
  if (answer.trim() !== txid) {
    throw new RailFailure(TRANSPORT_CODES.badResponse, 'esplora answered another txid', true)
  }
}

/** The node's refusal inside electrs' broadcast error text, or null when the text is not one. */
export function parseBroadcastRefusal(text: string): { code: number; message: string } | null {
  const at = text.indexOf(RPC_ERROR_PREFIX)
  if (at < 0) return null
  try {
    const error = JSON.parse(text.slice(at + RPC_ERROR_PREFIX.length)) as {
      code?: unknown
      message?: unknown
    }
    if (typeof error.code !== 'number') return null
    return { code: error.code, message: String(error.message ?? '') }
  } catch {
    return null
  }
}

/** The txid of a signed raw transaction: checked here so a signer's mistake is caught before broadcast. */
export function txidOf(rawTxHex: string): string {
  try {
    return Transaction.fromRaw(hex.decode(rawTxHex.toLowerCase()), {
      allowUnknownInputs: true,
      allowUnknownOutputs: true,
      disableScriptCheck: true,
    }).id
  } catch (err) {
    throw new RailFailure(
      'invalid_transaction',
      `signer returned an unparseable transaction: ${(err as Error).message}`,
      false,
    )
  }
}
