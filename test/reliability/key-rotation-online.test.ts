import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import { createHarness, ENGINE, type Harness, type TestAccount } from '../helpers/harness.js'
import { masterKeyId } from '../../src/shared/secret-box.js'
import type { KeysStatus } from '../../src/admin/keys.js'
import { runDueDeliveries } from '../../src/events/delivery-worker.js'
import { verifySignature } from '../../src/events/signature.js'
import { deliveryDepsOf, startReceiver, type Receiver } from '../helpers/webhooks.js'
import { operatorClient } from '../admin/operator-client.js'

/**
 * Keys that rotate without downtime (issue 32), online: the master key and the token key rotated
 * under load on two instances (in one process, sharing one database: both engines) without losing a
 * request or signing anybody out; a webhook secret rotated by its customer, both signatures sent
 * during the overlap; the shared admin token kept to setting up operators. The keyring, the reseal
 * and the token key's retirement are in key-rotation.test.ts.
 */

const hex = () => randomBytes(32).toString('hex')

describe('rotating keys under load on two instances', () => {
  const open: Harness[] = []
  afterEach(async () => {
    for (const h of open.reverse()) await h.close()
    open.length = 0
  })

  it(
    'loses no token request or authenticated GET and signs nobody out while the master key and the token key rotate',
    { timeout: 90_000 },
    async () => {
      const k1 = hex()
      const k2 = hex()
      const first = await createHarness({ MASTER_KEY: k1 })
      open.push(first)
      const accounts: TestAccount[] = []
      for (let i = 0; i < 4; i++) accounts.push(await first.createAccount({ name: `Load ${i}` }))
      const kidOf = (token: string) =>
        JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString('utf8')).kid as string
      const firstKid = kidOf(accounts[0]!.token)
      expect(firstKid).toMatch(/^(jwk_|legacy)/)
      // The instances restarted with the new master key, the old one still opening.
      const one = await createHarness({ MASTER_KEY: k2, MASTER_KEY_PREVIOUS: k1 }, { shareDbWith: first })
      open.push(one)
      const two = await createHarness({ MASTER_KEY: k2, MASTER_KEY_PREVIOUS: k1 }, { shareDbWith: first })
      open.push(two)
      const instances = [one, two]
      // Each account's token as its customer holds it: replaced by the token requests of the load.
      const tokens = accounts.map((a) => a.token)
      const failures: string[] = []
      let requests = 0
      let stopping = false
      const kidsSeen = new Set<string>()
      const worker = async (w: number) => {
        for (let n = 0; !stopping; n++) {
          const i = (w + n) % accounts.length
          const acc = accounts[i]!
          const h = instances[(w + n) % 2]!
          requests++
          if (n % 3 === 0) {
            try {
              tokens[i] = await h.tokenFor(acc.apiKey, acc.apiSecret)
              kidsSeen.add(kidOf(tokens[i]!))
            } catch (err) {
              failures.push(`token: ${(err as Error).message}`)
            }
          } else {
            const r = await h.api('GET', `/api/v2/account/${acc.accountId}`, tokens[i]!)
            if (r.status !== 200) failures.push(`GET ${r.status} ${JSON.stringify(r.body)}`)
          }
        }
      }
      const load = Promise.all([0, 1, 2, 3, 4, 5].map(worker))
      const admin = async (h: Harness, url: string, body: unknown = {}) => {
        const r = await h.app.inject({
          method: 'POST',
          url,
          headers: { authorization: `Bearer ${h.adminToken}`, 'content-type': 'application/json' },
          payload: JSON.stringify(body),
        })
        expect(r.statusCode, r.body).toBe(200)
        return JSON.parse(r.body)
      }
      try {
        await new Promise((r) => setTimeout(r, 300))
        const reseal = await admin(one, '/admin/key-rotation/master', { batchSize: 2 })
        expect(reseal.status.master.droppable).toEqual([masterKeyId(Buffer.from(k1, 'hex'))])
        const jwt1 = await admin(two, '/admin/key-rotation/jwt')
        expect(jwt1.previousKid).toBe(firstKid)
        await new Promise((r) => setTimeout(r, 300))
        const jwt2 = await admin(one, '/admin/key-rotation/jwt')
        expect(jwt2.previousKid).toBe(jwt1.kid)
        await new Promise((r) => setTimeout(r, 300))
      } finally {
        stopping = true
        await load
      }
      console.info(
        `key rotation under load (${ENGINE}): ${requests} requests on two instances, ${failures.length} failed, token kids seen ${kidsSeen.size}`,
      )
      expect(failures.slice(0, 5)).toEqual([])
      expect(requests).toBeGreaterThan(30)
      // Nobody was signed out: the tokens of the first key, of the second and of the third all work on
      // both instances; a token signed by the newest key verifies on the other instance at once.
      expect(kidsSeen.size).toBeGreaterThanOrEqual(2)
      const newest = await one.tokenFor(accounts[0]!.apiKey, accounts[0]!.apiSecret)
      for (const h of instances) {
        for (const token of [accounts[0]!.token, ...tokens.slice(0, 1), newest])
          expect((await h.api('GET', `/api/v2/account/${accounts[0]!.accountId}`, token)).status).toBe(200)
      }
      const status = JSON.parse(
        (
          await two.app.inject({
            method: 'GET',
            url: '/admin/key-rotation',
            headers: { authorization: `Bearer ${two.adminToken}` },
          })
        ).body,
      ) as KeysStatus
      expect(status.jwt.keys.map((k) => k.current)).toEqual([true, false, false])
      expect(status.master.resealed).toBe(true)
    },
  )
})

describe('rotating a webhook secret', () => {
  let h: Harness | undefined
  let receiver: Receiver | undefined
  afterEach(async () => {
    await receiver?.close()
    await h?.close()
  })

  /** The receiver of docs/webhooks.md ("Rotating the secret"), as written there. */
  const verifies = (rawBody: Buffer, header: unknown, secret: string) => {
    if (typeof header !== 'string' || !/^[0-9a-f]{64}$/i.test(header)) return false
    const expected = createHmac('sha256', secret).update(rawBody).digest()
    return timingSafeEqual(expected, Buffer.from(header, 'hex'))
  }
  const acceptsEither = (rawBody: Buffer, headers: Record<string, unknown>, secrets: string[]) => {
    const signatures = [
      headers['x-svcpay-signature'] ?? headers['x-svc-signature'],
      headers['x-svcpay-signature-previous'] ?? headers['x-svc-signature-previous'],
    ]
    let ok = false
    for (const header of signatures)
      for (const secret of secrets) ok = verifies(rawBody, header, secret) || ok
    return ok
  }

  it(
    'sends both signatures during the overlap the customer chose, and only the new one after it',
    { timeout: 60_000 },
    async () => {
      const OLD = 'old-webhook-secret-0123'
      const NEW = 'new-webhook-secret-4567'
      h = await createHarness({ ALLOW_HTTP_WEBHOOKS: 'true' })
      receiver = await startReceiver(NEW)
      const a = await h.createAccount()
      const other = await h.createAccount()
      await h.fund(a.accountId, 'BTC', '0.01')
      const hook = (await h.api('POST', '/api/v2/webhook', a.token, { callback: receiver.url, secret: OLD }))
        .body
      // Refused, in the contract's shape, changing nothing: too long an overlap, another's webhook.
      const tooLong = await h.api('POST', `/api/v2/webhook/${hook.id}/rotate-secret`, a.token, {
        secret: NEW,
        overlapS: 7 * 86_400 + 1,
      })
      expect(tooLong.status).toBe(400)
      expect(tooLong.body).toMatchObject({ error: 'invalid_request' })
      const notTheirs = await h.api('POST', `/api/v2/webhook/${hook.id}/rotate-secret`, other.token, {
        secret: NEW,
        overlapS: 60,
      })
      expect(notTheirs.status).toBe(404)
      expect(notTheirs.body).toMatchObject({ error: 'not_found' })

      const rotated = await h.api('POST', `/api/v2/webhook/${hook.id}/rotate-secret`, a.token, {
        secret: NEW,
        overlapS: 600,
      })
      expect(rotated.status, JSON.stringify(rotated.body)).toBe(200)
      expect(rotated.body).toMatchObject({ id: hook.id, callback: receiver.url })
      expect(rotated.body.previousSecretUntil - rotated.body.updatedAt).toBe(600_000)
      expect(JSON.stringify(rotated.body)).not.toContain(NEW)

      const swap = {
        sourceReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '0.0001', reqDetails: {} },
        destReq: { ccy: 'USD', method: 'svcpay', reqDetails: {} },
      }
      const q1 = await h.api('POST', '/api/v2/transaction', a.token, swap)
      await runDueDeliveries(deliveryDepsOf(h.c))
      const during = await receiver.waitFor(1)
      const d = during[0]!
      expect(d.body.txnId).toBe(q1.body.txnId)
      expect(verifySignature(d.rawBody, NEW, d.headers['x-svcpay-signature'] as string)).toBe(true)
      expect(verifySignature(d.rawBody, OLD, d.headers['x-svcpay-signature-previous'] as string)).toBe(true)
      // A receiver that still holds only the old secret, or already only the new one, accepts it.
      expect(acceptsEither(d.rawBody, d.headers, [OLD])).toBe(true)
      expect(acceptsEither(d.rawBody, d.headers, [NEW])).toBe(true)
      expect(acceptsEither(d.rawBody, d.headers, ['some-other-secret-000'])).toBe(false)

      // After the overlap (the worker's clock past it): the new signature alone.
      const q2 = await h.api('POST', '/api/v2/transaction', a.token, swap)
      await runDueDeliveries(deliveryDepsOf(h.c, { now: () => Date.now() + 601_000 }))
      const after = (await receiver.waitFor(2))[1]!
      expect(after.body.txnId).toBe(q2.body.txnId)
      expect(after.signatureValid).toBe(true)
      expect(after.headers['x-svcpay-signature-previous']).toBeUndefined()
      expect(acceptsEither(after.rawBody, after.headers, [OLD])).toBe(false)
      expect(acceptsEither(after.rawBody, after.headers, [NEW])).toBe(true)

      // A plain secret change (PUT) ends the overlap at once.
      await h.api('POST', `/api/v2/webhook/${hook.id}/rotate-secret`, a.token, { secret: OLD, overlapS: 600 })
      await h.api('PUT', `/api/v2/webhook/${hook.id}`, a.token, { secret: NEW })
      const row = await h.c.db.query('SELECT previous_secret_enc FROM webhooks WHERE id = $1', [hook.id])
      expect(row.rows[0].previous_secret_enc).toBeNull()
    },
  )
})

describe('the shared admin token', () => {
  let h: Harness | undefined
  afterEach(() => h?.close())

  it(
    'with ADMIN_TOKEN_ROUTES=setup only sets up operators; operators use their own credentials',
    { timeout: 60_000 },
    async () => {
      h = await createHarness({ ADMIN_TOKEN_ROUTES: 'setup' })
      const client = operatorClient(h.app, h.adminToken)
      // Setting up the first operator still works with the token.
      const op = await client.createOperator('admin')
      expect((await client.request('GET', '/admin/operators', { token: h.adminToken })).status).toBe(200)
      // Everything else refuses it, in the contract's shape, and changes nothing.
      for (const [method, url] of [
        ['GET', '/admin/accounts'],
        ['GET', '/admin/key-rotation'],
        ['POST', '/admin/key-rotation/jwt'],
        ['POST', '/admin/accounts'],
      ] as const) {
        const r = await client.request(method, url, {
          token: h.adminToken,
          body: method === 'POST' ? { name: 'x' } : undefined,
        })
        expect(r.status, `${method} ${url}`).toBe(403)
        expect(r.body).toMatchObject({
          error: 'forbidden',
          message: expect.stringContaining('ADMIN_TOKEN_ROUTES'),
        })
      }
      expect((await h.c.db.query('SELECT count(*)::int AS n FROM jwt_keys')).rows[0].n).toBe(1)
      // The operator, signed in, does what its role allows.
      const session = await client.signIn(op)
      expect((await client.request('GET', '/admin/accounts', { session })).status).toBe(200)
      const rotated = await client.request('POST', '/admin/key-rotation/jwt', { session, body: {} })
      expect(rotated.status, rotated.raw).toBe(200)
      const audit = await h.c.db.query(
        "SELECT operator_email FROM admin_audit WHERE action = 'keys.rotate_jwt'",
      )
      expect(audit.rows.map((r) => r.operator_email)).toEqual([op.email])
    },
  )
})
