/**
 * A TronGrid stand-in: a java-tron full node's HTTP API (as TronGrid serves it, full-node and
 * solidity paths on one host) on 127.0.0.1, backed by a small chain that runs Tether's TRC-20 USDT
 * contract. Test code only.
 *
 * Every behaviour follows upstream; the comments name the file. Sources read:
 * - java-tron (tronprotocol/java-tron, 4.8.0): the servlets under
 *   framework/src/main/java/org/tron/core/services/http/ (and solidity/), core/Wallet.java,
 *   actuator/.../VMActuator.java, chainbase/.../capsule/utils/TransactionUtil.java,
 *   chainbase/.../db/BandwidthProcessor.java, common/.../runtime/vm/LogInfo.java,
 *   protocol/src/main/protos/core/Tron.proto and api/api.proto.
 * - Tether's TRC-20 USDT (TetherToken, Solidity 0.5, mainnet TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t):
 *   `StandardTokenWithFees.transfer(address,uint256)` is declared `returns (bool)` but has no
 *   return statement, so every successful transfer returns the ABI encoding of `false` (32 zero
 *   bytes); balances move through SafeMath `sub`, which `require`s and so REVERTs on a short
 *   balance; `transfer` also requires the sender not blacklisted and the token not paused.
 *
 * java-tron's JsonFormat prints protobuf messages without their default values: a zero number, an
 * empty byte string or the first enum value is left out of the JSON, as here.
 *
 * Only `visible: false` (hex addresses) is served, the form the adapter uses.
 *
 * For reconciliation: `/walletsolidity/triggerconstantcontract` runs a constant call on the
 * solidified state (solidity/SolidityNodeHttpApiService.java maps TriggerConstantContractServlet
 * there), and TronGrid's own v1 index of TRC-20 transfers is served from the chain's Transfer
 * events (trongrid-v1.ts, which names its sources).
 *
 * Failures a real node shows: `fault(path, ...)` makes the next requests to a path answer 5xx, stall
 * (no answer at all), or do their work and then stall (a broadcast the node took whose answer was
 * lost); `restart()` drops every connection and forgets the pending pool, as a restarted java-tron
 * does (its pending transactions live in memory only); `solidFrozen` keeps blocks from being
 * solidified (the solidity view lags while the full node moves on).
 */
import http from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { sha256 } from '@noble/hashes/sha2.js'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { bytesToHex, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { trc20History, type Trc20Transfer } from './trongrid-v1.js'

export type TronNetworkName = 'mainnet' | 'nile' | 'shasta'

/** Block 0's id on each public network (`/wallet/getblockbynum {num: 0}`), as tronweb also tells them apart. */
export const GENESIS_BLOCK_IDS: Record<TronNetworkName, string> = {
  mainnet: '00000000000000001ebf88508a03865c71d452e25f4d51194196a1d22b6653dc',
  nile: '0000000000000000d698d4192c56cb6be724a558448e2684802de4d6cd8690dc',
  shasta: '0000000000000000de1aa88295e1fcf982742f773e0419c5a9c134c994a9059e',
}
/** `node.p2p.version` per network, which getnodeinfo reports as configNodeInfo.p2pVersion. */
const P2P_VERSIONS: Record<TronNetworkName, string> = { mainnet: '11111', nile: '201910292', shasta: '1' }

export const USDT_MAINNET_HEX = '41a614f803b6fd780986a42c78ec9c7f77e6ded13c'
export const TRANSFER_SELECTOR = 'a9059cbb'
const BALANCE_OF_SELECTOR = bytesToHex(keccak_256(utf8ToBytes('balanceOf(address)'))).slice(0, 8)
/** keccak256('Transfer(address,address,uint256)'): topic 0 of the token's Transfer event. */
export const TRANSFER_TOPIC = bytesToHex(keccak_256(utf8ToBytes('Transfer(address,address,uint256)')))

/**
 * Energy of one USDT transfer: to a holder (a storage slot changes) and to an address that held no
 * USDT (a slot is created). These are the amounts mainnet charges today (the TVM's SSTORE costs,
 * raised by the dynamic energy factor on the USDT contract); the adapter must read them from the
 * node's own simulation rather than assume them.
 */
export const TRANSFER_ENERGY_TO_HOLDER = 64_285n
export const TRANSFER_ENERGY_TO_NEW_HOLDER = 130_285n
/** Energy a reverted transfer burns before its `require` fails. */
export const TRANSFER_ENERGY_REVERTED = 1_900n
const BALANCE_OF_ENERGY = 1_200n
/** java-tron's Constant.MAX_RESULT_SIZE_IN_TX: bandwidth added per contract for its result. */
const MAX_RESULT_SIZE_IN_TX = 64n

export interface TronAccount {
  /** TRX in sun. */
  balance: bigint
  /** Energy from staked TRX (EnergyLimit) and how much of it is used (EnergyUsed). */
  energyLimit: bigint
  energyUsed: bigint
  /** Staked bandwidth (NetLimit / NetUsed) and the daily free bandwidth used (freeNetUsed). */
  netLimit: bigint
  netUsed: bigint
  freeNetUsed: bigint
}

interface Block {
  number: number
  id: string
  timestamp: number
  txIds: string[]
}

/** What the stand-in built in triggersmartcontract, keyed by raw_data_hex: what a node would decode. */
interface Built {
  owner: string
  contract: string
  data: string
  feeLimit: bigint
  expiration: number
}

export type Fault = (
  | { kind: 'status'; status: number; body?: string }
  | { kind: 'stall' }
  /** The node does the work (a broadcast enters the pool) and the answer never comes. */
  | { kind: 'work-then-stall' }
) & {
  /** Only requests whose body this accepts meet the fault; others pass it by. */
  match?: (body: Json) => boolean
}

export interface StandInOptions {
  network?: TronNetworkName
  /** When set, TronGrid refuses requests without one of these keys in `TRON-PRO-API-KEY`. */
  apiKeys?: string[]
  /** The USDT contract's hex address (41...). */
  usdtContract?: string
  /** Blocks between the head and the latest solidified block. java-tron: 2/3 of 27 SRs, 19 blocks. */
  solidLag?: number
  /** Where the chain's clock starts; blocks are 3 s apart. */
  startMs?: number
}

type Json = Record<string, unknown>
type Answer = { status?: number; json?: unknown; text?: string; hang?: boolean }

export class TronGridStandIn {
  readonly network: TronNetworkName
  readonly usdtContract: string
  readonly apiKeys: Set<string> | undefined
  solidLag: number
  /** While set, the solidified block stays at this number whatever the head does. */
  solidFrozen: number | undefined
  /**
   * Blocks the node answering reads is behind the one taking broadcasts: TronGrid balances requests
   * over many full nodes, and one still syncing misses the newest blocks in /wallet/getnowblock,
   * gettransactionbyid and gettransactioninfobyid (each reads its own node's stores).
   */
  readLag = 0
  /** Sun per unit of energy burned (`getEnergyFee`; 100 on mainnet since 2024). */
  energyFee = 100n
  /** Sun per byte of bandwidth burned (`getTransactionFee`). */
  transactionFee = 1_000n
  /** Daily free bandwidth per account (`getFreeNetLimit`). */
  freeNetLimit = 600n
  /** The node serves /wallet/estimateenergy (`vm.estimateEnergy`, off in java-tron's default config). */
  estimateEnergyEnabled = false
  codeVersion = '4.8.0'
  versionNum = '18631'

  timeMs: number
  readonly accounts = new Map<string, TronAccount>()
  /** Tether's `balances`, by 41-prefixed hex address. */
  readonly usdt = new Map<string, bigint>()
  readonly blacklisted = new Set<string>()
  paused = false
  /**
   * Tether's transfer fee (StandardTokenWithFees.calcFee: value × basisPointsRate / 10000, at most
   * maximumFee), paid to the token's owner out of the amount. Both are 0 on mainnet today.
   */
  basisPointsRate = 0n
  maximumFee = 0n
  tetherOwner = '41' + 'ee'.repeat(20)
  readonly blocks: Block[] = []
  /** Pending transactions (memory only: a restart forgets them). */
  readonly pool = new Map<string, Json>()
  /** Transactions in blocks, and their TransactionInfo. */
  readonly txs = new Map<string, { body: Json; blockNumber: number }>()
  readonly infos = new Map<string, Json>()
  private readonly built = new Map<string, Built>()
  /** Every Transfer event the token emitted, in block order: what TronGrid indexes (trongrid-v1.ts). */
  readonly transfers: Trc20Transfer[] = []

  readonly requests: { path: string; headers: http.IncomingHttpHeaders; body: Json }[] = []
  /** `http <path>` per request, for tests that interleave the node's requests with their own steps. */
  readonly log: string[] = []
  /** Per-path replacements, for answers the model does not produce on its own. */
  readonly handlers = new Map<string, (body: Json) => Answer>()
  private readonly faults = new Map<string, Fault[]>()
  private readonly sockets = new Set<Socket>()
  private server = http.createServer((req, res) => this.handle(req, res))
  private port = 0
  url = ''

  constructor(options: StandInOptions = {}) {
    this.network = options.network ?? 'mainnet'
    this.usdtContract = options.usdtContract ?? USDT_MAINNET_HEX
    this.apiKeys = options.apiKeys ? new Set(options.apiKeys) : undefined
    this.solidLag = options.solidLag ?? 19
    this.timeMs = options.startMs ?? Date.now()
    this.server.on('connection', (socket) => {
      this.sockets.add(socket)
      socket.on('close', () => this.sockets.delete(socket))
    })
    this.blocks.push({ number: 0, id: GENESIS_BLOCK_IDS[this.network], timestamp: 0, txIds: [] })
    this.produceBlocks(1)
  }

  async start(): Promise<void> {
    await new Promise<void>((done) => this.server.listen(this.port, '127.0.0.1', done))
    this.port = (this.server.address() as AddressInfo).port
    this.url = `http://127.0.0.1:${this.port}`
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy()
    await new Promise((done) => this.server.close(done))
  }

  /**
   * The node process restarts: open connections drop and the pending pool is gone (java-tron keeps
   * pending transactions in memory, Manager.pendingTransactions); blocks and state stay.
   */
  async restart(): Promise<void> {
    await this.stop()
    this.pool.clear()
    // Down for a moment: clients see their connections close before the node listens again.
    await new Promise((done) => setTimeout(done, 100))
    this.server = http.createServer((req, res) => this.handle(req, res))
    this.server.on('connection', (socket) => {
      this.sockets.add(socket)
      socket.on('close', () => this.sockets.delete(socket))
    })
    await this.start()
  }

  fault(path: string, fault: Fault, times = 1): void {
    const list = this.faults.get(path) ?? []
    for (let i = 0; i < times; i++) list.push(fault)
    this.faults.set(path, list)
  }

  clearFaults(): void {
    this.faults.clear()
  }

  paths(): string[] {
    return this.requests.map((request) => request.path)
  }

  account(hex: string): TronAccount {
    let account = this.accounts.get(hex)
    if (!account) {
      account = { balance: 0n, energyLimit: 0n, energyUsed: 0n, netLimit: 0n, netUsed: 0n, freeNetUsed: 0n }
      this.accounts.set(hex, account)
    }
    return account
  }

  get head(): Block {
    return this.blocks.at(-1)!
  }

  get solidNumber(): number {
    const lagging = Math.max(0, this.head.number - this.solidLag)
    return this.solidFrozen === undefined ? lagging : Math.min(this.solidFrozen, lagging)
  }

  /**
   * Produces `count` blocks, 3 s apart, each holding the pool's transactions that have not expired
   * (java-tron drops expired pending transactions when it builds a block), executed in order.
   */
  produceBlocks(count = 1): void {
    for (let i = 0; i < count; i++) {
      this.timeMs += 3_000
      const number = this.head.number + 1
      const id =
        number.toString(16).padStart(16, '0') + bytesToHex(sha256(utf8ToBytes(`block ${number}`))).slice(16)
      const block: Block = { number, id, timestamp: this.timeMs, txIds: [] }
      this.blocks.push(block)
      for (const [txId, body] of this.pool) {
        this.pool.delete(txId)
        const expiration = Number((body.raw_data as Json).expiration)
        if (expiration < block.timestamp) continue
        block.txIds.push(txId)
        const info = this.execute(txId, body, block)
        this.infos.set(txId, info)
        // A transaction in a block carries its contract's result (Transaction.Result.contractRet).
        const contractRet = (info.receipt as Json).result
        this.txs.set(txId, { body: { ...body, ret: [{ contractRet }] }, blockNumber: number })
      }
    }
  }

  /** Produces blocks until today's head is solidified (nothing moves while `solidFrozen` holds it). */
  solidify(): void {
    const target = this.head.number
    for (let i = 0; this.solidNumber < target && i <= this.solidLag; i++) this.produceBlocks(1)
  }

  /**
   * A holder's USDT at the latest solidified block: today's balance with the transfers of the newer
   * blocks undone (a solidity node answers from the state as of its last solidified block).
   */
  solidUsdt(holder: string): bigint {
    let balance = this.usdt.get(holder) ?? 0n
    for (const t of this.transfers) {
      if (t.blockNumber <= this.solidNumber) continue
      if (t.from === holder) balance += t.value
      if (t.to === holder) balance -= t.value
    }
    return balance
  }

  /**
   * A USDT transfer signed outside the service by whoever holds `fromHex`'s key (a second system
   * sharing the hot wallet, a leaked key): built and pooled like any other, executed in the next
   * block. Returns its transaction id.
   */
  transferSignedElsewhere(fromHex: string, toHex: string, value: bigint, feeLimitSun = 100_000_000n): string {
    const answer = this.trigger({
      owner_address: fromHex,
      contract_address: this.usdtContract,
      function_selector: 'transfer(address,uint256)',
      parameter: word(toHex.slice(2)) + value.toString(16).padStart(64, '0'),
      fee_limit: Number(feeLimitSun),
    })
    const tx = answer.transaction as Json
    this.pool.set(String(tx.txID), { ...tx, signature: ['00'.repeat(65)] })
    return String(tx.txID)
  }

  // ---- the chain ---------------------------------------------------------------------------

  /**
   * Runs a TriggerSmartContract transaction against the USDT contract and builds its
   * TransactionInfo as TransactionUtil.buildTransactionInfoInstance does: `fee` = energy_fee +
   * net_fee; `result: FAILED` and `resMessage` on a failed run; `contractResult` the return data;
   * `log` each event with the contract's 20-byte address (LogInfo.buildLog).
   */
  private execute(txId: string, body: Json, block: Block): Json {
    const built = this.built.get(String(body.raw_data_hex))!
    const owner = this.account(built.owner)
    const receipt: Json = {}
    // Bandwidth first (BandwidthProcessor.consume): staked, then the free daily allowance, else TRX.
    const size = this.bandwidthOf(body)
    const netFee = this.chargeBandwidth(owner, size)
    if (netFee > 0n) receipt.net_fee = Number(netFee)
    else receipt.net_usage = Number(size)

    // Energy (VMActuator.getAccountEnergyLimitWithFixRatio): staked energy left plus what the TRX
    // balance can buy, capped by fee_limit.
    const stakedLeft = owner.energyLimit - owner.energyUsed
    const limit = min(stakedLeft + owner.balance / this.energyFee, built.feeLimit / this.energyFee)
    const run = this.runUsdt(built.owner, built.contract, built.data, limit)
    const used = run.outOfEnergy ? limit : run.energy
    const fromStake = min(used, stakedLeft)
    const burned = (used - fromStake) * this.energyFee
    owner.energyUsed += fromStake
    owner.balance -= burned
    if (fromStake > 0n) receipt.energy_usage = Number(fromStake)
    if (burned > 0n) receipt.energy_fee = Number(burned)
    if (used > 0n) receipt.energy_usage_total = Number(used)
    receipt.result = run.outOfEnergy ? 'OUT_OF_ENERGY' : run.reverted ? 'REVERT' : 'SUCCESS'

    const info: Json = {
      id: txId,
      blockNumber: block.number,
      blockTimeStamp: block.timestamp,
      contractResult: [run.outOfEnergy || run.reverted ? '' : run.returned],
      contract_address: built.contract,
      receipt,
    }
    const fee = netFee + burned
    if (fee > 0n) info.fee = Number(fee)
    if (!run.outOfEnergy && !run.reverted) {
      for (const [from, to, value] of run.transfers) {
        this.usdt.set(from, (this.usdt.get(from) ?? 0n) - value)
        this.usdt.set(to, (this.usdt.get(to) ?? 0n) + value)
        this.transfers.push({ txId, from, to, value, blockNumber: block.number, timestamp: block.timestamp })
      }
      info.log = run.transfers.map(([from, to, value]) => ({
        address: built.contract.slice(2),
        topics: [TRANSFER_TOPIC, word(from.slice(2)), word(to.slice(2))],
        data: value.toString(16).padStart(64, '0'),
      }))
    } else {
      info.result = 'FAILED'
      // VMActuator: a REVERT sets this runtime error; an exception its own message.
      info.resMessage = hex(
        run.outOfEnergy
          ? `Not enough energy for 'SSTORE' operation executing: curInvokeEnergyLimit[${limit}], curOpEnergy[20000], usedEnergy[${limit}]`
          : 'REVERT opcode executed',
      )
    }
    return info
  }

  /**
   * What Tether's contract does with `data` from `owner`, within `energyLimit`, without changing
   * state: energy used, the return data, the transfers it would make, or how it failed.
   */
  private runUsdt(owner: string, contract: string, data: string, energyLimit: bigint, solid = false) {
    const fail = {
      energy: TRANSFER_ENERGY_REVERTED,
      returned: '',
      transfers: [] as [string, string, bigint][],
    }
    if (contract !== this.usdtContract) return { ...fail, reverted: true, outOfEnergy: false }
    const selector = data.slice(0, 8)
    if (selector === BALANCE_OF_SELECTOR) {
      const who = '41' + data.slice(8 + 24, 8 + 64)
      const balance = solid ? this.solidUsdt(who) : (this.usdt.get(who) ?? 0n)
      return {
        energy: BALANCE_OF_ENERGY,
        returned: balance.toString(16).padStart(64, '0'),
        transfers: [],
        reverted: false,
        outOfEnergy: BALANCE_OF_ENERGY > energyLimit,
      }
    }
    if (selector !== TRANSFER_SELECTOR || data.length !== 8 + 128)
      return { ...fail, reverted: true, outOfEnergy: false }
    const to = '41' + data.slice(8 + 24, 8 + 64)
    const value = BigInt('0x' + data.slice(8 + 64))
    // TetherToken.transfer: require(!isBlackListed[msg.sender]); whenNotPaused; ERC20._transfer
    // requires `to` non-zero and moves balances through SafeMath.sub, which requires enough.
    const reverted =
      this.blacklisted.has(owner) ||
      this.paused ||
      /^410{40}$/.test(to) ||
      (this.usdt.get(owner) ?? 0n) < value
    if (reverted) return { ...fail, reverted: true, outOfEnergy: TRANSFER_ENERGY_REVERTED > energyLimit }
    const energy = (this.usdt.get(to) ?? 0n) > 0n ? TRANSFER_ENERGY_TO_HOLDER : TRANSFER_ENERGY_TO_NEW_HOLDER
    let fee = (value * this.basisPointsRate) / 10_000n
    if (fee > this.maximumFee) fee = this.maximumFee
    const transfers: [string, string, bigint][] = [[owner, to, value - fee]]
    if (fee > 0n) transfers.push([owner, this.tetherOwner, fee])
    return {
      energy,
      // No return statement in StandardTokenWithFees.transfer: the declared bool comes back false.
      returned: '0'.repeat(64),
      transfers,
      reverted: false,
      outOfEnergy: energy > energyLimit,
    }
  }

  /** BandwidthProcessor: the serialized transaction plus MAX_RESULT_SIZE_IN_TX per contract. */
  private bandwidthOf(body: Json): bigint {
    const rawLength = BigInt(String(body.raw_data_hex).length / 2)
    const signatures = (body.signature as string[] | undefined) ?? []
    let size = 1n + varintLength(rawLength) + rawLength
    for (const signature of signatures) size += 2n + BigInt(signature.length / 2)
    return size + MAX_RESULT_SIZE_IN_TX
  }

  /** Charges bandwidth, returning the TRX burned; null when the account cannot pay it. */
  private bandwidthCost(account: TronAccount, size: bigint): bigint | null {
    if (account.netLimit - account.netUsed >= size) return 0n
    if (this.freeNetLimit - account.freeNetUsed >= size) return 0n
    const fee = size * this.transactionFee
    return account.balance >= fee ? fee : null
  }

  private chargeBandwidth(account: TronAccount, size: bigint): bigint {
    if (account.netLimit - account.netUsed >= size) {
      account.netUsed += size
      return 0n
    }
    if (this.freeNetLimit - account.freeNetUsed >= size) {
      account.freeNetUsed += size
      return 0n
    }
    const fee = size * this.transactionFee
    account.balance -= fee
    return fee
  }

  // ---- HTTP --------------------------------------------------------------------------------

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const [path = '', query = ''] = (req.url ?? '').split('?')
      const text = Buffer.concat(chunks).toString('utf8')
      let body: Json
      try {
        body = text ? (JSON.parse(text) as Json) : {}
      } catch {
        body = {}
      }
      this.requests.push({ path, headers: req.headers, body })
      this.log.push(`http ${path}`)
      const answer = this.answer(path, body, req.headers, new URLSearchParams(query))
      if (answer.hang) return
      res.writeHead(answer.status ?? 200, { 'content-type': 'application/json' })
      res.end(answer.text ?? JSON.stringify(answer.json ?? {}))
    })
  }

  private answer(
    path: string,
    body: Json,
    headers: http.IncomingHttpHeaders,
    query = new URLSearchParams(),
  ): Answer {
    // TronGrid's gateway (not java-tron, which has no keys) refuses an unknown key with HTTP 401.
    // Its body is not documented upstream; the adapter relies on the status alone.
    if (this.apiKeys && !this.apiKeys.has(String(headers['tron-pro-api-key'] ?? '')))
      return { status: 401, json: { Error: 'ApiKey not exists' } }
    const queue = this.faults.get(path) ?? []
    const at = queue.findIndex((f) => !f.match || f.match(body))
    const fault = at >= 0 ? queue.splice(at, 1)[0] : undefined
    if (fault?.kind === 'status')
      // A gateway in front of the node answers 5xx with its own page, not JSON.
      return { status: fault.status, text: fault.body ?? `<html><body>${fault.status}</body></html>` }
    if (fault?.kind === 'stall') return { hang: true }
    const handler = this.handlers.get(path)
    const trc20 = /^\/v1\/accounts\/([^/]+)\/transactions\/trc20$/.exec(path)
    const answer = handler
      ? handler(body)
      : trc20
        ? trc20History(this, decodeURIComponent(trc20[1]!), query)
        : this.route(path, body)
    if (fault?.kind === 'work-then-stall') return { hang: true }
    return answer
  }

  private route(path: string, body: Json): Answer {
    switch (path) {
      case '/wallet/getnodeinfo':
        return { json: this.nodeInfo() }
      case '/wallet/getblockbynum':
        return { json: this.blockJson(this.blocks[Number(body.num ?? 0)]) }
      // A lagging node behind TronGrid's load balancer (`readLag`) answers reads as of an older head.
      case '/wallet/getnowblock':
        return { json: this.blockJson(this.blocks[Math.max(0, this.head.number - this.readLag)]) }
      case '/walletsolidity/getnowblock':
        return { json: this.blockJson(this.blocks[this.solidNumber]) }
      case '/wallet/getchainparameters':
        return { json: this.chainParameters() }
      case '/wallet/getaccount':
        return { json: this.accountJson(String(body.address ?? '')) }
      case '/wallet/getaccountresource':
        return { json: this.resourceJson(String(body.address ?? '')) }
      case '/wallet/triggersmartcontract':
        return { json: this.trigger(body) }
      case '/wallet/triggerconstantcontract':
        return { json: this.constant(body) }
      // SolidityNodeHttpApiService maps the same TriggerConstantContractServlet under
      // /walletsolidity/: the call runs on the solidified state.
      case '/walletsolidity/triggerconstantcontract':
        return { json: this.constant(body, true) }
      case '/wallet/estimateenergy':
        return { json: this.estimate(body) }
      case '/wallet/broadcasttransaction':
        return { json: this.broadcast(body) }
      case '/wallet/gettransactionbyid':
      case '/wallet/gettransactioninfobyid': {
        const onChain = this.txs.get(String(body.value))
        if (!onChain || onChain.blockNumber > this.head.number - this.readLag) return { json: {} }
        return { json: path.endsWith('infobyid') ? (this.infos.get(String(body.value)) ?? {}) : onChain.body }
      }
      // The solidity paths (services/http/solidity/*) read the same stores, but only up to the
      // latest solidified block: a transaction in a newer block is unknown there.
      case '/walletsolidity/gettransactionbyid':
      case '/walletsolidity/gettransactioninfobyid': {
        const onChain = this.txs.get(String(body.value))
        if (!onChain || onChain.blockNumber > this.solidNumber) return { json: {} }
        return { json: path.endsWith('infobyid') ? this.infos.get(String(body.value)) : onChain.body }
      }
      default:
        // Jetty answers an unknown servlet path with 404.
        return { status: 404, text: '' }
    }
  }

  /** GetNodeInfoServlet prints NodeInfo with fastjson: `block` is "Num:<n>,ID:<id>". */
  private nodeInfo(): Json {
    const solid = this.blocks[this.solidNumber]!
    return {
      beginSyncNum: this.head.number,
      block: `Num:${this.head.number},ID:${this.head.id}`,
      solidityBlock: `Num:${solid.number},ID:${solid.id}`,
      currentConnectCount: 30,
      activeConnectCount: 8,
      passiveConnectCount: 22,
      totalFlow: 0,
      peerList: [],
      configNodeInfo: {
        codeVersion: this.codeVersion,
        versionNum: this.versionNum,
        p2pVersion: P2P_VERSIONS[this.network],
        supportConstant: true,
      },
      machineInfo: { threadCount: 100 },
      cheatWitnessInfoMap: {},
    }
  }

  private blockJson(block: Block | undefined): Json {
    if (!block) return {}
    const raw: Json = { parentHash: this.blocks[block.number - 1]?.id ?? '0'.repeat(64), version: 32 }
    if (block.number > 0) {
      raw.number = block.number
      raw.timestamp = block.timestamp
    }
    return {
      blockID: block.id,
      block_header: { raw_data: raw },
      ...(block.txIds.length ? { transactions: block.txIds.map((id) => this.txs.get(id)?.body) } : {}),
    }
  }

  /** GetChainParametersServlet: `{chainParameter: [{key, value}]}`, value left out when 0. */
  private chainParameters(): Json {
    return {
      chainParameter: [
        { key: 'getMaintenanceTimeInterval', value: 21_600_000 },
        { key: 'getTransactionFee', value: Number(this.transactionFee) },
        { key: 'getFreeNetLimit', value: Number(this.freeNetLimit) },
        { key: 'getEnergyFee', value: Number(this.energyFee) },
        { key: 'getMaxFeeLimit', value: 15_000_000_000 },
      ],
    }
  }

  /** GetAccountServlet answers `{}` for an address the chain has never seen (never funded). */
  private accountJson(address: string): Json {
    const account = this.accounts.get(address)
    if (!account) return {}
    return {
      address,
      ...(account.balance > 0n ? { balance: Number(account.balance) } : {}),
      create_time: 1_700_000_000_000,
    }
  }

  /** Wallet.getAccountResource: null (printed `{}`) for an unknown account; zero fields left out. */
  private resourceJson(address: string): Json {
    const account = this.accounts.get(address)
    if (!account) return {}
    const out: Json = {
      freeNetLimit: Number(this.freeNetLimit),
      TotalNetLimit: 43_200_000_000,
      TotalNetWeight: 26_000_000_000,
      TotalEnergyLimit: 180_000_000_000,
      TotalEnergyWeight: 19_000_000_000,
    }
    const put = (key: string, value: bigint) => {
      if (value !== 0n) out[key] = Number(value)
    }
    put('freeNetUsed', account.freeNetUsed)
    put('NetLimit', account.netLimit)
    put('NetUsed', account.netUsed)
    put('EnergyLimit', account.energyLimit)
    put('EnergyUsed', account.energyUsed)
    return out
  }

  /** TriggerSmartContractServlet: builds an unsigned transaction, expiring 60 s after the head. */
  trigger(body: Json): Json {
    const owner = String(body.owner_address)
    const contract = String(body.contract_address)
    if (contract !== this.usdtContract)
      return {
        result: { code: 'CONTRACT_VALIDATE_ERROR', message: hex('Smart contract is not exist.') },
      }
    const data =
      (body.function_selector === 'transfer(address,uint256)' ? TRANSFER_SELECTOR : '') +
      String(body.parameter)
    const raw = {
      refBlockBytes: (this.head.number & 0xffff).toString(16).padStart(4, '0'),
      refBlockHash: this.head.id.slice(16, 32),
      expiration: BigInt(this.head.timestamp + 60_000),
      owner,
      contract,
      data,
      timestamp: BigInt(this.timeMs),
      feeLimit: BigInt(Number(body.fee_limit ?? 0)),
    }
    const rawDataHex = encodeRawTrigger(raw)
    this.built.set(rawDataHex, {
      owner,
      contract,
      data,
      feeLimit: raw.feeLimit,
      expiration: Number(raw.expiration),
    })
    return {
      result: { result: true },
      transaction: {
        visible: false,
        txID: bytesToHex(sha256(hexToBytes(rawDataHex))),
        raw_data: {
          contract: [
            {
              parameter: {
                value: { data, owner_address: owner, contract_address: contract },
                type_url: 'type.googleapis.com/protocol.TriggerSmartContract',
              },
              type: 'TriggerSmartContract',
            },
          ],
          ref_block_bytes: raw.refBlockBytes,
          ref_block_hash: raw.refBlockHash,
          expiration: Number(raw.expiration),
          ...(raw.feeLimit > 0n ? { fee_limit: Number(raw.feeLimit) } : {}),
          timestamp: Number(raw.timestamp),
        },
        raw_data_hex: rawDataHex,
      },
    }
  }

  /**
   * TriggerConstantContractServlet and Wallet.callConstantContract: runs the call on the head state
   * and changes nothing. The answer is `result.result: true` even when the call reverts; then the
   * transaction's `ret` is FAILED and `result.message` says "REVERT opcode executed". The caller's
   * TRX is not needed: a constant call charges nothing.
   */
  private constant(body: Json, solid = false): Json {
    const contract = String(body.contract_address)
    if (contract !== this.usdtContract)
      return { result: { code: 'CONTRACT_VALIDATE_ERROR', message: hex('Smart contract is not exist.') } }
    const selector =
      body.function_selector === 'transfer(address,uint256)'
        ? TRANSFER_SELECTOR
        : body.function_selector === 'balanceOf(address)'
          ? BALANCE_OF_SELECTOR
          : ''
    const data = selector + String(body.parameter ?? '')
    const run = this.runUsdt(String(body.owner_address), contract, data, 1n << 62n, solid)
    const failed = run.reverted
    return {
      result: { result: true, ...(failed ? { message: hex('REVERT opcode executed') } : {}) },
      energy_used: Number(run.energy),
      constant_result: [failed ? '' : run.returned],
      ...(failed
        ? {}
        : {
            logs: run.transfers.map(([from, to, value]) => ({
              address: contract.slice(2),
              topics: [TRANSFER_TOPIC, word(from.slice(2)), word(to.slice(2))],
              data: value.toString(16).padStart(64, '0'),
            })),
          }),
      transaction: { ret: [failed ? { ret: 'FAILED' } : {}], visible: false },
    }
  }

  /** EstimateEnergyServlet / Wallet.estimateEnergy; refused unless the node enables it. */
  private estimate(body: Json): Json {
    if (!this.estimateEnergyEnabled)
      return {
        result: {
          code: 'CONTRACT_VALIDATE_ERROR',
          message: hex('this node does not support estimate energy'),
        },
      }
    const answer = this.constant(body)
    if ((answer.transaction as Json | undefined)?.ret === undefined) return answer
    const failed = JSON.stringify(answer.transaction).includes('FAILED')
    // Wallet.estimateEnergy: a call that fails answers CONTRACT_EXE_ERROR, `result` left false.
    if (failed) return { result: { code: 'CONTRACT_EXE_ERROR', message: hex('REVERT opcode executed') } }
    return { result: { result: true }, energy_required: answer.energy_used }
  }

  /**
   * BroadcastServlet and Wallet.broadcastTransaction: duplicate, signature, expiration and
   * bandwidth checks in that spirit, with their codes and messages (hex, as `visible: false` prints
   * bytes). A good transaction enters the pending pool.
   */
  broadcast(body: Json): Json {
    const txID = String(body.txID)
    const rawHex = String(body.raw_data_hex ?? '')
    // The expiration is checked before anything else, also for a transaction already in a block:
    // Wallet.broadcastTransaction calls trx.checkExpiration before dbManager.pushTransaction, and
    // Manager.processTransaction runs validateTapos and validateCommon (the expiration against the
    // head block's time) before validateDup. Only with node.rpc.trxCacheEnable (off by default,
    // Args.java) would an id cache answer DUP first.
    const expiration = Number((body.raw_data as Json | undefined)?.expiration ?? 0)
    if (expiration <= this.head.timestamp)
      return {
        result: false,
        code: 'TRANSACTION_EXPIRATION_ERROR',
        message: hex('Transaction expired'),
        txid: txID,
      }
    if (this.pool.has(txID) || this.txs.has(txID))
      return { result: false, code: 'DUP_TRANSACTION_ERROR', message: hex('Dup transaction.'), txid: txID }
    const built = this.built.get(rawHex)
    if (!built || bytesToHex(sha256(hexToBytes(rawHex))) !== txID)
      return {
        result: false,
        code: 'SIGERROR',
        message: hex('Validate signature error: bad txid'),
        txid: txID,
      }
    const signature = hexToBytes(((body.signature as string[] | undefined) ?? [])[0] ?? '')
    let signer: string
    try {
      const recovered = secp256k1.Signature.fromBytes(signature.subarray(0, 64), 'compact')
        .addRecoveryBit((signature[64] ?? 0) - 27)
        .recoverPublicKey(hexToBytes(txID))
        .toBytes(false)
      signer = '41' + bytesToHex(keccak_256(recovered.subarray(1))).slice(-40)
    } catch {
      signer = ''
    }
    if (signer !== built.owner)
      return {
        result: false,
        code: 'SIGERROR',
        message: hex('Validate signature error: signature is not the owner'),
        txid: txID,
      }
    // BandwidthProcessor: an owner the chain does not know is a validation error; one without
    // bandwidth or the TRX to burn for it is refused as BANDWITH_ERROR.
    const owner = this.accounts.get(built.owner)
    if (!owner)
      return {
        result: false,
        code: 'CONTRACT_VALIDATE_ERROR',
        message: hex(`Contract validate error : account [${built.owner}] does not exist`),
        txid: txID,
      }
    if (this.bandwidthCost(owner, this.bandwidthOf(body)) === null)
      return {
        result: false,
        code: 'BANDWITH_ERROR',
        message: hex('Account resource insufficient error.'),
        txid: txID,
      }
    this.pool.set(txID, body)
    return { result: true, txid: txID }
  }
}

// ---- encodings -------------------------------------------------------------------------------

export interface RawTrigger {
  refBlockBytes: string
  refBlockHash: string
  expiration: bigint
  owner: string
  contract: string
  data: string
  timestamp: bigint
  feeLimit: bigint
}

function varint(value: bigint): number[] {
  const out: number[] = []
  let rest = value
  do {
    let byte = Number(rest & 0x7fn)
    rest >>= 7n
    if (rest > 0n) byte |= 0x80
    out.push(byte)
  } while (rest > 0n)
  return out
}

function varintLength(value: bigint): bigint {
  return BigInt(varint(value).length)
}

const vField = (n: number, value: bigint): number[] => [...varint(BigInt(n << 3)), ...varint(value)]
const bField = (n: number, bytes: Uint8Array | number[]): number[] => [
  ...varint(BigInt((n << 3) | 2)),
  ...varint(BigInt(bytes.length)),
  ...bytes,
]

/** protocol.Transaction.raw with one TriggerSmartContract, written from Tron.proto. */
export function encodeRawTrigger(raw: RawTrigger): string {
  const trigger = [
    ...bField(1, hexToBytes(raw.owner)),
    ...bField(2, hexToBytes(raw.contract)),
    ...bField(4, hexToBytes(raw.data)),
  ]
  const any = [
    ...bField(1, utf8ToBytes('type.googleapis.com/protocol.TriggerSmartContract')),
    ...bField(2, trigger),
  ]
  const contract = [...vField(1, 31n), ...bField(2, any)]
  return bytesToHex(
    Uint8Array.from([
      ...bField(1, hexToBytes(raw.refBlockBytes)),
      ...bField(4, hexToBytes(raw.refBlockHash)),
      ...vField(8, raw.expiration),
      ...bField(11, contract),
      ...vField(14, raw.timestamp),
      ...(raw.feeLimit > 0n ? vField(18, raw.feeLimit) : []),
    ]),
  )
}

/** The 41-prefixed hex TRON address of a secp256k1 private key. */
export function tronHexOfKey(privateKey: Uint8Array): string {
  const pub = secp256k1.getPublicKey(privateKey, false)
  return '41' + bytesToHex(keccak_256(pub.subarray(1))).slice(-40)
}

export const hex = (text: string): string => bytesToHex(utf8ToBytes(text))
const word = (hex20: string): string => hex20.padStart(64, '0')
const min = (a: bigint, b: bigint): bigint => (a < b ? a : b)
