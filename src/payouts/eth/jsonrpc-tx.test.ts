import { bytesToHex, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { describe, expect, it } from 'vitest'
import { classifyRpcError } from './jsonrpc-client.js'
import { bumped, firstFees, gasLimitFromEstimate, replacementFees } from './jsonrpc-fees.js'
import {
  addressOfPrivateKey,
  checksumAddress,
  intBytes,
  rlpEncode,
  signEip1559,
  transferCallData,
  TRANSFER_TOPIC,
} from './jsonrpc-tx.js'

const rlp = (item: Parameters<typeof rlpEncode>[0]) => bytesToHex(rlpEncode(item))
const text = (s: string) => utf8ToBytes(s)

describe('RLP, EIP-1559 signing and the ABI call', () => {
  it('encodes the RLP examples of the yellow paper and ethereum.org', () => {
    expect(rlp(text('dog'))).toBe('83646f67')
    expect(rlp([text('cat'), text('dog')])).toBe('c88363617483646f67')
    expect(rlp(new Uint8Array(0))).toBe('80')
    expect(rlp([])).toBe('c0')
    expect(rlp(intBytes(0n))).toBe('80')
    expect(rlp(intBytes(15n))).toBe('0f')
    expect(rlp(intBytes(1024n))).toBe('820400')
    expect(rlp([[], [[]], [[], [[]]]])).toBe('c7c0c1c0c3c0c1c0')
    const lorem = 'Lorem ipsum dolor sit amet, consectetur adipisicing elit'
    expect(rlp(text(lorem))).toBe('b838' + bytesToHex(text(lorem)))
  })

  it('signs a type-2 transaction byte for byte as the ethereum/tests vector', () => {
    // ethereum/tests BlockchainTests/ValidBlocks/bcEIP4844-blobtransactions/blockWithAllTransactionTypes.json,
    // as go-ethereum's core/types/block_test.go TestEIP4844BlockEncoding reads it: its third
    // transaction, signed by the tests' usual key (address 0xa94f5374…0b), RFC 6979 nonces.
    const key = hexToBytes('45a915e4d060149eb4365960e6a7a45f334393093061116b197e3240065ff2d8')
    expect(addressOfPrivateKey(key)).toBe('0xa94f5374fce5edbc8e2a8697c15331677e6ebf0b')
    const signed = signEip1559(
      {
        chainId: 1n,
        nonce: 2n,
        maxPriorityFeePerGas: 1n,
        maxFeePerGas: 1000n,
        gasLimit: 0xe8d4a51000n,
        to: '0x100000000000000000000000000000000000000a',
        data: '0x',
        value: 5n,
      },
      key,
    )
    expect(signed.raw).toBe(
      '0x02f8670102018203e885e8d4a5100094100000000000000000000000000000000000000a0580c080a0352a7be5002ce111bc5167f3' +
        'addf97a75e2e0b810d826af71d2caae18aed284ea065d38f8a5c8948ce706842e8861fb21020b93a4d5e489162a0e6d419a457b735',
    )
    expect(signed.hash).toBe('0x01f2da1c214988654e2595b804ab288f69a5198ec584cf5ba13e5b5416b8ec2e')
  })

  it('writes EIP-55 checksums as the EIP lists them, and the transfer call as the ABI says', () => {
    for (const address of [
      '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
      '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359',
      '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB',
      '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb',
    ])
      expect(checksumAddress(address.toLowerCase())).toBe(address)
    expect(transferCallData('0x' + 'ab'.repeat(20), 1_000_000n)).toBe(
      '0xa9059cbb' +
        '0'.repeat(24) +
        'ab'.repeat(20) +
        '00000000000000000000000000000000000000000000000000000000000f4240',
    )
    expect(TRANSFER_TOPIC).toBe('0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef')
  })
})

describe('fees', () => {
  const market = { baseFeePerGas: 10n, priorityFeePerGas: 2n }
  it('bids twice the base fee plus the tip, under the cap, or refuses when not even the next block fits', () => {
    expect(firstFees(market, 100n, 10_000n)).toEqual({ maxFeePerGas: 22n, maxPriorityFeePerGas: 2n })
    expect(firstFees(market, 100n, 1_500n)).toEqual({ maxFeePerGas: 15n, maxPriorityFeePerGas: 2n })
    expect(() => firstFees(market, 100n, 1_100n)).toThrow(/cap/)
    expect(gasLimitFromEstimate(63_209n)).toBe(75_851n)
  })
  it("bumps both fields by geth's 10%, rounded up, within the cap, or gives up", () => {
    expect(bumped(21n)).toBe(24n)
    expect(bumped(100n)).toBe(110n)
    expect(replacementFees({ maxFeePerGas: 100n, maxPriorityFeePerGas: 10n }, market, 10n, 10_000n)).toEqual({
      maxFeePerGas: 110n,
      maxPriorityFeePerGas: 11n,
    })
    // A market above the bump: the market's bid, still under the cap.
    const busy = { baseFeePerGas: 200n, priorityFeePerGas: 30n }
    expect(replacementFees({ maxFeePerGas: 100n, maxPriorityFeePerGas: 10n }, busy, 10n, 2_000n)).toEqual({
      maxFeePerGas: 200n,
      maxPriorityFeePerGas: 30n,
    })
    expect(
      replacementFees({ maxFeePerGas: 100n, maxPriorityFeePerGas: 10n }, market, 10n, 1_099n),
    ).toBeUndefined()
  })
})

describe("geth's errors", () => {
  const cases: Array<[number, string, string, boolean]> = [
    [-32000, 'already known', 'eth_already_known', true],
    [-32000, 'nonce too low: next nonce 7, tx nonce 5', 'eth_nonce_too_low', true],
    [-32000, 'replacement transaction underpriced', 'eth_replacement_underpriced', true],
    [-32000, 'transaction underpriced', 'eth_underpriced', true],
    [
      -32000,
      'insufficient funds for gas * price + value: balance 1, tx cost 2, overshot 1',
      'eth_insufficient_funds',
      true,
    ],
    [-32000, 'exceeds block gas limit', 'eth_exceeds_block_gas_limit', false],
    [3, 'execution reverted', 'eth_execution_reverted', false],
    [-32000, 'gas required exceeds allowance (30000000)', 'eth_execution_reverted', false],
    [-32000, 'finalized block not found', 'eth_no_finalized_block', true],
    [-32601, 'the method eth_foo does not exist/is not available', 'eth_method_not_found', true],
    [-32005, 'daily request count exceeded, request rate limited', 'eth_rate_limited', true],
    [-32000, 'something new', 'eth_node_error', true],
  ]
  it.each(cases)('%i %s → %s', (code, message, ours, retryable) => {
    const failure = classifyRpcError('eth_sendRawTransaction', code, message)
    expect([failure.code, failure.retryable]).toEqual([ours, retryable])
  })
})
