import { QUOTE_EXITS } from '../transactions/state-machine.js'
import type { KindDeclaration } from '../transactions/kinds.js'

/**
 * Dong paid in by bank transfer against a VietQR code (receive.ts), into the VND wallet or into the
 * BTC or USDT one with the dong converted at the quoted rate.
 */
export const VND_RECEIVE = {
  kind: 'vnd_receive',
  pairs: [
    {
      source: { method: 'vnd-instant', ccys: ['VND'], wallet: false },
      dest: { method: 'svcpay', ccys: ['VND', 'BTC', 'USDT'], wallet: true },
    },
  ],
  transitions: { quoted: ['srccreated', ...QUOTE_EXITS], srccreated: ['completed', 'expired'] },
  rail: 'bank',
  direction: 'in',
  caps: { receiveMax: false, bitcoinSupply: false },
  destAmountFrom: null,
  approval: false,
  confirmationWaits: [],
  // The stuck listing has never watched bank receives; adding them changes the admin API, so it
  // is left for its own change.
  stuckWatch: false,
  payerWaits: [],
  reconcile: null,
} as const satisfies KindDeclaration

export const PAYIN_KINDS = [VND_RECEIVE] as const satisfies readonly KindDeclaration[]
