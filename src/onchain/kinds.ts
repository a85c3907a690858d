import { AWAITS_APPROVAL, QUOTE_EXITS } from '../transactions/state-machine.js'
import type { KindDeclaration } from '../transactions/kinds.js'

/**
 * An on-chain receive to an address handed out for it: it waits for the payer while the address
 * is open (srcintent), then for confirmations (srccreated).
 */
export const ONCHAIN_RECEIVE = {
  kind: 'onchain_receive',
  pairs: [
    {
      source: { method: 'on-chain', ccys: ['BTC'], wallet: false },
      dest: { method: 'svcpay', ccys: ['BTC'], wallet: false },
    },
  ],
  transitions: {
    quoted: ['srcintent', ...QUOTE_EXITS],
    srcintent: ['srccreated', 'expired'],
    srccreated: ['completed'],
  },
  rail: 'onchain',
  direction: 'in',
  caps: { receiveMax: true, bitcoinSupply: false },
  destAmountFrom: null,
  approval: false,
  confirmationWaits: ['srccreated'],
  stuckWatch: true,
  payerWaits: ['srcintent'],
  reconcile: null,
} as const satisfies KindDeclaration

/** An on-chain send from the BTC wallet, over its approval threshold after a second operator. */
export const ONCHAIN_SEND = {
  kind: 'onchain_send',
  pairs: [
    {
      source: { method: 'svcpay', ccys: ['BTC'], wallet: false },
      dest: { method: 'on-chain', ccys: ['BTC'], wallet: false },
    },
  ],
  transitions: {
    quoted: ['srccreated', 'processing', ...QUOTE_EXITS],
    ...AWAITS_APPROVAL,
    srccreated: ['destsent', 'failed', 'error'],
    // failed: the transaction was refused on rebroadcast or conflicted; the hold, still open, is released.
    destsent: ['completed', 'failed', 'error'],
  },
  rail: 'onchain',
  direction: 'out',
  caps: { receiveMax: false, bitcoinSupply: true },
  destAmountFrom: null,
  approval: true,
  confirmationWaits: ['destsent'],
  stuckWatch: true,
  payerWaits: [],
  reconcile: { ccy: 'BTC', leaves: 'hold-less-fee' },
} as const satisfies KindDeclaration

/**
 * A deposit to an account's static address, created by the watcher when the money is seen: no
 * request makes one, so it has no method pair; it waits for confirmations.
 */
export const DEPOSIT = {
  kind: 'deposit',
  pairs: [],
  transitions: { srccreated: ['completed'] },
  rail: 'onchain',
  direction: 'in',
  caps: { receiveMax: false, bitcoinSupply: false },
  destAmountFrom: null,
  approval: false,
  confirmationWaits: ['srccreated'],
  stuckWatch: true,
  payerWaits: [],
  reconcile: null,
} as const satisfies KindDeclaration

export const ONCHAIN_KINDS = [
  ONCHAIN_RECEIVE,
  ONCHAIN_SEND,
  DEPOSIT,
] as const satisfies readonly KindDeclaration[]
