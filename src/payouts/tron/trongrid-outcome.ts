/**
 * A transfer's state as the node's solidified view shows it: pending until its block is final,
 * then what the transaction executed (read from its own signed bytes), and the outcome from its
 * receipt and the token's Transfer event, with the fee it cost. A transfer in no block is pending,
 * handed to the node again while it is valid, and failed once it has expired.
 */
import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js'
import { RailFailure, type TronFee, type TronTransferState } from '../../rails/rail.js'
import { validateTronAddress } from './address.js'
import type { TronGridDeps } from './trongrid-deps.js'
import { count, hasKeys, type Json } from './trongrid-http.js'
import { headBlock, isOnChain } from './trongrid-node.js'
import { forget, parseSigned, storeCall } from './trongrid-sends.js'
import {
  decodeTriggerTransaction,
  TRC20_TRANSFER_SELECTOR,
  TX_HASH,
  type DecodedTrigger,
} from './trongrid-transaction.js'

/** keccak256('Transfer(address,address,uint256)'): topic 0 of a TRC-20 Transfer event. */
export const TRC20_TRANSFER_TOPIC = 'ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef'
/**
 * A transaction the chain does not hold this long after its expiration never will: every node
 * refuses it once its head block is past the expiration. The margin covers nodes behind the head.
 */
export const EXPIRY_GRACE_MS = 60_000

/**
 * Whether a transaction that expired at `expirationMs` is known never to be in a block: the head
 * is a grace past its expiration, and neither the full node nor the solidity node holds it. The
 * one test of "expired" for the poll path and for a refused re-broadcast alike: an answering node
 * of TronGrid that lags can miss a block made just before the expiration.
 */
export async function expiredForGood(
  deps: TronGridDeps,
  txHash: string,
  expirationMs: bigint,
  /** The caller has just asked the full node (isOnChain) and it does not hold the transaction. */
  fullNodeAsked = false,
): Promise<boolean> {
  const head = await headBlock(deps)
  if (BigInt(head.timestampMs) <= expirationMs + BigInt(EXPIRY_GRACE_MS)) return false
  if (!fullNodeAsked && (await isOnChain(deps, txHash))) return false
  return !hasKeys(await deps.request('/walletsolidity/gettransactioninfobyid', { value: txHash }))
}

/** `TronRail.getTransfer`. */
export async function getTransfer(
  deps: TronGridDeps,
  txHash: string,
  expected?: { to: string; amountMinor: bigint },
): Promise<TronTransferState> {
  if (!TX_HASH.test(txHash)) throw new RailFailure('invalid_tx_hash', 'not a TRON transaction id', false)
  const { request, sends } = deps
  // Final only once solidified: the solidity view (services/http/solidity/) answers {} until the
  // block holding the transaction is irreversible. The full node's view can still change.
  const info = await request('/walletsolidity/gettransactioninfobyid', { value: txHash })
  if (hasKeys(info)) {
    // TRON_CONFIRMATIONS can ask for more blocks on top of the solidified one.
    const blockNumber = info.blockNumber
    if (!Number.isSafeInteger(blockNumber))
      throw new RailFailure('tron_bad_response', 'transaction info without a block number', true)
    if ((await headBlock(deps)).number - (blockNumber as number) + 1 < deps.confirmationsNeeded)
      return { status: 'pending' }
    const sent = await executedTransfer(deps, txHash)
    if (expected) {
      const to = validateTronAddress(expected.to)
      if (!to.ok || to.hex !== sent.toHex || expected.amountMinor !== sent.amountMinor)
        throw new RailFailure(
          'transfer_mismatch',
          `transaction ${txHash} is not this payout's transfer`,
          false,
        )
    }
    const settled = sends.byHash.get(txHash)
    if (settled) forget(sends, settled)
    return transferOutcome(info, { contract: deps.contractHex, owner: deps.ownerHex, ...sent })
  }
  // In a block the full node has: wait until that block is solidified.
  if (hasKeys(await request('/wallet/gettransactioninfobyid', { value: txHash })))
    return { status: 'pending' }
  // In no block: in a node's pending pool, lost with a node that restarted, or expired.
  const entry = sends.byHash.get(txHash)
  const record = entry ? undefined : await storeCall(() => deps.config.store?.byHash(txHash))
  const expirationMs = entry?.expirationMs ?? record?.expirationMs
  if (expirationMs === undefined) return { status: 'pending' }
  if (await expiredForGood(deps, txHash, expirationMs)) {
    if (entry) forget(sends, entry)
    return { status: 'failed', reason: 'transaction_expired' }
  }
  const head = await headBlock(deps)
  if (BigInt(head.timestampMs) < expirationMs) {
    // Still valid: a node that restarted has forgotten its pending pool, so hand it the same
    // signed transaction again (same txID: included at most once; DUP_TRANSACTION_ERROR if held).
    const body = entry?.body ?? parseSigned(record?.signed)
    if (body) await request('/wallet/broadcasttransaction', body)
  }
  return { status: 'pending' }
}

/** The transfer a solidified transaction executed, read from its own signed bytes. */
async function executedTransfer(
  deps: TronGridDeps,
  txHash: string,
): Promise<{ toHex: string; amountMinor: bigint }> {
  const tx = await deps.request('/walletsolidity/gettransactionbyid', { value: txHash })
  const rawHex = tx.raw_data_hex
  if (
    typeof rawHex !== 'string' ||
    !/^([0-9a-f]{2})+$/.test(rawHex) ||
    bytesToHex(sha256(hexToBytes(rawHex))) !== txHash
  )
    throw new RailFailure(
      'tron_bad_response',
      `the node's transaction ${txHash} does not hash to its id`,
      true,
    )
  let decoded: DecodedTrigger
  try {
    decoded = decodeTriggerTransaction(rawHex)
  } catch {
    throw new RailFailure('transfer_mismatch', `transaction ${txHash} is not a contract call`, false)
  }
  const data = decoded.data
  if (
    decoded.owner !== deps.ownerHex ||
    decoded.contract !== deps.contractHex ||
    data.length !== 8 + 128 ||
    !data.startsWith(TRC20_TRANSFER_SELECTOR) ||
    !/^0{24}$/.test(data.slice(8, 32))
  )
    throw new RailFailure(
      'transfer_mismatch',
      `transaction ${txHash} is not a USDT transfer from the hot wallet`,
      false,
    )
  return { toHex: '41' + data.slice(32, 72), amountMinor: BigInt('0x' + data.slice(72)) }
}

/** The transfer the outcome must show, all addresses 21-byte hex (`41…`). */
export interface ExpectedTransfer {
  contract: string
  owner: string
  toHex: string
  amountMinor: bigint
}

/**
 * The final state of a solidified transfer, from its `gettransactioninfobyid` answer. Success is
 * `receipt.result: SUCCESS` and a Transfer event from the token contract, from the hot wallet, to
 * the recipient, for the amount: never the return value, since Tether's `transfer` declares a bool
 * and returns none, so a transfer that moved the money answers 32 zero bytes. A SUCCESS without
 * that event is not called either way: it raises a final failure, and the payout waits for an
 * operator with its funds held.
 */
export function transferOutcome(info: Json, expected: ExpectedTransfer): TronTransferState {
  const fee = readFee(info)
  const receipt = (info.receipt ?? {}) as Json
  const result = typeof receipt.result === 'string' ? receipt.result : undefined
  const moved = hasTransferEvent(info.log, expected)
  if (result === 'SUCCESS' && info.result !== 'FAILED') {
    if (moved) return { status: 'completed', fee }
    throw new RailFailure(
      'transfer_unverified',
      `transaction ${String(info.id)} succeeded without a Transfer of ${expected.amountMinor} from the hot wallet to the recipient`,
      false,
    )
  }
  if (moved)
    throw new RailFailure(
      'transfer_unverified',
      `transaction ${String(info.id)} failed yet logged the Transfer`,
      false,
    )
  if (result === 'REVERT') return { status: 'failed', reason: 'transfer_reverted', fee }
  if (result !== undefined && result !== 'DEFAULT' && result !== 'SUCCESS')
    return { status: 'failed', reason: reasonCode(result), fee }
  return { status: 'failed', reason: 'transfer_failed', fee }
}

/** A `log` entry (LogInfo.buildLog: the contract's 20-byte address, 32-byte topics) for exactly this transfer. */
function hasTransferEvent(logs: unknown, expected: ExpectedTransfer): boolean {
  if (!Array.isArray(logs)) return false
  const word = (hex41: string) => hex41.slice(2).padStart(64, '0')
  return logs.some((log: Json) => {
    const topics = Array.isArray(log?.topics)
      ? (log.topics as unknown[]).map((t) => String(t).toLowerCase())
      : []
    const address = String(log?.address ?? '').toLowerCase()
    return (
      (address === expected.contract.slice(2) || address === expected.contract) &&
      topics.length === 3 &&
      topics[0] === TRC20_TRANSFER_TOPIC &&
      topics[1] === word(expected.owner) &&
      topics[2] === word(expected.toHex) &&
      /^[0-9a-f]{64}$/i.test(String(log.data)) &&
      BigInt('0x' + String(log.data)) === expected.amountMinor
    )
  })
}

/** What the transaction cost the hot wallet; java-tron leaves zero fields out. */
function readFee(info: Json): TronFee {
  const receipt = (info.receipt ?? {}) as Json
  return {
    totalSun: count(info.fee, 'fee'),
    energyFeeSun: count(receipt.energy_fee, 'energy_fee'),
    netFeeSun: count(receipt.net_fee, 'net_fee'),
    energyUsed: count(receipt.energy_usage_total, 'energy_usage_total'),
    bandwidthUsed: count(receipt.net_usage, 'net_usage'),
  }
}

/** A stable lower-case code from a node's enum name, as a transaction's `msg` wants. */
function reasonCode(name: string): string {
  const code = name
    .toLowerCase()
    .replace(/[^a-z0-9_]/g, '_')
    .slice(0, 64)
  return code.length > 0 ? code : 'transfer_failed'
}
