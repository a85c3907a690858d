/**
 * The real TRON rail: USDT (TRC-20) transfers from the service's hot wallet through TronGrid's
 * HTTP API (the java-tron full-node API that TronGrid serves, with the `TRON-PRO-API-KEY` header).
 *
 * Before anything is signed, a pre-flight asks the node whether the hot wallet can fund the
 * transfer: its USDT (`balanceOf`), a simulation of the transfer (its energy), and its TRX, staked
 * energy and bandwidth against the chain's prices. A transfer it cannot fund is refused, burning
 * nothing, rather than left to fail OUT_OF_ENERGY on the chain, which charges for it.
 *
 * A transfer is built by the node (`/wallet/triggersmartcontract`), checked and signed here, and
 * handed back (`/wallet/broadcasttransaction`). We never trust the node's transaction blindly: the
 * txID must be the SHA-256 of the raw bytes we sign, and those bytes are decoded to make sure they
 * call `transfer(to, amount)` on the configured USDT contract from our wallet with our fee limit.
 * A node that answers with anything else gets no signature.
 *
 * An outcome is read only once the node has solidified the block (`/walletsolidity/*`), and success
 * is the receipt's SUCCESS together with the token's Transfer event for exactly this transfer,
 * never the call's return value: Tether's `transfer` returns no value (see docs/payouts.md).
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
import { ceilDiv, formatScaled } from '../../shared/amount.js'
import { httpRequest, renameTransportFailure, TRANSPORT_CODES, type TransportCode } from '../http-json.js'
import {
  RailFailure,
  type RailCheckReport,
  type TronFee,
  type TronRail,
  type TronTransferState,
} from '../rail.js'
import { tronAddressFromPrivateKey, validateTronAddress } from './address.js'
import { trc20TransfersFrom, v1Error } from './trongrid-history.js'

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
  /**
   * Blocks, counting the one holding the transfer, before its outcome is final. Default 19. A
   * transfer is final only once the node reports it solidified; this can only ask for more.
   */
  confirmationsNeeded?: number
  /** Per HTTP request, body included. Default 10 s. */
  timeoutMs?: number
  store?: TronSendStore
  /** The network the node must be on (`TRON_NETWORK`); `check()` compares it with block 0. */
  network?: TronNetworkName
  /** The clock `check()` judges the age of the node's head block by. */
  now?: () => number
}

export type TronNetworkName = 'mainnet' | 'nile' | 'shasta'

/**
 * Block 0's id (`/wallet/getblockbynum {num: 0}`) names the network: each public TRON network has
 * its own genesis block, and no node can answer another's.
 */
export const TRON_GENESIS_BLOCK_IDS: Record<TronNetworkName, string> = {
  mainnet: '00000000000000001ebf88508a03865c71d452e25f4d51194196a1d22b6653dc',
  nile: '0000000000000000d698d4192c56cb6be724a558448e2684802de4d6cd8690dc',
  shasta: '0000000000000000de1aa88295e1fcf982742f773e0419c5a9c134c994a9059e',
}

export interface TronGridRail extends TronRail {
  /** The hot wallet's address: the operator funds it with USDT, and TRX for fees. */
  readonly hotWalletAddress: string
}

/** The first 4 bytes of keccak256('transfer(address,uint256)'). */
export const TRC20_TRANSFER_SELECTOR = 'a9059cbb'
/** keccak256('Transfer(address,address,uint256)'): topic 0 of a TRC-20 Transfer event. */
export const TRC20_TRANSFER_TOPIC = 'ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef'
/**
 * Pre-flight margin on the node's energy simulation, in basis points: the recipient's balance may
 * change between the simulation and the block (a first USDT deposit costs twice the energy of a
 * later one), and the chain's dynamic energy factor moves.
 */
export const ENERGY_MARGIN_BPS = 1_000n
/** Bandwidth of a signed USDT transfer, as java-tron counts it (transaction bytes plus 64). */
export const TRC20_TRANSFER_BANDWIDTH = 345n
/** A head block older than this means the node is not keeping up with the chain. */
const HEAD_STALE_MS = 60_000
/** The solidified block is normally 19 blocks (about a minute) behind the head. */
const SOLID_LAG_BLOCKS_MAX = 100
/**
 * A TRON block is solidified (irreversible) once 19 of the 27 super representatives have built on
 * it, about a minute after it is produced.
 */
export const TRON_CONFIRMATIONS_DEFAULT = 19
export const TRONGRID_TIMEOUT_MS_DEFAULT = 10_000
const TIMEOUT_MS_MAX = 60_000
/**
 * Our codes for a request that got no usable answer (the codes `httpRequest` raises). A redirect
 * is refused as unreachable; what an answer's status and body mean is decided in `request`.
 */
const NO_ANSWER: Record<TransportCode, string> = {
  [TRANSPORT_CODES.timeout]: 'tron_timeout',
  [TRANSPORT_CODES.unreachable]: 'tron_unreachable',
  [TRANSPORT_CODES.tls]: 'tron_unreachable',
  [TRANSPORT_CODES.tooLarge]: 'tron_bad_response',
}
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
  const network = config.network ?? 'mainnet'
  assert(network in TRON_GENESIS_BLOCK_IDS, 'TRON_NETWORK must be mainnet, nile or shasta')
  const now = config.now ?? Date.now

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
    return request(path, body)
  }

  /** A java-tron POST with a JSON body, or (no body) a GET of TronGrid's v1 API. */
  async function request(path: string, body?: Json): Promise<Json> {
    const headers: Record<string, string> = {}
    if (body) headers['content-type'] = 'application/json'
    if (config.apiKey) headers['TRON-PRO-API-KEY'] = config.apiKey
    let res: { status: number; text: string }
    try {
      res = await httpRequest({
        url: baseUrl + path,
        method: body ? 'POST' : 'GET',
        headers,
        ...(body ? { body: JSON.stringify(body) } : {}),
        timeoutMs,
        // The default bound (8 MiB) is ample for the largest answer, `getnowblock`'s whole block.
        label: path,
        refuseRedirects: true,
      })
    } catch (err) {
      throw renameTransportFailure(err, NO_ANSWER)
    }
    const text = res.text
    // TronGrid's v1 API answers a bad request 400 with {success: false, error}: keep its reason.
    if (!body && res.status === 400)
      throw new RailFailure('tron_http_400', `${path.split('?')[0]}: ${v1Error(text)}`, true)
    if (res.status === 401 || res.status === 403)
      throw new RailFailure(
        'tron_api_key_refused',
        `${path}: TronGrid refused the API key (HTTP ${res.status})`,
        true,
      )
    if (res.status !== 200)
      throw new RailFailure(`tron_http_${res.status}`, `${path} answered HTTP ${res.status}`, true)
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

  /**
   * Runs a call on the node's head state without a transaction (`/wallet/triggerconstantcontract`,
   * Wallet.callConstantContract), or on the solidified state (`/walletsolidity/...`, the same
   * servlet on the solidity node). java-tron answers `result.result: true` even for a call that
   * reverted; then `transaction.ret[0].ret` is FAILED and `result.message` says why.
   */
  async function constantCall(
    selector: string,
    parameter: string,
    view: 'wallet' | 'walletsolidity' = 'wallet',
  ): Promise<{ ok: boolean; returned: string; energyUsed: bigint; message: string }> {
    const answer = await call(`/${view}/triggerconstantcontract`, {
      owner_address: ownerHex,
      contract_address: contractHex,
      function_selector: selector,
      parameter,
      visible: false,
    })
    const result = (answer.result ?? {}) as Json
    if (result.result !== true) {
      const code = typeof result.code === 'string' ? result.code : 'OTHER_ERROR'
      throw new RailFailure(`tron_${code.toLowerCase()}`, decodeNodeMessage(result.message), true)
    }
    const ret = ((answer.transaction as Json | undefined)?.ret as Json[] | undefined)?.[0]?.ret
    const returned = Array.isArray(answer.constant_result) ? answer.constant_result[0] : undefined
    return {
      ok: ret !== 'FAILED',
      returned: typeof returned === 'string' ? returned.toLowerCase() : '',
      energyUsed: count(answer.energy_used, 'energy_used'),
      message: result.message === undefined ? '' : decodeNodeMessage(result.message),
    }
  }

  /** The hot wallet's USDT (`balanceOf`), in minor units, at the head or the solidified state. */
  async function usdtBalance(view: 'wallet' | 'walletsolidity' = 'wallet'): Promise<bigint> {
    const answer = await constantCall('balanceOf(address)', ownerHex.slice(2).padStart(64, '0'), view)
    if (!answer.ok || !/^[0-9a-f]{64}$/.test(answer.returned))
      throw new RailFailure('tron_bad_response', `balanceOf answered ${answer.message || 'no number'}`, true)
    return BigInt('0x' + answer.returned)
  }

  /** The hot wallet's TRX, staked energy and bandwidth left, and the chain's prices. */
  async function resources() {
    const account = await call('/wallet/getaccount', { address: ownerHex, visible: false })
    const res = await call('/wallet/getaccountresource', { address: ownerHex, visible: false })
    const params = await call('/wallet/getchainparameters', {})
    const list = Array.isArray(params.chainParameter) ? (params.chainParameter as Json[]) : []
    const param = (key: string): bigint | undefined => {
      const found = list.find((p) => p.key === key)
      return found ? count(found.value, key) : undefined
    }
    const energyFee = param('getEnergyFee')
    const transactionFee = param('getTransactionFee')
    if (energyFee === undefined || energyFee <= 0n || transactionFee === undefined)
      throw new RailFailure(
        'tron_bad_response',
        'getchainparameters lacks the energy or bandwidth price',
        true,
      )
    // java-tron leaves zero values out of its JSON: a missing field is 0.
    const left = (limit: string, used: string) => {
      const value = count(res[limit], limit) - count(res[used], used)
      return value > 0n ? value : 0n
    }
    return {
      exists: hasKeys(account),
      balanceSun: count(account.balance, 'balance'),
      energyLeft: left('EnergyLimit', 'EnergyUsed'),
      stakedNetLeft: left('NetLimit', 'NetUsed'),
      freeNetLeft: left('freeNetLimit', 'freeNetUsed'),
      energyFee,
      transactionFee,
    }
  }

  /**
   * Refuses, before anything is signed or broadcast, a transfer the hot wallet cannot fund: too
   * little USDT, a transfer the contract would revert, or too little energy and TRX to execute it
   * (which the chain would still charge for, failing OUT_OF_ENERGY). Node trouble stays retryable;
   * a wallet that cannot pay is a final refusal, so the payout's funds are released.
   */
  async function preflight(toHex: string, amountMinor: bigint): Promise<void> {
    const held = await usdtBalance()
    if (held < amountMinor)
      throw new RailFailure(
        'hot_wallet_insufficient_usdt',
        `the hot wallet holds ${formatScaled(held, 6)} USDT, the transfer needs ${formatScaled(amountMinor, 6)}`,
        false,
      )
    const simulated = await constantCall('transfer(address,uint256)', encodeTrc20Transfer(toHex, amountMinor))
    if (!simulated.ok)
      throw new RailFailure(
        'transfer_would_revert',
        `the USDT contract refuses this transfer: ${simulated.message || 'it reverts'}`,
        false,
      )
    const need = ceilDiv(simulated.energyUsed * (10_000n + ENERGY_MARGIN_BPS), 10_000n)
    const wallet = await resources()
    // The fee limit caps all energy the transfer may use, staked or bought (VMActuator).
    if (need * wallet.energyFee > config.feeLimitSun)
      throw new RailFailure(
        'fee_limit_too_low',
        `the transfer needs about ${need} energy (${formatScaled(need * wallet.energyFee, 6)} TRX), ` +
          `more than TRON_FEE_LIMIT_SUN allows (${formatScaled(config.feeLimitSun, 6)} TRX)`,
        false,
      )
    const energyBurn = (need > wallet.energyLeft ? need - wallet.energyLeft : 0n) * wallet.energyFee
    const bandwidthFree =
      wallet.stakedNetLeft >= TRC20_TRANSFER_BANDWIDTH || wallet.freeNetLeft >= TRC20_TRANSFER_BANDWIDTH
    const bandwidthBurn = bandwidthFree ? 0n : TRC20_TRANSFER_BANDWIDTH * wallet.transactionFee
    const trxNeeded = energyBurn + bandwidthBurn
    if (trxNeeded > wallet.balanceSun)
      throw new RailFailure(
        'hot_wallet_insufficient_trx',
        `the hot wallet holds ${formatScaled(wallet.balanceSun, 6)} TRX and ${wallet.energyLeft} staked energy; ` +
          `the transfer needs about ${formatScaled(trxNeeded, 6)} TRX for energy and bandwidth`,
        false,
      )
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
        await preflight(toHex, amountMinor)
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

    async getTransfer(txHash, expected): Promise<TronTransferState> {
      if (!TX_HASH.test(txHash)) throw new RailFailure('invalid_tx_hash', 'not a TRON transaction id', false)
      // Final only once solidified: the solidity view (services/http/solidity/) answers {} until the
      // block holding the transaction is irreversible. The full node's view can still change.
      const info = await call('/walletsolidity/gettransactioninfobyid', { value: txHash })
      if (hasKeys(info)) {
        // TRON_CONFIRMATIONS can ask for more blocks on top of the solidified one.
        const blockNumber = info.blockNumber
        if (!Number.isSafeInteger(blockNumber))
          throw new RailFailure('tron_bad_response', 'transaction info without a block number', true)
        if ((await headBlock()).number - (blockNumber as number) + 1 < confirmationsNeeded)
          return { status: 'pending' }
        const sent = await executedTransfer(txHash)
        if (expected) {
          const to = validateTronAddress(expected.to)
          if (!to.ok || to.hex !== sent.toHex || expected.amountMinor !== sent.amountMinor)
            throw new RailFailure(
              'transfer_mismatch',
              `transaction ${txHash} is not this payout's transfer`,
              false,
            )
        }
        const settled = byHash.get(txHash)
        if (settled) forget(settled)
        return transferOutcome(info, { contract: contractHex, owner: ownerHex, ...sent })
      }
      // In a block the full node has: wait until that block is solidified.
      if (hasKeys(await call('/wallet/gettransactioninfobyid', { value: txHash })))
        return { status: 'pending' }
      // In no block: in a node's pending pool, lost with a node that restarted, or expired.
      const entry = byHash.get(txHash)
      const record = entry ? undefined : await storeCall(() => config.store?.byHash(txHash))
      const expirationMs = entry?.expirationMs ?? record?.expirationMs
      if (expirationMs === undefined) return { status: 'pending' }
      const head = await headBlock()
      if (BigInt(head.timestampMs) > expirationMs + BigInt(EXPIRY_GRACE_MS)) {
        if (await isOnChain(txHash)) return { status: 'pending' }
        if (entry) forget(entry)
        return { status: 'failed', reason: 'transaction_expired' }
      }
      if (BigInt(head.timestampMs) < expirationMs) {
        // Still valid: a node that restarted has forgotten its pending pool, so hand it the same
        // signed transaction again (same txID: included at most once; DUP_TRANSACTION_ERROR if held).
        const body = entry?.body ?? parseSigned(record?.signed)
        if (body) await call('/wallet/broadcasttransaction', body)
      }
      return { status: 'pending' }
    },

    async reserves() {
      // Final figures only: the USDT the solidified state holds, like every outcome read here.
      const usdt = await usdtBalance('walletsolidity')
      const account = await call('/wallet/getaccount', { address: ownerHex, visible: false })
      return {
        balances: { USDT: usdt, TRX: count(account.balance, 'balance') },
        // Nothing arrives on this rail: any USDT sent to the hot wallet is already final here.
        incoming: { USDT: 0n },
      }
    },

    payments(sinceMs) {
      return trc20TransfersFrom(
        { get: (path) => request(path), wallet: hotWalletAddress, contract: config.usdtContract },
        sinceMs,
      )
    },

    async check(): Promise<RailCheckReport> {
      const report: RailCheckReport = { rail: 'tron', adapter: 'trongrid', reachable: false, problems: [] }
      const problems = report.problems
      try {
        const info = await call('/wallet/getnodeinfo', {})
        report.reachable = true
        const version = (info.configNodeInfo as Json | undefined)?.codeVersion
        if (typeof version === 'string') report.version = cleanMessage(version)
      } catch (err) {
        const failure = err as RailFailure
        report.reachable = failure.code === 'tron_api_key_refused' || failure.code?.startsWith('tron_http_')
        problems.push(
          failure.code === 'tron_api_key_refused'
            ? 'TronGrid refused TRONGRID_API_KEY'
            : `the node did not answer getnodeinfo: ${failure.message}`,
        )
        return report
      }
      const step = async (what: string, run: () => Promise<void>) => {
        try {
          await run()
        } catch (err) {
          problems.push(`${what}: ${(err as Error).message}`)
        }
      }
      await step('network', async () => {
        const genesis = await call('/wallet/getblockbynum', { num: 0 })
        const id = typeof genesis.blockID === 'string' ? genesis.blockID : ''
        const found = (Object.keys(TRON_GENESIS_BLOCK_IDS) as TronNetworkName[]).find(
          (name) => TRON_GENESIS_BLOCK_IDS[name] === id,
        )
        report.network = found ?? 'unknown'
        if (found !== network)
          problems.push(
            `the node is on ${found ?? `an unknown network (block 0 is ${cleanMessage(id) || 'missing'})`}, ` +
              `TRON_NETWORK is ${network}`,
          )
      })
      await step('sync', async () => {
        const head = await headBlock()
        const ageMs = now() - head.timestampMs
        report.synced = ageMs <= HEAD_STALE_MS
        if (!report.synced)
          problems.push(
            `the node's head block ${head.number} is ${Math.round(ageMs / 1000)} s old: it is not in sync`,
          )
        const solid = await call('/walletsolidity/getnowblock', {})
        const raw = (solid.block_header as Json | undefined)?.raw_data as Json | undefined
        // java-tron leaves a zero out of its JSON: block 0 has no `number`.
        const solidNumber = raw ? (raw.number ?? 0) : undefined
        if (!Number.isSafeInteger(solidNumber))
          problems.push('the node serves no solidified block (/walletsolidity)')
        else if (head.number - (solidNumber as number) > SOLID_LAG_BLOCKS_MAX)
          problems.push(
            `the solidified block is ${head.number - (solidNumber as number)} blocks behind the head`,
          )
      })
      const balances: Record<string, string> = {}
      await step('hot wallet TRX', async () => {
        const wallet = await resources()
        balances.TRX = formatScaled(wallet.balanceSun, 6)
        if (!wallet.exists) {
          problems.push(
            `the hot wallet ${hotWalletAddress} does not exist on this network: send it TRX first`,
          )
          return
        }
        const energyValue = wallet.energyLeft * wallet.energyFee
        if (wallet.balanceSun + energyValue < config.feeLimitSun)
          problems.push(
            `the hot wallet holds ${formatScaled(wallet.balanceSun, 6)} TRX and ${wallet.energyLeft} staked energy, ` +
              `less than one transfer may burn (TRON_FEE_LIMIT_SUN, ${formatScaled(config.feeLimitSun, 6)} TRX)`,
          )
      })
      await step('hot wallet USDT', async () => {
        let held: bigint
        try {
          held = await usdtBalance()
        } catch (err) {
          if ((err as RailFailure).code === 'tron_contract_validate_error')
            throw new Error(`TRON_USDT_CONTRACT ${config.usdtContract} is not a contract on this network`, {
              cause: err,
            })
          throw err
        }
        balances.USDT = formatScaled(held, 6)
        if (held === 0n) problems.push(`the hot wallet ${hotWalletAddress} holds no USDT`)
      })
      if (Object.keys(balances).length > 0) report.balances = balances
      if (!config.apiKey && /(^|\.)trongrid\.io$/i.test(new URL(baseUrl).hostname))
        problems.push('TRONGRID_API_KEY is not set: TronGrid throttles requests without a key')
      return report
    },
  }

  /** The transfer a solidified transaction executed, read from its own signed bytes. */
  async function executedTransfer(txHash: string): Promise<{ toHex: string; amountMinor: bigint }> {
    const tx = await call('/walletsolidity/gettransactionbyid', { value: txHash })
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
      decoded.owner !== ownerHex ||
      decoded.contract !== contractHex ||
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
}

interface ExpectedTransfer {
  contract: string
  owner: string
  toHex: string
  amountMinor: bigint
}

/**
 * The final state of a solidified transfer. Success is `receipt.result: SUCCESS` and a Transfer
 * event from the token contract, from the hot wallet, to the recipient, for the amount: never the
 * return value, since Tether's `transfer` declares a bool and returns none, so a transfer that
 * moved the money answers 32 zero bytes. A SUCCESS without that event is not called either way: it
 * raises a final failure, and the payout waits for an operator with its funds held.
 */
function transferOutcome(info: Json, expected: ExpectedTransfer): TronTransferState {
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

/** A non-negative whole number from the node's JSON (absent means 0), exact or refused. */
function count(value: unknown, what: string): bigint {
  if (value === undefined) return 0n
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)
    throw new RailFailure('tron_bad_response', `${what} is not a whole number`, true)
  return BigInt(value)
}

function parseSigned(text: string | undefined): Json | undefined {
  if (text === undefined) return undefined
  try {
    const parsed = JSON.parse(text) as unknown
    return typeof parsed === 'object' && parsed !== null ? (parsed as Json) : undefined
  } catch {
    return undefined
  }
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
