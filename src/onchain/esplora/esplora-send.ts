/**
 * Sending through Esplora: the operator's signer builds and signs the transaction, its txid is
 * checked here, and Esplora broadcasts it; what each broadcast refusal means.
 */
import { hex } from '@scure/base'
import { Transaction } from '@scure/btc-signer'

import { asObject, checkAddressText, parseJsonText, TRANSPORT_CODES } from '../../rails/http-json.js'
import { RailFailure, type OnchainRail } from '../../rails/rail.js'
import { isMissingInputs } from '../refusal.js'
import type { EsploraDeps } from './esplora-deps.js'
import { confirmedConflictDepth, getTransaction } from './esplora-outputs.js'

const RPC_ERROR_PREFIX = 'sendrawtransaction RPC error: '
/** RPC_VERIFY_ALREADY_IN_UTXO_SET (src/rpc/protocol.h). */
const ALREADY_IN_UTXO_SET = -27

/** The inputs of a transaction, from Esplora or else from its own bytes. */
async function readTx(deps: EsploraDeps, txid: string, rawTxHex: string): Promise<Record<string, unknown>> {
  const text = await deps.request(`/tx/${txid}`)
  if (text !== null) return asObject(parseJsonText(text, 'esplora tx'), 'tx')
  const parsed = Transaction.fromRaw(hex.decode(rawTxHex.toLowerCase()), {
    allowUnknownInputs: true,
    allowUnknownOutputs: true,
    disableScriptCheck: true,
  })
  const vin = Array.from({ length: parsed.inputsLength }, (_, i) => {
    const input = parsed.getInput(i)
    return { txid: hex.encode(input.txid!), vout: input.index! }
  })
  return { txid, vin }
}

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
    const text = `esplora refused the transaction: ${refusal.message} (${refusal.code})`
    // -27: its outputs are in the node's UTXO set, so it is confirmed there (src/node/transaction.cpp,
    // BroadcastTransaction, "already in utxo set"), even while electrs has not indexed that block
    // and answers 404 for it.
    if (refusal.code === ALREADY_IN_UTXO_SET) return
    // Missing inputs (-25) is also what a node says for a parent it merely lacks (validation.cpp
    // PreChecks, "assume this might be an orphan tx"): final only when the chain shows one of the
    // inputs spent by another transaction; otherwise it may still be mined and the send waits.
    if (isMissingInputs(refusal.message)) {
      const tx = await readTx(deps, txid, rawTxHex)
      if ((await confirmedConflictDepth(deps, txid, tx)) === null)
        throw new RailFailure('not_relayed', text, true)
      throw new RailFailure('rejected', text, false)
    }
    // electrs keeps the transactions of orphaned blocks (src/new_index/schema.rs), so that it
    // knows the transaction says nothing; confirmed or in the mempool, it was sent.
    const state = await getTransaction(deps, txid)
    if (state && (state.confirmations > 0 || state.inMempool === true)) return
    throw new RailFailure('rejected', text, false)
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
