import { describe, expect, it } from 'vitest'
import { RailFailure } from '../../rails/rail.js'
import { TRC20_TRANSFER_TOPIC, transferOutcome, type ExpectedTransfer } from './trongrid-outcome.js'

// The outcome reader alone, over `/walletsolidity/gettransactioninfobyid` answers written out as
// java-tron builds them (TransactionUtil.buildTransactionInfoInstance): no node, no rail.

const USDT = '41a614f803b6fd780986a42c78ec9c7f77e6ded13c'
const HOT = '41' + '1c'.repeat(20)
const TO = '41' + '7e'.repeat(20)
const AMOUNT = 25_000_000n // 25 USDT
const word = (hex41: string) => hex41.slice(2).padStart(64, '0')
const expected: ExpectedTransfer = { contract: USDT, owner: HOT, toHex: TO, amountMinor: AMOUNT }

/** A USDT transfer to an existing holder that burned TRX for its energy and its bandwidth. */
const settled = {
  id: 'ab'.repeat(32),
  fee: 13_844_850,
  blockNumber: 71_000_123,
  blockTimeStamp: 1_764_000_000_000,
  // Tether's transfer() returns nothing: the node reports 32 zero bytes, which must not matter.
  contractResult: ['0'.repeat(64)],
  contract_address: USDT,
  receipt: { energy_fee: 13_499_850, energy_usage_total: 64_285, net_fee: 345_000, result: 'SUCCESS' },
  log: [
    {
      address: USDT.slice(2),
      topics: [TRC20_TRANSFER_TOPIC, word(HOT), word(TO)],
      data: AMOUNT.toString(16).padStart(64, '0'),
    },
  ],
}
const fee = {
  totalSun: 13_844_850n,
  energyFeeSun: 13_499_850n,
  netFeeSun: 345_000n,
  energyUsed: 64_285n,
  bandwidthUsed: 0n,
}
const [event] = settled.log

function refusal(info: Record<string, unknown>): RailFailure {
  try {
    transferOutcome(info, expected)
  } catch (err) {
    expect(err).toBeInstanceOf(RailFailure)
    return err as RailFailure
  }
  throw new Error('expected transferOutcome to throw')
}

describe('transferOutcome', () => {
  it('completes a SUCCESS receipt with our Transfer event, with the fee the receipt shows', () => {
    expect(transferOutcome(settled, expected)).toEqual({ status: 'completed', fee })
    // The contract as 21-byte hex and upper-case hex are the same event.
    const shouted = {
      ...event,
      address: USDT.toUpperCase(),
      topics: event!.topics.map((t) => t.toUpperCase()),
      data: event!.data.toUpperCase(),
    }
    expect(transferOutcome({ ...settled, log: [shouted] }, expected)).toEqual({ status: 'completed', fee })
    // A staked-energy transfer within the free bandwidth: java-tron leaves the zero fees out.
    const free = {
      ...settled,
      fee: undefined,
      receipt: { energy_usage_total: 64_285, net_usage: 345, result: 'SUCCESS' },
    }
    expect(transferOutcome(free, expected)).toEqual({
      status: 'completed',
      fee: { totalSun: 0n, energyFeeSun: 0n, netFeeSun: 0n, energyUsed: 64_285n, bandwidthUsed: 345n },
    })
  })

  it('calls a SUCCESS without exactly our Transfer neither completed nor failed', () => {
    const others = [
      [],
      [{ ...event, data: (AMOUNT - 1n).toString(16).padStart(64, '0') }],
      [{ ...event, topics: [TRC20_TRANSFER_TOPIC, word(HOT), word('41' + '99'.repeat(20))] }],
      [{ ...event, topics: [TRC20_TRANSFER_TOPIC, word(TO), word(TO)] }],
      [{ ...event, address: '99'.repeat(20) }],
      [{ ...event, topics: ['00'.repeat(32), word(HOT), word(TO)] }],
      [{ ...event, topics: [...event!.topics, '00'.repeat(32)] }],
      [{ ...event, data: 'not a number' }],
    ]
    for (const log of others) {
      const failure = refusal({ ...settled, log })
      expect([failure.code, failure.retryable]).toEqual(['transfer_unverified', false])
    }
    // Nor a failed run that logged the Transfer anyway.
    const odd = refusal({ ...settled, result: 'FAILED', receipt: { ...settled.receipt, result: 'REVERT' } })
    expect([odd.code, odd.message]).toEqual([
      'transfer_unverified',
      `transaction ${settled.id} failed yet logged the Transfer`,
    ])
  })

  it('fails a run the receipt reports failed, keeping what it burned', () => {
    const failed = (result: string | undefined) => ({
      ...settled,
      result: 'FAILED',
      receipt: { ...settled.receipt, result },
      log: undefined,
    })
    expect(transferOutcome(failed('REVERT'), expected)).toEqual({
      status: 'failed',
      reason: 'transfer_reverted',
      fee,
    })
    expect(transferOutcome(failed('OUT_OF_ENERGY'), expected)).toEqual({
      status: 'failed',
      reason: 'out_of_energy',
      fee,
    })
    expect(transferOutcome(failed(undefined), expected)).toEqual({
      status: 'failed',
      reason: 'transfer_failed',
      fee,
    })
    // A SUCCESS receipt on a transaction java-tron marks FAILED is not a success.
    expect(transferOutcome(failed('SUCCESS'), expected)).toEqual({
      status: 'failed',
      reason: 'transfer_failed',
      fee,
    })
  })

  it('refuses a fee it cannot read exactly, as a retryable bad answer', () => {
    for (const bad of [13_844_850.5, -1, '13844850', 2 ** 53]) {
      const failure = refusal({ ...settled, fee: bad })
      expect([failure.code, failure.retryable]).toEqual(['tron_bad_response', true])
    }
  })
})
