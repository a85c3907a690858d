import { createHmac, randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { SignJWT, decodeJwt, decodeProtectedHeader } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, createTestDb, ENGINE, type Harness } from '../helpers/harness.js'
import { createAuthService } from '../../src/auth/service.js'
import { loadJwtKey } from '../../src/auth/jwt-key.js'
import { loadConfig } from '../../src/config/config.js'
import { createContainer, type Container } from '../../src/container.js'
import { buildApp } from '../../src/app.js'
import { createLogger } from '../../src/logger.js'
import { createPgliteDb, createPostgresDb, type Db } from '../../src/db/db.js'

const TOKEN_PATH = '/api/v2/authentication/token-signature'

const sign = (apiKey: string, secret: string, body: string) =>
  createHmac('sha256', secret).update(`${apiKey}&payload=${body}`, 'utf8').digest('hex')
const freshBody = () => JSON.stringify({ nonce: randomBytes(8).toString('hex') })

async function exchange(
  app: FastifyInstance,
  apiKey: string | undefined,
  signature: string | undefined,
  body: string,
) {
  const res = await app.inject({
    method: 'POST',
    url: TOKEN_PATH,
    headers: {
      'content-type': 'application/json',
      ...(apiKey !== undefined ? { 'x-api-key': apiKey } : {}),
      ...(signature !== undefined ? { 'x-api-signature': signature } : {}),
    },
    payload: body,
  })
  return { status: res.statusCode, body: JSON.parse(res.body) }
}

async function walletsStatus(app: FastifyInstance, accountId: string, token: string) {
  const res = await app.inject({
    method: 'GET',
    url: `/api/v2/account/${accountId}/wallet/`,
    headers: { authorization: `Bearer ${token}` },
  })
  return { status: res.statusCode, body: JSON.parse(res.body) }
}

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')

// One service for the token and access-token suites: a harness is the slow part on PGlite.
let h: Harness
beforeAll(async () => {
  h = await createHarness()
})
afterAll(async () => h?.close())

describe('token exchange', () => {
  it('answers the spec token response whose JWT names the account and expiry', async () => {
    const acct = await h.createAccount()
    const body = freshBody()
    const before = Date.now()
    const r = await exchange(h.app, acct.apiKey, sign(acct.apiKey, acct.apiSecret, body), body)
    expect(r.status).toBe(200)
    expect(Object.keys(r.body).sort()).toEqual(['accessToken', 'accountId', 'expiredAt'])
    expect(r.body.accountId).toBe(acct.accountId)
    expect(Number.isInteger(r.body.expiredAt)).toBe(true)
    expect(r.body.expiredAt).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 3600_000)
    expect(r.body.expiredAt).toBeLessThanOrEqual(Date.now() + 3600_000)
    expect(decodeProtectedHeader(r.body.accessToken).alg).toBe('HS256')
    const claims = decodeJwt(r.body.accessToken)
    expect(claims.sub).toBe(acct.accountId)
    expect(claims.exp! * 1000).toBe(r.body.expiredAt)
    expect(JSON.stringify(claims)).not.toContain(acct.apiSecret)
  })

  it('signs the exact body bytes, whitespace and non-ASCII text included', async () => {
    const acct = await h.createAccount()
    const body = '\n  {"name": "Nguyễn Văn A",\t"n": 1.10, "emoji": "💸"}  \n'
    const r = await exchange(h.app, acct.apiKey, sign(acct.apiKey, acct.apiSecret, body), body)
    expect(r.status).toBe(200)
    const reencoded = JSON.stringify(JSON.parse(body))
    const other = await exchange(h.app, acct.apiKey, sign(acct.apiKey, acct.apiSecret, reencoded), body)
    expect(other.body.error).toBe('invalid_signature')
  })

  it('accepts a signature once, even when resent in upper case or many times at once', async () => {
    const acct = await h.createAccount()
    const body = freshBody()
    const sig = sign(acct.apiKey, acct.apiSecret, body)
    const results = await Promise.all(
      Array.from({ length: 6 }, () => exchange(h.app, acct.apiKey, sig, body)),
    )
    expect(results.filter((r) => r.status === 200)).toHaveLength(1)
    for (const r of results.filter((x) => x.status !== 200)) {
      expect(r).toEqual({ status: 401, body: { error: 'signature_reused', message: expect.any(String) } })
    }
    expect((await exchange(h.app, acct.apiKey, sig.toUpperCase(), body)).body.error).toBe('signature_reused')
    // A fresh body is a fresh signature.
    const next = freshBody()
    expect((await exchange(h.app, acct.apiKey, sign(acct.apiKey, acct.apiSecret, next), next)).status).toBe(
      200,
    )
  })

  it('answers 401 for missing headers, unknown keys and malformed or wrong signatures', async () => {
    const acct = await h.createAccount()
    const body = freshBody()
    const good = sign(acct.apiKey, acct.apiSecret, body)
    const cases: Array<[string | undefined, string | undefined, string]> = [
      [undefined, good, 'unauthorized'],
      [acct.apiKey, undefined, 'unauthorized'],
      ['key_' + 'x'.repeat(25), good, 'unauthorized'],
      ['k'.repeat(500), good, 'unauthorized'],
      [acct.apiKey, good.slice(0, 63), 'invalid_signature'],
      [acct.apiKey, good + '00', 'invalid_signature'],
      [acct.apiKey, 'z'.repeat(64), 'invalid_signature'],
      [acct.apiKey, sign(acct.apiKey, 'sk_not_the_secret', body), 'invalid_signature'],
      [acct.apiKey, createHmac('sha256', acct.apiSecret).update(body).digest('hex'), 'invalid_signature'],
    ]
    for (const [key, sig, code] of cases) {
      const r = await exchange(h.app, key, sig, body)
      expect(r, `${key} ${sig}`).toEqual({ status: 401, body: { error: code, message: expect.any(String) } })
    }
    // None of the failures used up the signature.
    expect((await exchange(h.app, acct.apiKey, good, body)).status).toBe(200)
  })

  it('refuses bodies that are not a JSON object with 400 invalid_json', async () => {
    const acct = await h.createAccount()
    for (const body of ['[1,2]', '"text"', '42', 'null', '{"a":', '']) {
      const r = await exchange(h.app, acct.apiKey, sign(acct.apiKey, acct.apiSecret, body), body)
      expect(r, JSON.stringify(body)).toEqual({
        status: 400,
        body: { error: 'invalid_json', message: expect.any(String) },
      })
    }
  })

  it('refuses a body that is not JSON with 415', async () => {
    const acct = await h.createAccount()
    const body = freshBody()
    const res = await h.app.inject({
      method: 'POST',
      url: TOKEN_PATH,
      headers: {
        'content-type': 'text/plain',
        'x-api-key': acct.apiKey,
        'x-api-signature': sign(acct.apiKey, acct.apiSecret, body),
      },
      payload: body,
    })
    expect(res.statusCode).toBe(415)
    expect(JSON.parse(res.body)).toEqual({ error: 'unsupported_media_type', message: expect.any(String) })
  })
})

describe('access tokens', () => {
  it('refuses a missing or malformed Authorization header', async () => {
    const acct = await h.createAccount()
    for (const authorization of [
      undefined,
      '',
      'Bearer',
      'Bearer ',
      `Basic ${acct.token}`,
      acct.token,
      'Bearer short',
      `Bearer ${acct.token} x`,
    ]) {
      const res = await h.app.inject({
        method: 'GET',
        url: `/api/v2/account/${acct.accountId}/wallet/`,
        headers: authorization === undefined ? {} : { authorization },
      })
      expect(res.statusCode, String(authorization)).toBe(401)
      expect(JSON.parse(res.body)).toEqual({ error: 'unauthorized', message: expect.any(String) })
    }
  })

  it('refuses an expired token', async () => {
    const acct = await h.createAccount()
    const jwtKey = await loadJwtKey(h.c.db, h.c.box, undefined)
    const past = createAuthService({
      db: h.c.db,
      box: h.c.box,
      jwtKey,
      tokenTtlS: 3600,
      now: () => Date.now() - 2 * 3600_000,
    })
    const body = freshBody()
    const issued = await past.exchange({
      apiKey: acct.apiKey,
      signature: sign(acct.apiKey, acct.apiSecret, body),
      rawBody: body,
    })
    expect(issued.expiredAt).toBeLessThan(Date.now() - 3500_000)
    const r = await walletsStatus(h.app, acct.accountId, issued.accessToken)
    expect(r).toEqual({
      status: 401,
      body: { error: 'unauthorized', message: expect.stringMatching(/expired/) },
    })
    // The same key still gets working tokens now.
    expect((await walletsStatus(h.app, acct.accountId, acct.token)).status).toBe(200)
  })

  it('refuses a tampered token, an alg none token, a token under another key and one without our issuer', async () => {
    const victim = await h.createAccount()
    const attacker = await h.createAccount()
    const [header, payload, signature] = attacker.token.split('.') as [string, string, string]
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString())
    // Claims that would pass every other check: the victim's account and one of its real key ids.
    const forged = { ...claims, sub: victim.accountId, key: victim.apiKey }
    const jwtKey = await loadJwtKey(h.c.db, h.c.box, undefined)
    const { iss: _iss, ...noIssuer } = claims

    const attempts: Record<string, [string, string]> = {
      tampered: [victim.accountId, [header, b64url(forged), signature].join('.')],
      algNone: [victim.accountId, [b64url({ alg: 'none', typ: 'JWT' }), b64url(forged), ''].join('.')],
      otherKey: [
        victim.accountId,
        await new SignJWT(forged).setProtectedHeader({ alg: 'HS256' }).sign(randomBytes(32)),
      ],
      hs512: [
        victim.accountId,
        await new SignJWT(forged).setProtectedHeader({ alg: 'HS512' }).sign(randomBytes(64)),
      ],
      // Signed with our key but without our issuer claim, for the attacker's own account.
      noIssuer: [
        attacker.accountId,
        await new SignJWT(noIssuer).setProtectedHeader({ alg: 'HS256' }).sign(jwtKey),
      ],
      // Signed with our key, but the key id belongs to another account than the subject.
      mismatched: [
        victim.accountId,
        await new SignJWT({ ...claims, sub: victim.accountId })
          .setProtectedHeader({ alg: 'HS256' })
          .sign(jwtKey),
      ],
    }
    for (const [name, [accountId, token]] of Object.entries(attempts)) {
      const r = await walletsStatus(h.app, accountId, token)
      expect(r, name).toEqual({ status: 401, body: { error: 'unauthorized', message: expect.any(String) } })
    }
    // Controls: the untouched token is good for its own account, and the forged claims signed with
    // our key would have been accepted, so each refusal above is the check under test.
    expect((await walletsStatus(h.app, attacker.accountId, attacker.token)).status).toBe(200)
    const genuine = await new SignJWT(forged).setProtectedHeader({ alg: 'HS256' }).sign(jwtKey)
    expect((await walletsStatus(h.app, victim.accountId, genuine)).status).toBe(200)
  })

  it('stops a revoked key: its tokens and exchanges are refused, other keys keep working', async () => {
    const acct = await h.createAccount()
    const second = (
      await h.app.inject({
        method: 'POST',
        url: '/admin/keys',
        headers: { authorization: `Bearer ${h.adminToken}`, 'content-type': 'application/json' },
        payload: { accountId: acct.accountId },
      })
    ).json()
    const secondToken = await h.tokenFor(second.apiKey, second.apiSecret)
    expect((await walletsStatus(h.app, acct.accountId, acct.token)).status).toBe(200)

    const revoke = await h.app.inject({
      method: 'POST',
      url: `/admin/keys/${acct.apiKey}/revoke`,
      headers: { authorization: `Bearer ${h.adminToken}` },
    })
    expect(revoke.json()).toEqual({ apiKey: acct.apiKey, revoked: true })
    expect(await walletsStatus(h.app, acct.accountId, acct.token)).toEqual({
      status: 401,
      body: { error: 'unauthorized', message: expect.any(String) },
    })
    const body = freshBody()
    expect(
      (await exchange(h.app, acct.apiKey, sign(acct.apiKey, acct.apiSecret, body), body)).body.error,
    ).toBe('unauthorized')
    expect((await walletsStatus(h.app, acct.accountId, secondToken)).status).toBe(200)
    // Revoking twice is not found: there is no such active key.
    const again = await h.app.inject({
      method: 'POST',
      url: `/admin/keys/${acct.apiKey}/revoke`,
      headers: { authorization: `Bearer ${h.adminToken}` },
    })
    expect(again.statusCode).toBe(404)
  })

  it('stops a revoked key on another instance once its key cache expires', async () => {
    const acct = await h.createAccount()
    let clock = Date.now()
    const jwtKey = await loadJwtKey(h.c.db, h.c.box, undefined)
    const otherInstance = createAuthService({
      db: h.c.db,
      box: h.c.box,
      jwtKey,
      tokenTtlS: 3600,
      now: () => clock,
    })
    expect((await otherInstance.authenticate(`Bearer ${acct.token}`)).accountId).toBe(acct.accountId)
    expect(await h.c.auth.revokeKey(acct.apiKey)).toBe(true)
    clock += 2_001
    await expect(otherInstance.authenticate(`Bearer ${acct.token}`)).rejects.toMatchObject({
      code: 'unauthorized',
      status: 401,
    })
  })

  it('issues tokens for the configured lifetime', async () => {
    const acct = await h.createAccount()
    const jwtKey = await loadJwtKey(h.c.db, h.c.box, undefined)
    const now = 1_800_000_000_000
    const svc = createAuthService({ db: h.c.db, box: h.c.box, jwtKey, tokenTtlS: 600, now: () => now })
    const body = freshBody()
    const t = await svc.exchange({
      apiKey: acct.apiKey,
      signature: sign(acct.apiKey, acct.apiSecret, body),
      rawBody: body,
    })
    expect(t.expiredAt).toBe(now + 600_000)
  })
})

/**
 * Storage that outlives a process: a PGlite data directory, or a PostgreSQL database reopened by
 * URL. Each `open()` is a new connection, as a restarted or second instance would make.
 */
async function durableStorage(): Promise<{ dataDir: string; open(): Promise<Db>; cleanup(): Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svcpay-restart-'))
  if (ENGINE === 'pglite') {
    return {
      dataDir,
      open: () => createPgliteDb(join(dataDir, 'db')),
      cleanup: async () => rmSync(dataDir, { recursive: true, force: true }),
    }
  }
  const t = await createTestDb()
  await t.db.close()
  return {
    dataDir,
    open: async () => createPostgresDb(t.url!, { poolMax: 4 }),
    cleanup: async () => {
      await t.drop()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

interface Instance {
  c: Container
  app: FastifyInstance
  db: Db
  stop(): Promise<void>
}

async function startInstance(db: Db, dataDir: string): Promise<Instance> {
  // No MASTER_KEY: the embedded default keeps it in DATA_DIR, which every instance here shares.
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', ADMIN_TOKEN: 'adm_restart_test_token' })
  const c = await createContainer(config, createLogger('silent'), { db })
  const app = await buildApp(c)
  await app.ready()
  return {
    c,
    app,
    db,
    async stop() {
      await app.close()
      await c.close()
      await db.close()
    },
  }
}

describe('one-time signatures across restarts and instances', () => {
  it('refuses a used signature after a restart, and old tokens stay valid', async () => {
    const storage = await durableStorage()
    try {
      const first = await startInstance(await storage.open(), storage.dataDir)
      const account = await first.c.accounts.create({ displayName: 'Restart' })
      const key = await first.c.auth.createKey(account.id)
      const body = freshBody()
      const sig = sign(key.apiKey, key.apiSecret, body)
      const issued = await exchange(first.app, key.apiKey, sig, body)
      expect(issued.status).toBe(200)
      await first.stop()

      const second = await startInstance(await storage.open(), storage.dataDir)
      try {
        expect(await exchange(second.app, key.apiKey, sig, body)).toEqual({
          status: 401,
          body: { error: 'signature_reused', message: expect.any(String) },
        })
        expect((await walletsStatus(second.app, account.id, issued.body.accessToken)).status).toBe(200)
        const next = freshBody()
        expect(
          (await exchange(second.app, key.apiKey, sign(key.apiKey, key.apiSecret, next), next)).status,
        ).toBe(200)
      } finally {
        await second.stop()
      }
    } finally {
      await storage.cleanup()
    }
  })

  it.skipIf(ENGINE !== 'postgres')(
    'refuses on one instance a signature used on another running at the same time',
    async () => {
      const storage = await durableStorage()
      const a = await startInstance(await storage.open(), storage.dataDir)
      const b = await startInstance(await storage.open(), storage.dataDir)
      try {
        const account = await a.c.accounts.create({ displayName: 'Two instances' })
        const key = await a.c.auth.createKey(account.id)
        const body = freshBody()
        const sig = sign(key.apiKey, key.apiSecret, body)
        expect((await exchange(a.app, key.apiKey, sig, body)).status).toBe(200)
        expect((await exchange(b.app, key.apiKey, sig, body)).body.error).toBe('signature_reused')

        // The same fresh signature raced on both instances is accepted exactly once.
        const raced = freshBody()
        const racedSig = sign(key.apiKey, key.apiSecret, raced)
        const results = await Promise.all(
          [a, b, a, b].map((i) => exchange(i.app, key.apiKey, racedSig, raced)),
        )
        expect(results.map((r) => r.status).sort()).toEqual([200, 401, 401, 401])

        // A token from one instance works on the other: they share the signing key.
        const token = results.find((r) => r.status === 200)!.body.accessToken
        expect((await walletsStatus(a.app, account.id, token)).status).toBe(200)
        expect((await walletsStatus(b.app, account.id, token)).status).toBe(200)
      } finally {
        await a.stop()
        await b.stop()
        await storage.cleanup()
      }
    },
  )
})
