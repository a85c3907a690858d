/**
 * A geth stand-in: Ethereum JSON-RPC over HTTP on 127.0.0.1 (port 0), backed by a small chain
 * that runs Tether's USDT contract. Test code only. Blocks are produced when the test says
 * (`mine`), finality moves when the test says (`finalize`), and the node fails as nodes fail:
 * a transaction dropped from the pool (`drop`), a reorg of the last unfinalized blocks (`reorg`),
 * a stall or an answer lost after the work was done (`server.faults`, test/standins/http.ts), and
 * a restart that forgets the pool (`restart`).
 *
 * Each behaviour follows upstream; the comments name the file. Sources read (ethereum/go-ethereum,
 * 02b73d4): rpc/errors.go and rpc/json.go (JSON-RPC 2.0 answers, -32601 for an unknown method,
 * -32000 for any error without its own code), internal/ethapi/api.go (SendRawTransaction,
 * GetTransactionReceipt, MarshalReceipt, GetTransactionByHash, FeeHistory, MaxPriorityFeePerGas,
 * Syncing), internal/ethapi/errors.go (3 `execution reverted` with data), core/txpool/errors.go,
 * core/error.go, core/txpool/validation.go (the order of the checks and their texts),
 * core/txpool/legacypool/legacypool.go and list.go (already known, the 10% price bump on both fee
 * fields, queued transactions behind a gap), eth/api_backend.go (`finalized block not found`),
 * eth/gasestimator/gasestimator.go (`gas required exceeds allowance (N)`), core/types/receipt.go and
 * log.go (the fields). Tether's TetherToken.sol (mainnet 0xdAC17F958D2ee523a2206206994597C13D831ec7,
 * Solidity 0.4.17): `transfer(address,uint)` is `whenNotPaused`, `require(!isBlackListed[msg.sender])`
 * (the recipient is not checked), `onlyPayloadSize(2 * 32)`, returns no value, moves balances with
 * SafeMath `sub`, which `assert`s (INVALID: all gas used) on a short balance, and emits
 * `Transfer(from, to, value)`; `isBlackListed` is a public mapping, `paused` a public bool.
 *
 * Simplified, and said so: the base fee stays where the test puts it (no EIP-1559 update rule);
 * Tether's fee (basisPointsRate) is 0, as on mainnet; token state the test sets (balances,
 * blacklist, paused) is the genesis state, as if an owner's transaction had set it before block 1.
 */
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { bytesToHex, concatBytes, hexToBytes, randomBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { startStandin, type StandinServer } from './http.js'

export const USDT_MAINNET = '0xdac17f958d2ee523a2206206994597c13d831ec7'
export const TRANSFER_TOPIC = '0x' + bytesToHex(keccak_256(utf8ToBytes('Transfer(address,address,uint256)')))
const sel = (s: string) => bytesToHex(keccak_256(utf8ToBytes(s))).slice(0, 8)
const SEL = {
  transfer: sel('transfer(address,uint256)'),
  balanceOf: sel('balanceOf(address)'),
  isBlackListed: sel('isBlackListed(address)'),
  paused: sel('paused()'),
}
export const GWEI = 1_000_000_000n
export const BLOCK_GAS_LIMIT = 30_000_000n
/** Execution gas of a Tether transfer beyond the intrinsic gas: to a holder, and to a new holder (a new slot). */
export const TRANSFER_EXEC_GAS_TO_HOLDER = 20_300n
export const TRANSFER_EXEC_GAS_TO_NEW_HOLDER = 37_400n
/** Gas a `require` failing early in `transfer` burns before it reverts. */
export const TRANSFER_EXEC_GAS_REVERTED = 2_500n

type Rlp = Uint8Array | Rlp[]

function rlpDecode(bytes: Uint8Array): Rlp {
  const [item, end] = rlpItem(bytes, 0)
  if (end !== bytes.length) throw new Error('rlp: trailing bytes')
  return item
}
function rlpItem(b: Uint8Array, at: number): [Rlp, number] {
  const p = b[at]!
  const len = (n: number, from: number) =>
    Number(BigInt('0x' + (bytesToHex(b.subarray(from, from + n)) || '0')))
  if (p < 0x80) return [b.subarray(at, at + 1), at + 1]
  if (p <= 0xb7) return [b.subarray(at + 1, at + 1 + p - 0x80), at + 1 + p - 0x80]
  if (p <= 0xbf) {
    const n = p - 0xb7
    const l = len(n, at + 1)
    return [b.subarray(at + 1 + n, at + 1 + n + l), at + 1 + n + l]
  }
  let start: number
  let end: number
  if (p <= 0xf7) {
    start = at + 1
    end = start + p - 0xc0
  } else {
    const n = p - 0xf7
    start = at + 1 + n
    end = start + len(n, at + 1)
  }
  const list: Rlp[] = []
  let i = start
  while (i < end) {
    const [item, next] = rlpItem(b, i)
    list.push(item)
    i = next
  }
  if (i !== end || end > b.length) throw new Error('rlp: bad list length')
  return [list, end]
}
function rlpEncode(item: Rlp): Uint8Array {
  const prefix = (n: number, off: number) => {
    if (n < 56) return Uint8Array.of(off + n)
    const h = n.toString(16)
    const lb = hexToBytes(h.length % 2 ? '0' + h : h)
    return concatBytes(Uint8Array.of(off + 55 + lb.length), lb)
  }
  if (item instanceof Uint8Array)
    return item.length === 1 && item[0]! < 0x80 ? item : concatBytes(prefix(item.length, 0x80), item)
  const body = concatBytes(...item.map(rlpEncode))
  return concatBytes(prefix(body.length, 0xc0), body)
}
const big = (b: Rlp) => (b instanceof Uint8Array && b.length ? BigInt('0x' + bytesToHex(b)) : 0n)
const q = (n: bigint | number) => '0x' + BigInt(n).toString(16)
const word = (n: bigint) => '0x' + n.toString(16).padStart(64, '0')
const addrTopic = (a: string) => '0x' + a.slice(2).padStart(64, '0')

export interface PoolTx {
  hash: string
  raw: string
  from: string
  nonce: bigint
  maxFeePerGas: bigint
  maxPriorityFeePerGas: bigint
  gasLimit: bigint
  to: string
  value: bigint
  data: string
}
interface Receipt {
  status: bigint
  gasUsed: bigint
  effectiveGasPrice: bigint
  logs: { address: string; topics: string[]; data: string }[]
}
interface Block {
  number: bigint
  hash: string
  parentHash: string
  baseFee: bigint
  timestamp: bigint
  txs: { tx: PoolTx; receipt: Receipt }[]
}
interface State {
  eth: Map<string, bigint>
  nonce: Map<string, bigint>
  usdt: Map<string, bigint>
}

class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: string,
  ) {
    super(message)
  }
}

export class GethStandIn {
  chainId = 1n
  baseFee = 10n * GWEI
  /** What eth_maxPriorityFeePerGas suggests (eth/gasprice/gasprice.go SuggestTipCap). */
  tip = 1n * GWEI
  /** The pool's minimum tip (geth's --miner.gasprice, core/txpool/validation.go MinTip). */
  minTip = 1_000_000n
  /** Genesis state the test sets. */
  readonly genesis: State = { eth: new Map(), nonce: new Map(), usdt: new Map() }
  readonly blacklist = new Set<string>()
  paused = false
  readonly blocks: Block[] = []
  finalized: bigint | undefined
  /** core/txpool/legacypool: pending and queued transactions by sender and nonce. */
  readonly pool = new Map<string, Map<bigint, PoolTx>>()
  syncing: false | { currentBlock: bigint; highestBlock: bigint } = false
  /**
   * A fault of providers that balance requests over several nodes: receipts still come from a
   * backend that has not seen the reorg (its receipt names a block no longer canonical), while
   * blocks come from one that has. geth alone never does this (GetTransactionReceipt reads the
   * canonical index); an adapter must not trust such a receipt.
   */
  staleReceipts = false
  /** Blocks reorged out, which `staleReceipts` still answers from. */
  readonly orphans: Block[] = []
  readonly rawSent: string[] = []
  server!: StandinServer

  constructor() {
    this.blocks.push(this.makeBlock(0n, '0x' + '00'.repeat(32), []))
  }

  get url(): string {
    return this.server.url
  }

  async start(): Promise<void> {
    this.server = await startStandin(
      (req) => {
        const body = this.handle(req.body)
        return { status: 200, contentType: 'application/json', body }
      },
      (body) => {
        try {
          return (JSON.parse(body) as { method?: string }).method
        } catch {
          return undefined
        }
      },
    )
  }
  async stop(): Promise<void> {
    await this.server.close()
  }
  /** geth keeps its pool in memory only (legacypool; the journal is for local transactions): a restart forgets ours. */
  async restart(): Promise<void> {
    this.pool.clear()
    await this.server.restart()
  }

  fund(address: string, wei: bigint, usdtMinor = 0n): void {
    this.genesis.eth.set(address.toLowerCase(), wei)
    if (usdtMinor > 0n) this.genesis.usdt.set(address.toLowerCase(), usdtMinor)
  }

  head(): Block {
    return this.blocks[this.blocks.length - 1]!
  }

  /** The state after every canonical block, replayed from genesis. */
  state(upTo: bigint = this.head().number): State {
    const s: State = {
      eth: new Map(this.genesis.eth),
      nonce: new Map(this.genesis.nonce),
      usdt: new Map(this.genesis.usdt),
    }
    for (const block of this.blocks) {
      if (block.number > upTo) break
      for (const { tx } of block.txs) this.execute(s, tx, block.baseFee)
    }
    return s
  }

  /** Runs Tether's `transfer` (or a plain value transfer) on `s`; the receipt. */
  private execute(s: State, tx: PoolTx, baseFee: bigint): Receipt {
    const effectiveGasPrice = min(tx.maxFeePerGas, baseFee + tx.maxPriorityFeePerGas)
    const intrinsic = intrinsicGas(tx.data)
    let gasUsed = intrinsic
    let status = 1n
    const logs: Receipt['logs'] = []
    const nonce = s.nonce.get(tx.from) ?? 0n
    s.nonce.set(tx.from, nonce + 1n)
    if (tx.to === USDT_MAINNET) {
      const outcome = this.tetherCall(s, tx.from, tx.data, tx.gasLimit - intrinsic)
      gasUsed += outcome.gas
      status = outcome.ok ? 1n : 0n
      if (outcome.log) logs.push(outcome.log)
    }
    s.eth.set(tx.from, (s.eth.get(tx.from) ?? 0n) - gasUsed * effectiveGasPrice - (status ? tx.value : 0n))
    return { status, gasUsed, effectiveGasPrice, logs }
  }

  /** TetherToken.sol `transfer` (BasicToken/StandardToken, Pausable, BlackList). Changes `s` only when it succeeds. */
  private tetherCall(
    s: State,
    from: string,
    data: string,
    gasLeft: bigint,
  ): { ok: boolean; gas: bigint; kind?: 'revert' | 'invalid'; log?: Receipt['logs'][number] } {
    const hex = data.slice(2)
    if (hex.slice(0, 8) !== SEL.transfer)
      return { ok: false, gas: TRANSFER_EXEC_GAS_REVERTED, kind: 'revert' }
    // onlyPayloadSize(2 * 32): require(!(msg.data.length < size + 4))
    if (hex.length < 8 + 128) return { ok: false, gas: TRANSFER_EXEC_GAS_REVERTED, kind: 'revert' }
    // whenNotPaused, then require(!isBlackListed[msg.sender]): plain reverts, no reason string.
    if (this.paused || this.blacklist.has(from))
      return { ok: false, gas: TRANSFER_EXEC_GAS_REVERTED, kind: 'revert' }
    const to = '0x' + hex.slice(8 + 24, 8 + 64)
    const value = BigInt('0x' + hex.slice(8 + 64, 8 + 128))
    const held = s.usdt.get(from) ?? 0n
    // SafeMath.sub: assert(b <= a), an INVALID opcode in 0.4.17 that takes all the gas left.
    if (held < value) return { ok: false, gas: gasLeft, kind: 'invalid' }
    const gas = (s.usdt.get(to) ?? 0n) === 0n ? TRANSFER_EXEC_GAS_TO_NEW_HOLDER : TRANSFER_EXEC_GAS_TO_HOLDER
    if (gas > gasLeft) return { ok: false, gas: gasLeft, kind: 'invalid' }
    s.usdt.set(from, held - value)
    s.usdt.set(to, (s.usdt.get(to) ?? 0n) + value)
    return {
      ok: true,
      gas,
      log: {
        address: USDT_MAINNET,
        topics: [TRANSFER_TOPIC, addrTopic(from), addrTopic(to)],
        data: word(value),
      },
    }
  }

  private makeBlock(number: bigint, parentHash: string, txs: Block['txs']): Block {
    // A random hash part: the same height built again after a reorg is another block.
    const hash = '0x' + bytesToHex(keccak_256(concatBytes(hexToBytes(parentHash.slice(2)), randomBytes(16))))
    return { number, hash, parentHash, baseFee: this.baseFee, timestamp: 1_700_000_000n + number * 12n, txs }
  }

  /**
   * Builds `count` blocks from the pool: each sender's transactions in nonce order from its state
   * nonce, while their fee cap covers the base fee (the miner's ordering, miner/worker.go, reduced
   * to one sender at a time). A gap in the nonces stops that sender (queued, legacypool.go).
   */
  mine(count = 1, opts: { exclude?: string[] } = {}): void {
    for (let i = 0; i < count; i++) {
      const s = this.state()
      const parent = this.head()
      const included: Block['txs'] = []
      let gas = 0n
      for (const [from, byNonce] of this.pool) {
        let next = s.nonce.get(from) ?? 0n
        for (;;) {
          const tx = byNonce.get(next)
          if (!tx || tx.maxFeePerGas < this.baseFee || opts.exclude?.includes(tx.hash)) break
          if (gas + tx.gasLimit > BLOCK_GAS_LIMIT) break
          const receipt = this.execute(s, tx, this.baseFee)
          gas += receipt.gasUsed
          included.push({ tx, receipt })
          byNonce.delete(next)
          next++
        }
      }
      this.blocks.push(this.makeBlock(parent.number + 1n, parent.hash, included))
      // Transactions the chain made stale (a lower nonce than the state's) leave the pool (legacypool demoteUnexecutables).
      for (const [from, byNonce] of this.pool)
        for (const nonce of byNonce.keys()) if (nonce < (s.nonce.get(from) ?? 0n)) byNonce.delete(nonce)
    }
  }

  /** Moves the `finalized` tag to `number` (default: the head). */
  finalize(number: bigint = this.head().number): void {
    this.finalized = number
  }

  /**
   * Takes the last `depth` blocks out of the chain (they must be above the finalized block); their
   * transactions go back to the pool, as legacypool's reset re-injects the transactions of
   * discarded blocks, unless `dropTxs`.
   */
  reorg(depth: number, opts: { dropTxs?: boolean } = {}): void {
    for (let i = 0; i < depth; i++) {
      const block = this.blocks[this.blocks.length - 1]!
      if (this.finalized !== undefined && block.number <= this.finalized)
        throw new Error('cannot reorg a finalized block')
      this.blocks.pop()
      this.orphans.push(block)
      if (!opts.dropTxs) for (const { tx } of block.txs) this.addToPool(tx)
    }
  }

  /** A transaction evicted from the pool (a full pool, a restart of a peer, a lifetime that ran out). */
  drop(hash: string): void {
    for (const byNonce of this.pool.values())
      for (const [nonce, tx] of byNonce) if (tx.hash === hash) byNonce.delete(nonce)
  }

  pooled(hash: string): PoolTx | undefined {
    for (const byNonce of this.pool.values())
      for (const tx of byNonce.values()) if (tx.hash === hash) return tx
    return undefined
  }

  private addToPool(tx: PoolTx): void {
    let byNonce = this.pool.get(tx.from)
    if (!byNonce) this.pool.set(tx.from, (byNonce = new Map()))
    byNonce.set(tx.nonce, tx)
  }

  private mined(hash: string, withOrphans = false): { block: Block; index: number } | undefined {
    for (const block of withOrphans ? [...this.blocks, ...this.orphans] : this.blocks) {
      const index = block.txs.findIndex((t) => t.tx.hash === hash)
      if (index >= 0) return { block, index }
    }
    return undefined
  }

  private handle(body: string): string {
    let req: { id?: unknown; method?: unknown; params?: unknown }
    try {
      req = JSON.parse(body) as typeof req
    } catch {
      // rpc/errors.go parseError
      return JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error' } })
    }
    const id = req.id ?? null
    try {
      const result = this.dispatch(String(req.method), Array.isArray(req.params) ? req.params : [])
      return JSON.stringify({ jsonrpc: '2.0', id, result })
    } catch (err) {
      if (!(err instanceof RpcError)) throw err
      const error: Record<string, unknown> = { code: err.code, message: err.message }
      if (err.data !== undefined) error.data = err.data
      return JSON.stringify({ jsonrpc: '2.0', id, error })
    }
  }

  /** A block tag or number as geth resolves it (rpc/types.go BlockNumber). */
  private blockAt(tag: unknown): Block | null {
    if (tag === 'latest' || tag === 'pending' || tag === undefined) return this.head()
    if (tag === 'earliest') return this.blocks[0]!
    if (tag === 'finalized' || tag === 'safe') {
      // eth/api_backend.go HeaderByNumber
      if (this.finalized === undefined) throw new RpcError(-32000, `${tag} block not found`)
      return this.blocks.find((b) => b.number === this.finalized) ?? null
    }
    if (typeof tag === 'string' && /^0x[0-9a-f]+$/i.test(tag))
      return this.blocks.find((b) => b.number === BigInt(tag)) ?? null
    throw new RpcError(-32602, 'invalid argument 1: hex string without 0x prefix')
  }

  private dispatch(method: string, params: unknown[]): unknown {
    switch (method) {
      case 'web3_clientVersion':
        return 'Geth/v1.16.3-stable/linux-amd64/go1.24.6'
      case 'eth_chainId':
        return q(this.chainId)
      case 'eth_syncing':
        return this.syncing === false
          ? false
          : {
              startingBlock: '0x0',
              currentBlock: q(this.syncing.currentBlock),
              highestBlock: q(this.syncing.highestBlock),
            }
      case 'eth_blockNumber':
        return q(this.head().number)
      case 'eth_gasPrice':
        return q(this.baseFee + this.tip)
      case 'eth_maxPriorityFeePerGas':
        return q(this.tip)
      case 'eth_feeHistory': {
        // internal/ethapi/api.go FeeHistory: baseFeePerGas has one entry more, the next block's.
        const count = Number(BigInt(String(params[0])))
        const newest = this.blockAt(params[1])!
        const from = newest.number - BigInt(count) + 1n > 0n ? newest.number - BigInt(count) + 1n : 0n
        const blocks = this.blocks.filter((b) => b.number >= from && b.number <= newest.number)
        return {
          oldestBlock: q(from),
          baseFeePerGas: [...blocks.map((b) => q(b.baseFee)), q(this.baseFee)],
          gasUsedRatio: blocks.map(() => 0.5),
          reward: Array.isArray(params[2])
            ? blocks.map(() => (params[2] as unknown[]).map(() => q(this.tip)))
            : undefined,
        }
      }
      case 'eth_getBalance': {
        const block = this.blockAt(params[1])
        if (!block) throw new RpcError(-32000, 'header not found')
        return q(this.state(block.number).eth.get(String(params[0]).toLowerCase()) ?? 0n)
      }
      case 'eth_getTransactionCount': {
        const address = String(params[0]).toLowerCase()
        const mined = this.state().nonce.get(address) ?? 0n
        if (params[1] !== 'pending') return q(mined)
        // legacypool Nonce(): the next nonce after the pending (executable) run, queued ones not counted.
        let next = mined
        while (this.pool.get(address)?.has(next)) next++
        return q(next)
      }
      case 'eth_call': {
        const call = params[0] as { to?: string; data?: string; from?: string }
        const block = this.blockAt(params[1])
        if (!block) throw new RpcError(-32000, 'header not found')
        if (call.to?.toLowerCase() !== USDT_MAINNET) return '0x'
        const data = (call.data ?? '0x').slice(2)
        const arg = '0x' + data.slice(8 + 24, 8 + 64)
        if (data.startsWith(SEL.balanceOf)) return word(this.state(block.number).usdt.get(arg) ?? 0n)
        if (data.startsWith(SEL.isBlackListed)) return word(this.blacklist.has(arg) ? 1n : 0n)
        if (data.startsWith(SEL.paused)) return word(this.paused ? 1n : 0n)
        throw new RpcError(3, 'execution reverted', '0x')
      }
      case 'eth_estimateGas': {
        const call = params[0] as { to?: string; data?: string; from?: string }
        const from = String(call.from ?? '0x' + '00'.repeat(20)).toLowerCase()
        const data = call.data ?? '0x'
        if (call.to?.toLowerCase() !== USDT_MAINNET) return q(21_000n)
        const outcome = this.tetherCall(this.state(), from, data, BLOCK_GAS_LIMIT)
        // internal/ethapi/errors.go: a revert is code 3; eth/gasestimator: a failure at the cap otherwise.
        if (outcome.kind === 'revert') throw new RpcError(3, 'execution reverted', '0x')
        if (outcome.kind === 'invalid')
          throw new RpcError(-32000, `gas required exceeds allowance (${BLOCK_GAS_LIMIT})`)
        return q(intrinsicGas(data) + outcome.gas)
      }
      case 'eth_sendRawTransaction':
        return this.sendRaw(String(params[0]))
      case 'eth_getTransactionByHash': {
        const hash = String(params[0]).toLowerCase()
        const pooled = this.pooled(hash)
        if (pooled) return { ...txJson(pooled), blockHash: null, blockNumber: null, transactionIndex: null }
        const found = this.mined(hash)
        if (!found) return null
        return {
          ...txJson(found.block.txs[found.index]!.tx),
          blockHash: found.block.hash,
          blockNumber: q(found.block.number),
          transactionIndex: q(found.index),
        }
      }
      case 'eth_getTransactionReceipt': {
        // internal/ethapi/api.go GetTransactionReceipt: null for a transaction in no canonical block.
        const found = this.mined(String(params[0]).toLowerCase(), this.staleReceipts)
        if (!found) return null
        const { tx, receipt } = found.block.txs[found.index]!
        return {
          blockHash: found.block.hash,
          blockNumber: q(found.block.number),
          transactionHash: tx.hash,
          transactionIndex: q(found.index),
          from: tx.from,
          to: tx.to,
          gasUsed: q(receipt.gasUsed),
          cumulativeGasUsed: q(receipt.gasUsed),
          contractAddress: null,
          logs: receipt.logs.map((log, i) => ({
            ...log,
            blockNumber: q(found.block.number),
            transactionHash: tx.hash,
            transactionIndex: q(found.index),
            blockHash: found.block.hash,
            logIndex: q(i),
            removed: false,
          })),
          logsBloom: '0x' + '00'.repeat(256),
          type: '0x2',
          effectiveGasPrice: q(receipt.effectiveGasPrice),
          status: q(receipt.status),
        }
      }
      case 'eth_getBlockByNumber': {
        const block = this.blockAt(params[0])
        if (!block) return null
        return {
          number: q(block.number),
          hash: block.hash,
          parentHash: block.parentHash,
          baseFeePerGas: q(block.baseFee),
          timestamp: q(block.timestamp),
          gasLimit: q(BLOCK_GAS_LIMIT),
          gasUsed: q(block.txs.reduce((a, t) => a + t.receipt.gasUsed, 0n)),
          transactions: block.txs.map((t) => t.tx.hash),
        }
      }
      default:
        // rpc/errors.go methodNotFoundError
        throw new RpcError(-32601, `the method ${method} does not exist/is not available`)
    }
  }

  /** internal/ethapi/api.go SendRawTransaction → core/txpool/validation.go and legacypool.go, in their order. */
  private sendRaw(rawHex: string): string {
    this.rawSent.push(rawHex)
    const bytes = hexToBytes(rawHex.replace(/^0x/, ''))
    if (bytes[0] !== 2) throw new RpcError(-32000, 'transaction type not supported')
    let fields: Rlp[]
    try {
      fields = rlpDecode(bytes.subarray(1)) as Rlp[]
      if (!Array.isArray(fields) || fields.length !== 12) throw new Error('fields')
    } catch {
      throw new RpcError(-32000, 'rlp: too few elements for types.DynamicFeeTx')
    }
    const [chainId, nonce, tip, feeCap, gas, to, value, data, , v, r, s] = fields
    const hash = '0x' + bytesToHex(keccak_256(bytes))
    // legacypool.go add: a known hash first.
    if (this.pooled(hash)) throw new RpcError(-32000, 'already known')
    if (big(chainId!) !== this.chainId)
      throw new RpcError(-32000, `invalid chain id for signer: have ${big(chainId!)} want ${this.chainId}`)
    const digest = keccak_256(concatBytes(Uint8Array.of(2), rlpEncode(fields.slice(0, 9))))
    let from: string
    try {
      const sig = concatBytes(
        Uint8Array.of(Number(big(v!))),
        hexToBytes(big(r!).toString(16).padStart(64, '0')),
        hexToBytes(big(s!).toString(16).padStart(64, '0')),
      )
      const pub = secp256k1.recoverPublicKey(sig, digest, { prehash: false })
      const point = secp256k1.Point.fromBytes(pub).toBytes(false)
      from = '0x' + bytesToHex(keccak_256(point.subarray(1)).subarray(12))
    } catch {
      throw new RpcError(-32000, 'invalid sender: invalid transaction v, r, s values')
    }
    const tx: PoolTx = {
      hash,
      raw: rawHex,
      from,
      nonce: big(nonce!),
      maxPriorityFeePerGas: big(tip!),
      maxFeePerGas: big(feeCap!),
      gasLimit: big(gas!),
      to: '0x' + bytesToHex(to as Uint8Array),
      value: big(value!),
      data: '0x' + bytesToHex(data as Uint8Array),
    }
    // validation.go ValidateTransaction
    if (tx.gasLimit > BLOCK_GAS_LIMIT) throw new RpcError(-32000, 'exceeds block gas limit')
    if (tx.maxFeePerGas < tx.maxPriorityFeePerGas)
      throw new RpcError(-32000, 'max priority fee per gas higher than max fee per gas')
    const intrinsic = intrinsicGas(tx.data)
    if (tx.gasLimit < intrinsic)
      throw new RpcError(-32000, `intrinsic gas too low: gas ${tx.gasLimit}, minimum needed ${intrinsic}`)
    if (tx.maxPriorityFeePerGas < this.minTip)
      throw new RpcError(
        -32000,
        `transaction gas price below minimum: gas tip cap ${tx.maxPriorityFeePerGas}, minimum needed ${this.minTip}`,
      )
    // validation.go ValidateTransactionWithState
    const state = this.state()
    const next = state.nonce.get(from) ?? 0n
    if (tx.nonce < next) throw new RpcError(-32000, `nonce too low: next nonce ${next}, tx nonce ${tx.nonce}`)
    const balance = state.eth.get(from) ?? 0n
    const cost = tx.gasLimit * tx.maxFeePerGas + tx.value
    if (balance < cost)
      throw new RpcError(
        -32000,
        `insufficient funds for gas * price + value: balance ${balance}, tx cost ${cost}, overshot ${cost - balance}`,
      )
    // list.go Add: a replacement must bump both fields by PriceBump (10%).
    const old = this.pool.get(from)?.get(tx.nonce)
    if (old) {
      const feeThreshold = (old.maxFeePerGas * 110n) / 100n
      const tipThreshold = (old.maxPriorityFeePerGas * 110n) / 100n
      if (tx.maxFeePerGas < feeThreshold || tx.maxPriorityFeePerGas < tipThreshold)
        throw new RpcError(-32000, 'replacement transaction underpriced')
    }
    this.addToPool(tx)
    return hash
  }
}

function min(a: bigint, b: bigint): bigint {
  return a < b ? a : b
}

/** core/state_transition.go IntrinsicGas: 21,000 plus 4 per zero and 16 per non-zero data byte. */
export function intrinsicGas(data: string): bigint {
  const bytes = hexToBytes(data.replace(/^0x/, ''))
  let gas = 21_000n
  for (const b of bytes) gas += b === 0 ? 4n : 16n
  return gas
}

function txJson(tx: PoolTx): Record<string, unknown> {
  return {
    hash: tx.hash,
    from: tx.from,
    to: tx.to,
    nonce: q(tx.nonce),
    gas: q(tx.gasLimit),
    maxFeePerGas: q(tx.maxFeePerGas),
    maxPriorityFeePerGas: q(tx.maxPriorityFeePerGas),
    value: q(tx.value),
    input: tx.data,
    type: '0x2',
    chainId: '0x1',
  }
}
