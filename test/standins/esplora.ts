/**
 * A stand-in for Blockstream's electrs Esplora REST API (src/rest.rs, branch new-index), over the
 * stand-in chain. Each route answers as rest.rs's handle_request does, including its quirks:
 * - GET /tx/:txid/status answers 200 {"confirmed":false} for ANY txid it does not have: it reads
 *   only the chain (src/new_index/query.rs, get_tx_status). Only GET /tx/:txid answers 404
 *   "Transaction not found" (query.lookup_txn, chain then mempool).
 * - POST /tx hands the hex to bitcoind's sendrawtransaction (src/daemon.rs, broadcast_raw) and
 *   turns any failure into HTTP 400 with a text body (HttpError::from): the node's refusal as
 *   `sendrawtransaction RPC error: {"code":-26,"message":"..."}` (daemon.rs, parse_jsonrpc_reply),
 *   or `Connection error` when electrs cannot reach its node (src/errors.rs, ErrorKind::Connection).
 * - errors are text/plain (run_server); unknown routes 404.
 * - address history: up to 50 mempool transactions (MAX_MEMPOOL_TXS), confirmed ones 25 per page
 *   (CHAIN_TXS_PER_PAGE), newest first, the next page after `/txs/chain/:last_seen_txid`.
 * - GET /block-height/:h answers the block hash as text, 404 "Block not found" above the tip.
 * - GET /address/:addr answers chain_stats and mempool_stats; /address/:addr/utxo the confirmed
 *   unspent outputs less those the mempool spends, plus the mempool's (src/new_index/query.rs utxo),
 *   refused past utxos_limit (500) as "Too many history entries".
 * Faults (test/standins/http.ts): stalls, 5xx, cut answers, restarts; `nodeDown` makes broadcasts
 * fail as electrs does when its bitcoind is unreachable.
 */
import { hex } from '@scure/base'
import { Address, OutScript, Transaction } from '@scure/btc-signer'
import { Chain, type ChainTx } from './chain.js'
import { startStandin, type StandinServer } from './http.js'

const REGTEST = { bech32: 'bcrt', pubKeyHash: 0x6f, scriptHash: 0xc4, wif: 0xef }
const CHAIN_TXS_PER_PAGE = 25
const MAX_MEMPOOL_TXS = 50
const UTXOS_LIMIT = 500

export interface EsploraStandin extends StandinServer {
  chain: Chain
  /** What /fee-estimates answers (target blocks -> sat/vB, floats as electrs prints them). */
  feeEstimates: Record<string, number>
  /** electrs cannot reach its bitcoind: broadcasts answer 400 "Connection error". */
  nodeDown: boolean
  /**
   * Blocks the node has that electrs has not indexed yet: their transactions are in neither its
   * txstore nor its mempool (which follows bitcoind's, src/new_index/mempool.rs update), so
   * GET /tx/:txid answers 404 while bitcoind already answers -27 for them.
   */
  indexLag: number
}

export async function startEsploraStandin(chain = new Chain()): Promise<EsploraStandin> {
  // The stand-in object itself carries the settings a test changes; the handler reads them there.
  const state = {
    feeEstimates: { '1': 20.5, '2': 15.2, '3': 10.1, '6': 5.3, '144': 1.0 } as Record<string, number>,
    nodeDown: false,
  }
  const text = (status: number, body: string) => ({ status, contentType: 'text/plain', body })
  const json = (value: unknown) => ({
    status: 200,
    contentType: 'application/json',
    body: JSON.stringify(value),
  })

  function status(tx: ChainTx | undefined) {
    const block = tx ? chain.blockOf(tx.txid) : undefined
    // src/util/transaction.rs, TransactionStatus: the block fields only when confirmed.
    return block
      ? { confirmed: true, block_height: block.height, block_hash: block.hash, block_time: block.time }
      : { confirmed: false }
  }

  function txJson(tx: ChainTx) {
    return {
      txid: tx.txid,
      version: 2,
      locktime: 0,
      vin: tx.inputs.map((o) => ({
        txid: o.txid,
        vout: o.vout,
        prevout: chain.outputOf(o)
          ? { value: Number(chain.outputOf(o)!.value), scriptpubkey_address: chain.outputOf(o)!.address }
          : null,
        is_coinbase: false,
        sequence: 4294967293,
      })),
      vout: tx.outputs.map((o) => ({
        scriptpubkey_type: 'v0_p2wpkh',
        scriptpubkey_address: o.address,
        value: Number(o.value),
      })),
      size: tx.vsize,
      weight: tx.vsize * 4,
      fee: Number(tx.feeSats),
      status: status(tx),
    }
  }

  function history(address: string) {
    const touches = (tx: ChainTx) =>
      tx.outputs.some((o) => o.address === address) ||
      tx.inputs.some((i) => chain.outputOf(i)?.address === address)
    const mempool = [...chain.mempool]
      .map((id) => chain.txs.get(id)!)
      .filter(touches)
      .reverse()
    const confirmed: ChainTx[] = []
    for (let h = chain.tipHeight; h >= 0; h--) {
      for (const id of [...chain.blocks[h]!.txids].reverse()) {
        const tx = chain.txs.get(id)!
        if (touches(tx)) confirmed.push(tx)
      }
    }
    return { mempool: mempool.slice(0, MAX_MEMPOOL_TXS), confirmed }
  }

  /**
   * src/new_index/query.rs `utxo`: the address's confirmed unspent outputs, less those a mempool
   * transaction spends, plus the mempool's outputs to it. More than `utxos_limit` (500 by default,
   * src/config.rs) is refused as TooPopular, "Too many history entries" (src/errors.rs).
   */
  function utxos(address: string) {
    const spentInChain = new Set<string>()
    const spentInMempool = new Set<string>()
    for (const tx of chain.txs.values()) {
      const confirmed = chain.blockOf(tx.txid) !== undefined
      if (!confirmed && !chain.mempool.has(tx.txid)) continue
      for (const i of tx.inputs) (confirmed ? spentInChain : spentInMempool).add(`${i.txid}:${i.vout}`)
    }
    const out: Array<{ tx: ChainTx; vout: number; value: bigint }> = []
    for (const tx of chain.txs.values()) {
      if (chain.blockOf(tx.txid) === undefined && !chain.mempool.has(tx.txid)) continue
      tx.outputs.forEach((o, vout) => {
        const key = `${tx.txid}:${vout}`
        if (o.address === address && !spentInChain.has(key) && !spentInMempool.has(key))
          out.push({ tx, vout, value: o.value })
      })
    }
    return out
  }

  /** src/rest.rs GET /address/:addr: chain_stats and mempool_stats (ScriptStats, src/new_index/schema.rs). */
  function stats(address: string) {
    const zero = () => ({
      funded_txo_count: 0,
      funded_txo_sum: 0,
      spent_txo_count: 0,
      spent_txo_sum: 0,
      tx_count: 0,
    })
    const chainStats = zero()
    const mempoolStats = zero()
    for (const tx of chain.txs.values()) {
      const confirmed = chain.blockOf(tx.txid) !== undefined
      if (!confirmed && !chain.mempool.has(tx.txid)) continue
      const s = confirmed ? chainStats : mempoolStats
      let touched = false
      for (const o of tx.outputs)
        if (o.address === address) {
          s.funded_txo_count++
          s.funded_txo_sum += Number(o.value)
          touched = true
        }
      for (const i of tx.inputs) {
        const prev = chain.outputOf(i)
        if (prev?.address === address) {
          s.spent_txo_count++
          s.spent_txo_sum += Number(prev.value)
          touched = true
        }
      }
      if (touched) s.tx_count++
    }
    return { address, chain_stats: chainStats, mempool_stats: mempoolStats }
  }

  function broadcast(body: string) {
    if (state.nodeDown) return text(400, 'Connection error')
    let parsed: Transaction
    try {
      parsed = Transaction.fromRaw(hex.decode(body.trim().toLowerCase()), {
        allowUnknownInputs: true,
        allowUnknownOutputs: true,
        disableScriptCheck: true,
      })
    } catch {
      return text(400, 'sendrawtransaction RPC error: {"code":-22,"message":"TX decode failed"}')
    }
    const inputs = Array.from({ length: parsed.inputsLength }, (_, i) => {
      const input = parsed.getInput(i)
      return { txid: hex.encode(input.txid!), vout: input.index! }
    })
    const outputs = Array.from({ length: parsed.outputsLength }, (_, i) => {
      const out = parsed.getOutput(i)
      return { address: Address(REGTEST).encode(OutScript.decode(out.script!)), value: out.amount! }
    })
    const tx = chain.makeTx({ txid: parsed.id, inputs, outputs, vsize: parsed.vsize, hex: body.trim() })
    const refusal = chain.accept(tx)
    if (refusal) return text(400, `sendrawtransaction RPC error: ${JSON.stringify(refusal)}`)
    return text(200, tx.txid)
  }

  const server = await startStandin(({ method, path, body }) => {
    const parts = path.split('?')[0]!.split('/').filter(Boolean)
    if (method === 'POST' && parts.length === 1 && parts[0] === 'tx') return broadcast(body)
    if (method !== 'GET') return text(404, `Not found`)
    const [a, b, c, d, e] = parts
    if (a === 'blocks' && b === 'tip' && c === 'height')
      return text(200, String(chain.tipHeight - standin.indexLag))
    if (a === 'blocks' && b === 'tip' && c === 'hash') return text(200, chain.tip.hash)
    if (a === 'block-height' && b !== undefined && c === undefined) {
      const block = chain.blocks[Number(b)]
      return block ? text(200, block.hash) : text(404, 'Block not found')
    }
    if (a === 'block' && b !== undefined && c === undefined) {
      const block = chain.blocks.find((x) => x.hash === b)
      if (!block) return text(404, 'Block not found')
      return json({
        id: block.hash,
        height: block.height,
        version: 536870912,
        timestamp: block.time,
        tx_count: block.txids.length,
        previousblockhash: chain.blocks[block.height - 1]?.hash ?? null,
      })
    }
    if (a === 'tx' && b !== undefined && c === undefined) {
      // query.rs lookup_txn: the chain's txstore, then the mempool's. The txstore holds every
      // transaction of every indexed block, orphaned ones too (schema.rs); the mempool's drops an
      // evicted or replaced transaction (mempool.rs remove). So a transaction evicted before any
      // block is 404, one whose block left the chain is 200 {"confirmed":false} for ever.
      const tx = chain.txs.get(b) ?? chain.everMined.get(b)
      const indexed =
        tx !== undefined &&
        (chain.mempool.has(b) ||
          (chain.everMined.has(b) && (tx.height === null || tx.height <= chain.tipHeight - standin.indexLag)))
      return indexed ? json(txJson(tx)) : text(404, 'Transaction not found')
    }
    if (a === 'tx' && b !== undefined && c === 'outspend' && d !== undefined && e === undefined) {
      // rest.rs GET /tx/:txid/outspend/:vout, query.rs lookup_spend: the spend in the best chain
      // (schema.rs lookup_spend keeps only a spender with a confirming block) or the mempool.
      const spender = chain.spentBy.get(`${b}:${d}`)
      const spent =
        spender !== undefined && (chain.mempool.has(spender) || chain.blockOf(spender) !== undefined)
      return json(
        spent
          ? { spent: true, txid: spender, vin: 0, status: status(chain.txs.get(spender)) }
          : { spent: false },
      )
    }
    if (a === 'tx' && b !== undefined && c === 'status' && d === undefined)
      return json(status(chain.txs.get(b)))
    if (a === 'fee-estimates' && b === undefined) return json(state.feeEstimates)
    if (a === 'address' && b !== undefined && c === undefined) return json(stats(b))
    if (a === 'address' && b !== undefined && c === 'utxo' && d === undefined) {
      const list = utxos(b)
      if (list.length > UTXOS_LIMIT) return text(400, 'Too many history entries')
      return json(
        list.map((u) => ({ txid: u.tx.txid, vout: u.vout, status: status(u.tx), value: Number(u.value) })),
      )
    }
    if (a === 'address' && b !== undefined && c === 'txs') {
      const { mempool, confirmed } = history(b)
      if (d === undefined) return json([...mempool, ...confirmed.slice(0, CHAIN_TXS_PER_PAGE)].map(txJson))
      if (d === 'mempool' && e === undefined) return json(mempool.map(txJson))
      if (d === 'chain') {
        let start = 0
        if (e !== undefined) {
          const at = confirmed.findIndex((t) => t.txid === e)
          start = at < 0 ? confirmed.length : at + 1
        }
        return json(confirmed.slice(start, start + CHAIN_TXS_PER_PAGE).map(txJson))
      }
    }
    return text(404, `Not found`)
  })
  const standin = server as EsploraStandin
  standin.chain = chain
  standin.feeEstimates = state.feeEstimates
  standin.nodeDown = false
  standin.indexLag = 0
  Object.defineProperty(state, 'feeEstimates', { get: () => standin.feeEstimates })
  Object.defineProperty(state, 'nodeDown', { get: () => standin.nodeDown })
  return standin
}
