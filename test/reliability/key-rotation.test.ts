import { randomBytes } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import { createHarness, type Harness, type TestAccount } from '../helpers/harness.js'
import {
  createSecretBox,
  masterKeyId,
  SealedSecretError,
  sealV1,
  UnknownSealingKeyError,
} from '../../src/shared/secret-box.js'
import { resealAll } from '../../src/db/reseal.js'
import { SEALED_COLUMNS, type KeysStatus } from '../../src/admin/keys.js'
import { rotateJwtKey } from '../../src/auth/jwt-key.js'
import { operatorClient } from '../admin/operator-client.js'

/**
 * Keys that rotate without downtime (issue 32): a master keyring whose previous keys still open,
 * the reseal of every stored secret under the current key (in batches, resumable after a crash),
 * the status that says when an old key can be dropped, and token signing keys by kid that rotate
 * under load on two instances without signing anybody out. Both engines.
 */

const hex = () => randomBytes(32).toString('hex')

describe('the master keyring', () => {
  it('opens what any key of the ring sealed, by the key id each value records', () => {
    const [k1, k2, k3] = [randomBytes(32), randomBytes(32), randomBytes(32)]
    const old = createSecretBox(k1)
    const sealedByOld = old.seal('api secret')
    expect(sealedByOld.startsWith(`v2.${masterKeyId(k1)}.`)).toBe(true)
    expect(sealedByOld).not.toContain(k1.toString('hex').slice(0, 16))
    const ring = createSecretBox(k2, [k1])
    expect(ring.currentKeyId).toBe(masterKeyId(k2))
    expect(ring.keyIds).toEqual([masterKeyId(k2), masterKeyId(k1)])
    expect(ring.open(sealedByOld)).toBe('api secret')
    expect(ring.needsReseal(sealedByOld)).toBe(true)
    const fresh = ring.seal('api secret')
    expect(ring.keyIdOf(fresh)).toBe(masterKeyId(k2))
    expect(ring.needsReseal(fresh)).toBe(false)
    // Sealed before key ids: opens with whichever key of the ring opens it.
    const legacy = sealV1(k1, 'legacy secret')
    expect(ring.keyIdOf(legacy)).toBeUndefined()
    expect(ring.needsReseal(legacy)).toBe(true)
    expect(ring.open(legacy)).toBe('legacy secret')
    expect(createSecretBox(k1).open(legacy)).toBe('legacy secret')
    // A key the ring does not hold is a clear error naming the key id, never a guess.
    const other = createSecretBox(k3)
    expect(() => other.open(sealedByOld)).toThrow(UnknownSealingKeyError)
    expect(() => other.open(sealedByOld)).toThrow(masterKeyId(k1))
    expect(() => other.open(legacy)).toThrow(SealedSecretError)
    // The key id is bound to the ciphertext: relabelled, it does not open.
    const relabelled = sealedByOld.replace(masterKeyId(k1), masterKeyId(k2))
    expect(() => ring.open(relabelled)).toThrow(SealedSecretError)
  })
})

describe('rotating the master key', () => {
  const open: Harness[] = []
  afterEach(async () => {
    for (const h of open.reverse()) await h.close()
    open.length = 0
  })

  async function status(h: Harness): Promise<KeysStatus> {
    const r = await h.app.inject({
      method: 'GET',
      url: '/admin/key-rotation',
      headers: { authorization: `Bearer ${h.adminToken}` },
    })
    expect(r.statusCode).toBe(200)
    return JSON.parse(r.body)
  }

  async function rotateMaster(h: Harness, batchSize?: number) {
    const r = await h.app.inject({
      method: 'POST',
      url: '/admin/key-rotation/master',
      headers: { authorization: `Bearer ${h.adminToken}`, 'content-type': 'application/json' },
      payload: JSON.stringify(batchSize ? { batchSize } : {}),
    })
    expect(r.statusCode, r.body).toBe(200)
    return JSON.parse(r.body)
  }

  it(
    'old values still open, the reseal moves them all, a crash mid-reseal resumes, and the old key can then be dropped',
    { timeout: 60_000 },
    async () => {
      const k1 = hex()
      const k2 = hex()
      const a = await createHarness({ MASTER_KEY: k1 })
      open.push(a)
      const accounts: TestAccount[] = []
      for (let i = 0; i < 5; i++) accounts.push(await a.createAccount({ name: `Rotating ${i}` }))
      expect(
        (
          await a.api('POST', '/api/v2/webhook', accounts[0]!.token, {
            callback: 'https://example.com/hook',
            secret: 'webhook-secret-of-length',
          })
        ).status,
      ).toBe(200)
      // An operator's second factor, sealed by the old key too.
      const operator = await operatorClient(a.app, a.adminToken).createOperator('admin')
      // Two API secrets as they were sealed before key ids.
      for (const acc of accounts.slice(0, 2))
        await a.c.db.query('UPDATE api_keys SET secret_enc = $2 WHERE id = $1', [
          acc.apiKey,
          sealV1(Buffer.from(k1, 'hex'), acc.apiSecret),
        ])

      // The second instance has the new key and the old one as previous: everything still opens.
      const b = await createHarness({ MASTER_KEY: k2, MASTER_KEY_PREVIOUS: k1 }, { shareDbWith: a })
      open.push(b)
      for (const acc of accounts) {
        const token = await b.tokenFor(acc.apiKey, acc.apiSecret)
        expect((await b.api('GET', `/api/v2/account/${acc.accountId}`, token)).status).toBe(200)
        // Tokens signed before the rotation keep working on the new instance.
        expect((await b.api('GET', `/api/v2/account/${acc.accountId}`, acc.token)).status).toBe(200)
      }
      const before = await status(b)
      const id1 = masterKeyId(Buffer.from(k1, 'hex'))
      const id2 = masterKeyId(Buffer.from(k2, 'hex'))
      expect(before.master.currentKeyId).toBe(id2)
      expect(before.master.unmarked).toBe(2)
      const byOld = before.master.keys.find((k) => k.keyId === id1)!
      // 3 API secrets, the webhook secret, the token key (and its legacy setting when there is one),
      // the Lightning node key and the wallets' keys.
      expect(byOld.sealed).toBeGreaterThanOrEqual(5)
      expect(before.master.droppable).toEqual([])
      expect(before.notes.join('\n')).toContain(`key ${id1} still seals`)
      const total = byOld.sealed + before.master.unmarked

      // A crash after the first batch: that batch is committed, the rest is not touched.
      let batches = 0
      await expect(
        resealAll(b.c.db, b.c.box, SEALED_COLUMNS, {
          batchSize: 2,
          onBatch: () => {
            if (++batches === 1) throw new Error('SIGKILL')
          },
        }),
      ).rejects.toThrow('SIGKILL')
      const mid = await status(b)
      const leftAfterCrash = mid.master.keys.find((k) => k.keyId === id1)!.sealed + mid.master.unmarked
      expect(leftAfterCrash).toBe(total - 2)
      expect(mid.master.keys.find((k) => k.keyId === id2)!.sealed).toBe(
        before.master.keys.find((k) => k.keyId === id2)!.sealed + 2,
      )

      // The command goes on where the crash left off, in batches of three, and is audited.
      const run = await rotateMaster(b, 3)
      const resealed = Object.values(run.resealed as Record<string, number>).reduce((x, y) => x + y, 0)
      expect(resealed).toBe(leftAfterCrash)
      expect(Object.values(run.unopenable as Record<string, number>).every((n) => n === 0)).toBe(true)
      expect(run.batches).toBeGreaterThan(SEALED_COLUMNS.length)
      const after = await status(b)
      expect(after.master.resealed).toBe(true)
      expect(after.master.unmarked).toBe(0)
      expect(after.master.keys.find((k) => k.keyId === id1)!.sealed).toBe(0)
      expect(after.master.droppable).toEqual([id1])
      expect(after.notes).toContain(
        `no value is sealed by key ${id1} any more: it can be dropped from MASTER_KEY_PREVIOUS`,
      )
      const audit = await b.c.db.query<{ action: string; after: any }>(
        "SELECT action, after FROM admin_audit WHERE action LIKE 'keys.%' ORDER BY at, id",
      )
      expect(audit.rows.map((r) => r.action)).toEqual([
        'keys.rotate_master.start',
        'keys.rotate_master.finish',
      ])
      expect(audit.rows[1]!.after.droppable).toEqual([id1])
      // A second run finds nothing to do.
      const again = await rotateMaster(b)
      expect(Object.values(again.resealed as Record<string, number>).every((n) => n === 0)).toBe(true)

      // The old key dropped: an instance with the new key alone opens everything.
      const c = await createHarness({ MASTER_KEY: k2 }, { shareDbWith: a })
      open.push(c)
      for (const acc of accounts) {
        const token = await c.tokenFor(acc.apiKey, acc.apiSecret)
        expect((await c.api('GET', `/api/v2/account/${acc.accountId}`, token)).status).toBe(200)
      }
      // The operator signs in (its TOTP secret opened by the new key alone).
      const session = await operatorClient(c.app, c.adminToken).signIn(operator)
      const seen = await operatorClient(c.app, c.adminToken).request('GET', '/admin/key-rotation', {
        session,
      })
      expect(seen.status).toBe(200)
      // The console's overview shows the keys where an operator looks (here, with the old key dropped).
      const overview = await operatorClient(c.app, c.adminToken).request('GET', '/admin/console', { session })
      expect(overview.status).toBe(200)
      expect(overview.raw).toContain('data-testid="master-keys"')
      expect(overview.raw).toContain(`<code>${id2}</code>`)
      expect(overview.raw).toContain(`every stored secret is sealed by the current key ${id2}`)
      expect(overview.raw).toContain('data-testid="token-keys"')
      const hook = await c.c.db.query('SELECT secret_enc FROM webhooks')
      expect(c.c.box.open(hook.rows[0].secret_enc)).toBe('webhook-secret-of-length')
      // And an instance with the old key alone is refused at start with the key id named.
      await expect(createHarness({ MASTER_KEY: k1 }, { shareDbWith: a })).rejects.toThrow(
        new RegExp(`sealed by master key ${id2}`),
      )
    },
  )
})

describe('rotating the token signing key', () => {
  const open: Harness[] = []
  afterEach(async () => {
    for (const h of open.reverse()) await h.close()
    open.length = 0
  })

  it('retires an old key once the longest token it signed has expired', { timeout: 30_000 }, async () => {
    const h = await createHarness()
    open.push(h)
    const acc = await h.createAccount()
    const kids = async () =>
      (await h.c.db.query('SELECT id FROM jwt_keys ORDER BY created_at')).rows.map((r) => r.id)
    const [first] = await kids()
    // A rotation long ago (as of its clock): the first key's tokens have all expired since.
    const longAgo = Date.now() - (h.c.config.tokenTtlS * 1000 + 10 * 60_000)
    const r1 = await h.c.db.tx((q) =>
      rotateJwtKey(q, h.c.box, { tokenTtlS: h.c.config.tokenTtlS, now: longAgo }),
    )
    expect(r1.previousKid).toBe(first)
    expect(r1.previousVerifiesUntil).toBeLessThan(Date.now())
    h.c.jwtKeys.refresh()
    // The first key no longer verifies: its token (which would have expired by then) is refused.
    expect((await h.api('GET', `/api/v2/account/${acc.accountId}`, acc.token)).status).toBe(401)
    // The next rotation retires it.
    const r2 = await h.app.inject({
      method: 'POST',
      url: '/admin/key-rotation/jwt',
      headers: { authorization: `Bearer ${h.adminToken}`, 'content-type': 'application/json' },
      payload: '{}',
    })
    expect(r2.statusCode, r2.body).toBe(200)
    expect(JSON.parse(r2.body).retired).toEqual([first])
    expect(await kids()).toEqual([r1.kid, JSON.parse(r2.body).kid])
  })
})
