import { QUOTE_EXITS } from '../transactions/state-machine.js'
import type { KindDeclaration } from '../transactions/kinds.js'

/** A swap between two wallets of one account, in two different currencies: no rail, one entry. */
export const SWAP = {
  kind: 'swap',
  pairs: [
    {
      source: { method: 'svcpay', ccys: 'any', wallet: true },
      dest: { method: 'svcpay', ccys: 'any', wallet: true },
      distinct: 'a swap needs two different currencies',
    },
  ],
  transitions: { quoted: ['completed', ...QUOTE_EXITS] },
  rail: null,
  direction: 'internal',
  caps: { receiveMax: false, bitcoinSupply: false },
  destAmountFrom: null,
  approval: false,
  confirmationWaits: [],
  stuckWatch: false,
  payerWaits: [],
  reconcile: null,
} as const satisfies KindDeclaration

export const SWAP_KINDS = [SWAP] as const satisfies readonly KindDeclaration[]
