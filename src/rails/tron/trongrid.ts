/**
 * The real TRON rail: USDT (TRC-20) transfers from the service's hot wallet through TronGrid's
 * HTTP API (the java-tron full-node API that TronGrid serves, with the `TRON-PRO-API-KEY` header).
 *
 * A transfer is built by the node (`/wallet/triggersmartcontract`), checked and signed here, and
 * handed back (`/wallet/broadcasttransaction`). We never trust the node's transaction blindly: the
 * txID must be the SHA-256 of the raw bytes we sign, and those bytes are decoded to make sure they
 * call `transfer(to, amount)` on the configured USDT contract from our wallet with our fee limit.
 * A node that answers with anything else gets no signature.
 *
 * Idempotency by `requestId` (see docs/payouts.md): the signed transaction is kept in memory until
 * the node accepts it, so a retry in the same process re-broadcasts the very same transaction
 * (same txID, so the network can include it at most once). The optional `store` records the signed
 * transaction and its expiration before the first broadcast, so a retry after a restart broadcasts
 * that same transaction again instead of building a second transfer, and a transfer that never
 * reached a block is known to have expired however often the process restarted.
 */
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js'
import { assert } from '../../shared/assert.js'
import { RailFailure, type PayoutState, type TronRail } from '../rail.js'
import { tronAddressFromPrivateKey, validateTronAddress } from './address.js'

/**
 * A send as the store keeps it. `signed` is the body of `broadcasttransaction` as JSON text (a
 * signed transaction is public once broadcast; it holds no key). Records written before the store
 * kept them have only the hash.
 */
export interface TronSendRecord {
  txHash: string
  signed?: string
  expirationMs?: bigint
}

/** Where a send is recorded; the caller backs it with the database. */
export interface TronSendStore {
  get(requestId: string): Promise<TronSendRecord | undefined>
  byHash(txHash: string): Promise<TronSendRecord | undefined>
  /** Records the signed transaction before it is broadcast; called once per request. */
  put(requestId: string, record: Required<TronSendRecord>): Promise<void>
}

export interface TronGridConfig {
  /** TronGrid (or any java-tron full node HTTP API), e.g. `https://api.trongrid.io`. */
  url: string
  /** Sent as `TRON-PRO-API-KEY`; TronGrid rate-limits requests without one. */
  apiKey?: string
  /** The hot wallet's secp256k1 private key, 64 hex characters. */
  privateKeyHex: string
  /** The USDT contract's base58 address (mainnet `TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t`). */
  usdtContract: string
  /** The most TRX (in sun) a transfer may burn for energy and bandwidth. */
  feeLimitSun: bigint
  /** Blocks, counting the one holding the transfer, before its outcome is final. Default 19. */
  confirmationsNeeded?: number
  /** Per HTTP request, body included. Default 10 s. */
  timeoutMs?: number
  store?: TronSendStore
}

export interface TronGridRail extends TronRail {
  /** The hot wallet's address: the operator funds it with USDT, and TRX for fees. */
  readonly hotWalletAddress: string
}

/** The first 4 bytes of keccak256('transfer(address,uint256)'). */
export const TRC20_TRANSFER_SELECTOR = 'a9059cbb'
/**
 * A TRON block is solidified (irreversible) once 19 of the 27 super representatives have built on
 * it, about a minute after it is produced.
 */
export const TRON_CONFIRMATIONS_DEFAULT = 19
export const TRONGRID_TIMEOUT_MS_DEFAULT = 10_000
const TIMEOUT_MS_MAX = 60_000
/** `getnowblock` returns the whole latest block, transactions included; a few MiB is ample. */
const RESPONSE_BYTES_MAX = 8 * 1024 * 1024
/** Signed transactions waiting for a node to accept them, at most. Each lives about a minute. */
const IN_FLIGHT_MAX = 10_000
/**
 * A transaction the chain does not hold this long after its expiration never will: every node
 * refuses it once its head block is past the expiration. The margin covers nodes behind the head.
 */
const EXPIRY_GRACE_MS = 60_000
/** java-tron's enum value for a TriggerSmartContract in `Transaction.Contract.type`. */
const TRIGGER_SMART_CONTRACT = 31n
const TRIGGER_TYPE_URL = 'type.googleapis.com/protocol.TriggerSmartContract'
const UINT256_LIMIT = 1n << 256n
const TX_HASH = /^[0-9a-f]{64}$/

/** Broadcast refusals that are final when the transaction was never sent before. */
const DEFINITIVE_REFUSALS = new Set([
  'SIGERROR',
  'CONTRACT_VALIDATE_ERROR',
  'CONTRACT_EXE_ERROR',
  'BANDWITH_ERROR',
  'TOO_BIG_TRANSACTION_ERROR',
])

interface SignedTransfer {
  requestId: string
  txHash: string
  /** The JSON body of `broadcasttransaction`: the node's transaction plus our signature. */
  body: Record<string, unknown>
  expirationMs: bigint
  toHex: string
  amountMinor: bigint
  /** The store holds this hash for the request. */
  recorded: boolean
  /** A node has accepted it (or already had it). */
  accepted: boolean
}

type Json = Record<string, unknown>

export function createTronGridRail(config: TronGridConfig): TronGridRail {
  const baseUrl = config.url.replace(/\/+$/, '')
  assert(/^https?:\/\//.test(baseUrl), 'TRONGRID_URL must be an http(s) URL')
  const timeoutMs = config.timeoutMs ?? TRONGRID_TIMEOUT_MS_DEFAULT
  assert(timeoutMs > 0 && timeoutMs <= TIMEOUT_MS_MAX, `timeoutMs must be in (0, ${TIMEOUT_MS_MAX}]`)
  const confirmationsNeeded = config.confirmationsNeeded ?? TRON_CONFIRMATIONS_DEFAULT
  assert(
    Number.isInteger(confirmationsNeeded) && confirmationsNeeded >= 1,
    'confirmationsNeeded must be >= 1',
  )
  // fee_limit travels as a JSON number, so it must be exact as one.
  assert(
    config.feeLimitSun > 0n && config.feeLimitSun <= BigInt(Number.MAX_SAFE_INTEGER),
    'TRON_FEE_LIMIT_SUN must be a positive safe integer',
  )
  const privateKey = parsePrivateKey(config.privateKeyHex)
  const hotWalletAddress = tronAddressFromPrivateKey(privateKey)
  const ownerHex = hexOf(hotWalletAddress, 'the hot wallet address')
  const contractHex = hexOf(config.usdtContract, 'TRON_USDT_CONTRACT')

  const inFlight = new Map<string, SignedTransfer>()
  const byHash = new Map<string, SignedTransfer>()
  const running = new Map<string, Promise<{ txHash: string }>>()

  const remember = (entry: SignedTransfer): void => {
    // Oldest first: a Map iterates in insertion order, and old entries have long expired.
    while (inFlight.size >= IN_FLIGHT_MAX) {
      const oldest = inFlight.values().next().value
      if (oldest === undefined) break
      forget(oldest)
    }
    inFlight.set(entry.requestId, entry)
    byHash.set(entry.txHash, entry)
  }
  const forget = (entry: SignedTransfer): void => {
    inFlight.delete(entry.requestId)
    byHash.delete(entry.txHash)
  }

  async function call(path: string, body: Json): Promise<Json> {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' }
    if (config.apiKey) headers['TRON-PRO-API-KEY'] = config.apiKey
    let text: string
    try {
      const res = await fetch(baseUrl + path, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
        redirect: 'error',
        signal: AbortSignal.timeout(timeoutMs),
      })
      text = await readCapped(res, RESPONSE_BYTES_MAX)
      if (res.status !== 200)
        throw new RailFailure(`tron_http_${res.status}`, `${path} answered HTTP ${res.status}`, true)
    } catch (err) {
      if (err instanceof RailFailure) throw err
      if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError'))
        throw new RailFailure('tron_timeout', `${path} did not answer within ${timeoutMs} ms`, true)
      throw new RailFailure('tron_unreachable', `${path}: ${(err as Error).message}`, true)
    }
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch {
      throw new RailFailure('tron_bad_response', `${path} answered with something other than JSON`, true)
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw new RailFailure('tron_bad_response', `${path} answered with something other than an object`, true)
    const answer = parsed as Json
    // java-tron reports exceptions as {"Error": "..."} with status 200.
    if (typeof answer.Error === 'string')
      throw new RailFailure('tron_node_error', `${path}: ${cleanMessage(answer.Error)}`, true)
    return answer
  }

  async function build(toHex: string, amountMinor: bigint, requestId: string): Promise<SignedTransfer> {
    const parameter = encodeTrc20Transfer(toHex, amountMinor)
    const answer = await call('/wallet/triggersmartcontract', {
      owner_address: ownerHex,
      contract_address: contractHex,
      function_selector: 'transfer(address,uint256)',
      parameter,
      fee_limit: Number(config.feeLimitSun),
      call_value: 0,
      visible: false,
    })
    const result = (answer.result ?? {}) as Json
    if (result.result !== true) {
      const code = typeof result.code === 'string' ? result.code : 'OTHER_ERROR'
      // Nothing was signed, so a refusal here is final; only a busy node is worth asking again.
      const retryable =
        code === 'SERVER_BUSY' || code === 'NO_CONNECTION' || code === 'NOT_ENOUGH_EFFECTIVE_CONNECTION'
      throw new RailFailure(`tron_${code.toLowerCase()}`, decodeNodeMessage(result.message), retryable)
    }
    const tx = answer.transaction as Json | undefined
    const issue = checkUnsigned(tx, {
      owner: ownerHex,
      contract: contractHex,
      data: TRC20_TRANSFER_SELECTOR + parameter,
      feeLimitSun: config.feeLimitSun,
    })
    if (typeof issue === 'string')
      throw new RailFailure('tron_bad_transaction', `refusing to sign the node's transaction: ${issue}`, true)
    const { txHash, expirationMs } = issue
    const signature = signTxId(hexToBytes(txHash), privateKey)
    return {
      requestId,
      txHash,
      body: { ...(tx as Json), signature: [signature], visible: false },
      expirationMs,
      toHex,
      amountMinor,
      recorded: false,
      accepted: false,
    }
  }

  /**
   * The transfer a store recorded for this request, to broadcast again: a restart may have come
   * between recording and any node accepting it. Its bytes must still be our transfer of this
   * amount to this address (under whatever fee limit was configured then). A record that is not
   * says the store or the configuration changed under a send that may be on the chain: it stays
   * retryable, so the payout waits for an operator and its funds are never released by mistake.
   */
  function restore(
    recorded: TronSendRecord,
    toHex: string,
    amountMinor: bigint,
    requestId: string,
  ): SignedTransfer {
    let body: Json
    try {
      body = JSON.parse(recorded.signed ?? '') as Json
    } catch {
      throw new RailFailure('send_record_mismatch', `send record of ${requestId} is not JSON`, true)
    }
    const checked = checkUnsigned(body, {
      owner: ownerHex,
      contract: contractHex,
      data: TRC20_TRANSFER_SELECTOR + encodeTrc20Transfer(toHex, amountMinor),
    })
    if (typeof checked === 'string' || checked.txHash !== recorded.txHash) {
      const issue = typeof checked === 'string' ? checked : 'another hash'
      throw new RailFailure('send_record_mismatch', `send record of ${requestId}: ${issue}`, true)
    }
    const { txHash, expirationMs } = checked
    return { requestId, txHash, body, expirationMs, toHex, amountMinor, recorded: true, accepted: false }
  }

  /** True when either query shows the transaction in a block. */
  async function isOnChain(txHash: string): Promise<boolean> {
    if (hasKeys(await call('/wallet/gettransactioninfobyid', { value: txHash }))) return true
    return hasKeys(await call('/wallet/gettransactionbyid', { value: txHash }))
  }

  async function headBlock(): Promise<{ number: number; timestampMs: number }> {
    const block = await call('/wallet/getnowblock', {})
    const raw = ((block.block_header ?? {}) as Json).raw_data as Json | undefined
    const number = raw?.number
    const timestampMs = raw?.timestamp
    if (!Number.isSafeInteger(number) || !Number.isSafeInteger(timestampMs))
      throw new RailFailure('tron_bad_response', 'getnowblock answered without a block number and time', true)
    return { number: number as number, timestampMs: timestampMs as number }
  }

  async function broadcast(entry: SignedTransfer, resumed: boolean): Promise<void> {
    const answer = await call('/wallet/broadcasttransaction', entry.body)
    const code =
      typeof answer.code === 'string' ? answer.code : answer.result === true ? 'SUCCESS' : 'OTHER_ERROR'
    if (answer.result === true || code === 'SUCCESS' || code === 'DUP_TRANSACTION_ERROR') {
      entry.accepted = true
      return
    }
    const message = decodeNodeMessage(answer.message)
    if (code === 'TRANSACTION_EXPIRATION_ERROR' || code === 'TAPOS_ERROR') {
      if (await isOnChain(entry.txHash)) {
        entry.accepted = true
        return
      }
      if (code === 'TRANSACTION_EXPIRATION_ERROR') {
        // The network refuses it for good and no block holds it: nothing was or will be paid.
        forget(entry)
        throw new RailFailure('transaction_expired', `transaction ${entry.txHash} expired unconfirmed`, false)
      }
    }
    // A refusal of a transaction sent for the first time is final. After an earlier attempt that
    // ended without an answer, another node may hold it, so we keep trying until it expires.
    const final = !resumed && DEFINITIVE_REFUSALS.has(code)
    if (final) forget(entry)
    throw new RailFailure(`tron_${code.toLowerCase()}`, message, !final)
  }

  async function send(toHex: string, amountMinor: bigint, requestId: string): Promise<{ txHash: string }> {
    let entry = inFlight.get(requestId)
    let resumed = true
    if (entry) {
      if (entry.toHex !== toHex || entry.amountMinor !== amountMinor)
        throw new RailFailure('request_conflict', `request ${requestId} was a different transfer`, false)
      if (entry.accepted) return { txHash: entry.txHash }
    } else {
      const recorded = await storeCall(() => config.store?.get(requestId))
      if (recorded?.signed === undefined) {
        if (recorded !== undefined) return { txHash: recorded.txHash }
        entry = await build(toHex, amountMinor, requestId)
        resumed = false
      } else {
        entry = restore(recorded, toHex, amountMinor, requestId)
      }
      remember(entry)
    }
    if (config.store && !entry.recorded) {
      const store = config.store
      const { txHash, body, expirationMs } = entry
      await storeCall(() => store.put(requestId, { txHash, signed: JSON.stringify(body), expirationMs }))
      entry.recorded = true
    }
    await broadcast(entry, resumed)
    return { txHash: entry.txHash }
  }

  return {
    name: 'trongrid',
    hotWalletAddress,

    async sendUsdt({ to, amountMinor, requestId }) {
      assert(requestId.length > 0, 'a send needs a requestId')
      if (amountMinor <= 0n || amountMinor >= UINT256_LIMIT)
        throw new RailFailure('invalid_amount', 'a transfer must move a positive amount', false)
      const destination = validateTronAddress(to)
      if (!destination.ok)
        throw new RailFailure('invalid_address', `destination: ${destination.issue}`, false)
      // Concurrent calls for one request share one attempt rather than racing to build two.
      const current = running.get(requestId)
      if (current) return current
      const attempt = send(destination.hex, amountMinor, requestId).finally(() => running.delete(requestId))
      running.set(requestId, attempt)
      return attempt
    },

    async getTransfer(txHash): Promise<PayoutState> {
      if (!TX_HASH.test(txHash)) throw new RailFailure('invalid_tx_hash', 'not a TRON transaction id', false)
      const info = await call('/wallet/gettransactioninfobyid', { value: txHash })
      if (!hasKeys(info)) {
        const entry = byHash.get(txHash)
        const expirationMs =
          entry?.expirationMs ?? (await storeCall(() => config.store?.byHash(txHash)))?.expirationMs
        if (expirationMs !== undefined) {
          const head = await headBlock()
          if (
            BigInt(head.timestampMs) > expirationMs + BigInt(EXPIRY_GRACE_MS) &&
            !(await isOnChain(txHash))
          ) {
            if (entry) forget(entry)
            return { status: 'failed', reason: 'transaction_expired' }
          }
        }
        return { status: 'pending' }
      }
      const blockNumber = info.blockNumber
      if (!Number.isSafeInteger(blockNumber))
        throw new RailFailure('tron_bad_response', 'transaction info without a block number', true)
      const head = await headBlock()
      const confirmations = head.number - (blockNumber as number) + 1
      // Failures wait for finality too: releasing funds for a block that is later replaced could pay twice.
      if (confirmations < confirmationsNeeded) return { status: 'pending' }
      const settled = byHash.get(txHash)
      if (settled) forget(settled)
      return transferOutcome(info)
    },
  }
}

/** The final state of a transfer from its confirmed transaction info. */
function transferOutcome(info: Json): PayoutState {
  const receipt = (info.receipt ?? {}) as Json
  const contractResult = typeof receipt.result === 'string' ? receipt.result : undefined
  if (contractResult !== undefined && contractResult !== 'SUCCESS') {
    return {
      status: 'failed',
      reason: contractResult === 'REVERT' ? 'transfer_reverted' : reasonCode(contractResult),
    }
  }
  if (info.result === 'FAILED') return { status: 'failed', reason: 'transfer_failed' }
  // transfer() returns a bool; a token that answers false instead of reverting moved nothing.
  const returned = Array.isArray(info.contractResult) ? info.contractResult[0] : undefined
  if (typeof returned === 'string' && /^0{64}$/.test(returned))
    return { status: 'failed', reason: 'transfer_returned_false' }
  return { status: 'completed' }
}

/**
 * The `parameter` of `transfer(address,uint256)`: the recipient's 20-byte address (its `41`
 * version byte dropped) and the amount, each left-padded to 32 bytes, as the Solidity ABI says.
 */
export function encodeTrc20Transfer(toHex41: string, amountMinor: bigint): string {
  assert(/^41[0-9a-f]{40}$/.test(toHex41), 'expected a 21-byte hex TRON address starting 41')
  assert(amountMinor >= 0n && amountMinor < UINT256_LIMIT, 'amount out of uint256 range')
  return toHex41.slice(2).padStart(64, '0') + amountMinor.toString(16).padStart(64, '0')
}

/**
 * Signs a transaction id (already a SHA-256 digest, so it is not hashed again) the way TRON
 * expects: r || s || v, 65 bytes in hex, v being the recovery id plus 27.
 */
export function signTxId(txId: Uint8Array, privateKey: Uint8Array): string {
  assert(txId.length === 32, 'a transaction id is 32 bytes')
  // noble's 'recovered' format puts the recovery id first; TRON wants it last.
  const recovered = secp256k1.sign(txId, privateKey, { prehash: false, format: 'recovered' })
  const recovery = recovered[0]
  assert(recovery !== undefined && recovery <= 3, 'bad recovery id')
  return bytesToHex(recovered.subarray(1)) + (recovery + 27).toString(16).padStart(2, '0')
}

/** The fields of a TriggerSmartContract transaction that matter to us, read from its raw bytes. */
export interface DecodedTrigger {
  contractCount: number
  contractType: bigint
  typeUrl: string
  owner: string
  contract: string
  data: string
  callValue: bigint
  callTokenValue: bigint
  feeLimitSun: bigint
  expirationMs: bigint
}

/** Decodes `raw_data_hex` (protobuf `protocol.Transaction.raw`). Throws on malformed input. */
export function decodeTriggerTransaction(rawDataHex: string): DecodedTrigger {
  const raw = readFields(hexToBytes(rawDataHex))
  const contracts = raw.filter((f) => f.field === 11)
  const contract = readFields(bytesOf(contracts[0]))
  const any = readFields(bytesOf(contract.find((f) => f.field === 2)))
  const trigger = readFields(bytesOf(any.find((f) => f.field === 2)))
  const bytesField = (fields: ProtoField[], n: number): string => {
    const found = fields.find((f) => f.field === n)
    return found?.bytes ? bytesToHex(found.bytes) : ''
  }
  const varintField = (fields: ProtoField[], n: number): bigint =>
    fields.find((f) => f.field === n)?.varint ?? 0n
  return {
    contractCount: contracts.length,
    contractType: varintField(contract, 1),
    typeUrl: new TextDecoder().decode(bytesOf(any.find((f) => f.field === 1))),
    owner: bytesField(trigger, 1),
    contract: bytesField(trigger, 2),
    data: bytesField(trigger, 4),
    callValue: varintField(trigger, 3),
    callTokenValue: varintField(trigger, 5),
    feeLimitSun: varintField(raw, 18),
    expirationMs: varintField(raw, 8),
  }
}

interface Expected {
  owner: string
  contract: string
  data: string
  /** Unchecked for a transaction signed earlier, under the fee limit configured then. */
  feeLimitSun?: bigint
}

/** Why the node's unsigned transaction must not be signed, or its id and expiry when it may be. */
function checkUnsigned(
  tx: Json | undefined,
  expected: Expected,
): string | { txHash: string; expirationMs: bigint } {
  if (!tx || typeof tx !== 'object') return 'no transaction in the answer'
  const { txID, raw_data_hex: rawHex } = tx
  if (typeof txID !== 'string' || !TX_HASH.test(txID)) return 'txID is not 32 bytes of hex'
  if (typeof rawHex !== 'string' || !/^([0-9a-f]{2})+$/.test(rawHex)) return 'raw_data_hex is not hex'
  if (typeof tx.raw_data !== 'object' || tx.raw_data === null) return 'raw_data is missing'
  // The signature covers txID; txID must be the hash of exactly these bytes or we would sign blind.
  if (bytesToHex(sha256(hexToBytes(rawHex))) !== txID) return 'txID is not sha256(raw_data_hex)'
  let decoded: DecodedTrigger
  try {
    decoded = decodeTriggerTransaction(rawHex)
  } catch (err) {
    return `raw_data_hex does not decode: ${(err as Error).message}`
  }
  if (decoded.contractCount !== 1) return 'not exactly one contract'
  if (decoded.contractType !== TRIGGER_SMART_CONTRACT || decoded.typeUrl !== TRIGGER_TYPE_URL)
    return 'not a TriggerSmartContract'
  if (decoded.owner !== expected.owner) return 'sent from another address'
  if (decoded.contract !== expected.contract) return 'calls another contract'
  if (decoded.data !== expected.data) return 'calls something other than our transfer'
  if (decoded.callValue !== 0n || decoded.callTokenValue !== 0n) return 'moves TRX or TRC-10 tokens too'
  if (expected.feeLimitSun !== undefined && decoded.feeLimitSun !== expected.feeLimitSun)
    return 'has another fee limit'
  if (decoded.expirationMs <= 0n) return 'has no expiration'
  // A node's JSON raw_data that differs from these bytes hashes differently, so it fails SIGERROR.
  return { txHash: txID, expirationMs: decoded.expirationMs }
}

interface ProtoField {
  field: number
  varint?: bigint
  bytes?: Uint8Array
}

/** Reads one level of protobuf fields. Only what TRON transactions use: varints and byte strings. */
function readFields(buf: Uint8Array): ProtoField[] {
  const fields: ProtoField[] = []
  let at = 0
  const varint = (): bigint => {
    let value = 0n
    for (let shift = 0n; shift < 70n; shift += 7n) {
      const byte = buf[at++]
      if (byte === undefined) throw new Error('truncated varint')
      value |= BigInt(byte & 0x7f) << shift
      if ((byte & 0x80) === 0) return value
    }
    throw new Error('varint longer than 10 bytes')
  }
  while (at < buf.length) {
    const key = varint()
    const field = Number(key >> 3n)
    const wire = Number(key & 7n)
    if (field === 0) throw new Error('field number 0')
    if (wire === 0) fields.push({ field, varint: varint() })
    else if (wire === 2) {
      const length = Number(varint())
      if (at + length > buf.length) throw new Error('length past the end')
      fields.push({ field, bytes: buf.subarray(at, at + length) })
      at += length
    } else if (wire === 1) at += 8
    else if (wire === 5) at += 4
    else throw new Error(`unsupported wire type ${wire}`)
    if (at > buf.length) throw new Error('field past the end')
  }
  return fields
}

function bytesOf(field: ProtoField | undefined): Uint8Array {
  if (!field?.bytes) throw new Error('missing nested message')
  return field.bytes
}

function parsePrivateKey(text: string): Uint8Array {
  const hex = text.trim().replace(/^0x/, '').toLowerCase()
  assert(/^[0-9a-f]{64}$/.test(hex), 'TRON_HOT_WALLET_PRIVATE_KEY must be 64 hex characters')
  const key = hexToBytes(hex)
  assert(secp256k1.utils.isValidSecretKey(key), 'TRON_HOT_WALLET_PRIVATE_KEY is not a valid secp256k1 key')
  return key
}

function hexOf(address: string, what: string): string {
  const checked = validateTronAddress(address)
  assert(checked.ok, `${what} is not a TRON address`)
  return checked.hex
}

function hasKeys(value: Json): boolean {
  return Object.keys(value).length > 0
}

async function storeCall<T>(run: () => Promise<T> | undefined): Promise<T | undefined> {
  try {
    return await run()
  } catch (err) {
    throw new RailFailure('store_unavailable', `send record: ${(err as Error).message}`, true)
  }
}

/** With `visible: false` the node hex-encodes its messages; anything else is taken as text. */
function decodeNodeMessage(message: unknown): string {
  if (typeof message !== 'string' || message.length === 0) return 'the node gave no reason'
  if (/^([0-9a-fA-F]{2})+$/.test(message)) {
    try {
      return cleanMessage(new TextDecoder('utf-8', { fatal: true }).decode(hexToBytes(message.toLowerCase())))
    } catch {
      return cleanMessage(message)
    }
  }
  return cleanMessage(message)
}

/** Node text ends up in logs and failure messages: keep it short and printable. */
function cleanMessage(text: string): string {
  return text.replace(/\p{Cc}/gu, ' ').slice(0, 300)
}

/** A stable lower-case code from a node's enum name, as a transaction's `msg` wants. */
function reasonCode(name: string): string {
  const code = name
    .toLowerCase()
    .replace(/[^a-z0-9_]/g, '_')
    .slice(0, 64)
  return code.length > 0 ? code : 'transfer_failed'
}

async function readCapped(res: Response, bytesMax: number): Promise<string> {
  if (!res.body) return ''
  const reader = res.body.getReader()
  const chunks: Uint8Array[] = []
  let total = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    total += value.length
    if (total > bytesMax) {
      await reader.cancel()
      throw new RailFailure('tron_bad_response', `answer larger than ${bytesMax} bytes`, true)
    }
    chunks.push(value)
  }
  return new TextDecoder().decode(Buffer.concat(chunks))
}
