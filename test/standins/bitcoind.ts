/**
 * A stand-in for Bitcoin Core's JSON-RPC (v27), over the stand-in chain: the node's methods at `/`
 * and each loaded wallet's at `/wallet/<name>`. Each behaviour follows the upstream file named
 * beside it; the ones the service depends on most:
 * - JSON-RPC 1.0 replies `{result, error, id}`; an error travels with HTTP 500, 404 for an unknown
 *   method (src/httprpc.cpp, JSONErrorReply); bad credentials get a bare 401 (HTTPReq_JSONRPC).
 * - sendtoaddress commits the transaction to the wallet and answers its txid even when the
 *   mempool refuses it: the refusal is only logged (src/wallet/wallet.cpp, CommitTransaction:
 *   "Transaction cannot be broadcast immediately"). The wallet then holds a transaction no mempool has.
 * - gettransaction reports negative confirmations for a transaction that conflicts with the best
 *   chain, `walletconflicts`, and the wallet's mapValue (`comment`, `replaced_by_txid`,
 *   `replaces_txid`) (src/wallet/rpc/transactions.cpp, WalletTxToJSON); -5 for a non-wallet txid.
 * - importdescriptors refuses a key-less descriptor into a wallet with private keys (-4), a label
 *   on a ranged descriptor (-8), a range that does not include the current one (-8)
 *   (src/wallet/rpc/backup.cpp, ProcessDescriptorImport); a ranged descriptor's addresses get no
 *   address-book entry, setlabel gives one (src/wallet/rpc/addresses.cpp).
 * - createwallet / loadwallet errors (src/wallet/rpc/wallet.cpp): -4 "Database already exists",
 *   -18 "Path does not exist", -35 "already loaded"; a wallet method on a wallet not loaded -18.
 * - bumpfee (src/wallet/rpc/spend.cpp, src/wallet/feebumper.cpp): a replacement spending the same
 *   inputs, the old one marked replaced_by_txid, the comment copied; -4 for a mined transaction.
 * - abandontransaction: -5 "Transaction not eligible for abandonment" in the mempool or a block.
 * - getmempoolentry -5 "Transaction not in mempool" (src/rpc/mempool.cpp).
 * - -28 "Loading block index…" to every call while warming up after a restart (src/rpc/server.cpp).
 * - getbalances and listunspent count a descriptor wallet's watched outputs as its own, trusted
 *   when confirmed or our own in the mempool, `untrusted_pending` when an outsider's in the mempool
 *   (src/wallet/receive.cpp GetBalance, CachedTxIsTrusted; src/wallet/rpc/coins.cpp).
 * - sendtoaddress sizes the transaction as coin selection does: 68 vB per P2WPKH input, the payee's
 *   output and a change output (src/wallet/spend.cpp); the fee is the rate times that size.
 * Rescans are immediate: a watched address sees every transaction of the stand-in chain.
 */
import { HDKey } from '@scure/bip32'
import { createBase58check } from '@scure/base'
import { sha256 } from '@noble/hashes/sha2.js'
import { p2wpkh } from '@scure/btc-signer'
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { Chain, type ChainTx, type Refusal } from './chain.js'
import { startStandin, type StandinServer } from './http.js'

const REGTEST = { bech32: 'bcrt', pubKeyHash: 0x6f, scriptHash: 0xc4, wif: 0xef }
const SATS_PER_BTC = 100_000_000n
const base58check = createBase58check(sha256)

class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message)
  }
}

interface WalletTx {
  txid: string
  comment?: string
  replacedBy?: string
  replaces?: string
  abandoned: boolean
  timeReceived: number
}

interface Descriptor {
  desc: string
  checksum: string
  /** The ranged key, or the single address of `addr()`. */
  xpub?: string
  address?: string
  rangeEnd: number | null
  timestamp: number
}

export interface StandinWallet {
  name: string
  privateKeys: boolean
  loaded: boolean
  descriptors: Descriptor[]
  /** address -> label (purpose receive or send). */
  labels: Map<string, { label: string; purpose: 'receive' | 'send' }>
  txs: Map<string, WalletTx>
  /** Addresses the (hot) wallet's own keys hold: its funding and change. */
  ownAddresses: Set<string>
  derived: Map<string, { xpub: string; index: number }>
  derivedUpTo: Map<string, number>
}

export interface BitcoindStandin extends StandinServer {
  chain: Chain
  wallets: Map<string, StandinWallet>
  /** getblockchaininfo.chain: `regtest` unless a test points the node at another network. */
  chainName: string
  initialBlockDownload: boolean
  /** estimatesmartfee's answer in sat/vB, null for "Insufficient data" (a fresh regtest node). */
  feeRateSatPerVb: bigint | null
  warmingUp: boolean
  /** A node-wide fault for one method: its next calls answer this RPC error. */
  rpcErrors: Map<string, { code: number; message: string }>
  /** Money for a wallet's own keys: a confirmed coin of `sats` to a fresh address of that wallet. */
  fundWallet(name: string, sats: bigint): void
  /** A fresh address of a wallet's own keys (getnewaddress). */
  newAddress(name: string): string
  createWallet(name: string, opts: { privateKeys: boolean }): StandinWallet
  user: string
  password: string
}

export async function startBitcoindStandin(
  opts: { chain?: Chain; user?: string; password?: string } = {},
): Promise<BitcoindStandin> {
  const chain = opts.chain ?? new Chain()
  const user = opts.user ?? 'svcpay'
  const password = opts.password ?? 'pw'
  const wallets = new Map<string, StandinWallet>()
  const hexToTxid = new Map<string, string>()
  /** Transactions the wallets made, whether or not any mempool took them (the wallet keeps them). */
  const made = new Map<string, ChainTx>()
  const txOf = (txid: string): ChainTx | undefined => chain.txs.get(txid) ?? made.get(txid)
  const authorized = 'Basic ' + Buffer.from(`${user}:${password}`).toString('base64')
  // Assigned once the server exists; the handlers read the settings through it.
  // eslint-disable-next-line prefer-const
  let self: BitcoindStandin

  const btc = (sats: bigint) => {
    const sign = sats < 0n ? '-' : ''
    const abs = sats < 0n ? -sats : sats
    // Written as a JSON number with eight decimals, as UniValue's ValueFromAmount does.
    return `${sign}${abs / SATS_PER_BTC}.${(abs % SATS_PER_BTC).toString().padStart(8, '0')}`
  }
  const sats = (text: unknown) => {
    const m = /^(\d+)(?:\.(\d{1,8}))?$/.exec(String(text))
    if (!m) throw new RpcError(-3, 'Invalid amount')
    return BigInt(m[1]!) * SATS_PER_BTC + BigInt((m[2] ?? '').padEnd(8, '0'))
  }

  function createWallet(name: string, o: { privateKeys: boolean }): StandinWallet {
    const w: StandinWallet = {
      name,
      privateKeys: o.privateKeys,
      loaded: true,
      descriptors: [],
      labels: new Map(),
      txs: new Map(),
      ownAddresses: new Set(),
      derived: new Map(),
      derivedUpTo: new Map(),
    }
    wallets.set(name, w)
    return w
  }

  function newOwnAddress(w: StandinWallet): string {
    const address = p2wpkh(secp256k1.getPublicKey(secp256k1.utils.randomSecretKey(), true), REGTEST).address!
    w.ownAddresses.add(address)
    return address
  }

  /** IsMine: the wallet's own keys, an addr() descriptor, or an index within a ranged descriptor's range. */
  function isMine(w: StandinWallet, address: string): boolean {
    if (w.ownAddresses.has(address)) return true
    for (const d of w.descriptors) {
      if (d.address === address) return true
      if (!d.xpub || d.rangeEnd === null) continue
      const known = w.derived.get(address)
      if (known && known.xpub === d.xpub && known.index <= d.rangeEnd) return true
      let upTo = w.derivedUpTo.get(d.xpub) ?? -1
      if (upTo >= d.rangeEnd) continue
      const account = xpubKey(d.xpub).deriveChild(0)
      while (upTo < d.rangeEnd) {
        upTo++
        const a = p2wpkh(account.deriveChild(upTo).publicKey!, REGTEST).address!
        w.derived.set(a, { xpub: d.xpub, index: upTo })
      }
      w.derivedUpTo.set(d.xpub, upTo)
      const found = w.derived.get(address)
      if (found && found.xpub === d.xpub) return true
    }
    return false
  }

  function xpubKey(text: string): HDKey {
    const version = Buffer.from(base58check.decode(text).subarray(0, 4)).readUInt32BE(0)
    const versions =
      version === 0x043587cf
        ? { private: 0x04358394, public: 0x043587cf }
        : { private: 0x0488ade4, public: 0x0488b21e }
    return HDKey.fromExtendedKey(text, versions)
  }

  /** The wallet learns of every chain transaction that touches it (rescans are immediate here). */
  function sync(w: StandinWallet) {
    for (const tx of chain.txs.values()) {
      if (w.txs.has(tx.txid)) continue
      const touches =
        tx.outputs.some((o) => isMine(w, o.address)) ||
        tx.inputs.some((i) => {
          const prev = chain.outputOf(i)
          return prev !== undefined && isMine(w, prev.address)
        })
      if (touches) w.txs.set(tx.txid, { txid: tx.txid, abandoned: false, timeReceived: tx.firstSeen })
    }
  }

  /**
   * GetTxDepthInMainChain: depth in the best chain; minus the depth of a confirmed conflict; else 0.
   * A conflict reaches the descendants too: CWallet::MarkConflicted walks the wallet's spends of
   * each conflicted transaction's outputs and marks those conflicted at the same block
   * (src/wallet/wallet.cpp).
   */
  function depth(tx: ChainTx, hops = 0): number {
    if (tx.height !== null) return chain.confirmations(tx.txid)
    const conflict = chain.confirmedConflict(tx)
    if (conflict) return -chain.confirmations(conflict.txid)
    for (const input of tx.inputs) {
      const parent = txOf(input.txid)
      if (!parent || parent.height !== null || hops >= 25) continue
      const parentDepth = depth(parent, hops + 1)
      if (parentDepth < 0) return parentDepth
    }
    return 0
  }

  function walletConflicts(w: StandinWallet, tx: ChainTx): string[] {
    const out: string[] = []
    for (const other of w.txs.keys()) {
      if (other === tx.txid) continue
      const o = txOf(other)
      if (o && o.inputs.some((i) => tx.inputs.some((j) => i.txid === j.txid && i.vout === j.vout)))
        out.push(other)
    }
    return out
  }

  /** Coins of the wallet's own keys not spent by a live wallet transaction (IsSpent). */
  function spendable(w: StandinWallet): { txid: string; vout: number; value: bigint }[] {
    const spent = new Set<string>()
    for (const wtx of w.txs.values()) {
      const tx = txOf(wtx.txid)
      if (!tx || wtx.abandoned || depth(tx) < 0) continue
      for (const i of tx.inputs) spent.add(`${i.txid}:${i.vout}`)
    }
    const coins: { txid: string; vout: number; value: bigint }[] = []
    for (const wtx of w.txs.values()) {
      const tx = txOf(wtx.txid)
      if (!tx || wtx.abandoned || depth(tx) < 0) continue
      tx.outputs.forEach((o, vout) => {
        if (w.ownAddresses.has(o.address) && !spent.has(`${tx.txid}:${vout}`))
          coins.push({ txid: tx.txid, vout, value: o.value })
      })
    }
    return coins.sort((a, b) => (a.value > b.value ? -1 : 1))
  }

  /**
   * Every unspent output the wallet counts as its own, with whether it is trusted
   * (src/wallet/receive.cpp): a descriptor wallet counts a watched descriptor's outputs as its own
   * too (DescriptorScriptPubKeyMan::IsMine answers ISMINE_SPENDABLE whether or not it holds the
   * keys). CachedTxIsTrusted: confirmed, or unconfirmed in the mempool with every input ours.
   */
  function unspent(w: StandinWallet) {
    const spent = new Set<string>()
    for (const wtx of w.txs.values()) {
      const tx = txOf(wtx.txid)
      if (!tx || wtx.abandoned || depth(tx) < 0) continue
      for (const i of tx.inputs) spent.add(`${i.txid}:${i.vout}`)
    }
    const coins: Array<{
      tx: ChainTx
      vout: number
      address: string
      value: bigint
      depth: number
      trusted: boolean
    }> = []
    for (const wtx of w.txs.values()) {
      const tx = txOf(wtx.txid)
      if (!tx || wtx.abandoned) continue
      const d = depth(tx)
      if (d < 0) continue
      const fromMe =
        tx.inputs.length > 0 &&
        tx.inputs.every((i) => {
          const prev = chain.outputOf(i)
          return prev !== undefined && isMine(w, prev.address)
        })
      const trusted = d > 0 || (fromMe && chain.mempool.has(tx.txid))
      tx.outputs.forEach((o, vout) => {
        if (isMine(w, o.address) && !spent.has(`${tx.txid}:${vout}`))
          coins.push({ tx, vout, address: o.address, value: o.value, depth: d, trusted })
      })
    }
    return coins
  }

  function requireWallet(name: string | null): StandinWallet {
    const w = name === null ? undefined : wallets.get(name)
    if (!w || !w.loaded) throw new RpcError(-18, 'Requested wallet does not exist or is not loaded')
    sync(w)
    return w
  }

  function named(params: unknown, names: string[]): Record<string, unknown> {
    if (Array.isArray(params)) return Object.fromEntries(names.map((n, i) => [n, params[i]]))
    return (params ?? {}) as Record<string, unknown>
  }

  function commit(w: StandinWallet, tx: ChainTx, extra: Partial<WalletTx> = {}): Refusal | null {
    hexToTxid.set(tx.hex, tx.txid)
    made.set(tx.txid, tx)
    // CommitTransaction: into the wallet first, then offered to the mempool; a refusal is only logged.
    w.txs.set(tx.txid, { txid: tx.txid, abandoned: false, timeReceived: chain.now(), ...extra })
    return chain.accept(tx)
  }

  function walletTxJson(w: StandinWallet, wtx: WalletTx) {
    const tx = txOf(wtx.txid)
    if (!tx) throw new RpcError(-5, 'Invalid or non-wallet transaction id')
    const d = depth(tx)
    const block = chain.blockOf(tx.txid)
    const received = tx.outputs.filter((o) => isMine(w, o.address) && !w.ownAddresses.has(o.address))
    const sent = tx.outputs.filter((o) => !isMine(w, o.address))
    const fromMe = tx.inputs.some((i) => {
      const prev = chain.outputOf(i)
      return prev !== undefined && w.ownAddresses.has(prev.address)
    })
    const amount = fromMe
      ? -sent.reduce((s, o) => s + o.value, 0n)
      : received.reduce((s, o) => s + o.value, 0n)
    return {
      amount: btc(amount),
      ...(fromMe ? { fee: btc(-tx.feeSats) } : {}),
      confirmations: d,
      ...(block
        ? { blockhash: block.hash, blockheight: block.height, blockindex: 1, blocktime: block.time }
        : { trusted: d === 0 && fromMe && chain.mempool.has(tx.txid) }),
      txid: tx.txid,
      wtxid: tx.txid,
      walletconflicts: walletConflicts(w, tx),
      mempoolconflicts: [],
      time: wtx.timeReceived,
      timereceived: wtx.timeReceived,
      'bip125-replaceable': d <= 0 ? 'yes' : 'no',
      ...(wtx.comment !== undefined ? { comment: wtx.comment } : {}),
      ...(wtx.replacedBy ? { replaced_by_txid: wtx.replacedBy } : {}),
      ...(wtx.replaces ? { replaces_txid: wtx.replaces } : {}),
      details: [],
      hex: tx.hex,
      abandoned: wtx.abandoned,
      fromMe,
      tx,
    }
  }

  /** listtransactions entries of one wallet transaction (src/wallet/rpc/transactions.cpp, ListTransactions). */
  function entries(w: StandinWallet, wtx: WalletTx, label: string | null) {
    const j = walletTxJson(w, wtx)
    const { tx, fromMe, details: _d, hex: _h, abandoned: _ab, ...common } = j
    const out: Record<string, unknown>[] = []
    if (label === null && fromMe) {
      tx.outputs.forEach((o, vout) => {
        if (isMine(w, o.address)) return
        out.push({
          ...common,
          address: o.address,
          category: 'send',
          amount: btc(-o.value),
          vout,
          fee: btc(-tx.feeSats),
          abandoned: wtx.abandoned,
        })
      })
    }
    tx.outputs.forEach((o, vout) => {
      if (!isMine(w, o.address) || w.ownAddresses.has(o.address)) return
      const entryLabel = w.labels.get(o.address)?.label
      if (label !== null && entryLabel !== label) return
      const { fee: _fee, ...rest } = common
      out.push({
        ...rest,
        address: o.address,
        category: 'receive',
        amount: btc(o.value),
        ...(entryLabel !== undefined ? { label: entryLabel } : {}),
        vout,
        abandoned: wtx.abandoned,
      })
    })
    return out
  }

  const methods: Record<string, (wallet: string | null, params: unknown) => unknown> = {
    getnetworkinfo: () => ({
      version: 270100,
      subversion: '/Satoshi:27.1.0/',
      protocolversion: 70016,
      connections: 8,
      networkactive: true,
      relayfee: 0.00001,
      warnings: [],
    }),
    getblockchaininfo: () => ({
      chain: self.chainName,
      blocks: self.initialBlockDownload ? Math.max(0, chain.tipHeight - 100) : chain.tipHeight,
      headers: chain.tipHeight,
      bestblockhash: chain.tip.hash,
      verificationprogress: self.initialBlockDownload ? 0.42 : 1,
      initialblockdownload: self.initialBlockDownload,
      pruned: false,
      warnings: [],
    }),
    estimatesmartfee: (_w, params) => {
      const p = named(params, ['conf_target'])
      const target = Number(p.conf_target)
      if (!(target >= 1 && target <= 1008))
        throw new RpcError(-8, 'Invalid conf_target, must be between 1 and 1008')
      if (self.feeRateSatPerVb === null)
        return { errors: ['Insufficient data or no feerate found'], blocks: 0 }
      // BTC per kvB.
      return { feerate: Number(btc(self.feeRateSatPerVb * 1000n)), blocks: target }
    },
    // src/rpc/rawtransaction.cpp, getrawtransaction: without -txindex a mined transaction is found
    // only in the block named (-5 otherwise, with these words); verbosity 2 adds each input's
    // prevout (TxToJSON, SHOW_DETAILS_AND_PREVOUT) with its scriptPubKey's address (core_write.cpp).
    getrawtransaction: (_w, params) => {
      const p = named(params, ['txid', 'verbosity', 'blockhash'])
      const txid = String(p.txid)
      const tx = txOf(txid)
      const block = tx ? chain.blockOf(txid) : undefined
      if (!tx || (!chain.mempool.has(txid) && p.blockhash === undefined))
        throw new RpcError(
          -5,
          'No such mempool transaction. Use -txindex or provide a block hash to enable blockchain transaction queries. Use gettransaction for wallet transactions.',
        )
      if (p.blockhash !== undefined && block?.hash !== p.blockhash)
        throw new RpcError(
          -5,
          'No such transaction found in the provided block. Use gettransaction for wallet transactions.',
        )
      if (Number(p.verbosity ?? 0) === 0) return tx.hex
      const verbose = Number(p.verbosity) >= 2
      return {
        txid,
        hex: tx.hex,
        vin: tx.inputs.map((i) => {
          const prev = chain.outputOf(i)
          return {
            txid: i.txid,
            vout: i.vout,
            ...(verbose && prev
              ? {
                  prevout: {
                    generated: false,
                    height: txOf(i.txid)?.height ?? 0,
                    value: Number(btc(prev.value)),
                    scriptPubKey: { address: prev.address, type: 'witness_v0_keyhash' },
                  },
                }
              : {}),
          }
        }),
        vout: tx.outputs.map((o, n) => ({
          value: Number(btc(o.value)),
          n,
          scriptPubKey: { address: o.address },
        })),
        ...(block ? { blockhash: block.hash, confirmations: chain.confirmations(txid) } : {}),
      }
    },
    getmempoolentry: (_w, params) => {
      const txid = String(named(params, ['txid']).txid)
      const tx = txOf(txid)
      if (!tx || !chain.mempool.has(txid)) throw new RpcError(-5, 'Transaction not in mempool')
      return {
        vsize: tx.vsize,
        weight: tx.vsize * 4,
        time: tx.firstSeen,
        fees: { base: Number(btc(tx.feeSats)) },
        'bip125-replaceable': true,
      }
    },
    testmempoolaccept: (_w, params) => {
      const rawtxs = named(params, ['rawtxs']).rawtxs as string[]
      return rawtxs.map((raw) => {
        const tx = txOf(hexToTxid.get(raw) ?? '')
        if (!tx) throw new RpcError(-22, 'TX decode failed')
        const refusal = chain.check(tx)
        // src/rpc/mempool.cpp, testmempoolaccept: TX_MISSING_INPUTS is reported as "missing-inputs"
        // (sendrawtransaction's -25 "bad-txns-inputs-missingorspent"); a transaction whose outputs
        // are already known is TX_CONFLICT "txn-already-known" (src/validation.cpp, PreChecks).
        const reason =
          refusal?.code === -25
            ? 'missing-inputs'
            : refusal?.code === -27
              ? 'txn-already-known'
              : refusal?.message
        return refusal
          ? { txid: tx.txid, wtxid: tx.txid, allowed: false, 'reject-reason': reason }
          : {
              txid: tx.txid,
              wtxid: tx.txid,
              allowed: true,
              vsize: tx.vsize,
              fees: { base: Number(btc(tx.feeSats)) },
            }
      })
    },
    sendrawtransaction: (_w, params) => {
      const raw = String(named(params, ['hexstring']).hexstring)
      const tx = txOf(hexToTxid.get(raw) ?? '')
      if (!tx) throw new RpcError(-22, 'TX decode failed. Make sure the tx has at least one input.')
      const refusal = chain.accept(tx)
      if (refusal) throw new RpcError(refusal.code, refusal.message)
      return tx.txid
    },
    createwallet: (_w, params) => {
      const p = named(params, ['wallet_name', 'disable_private_keys', 'blank'])
      const name = String(p.wallet_name)
      if (wallets.has(name))
        throw new RpcError(
          -4,
          `Wallet file verification failed. Failed to create database path '/data/wallets/${name}'. Database already exists.`,
        )
      createWallet(name, { privateKeys: p.disable_private_keys !== true })
      return { name, warnings: [] }
    },
    loadwallet: (_w, params) => {
      const name = String(named(params, ['filename']).filename)
      const w = wallets.get(name)
      if (!w)
        throw new RpcError(
          -18,
          `Wallet file verification failed. Failed to load database path '/data/wallets/${name}'. Path does not exist.`,
        )
      if (w.loaded) throw new RpcError(-35, `Wallet "${name}" is already loaded.`)
      w.loaded = true
      return { name, warnings: [] }
    },
    listwallets: () => [...wallets.values()].filter((w) => w.loaded).map((w) => w.name),
    getwalletinfo: (wallet) => {
      const w = requireWallet(wallet)
      return {
        walletname: w.name,
        walletversion: 169900,
        format: 'sqlite',
        txcount: w.txs.size,
        keypoolsize: w.privateKeys ? 1000 : 0,
        private_keys_enabled: w.privateKeys,
        avoid_reuse: false,
        scanning: false,
        descriptors: true,
        external_signer: false,
        blank: !w.privateKeys,
        birthtime: 1700000000,
        lastprocessedblock: { hash: chain.tip.hash, height: chain.tipHeight },
      }
    },
    // src/wallet/rpc/coins.cpp getbalances -> src/wallet/receive.cpp GetBalance: an unspent output
    // of a trusted transaction is `trusted`; of an untrusted one still in the mempool (an outside
    // payer's, unconfirmed) `untrusted_pending`; anything else (out of the mempool) counts nowhere.
    // The `watchonly` object is legacy wallets' only: a descriptor wallet reports all under `mine`.
    getbalances: (wallet) => {
      const w = requireWallet(wallet)
      let trusted = 0n
      let pending = 0n
      for (const c of unspent(w)) {
        if (c.trusted) trusted += c.value
        else if (chain.mempool.has(c.tx.txid)) pending += c.value
      }
      return {
        mine: { trusted: btc(trusted), untrusted_pending: btc(pending), immature: '0.00000000' },
        lastprocessedblock: { hash: chain.tip.hash, height: chain.tipHeight },
      }
    },
    // src/wallet/rpc/coins.cpp listunspent: minconf 1 and maxconf 9999999 by default; unsafe
    // outputs (untrusted, unconfirmed) included unless include_unsafe is false; amounts in BTC.
    listunspent: (wallet, params) => {
      const w = requireWallet(wallet)
      const p = named(params, ['minconf', 'maxconf', 'addresses', 'include_unsafe'])
      const minconf = p.minconf === undefined ? 1 : Number(p.minconf)
      const maxconf = p.maxconf === undefined ? 9_999_999 : Number(p.maxconf)
      const only = Array.isArray(p.addresses) ? new Set(p.addresses.map(String)) : null
      return unspent(w)
        .filter(
          (c) =>
            c.depth >= minconf &&
            c.depth <= maxconf &&
            (c.trusted || p.include_unsafe !== false) &&
            (c.depth > 0 || chain.mempool.has(c.tx.txid)) &&
            (!only || only.has(c.address)),
        )
        .map((c) => ({
          txid: c.tx.txid,
          vout: c.vout,
          address: c.address,
          ...(w.labels.has(c.address) ? { label: w.labels.get(c.address)!.label } : {}),
          amount: btc(c.value),
          confirmations: c.depth,
          spendable: w.privateKeys,
          solvable: true,
          parent_descs: [],
          safe: c.trusted,
        }))
    },
    importdescriptors: (wallet, params) => {
      const w = requireWallet(wallet)
      const requests = named(params, ['requests']).requests as Record<string, unknown>[]
      return requests.map((r) => {
        try {
          const [desc, checksum] = String(r.desc).split('#')
          if (!checksum || checksum.length !== 8) throw new RpcError(-5, 'Missing checksum')
          const ranged = /^wpkh\(([a-zA-Z0-9]+)\/0\/\*\)$/.exec(desc!)
          const single = /^addr\(([a-zA-Z0-9]+)\)$/.exec(desc!)
          if (!ranged && !single) throw new RpcError(-5, `Unsupported descriptor in this stand-in: ${desc}`)
          if (ranged && r.label !== undefined)
            throw new RpcError(-8, 'Ranged descriptors should not have a label')
          // Neither an xpub nor an address carries a private key.
          if (w.privateKeys)
            throw new RpcError(
              -4,
              'Cannot import descriptor without private keys to a wallet with private keys enabled',
            )
          const range = Array.isArray(r.range) ? (r.range as number[]) : ranged ? [0, 999] : null
          const existing = w.descriptors.find((d) => d.desc === desc)
          if (existing && range && existing.rangeEnd !== null && range[1]! < existing.rangeEnd)
            throw new RpcError(-8, `new range must include current range = [0,${existing.rangeEnd}]`)
          const timestamp = r.timestamp === 'now' ? chain.now() : Number(r.timestamp)
          if (existing) existing.rangeEnd = range ? range[1]! : null
          else
            w.descriptors.push({
              desc: desc!,
              checksum,
              ...(ranged ? { xpub: ranged[1] } : { address: single![1] }),
              rangeEnd: range ? range[1]! : null,
              timestamp,
            })
          if (single && typeof r.label === 'string')
            w.labels.set(single[1]!, { label: r.label, purpose: 'receive' })
          return {
            success: true,
            ...(ranged && !r.range ? { warnings: ['Range not given, using default keypool range'] } : {}),
          }
        } catch (err) {
          if (!(err instanceof RpcError)) throw err
          return { success: false, error: { code: err.code, message: err.message } }
        }
      })
    },
    listdescriptors: (wallet) => {
      const w = requireWallet(wallet)
      return {
        wallet_name: w.name,
        descriptors: w.descriptors.map((d) => ({
          desc: `${d.desc}#${d.checksum}`,
          timestamp: d.timestamp,
          active: false,
          ...(d.rangeEnd !== null ? { range: [0, d.rangeEnd], next: 0, next_index: 0 } : {}),
        })),
      }
    },
    getaddressinfo: (wallet, params) => {
      const w = requireWallet(wallet)
      const address = String(named(params, ['address']).address)
      const mine = isMine(w, address)
      const label = w.labels.get(address)
      return {
        address,
        ismine: mine,
        solvable: mine,
        iswatchonly: false,
        isscript: false,
        iswitness: true,
        labels: label ? [label.label] : [],
      }
    },
    setlabel: (wallet, params) => {
      const w = requireWallet(wallet)
      const p = named(params, ['address', 'label'])
      const address = String(p.address)
      w.labels.set(address, { label: String(p.label), purpose: isMine(w, address) ? 'receive' : 'send' })
      return null
    },
    listtransactions: (wallet, params) => {
      const w = requireWallet(wallet)
      const p = named(params, ['label', 'count', 'skip', 'include_watchonly'])
      const label = p.label === undefined || p.label === '*' ? null : String(p.label)
      const count = Number(p.count ?? 10)
      const skip = Number(p.skip ?? 0)
      const all = [...w.txs.values()]
        .sort((a, b) => a.timeReceived - b.timeReceived)
        .flatMap((wtx) => entries(w, wtx, label))
      // Oldest first; `skip` counts from the newest (src/wallet/rpc/transactions.cpp, listtransactions).
      const end = Math.max(all.length - skip, 0)
      return all.slice(Math.max(end - count, 0), end)
    },
    gettransaction: (wallet, params) => {
      const w = requireWallet(wallet)
      const txid = String(named(params, ['txid']).txid)
      const wtx = w.txs.get(txid)
      if (!wtx) throw new RpcError(-5, 'Invalid or non-wallet transaction id')
      const { tx: _tx, fromMe: _f, abandoned: _a, ...json } = walletTxJson(w, wtx)
      return json
    },
    sendtoaddress: (wallet, params) => {
      const w = requireWallet(wallet)
      if (!w.privateKeys) throw new RpcError(-4, 'Error: Private keys are disabled for this wallet')
      const p = named(params, [
        'address',
        'amount',
        'comment',
        'comment_to',
        'subtractfeefromamount',
        'replaceable',
        'conf_target',
        'estimate_mode',
        'avoid_reuse',
        'fee_rate',
      ])
      const address = String(p.address)
      if (!/^(bcrt1|[mn2])[a-zA-Z0-9]{20,90}$/.test(address)) throw new RpcError(-5, 'Invalid address')
      const amount = sats(p.amount)
      if (amount <= 0n) throw new RpcError(-3, 'Invalid amount for send')
      const rate = p.fee_rate !== undefined ? BigInt(String(p.fee_rate)) : (self.feeRateSatPerVb ?? 1n)
      const coins = spendable(w)
      const picked: typeof coins = []
      let total = 0n
      let vsize = 0
      // Coin selection sizes the transaction with its change output (src/wallet/spend.cpp): 10.5 vB
      // of overhead, 68 per P2WPKH input, the payee's output (31 vB P2WPKH, 43 P2WSH/P2TR), 31 the change.
      const payeeVb = address.length > 50 ? 43 : 31
      for (const c of coins) {
        picked.push(c)
        total += c.value
        vsize = Math.ceil((42 + 272 * picked.length + 4 * payeeVb + 124) / 4)
        if (total >= amount + rate * BigInt(vsize)) break
      }
      const fee = rate * BigInt(vsize)
      if (total < amount + fee) throw new RpcError(-6, 'Insufficient funds')
      const outputs = [{ address, value: amount }]
      if (total - amount - fee > 0n) outputs.push({ address: newOwnAddress(w), value: total - amount - fee })
      const tx = chain.makeTx({ inputs: picked.map((c) => ({ txid: c.txid, vout: c.vout })), outputs, vsize })
      commit(w, tx, typeof p.comment === 'string' ? { comment: p.comment } : {})
      return tx.txid
    },
    abandontransaction: (wallet, params) => {
      const w = requireWallet(wallet)
      const txid = String(named(params, ['txid']).txid)
      const wtx = w.txs.get(txid)
      const tx = txOf(txid)
      if (!wtx || !tx) throw new RpcError(-5, 'Invalid or non-wallet transaction id')
      if (chain.mempool.has(txid) || depth(tx) > 0)
        throw new RpcError(-5, 'Transaction not eligible for abandonment')
      wtx.abandoned = true
      return null
    },
    bumpfee: (wallet, params) => {
      const w = requireWallet(wallet)
      const p = named(params, ['txid', 'options'])
      const txid = String(p.txid)
      const wtx = w.txs.get(txid)
      const tx = txOf(txid)
      if (!wtx || !tx) throw new RpcError(-5, 'Invalid or non-wallet transaction id')
      if (depth(tx) !== 0)
        throw new RpcError(-4, 'Transaction has been mined, or is conflicted with a mined transaction')
      if (wtx.replacedBy)
        throw new RpcError(
          -4,
          `Cannot bump transaction ${txid} which was already bumped by transaction ${wtx.replacedBy}`,
        )
      const rate = BigInt(
        String(
          (p.options as Record<string, unknown> | undefined)?.fee_rate ?? (self.feeRateSatPerVb ?? 1n) * 2n,
        ),
      )
      const fee = rate * BigInt(tx.vsize)
      if (fee < tx.feeSats + BigInt(tx.vsize))
        throw new RpcError(
          -8,
          `Insufficient total fee ${btc(fee)}, must be at least ${btc(tx.feeSats + BigInt(tx.vsize))}`,
        )
      const change = tx.outputs.findIndex((o) => w.ownAddresses.has(o.address))
      if (change < 0 || tx.outputs[change]!.value < fee - tx.feeSats)
        throw new RpcError(-4, 'Unable to create transaction. Insufficient funds')
      const outputs = tx.outputs.map((o, i) =>
        i === change ? { ...o, value: o.value - (fee - tx.feeSats) } : o,
      )
      const replacement = chain.makeTx({ inputs: tx.inputs, outputs, vsize: tx.vsize })
      const refusal = commit(w, replacement, {
        replaces: txid,
        ...(wtx.comment !== undefined ? { comment: wtx.comment } : {}),
      })
      if (refusal) throw new RpcError(-4, `Unable to commit replacement: ${refusal.message}`)
      wtx.replacedBy = replacement.txid
      return { txid: replacement.txid, origfee: btc(tx.feeSats), fee: btc(fee), errors: [] }
    },
  }

  const server = await startStandin(
    ({ method, path, body, authorization }) => {
      // Credentials are checked before anything else: a bare 401 (src/httprpc.cpp, HTTPReq_JSONRPC).
      if (authorization !== authorized) return { status: 401, contentType: 'text/html', body: '' }
      const reply = (status: number, value: unknown) => ({
        status,
        contentType: 'application/json',
        body: value,
      })
      if (method !== 'POST')
        return { status: 405, contentType: 'text/html', body: 'JSONRPC server handles only POST requests' }
      let req: { id?: unknown; method?: string; params?: unknown }
      try {
        req = JSON.parse(body)
      } catch {
        return {
          status: 500,
          contentType: 'application/json',
          body: JSON.stringify({ result: null, error: { code: -32700, message: 'Parse error' }, id: null }),
        }
      }
      const walletMatch = /^\/wallet\/([^/?]+)/.exec(path)
      const wallet = walletMatch ? decodeURIComponent(walletMatch[1]!) : null
      const fn = methods[req.method ?? '']
      let out: { result: unknown; error: unknown }
      let status = 200
      try {
        if (self.warmingUp) throw new RpcError(-28, 'Loading block index…')
        const injected = self.rpcErrors.get(req.method ?? '')
        if (injected) throw new RpcError(injected.code, injected.message)
        if (!fn) throw new RpcError(-32601, 'Method not found')
        out = { result: fn(wallet, req.params), error: null }
      } catch (err) {
        if (!(err instanceof RpcError)) throw err
        status = err.code === -32601 ? 404 : 500
        out = { result: null, error: { code: err.code, message: err.message } }
      }
      // Amounts are JSON numbers: written from their decimal text, never through a float.
      const text = JSON.stringify({ ...out, id: req.id ?? null }, (_k, v) =>
        typeof v === 'bigint' ? v.toString() : v,
      ).replace(/"(amount|fee|trusted|untrusted_pending|immature|origfee)":"(-?\d+\.\d{8})"/g, '"$1":$2')
      return reply(status, text + '\n') as { status: number; contentType: string; body: string }
    },
    (body) => {
      try {
        return (JSON.parse(body) as { method?: string }).method
      } catch {
        return undefined
      }
    },
  )
  self = Object.assign(server, {
    chain,
    wallets,
    chainName: 'regtest',
    initialBlockDownload: false,
    feeRateSatPerVb: 10n as bigint | null,
    warmingUp: false,
    rpcErrors: new Map<string, { code: number; message: string }>(),
    user,
    password,
    createWallet,
    newAddress(name: string) {
      return newOwnAddress(wallets.get(name)!)
    },
    fundWallet(name: string, amount: bigint) {
      const w = wallets.get(name)!
      const coin = chain.fund(newOwnAddress(w), amount)
      w.txs.set(coin.txid, { txid: coin.txid, abandoned: false, timeReceived: chain.now() })
    },
  })
  return self
}
