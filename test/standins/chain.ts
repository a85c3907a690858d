/**
 * A small Bitcoin chain for the stand-in nodes (test/standins/esplora.ts and bitcoind.ts): blocks,
 * a mempool and the outpoints each transaction spends, so that the stand-ins can answer as a node
 * does when transactions confirm, conflict, are replaced, or leave the best chain in a
 * reorganisation. It follows the rules of Bitcoin Core's validation that the stand-ins' answers
 * depend on (src/validation.cpp, MemPoolAccept::PreChecks and ReplacementChecks; the wallet's
 * depth of a conflicted transaction in src/wallet/wallet.cpp, GetTxDepthInMainChain) and nothing
 * else: no scripts, no signatures.
 */
import { createHash, randomBytes } from 'node:crypto'

export interface Outpoint {
  txid: string
  vout: number
}

export interface ChainOutput {
  address: string
  value: bigint
}

export interface ChainTx {
  txid: string
  inputs: Outpoint[]
  outputs: ChainOutput[]
  /** What the inputs hold beyond the outputs, where the inputs are known. */
  feeSats: bigint
  vsize: number
  /** The raw transaction where one exists; stand-ins without one use a placeholder that maps back. */
  hex: string
  /** Height of the block that holds it in the best chain, null while unconfirmed. */
  height: number | null
  firstSeen: number
}

export type Refusal = { code: number; message: string }

interface Block {
  hash: string
  height: number
  time: number
  txids: string[]
}

/** Regtest's genesis block (src/kernel/chainparams.cpp, CRegTestParams). */
export const REGTEST_GENESIS = '0f9188f13cb7b2e71f2a335e3a4fc328bf5beb436012afef4cd4f1f3c7a4f9a2'
/** Bitcoin Core's default minimum relay fee: 1 sat/vB (-minrelaytxfee, src/policy/policy.h). */
export const MIN_RELAY_SAT_PER_VB = 1n

const key = (o: Outpoint) => `${o.txid}:${o.vout}`
export const randomTxid = () => randomBytes(32).toString('hex')

export class Chain {
  readonly blocks: Block[]
  readonly txs = new Map<string, ChainTx>()
  readonly mempool = new Set<string>()
  /** Outpoint -> the transaction (in the mempool or the best chain) that spends it. */
  readonly spentBy = new Map<string, string>()
  /**
   * Every transaction that was ever in a block, also after its block left the best chain: an index
   * keeps them (electrs writes a block's transactions to its txstore and never deletes them,
   * src/new_index/schema.rs add_blocks; only the confirming-block lookup skips orphaned blocks).
   */
  readonly everMined = new Map<string, ChainTx>()
  /** The next mempool acceptance is refused with this, whatever the transaction (a policy the test chooses). */
  refuseNext: Refusal | null = null
  /** A standing policy of the node's mempool (a non-standard output, a full mempool's minimum fee). */
  policy: ((tx: ChainTx) => Refusal | null) | null = null
  now: () => number = () => Math.floor(Date.now() / 1000)

  constructor(readonly genesisHash: string = REGTEST_GENESIS) {
    this.blocks = [{ hash: genesisHash, height: 0, time: this.now() - 3600, txids: [] }]
  }

  get tipHeight(): number {
    return this.blocks.length - 1
  }
  get tip(): Block {
    return this.blocks[this.blocks.length - 1]!
  }

  confirmations(txid: string): number {
    const tx = this.txs.get(txid)
    if (!tx || tx.height === null) return 0
    return this.tipHeight - tx.height + 1
  }

  blockOf(txid: string): Block | undefined {
    const tx = this.txs.get(txid)
    return tx && tx.height !== null ? this.blocks[tx.height] : undefined
  }

  /** The transaction in the best chain that spends one of `tx`'s inputs, other than `tx` itself. */
  confirmedConflict(tx: ChainTx): ChainTx | undefined {
    for (const input of tx.inputs) {
      const other = this.spentBy.get(key(input))
      if (other && other !== tx.txid && this.txs.get(other)?.height !== null) return this.txs.get(other)
    }
    return undefined
  }

  /** Mempool transactions spending any input of `tx` (other than `tx`). */
  mempoolConflicts(tx: ChainTx): ChainTx[] {
    const out = new Set<string>()
    for (const input of tx.inputs) {
      const other = this.spentBy.get(key(input))
      if (other && other !== tx.txid && this.mempool.has(other)) out.add(other)
    }
    return [...out].map((id) => this.txs.get(id)!)
  }

  outputOf(o: Outpoint): ChainOutput | undefined {
    return this.txs.get(o.txid)?.outputs[o.vout]
  }

  /** A transaction record, fee computed from the inputs it spends where they are known. */
  makeTx(input: {
    txid?: string
    inputs: Outpoint[]
    outputs: ChainOutput[]
    vsize?: number
    hex?: string
    feeSats?: bigint
  }): ChainTx {
    const txid = input.txid ?? randomTxid()
    let feeSats = input.feeSats ?? 0n
    if (input.feeSats === undefined) {
      const ins = input.inputs.map((o) => this.outputOf(o))
      if (ins.every((o) => o !== undefined)) {
        feeSats =
          ins.reduce((sum, o) => sum + o!.value, 0n) - input.outputs.reduce((sum, o) => sum + o.value, 0n)
      }
    }
    return {
      txid,
      inputs: input.inputs,
      outputs: input.outputs,
      feeSats,
      vsize: input.vsize ?? 141,
      hex: input.hex ?? `02000000${txid}`,
      height: null,
      firstSeen: this.now(),
    }
  }

  /**
   * Mempool acceptance as sendrawtransaction reports it (src/rpc/mempool.cpp, src/node/transaction.cpp
   * BroadcastTransaction): a transaction already in the mempool is accepted again; one whose
   * outputs are already in the chain is -27; a spent or missing input -25
   * "bad-txns-inputs-missingorspent"; a conflict with the mempool -26 "txn-mempool-conflict"
   * unless it pays more (a BIP 125 replacement, which evicts the other); below the relay minimum
   * -26 "min relay fee not met".
   */
  accept(tx: ChainTx): Refusal | null {
    if (this.refuseNext && !this.mempool.has(tx.txid)) {
      const refusal = this.refuseNext
      this.refuseNext = null
      return refusal
    }
    const refusal = this.check(tx)
    if (refusal || this.mempool.has(tx.txid)) return refusal
    for (const c of this.mempoolConflicts(tx)) this.evict(c.txid)
    this.txs.set(tx.txid, tx)
    this.mempool.add(tx.txid)
    for (const input of tx.inputs) this.spentBy.set(key(input), tx.txid)
    return null
  }

  /** Whether the mempool would take `tx`, changing nothing (testmempoolaccept). */
  check(tx: ChainTx): Refusal | null {
    const known = this.txs.get(tx.txid)
    if (known && this.mempool.has(tx.txid)) return null
    if (known && known.height !== null)
      return { code: -27, message: 'Transaction outputs already in utxo set' }
    const policy = this.policy?.(tx)
    if (policy) return policy
    // PreChecks (src/validation.cpp): an input the UTXO set and the mempool do not have (spent in
    // the chain, or a parent this node never saw or dropped) is TX_MISSING_INPUTS, "assume this might
    // be an orphan tx for which we just haven't seen parents yet": the same refusal either way.
    if (this.confirmedConflict(tx) || tx.inputs.some((o) => !this.available(o)))
      return { code: -25, message: 'bad-txns-inputs-missingorspent' }
    const conflicts = this.mempoolConflicts(tx)
    if (conflicts.some((c) => c.feeSats >= tx.feeSats)) return { code: -26, message: 'txn-mempool-conflict' }
    if (tx.feeSats < MIN_RELAY_SAT_PER_VB * BigInt(tx.vsize))
      return {
        code: -26,
        message: `min relay fee not met, ${tx.feeSats} < ${BigInt(tx.vsize) * MIN_RELAY_SAT_PER_VB}`,
      }
    return null
  }

  /** Whether an outpoint exists for the mempool: an output of a confirmed or mempool transaction (CCoinsViewMemPool). */
  available(o: Outpoint): boolean {
    const parent = this.txs.get(o.txid)
    if (!parent || parent.outputs[o.vout] === undefined) return false
    return parent.height !== null || this.mempool.has(o.txid)
  }

  /**
   * Drop a transaction from the mempool (evicted or replaced) with its mempool descendants, which
   * cannot stay without it (src/txmempool.cpp, removeRecursive; TrimToSize evicts whole packages).
   * The record stays for those who saw it (a wallet, an index that kept it).
   */
  evict(txid: string): void {
    if (!this.mempool.delete(txid)) return
    for (const input of this.txs.get(txid)!.inputs)
      if (this.spentBy.get(key(input)) === txid) this.spentBy.delete(key(input))
    for (const child of [...this.mempool])
      if (this.txs.get(child)!.inputs.some((i) => i.txid === txid)) this.evict(child)
  }

  /** Forget a transaction entirely, as an index that never saw it (or a node restarted without it). */
  forget(txid: string): void {
    this.evict(txid)
    this.txs.delete(txid)
  }

  /** Mine `n` blocks; the first takes the whole mempool and `extra` (transactions mined without being relayed). */
  mine(n = 1, extra: ChainTx[] = []): number {
    for (let i = 0; i < n; i++) {
      const height = this.tipHeight + 1
      const hash = createHash('sha256').update(randomBytes(32)).digest('hex')
      const txids: string[] = []
      if (i === 0) {
        for (const tx of extra) {
          for (const c of this.mempoolConflicts(tx)) this.evict(c.txid)
          this.txs.set(tx.txid, tx)
          for (const input of tx.inputs) this.spentBy.set(key(input), tx.txid)
          tx.height = height
          txids.push(tx.txid)
          this.everMined.set(tx.txid, tx)
        }
        for (const txid of this.mempool) {
          this.txs.get(txid)!.height = height
          txids.push(txid)
          this.everMined.set(txid, this.txs.get(txid)!)
        }
        this.mempool.clear()
      }
      this.blocks.push({ hash, height, time: this.now(), txids })
    }
    return this.tipHeight
  }

  /** Money from nowhere (a coinbase), confirmed in a new block: funds the test's wallets. */
  fund(address: string, value: bigint): ChainTx {
    const tx = this.makeTx({ inputs: [], outputs: [{ address, value }], feeSats: 0n })
    this.mine(1, [tx])
    return tx
  }

  /**
   * A reorganisation: the last `depth` blocks leave the best chain. Their transactions go back to
   * the mempool (src/validation.cpp, MaybeUpdateMempoolForReorg; coinbases never do), except those in `drop` (double-spent on the new branch, or simply not
   * rebroadcast), which are forgotten. The new branch is not mined here: call `mine`.
   */
  reorg(depth: number, drop: string[] = []): void {
    for (let i = 0; i < depth; i++) {
      const block = this.blocks.pop()!
      for (const txid of block.txids) {
        const tx = this.txs.get(txid)!
        tx.height = null
        if (drop.includes(txid) || tx.inputs.length === 0) {
          for (const input of tx.inputs)
            if (this.spentBy.get(key(input)) === txid) this.spentBy.delete(key(input))
          this.txs.delete(txid)
        } else this.mempool.add(txid)
      }
    }
  }
}

/** A payment from outside: a coin of the payer's (funded and mined first) spent to `address`, in the mempool. */
export function payFromOutside(chain: Chain, address: string, value: bigint, feeSats = 200n): ChainTx {
  const coin = chain.fund(`payer-${randomTxid().slice(0, 8)}`, value + feeSats)
  const tx = chain.makeTx({ inputs: [{ txid: coin.txid, vout: 0 }], outputs: [{ address, value }] })
  const refusal = chain.accept(tx)
  if (refusal) throw new Error(`the stand-in chain refused a payment: ${refusal.message}`)
  return tx
}
