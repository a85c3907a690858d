import { secp256k1 } from '@noble/curves/secp256k1.js'
import { sha256 } from '@noble/hashes/sha2.js'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { bytesToHex, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { createBase58check } from '@scure/base'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  encodeRawTrigger,
  hex as hexText,
  TronGridStandIn,
  TRANSFER_ENERGY_REVERTED,
  TRANSFER_ENERGY_TO_HOLDER,
  TRANSFER_ENERGY_TO_NEW_HOLDER,
  USDT_MAINNET_HEX,
} from '../../../test/standins/trongrid.js'
import { RailFailure } from '../../rails/rail.js'
import { tronAddressFromPrivateKey } from './address.js'
import { createTronGridRail } from './trongrid.js'
import type { TronGridConfig } from './trongrid-deps.js'
import { TRC20_TRANSFER_TOPIC } from './trongrid-outcome.js'
import type { TronSendRecord, TronSendStore } from './trongrid-sends.js'
import {
  decodeTriggerTransaction,
  encodeTrc20Transfer,
  signTxId,
  TRC20_TRANSFER_SELECTOR,
} from './trongrid-transaction.js'

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
const PRIVATE_KEY = sha256(utf8ToBytes('svcpay trongrid test hot wallet'))
const PUBLIC_KEY = secp256k1.getPublicKey(PRIVATE_KEY, false)
const HOT_WALLET = tronAddressFromPrivateKey(PRIVATE_KEY)
const OWNER_HEX = bytesToHex(base58check.decode(HOT_WALLET))
const TO_ADDRESS = base58check.encode(hexToBytes(DOC_VECTOR.to))
const API_KEY = 'test-api-key-0123'
const FEE_LIMIT_SUN = 30_000_000n
const TRX = 1_000_000n
const PREFLIGHT = [
  '/wallet/triggerconstantcontract',
  '/wallet/triggerconstantcontract',
  '/wallet/getaccount',
  '/wallet/getaccountresource',
  '/wallet/getchainparameters',
]

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

let node: TronGridStandIn

/** A funded hot wallet: 1,000 USDT and 100 TRX. */
function fund(standIn: TronGridStandIn): void {
  standIn.account(OWNER_HEX).balance = 100n * TRX
  standIn.usdt.set(OWNER_HEX, 1_000_000_000n)
}

beforeEach(async () => {
  node = new TronGridStandIn()
  node.produceBlocks(30)
  fund(node)
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

const broadcasts = () => node.requests.filter((request) => request.path === '/wallet/broadcasttransaction')
const builds = () => node.paths().filter((path) => path === '/wallet/triggersmartcontract')

describe('TRON encodings (standard vectors)', () => {
  it('the Transfer event topic is keccak256 of its signature', () => {
    expect(bytesToHex(keccak_256(utf8ToBytes('Transfer(address,address,uint256)')))).toBe(
      TRC20_TRANSFER_TOPIC,
    )
  })

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
  it('checks the hot wallet, then builds, checks, signs and broadcasts a USDT transfer as java-tron expects', async () => {
    const tron = rail()
    expect(tron.hotWalletAddress).toBe(HOT_WALLET)

    const { txHash } = await tron.sendUsdt({ to: TO_ADDRESS, amountMinor: 100n, requestId: 'req-1' })

    expect(node.paths()).toEqual([
      ...PREFLIGHT,
      '/wallet/triggersmartcontract',
      '/wallet/broadcasttransaction',
    ])
    for (const request of node.requests) {
      expect(request.headers['tron-pro-api-key']).toBe(API_KEY)
      expect(request.headers['content-type']).toBe('application/json')
    }
    const [balanceOf, simulate] = node.requests
    expect(balanceOf?.body).toEqual({
      owner_address: OWNER_HEX,
      contract_address: USDT_MAINNET_HEX,
      function_selector: 'balanceOf(address)',
      parameter: OWNER_HEX.slice(2).padStart(64, '0'),
      visible: false,
    })
    expect(simulate?.body).toMatchObject({
      function_selector: 'transfer(address,uint256)',
      parameter: DOC_VECTOR.parameter,
    })
    const trigger = node.requests.find((r) => r.path === '/wallet/triggersmartcontract')
    expect(trigger?.body).toEqual({
      owner_address: OWNER_HEX,
      contract_address: USDT_MAINNET_HEX,
      function_selector: 'transfer(address,uint256)',
      parameter: DOC_VECTOR.parameter,
      fee_limit: 30_000_000,
      call_value: 0,
      visible: false,
    })
    const broadcast = broadcasts()[0]
    expect(broadcast?.body.txID).toBe(txHash)
    expect(broadcast?.body.raw_data_hex).toEqual(expect.any(String))
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
    expect(builds()).toHaveLength(1)
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
    expect(builds()).toHaveLength(1)
  })

  it('records the signed transaction before broadcasting; a restarted rail sends that one again', async () => {
    const store = new MemoryStore(node.log)
    const { txHash } = await rail({ store }).sendUsdt({
      to: TO_ADDRESS,
      amountMinor: 100n,
      requestId: 'req-3',
    })
    expect(node.log.slice(-3)).toEqual([
      'http /wallet/triggersmartcontract',
      'store.put req-3',
      'http /wallet/broadcasttransaction',
    ])
    const broadcast = broadcasts().at(-1)?.body
    const expiration = BigInt(Number((broadcast?.raw_data as { expiration: number }).expiration))
    expect(expiration).toBe(BigInt(node.head.timestamp + 60_000))
    expect(store.rows.get('req-3')).toEqual({
      txHash,
      signed: JSON.stringify(broadcast),
      expirationMs: expiration,
    })

    // The node already has it: the restarted rail checks nothing, builds nothing, and the network
    // holds one transfer.
    const before = node.requests.length
    const restarted = rail({ store })
    expect(await restarted.sendUsdt({ to: TO_ADDRESS, amountMinor: 100n, requestId: 'req-3' })).toEqual({
      txHash,
    })
    expect(node.paths().slice(before)).toEqual(['/wallet/broadcasttransaction'])
    expect(node.requests.at(-1)?.body).toEqual(broadcast)
    expect(node.pool.size).toBe(1)
  })

  it('after a stop between recording and any node accepting, the restart broadcasts the recorded transfer', async () => {
    const store = new MemoryStore(node.log)
    node.fault('/wallet/broadcasttransaction', { kind: 'status', status: 503 })
    const lost = await failure(
      rail({ store }).sendUsdt({ to: TO_ADDRESS, amountMinor: 8n, requestId: 'req-4' }),
    )
    expect([lost.code, lost.retryable]).toEqual(['tron_http_503', true])
    const recorded = store.rows.get('req-4')
    expect(node.pool.size).toBe(0)

    const { txHash } = await rail({ store }).sendUsdt({ to: TO_ADDRESS, amountMinor: 8n, requestId: 'req-4' })
    expect(txHash).toBe(recorded?.txHash)
    expect(node.pool.has(txHash)).toBe(true)
    expect(builds()).toHaveLength(1)
  })

  it('a recorded transfer that expired before any node took it fails for good after a restart', async () => {
    const store = new MemoryStore(node.log)
    node.fault('/wallet/broadcasttransaction', { kind: 'status', status: 503 })
    await failure(rail({ store }).sendUsdt({ to: TO_ADDRESS, amountMinor: 8n, requestId: 'req-5' }))
    node.produceBlocks(21) // 63 s: past the 60 s expiration, within the grace a lagging node needs
    const early = await failure(
      rail({ store }).sendUsdt({ to: TO_ADDRESS, amountMinor: 8n, requestId: 'req-5' }),
    )
    expect([early.code, early.retryable]).toEqual(['tron_transaction_expiring', true])
    node.produceBlocks(20) // 123 s: past the expiration and its 60 s grace

    const err = await failure(
      rail({ store }).sendUsdt({ to: TO_ADDRESS, amountMinor: 8n, requestId: 'req-5' }),
    )
    expect([err.code, err.retryable]).toEqual(['transaction_expired', false])
    expect(node.pool.size + node.txs.size).toBe(0)
    expect(builds()).toHaveLength(1)
  })

  it('answers a send recorded with its hash alone (before signed transactions were kept) from the hash', async () => {
    const store = new MemoryStore(node.log)
    store.rows.set('req-old', { txHash: 'ab'.repeat(32) })
    expect(await rail({ store }).sendUsdt({ to: TO_ADDRESS, amountMinor: 1n, requestId: 'req-old' })).toEqual(
      { txHash: 'ab'.repeat(32) },
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
    node.handlers.set('/wallet/triggersmartcontract', (body) => ({
      json: node.trigger({ ...body, parameter: encodeTrc20Transfer(attacker, 100n) }),
    }))
    const err = await failure(rail().sendUsdt({ to: TO_ADDRESS, amountMinor: 100n, requestId: 'req-4' }))
    expect([err.code, err.retryable]).toEqual(['tron_bad_transaction', true])
    expect(err.message).toContain('calls something other than our transfer')
    expect(node.paths()).not.toContain('/wallet/broadcasttransaction')
  })

  it('refuses a txID that is not the hash of raw_data_hex, or another fee limit or contract', async () => {
    const cases: Array<[(body: Record<string, unknown>) => unknown, string]> = [
      [
        (body) => {
          const built = node.trigger(body) as { transaction: Record<string, unknown> }
          return { result: { result: true }, transaction: { ...built.transaction, txID: 'ab'.repeat(32) } }
        },
        'sha256',
      ],
      [(body) => node.trigger({ ...body, fee_limit: 15_000_000_000 }), 'has another fee limit'],
    ]
    for (const [answer, issue] of cases) {
      node.handlers.set('/wallet/triggersmartcontract', (body) => ({ json: answer(body) }))
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

  it('maps java-tron’s broadcast refusals (Wallet.broadcastTransaction), decoding their hex messages', async () => {
    const refusals: Array<[string, string, boolean]> = [
      ['SIGERROR', 'Validate signature error: x', false],
      ['CONTRACT_VALIDATE_ERROR', 'Contract validate error : balance is not sufficient', false],
      ['BANDWITH_ERROR', 'Account resource insufficient error.', false],
      ['SERVER_BUSY', 'Server busy.', true],
      ['NOT_ENOUGH_EFFECTIVE_CONNECTION', 'P2P broadcast failed.', true],
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
    node.fault('/wallet/broadcasttransaction', { kind: 'status', status: 502 })
    const err = await failure(tron.sendUsdt({ to: TO_ADDRESS, amountMinor: 9n, requestId: 'req-8' }))
    expect([err.code, err.retryable]).toEqual(['tron_http_502', true])
    const { txHash } = await tron.sendUsdt({ to: TO_ADDRESS, amountMinor: 9n, requestId: 'req-8' })
    expect(broadcasts()).toHaveLength(2)
    expect(broadcasts()[1]?.body).toEqual(broadcasts()[0]?.body)
    expect(broadcasts()[0]?.body.txID).toBe(txHash)
    expect(builds()).toHaveLength(1)
  })

  it('treats a time-out as retryable, and the retry finds the node already has the transaction', async () => {
    const tron = rail({ timeoutMs: 300 })
    // The first attempt reaches the node, which pools it but never answers.
    node.fault('/wallet/broadcasttransaction', { kind: 'work-then-stall' })
    const started = Date.now()
    const err = await failure(tron.sendUsdt({ to: TO_ADDRESS, amountMinor: 9n, requestId: 'req-9' }))
    expect([err.code, err.retryable]).toEqual(['tron_timeout', true])
    expect(Date.now() - started).toBeLessThan(2_000)
    // The second attempt is told DUP_TRANSACTION_ERROR, which means the node has it: success.
    const { txHash } = await tron.sendUsdt({ to: TO_ADDRESS, amountMinor: 9n, requestId: 'req-9' })
    expect(node.pool.has(txHash)).toBe(true)
    expect(node.pool.size).toBe(1)
  })

  it('after a lost answer, a later refusal is retryable: another node may hold the transaction', async () => {
    const tron = rail({ timeoutMs: 300 })
    node.fault('/wallet/broadcasttransaction', { kind: 'stall' })
    await failure(tron.sendUsdt({ to: TO_ADDRESS, amountMinor: 9n, requestId: 'req-10' }))
    node.handlers.set('/wallet/broadcasttransaction', () => ({
      json: { result: false, code: 'SIGERROR', message: hexText('x') },
    }))
    const err = await failure(tron.sendUsdt({ to: TO_ADDRESS, amountMinor: 9n, requestId: 'req-10' }))
    expect([err.code, err.retryable]).toEqual(['tron_sigerror', true])
  })

  it('fails for good once the transaction expired and no block holds it; succeeds if one does', async () => {
    const tron = rail()
    node.fault('/wallet/broadcasttransaction', { kind: 'status', status: 503 }, 2)
    await failure(tron.sendUsdt({ to: TO_ADDRESS, amountMinor: 9n, requestId: 'req-11' }))
    await failure(tron.sendUsdt({ to: TO_ADDRESS, amountMinor: 9n, requestId: 'req-12' }))
    node.produceBlocks(41) // past the expiration and its 60 s grace
    const err = await failure(tron.sendUsdt({ to: TO_ADDRESS, amountMinor: 9n, requestId: 'req-11' }))
    expect([err.code, err.retryable]).toEqual(['transaction_expired', false])
    expect(node.paths().slice(-5)).toEqual([
      '/wallet/broadcasttransaction',
      '/wallet/gettransactioninfobyid',
      '/wallet/gettransactionbyid',
      '/wallet/getnowblock',
      '/walletsolidity/gettransactioninfobyid',
    ])
    // req-12's transaction, by contrast, made it into a block (through another node) before expiring.
    node.handlers.set('/wallet/broadcasttransaction', (body) => {
      node.txs.set(String(body.txID), { body, blockNumber: node.head.number })
      node.infos.set(String(body.txID), { id: body.txID, blockNumber: node.head.number })
      return {
        json: {
          result: false,
          code: 'TRANSACTION_EXPIRATION_ERROR',
          message: hexText('Transaction expired'),
        },
      }
    })
    const { txHash } = await tron.sendUsdt({ to: TO_ADDRESS, amountMinor: 9n, requestId: 'req-12' })
    expect(node.txs.has(txHash)).toBe(true)
  })

  it('an expiry refusal of a re-broadcast waits a grace past the expiration before failing: a lagging node may miss the block', async () => {
    const store = new MemoryStore(node.log)
    const tron = rail({ store })
    node.fault('/wallet/broadcasttransaction', { kind: 'status', status: 503 })
    await failure(tron.sendUsdt({ to: TO_ADDRESS, amountMinor: 9n, requestId: 'req-13' }))
    // Through another node, the transfer made the last block before its expiration.
    const signed = JSON.parse(store.rows.get('req-13')!.signed!) as Record<string, unknown>
    node.produceBlocks(19)
    node.pool.set(String(signed.txID), signed)
    node.produceBlocks(1)
    expect(node.txs.has(String(signed.txID))).toBe(true)
    node.produceBlocks(1) // now past the expiration
    // The node answering reads is two blocks behind and does not see that block yet.
    node.readLag = 2
    const err = await failure(tron.sendUsdt({ to: TO_ADDRESS, amountMinor: 9n, requestId: 'req-13' }))
    expect([err.code, err.retryable]).toEqual(['tron_transaction_expiring', true])
    node.readLag = 0
    const { txHash } = await tron.sendUsdt({ to: TO_ADDRESS, amountMinor: 9n, requestId: 'req-13' })
    expect(txHash).toBe(signed.txID)
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
    expect(() => rail({ network: 'testnet' as never })).toThrow(/TRON_NETWORK/)
  })
})

describe('createTronGridRail: pre-flight of the hot wallet', () => {
  const trx = () => node.account(OWNER_HEX).balance

  it('refuses a transfer the hot wallet has too little USDT for; nothing is signed or burned', async () => {
    node.usdt.set(OWNER_HEX, 99n)
    const before = trx()
    const err = await failure(rail().sendUsdt({ to: TO_ADDRESS, amountMinor: 100n, requestId: 'p-1' }))
    expect([err.code, err.retryable]).toEqual(['hot_wallet_insufficient_usdt', false])
    expect(err.message).toBe('the hot wallet holds 0.000099 USDT, the transfer needs 0.0001')
    expect(node.paths()).toEqual(['/wallet/triggerconstantcontract'])
    expect(trx()).toBe(before)
  })

  it('refuses a transfer whose energy the hot wallet cannot pay, instead of burning TRX on OUT_OF_ENERGY', async () => {
    // 5 TRX buys 50,000 energy at 100 sun each; a first transfer to an address needs 130,285.
    node.account(OWNER_HEX).balance = 5n * TRX
    const err = await failure(rail().sendUsdt({ to: TO_ADDRESS, amountMinor: 100n, requestId: 'p-2' }))
    expect([err.code, err.retryable]).toEqual(['hot_wallet_insufficient_trx', false])
    expect(err.message).toContain('the hot wallet holds 5 TRX and 0 staked energy')
    expect(node.paths()).not.toContain('/wallet/broadcasttransaction')
    expect(node.account(OWNER_HEX).balance).toBe(5n * TRX)
    expect(node.usdt.get(DOC_VECTOR.to)).toBeUndefined()
  })

  it('counts staked energy and free bandwidth: a wallet with no TRX to burn can still send', async () => {
    const owner = node.account(OWNER_HEX)
    owner.balance = 0n
    owner.energyLimit = 200_000n
    const tron = rail()
    const { txHash } = await tron.sendUsdt({ to: TO_ADDRESS, amountMinor: 100n, requestId: 'p-3' })
    node.produceBlocks(1)
    node.solidify()
    const state = await tron.getTransfer(txHash)
    expect(state).toEqual({
      status: 'completed',
      fee: {
        totalSun: 0n,
        energyFeeSun: 0n,
        netFeeSun: 0n,
        energyUsed: TRANSFER_ENERGY_TO_NEW_HOLDER,
        bandwidthUsed: expect.any(BigInt),
      },
    })
    expect(owner.balance).toBe(0n)
    expect(owner.energyUsed).toBe(TRANSFER_ENERGY_TO_NEW_HOLDER)
  })

  it('refuses a transfer that needs more energy than TRON_FEE_LIMIT_SUN allows', async () => {
    const err = await failure(
      rail({ feeLimitSun: 10n * TRX }).sendUsdt({ to: TO_ADDRESS, amountMinor: 100n, requestId: 'p-4' }),
    )
    expect([err.code, err.retryable]).toEqual(['fee_limit_too_low', false])
    expect(node.paths()).not.toContain('/wallet/triggersmartcontract')
  })

  it('refuses a transfer the token would revert (a blacklisted hot wallet)', async () => {
    node.blacklisted.add(OWNER_HEX)
    const err = await failure(rail().sendUsdt({ to: TO_ADDRESS, amountMinor: 100n, requestId: 'p-5' }))
    expect([err.code, err.retryable]).toEqual(['transfer_would_revert', false])
    expect(err.message).toContain('REVERT opcode executed')
  })

  it('keeps node trouble during the pre-flight retryable', async () => {
    node.fault('/wallet/triggerconstantcontract', { kind: 'status', status: 503 })
    const err = await failure(rail().sendUsdt({ to: TO_ADDRESS, amountMinor: 100n, requestId: 'p-6' }))
    expect([err.code, err.retryable]).toEqual(['tron_http_503', true])
    node.fault('/wallet/getchainparameters', { kind: 'status', status: 500 })
    const again = await failure(rail().sendUsdt({ to: TO_ADDRESS, amountMinor: 100n, requestId: 'p-6' }))
    expect([again.code, again.retryable]).toEqual(['tron_http_500', true])
    expect(await rail().sendUsdt({ to: TO_ADDRESS, amountMinor: 100n, requestId: 'p-6' })).toEqual({
      txHash: expect.stringMatching(/^[0-9a-f]{64}$/),
    })
  })
})

describe('createTronGridRail: following a transfer', () => {
  async function sent(tron = rail(), amountMinor = 100n) {
    const { txHash } = await tron.sendUsdt({ to: TO_ADDRESS, amountMinor, requestId: `req-${Math.random()}` })
    return { tron, txHash }
  }

  it('completes a transfer Tether executed although its transfer() returned 32 zero bytes', async () => {
    // Regression: the return value was read as `transfer_returned_false` and the payout refunded
    // while the recipient had the USDT.
    const { tron, txHash } = await sent()
    node.produceBlocks(1)
    node.solidify()
    const info = node.infos.get(txHash)!
    expect(info.contractResult).toEqual(['0'.repeat(64)])
    expect(info.receipt).toMatchObject({ result: 'SUCCESS' })
    const state = await tron.getTransfer(txHash, { to: TO_ADDRESS, amountMinor: 100n })
    expect(state).toEqual({
      status: 'completed',
      fee: {
        totalSun: TRANSFER_ENERGY_TO_NEW_HOLDER * 100n,
        energyFeeSun: TRANSFER_ENERGY_TO_NEW_HOLDER * 100n,
        netFeeSun: 0n,
        energyUsed: TRANSFER_ENERGY_TO_NEW_HOLDER,
        bandwidthUsed: expect.any(BigInt),
      },
    })
    // The chain agrees: the recipient holds the USDT and the hot wallet paid exactly that TRX.
    expect(node.usdt.get(DOC_VECTOR.to)).toBe(100n)
    expect(node.account(OWNER_HEX).balance).toBe(100n * TRX - TRANSFER_ENERGY_TO_NEW_HOLDER * 100n)

    // A second transfer to the now-holder costs the energy of changing a balance, not creating one;
    // the day's 600 free bandwidth bytes are spent, so its 345 bytes are paid in TRX.
    const second = await sent(tron, 50n)
    node.produceBlocks(1)
    node.solidify()
    expect(await tron.getTransfer(second.txHash)).toMatchObject({
      status: 'completed',
      fee: {
        energyUsed: TRANSFER_ENERGY_TO_HOLDER,
        netFeeSun: 345_000n,
        totalSun: TRANSFER_ENERGY_TO_HOLDER * 100n + 345_000n,
      },
    })
    expect(node.usdt.get(DOC_VECTOR.to)).toBe(150n)
  })

  it('is final only once solidified, however far the full node’s head has moved', async () => {
    // Regression: finality was counted from the full node's head block, which can still change.
    const { tron, txHash } = await sent()
    expect(await tron.getTransfer(txHash)).toEqual({ status: 'pending' })
    node.solidFrozen = node.head.number
    node.produceBlocks(40)
    expect(node.infos.has(txHash)).toBe(true)
    expect(await tron.getTransfer(txHash)).toEqual({ status: 'pending' })
    expect(node.paths().slice(-2)).toEqual([
      '/walletsolidity/gettransactioninfobyid',
      '/wallet/gettransactioninfobyid',
    ])
    node.solidFrozen = undefined
    expect(await tron.getTransfer(txHash)).toMatchObject({ status: 'completed' })
    const read = node.requests.find((r) => r.path === '/walletsolidity/gettransactioninfobyid')
    expect(read?.body).toEqual({ value: txHash })
    expect(read?.headers['tron-pro-api-key']).toBe(API_KEY)
  })

  it('reports a transfer the chain reverted as failed, with the TRX it burned', async () => {
    const { tron, txHash } = await sent()
    node.blacklisted.add(OWNER_HEX) // after the pre-flight, before the block
    node.produceBlocks(1)
    expect(await tron.getTransfer(txHash)).toEqual({ status: 'pending' })
    node.solidify()
    expect(await tron.getTransfer(txHash)).toEqual({
      status: 'failed',
      reason: 'transfer_reverted',
      fee: {
        totalSun: TRANSFER_ENERGY_REVERTED * 100n,
        energyFeeSun: TRANSFER_ENERGY_REVERTED * 100n,
        netFeeSun: 0n,
        energyUsed: TRANSFER_ENERGY_REVERTED,
        bandwidthUsed: expect.any(BigInt),
      },
    })
    expect(node.usdt.get(DOC_VECTOR.to)).toBeUndefined()
  })

  it('reports a transfer that ran out of energy as failed, with everything it burned', async () => {
    const { tron, txHash } = await sent()
    node.account(OWNER_HEX).balance = 2n * TRX // spent elsewhere after the pre-flight
    node.produceBlocks(1)
    node.solidify()
    expect(await tron.getTransfer(txHash)).toEqual({
      status: 'failed',
      reason: 'out_of_energy',
      fee: {
        totalSun: 2n * TRX,
        energyFeeSun: 2n * TRX,
        netFeeSun: 0n,
        energyUsed: 20_000n,
        bandwidthUsed: expect.any(BigInt),
      },
    })
    expect(node.account(OWNER_HEX).balance).toBe(0n)
  })

  it('never calls a SUCCESS without the matching Transfer event either way: the payout waits for a person', async () => {
    const { tron, txHash } = await sent()
    node.produceBlocks(1)
    node.solidify()
    const info = node.infos.get(txHash)!
    node.infos.set(txHash, { ...info, log: [] })
    const missing = await failure(tron.getTransfer(txHash))
    expect([missing.code, missing.retryable]).toEqual(['transfer_unverified', false])
    // A Transfer of another amount (a token fee taken out of it) or from another address is not ours.
    const [log] = info.log as Record<string, unknown>[]
    for (const changed of [
      { ...log, data: 99n.toString(16).padStart(64, '0') },
      { ...log, address: '00'.repeat(20) },
      { ...log, topics: [TRC20_TRANSFER_TOPIC, '00'.repeat(32), (log!.topics as string[])[2]] },
    ]) {
      node.infos.set(txHash, { ...info, log: [changed] })
      expect((await failure(tron.getTransfer(txHash))).code).toBe('transfer_unverified')
    }
    node.infos.set(txHash, info)
    expect(await tron.getTransfer(txHash)).toMatchObject({ status: 'completed' })
  })

  it('refuses to settle a payout against a transfer of another amount or recipient', async () => {
    const { tron, txHash } = await sent()
    node.produceBlocks(1)
    node.solidify()
    const other = await failure(tron.getTransfer(txHash, { to: TO_ADDRESS, amountMinor: 101n }))
    expect([other.code, other.retryable]).toEqual(['transfer_mismatch', false])
    const elsewhere = await failure(tron.getTransfer(txHash, { to: HOT_WALLET, amountMinor: 100n }))
    expect(elsewhere.code).toBe('transfer_mismatch')
  })

  it('hands the same transaction to a node that restarted and forgot it, while it is valid', async () => {
    const { tron, txHash } = await sent()
    await node.restart()
    expect(node.pool.size).toBe(0)
    expect(await tron.getTransfer(txHash)).toEqual({ status: 'pending' })
    expect(node.pool.has(txHash)).toBe(true)
    // Polled again while it waits in the pool: the node says DUP, which changes nothing.
    expect(await tron.getTransfer(txHash)).toEqual({ status: 'pending' })
    node.produceBlocks(1)
    node.solidify()
    expect(await tron.getTransfer(txHash)).toMatchObject({ status: 'completed' })
    expect(node.usdt.get(DOC_VECTOR.to)).toBe(100n)
  })

  it('reports an accepted transaction that a restarted node lost and that expired as failed', async () => {
    const { tron, txHash } = await sent()
    await node.restart()
    node.produceBlocks(25) // 75 s: expired, but within the grace a slow node may still include it
    expect(await tron.getTransfer(txHash)).toEqual({ status: 'pending' })
    expect(node.pool.size).toBe(0) // too late to hand it over again
    node.produceBlocks(20)
    expect(await tron.getTransfer(txHash)).toEqual({ status: 'failed', reason: 'transaction_expired' })
    expect(node.usdt.get(DOC_VECTOR.to)).toBeUndefined()
  })

  it('a restarted rail reads the expiration and the signed transaction from the store', async () => {
    const store = new MemoryStore(node.log)
    const { txHash } = await rail({ store }).sendUsdt({ to: TO_ADDRESS, amountMinor: 3n, requestId: 'req-r' })
    await node.restart()
    // A new process hands the recorded transaction to the restarted node.
    expect(await rail({ store }).getTransfer(txHash)).toEqual({ status: 'pending' })
    expect(node.pool.has(txHash)).toBe(true)
    await node.restart()
    node.produceBlocks(45)
    expect(await rail({ store }).getTransfer(txHash)).toEqual({
      status: 'failed',
      reason: 'transaction_expired',
    })
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

  it('treats time-outs, server errors and a lying node as retryable while reading', async () => {
    const tron = rail({ timeoutMs: 200 })
    node.fault('/walletsolidity/gettransactioninfobyid', { kind: 'stall' })
    const slow = await failure(tron.getTransfer('ab'.repeat(32)))
    expect([slow.code, slow.retryable]).toEqual(['tron_timeout', true])
    node.fault('/walletsolidity/gettransactioninfobyid', { kind: 'status', status: 500 })
    const broken = await failure(tron.getTransfer('ab'.repeat(32)))
    expect([broken.code, broken.retryable]).toEqual(['tron_http_500', true])

    const { txHash } = await sent(tron)
    node.produceBlocks(1)
    node.solidify()
    node.handlers.set('/walletsolidity/gettransactionbyid', () => ({
      json: { txID: txHash, raw_data_hex: '00' },
    }))
    const lying = await failure(tron.getTransfer(txHash))
    expect([lying.code, lying.retryable]).toEqual(['tron_bad_response', true])
  })

  it('refuses a redirect as unreachable and an answer over 8 MiB as a bad response, both retryable', async () => {
    const tron = rail()
    const path = '/walletsolidity/gettransactioninfobyid'
    node.fault(path, { kind: 'status', status: 302, body: '' })
    const moved = await failure(tron.getTransfer('ab'.repeat(32)))
    expect([moved.code, moved.retryable]).toEqual(['tron_unreachable', true])
    node.fault(path, { kind: 'status', status: 200, body: `{"pad":"${'x'.repeat(8 * 1024 * 1024)}"}` })
    const huge = await failure(tron.getTransfer('ab'.repeat(32)))
    expect([huge.code, huge.retryable]).toEqual(['tron_bad_response', true])
    expect(huge.message).toContain('larger than 8388608 bytes')
  })
})

describe('createTronGridRail: check()', () => {
  it('reports a good node: version, network, sync, balances and no problems', async () => {
    node.usdt.set(OWNER_HEX, 1_234_567_890n)
    expect(await rail().check!()).toEqual({
      rail: 'tron',
      adapter: 'trongrid',
      reachable: true,
      version: '4.8.0',
      network: 'mainnet',
      synced: true,
      balances: { TRX: '100', USDT: '1234.56789' },
      problems: [],
    })
    expect(node.paths()).toContain('/wallet/getnodeinfo')
    expect(node.requests.find((r) => r.path === '/wallet/getblockbynum')?.body).toEqual({ num: 0 })
  })

  it('reports a node on another network than TRON_NETWORK', async () => {
    const nile = new TronGridStandIn({ network: 'nile' })
    fund(nile)
    await nile.start()
    try {
      const report = await rail({ url: nile.url }).check!()
      expect(report).toMatchObject({ reachable: true, network: 'nile' })
      expect(report.problems).toEqual(['the node is on nile, TRON_NETWORK is mainnet'])
      expect((await rail({ url: nile.url, network: 'nile' }).check!()).problems).toEqual([])
    } finally {
      await nile.stop()
    }
  })

  it('reports an unfunded hot wallet and a USDT contract that is not there', async () => {
    node.accounts.clear()
    node.usdt.clear()
    const report = await rail().check!()
    expect(report.balances).toEqual({ TRX: '0', USDT: '0' })
    expect(report.problems).toEqual([
      `the hot wallet ${HOT_WALLET} does not exist on this network: send it TRX first`,
      `the hot wallet ${HOT_WALLET} holds no USDT`,
    ])
    fund(node)
    node.account(OWNER_HEX).balance = 10n * TRX
    const poor = await rail().check!()
    expect(poor.problems).toEqual([
      'the hot wallet holds 10 TRX and 0 staked energy, less than one transfer may burn (TRON_FEE_LIMIT_SUN, 30 TRX)',
    ])
    fund(node)
    const elsewhere = await rail({ usdtContract: TO_ADDRESS }).check!()
    expect(elsewhere.problems).toEqual([
      expect.stringContaining(`hot wallet USDT: TRON_USDT_CONTRACT ${TO_ADDRESS} is not a contract`),
    ])
  })

  it('reports a refused API key, a node behind the chain, and a node that does not answer', async () => {
    const keyed = new TronGridStandIn({ apiKeys: ['the-right-key'] })
    await keyed.start()
    try {
      expect(await rail({ url: keyed.url }).check!()).toEqual({
        rail: 'tron',
        adapter: 'trongrid',
        reachable: true,
        problems: ['TronGrid refused TRONGRID_API_KEY'],
      })
    } finally {
      await keyed.stop()
    }
    const behind = await rail({ now: () => node.head.timestamp + 600_000 }).check!()
    expect(behind.synced).toBe(false)
    expect(behind.problems).toEqual([expect.stringMatching(/head block \d+ is 600 s old/)])

    const url = node.url
    await node.stop()
    const gone = await rail({ url, timeoutMs: 500 }).check!()
    expect(gone.reachable).toBe(false)
    expect(gone.problems).toEqual([expect.stringContaining('did not answer getnodeinfo')])
    node = new TronGridStandIn()
    await node.start()
  })
})
