import { AWAITS_APPROVAL, QUOTE_EXITS } from '../transactions/state-machine.js'
import type { KindDeclaration } from '../transactions/kinds.js'

/**
 * Both payouts' lifecycle (lifecycle.ts): confirmed, or held for approval, then submitted, and
 * failed, rejected by the partner or ended in error from either step.
 */
const PAYOUT_TRANSITIONS = {
  quoted: ['srccreated', 'processing', ...QUOTE_EXITS],
  ...AWAITS_APPROVAL,
  srccreated: ['destsent', 'failed', 'rejected', 'error'],
  destsent: ['completed', 'failed', 'rejected', 'error'],
} as const satisfies KindDeclaration['transitions']

/** A TRON USDT payout from the USDT wallet. */
export const TRON_PAYOUT = {
  kind: 'tron_payout',
  pairs: [
    {
      source: { method: 'svcpay', ccys: ['USDT'], wallet: false },
      dest: { method: 'tron', ccys: ['USDT'], wallet: false },
    },
  ],
  transitions: PAYOUT_TRANSITIONS,
  rail: 'tron',
  direction: 'out',
  caps: { receiveMax: false, bitcoinSupply: false },
  destAmountFrom: null,
  approval: true,
  confirmationWaits: [],
  stuckWatch: true,
  payerWaits: [],
  reconcile: { ccy: 'USDT', leaves: 'destination' },
} as const satisfies KindDeclaration

/**
 * A USDT payout over Ethereum (Tether's ERC-20 contract) from the USDT wallet (issue 33): the TRON
 * payout's lifecycle, its own rail, whose fee the hot wallet pays in ETH.
 */
export const ETH_PAYOUT = {
  kind: 'eth_payout',
  pairs: [
    {
      source: { method: 'svcpay', ccys: ['USDT'], wallet: false },
      dest: { method: 'eth', ccys: ['USDT'], wallet: false },
    },
  ],
  transitions: PAYOUT_TRANSITIONS,
  rail: 'ethereum',
  direction: 'out',
  caps: { receiveMax: false, bitcoinSupply: false },
  destAmountFrom: null,
  approval: true,
  confirmationWaits: [],
  stuckWatch: true,
  payerWaits: [],
  reconcile: { ccy: 'USDT', leaves: 'destination' },
} as const satisfies KindDeclaration

/** A VND payout to a bank account, funded from the VND wallet or from BTC or USDT at the quoted rate. */
export const VND_PAYOUT = {
  kind: 'vnd_payout',
  pairs: [
    {
      source: {
        method: 'svcpay',
        ccys: ['VND', 'BTC', 'USDT'],
        wallet: true,
        refusal: 'VND payouts are funded from VND, BTC or USDT',
      },
      dest: { method: 'vnd-instant', ccys: ['VND'], wallet: false, refusal: 'vnd-instant pays out VND' },
    },
  ],
  transitions: PAYOUT_TRANSITIONS,
  rail: 'bank',
  direction: 'out',
  caps: { receiveMax: false, bitcoinSupply: false },
  destAmountFrom: null,
  approval: true,
  confirmationWaits: [],
  stuckWatch: true,
  payerWaits: [],
  reconcile: { ccy: 'VND', leaves: 'destination' },
} as const satisfies KindDeclaration

/**
 * Money of a completed bank payout that the beneficiary's bank sent back, returned to the wallet it
 * came from; created completed, once per payout (returns.ts), so it has no transitions and nothing
 * to be stuck in.
 */
export const PAYOUT_RETURN = {
  kind: 'payout_return',
  pairs: [],
  transitions: {},
  rail: 'bank',
  direction: 'in',
  caps: { receiveMax: false, bitcoinSupply: false },
  destAmountFrom: null,
  approval: false,
  confirmationWaits: [],
  stuckWatch: false,
  payerWaits: [],
  reconcile: null,
} as const satisfies KindDeclaration

/** The kinds a payout's lifecycle (lifecycle.ts) drives. */
export type PayoutKind =
  (typeof TRON_PAYOUT)['kind'] | (typeof VND_PAYOUT)['kind'] | (typeof ETH_PAYOUT)['kind']

export const PAYOUT_KINDS = [
  TRON_PAYOUT,
  VND_PAYOUT,
  PAYOUT_RETURN,
  ETH_PAYOUT,
] as const satisfies readonly KindDeclaration[]
