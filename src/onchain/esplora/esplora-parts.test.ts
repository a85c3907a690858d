/** The Esplora rail's pure parts, called alone: answers read, outputs found, rates chosen, refusals parsed. */
import { describe, expect, it } from 'vitest'

import { RailFailure } from '../../rails/rail.js'
import { GENESIS_HASHES, networkOfGenesis } from './esplora-check.js'
import { confirmationsOf, readEsploraAnswer } from './esplora-http.js'
import { feeRateFor, outputsTo } from './esplora-outputs.js'
import { parseBroadcastRefusal, txidOf } from './esplora-send.js'

describe('readEsploraAnswer', () => {
  it('passes a 2xx body, answers null for a 404', () => {
    expect(readEsploraAnswer('/tx/abc', 200, 'body')).toBe('body')
    expect(readEsploraAnswer('/tx/abc', 404, 'Transaction not found')).toBeNull()
  })

  it('retries rate limits and server errors; a bad request is a final rejection', () => {
    expect(() => readEsploraAnswer('/tx', 429, '')).toThrow(
      expect.objectContaining({
        code: 'node_error',
        retryable: true,
      }),
    )
    expect(() => readEsploraAnswer('/tx', 502, '')).toThrow(
      expect.objectContaining({
        code: 'node_error',
        retryable: true,
      }),
    )
    expect(() => readEsploraAnswer('/tx', 400, 'bad')).toThrow(
      expect.objectContaining({
        code: 'rejected',
        retryable: false,
      }),
    )
    expect(() => readEsploraAnswer('/address/x/utxo', 403, 'no')).toThrow(
      expect.objectContaining({
        code: 'node_error',
        retryable: false,
        message: 'esplora /address: HTTP 403 no',
      }),
    )
  })
})

describe('confirmationsOf', () => {
  it('counts from the tip, a block above it once, and none in the mempool', () => {
    expect(confirmationsOf({ confirmed: true, block_height: 100 }, 105)).toBe(6)
    expect(confirmationsOf({ confirmed: true, block_height: 106 }, 105)).toBe(1)
    expect(confirmationsOf({ confirmed: false }, 105)).toBe(0)
    expect(() => confirmationsOf({ confirmed: true }, 105)).toThrow(RailFailure)
  })
})

describe('outputsTo', () => {
  const address = 'bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080'
  const tx = (txid: string, status: Record<string, unknown>, vout: unknown[]) => ({ txid, status, vout })

  it('finds outputs to the address in any spelling, each once, with a block only once confirmed', () => {
    const confirmed = tx('a'.repeat(64), { confirmed: true, block_height: 10, block_hash: 'h' }, [
      { scriptpubkey_address: 'bcrt1qother', value: 5 },
      { scriptpubkey_address: address, value: 1234 },
    ])
    const pending = tx('b'.repeat(64), { confirmed: false, block_hash: 'x' }, [
      { scriptpubkey_address: address, value: 7 },
    ])
    expect(outputsTo(address.toUpperCase(), [confirmed, pending, confirmed], 11)).toEqual([
      { txid: 'a'.repeat(64), vout: 1, amountSats: 1234n, confirmations: 2, blockHash: 'h' },
      { txid: 'b'.repeat(64), vout: 0, amountSats: 7n, confirmations: 0 },
    ])
  })

  it('names who paid: the addresses the inputs spend (electrs src/rest.rs, TxInValue.prevout)', () => {
    const paid = {
      ...tx('d'.repeat(64), { confirmed: false }, [{ scriptpubkey_address: address, value: 9 }]),
      vin: [
        { txid: 'e'.repeat(64), vout: 0, prevout: { scriptpubkey_address: 'bcrt1qpayer', value: 10 } },
        { txid: 'e'.repeat(64), vout: 1, prevout: { scriptpubkey_address: 'bcrt1qpayer', value: 1 } },
        // A coinbase input has no prevout; a bare script has no address.
        { is_coinbase: true, prevout: null },
        { txid: 'f'.repeat(64), vout: 0, prevout: { scriptpubkey: '6a' } },
      ],
    }
    expect(outputsTo(address, [paid], 1)).toEqual([
      { txid: 'd'.repeat(64), vout: 0, amountSats: 9n, confirmations: 0, sources: ['bcrt1qpayer'] },
    ])
  })

  it('refuses a value that is not whole satoshis', () => {
    const bad = tx('c'.repeat(64), { confirmed: false }, [{ scriptpubkey_address: address, value: 0.5 }])
    expect(() => outputsTo(address, [bad], 1)).toThrow(
      expect.objectContaining({
        code: 'bad_response',
        retryable: true,
      }),
    )
  })
})

describe('feeRateFor', () => {
  const estimates = { '1': 20.2, '3': 10.5, '6': 4.01, '144': 0.4, junk: 9, '2': 'x' }

  it('takes the largest target not above ours, rounded up to whole sat/vB, at least 1', () => {
    expect(feeRateFor(estimates, 4)).toBe(11n)
    expect(feeRateFor(estimates, 6)).toBe(5n)
    expect(feeRateFor(estimates, 1000)).toBe(1n)
  })

  it('falls back to the fastest target below all of them, and has nothing without estimates', () => {
    expect(feeRateFor({ '2': 8.1, '6': 3 }, 1)).toBe(9n)
    expect(feeRateFor({}, 6)).toBeNull()
  })
})

describe('broadcasts', () => {
  it("reads the node's refusal out of electrs' error text", () => {
    expect(
      parseBroadcastRefusal(
        'esplora /tx: HTTP 400 sendrawtransaction RPC error: {"code":-25,"message":"bad-txns-inputs-missingorspent"}',
      ),
    ).toEqual({ code: -25, message: 'bad-txns-inputs-missingorspent' })
    expect(parseBroadcastRefusal('esplora /tx: HTTP 400 Connection error')).toBeNull()
    expect(parseBroadcastRefusal('sendrawtransaction RPC error: {"message":"no code"}')).toBeNull()
    expect(parseBroadcastRefusal('sendrawtransaction RPC error: {truncated')).toBeNull()
  })

  it('refuses a raw transaction that does not parse, for good', () => {
    expect(() => txidOf('00ff')).toThrow(
      expect.objectContaining({ code: 'invalid_transaction', retryable: false }),
    )
  })
})

describe('networkOfGenesis', () => {
  it('names each network by its block 0, testnet3 and testnet4 alike', () => {
    expect(networkOfGenesis(GENESIS_HASHES.mainnet[0]!)).toBe('mainnet')
    expect(networkOfGenesis(GENESIS_HASHES.testnet[1]!)).toBe('testnet')
    expect(networkOfGenesis('00'.repeat(32))).toBeUndefined()
  })
})
