import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import bolt11 from 'bolt11'
import { bech32 } from '@scure/base'
import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import { createHarness, type Harness, type TestAccount } from '../../test/helpers/harness.js'
import { LNURL_STANDIN_HOST, startLnurlStandIn, type LnurlStandIn } from '../../test/standins/lnurl-server.js'
import { startLndStandIn, type LndStandIn } from '../../test/standins/lnd.js'
import { runDueTransactions } from '../transactions/worker.js'
import type { LnurlClientOptions } from './lnurl-client.js'

/** The `bolt11` package's description of regtest. */
const REGTEST = { bech32: 'bcrt', pubKeyHash: 0x6f, scriptHash: 0xc4, validWitnessVersions: [0, 1] }

const send = (reqDetails: Record<string, unknown>, amt: unknown = '0.0001') => ({
  sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
  destReq: {
    ccy: 'BTC',
    method: 'lightning',
    ...(amt === null ? {} : { amtRequested: amt }),
    reqDetails,
  },
})
const lnurlOf = (url: string) => bech32.encode('lnurl', bech32.toWords(utf8ToBytes(url)), 2048)

describe('Lightning send to a Lightning Address or LNURL, against an HTTPS stand-in of the payee', () => {
  let h: Harness
  let alice: TestAccount
  let payee: LnurlStandIn
  /** The test's DNS: the stand-in's name and a name of a private network. */
  const zone: Record<string, string> = { [LNURL_STANDIN_HOST]: '127.0.0.1', 'intranet.example': '10.1.2.3' }
  /** Every name the client resolved: once per request, the socket then pinned to the answer. */
  const resolved: string[] = []
  const resolveHost = async (name: string) => {
    resolved.push(name)
    const address = zone[name]
    if (address === undefined) throw new Error('ENOTFOUND')
    return [{ address, family: 4 as const }]
  }
  /** The client as tests run it: loopback allowed for the stand-in, its certificate trusted. */
  let testClient: LnurlClientOptions

  beforeAll(async () => {
    h = await createHarness()
    alice = await h.createAccount({ name: 'Alice Shop' })
    await h.fund(alice.accountId, 'BTC', '0.01')
    const sandbox = h.c.bitcoin.rails.sandbox.lightning!
    payee = await startLnurlStandIn({
      issueInvoice: async (amountMsat, descriptionHash) =>
        (await sandbox.createOutsideInvoice({ amountMsat, outcome: 'succeed', descriptionHash }))
          .paymentRequest,
    })
    testClient = {
      timeoutMs: 2_000,
      allowLoopback: true,
      resolveHost,
      ca: payee.caPem,
      defaultPort: payee.port,
    }
  })
  afterAll(async () => {
    await payee?.close()
    await h?.close()
  })
  beforeEach(() => {
    payee.misbehave = 'none'
    payee.seen = []
    resolved.length = 0
    // The flows hold this deps object, so the client options set here reach the quote.
    h.c.bitcoin.lnurl!.client = testClient
  })

  const btc = async () =>
    (await h.api('GET', `/api/v2/account/${alice.accountId}/wallet/`, alice.token)).body.data.find(
      (w: any) => w.ccy === 'BTC',
    )
  const txnCount = async () =>
    Number(
      (
        await h.c.db.query<{ n: string }>(
          'SELECT count(*)::text AS n FROM transactions WHERE account_id = $1',
          [alice.accountId],
        )
      ).rows[0]!.n,
    )
  /** Quotes `body`, expects the refusal, and that nothing was created, held or paid. */
  const refused = async (body: unknown, status: number, error: string, field: string, issue: RegExp) => {
    const paidCount = async () =>
      (await h.c.db.query('SELECT payment_hash FROM sandbox_ln_payments')).rows.length
    const [count, before, paidBefore] = [await txnCount(), await btc(), await paidCount()]
    const r = await h.api('POST', '/api/v2/transaction', alice.token, body)
    expect(r.status).toBe(status)
    expect(r.body.error).toBe(error)
    expect(r.body.details).toEqual([{ field, issue: expect.stringMatching(issue) }])
    expect(await txnCount()).toBe(count)
    expect((await btc()).availableBalance).toBe(before.availableBalance)
    expect(await paidCount()).toBe(paidBefore)
    return r.body
  }
  const ADDRESS = 'destReq.reqDetails.lnAddress'

  it("pays an outside address: the quote shows the payee's invoice and fees, confirm pays it, books balance", async () => {
    const before = await btc()
    const q = await h.api(
      'POST',
      '/api/v2/transaction',
      alice.token,
      send({ lnAddress: 'Alice@Wallet.Example' }),
    )
    expect(q.status).toBe(200)
    const t = q.body
    // LUD-16 then LUD-06: the well-known URL, then the callback with the amount in msat appended
    // to the callback's own query with `&`.
    expect(payee.seen).toEqual(['/.well-known/lnurlp/alice', '/lnurlp/alice/callback?k=1&amount=10000000'])
    // wallet.example exists only in the test's resolver: each request connected to the address that
    // resolver gave, checked once, with no second lookup.
    expect(resolved).toEqual([LNURL_STANDIN_HOST, LNURL_STANDIN_HOST])
    expect(t.destReq.reqDetails.lnAddress).toBe(`alice@${LNURL_STANDIN_HOST}`)
    const pr = t.destReq.reqDetails.paymentRequest
    const decoded = bolt11.decode(pr, REGTEST)
    expect(decoded.millisatoshis).toBe('10000000')
    expect(decoded.tagsObject.purpose_commit_hash).toBe(
      bytesToHex(sha256(utf8ToBytes(payee.metadataOf('alice')))),
    )
    expect(decoded.payeeNodeKey).toBe(h.c.bitcoin.rails.sandbox.lightning!.outsideNodePublicKey)
    expect(t.destReq.amtRequested).toBe(0.0001)
    // Routing-fee limit: the larger of 10 sats and 0.5% (50 sats); service fee 10 bps (10 sats).
    expect(t.sourceReq.networkFees).toBe(0.0000005)
    expect(t.sourceReq.svcpayFees).toBe(0.0000001)

    const c = await h.api('PUT', `/api/v2/transaction/${t.txnId}/confirm`, alice.token)
    expect(c.body.txnState).toBe('srccreated')
    await runDueTransactions({ db: h.c.db, transactions: h.c.transactions, log: console })
    const done = (await h.api('GET', `/api/v2/transaction/${t.txnId}`, alice.token)).body
    expect(done.txnState).toBe('completed')
    expect(done.destReq.amtSettled).toBe(0.0001)
    expect(done.destReq.reqDetails.preimage).toMatch(/^[0-9a-f]{64}$/)
    expect(done.destReq.reqDetails.lnAddress).toBe(`alice@${LNURL_STANDIN_HOST}`)
    // The sandbox route charged 1 sat + 0.1% (10 sats); the rest of the limit came back.
    expect((await btc()).amount).toBeCloseTo(before.amount - 0.0001 - 0.0000001 - 0.00000011, 8)
    await h.expectBooksBalanced()
  })

  it('pays an LNURL, bech32 (LUD-01) or lnurlp:// (LUD-17), passing a comment (LUD-12)', async () => {
    const url = `${payee.origin}/.well-known/lnurlp/bob`
    const q = await h.api(
      'POST',
      '/api/v2/transaction',
      alice.token,
      send({ lnurl: `lightning:${lnurlOf(url).toUpperCase()}`, comment: 'thanks & bye' }, '0.00002'),
    )
    expect(q.status).toBe(200)
    expect(payee.seen).toEqual([
      '/.well-known/lnurlp/bob',
      '/lnurlp/bob/callback?k=1&amount=2000000&comment=thanks%20%26%20bye',
    ])
    expect(q.body.destReq.reqDetails).toMatchObject({
      lnurl: lnurlOf(url).toUpperCase(),
      comment: 'thanks & bye',
    })
    expect(bolt11.decode(q.body.destReq.reqDetails.paymentRequest, REGTEST).satoshis).toBe(2000)

    const p = await h.api(
      'POST',
      '/api/v2/transaction',
      alice.token,
      send({ lnurl: url.replace('https', 'lnurlp') }),
    )
    expect(p.status).toBe(200)
    expect(p.body.destReq.reqDetails.lnurl).toBe(url.replace('https', 'lnurlp'))
  })

  it('refuses an invoice for another amount, or for other metadata, with nothing held or paid (LUD-06 step 6)', async () => {
    payee.misbehave = 'wrong-amount'
    await refused(
      send({ lnAddress: `alice@${LNURL_STANDIN_HOST}` }),
      400,
      'invalid_payment_request',
      ADDRESS,
      /not for the amount asked/,
    )
    payee.misbehave = 'wrong-hash'
    await refused(
      send({ lnAddress: `alice@${LNURL_STANDIN_HOST}` }),
      400,
      'invalid_payment_request',
      ADDRESS,
      /does not describe the payee's metadata/,
    )
  })

  it("passes on the payee's ERROR reason, cleaned; an unknown user is one too", async () => {
    payee.misbehave = 'error'
    const body = await refused(
      send({ lnAddress: `alice@${LNURL_STANDIN_HOST}` }),
      400,
      'invalid_payment_request',
      ADDRESS,
      /refused/,
    )
    expect(body.details[0].issue).toBe("the payee's service refused: Payee  is on holiday")
    payee.misbehave = 'none'
    await refused(
      send({ lnAddress: `carol@${LNURL_STANDIN_HOST}` }),
      400,
      'invalid_payment_request',
      ADDRESS,
      /refused: Unknown user$/,
    )
  })

  it('refuses an answer too large, too slow, redirected or not JSON, with a clear error', async () => {
    const to = send({ lnAddress: `alice@${LNURL_STANDIN_HOST}` })
    payee.misbehave = 'oversize'
    await refused(to, 400, 'invalid_payment_request', ADDRESS, /more than 65536 bytes/)
    payee.misbehave = 'redirect'
    await refused(
      to,
      400,
      'invalid_payment_request',
      ADDRESS,
      /redirected \(HTTP 302\); redirects are not followed/,
    )
    payee.misbehave = 'not-json'
    await refused(to, 400, 'invalid_payment_request', ADDRESS, /answered text\/html, not JSON/)
    payee.misbehave = 'slow'
    h.c.bitcoin.lnurl!.client = { ...testClient, timeoutMs: 300 }
    await refused(to, 503, 'service_unavailable', ADDRESS, /did not answer within 300 ms/)
  })

  it('refuses private addresses with the production guard, and a private callback whatever the guard', async () => {
    h.c.bitcoin.lnurl!.client = { ...testClient, allowLoopback: false }
    // A public-looking name that resolves to 127.0.0.1, one in a private range, a literal, a loopback
    // name (plain `localhost` is this service's own domain in tests) and a metadata host.
    await refused(
      send({ lnAddress: `alice@${LNURL_STANDIN_HOST}` }),
      400,
      'invalid_payment_request',
      ADDRESS,
      /resolves to a private or local address/,
    )
    await refused(
      send({ lnAddress: 'alice@intranet.example' }),
      400,
      'invalid_payment_request',
      ADDRESS,
      /resolves to a private/,
    )
    await refused(
      send({ lnAddress: 'alice@10.0.0.1' }),
      400,
      'invalid_payment_request',
      ADDRESS,
      /must not point at a private/,
    )
    await refused(
      send({ lnAddress: 'alice@pay.localhost' }),
      400,
      'invalid_payment_request',
      ADDRESS,
      /must not name a local/,
    )
    await refused(
      send({ lnAddress: 'alice@metadata.google.internal' }),
      400,
      'invalid_payment_request',
      ADDRESS,
      /must not name a local, private-use or cloud metadata host/,
    )
    expect(payee.seen).toEqual([])
    h.c.bitcoin.lnurl!.client = testClient
    payee.misbehave = 'private-callback'
    await refused(
      send({ lnAddress: `alice@${LNURL_STANDIN_HOST}` }),
      400,
      'invalid_payment_request',
      ADDRESS,
      /must not point at a private/,
    )
  })

  it('refuses http, malformed names, two destinations, no amount and a comment the payee does not take', async () => {
    const http = lnurlOf(`http://${LNURL_STANDIN_HOST}/.well-known/lnurlp/alice`)
    await refused(
      send({ lnurl: http }),
      400,
      'invalid_payment_request',
      'destReq.reqDetails.lnurl',
      /must lead to an https URL/,
    )
    await refused(
      send({ lnurl: 'lnurl1notbech32' }),
      400,
      'invalid_payment_request',
      'destReq.reqDetails.lnurl',
      /not valid bech32/,
    )
    await refused(send({ lnAddress: 'alice' }), 400, 'invalid_payment_request', ADDRESS, /before @/)
    await refused(
      send({ lnAddress: 'al ice@wallet.example' }),
      400,
      'invalid_payment_request',
      ADDRESS,
      /before @/,
    )
    await refused(
      send({ lnAddress: 'alice@wallet..example' }),
      400,
      'invalid_payment_request',
      ADDRESS,
      /domain/,
    )
    await refused(
      send({ lnAddress: `${'a'.repeat(400)}@x.example` }),
      400,
      'invalid_payment_request',
      ADDRESS,
      /at most 320/,
    )
    await refused(
      send({ paymentRequest: 'lnbcrt1', lnAddress: `alice@${LNURL_STANDIN_HOST}` }),
      400,
      'invalid_request',
      ADDRESS,
      /exactly one of/,
    )
    await refused(
      send({ lnAddress: `alice@${LNURL_STANDIN_HOST}` }, null),
      400,
      'invalid_payment_request',
      'destReq.amtRequested',
      /is required/,
    )
    await refused(
      send({ lnAddress: `alice@${LNURL_STANDIN_HOST}` }, '0.00000000'),
      400,
      'invalid_amount',
      'destReq.amtRequested',
      /./,
    )
    await refused(
      send({ paymentRequest: 'lnbcrt1', comment: 'hi' }),
      400,
      'invalid_request',
      'destReq.reqDetails.comment',
      /goes only with lnAddress or lnurl/,
    )
    await refused(
      { ...send({ lnAddress: `alice@${LNURL_STANDIN_HOST}` }), deductNetworkFeesFromDest: true },
      400,
      'invalid_request',
      'deductNetworkFeesFromDest',
      /address or an LNURL/,
    )
    expect(payee.seen).toEqual([])
    await refused(
      send({ lnAddress: `alice@${LNURL_STANDIN_HOST}`, comment: 'x'.repeat(33) }),
      400,
      'invalid_request',
      'destReq.reqDetails.comment',
      /at most 32 characters/,
    )
    await refused(
      send({ lnAddress: `alice@${LNURL_STANDIN_HOST}` }, '2'),
      400,
      'invalid_amount',
      'destReq.amtRequested',
      /accepts 1000 to 100000000000 millisatoshis/,
    )
  })

  it('asks an LNURL of its own host and port inside the service, never over HTTP; another port is not ours (issue 29.8)', async () => {
    // PUBLIC_BASE_URL is http://localhost:8080 in tests: no address is advertised (LUD-16 has no
    // port), only the LNURL of the well-known URL, which is http. No address of ours exists yet.
    const base = h.c.config.publicBaseUrl
    const bech32Ours = lnurlOf(`${base}/.well-known/lnurlp/bob`)
    const lud17Ours = `${base.replace(/^http/, 'lnurlp')}/.well-known/lnurlp/bob`
    for (const lnurl of [bech32Ours, bech32Ours.toUpperCase(), lud17Ours]) {
      await refused(
        send({ lnurl }),
        400,
        'invalid_payment_request',
        'destReq.reqDetails.lnurl',
        /refused: No Lightning Address bob\b/,
      )
    }
    expect(payee.seen).toEqual([])
    expect(resolved).toEqual([])
    // The same host on another port, or the host without the port as an address, is somebody
    // else's: asked over HTTP like any payee (here a name the test's resolver does not know).
    for (const reqDetails of [
      { lnurl: lnurlOf('https://localhost:9999/.well-known/lnurlp/bob') },
      { lnAddress: 'bob@localhost' },
    ]) {
      const field = 'lnAddress' in reqDetails ? ADDRESS : 'destReq.reqDetails.lnurl'
      await refused(send(reqDetails), 503, 'service_unavailable', field, /./)
    }
    expect(resolved).toEqual(['localhost', 'localhost'])
    // http is taken only for this service's own host: another one is still refused.
    await refused(
      send({ lnurl: lnurlOf('http://localhost:9999/.well-known/lnurlp/bob') }),
      400,
      'invalid_payment_request',
      'destReq.reqDetails.lnurl',
      /must lead to an https URL/,
    )
  })

  it('settles a send to the LNURL this service advertises inside the books, without HTTP (issue 29.8)', async () => {
    const bob = await h.createAccount({ name: 'Bob' })
    const put = await h.api('PUT', `/api/v2/account/${bob.accountId}/lightning-address`, bob.token, {
      username: 'bob',
      creditCcy: 'BTC',
    })
    expect(put.status).toBe(200)
    // With the default PUBLIC_BASE_URL (http, a port) the service advertises the LNURL alone.
    expect(put.body.data.address).toBeNull()
    const q = await h.api('POST', '/api/v2/transaction', alice.token, send({ lnurl: put.body.data.lnurl }))
    expect(q.status).toBe(200)
    expect(q.body.sourceReq.networkFees).toBe(0)
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, alice.token)
    expect(c.body.txnState).toBe('completed')
    expect(c.body.destReq.reqDetails.internal).toBe(true)
    expect(payee.seen).toEqual([])
    // Bob's address issued the invoice, and his receive was completed by Alice's confirm.
    const { rows } = await h.c.db.query<{ id: string }>(
      `SELECT id FROM transactions WHERE account_id = $1 AND kind = 'ln_receive'`,
      [bob.accountId],
    )
    expect(rows).toHaveLength(1)
    const receive = (await h.api('GET', `/api/v2/transaction/${rows[0]!.id}`, bob.token)).body
    expect(receive.txnState).toBe('completed')
    expect(receive.sourceReq.amtSettled).toBe(c.body.destReq.amtRequested)
    const wallet = (await h.api('GET', `/api/v2/account/${bob.accountId}/wallet/`, bob.token)).body.data.find(
      (w: any) => w.ccy === 'BTC',
    )
    expect(wallet.amount).toBe(receive.destReq.amtSettled)
    await h.expectBooksBalanced()
  })
})

describe('Lightning send to a Lightning Address through LND', () => {
  let n: LndStandIn
  let h: Harness
  let payee: LnurlStandIn
  beforeAll(async () => {
    n = await startLndStandIn()
    h = await createHarness({
      LIGHTNING: 'lnd',
      LND_REST_URL: n.url,
      LND_MACAROON_HEX: n.macaroonHex,
      LND_TLS_CERT_PATH: n.certPath,
      LND_TIMEOUT_MS: '1000',
    })
    // The payee's invoices are invoices of the LND stand-in's outside world, which its node can pay.
    payee = await startLnurlStandIn({
      issueInvoice: async (amountMsat, descriptionHash) =>
        n.outsideInvoice({ amountMsat, descriptionHash }).paymentRequest,
    })
    h.c.bitcoin.lnurl!.client = {
      timeoutMs: 2_000,
      allowLoopback: true,
      resolveHost: async () => [{ address: '127.0.0.1', family: 4 }],
      ca: payee.caPem,
      defaultPort: payee.port,
    }
  })
  afterAll(async () => {
    await payee?.close()
    await h?.close()
    await n?.close()
  })

  it("pays the payee's invoice through the node, for the amount asked", async () => {
    const alice = await h.createAccount({ name: 'Alice' })
    await h.fund(alice.accountId, 'BTC', '0.01')
    const q = await h.api(
      'POST',
      '/api/v2/transaction',
      alice.token,
      send({ lnAddress: `bob@${LNURL_STANDIN_HOST}` }, '0.0002'),
    )
    expect(q.status).toBe(200)
    await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, alice.token)
    await runDueTransactions({ db: h.c.db, transactions: h.c.transactions, log: console })
    const done = (await h.api('GET', `/api/v2/transaction/${q.body.txnId}`, alice.token)).body
    expect(done.txnState).toBe('completed')
    const hash = bolt11.decode(q.body.destReq.reqDetails.paymentRequest, REGTEST).tagsObject.payment_hash!
    expect(n.payments.get(hash)).toMatchObject({ status: 'SUCCEEDED', valueMsat: 20_000_000n })
    await h.expectBooksBalanced()
  })
})

describe('Lightning send to an address of this service: the payee is touched only at confirm (issue 28.10)', () => {
  const BASE = 'https://pay.example.com'
  let h: Harness
  beforeAll(async () => {
    h = await createHarness({ PUBLIC_BASE_URL: BASE })
  })
  afterAll(async () => h?.close())

  const txnsOf = async (a: TestAccount) =>
    (await h.c.db.query('SELECT id FROM transactions WHERE account_id = $1', [a.accountId])).rows.length
  const eventsOf = async (a: TestAccount) =>
    (
      await h.c.db.query(
        'SELECT 1 FROM events e JOIN transactions t ON t.id = e.txn_id WHERE t.account_id = $1',
        [a.accountId],
      )
    ).rows.length

  it("quotes create nothing in the payee's account; the confirm creates the receive and settles it", async () => {
    const payer = await h.createAccount({ name: 'Payer' })
    await h.fund(payer.accountId, 'BTC', '0.01')
    const victim = await h.createAccount({ name: 'Victim' })
    const put = await h.api('PUT', `/api/v2/account/${victim.accountId}/lightning-address`, victim.token, {
      username: 'victim',
      creditCcy: 'BTC',
    })
    expect(put.status).toBe(200)
    const quotes = []
    for (let i = 0; i < 5; i++) {
      const q = await h.api(
        'POST',
        '/api/v2/transaction',
        payer.token,
        send({ lnAddress: 'victim@pay.example.com', comment: `spam ${i}` }, '0.00002'),
      )
      expect(q.status).toBe(200)
      expect(q.body.sourceReq.networkFees).toBe(0)
      expect(q.body.destReq.reqDetails).toMatchObject({
        lnAddress: 'victim@pay.example.com',
        comment: `spam ${i}`,
      })
      quotes.push(q.body)
    }
    // Not one receive, invoice or event in the payee's account for a quote.
    expect(await txnsOf(victim)).toBe(0)
    expect(await eventsOf(victim)).toBe(0)

    const c = await h.api('PUT', `/api/v2/transaction/${quotes[0].txnId}/confirm`, payer.token)
    expect(c.body.txnState).toBe('completed')
    expect(c.body.destReq.reqDetails.internal).toBe(true)
    expect(typeof c.body.destReq.reqDetails.paymentRequest).toBe('string')
    const { rows } = await h.c.db.query<{ id: string }>(
      `SELECT id FROM transactions WHERE account_id = $1 AND kind = 'ln_receive'`,
      [victim.accountId],
    )
    expect(rows).toHaveLength(1)
    const receive = (await h.api('GET', `/api/v2/transaction/${rows[0]!.id}`, victim.token)).body
    expect(receive.txnState).toBe('completed')
    expect(receive.sourceReq.reqDetails.comment).toBe('spam 0')
    expect(receive.sourceReq.amtSettled).toBe(0.00002)
    await h.expectBooksBalanced()
  })

  it('a send whose funds came after the quote is settled by the worker; a released address refuses the confirm', async () => {
    const payer = await h.createAccount({ name: 'Late payer' })
    const payee = await h.createAccount({ name: 'Payee' })
    const path = `/api/v2/account/${payee.accountId}/lightning-address`
    await h.api('PUT', path, payee.token, { username: 'payee', creditCcy: 'BTC' })
    const body = send({ lnAddress: 'payee@pay.example.com' }, '0.00003')
    // Quoted with an empty wallet: no hold, so the confirm does not ask the address yet.
    const late = (await h.api('POST', '/api/v2/transaction', payer.token, body)).body
    await h.fund(payer.accountId, 'BTC', '0.001')
    const c = await h.api('PUT', `/api/v2/transaction/${late.txnId}/confirm`, payer.token)
    expect(c.body.txnState).toBe('srccreated')
    expect(await txnsOf(payee)).toBe(0)
    await runDueTransactions({ db: h.c.db, transactions: h.c.transactions, log: console })
    const done = (await h.api('GET', `/api/v2/transaction/${late.txnId}`, payer.token)).body
    expect(done.txnState).toBe('completed')
    expect(done.destReq.reqDetails.internal).toBe(true)
    expect(await txnsOf(payee)).toBe(1)

    // The address given up between quote and confirm: the confirm is refused and changes nothing.
    const q = (await h.api('POST', '/api/v2/transaction', payer.token, body)).body
    expect((await h.api('DELETE', path, payee.token)).status).toBe(204)
    const refused = await h.api('PUT', `/api/v2/transaction/${q.txnId}/confirm`, payer.token)
    expect(refused.status).toBe(400)
    expect(refused.body.error).toBe('invalid_payment_request')
    expect((await h.api('GET', `/api/v2/transaction/${q.txnId}`, payer.token)).body.txnState).toBe('quoted')
    expect(await txnsOf(payee)).toBe(1)
    await h.expectBooksBalanced()
  })

  it('one send gets one receive in the payee account, however often it is confirmed at once', async () => {
    const payer = await h.createAccount({ name: 'Eager payer' })
    await h.fund(payer.accountId, 'BTC', '0.01')
    const payee = await h.createAccount({ name: 'Eager payee' })
    const path = `/api/v2/account/${payee.accountId}/lightning-address`
    await h.api('PUT', path, payee.token, { username: 'eager', creditCcy: 'BTC' })
    const q = (
      await h.api(
        'POST',
        '/api/v2/transaction',
        payer.token,
        send({ lnAddress: 'eager@pay.example.com' }, '0.00004'),
      )
    ).body
    const confirms = await Promise.all(
      Array.from({ length: 4 }, () => h.api('PUT', `/api/v2/transaction/${q.txnId}/confirm`, payer.token)),
    )
    expect(confirms.filter((c) => c.status === 200).length).toBeGreaterThanOrEqual(1)
    for (const c of confirms) if (c.status !== 200) expect(c.body.error).toBe('invalid_state')
    const done = (await h.api('GET', `/api/v2/transaction/${q.txnId}`, payer.token)).body
    expect(done.txnState).toBe('completed')
    // One receive, completed; none left open by the confirms that lost the race.
    const { rows } = await h.c.db.query<{ state: string }>(
      `SELECT state FROM transactions WHERE account_id = $1`,
      [payee.accountId],
    )
    expect(rows.map((r) => r.state)).toEqual(['completed'])
    await h.expectBooksBalanced()
  })
})
