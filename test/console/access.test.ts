import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, ENGINE, type Harness } from '../helpers/harness.js'
import { operatorClient, type Session } from '../admin/operator-client.js'
import { ADMIN_ROUTES, roleAllows, ROLES, type Role } from '../../src/operators/permissions.js'

/**
 * Access to the console's routes as a browser makes its requests (HTML accepted, forms posted with
 * the hidden CSRF field): no session, a role without the permission, a missing or foreign CSRF
 * field, a disabled operator. test/admin/access.test.ts checks the same routes as a script would.
 */
const CONSOLE = Object.entries(ADMIN_ROUTES)
  .filter(([key, access]) => key.split(' ')[1]!.startsWith('/admin/console') && access.need !== 'public')
  .map(([key, access]) => ({ method: key.split(' ')[0]!, url: key.split(' ')[1]!, need: access.need }))

describe(`console access from a browser (${ENGINE})`, () => {
  let h: Harness
  let client: ReturnType<typeof operatorClient>
  const sessions = {} as Record<Role, Session>
  let accountId: string
  let apiKey: string
  let txnId: string

  const concrete = (url: string) =>
    url
      .replace(':accountId', accountId)
      .replace(':apiKey', apiKey)
      .replace(':txnId', txnId)
      .replace(':deliveryId', '1')

  const send = (method: string, url: string, session?: Session, csrf?: string) =>
    h.app.inject({
      method: method as 'GET',
      url,
      headers: {
        accept: 'text/html',
        ...(session ? { cookie: session.cookie } : {}),
        ...(method === 'POST' ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      payload:
        method === 'POST' ? new URLSearchParams(csrf ? { csrf_token: csrf } : {}).toString() : undefined,
    })

  beforeAll(async () => {
    h = await createHarness()
    client = operatorClient(h.app, h.adminToken)
    for (const role of ROLES) sessions[role] = await client.signIn(await client.createOperator(role))
    const shop = await h.createAccount({ name: 'Access shop' })
    accountId = shop.accountId
    apiKey = shop.apiKey
    txnId = 'txn_0000000000000000000000000'
  }, 60_000)
  afterAll(() => h?.close())

  it('knows the console routes', () => {
    expect(CONSOLE.length).toBeGreaterThanOrEqual(10)
  })

  it('sends a browser without a session to sign in, and refuses its posts', async () => {
    for (const r of CONSOLE) {
      const res = await send(r.method, concrete(r.url))
      if (r.method === 'GET') {
        expect(res.statusCode, r.url).toBe(303)
        expect(res.headers.location, r.url).toMatch(/^\/admin\/console\/sign-in\?next=/)
      } else {
        expect(res.statusCode, r.url).toBe(401)
        expect(res.headers['content-type'], r.url).toMatch(/^text\/html/)
      }
    }
  })

  it('refuses a role without the permission, with a page saying so', async () => {
    let refused = 0
    for (const r of CONSOLE) {
      if (r.need === 'signed-in') continue
      for (const role of ROLES) {
        if (roleAllows(role, r.need)) continue
        const res = await send(r.method, concrete(r.url), sessions[role], sessions[role].csrfToken)
        expect(res.statusCode, `${role} ${r.method} ${r.url}`).toBe(403)
        expect(res.body).toContain('Your role does not allow this.')
        refused++
      }
    }
    expect(refused).toBeGreaterThanOrEqual(8)
  })

  it('refuses every form post without its CSRF field, or with another session’s', async () => {
    const top = async () =>
      Number((await h.c.db.query('SELECT max(id) AS id FROM admin_audit')).rows[0].id ?? 0)
    const before = await top()
    for (const r of CONSOLE.filter((x) => x.method === 'POST')) {
      for (const csrf of [undefined, sessions.viewer.csrfToken]) {
        const res = await send('POST', concrete(r.url), sessions.admin, csrf)
        expect(res.statusCode, r.url).toBe(403)
        expect(res.body, r.url).toContain('csrf_token')
      }
    }
    expect(await top()).toBe(before)
    expect((await send('GET', '/admin/console', sessions.admin)).statusCode).toBe(200)
  })

  it("ends a disabled operator's console session on its very next request", async () => {
    const op = await client.createOperator('finance')
    const s = await client.signIn(op)
    expect((await send('GET', `/admin/console/accounts/${accountId}`, s)).statusCode).toBe(200)
    await client.asSystem('POST', `/admin/operators/${op.id}/disable`, {})
    const after = await send('GET', `/admin/console/accounts/${accountId}`, s)
    expect(after.statusCode).toBe(303)
    expect(after.headers.location).toMatch(/sign-in/)
    expect((await send('POST', `/admin/console/accounts/${accountId}/tier`, s, s.csrfToken)).statusCode).toBe(
      401,
    )
  })
})
