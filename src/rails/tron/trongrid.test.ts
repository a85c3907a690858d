import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { sha256 } from '@noble/hashes/sha2.js'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { bytesToHex, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { createBase58check } from '@scure/base'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { RailFailure } from '../rail.js'
import { tronAddressFromPrivateKey } from './address.js'
import {
  createTronGridRail,
  decodeTriggerTransaction,
  encodeTrc20Transfer,
  signTxId,
  TRC20_TRANSFER_SELECTOR,
  type TronGridConfig,
  type TronSendRecord,
  type TronSendStore,
} from './trongrid.js'

const base58check = createBase58check(sha256)

/** A real Nile capture from TRON's documentation of /wallet/triggersmartcontract. */
const DOC_VECTOR = {
  txID: '8c621a0dc9bd4d405b20d0a43143955b9f546f98bbfde1aec295a65b0f925629',
  rawDataHex:
    '0a0228c32208ce6d34028278856940f89cf1c0dd335aae01081f12a9010a31747970652e676f6f676c65617069732e636f6d2f70726f746f636f6c2e54726967676572536d617274436f6e747261637412740a1541dd791d6b49e190062d650e6a23c575510d35f2f9121541eca9bc828a3005b9a3b909f2cc5c2a54794de05f2244a9059cbb000000000000000000000000088a2bfcb1c7271029fd69a66859d5556089588400000000000000000000000000000000000000000000000000000000000000647089d0edc0dd33900180c2d72f',
  owner: '41dd791d6b49e190062d650e6a23c575510d35f2f9',
  contract: '41eca9bc828a3005b9a3b909f2cc5c2a54794de05f',
  to: '41088a2bfcb1c7271029fd69a66859d55560895884',
  parameter:
    '000000000000000000000000088a2bfcb1c7271029fd69a66859d555608958840000000000000000000000000000000000000000000000000000000000000064',
  feeLimit: 100000000n,
  expiration: 1777447227000n,
  timestamp: 1777447168009n,
  refBlockBytes: '28c3',
  refBlockHash: 'ce6d340282788569',
}

const USDT_MAINNET = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t'
const USDT_MAINNET_HEX = '41a614f803b6fd780986a42c78ec9c7f77e6ded13c'
const PRIVATE_KEY = sha256(utf8ToBytes('svcpay trongrid test hot wallet'))
const PUBLIC_KEY = secp256k1.getPublicKey(PRIVATE_KEY, false)
const TO_ADDRESS = base58check.encode(hexToBytes(DOC_VECTOR.to))
const API_KEY = 'test-api-key-0123'
const FEE_LIMIT_SUN = 30_000_000n

// A protobuf writer written from TRON's Tron.proto, checked below against the documented capture.
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
const vField = (n: number, value: bigint): number[] => [...varint(BigInt(n << 3)), ...varint(value)]
const bField = (n: number, bytes: Uint8Array | number[]): number[] => [
  ...varint(BigInt((n << 3) | 2)),
  ...varint(BigInt(bytes.length)),
  ...bytes,
]

interface RawTrigger {
  refBlockBytes: string
  refBlockHash: string
  expiration: bigint
  owner: string
  contract: string
  data: string
  timestamp: bigint
  feeLimit: bigint
}

function encodeRawTrigger(raw: RawTrigger): string {
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
      ...vField(18, raw.feeLimit),
    ]),
  )
}

const hexText = (text: string): string => bytesToHex(utf8ToBytes(text))

interface Recorded {
  path: string
  headers: http.IncomingHttpHeaders
  body: Record<string, unknown>
}
type Answer = { status?: number; json?: unknown; hang?: boolean }
type Handler = (body: Record<string, unknown>) => Answer

/** A TronGrid stand-in on 127.0.0.1 answering as TRON's HTTP API documentation describes. */
class FakeTronGrid {
  readonly requests: Recorded[] = []
  readonly log: string[] = []
  readonly handlers = new Map<string, Handler>()
  head = { number: 1_000, timestamp: 1_777_000_000_000 }
  /** What the node thinks the time is when it builds a transaction. */
  nowMs = 1_777_000_000_000
  readonly infos = new Map<string, Record<string, unknown>>()
  readonly chain = new Map<string, Record<string, unknown>>()
  readonly pool = new Map<string, Record<string, unknown>>()
  private server = http.createServer((req, res) => this.handle(req, res))
  url = ''

  constructor() {
    this.handlers.set('/wallet/triggersmartcontract', (body) => this.trigger(body))
    this.handlers.set('/wallet/broadcasttransaction', (body) => this.broadcast(body))
    this.handlers.set('/wallet/gettransactioninfobyid', (body) => ({
      json: this.infos.get(String(body.value)) ?? {},
    }))
    this.handlers.set('/wallet/gettransactionbyid', (body) => ({
      json: this.chain.get(String(body.value)) ?? {},
    }))
    this.handlers.set('/wallet/getnowblock', () => ({
      json: {
        blockID: this.head.number.toString(16).padStart(64, '0'),
        block_header: { raw_data: { number: this.head.number, timestamp: this.head.timestamp, version: 30 } },
      },
    }))
  }

  async start(): Promise<void> {
    await new Promise<void>((done) => this.server.listen(0, '127.0.0.1', done))
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections()
    await new Promise((done) => this.server.close(done))
  }

  paths(): string[] {
    return this.requests.map((request) => request.path)
  }

  trigger(body: Record<string, unknown>): Answer {
    const raw: RawTrigger = {
      refBlockBytes: '03e8',
      refBlockHash: '00000000000003e8',
      expiration: BigInt(this.nowMs + 60_000),
      owner: String(body.owner_address),
      contract: String(body.contract_address),
      data: TRC20_TRANSFER_SELECTOR + String(body.parameter),
      timestamp: BigInt(this.nowMs),
      feeLimit: BigInt(Number(body.fee_limit)),
    }
    const rawDataHex = encodeRawTrigger(raw)
    return {
      json: {
        result: { result: true },
        transaction: {
          visible: false,
          txID: bytesToHex(sha256(hexToBytes(rawDataHex))),
          raw_data: {
            contract: [
              {
                parameter: {
                  value: { data: raw.data, owner_address: raw.owner, contract_address: raw.contract },
                  type_url: 'type.googleapis.com/protocol.TriggerSmartContract',
                },
                type: 'TriggerSmartContract',
              },
            ],
            ref_block_bytes: raw.refBlockBytes,
            ref_block_hash: raw.refBlockHash,
            expiration: Number(raw.expiration),
            fee_limit: Number(raw.feeLimit),
            timestamp: Number(raw.timestamp),
          },
          raw_data_hex: rawDataHex,
        },
      },
    }
  }

  /** Checks the signature as a node does: it must recover the owner's key over txID. */
  broadcast(body: Record<string, unknown>): Answer {
    const txID = String(body.txID)
    const expiration = Number((body.raw_data as { expiration?: number } | undefined)?.expiration)
    if (!this.chain.has(txID) && this.head.timestamp > expiration) {
      return {
        json: {
          result: false,
          code: 'TRANSACTION_EXPIRATION_ERROR',
          message: hexText('Transaction expired'),
        },
      }
    }
    if (this.pool.has(txID) || this.chain.has(txID)) {
      return {
        json: {
          result: false,
          code: 'DUP_TRANSACTION_ERROR',
          message: hexText('Dup transaction.'),
          txid: txID,
        },
      }
    }
    const signature = (body.signature as string[])[0] ?? ''
    const sig = hexToBytes(signature)
    const recovered = secp256k1.Signature.fromBytes(sig.subarray(0, 64), 'compact')
      .addRecoveryBit((sig[64] ?? 0) - 27)
      .recoverPublicKey(hexToBytes(txID))
      .toBytes(false)
    if (bytesToHex(recovered) !== bytesToHex(PUBLIC_KEY)) {
      return {
        json: { result: false, code: 'SIGERROR', message: hexText('validateSignature error'), txid: txID },
      }
    }
    this.pool.set(txID, body)
    return { json: { result: true, code: 'SUCCESS', txid: txID } }
  }

  /** Puts a pooled transaction in block `blockNumber` with the given receipt result. */
  mine(
    txID: string,
    blockNumber: number,
    receiptResult = 'SUCCESS',
    contractResult = '0'.repeat(63) + '1',
  ): void {
    const tx = this.pool.get(txID) ?? { txID }
    this.pool.delete(txID)
    this.chain.set(txID, tx)
    this.infos.set(txID, {
      id: txID,
      fee: 345_000,
      blockNumber,
      blockTimeStamp: this.head.timestamp,
      contractResult: [contractResult],
      contract_address: USDT_MAINNET_HEX,
      receipt: { energy_usage_total: 14_650, net_usage: 345, result: receiptResult },
      ...(receiptResult === 'SUCCESS'
        ? {}
        : { result: 'FAILED', resMessage: hexText('REVERT opcode executed') }),
    })
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const path = req.url ?? ''
      const text = Buffer.concat(chunks).toString('utf8')
      const body = text ? (JSON.parse(text) as Record<string, unknown>) : {}
      this.requests.push({ path, headers: req.headers, body })
      this.log.push(`http ${path}`)
      const handler = this.handlers.get(path)
      const answer: Answer = handler ? handler(body) : { status: 404, json: {} }
      if (answer.hang) return
      res.writeHead(answer.status ?? 200, { 'content-type': 'application/json' })
      res.end(JSON.stringify(answer.json ?? {}))
    })
  }
}

class MemoryStore implements TronSendStore {
  readonly rows = new Map<string, TronSendRecord>()
  constructor(private readonly log: string[]) {}
  async get(requestId: string) {
    return this.rows.get(requestId)
  }
  async byHash(txHash: string) {
    return [...this.rows.values()].find((record) => record.txHash === txHash)
  }
  async put(requestId: string, record: Required<TronSendRecord>) {
    this.log.push(`store.put ${requestId}`)
    this.rows.set(requestId, record)
  }
}

let node: FakeTronGrid

beforeEach(async () => {
  node = new FakeTronGrid()
  await node.start()
})
afterEach(async () => {
  await node.stop()
})

function rail(overrides: Partial<TronGridConfig> = {}) {
  return createTronGridRail({
    url: node.url,
    apiKey: API_KEY,
    privateKeyHex: bytesToHex(PRIVATE_KEY),
    usdtContract: USDT_MAINNET,
    feeLimitSun: FEE_LIMIT_SUN,
    timeoutMs: 2_000,
    ...overrides,
  })
}

async function failure(promise: Promise<unknown>): Promise<RailFailure> {
  try {
    await promise
  } catch (err) {
    expect(err).toBeInstanceOf(RailFailure)
    return err as RailFailure
  }
  throw new Error('expected a RailFailure')
}

describe('TRON encodings (standard vectors)', () => {
  it('the transfer selector is keccak256 of the signature', () => {
    expect(bytesToHex(keccak_256(utf8ToBytes('transfer(address,uint256)'))).slice(0, 8)).toBe(
      TRC20_TRANSFER_SELECTOR,
    )
  })

  it('encodes the transfer parameter as in TRON’s documented example', () => {
    expect(encodeTrc20Transfer(DOC_VECTOR.to, 100n)).toBe(DOC_VECTOR.parameter)
    expect(encodeTrc20Transfer(DOC_VECTOR.to, (1n << 256n) - 1n).slice(64)).toBe('f'.repeat(64))
  })

  it('decodes a documented TriggerSmartContract capture, whose txID is sha256 of its raw bytes', () => {
    expect(bytesToHex(sha256(hexToBytes(DOC_VECTOR.rawDataHex)))).toBe(DOC_VECTOR.txID)
    expect(decodeTriggerTransaction(DOC_VECTOR.rawDataHex)).toEqual({
      contractCount: 1,
      contractType: 31n,
      typeUrl: 'type.googleapis.com/protocol.TriggerSmartContract',
      owner: DOC_VECTOR.owner,
      contract: DOC_VECTOR.contract,
      data: TRC20_TRANSFER_SELECTOR + DOC_VECTOR.parameter,
      callValue: 0n,
      callTokenValue: 0n,
      feeLimitSun: DOC_VECTOR.feeLimit,
      expirationMs: DOC_VECTOR.expiration,
    })
  })

  it('the test node’s protobuf writer reproduces the documented capture byte for byte', () => {
    expect(
      encodeRawTrigger({
        refBlockBytes: DOC_VECTOR.refBlockBytes,
        refBlockHash: DOC_VECTOR.refBlockHash,
        expiration: DOC_VECTOR.expiration,
        owner: DOC_VECTOR.owner,
        contract: DOC_VECTOR.contract,
        data: TRC20_TRANSFER_SELECTOR + DOC_VECTOR.parameter,
        timestamp: DOC_VECTOR.timestamp,
        feeLimit: DOC_VECTOR.feeLimit,
      }),
    ).toBe(DOC_VECTOR.rawDataHex)
  })

  it('signs r || s || v with v = recovery id + 27, verifiable over the txID itself', () => {
    const txId = hexToBytes(DOC_VECTOR.txID)
    const signature = hexToBytes(signTxId(txId, PRIVATE_KEY))
    expect(signature.length).toBe(65)
    expect([27, 28]).toContain(signature[64])
    expect(secp256k1.verify(signature.subarray(0, 64), txId, PUBLIC_KEY, { prehash: false })).toBe(true)
  })
})

describe('createTronGridRail: sending', () => {
  it('builds, checks, signs and broadcasts a USDT transfer exactly as TronGrid documents', async () => {
    const tron = rail()
    const ownerHex = bytesToHex(base58check.decode(tronAddressFromPrivateKey(PRIVATE_KEY)))
    expect(tron.hotWalletAddress).toBe(tronAddressFromPrivateKey(PRIVATE_KEY))

    const { txHash } = await tron.sendUsdt({ to: TO_ADDRESS, amountMinor: 100n, requestId: 'req-1' })

    expect(node.paths()).toEqual(['/wallet/triggersmartcontract', '/wallet/broadcasttransaction'])
    const [trigger, broadcast] = node.requests
    for (const request of node.requests) {
      expect(request.headers['tron-pro-api-key']).toBe(API_KEY)
      expect(request.headers['content-type']).toBe('application/json')
    }
    expect(trigger?.body).toEqual({
      owner_address: ownerHex,
      contract_address: USDT_MAINNET_HEX,
      function_selector: 'transfer(address,uint256)',
      parameter: DOC_VECTOR.parameter,
      fee_limit: 30_000_000,
      call_value: 0,
      visible: false,
    })

    const built = node.trigger(trigger?.body ?? {}).json as { transaction: Record<string, unknown> }
    expect(broadcast?.body).toEqual({ ...built.transaction, signature: [expect.any(String)], visible: false })
    expect(txHash).toBe(built.transaction.txID)
    const signature = hexToBytes((broadcast?.body.signature as string[])[0] ?? '')
    expect(signature.length).toBe(65)
    expect(
      secp256k1.verify(signature.subarray(0, 64), hexToBytes(txHash), PUBLIC_KEY, { prehash: false }),
    ).toBe(true)
    expect(node.pool.has(txHash)).toBe(true)
  })

  it('sends no API key header when none is configured', async () => {
    await rail({ apiKey: undefined }).sendUsdt({ to: TO_ADDRESS, amountMinor: 5n, requestId: 'req-nokey' })
    for (const request of node.requests) expect(request.headers['tron-pro-api-key']).toBeUndefined()
  })

  it('answers a repeated request with the same hash and no new transfer', async () => {
    const tron = rail()
    const first = await tron.sendUsdt({ to: TO_ADDRESS, amountMinor: 100n, requestId: 'req-2' })
    const again = await Promise.all([
      tron.sendUsdt({ to: TO_ADDRESS, amountMinor: 100n, requestId: 'req-2' }),
      tron.sendUsdt({ to: TO_ADDRESS, amountMinor: 100n, requestId: 'req-2' }),
    ])
    expect(again).toEqual([first, first])
    expect(node.paths().filter((path) => path === '/wallet/triggersmartcontract')).toHaveLength(1)
    const conflict = await failure(tron.sendUsdt({ to: TO_ADDRESS, amountMinor: 101n, requestId: 'req-2' }))
    expect([conflict.code, conflict.retryable]).toEqual(['request_conflict', false])
  })

  it('shares one attempt between concurrent calls for one request', async () => {
    const tron = rail()
    const results = await Promise.all([
      tron.sendUsdt({ to: TO_ADDRESS, amountMinor: 7n, requestId: 'req-concurrent' }),
      tron.sendUsdt({ to: TO_ADDRESS, amountMinor: 7n, requestId: 'req-concurrent' }),
    ])
    expect(results[0]).toEqual(results[1])
    expect(node.paths().filter((path) => path === '/wallet/triggersmartcontract')).toHaveLength(1)
  })

  it('records the signed transaction before broadcasting; a restarted rail sends that one again', async () => {
    const store = new MemoryStore(node.log)
    const { txHash } = await rail({ store }).sendUsdt({
      to: TO_ADDRESS,
      amountMinor: 100n,
      requestId: 'req-3',
    })
    expect(node.log).toEqual([
      'http /wallet/triggersmartcontract',
      'store.put req-3',
      'http /wallet/broadcasttransaction',
    ])
    const broadcast = node.requests.at(-1)?.body
    expect(store.rows.get('req-3')).toEqual({
      txHash,
      signed: JSON.stringify(broadcast),
      expirationMs: BigInt(node.nowMs + 60_000),
    })

    // The node already has it: the restarted rail builds nothing and the network holds one transfer.
    const restarted = rail({ store })
    expect(await restarted.sendUsdt({ to: TO_ADDRESS, amountMinor: 100n, requestId: 'req-3' })).toEqual({
      txHash,
    })
    expect(node.paths().filter((path) => path === '/wallet/triggersmartcontract')).toHaveLength(1)
    expect(node.requests.at(-1)?.body).toEqual(broadcast)
    expect(node.pool.size).toBe(1)
  })

  it('after a stop between recording and any node accepting, the restart broadcasts the recorded transfer', async () => {
    const store = new MemoryStore(node.log)
    node.handlers.set('/wallet/broadcasttransaction', () => ({ status: 503 }))
    const lost = await failure(
      rail({ store }).sendUsdt({ to: TO_ADDRESS, amountMinor: 8n, requestId: 'req-4' }),
    )
    expect([lost.code, lost.retryable]).toEqual(['tron_http_503', true])
    const recorded = store.rows.get('req-4')
    expect(node.pool.size).toBe(0)

    node.handlers.set('/wallet/broadcasttransaction', (body) => node.broadcast(body))
    const { txHash } = await rail({ store }).sendUsdt({ to: TO_ADDRESS, amountMinor: 8n, requestId: 'req-4' })
    expect(txHash).toBe(recorded?.txHash)
    expect(node.pool.has(txHash)).toBe(true)
    expect(node.paths().filter((path) => path === '/wallet/triggersmartcontract')).toHaveLength(1)
  })

  it('a recorded transfer that expired before any node took it fails for good after a restart', async () => {
    const store = new MemoryStore(node.log)
    node.handlers.set('/wallet/broadcasttransaction', () => ({ status: 503 }))
    await failure(rail({ store }).sendUsdt({ to: TO_ADDRESS, amountMinor: 8n, requestId: 'req-5' }))
    node.handlers.set('/wallet/broadcasttransaction', (body) => node.broadcast(body))
    node.head.timestamp = node.nowMs + 61_000

    const err = await failure(
      rail({ store }).sendUsdt({ to: TO_ADDRESS, amountMinor: 8n, requestId: 'req-5' }),
    )
    expect([err.code, err.retryable]).toEqual(['transaction_expired', false])
    expect(node.pool.size + node.chain.size).toBe(0)
    expect(node.paths().filter((path) => path === '/wallet/triggersmartcontract')).toHaveLength(1)
  })

  it('answers a send recorded with its hash alone (before signed transactions were kept) from the hash', async () => {
    const store = new MemoryStore(node.log)
    store.rows.set('req-old', { txHash: 'ab'.repeat(32) })
    expect(await rail({ store }).sendUsdt({ to: TO_ADDRESS, amountMinor: 1n, requestId: 'req-old' })).toEqual(
      {
        txHash: 'ab'.repeat(32),
      },
    )
    expect(node.requests).toHaveLength(0)
  })

  it('keeps a record that is not this transfer retryable, so its payout waits for an operator', async () => {
    const store = new MemoryStore(node.log)
    await rail({ store }).sendUsdt({ to: TO_ADDRESS, amountMinor: 100n, requestId: 'req-6' })
    const before = node.requests.length
    const err = await failure(
      rail({ store }).sendUsdt({ to: TO_ADDRESS, amountMinor: 101n, requestId: 'req-6' }),
    )
    expect([err.code, err.retryable]).toEqual(['send_record_mismatch', true])
    expect(node.requests.length).toBe(before)
  })

  it('reports a store that fails as retryable, and broadcasts nothing unrecorded', async () => {
    const store: TronSendStore = {
      get: async () => undefined,
      byHash: async () => undefined,
      put: async () => {
        throw new Error('database down')
      },
    }
    const err = await failure(
      rail({ store }).sendUsdt({ to: TO_ADDRESS, amountMinor: 1n, requestId: 'req-st' }),
    )
    expect([err.code, err.retryable]).toEqual(['store_unavailable', true])
    expect(node.paths()).not.toContain('/wallet/broadcasttransaction')
  })

  it('refuses to sign a transaction that pays someone else, even with a consistent txID', async () => {
    const attacker = '41' + 'ab'.repeat(20)
    node.handlers.set('/wallet/triggersmartcontract', (body) =>
      node.trigger({ ...body, parameter: encodeTrc20Transfer(attacker, 100n) }),
    )
    const err = await failure(rail().sendUsdt({ to: TO_ADDRESS, amountMinor: 100n, requestId: 'req-4' }))
    expect([err.code, err.retryable]).toEqual(['tron_bad_transaction', true])
    expect(err.message).toContain('calls something other than our transfer')
    expect(node.paths()).toEqual(['/wallet/triggersmartcontract'])
  })

  it('refuses a txID that is not the hash of raw_data_hex, or another fee limit or contract', async () => {
    const cases: Array<[(tx: Record<string, unknown>, body: Record<string, unknown>) => Answer, string]> = [
      [
        (tx) => ({ json: { result: { result: true }, transaction: { ...tx, txID: 'ab'.repeat(32) } } }),
        'sha256',
      ],
      [(_tx, body) => node.trigger({ ...body, fee_limit: 15_000_000_000 }), 'has another fee limit'],
      [
        (_tx, body) => node.trigger({ ...body, contract_address: '41' + '00'.repeat(20) }),
        'calls another contract',
      ],
    ]
    for (const [answer, issue] of cases) {
      node.handlers.set('/wallet/triggersmartcontract', (body) => {
        const tx = (node.trigger(body).json as { transaction: Record<string, unknown> }).transaction
        return answer(tx, body)
      })
      const err = await failure(
        rail().sendUsdt({ to: TO_ADDRESS, amountMinor: 1n, requestId: `req-${issue}` }),
      )
      expect(err.code).toBe('tron_bad_transaction')
      expect(err.message).toContain(issue)
    }
    expect(node.paths()).not.toContain('/wallet/broadcasttransaction')
  })

  it('maps the node’s refusals to build a transfer', async () => {
    node.handlers.set('/wallet/triggersmartcontract', () => ({
      json: {
        result: {
          code: 'CONTRACT_VALIDATE_ERROR',
          message: hexText('No contract or not a valid smart contract'),
        },
      },
    }))
    const err = await failure(rail().sendUsdt({ to: TO_ADDRESS, amountMinor: 1n, requestId: 'req-5' }))
    expect([err.code, err.retryable, err.message]).toEqual([
      'tron_contract_validate_error',
      false,
      'No contract or not a valid smart contract',
    ])

    node.handlers.set('/wallet/triggersmartcontract', () => ({ status: 503, json: {} }))
    const busy = await failure(rail().sendUsdt({ to: TO_ADDRESS, amountMinor: 1n, requestId: 'req-6' }))
    expect([busy.code, busy.retryable]).toEqual(['tron_http_503', true])

    node.handlers.set('/wallet/triggersmartcontract', () => ({
      json: { Error: 'class java.lang.NullPointerException : null' },
    }))
    const odd = await failure(rail().sendUsdt({ to: TO_ADDRESS, amountMinor: 1n, requestId: 'req-7' }))
    expect([odd.code, odd.retryable]).toEqual(['tron_node_error', true])
  })

  it('maps documented broadcast refusals, decoding their hex messages', async () => {
    const refusals: Array<[string, string, boolean]> = [
      ['SIGERROR', 'validateSignature error', false],
      ['CONTRACT_VALIDATE_ERROR', 'balance is not sufficient', false],
      ['BANDWITH_ERROR', 'account has insufficient bandwidth', false],
      ['SERVER_BUSY', 'Server busy', true],
      ['NOT_ENOUGH_EFFECTIVE_CONNECTION', 'not enough connections', true],
    ]
    for (const [code, message, retryable] of refusals) {
      node.handlers.set('/wallet/broadcasttransaction', (body) => ({
        json: { result: false, code, message: hexText(message), txid: body.txID },
      }))
      const err = await failure(
        rail().sendUsdt({ to: TO_ADDRESS, amountMinor: 1n, requestId: `req-${code}` }),
      )
      expect([err.code, err.message, err.retryable]).toEqual([
        `tron_${code.toLowerCase()}`,
        message,
        retryable,
      ])
    }
  })

  it('re-broadcasts the same signed transaction after a busy node, never building a second', async () => {
    const tron = rail()
    let calls = 0
    node.handlers.set('/wallet/broadcasttransaction', (body) =>
      ++calls === 1
        ? { json: { result: false, code: 'SERVER_BUSY', message: hexText('busy') } }
        : node.broadcast(body),
    )
    const err = await failure(tron.sendUsdt({ to: TO_ADDRESS, amountMinor: 9n, requestId: 'req-8' }))
    expect(err.retryable).toBe(true)
    const { txHash } = await tron.sendUsdt({ to: TO_ADDRESS, amountMinor: 9n, requestId: 'req-8' })
    const broadcasts = node.requests.filter((request) => request.path === '/wallet/broadcasttransaction')
    expect(broadcasts).toHaveLength(2)
    expect(broadcasts[1]?.body).toEqual(broadcasts[0]?.body)
    expect(broadcasts[0]?.body.txID).toBe(txHash)
    expect(node.paths().filter((path) => path === '/wallet/triggersmartcontract')).toHaveLength(1)
  })

  it('treats a time-out as retryable, and the retry finds the node already has the transaction', async () => {
    const tron = rail({ timeoutMs: 300 })
    let calls = 0
    node.handlers.set('/wallet/broadcasttransaction', (body) => {
      // The first attempt reaches the node, which pools it but never answers.
      const answer = node.broadcast(body)
      return ++calls === 1 ? { hang: true } : answer
    })
    const started = Date.now()
    const err = await failure(tron.sendUsdt({ to: TO_ADDRESS, amountMinor: 9n, requestId: 'req-9' }))
    expect([err.code, err.retryable]).toEqual(['tron_timeout', true])
    expect(Date.now() - started).toBeLessThan(2_000)
    // The second attempt is told DUP_TRANSACTION_ERROR, which means the node has it: success.
    const { txHash } = await tron.sendUsdt({ to: TO_ADDRESS, amountMinor: 9n, requestId: 'req-9' })
    expect(node.pool.has(txHash)).toBe(true)
  })

  it('after a lost answer, a later refusal is retryable: another node may hold the transaction', async () => {
    const tron = rail({ timeoutMs: 300 })
    let calls = 0
    node.handlers.set('/wallet/broadcasttransaction', () =>
      ++calls === 1 ? { hang: true } : { json: { result: false, code: 'SIGERROR', message: hexText('x') } },
    )
    await failure(tron.sendUsdt({ to: TO_ADDRESS, amountMinor: 9n, requestId: 'req-10' }))
    const err = await failure(tron.sendUsdt({ to: TO_ADDRESS, amountMinor: 9n, requestId: 'req-10' }))
    expect([err.code, err.retryable]).toEqual(['tron_sigerror', true])
  })

  it('fails for good once the transaction expired and no block holds it; succeeds if one does', async () => {
    const tron = rail()
    node.handlers.set('/wallet/broadcasttransaction', () => ({
      json: { result: false, code: 'SERVER_BUSY' },
    }))
    await failure(tron.sendUsdt({ to: TO_ADDRESS, amountMinor: 9n, requestId: 'req-11' }))
    await failure(tron.sendUsdt({ to: TO_ADDRESS, amountMinor: 9n, requestId: 'req-12' }))
    const expired: Handler = () => ({
      json: { result: false, code: 'TRANSACTION_EXPIRATION_ERROR', message: hexText('Transaction expired') },
    })
    node.handlers.set('/wallet/broadcasttransaction', expired)
    const err = await failure(tron.sendUsdt({ to: TO_ADDRESS, amountMinor: 9n, requestId: 'req-11' }))
    expect([err.code, err.retryable]).toEqual(['transaction_expired', false])
    expect(node.paths().slice(-3)).toEqual([
      '/wallet/broadcasttransaction',
      '/wallet/gettransactioninfobyid',
      '/wallet/gettransactionbyid',
    ])

    const txID = String(node.requests.findLast((r) => r.path === '/wallet/broadcasttransaction')?.body.txID)
    expect(txID).toMatch(/^[0-9a-f]{64}$/)
    // req-12's transaction, by contrast, made it into a block before expiring.
    node.handlers.set('/wallet/broadcasttransaction', (body) => {
      node.mine(String(body.txID), node.head.number)
      return expired(body)
    })
    const { txHash } = await tron.sendUsdt({ to: TO_ADDRESS, amountMinor: 9n, requestId: 'req-12' })
    expect(node.chain.has(txHash)).toBe(true)
  })

  it('refuses bad input before talking to the node', async () => {
    const tron = rail()
    const badAddress = await failure(
      tron.sendUsdt({ to: 'T' + 'x'.repeat(33), amountMinor: 1n, requestId: 'a' }),
    )
    expect([badAddress.code, badAddress.retryable]).toEqual(['invalid_address', false])
    const zero = await failure(tron.sendUsdt({ to: TO_ADDRESS, amountMinor: 0n, requestId: 'b' }))
    expect([zero.code, zero.retryable]).toEqual(['invalid_amount', false])
    expect(node.requests).toHaveLength(0)
  })

  it('refuses a configuration it cannot use', () => {
    expect(() => rail({ privateKeyHex: '00'.repeat(32) })).toThrow(/private key|valid/i)
    expect(() => rail({ privateKeyHex: 'abc' })).toThrow(/64 hex/)
    expect(() => rail({ usdtContract: 'not-an-address' })).toThrow(/TRON_USDT_CONTRACT/)
    expect(() => rail({ feeLimitSun: 0n })).toThrow(/TRON_FEE_LIMIT_SUN/)
  })
})

describe('createTronGridRail: following a transfer', () => {
  async function sent(tron = rail({ confirmationsNeeded: 19 })) {
    const { txHash } = await tron.sendUsdt({
      to: TO_ADDRESS,
      amountMinor: 100n,
      requestId: `req-${Math.random()}`,
    })
    return { tron, txHash }
  }

  it('is pending until in a block, then until 19 blocks, then completed', async () => {
    const { tron, txHash } = await sent()
    expect(await tron.getTransfer(txHash)).toEqual({ status: 'pending' })
    // Pending and sent by this process: it also reads the head block to see whether it expired.
    expect(node.paths().slice(-2)).toEqual(['/wallet/gettransactioninfobyid', '/wallet/getnowblock'])
    const info = node.requests.at(-2)
    expect(info?.body).toEqual({ value: txHash })
    expect(info?.headers['tron-pro-api-key']).toBe(API_KEY)

    node.mine(txHash, 1_000)
    node.head.number = 1_017
    expect(await tron.getTransfer(txHash)).toEqual({ status: 'pending' })
    expect(node.paths().slice(-2)).toEqual(['/wallet/gettransactioninfobyid', '/wallet/getnowblock'])
    node.head.number = 1_018
    expect(await tron.getTransfer(txHash)).toEqual({ status: 'completed' })
  })

  it('reports a reverted transfer and one out of energy as failed, once final', async () => {
    const { tron, txHash } = await sent()
    node.mine(txHash, 1_000, 'REVERT')
    node.head.number = 1_001
    expect(await tron.getTransfer(txHash)).toEqual({ status: 'pending' })
    node.head.number = 1_100
    expect(await tron.getTransfer(txHash)).toEqual({ status: 'failed', reason: 'transfer_reverted' })

    const other = await sent(tron)
    node.mine(other.txHash, 1_050, 'OUT_OF_ENERGY')
    expect(await tron.getTransfer(other.txHash)).toEqual({ status: 'failed', reason: 'out_of_energy' })
  })

  it('reports a token that returned false as failed', async () => {
    const { tron, txHash } = await sent()
    node.mine(txHash, 900, 'SUCCESS', '0'.repeat(64))
    expect(await tron.getTransfer(txHash)).toEqual({ status: 'failed', reason: 'transfer_returned_false' })
  })

  it('reports an accepted transaction that expired without a block as failed', async () => {
    const { tron, txHash } = await sent()
    node.pool.clear()
    node.head.timestamp = node.nowMs + 60_000 + 30_000
    expect(await tron.getTransfer(txHash)).toEqual({ status: 'pending' })
    node.head.timestamp = node.nowMs + 60_000 + 61_000
    expect(await tron.getTransfer(txHash)).toEqual({ status: 'failed', reason: 'transaction_expired' })
  })

  it('a restarted rail reports a recorded transfer that expired without a block as failed', async () => {
    const store = new MemoryStore(node.log)
    const { txHash } = await rail({ store }).sendUsdt({ to: TO_ADDRESS, amountMinor: 3n, requestId: 'req-r' })
    node.pool.clear()
    const restarted = rail({ store })
    node.head.timestamp = node.nowMs + 60_000 + 30_000
    expect(await restarted.getTransfer(txHash)).toEqual({ status: 'pending' })
    node.head.timestamp = node.nowMs + 60_000 + 61_000
    expect(await restarted.getTransfer(txHash)).toEqual({ status: 'failed', reason: 'transaction_expired' })
    // A record with its hash alone gives no expiration: that transfer is never called failed.
    store.rows.set('req-r', { txHash })
    expect(await rail({ store }).getTransfer(txHash)).toEqual({ status: 'pending' })
  })

  it('treats unknown hashes it did not send as pending, and bad ones as errors', async () => {
    const tron = rail()
    expect(await tron.getTransfer('cd'.repeat(32))).toEqual({ status: 'pending' })
    const err = await failure(tron.getTransfer('nope'))
    expect([err.code, err.retryable]).toEqual(['invalid_tx_hash', false])
  })

  it('treats time-outs and server errors while reading as retryable', async () => {
    const tron = rail({ timeoutMs: 200 })
    node.handlers.set('/wallet/gettransactioninfobyid', () => ({ hang: true }))
    const slow = await failure(tron.getTransfer('ab'.repeat(32)))
    expect([slow.code, slow.retryable]).toEqual(['tron_timeout', true])
    node.handlers.set('/wallet/gettransactioninfobyid', () => ({ status: 500, json: {} }))
    const broken = await failure(tron.getTransfer('ab'.repeat(32)))
    expect([broken.code, broken.retryable]).toEqual(['tron_http_500', true])
  })
})
