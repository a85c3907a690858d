import { describe, expect, it } from 'vitest'
import {
  asAccountId,
  asTxnId,
  asWalletId,
  newAccountId,
  newTxnId,
  newWalletId,
  type AccountId,
  type TxnId,
  type WalletId,
} from './ids.js'

// What these tests pin is mostly checked by the compiler (`npx tsc --noEmit`): each
// `@ts-expect-error` line must stay an error, so an id of one kind cannot silently become
// acceptable where another is meant. The runtime assertions show the brands cost nothing.

function takesTxnId(id: TxnId): string {
  return id
}
function takesAccountId(id: AccountId): string {
  return id
}
function takesWalletId(id: WalletId): string {
  return id
}

describe('branded ids', () => {
  it('keep an id of one kind out of a parameter meant for another', () => {
    const account = asAccountId('acc_00000000000000000000000001')
    const wallet = asWalletId('wal_00000000000000000000000001')
    const txn = asTxnId('txn_00000000000000000000000001')
    // @ts-expect-error An account id is not a transaction id.
    takesTxnId(account)
    // @ts-expect-error A wallet id is not a transaction id.
    takesTxnId(wallet)
    // @ts-expect-error A transaction id is not an account id.
    takesAccountId(txn)
    // @ts-expect-error An account id is not a wallet id.
    takesWalletId(account)
    // @ts-expect-error Unchecked text must enter through a constructor.
    takesTxnId('txn_00000000000000000000000001')
    expect(takesTxnId(txn)).toBe('txn_00000000000000000000000001')
  })

  it('are still strings wherever a string is asked for', () => {
    const plain: string = asTxnId('txn_x')
    expect(plain).toBe('txn_x')
    expect(typeof asAccountId('acc_x')).toBe('string')
  })

  it('are made new with their prefix', () => {
    expect(newTxnId()).toMatch(/^txn_[0-9a-z]{25}$/)
    expect(newAccountId()).toMatch(/^acc_[0-9a-z]{25}$/)
    expect(newWalletId()).toMatch(/^wal_[0-9a-z]{25}$/)
  })
})
