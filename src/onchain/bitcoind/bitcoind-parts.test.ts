/** The bitcoind rail's pure parts, called alone: answers read, errors mapped, entries and rates converted. */
import { describe, expect, it } from 'vitest'

import { confTarget, satsPerVbOfFeerate } from './bitcoind-amount.js'
import { networkOfChain } from './bitcoind-check.js'
import { mapRpcError, readRpcAnswer, RpcError } from './bitcoind-rpc.js'
import { liveSendIn } from './bitcoind-send.js'
import { receiptTo } from './bitcoind-watch.js'

describe('readRpcAnswer', () => {
  it('keeps numbers as their source text', () => {
    expect(readRpcAnswer('getbalance', 200, '{"result":0.12345678,"error":null,"id":"1"}')).toBe('0.12345678')
  })

  it('refuses bad credentials for good, and a page that is no JSON-RPC retryably', () => {
    expect(() => readRpcAnswer('m', 401, '')).toThrow(
      expect.objectContaining({
        code: 'unauthorized',
        retryable: false,
      }),
    )
    expect(() => readRpcAnswer('m', 403, '')).toThrow(
      expect.objectContaining({
        code: 'unauthorized',
        retryable: false,
      }),
    )
    expect(() => readRpcAnswer('m', 502, '<html>')).toThrow(
      expect.objectContaining({
        code: 'bad_response',
        retryable: true,
      }),
    )
  })

  it('throws an error answer as an RpcError with its code and method', () => {
    const answer = '{"result":null,"error":{"code":-18,"message":"x"}}'
    expect(() => readRpcAnswer('getwalletinfo', 500, answer)).toThrow(RpcError)
    expect(() => readRpcAnswer('getwalletinfo', 500, answer)).toThrow(
      expect.objectContaining({ code: -18, method: 'getwalletinfo', message: 'x' }),
    )
  })
})

describe('mapRpcError', () => {
  const map = (code: number, message = 'm') => mapRpcError(new RpcError(code, message, 'sendtoaddress'))

  it('tells the reasons of -6 apart', () => {
    expect(map(-6, 'Transaction amount too small').code).toBe('amount_too_small')
    expect(map(-6, 'Fee exceeds maximum configured by user').code).toBe('fee_too_high')
    expect(map(-6, 'Insufficient funds').code).toBe('insufficient_funds')
  })

  it('makes states that pass by themselves retryable, and nothing else', () => {
    for (const [code, short] of [
      [-13, 'wallet_locked'],
      [-18, 'wallet_not_loaded'],
      [-19, 'wallet_not_loaded'],
      [-28, 'node_unavailable'],
      [-9, 'node_unavailable'],
      [-10, 'node_unavailable'],
    ] as const)
      expect(map(code)).toMatchObject({ code: short, retryable: true })
    for (const [code, short] of [
      [-5, 'invalid_address'],
      [-3, 'invalid_amount'],
      [-8, 'invalid_parameter'],
      [-25, 'rejected'],
      [-26, 'rejected'],
      [-4, 'wallet_error'],
      [-32601, 'method_not_found'],
      [-1, 'node_error'],
    ] as const)
      expect(map(code)).toMatchObject({ code: short, retryable: false })
    expect(map(-4, 'oops').message).toBe('bitcoind sendtoaddress: oops (-4)')
  })
})

describe('liveSendIn', () => {
  const send = (txid: string, extra: Record<string, unknown> = {}) => ({
    category: 'send',
    comment: 'req-1',
    txid,
    ...extra,
  })

  it('picks the send not replaced, skipping abandoned ones, receipts and other requests', () => {
    const page = [
      send('a'.repeat(64), { replaced_by_txid: 'b'.repeat(64) }),
      send('c'.repeat(64), { abandoned: true }),
      { category: 'receive', comment: 'req-1', txid: 'd'.repeat(64) },
      send('e'.repeat(64), { comment: 'req-2' }),
      send('b'.repeat(64)),
    ]
    expect(liveSendIn(page, 'req-1')).toBe('b'.repeat(64))
    expect(liveSendIn(page.slice(0, 1), 'req-1')).toBe('a'.repeat(64))
    expect(liveSendIn(page.slice(1), 'req-2')).toBe('e'.repeat(64))
    expect(liveSendIn([], 'req-1')).toBeNull()
  })
})

describe('receiptTo', () => {
  const address = 'bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080'
  const entry = { category: 'receive', address, txid: 'f'.repeat(64), vout: 1, amount: '0.00012345' }

  it('reads a receipt exactly, its block only once confirmed', () => {
    expect(receiptTo(address.toUpperCase(), { ...entry, confirmations: 2, blockhash: 'h' })).toEqual({
      txid: 'f'.repeat(64),
      vout: 1,
      amountSats: 12_345n,
      confirmations: 2,
      blockHash: 'h',
    })
    expect(receiptTo(address, { ...entry, confirmations: 0, blockhash: 'h' })).not.toHaveProperty('blockHash')
  })

  it('leaves out sends, other addresses and transactions that conflict with the chain', () => {
    expect(receiptTo(address, { ...entry, category: 'send', confirmations: 1 })).toBeNull()
    expect(receiptTo('bcrt1qother0000000000', { ...entry, confirmations: 1 })).toBeNull()
    expect(receiptTo(address, { ...entry, confirmations: -3 })).toBeNull()
  })
})

describe('fee rates', () => {
  it('turns BTC/kvB into whole sat/vB, rounded up, at least 1', () => {
    expect(satsPerVbOfFeerate('0.00001000')).toBe(1n)
    expect(satsPerVbOfFeerate('0.00001001')).toBe(2n)
    expect(satsPerVbOfFeerate('0.00000001')).toBe(1n)
    expect(satsPerVbOfFeerate('0.00000000')).toBe(1n)
    expect(satsPerVbOfFeerate('0.00025')).toBe(25n)
  })

  it('clamps the confirmation target to what estimatesmartfee takes', () => {
    expect([confTarget(0), confTarget(2.9), confTarget(5000)]).toEqual([1, 2, 1008])
  })
})

describe('networkOfChain', () => {
  it("names Bitcoin Core's chains as ours, and keeps an unknown one's name", () => {
    expect(['main', 'test', 'testnet4', 'signet', 'regtest', 'liquid'].map(networkOfChain)).toEqual([
      'mainnet',
      'testnet',
      'testnet',
      'signet',
      'regtest',
      'liquid',
    ])
  })
})
