import { encodeVietQr } from '../payins/vietqr.js'
import type { BitcoinPageView, VietQrPageView } from './render.js'

/**
 * Standard artefacts for the invoice page's tests. Nothing in the service imports this file.
 */

/**
 * BOLT11 example "Please send $3 for a cup of coffee to the same peer, within one minute" (2500u,
 * payment secret 0x11...), signed by the specification's example node key.
 */
export const BOLT11_COFFEE =
  'lnbc2500u1pvjluezsp5zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zygspp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypqdq5xysxxatsyp3k7enxv4jsxqzpu9qrsgquk0rl77nj30yxdy8j9vdx85fkpmdla2087ne0xh8nhedh8w27kyke0lp53ut353s06fv3qfegext0eh0ymjpf39tuven09sam30g4vgpfna3rh'

/** BIP84 test vector: the first receiving address of the "abandon ... about" mnemonic. */
export const BIP84_ADDRESS = 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu'

export const NOW_MS = 1_750_000_000_000

export function lightningView(overrides: Partial<BitcoinPageView> = {}): BitcoinPageView {
  return {
    pageId: 'pg_7mQ2xV9kLr4TzB8nW1cY5e',
    kind: 'lightning',
    merchantName: 'Cà phê Sài Gòn',
    amountBtc: '0.0025',
    amountSats: '250000',
    fiat: { ccy: 'VND', amount: '6250000' },
    paymentUri: `lightning:${BOLT11_COFFEE}`,
    paymentText: BOLT11_COFFEE,
    expiresAtMs: NOW_MS + 15 * 60_000,
    state: 'awaiting_payment',
    ...overrides,
  }
}

export function onchainView(overrides: Partial<BitcoinPageView> = {}): BitcoinPageView {
  return {
    pageId: 'pg_3Hf8sK2pQw6RmX0vN4bJ7a',
    kind: 'onchain',
    merchantName: 'Acme Hardware',
    amountBtc: '0.0025',
    amountSats: '250000',
    fiat: { ccy: 'USD', amount: '245.31' },
    paymentUri: `bitcoin:${BIP84_ADDRESS}?amount=0.0025`,
    paymentText: BIP84_ADDRESS,
    expiresAtMs: NOW_MS + 24 * 3_600_000,
    state: 'awaiting_payment',
    ...overrides,
  }
}

/** A VND receive at Vietcombank for 500,000 đồng; its QR payload follows the details given. */
export function vietQrView(overrides: Partial<Omit<VietQrPageView, 'vietQr'>> = {}): VietQrPageView {
  const view = {
    pageId: 'pg_9Vn4qR2tLx8KcW3mZ6bH1d',
    kind: 'vietqr' as const,
    merchantName: 'Cà phê Sài Gòn',
    bankBin: '970436',
    bankName: 'Vietcombank',
    accountNumber: '0011001932418',
    accountName: 'CONG TY TNHH SVCPAY',
    amountVnd: '500000',
    memo: 'SVCPAY 7F3KQ2',
    expiresAtMs: NOW_MS + 15 * 60_000,
    state: 'awaiting_payment' as const,
    ...overrides,
  }
  const vietQr = encodeVietQr({
    bankBin: view.bankBin,
    accountNumber: view.accountNumber,
    amount: BigInt(view.amountVnd),
    memo: view.memo,
  })
  return { ...view, vietQr }
}
