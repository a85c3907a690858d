import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, ENGINE, type Harness, type TestAccount } from '../helpers/harness.js'
import { operatorClient, type Session } from '../admin/operator-client.js'
import { FLASHES_PER_OWNER } from '../../src/console/flash.js'

/**
 * Post/Redirect/Get (src/console/flash.ts): a console form that succeeds answers 303 See Other to a
 * GET page with its result, shown once to the session that posted it; reloading that page repeats
 * nothing. A new key's secret is on that page once and is never stored readable.
 */
describe(`console Post/Redirect/Get (${ENGINE})`, () => {
  let h: Harness
  let client: ReturnType<typeof operatorClient>
  let admin: Session
  let other: Session
  let shop: TestAccount

  beforeAll(async () => {
    h = await createHarness()
    client = operatorClient(h.app, h.adminToken)
    admin = await client.signIn(await client.createOperator('admin'))
    other = await client.signIn(await client.createOperator('admin'))
    shop = await h.createAccount({ name: 'PRG shop' })
  })
  afterAll(() => h?.close())

  const post = (url: string, s: Session, form: Record<string, string> = {}) =>
    h.app.inject({
      method: 'POST',
      url,
      headers: { cookie: s.cookie, 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
      payload: new URLSearchParams({ csrf_token: s.csrfToken, ...form }).toString(),
    })
  const get = (url: string, s?: Session) =>
    h.app.inject({ url, headers: { accept: 'text/html', ...(s ? { cookie: s.cookie } : {}) } })
  const keys = async () =>
    Number(
      (await h.c.db.query('SELECT count(*) AS n FROM api_keys WHERE account_id = $1', [shop.accountId]))
        .rows[0].n,
    )
  const flashes = async () =>
    Number((await h.c.db.query('SELECT count(*) AS n FROM console_flashes')).rows[0].n)

  it('answers a created key with 303 to its result, shown once to the same session only', async () => {
    const before = await keys()
    const res = await post(`/admin/console/accounts/${shop.accountId}/keys?lang=vi`, admin)
    expect(res.statusCode).toBe(303)
    expect(res.body).toBe('')
    expect(res.headers['cache-control']).toBe('no-store')
    const location = String(res.headers.location)
    expect(location).toMatch(/^\/admin\/console\/done\/[A-Za-z0-9_-]{24}\?lang=vi$/)
    expect(await keys()).toBe(before + 1)
    const { rows: stored } = await h.c.db.query('SELECT id, owner_hash, sealed FROM console_flashes')
    const apiKey = (
      await h.c.db.query('SELECT id FROM api_keys WHERE account_id = $1 ORDER BY created_at DESC LIMIT 1', [
        shop.accountId,
      ])
    ).rows[0].id as string

    // Another operator's session, or none, cannot take it; it stays for the one that posted.
    expect((await get(location, other)).statusCode).toBe(410)
    expect((await get(location)).statusCode).toBe(303)
    // A HEAD (a browser's or a link checker's prefetch) takes nothing: the GET still shows it.
    const head = await h.app.inject({ method: 'HEAD', url: location, headers: { cookie: admin.cookie } })
    expect(head.statusCode).toBe(200)
    expect(await flashes()).toBe(stored.length)
    const shown = await get(location, admin)
    expect(shown.statusCode).toBe(200)
    expect(shown.body).toContain('Đã tạo khóa API')
    expect(shown.body).toContain(apiKey)
    const secret = /<dt>Khóa bí mật API<\/dt><dd class="mono">([^<]{20,})<\/dd>/.exec(shown.body)?.[1]
    expect(secret).toBeDefined()
    // What was kept held neither the secret nor the key in the clear.
    expect(JSON.stringify(stored)).not.toContain(secret!)
    expect(JSON.stringify(stored)).not.toContain(apiKey)
    // Shown once: the reload finds nothing, repeats nothing, and says so.
    const again = await get(location, admin)
    expect(again.statusCode).toBe(410)
    expect(again.body).not.toContain('Khóa bí mật API')
    expect(again.body).toContain('Không có thao tác nào được thực hiện lại')
    expect(await keys()).toBe(before + 1)
  })

  it('answers every other form with 303 as well, and a sign-out with the signed-out page', async () => {
    const tier = await post(`/admin/console/accounts/${shop.accountId}/tier`, admin, { tier: 'premium' })
    expect(tier.statusCode).toBe(303)
    const page = await get(String(tier.headers.location), admin)
    expect(page.body).toContain('The tier is now premium.')
    expect(page.body).toContain('aria-current="page">Accounts')
    const created = await post('/admin/console/operators', admin, {
      email: 'prg-new@example.com',
      role: 'viewer',
    })
    expect(created.statusCode).toBe(303)
    expect((await get(String(created.headers.location), admin)).body).toContain('data-testid="setup-secret"')

    const s = await client.signIn(await client.createOperator('viewer'))
    const out = await post('/admin/console/sign-out-everywhere', s)
    expect(out.statusCode).toBe(303)
    expect(out.headers.location).toBe('/admin/console/signed-out?everywhere=1')
    expect(String(out.headers['set-cookie'])).toMatch(/svcpay_admin=;/)
    const ended = await get(String(out.headers.location))
    expect(ended.statusCode).toBe(200)
    expect(ended.body).toContain('All your sessions have ended, in every browser.')
  })

  it('keeps nothing for a refused form, and answers it with its error page at once', async () => {
    const before = await flashes()
    const bad = await post(`/admin/console/accounts/${shop.accountId}/tier`, admin, { tier: 'gold' })
    expect(bad.statusCode).toBe(400)
    expect(bad.headers['content-type']).toMatch(/^text\/html/)
    expect(await flashes()).toBe(before)
  })

  it('keeps a result a few minutes at most, and at most a few per session', async () => {
    const res = await post(`/admin/console/accounts/${shop.accountId}/tier`, admin, { tier: 'standard' })
    const location = String(res.headers.location)
    await h.c.db.query('UPDATE console_flashes SET expires_at = $1 WHERE id = $2', [
      Date.now() - 1,
      location.split('/').at(-1),
    ])
    expect((await get(location, admin)).statusCode).toBe(410)

    const made: string[] = []
    for (let i = 0; i < FLASHES_PER_OWNER + 3; i++) {
      const r = await post(`/admin/console/accounts/${shop.accountId}/tier`, other, { tier: 'standard' })
      made.push(String(r.headers.location))
    }
    const { rows } = await h.c.db.query('SELECT id FROM console_flashes')
    const kept = made.filter((l) => rows.some((r) => l.endsWith(r.id)))
    expect(kept).toEqual(made.slice(-FLASHES_PER_OWNER))
    expect((await get(made[0]!, other)).statusCode).toBe(410)
    expect((await get(made.at(-1)!, other)).statusCode).toBe(200)
  })
})
