import { AWAITS_APPROVAL, QUOTE_EXITS } from '../transactions/state-machine.js'
import type { KindDeclaration } from '../transactions/kinds.js'

/**
 * A Lightning receive: an invoice paid in bitcoin, into the BTC wallet or, converted at the quoted
 * rate, into another wallet of the account. It waits for the payer while the invoice is open.
 */
export const LN_RECEIVE = {
  kind: 'ln_receive',
  pairs: [
    {
      source: { method: 'lightning', ccys: ['BTC'], wallet: false },
      dest: { method: 'svcpay', ccys: 'any', wallet: true },
    },
  ],
  transitions: { quoted: ['srccreated', ...QUOTE_EXITS], srccreated: ['completed', 'expired'] },
  rail: 'lightning',
  direction: 'in',
  caps: { receiveMax: true, bitcoinSupply: false },
  destAmountFrom: null,
  approval: false,
  confirmationWaits: [],
  stuckWatch: true,
  payerWaits: ['srccreated'],
  reconcile: null,
} as const satisfies KindDeclaration

/**
 * A Lightning send from the BTC wallet; its amount may come from the invoice alone. Like an on-chain
 * send, it waits in `processing` for a second operator when above APPROVAL_THRESHOLD_BTC or held by a
 * review check (a hot-wallet cap, src/limits): one rule for every rail that sends bitcoin out. An
 * approval resumes its confirm from `processing` (the worker pays it, or an invoice of ours is settled
 * at once, or it fails as a confirm would); a rejection or expiry releases its hold.
 */
export const LN_SEND = {
  kind: 'ln_send',
  pairs: [
    {
      source: { method: 'svcpay', ccys: ['BTC'], wallet: false },
      dest: { method: 'lightning', ccys: ['BTC'], wallet: false },
    },
  ],
  transitions: {
    quoted: ['srccreated', 'completed', 'processing', ...QUOTE_EXITS],
    // An approved send resumes its confirm: paid by the worker, settled inside, or failed as there.
    processing: [...AWAITS_APPROVAL.processing, 'completed', 'failed'],
    srccreated: ['completed', 'failed', 'error'],
  },
  rail: 'lightning',
  direction: 'out',
  caps: { receiveMax: false, bitcoinSupply: true },
  destAmountFrom: 'destReq.reqDetails.paymentRequest',
  approval: true,
  confirmationWaits: [],
  stuckWatch: true,
  payerWaits: [],
  reconcile: { ccy: 'BTC', leaves: 'hold-less-fee' },
} as const satisfies KindDeclaration

export const LIGHTNING_KINDS = [LN_RECEIVE, LN_SEND] as const satisfies readonly KindDeclaration[]
