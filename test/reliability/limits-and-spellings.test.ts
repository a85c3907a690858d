import fc from 'fast-check'
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { p2pkh, p2sh, p2tr, p2wpkh } from '@scure/btc-signer'
import type { BTC_NETWORK } from '@scure/btc-signer/utils.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, type TestAccount } from '../helpers/harness.js'
import { MAX_MINOR, formatScaled } from '../../src/shared/amount.js'
import { precisionOf } from '../../src/shared/currency.js'
import { tronAddressFromPrivateKey } from '../../src/payouts/tron/address.js'
import { BTC_MAX_MONEY_SATS } from '../../src/transactions/amount-limits.js'

/**
 * Property-based limits and spellings (issue 16, defects 2 and 3), through the HTTP API on a real
 * database:
 * - amounts at, around and far beyond the per-side cap (10^17 minor units), the Bitcoin money supply
 *   and the receive maximum, in every flow that takes an amount: a quote is either refused with 400
 *   `invalid_amount` / `amount_below_minimum` naming a field, or stored with every amount (both sides,
 *   fees, the wallet's total) within the limits. Never a 5xx, never an impossible stored quote.
 * - every spelling of every address a flow takes: bech32 in lower or upper case is one address,
 *   stored in lower case; mixed case is refused with an issue that says so; base58 (Bitcoin and
 *   TRON) is accepted only exactly as encoded.
 */

// PROP_RUNS raises the runs per property for a longer search than CI needs.
const RUNS = Number(process.env.PROP_RUNS ?? 20)
const RECEIVE_MAX_SATS = 1000n * 100_000_000n
const REGTEST: BTC_NETWORK = { bech32: 'bcrt', pubKeyHash: 0x6f, scriptHash: 0xc4, wif: 0xef }

/** Minor units near the interesting edges, and far beyond them. */
const minorAmount = fc.oneof(
  fc.bigInt({ min: MAX_MINOR - 2_000n, max: MAX_MINOR + 2_000n }),
  fc.bigInt({ min: BTC_MAX_MONEY_SATS - 2_000n, max: BTC_MAX_MONEY_SATS + 2_000n }),
  fc.bigInt({ min: RECEIVE_MAX_SATS - 2_000n, max: RECEIVE_MAX_SATS + 2_000n }),
  fc.bigInt({ min: MAX_MINOR / 1000n, max: MAX_MINOR * 1000n }),
  fc.bigInt({ min: 1n, max: 10n ** 30n }),
  fc.constantFrom(
    MAX_MINOR,
    MAX_MINOR + 1n,
    BTC_MAX_MONEY_SATS,
    BTC_MAX_MONEY_SATS + 1n,
    2n ** 63n - 1n,
    2n ** 63n,
  ),
)

type Side = 'src' | 'dest'
interface AmountFlow {
  name: string
  /** The currency whose minor units `amtRequested` is written in, per side. */
  ccy: Record<Side, string>
  sides: Side[]
  body(side: Side, amount: string): Promise<Record<string, unknown>>
  /** Receives: at most RECEIVE_MAX_BTC of source. Bitcoin sends: at most the money supply. */
  limit?: 'receive' | 'btc_send'
}

const ALLOWED_FIELDS = new Set([
  'sourceReq.amtRequested',
  'destReq.amtRequested',
  'sourceReq.svcpayFees',
  'sourceReq.networkFees',
  'destReq.reqDetails.paymentRequest',
  'amtRequested',
])

/** Swap the case of the letters `mask` picks; base58 and bech32 text alike. */
function recase(text: string, mask: boolean[]): string {
  return [...text]
    .map((c, i) => (mask[i % mask.length] ? (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()) : c))
    .join('')
}
const isMixed = (text: string) => text !== text.toLowerCase() && text !== text.toUpperCase()
const secretKey = fc
  .uint8Array({ minLength: 32, maxLength: 32 })
  .filter((k) => secp256k1.utils.isValidSecretKey(k))
const caseMask = fc.array(fc.boolean(), { minLength: 1, maxLength: 64 })

describe('limits and spellings, property-based', () => {
  let h: Harness
  let a: TestAccount
  let payee: TestAccount
  beforeAll(async () => {
    h = await createHarness({ QUOTE_TTL_S: '600' })
    a = await h.createAccount({ name: 'Prober' })
    payee = await h.createAccount({ name: 'Payee' })
  })
  afterAll(async () => h?.close())

  const create = (body: unknown) => h.api('POST', '/api/v2/transaction', a.token, body)
  const stored = async (txnId: string) =>
    (
      await h.c.db.query<{
        src_amount: bigint
        src_fee: bigint
        src_network_fee: bigint
        dest_amount: bigint
        deduct_fees_from_dest: boolean
      }>(
        'SELECT src_amount, src_fee, src_network_fee, dest_amount, deduct_fees_from_dest FROM transactions WHERE id = $1',
        [txnId],
      )
    ).rows[0]!

  const KYC = { type: 'individual', details: { legalFullName: 'Tran Van A', countryCode: 'VN' } }
  const SOF = { purpose: 1, source: 1, relationship: 2 }
  const side = (
    ccy: string,
    method: string,
    amount: string | undefined,
    reqDetails: object = {},
    extra: object = {},
  ) => ({
    ccy,
    method,
    ...(amount === undefined ? {} : { amtRequested: amount }),
    reqDetails,
    ...extra,
  })
  const swapFlow = (src: string, dest: string): AmountFlow => ({
    name: `swap ${src}->${dest}`,
    ccy: { src, dest },
    sides: ['src', 'dest'],
    body: async (s, amt) => ({
      sourceReq: side(src, 'svcpay', s === 'src' ? amt : undefined),
      destReq: side(dest, 'svcpay', s === 'dest' ? amt : undefined),
    }),
  })
  const receiveFlow = (method: string): AmountFlow => ({
    name: `${method} receive`,
    ccy: { src: 'BTC', dest: 'BTC' },
    sides: ['src', 'dest'],
    limit: 'receive',
    body: async (s, amt) => ({
      sourceReq: side('BTC', method, s === 'src' ? amt : undefined),
      destReq: side('BTC', 'svcpay', s === 'dest' ? amt : undefined),
    }),
  })
  const FLOWS: AmountFlow[] = [
    swapFlow('BTC', 'USDT'),
    swapFlow('USDT', 'BTC'),
    swapFlow('BTC', 'VND'),
    swapFlow('VND', 'BTC'),
    swapFlow('CAD', 'VND'),
    receiveFlow('lightning'),
    receiveFlow('on-chain'),
    {
      name: 'lightning send (zero-amount invoice)',
      ccy: { src: 'BTC', dest: 'BTC' },
      sides: ['src', 'dest'],
      limit: 'btc_send',
      body: async (s, amt) => {
        const invoice = (await h.api('POST', '/sandbox/lightning/invoice', a.token, {})).body.paymentRequest
        return {
          sourceReq: side('BTC', 'svcpay', s === 'src' ? amt : undefined),
          destReq: side('BTC', 'lightning', s === 'dest' ? amt : undefined, { paymentRequest: invoice }),
        }
      },
    },
    {
      name: 'on-chain send',
      ccy: { src: 'BTC', dest: 'BTC' },
      sides: ['src', 'dest'],
      limit: 'btc_send',
      body: async (s, amt) => ({
        sourceReq: side('BTC', 'svcpay', s === 'src' ? amt : undefined),
        destReq: side('BTC', 'on-chain', s === 'dest' ? amt : undefined, {
          address: p2wpkh(secp256k1.getPublicKey(new Uint8Array(32).fill(3), true), REGTEST).address,
        }),
      }),
    },
    {
      name: 'tron payout',
      ccy: { src: 'USDT', dest: 'USDT' },
      sides: ['src', 'dest'],
      body: async (s, amt) => ({
        sourceReq: side('USDT', 'svcpay', s === 'src' ? amt : undefined),
        destReq: side('USDT', 'tron', s === 'dest' ? amt : undefined, {
          address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t',
        }),
      }),
    },
    ...['VND', 'BTC', 'USDT'].map((src): AmountFlow => ({
      name: `vnd payout from ${src}`,
      ccy: { src, dest: 'VND' },
      sides: ['src', 'dest'],
      body: async (s, amt) => ({
        sourceReq: side(src, 'svcpay', s === 'src' ? amt : undefined),
        destReq: side(
          'VND',
          'vnd-instant',
          s === 'dest' ? amt : undefined,
          { bankAcctNum: '0123456789', institutionCode: '970436' },
          { kyc: KYC },
        ),
        sourceOfFunds: SOF,
      }),
    })),
  ]

  it.each(FLOWS.map((f) => [f.name, f] as const))(
    'amounts at and beyond the limits: %s is refused with a field, or quoted within every limit',
    async (_name, flow) => {
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...flow.sides), minorAmount, async (s, minor) => {
          const amount = formatScaled(minor, precisionOf(flow.ccy[s]))
          const r = await create(await flow.body(s, amount))
          const what = `${flow.name} ${s}=${amount} -> ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`
          expect(r.status, what).toBeLessThan(500)
          if (r.status !== 200) {
            expect(r.status, what).toBe(400)
            expect(['invalid_amount', 'amount_below_minimum'], what).toContain(r.body.error)
            expect(ALLOWED_FIELDS.has(r.body.details?.[0]?.field), what).toBe(true)
            // Anything past the cap is refused, whichever side carried it.
            return
          }
          const t = await stored(r.body.txnId)
          const total = t.deduct_fees_from_dest ? t.src_amount : t.src_amount + t.src_fee + t.src_network_fee
          for (const v of [t.src_amount, t.src_fee, t.src_network_fee, t.dest_amount, total])
            expect(v <= MAX_MINOR, `${what}: ${v} over the cap`).toBe(true)
          if (flow.limit === 'receive') expect(t.src_amount <= RECEIVE_MAX_SATS, what).toBe(true)
          if (flow.limit === 'btc_send') expect(total <= BTC_MAX_MONEY_SATS, what).toBe(true)
          expect(minor <= MAX_MINOR, `${what}: a requested amount past the cap was quoted`).toBe(true)
          await h.api('PUT', `/api/v2/transaction/${r.body.txnId}/cancel`, a.token)
        }),
        { numRuns: RUNS },
      )
      const { rows } = await h.c.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM transactions
          WHERE src_amount > $1 OR dest_amount > $1 OR src_fee > $1 OR src_network_fee > $1
             OR (kind IN ('ln_receive', 'onchain_receive') AND src_amount > $2)`,
        [MAX_MINOR, RECEIVE_MAX_SATS],
      )
      expect(rows[0]!.n).toBe(0)
      await h.expectBooksBalanced()
    },
  )

  it('sandbox funding: any sequence of fundings is refused or credited, never past the cap', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(minorAmount, { minLength: 1, maxLength: 6 }), async (amounts) => {
        const acc = await h.createAccount({ name: 'Funded' })
        let balance = 0n
        for (const minor of amounts) {
          const amount = formatScaled(minor, 8)
          const r = await h.api('POST', '/sandbox/fund', acc.token, { ccy: 'BTC', amount })
          expect(r.status, `${amount} -> ${JSON.stringify(r.body)}`).toBeLessThan(500)
          if (balance + minor <= MAX_MINOR) {
            expect(r.status, amount).toBe(200)
            balance += minor
          } else {
            expect(r.status, amount).toBe(400)
            expect(r.body).toMatchObject({ error: 'invalid_amount', details: [{ field: 'amount' }] })
          }
        }
        const { rows } = await h.c.db.query<{ posted: bigint }>(
          `SELECT posted FROM ledger_accounts WHERE account_id = $1 AND ccy = 'BTC' AND kind = 'wallet'`,
          [acc.accountId],
        )
        expect(BigInt(rows[0]!.posted)).toBe(balance)
      }),
      { numRuns: Math.max(5, Math.floor(RUNS / 2)) },
    )
    await h.expectBooksBalanced()
  })

  describe('address spellings', () => {
    const onchainSend = (address: string) => ({
      sourceReq: side('BTC', 'svcpay', undefined),
      destReq: side('BTC', 'on-chain', '0.001', { address }),
    })
    const pub = (k: Uint8Array) => secp256k1.getPublicKey(k, true)
    const bech32Address = fc
      .tuple(secretKey, fc.boolean())
      .map(([k, taproot]) =>
        taproot ? p2tr(pub(k).subarray(1), undefined, REGTEST).address! : p2wpkh(pub(k), REGTEST).address!,
      )
    const base58Address = fc
      .tuple(secretKey, fc.boolean())
      .map(([k, script]) =>
        script ? p2sh(p2wpkh(pub(k), REGTEST), REGTEST).address! : p2pkh(pub(k), REGTEST).address!,
      )

    it('on-chain send: bech32 in either case is one address, stored lower; mixed case is refused as such', async () => {
      await fc.assert(
        fc.asyncProperty(
          bech32Address,
          caseMask,
          fc.constantFrom('lower', 'upper', 'mixed'),
          async (address, mask, how) => {
            const spelled =
              how === 'lower' ? address : how === 'upper' ? address.toUpperCase() : recase(address, mask)
            const r = await create(onchainSend(spelled))
            if (!isMixed(spelled)) {
              expect(r.status, `${spelled} ${JSON.stringify(r.body)}`).toBe(200)
              expect(r.body.destReq.reqDetails.address).toBe(address)
              const { rows } = await h.c.db.query<{ a: string }>(
                `SELECT dest_details->>'address' AS a FROM transactions WHERE id = $1`,
                [r.body.txnId],
              )
              expect(rows[0]!.a).toBe(address)
              await h.api('PUT', `/api/v2/transaction/${r.body.txnId}/cancel`, a.token)
            } else {
              expect(r.status, spelled).toBe(400)
              expect(r.body.error).toBe('invalid_address')
              expect(r.body.details[0].field).toBe('destReq.reqDetails.address')
              expect(r.body.details[0].issue).toContain('mixed case')
            }
          },
        ),
        { numRuns: RUNS },
      )
    })

    it('on-chain send: base58 is accepted only exactly as encoded', async () => {
      await fc.assert(
        fc.asyncProperty(base58Address, caseMask, async (address, mask) => {
          const exact = await create(onchainSend(address))
          expect(exact.status, JSON.stringify(exact.body)).toBe(200)
          expect(exact.body.destReq.reqDetails.address).toBe(address)
          await h.api('PUT', `/api/v2/transaction/${exact.body.txnId}/cancel`, a.token)
          for (const spelled of [address.toUpperCase(), address.toLowerCase(), recase(address, mask)]) {
            if (spelled === address) continue
            const r = await create(onchainSend(spelled))
            expect(r.status, spelled).toBe(400)
            expect(r.body).toMatchObject({
              error: 'invalid_address',
              details: [{ field: 'destReq.reqDetails.address' }],
            })
          }
        }),
        { numRuns: RUNS },
      )
    })

    it('sandbox outside payer: a payment to any accepted spelling of our address is indexed under the address itself', async () => {
      const ours = (await h.api('GET', '/api/v2/account/onchain-address', payee.token)).body
        .staticOnchainAddress as string
      await fc.assert(
        fc.asyncProperty(caseMask, fc.constantFrom('lower', 'upper', 'mixed'), async (mask, how) => {
          const spelled = how === 'lower' ? ours : how === 'upper' ? ours.toUpperCase() : recase(ours, mask)
          const r = await h.api('POST', '/sandbox/onchain/send', a.token, {
            address: spelled,
            amount: '0.00001',
          })
          if (isMixed(spelled)) {
            expect(r.status, spelled).toBe(400)
            expect(r.body.error).toBe('invalid_address')
            expect(r.body.details[0].issue).toContain('mixed case')
            return
          }
          expect(r.status, JSON.stringify(r.body)).toBe(200)
          const { rows } = await h.c.db.query<{ address: string }>(
            'SELECT address FROM sandbox_chain_outputs WHERE txid = $1',
            [r.body.txid],
          )
          expect(rows[0]!.address).toBe(ours)
        }),
        { numRuns: RUNS },
      )
    })

    it('tron payout: base58 is accepted only exactly as encoded', async () => {
      await fc.assert(
        fc.asyncProperty(secretKey, caseMask, async (k, mask) => {
          const address = tronAddressFromPrivateKey(k)
          const body = (to: string) => ({
            sourceReq: side('USDT', 'svcpay', undefined),
            destReq: side('USDT', 'tron', '10', { address: to }),
          })
          const exact = await create(body(address))
          expect(exact.status, JSON.stringify(exact.body)).toBe(200)
          expect(exact.body.destReq.reqDetails.address).toBe(address)
          await h.api('PUT', `/api/v2/transaction/${exact.body.txnId}/cancel`, a.token)
          for (const spelled of [address.toUpperCase(), address.toLowerCase(), recase(address, mask)]) {
            if (spelled === address) continue
            const r = await create(body(spelled))
            expect(r.status, spelled).toBe(400)
            expect(r.body).toMatchObject({
              error: 'invalid_address',
              details: [{ field: 'destReq.reqDetails.address' }],
            })
          }
        }),
        { numRuns: RUNS },
      )
    })

    it('lightning: an invoice in upper case is the same invoice (ours or outside); mixed case is refused', async () => {
      await fc.assert(
        fc.asyncProperty(
          caseMask,
          fc.constantFrom('lower', 'upper', 'mixed'),
          fc.boolean(),
          async (mask, how, internal) => {
            let invoice: string
            if (internal) {
              const q = await h.api('POST', '/api/v2/transaction', payee.token, {
                sourceReq: side('BTC', 'lightning', undefined),
                destReq: side('BTC', 'svcpay', '0.00002'),
              })
              const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, payee.token)
              invoice = c.body.sourceReq.reqDetails.paymentRequest
            } else {
              invoice = (await h.api('POST', '/sandbox/lightning/invoice', a.token, { amount: '0.00002' }))
                .body.paymentRequest
            }
            const spelled =
              how === 'lower' ? invoice : how === 'upper' ? invoice.toUpperCase() : recase(invoice, mask)
            const r = await create({
              sourceReq: side('BTC', 'svcpay', undefined),
              destReq: side('BTC', 'lightning', undefined, { paymentRequest: spelled }),
            })
            if (isMixed(spelled)) {
              expect(r.status, spelled).toBe(400)
              expect(r.body.error).toBe('invalid_payment_request')
              return
            }
            expect(r.status, JSON.stringify(r.body)).toBe(200)
            expect(r.body.destReq.reqDetails.paymentRequest).toBe(invoice)
            // An invoice of ours is recognised in either case: settled inside, no routing fee.
            if (internal) expect(r.body.sourceReq.networkFees).toBe(0)
            await h.api('PUT', `/api/v2/transaction/${r.body.txnId}/cancel`, a.token)
          },
        ),
        { numRuns: RUNS },
      )
      await h.expectBooksBalanced()
    })
  })
})
