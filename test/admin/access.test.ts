import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, ENGINE, type Harness } from '../helpers/harness.js'
import { guardedAdminRoutes } from '../../src/operators/guard.js'
import { ADMIN_ROUTES, ROLES, roleAllows, routeKey, type Role } from '../../src/operators/permissions.js'
import { totp } from '../../src/operators/totp.js'
import { createOperatorsService } from '../../src/operators/service.js'
import { operatorClient, OPERATOR_PASSWORD, type Session } from './operator-client.js'

/**
 * Access to the operator API (issue 19): every route under /admin is in the permission table, and
 * refuses a caller without a session, a role without the permission, and a cookie session without
 * its CSRF token. Disabling an operator ends its sessions at once; failed sign-ins lock it out.
 */
const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])
const SAMPLE_PARAMS: Record<string, string> = {
  accountId: 'acc_0000000000000000000000000',
  apiKey: 'key_0000000000000000000000000',
  deliveryId: '999999',
  operatorId: 'opr_0000000000000000000000000',
}

function concrete(url: string): string {
  return url.replace(/:([A-Za-z]+)/g, (_m, name: string) => SAMPLE_PARAMS[name] ?? 'x')
}

/** `METHOD url` of every route under /admin, read from Fastify's own route tree. */
function routesFromTree(tree: string): string[] {
  const out: string[] = []
  const stack: string[] = []
  for (const line of tree.split('\n')) {
    const m = /^((?:│ {3}| {4})*)(?:├── |└── )(\S+)(?: \(([^)]+)\))?/.exec(line)
    if (!m) continue
    const depth = m[1]!.length / 4
    stack.length = depth
    const path = (stack[depth - 1] ?? '') + m[2]!
    stack.push(path)
    if (m[3] && /^\/admin[/.]/.test(path))
      for (const method of m[3].split(', ')) out.push(`${method} ${path}`)
  }
  return out
}

describe(`operator API access (${ENGINE})`, () => {
  let h: Harness
  let client: ReturnType<typeof operatorClient>
  const sessions = {} as Record<Role, Session>
  let routes: string[]

  beforeAll(async () => {
    h = await createHarness()
    client = operatorClient(h.app, h.adminToken)
    for (const role of ROLES) sessions[role] = await client.signIn(await client.createOperator(role))
    routes = guardedAdminRoutes(h.app).filter((r) => !r.startsWith('HEAD '))
  }, 60_000)
  afterAll(() => h.close())

  it('has a permission for every /admin route, and guards every route Fastify knows', () => {
    const fromTree = routesFromTree(h.app.printRoutes({ commonPrefix: false })).filter(
      (r) => !r.startsWith('HEAD '),
    )
    expect(fromTree.length).toBeGreaterThan(15)
    expect(new Set(fromTree)).toEqual(new Set(routes))
    const missing = routes.filter((r) => {
      const [method, url] = r.split(' ') as [string, string]
      return !ADMIN_ROUTES[routeKey(method, url)]
    })
    expect(missing, `add these to ADMIN_ROUTES in src/operators/permissions.ts`).toEqual([])
  })

  it('refuses every protected route without a session or token', async () => {
    for (const r of routes) {
      const [method, url] = r.split(' ') as [string, string]
      if (ADMIN_ROUTES[routeKey(method, url)]!.need === 'public') continue
      const res = await client.request(method, concrete(url), {
        body: STATE_CHANGING.has(method) ? {} : undefined,
      })
      expect(res.status, r).toBe(401)
      expect(res.body.error, r).toBe('unauthorized')
      // A cookie that is no live session is the same as none.
      const forged = await client.request(method, concrete(url), {
        session: { cookie: 'svcpay_admin=' + 'A'.repeat(43), csrfToken: 'x', setCookie: '' },
      })
      expect(forged.status, r).toBe(401)
      const wrongToken = await client.request(method, concrete(url), { token: 'not-the-admin-token-at-all' })
      expect(wrongToken.status, r).toBe(401)
    }
  })

  it('refuses a role without the permission, and admits one with it', async () => {
    let refusedSomewhere = 0
    for (const r of routes) {
      const [method, url] = r.split(' ') as [string, string]
      const need = ADMIN_ROUTES[routeKey(method, url)]!.need
      if (need === 'public' || need === 'signed-in') continue
      for (const role of ROLES) {
        // Routes that end the caller's own sessions are checked on their own below.
        const res = await client.request(method, concrete(url), {
          session: sessions[role],
          body: STATE_CHANGING.has(method) ? {} : undefined,
        })
        if (roleAllows(role, need)) expect([401, 403], `${role} ${r}: ${res.raw}`).not.toContain(res.status)
        else {
          expect(res.status, `${role} ${r}`).toBe(403)
          expect(res.body.error).toBe('forbidden')
          refusedSomewhere++
        }
      }
    }
    expect(refusedSomewhere).toBeGreaterThan(20)
  })

  it('refuses every state change of a cookie session without its CSRF token, or with another', async () => {
    const other = await client.signIn(await client.createOperator('admin'))
    for (const r of routes) {
      const [method, url] = r.split(' ') as [string, string]
      const need = ADMIN_ROUTES[routeKey(method, url)]!.need
      if (!STATE_CHANGING.has(method) || need === 'public') continue
      const none = await client.request(method, concrete(url), {
        session: sessions.admin,
        csrf: false,
        body: {},
      })
      expect(none.status, r).toBe(403)
      expect(none.body.message, r).toMatch(/x-csrf-token/)
      const foreign = await client.request(method, concrete(url), {
        session: sessions.admin,
        csrf: other.csrfToken,
        body: {},
      })
      expect(foreign.status, r).toBe(403)
    }
    // The admin session still works: nothing above was done.
    expect((await client.request('GET', '/admin/session', { session: sessions.admin })).status).toBe(200)
  })

  it('keeps the admin token working, as the operator system with the admin role', async () => {
    const res = await client.request('GET', '/admin/session', { token: h.adminToken })
    expect(res.body).toEqual({ operator: { id: 'system', email: 'system', role: 'admin' }, via: 'token' })
    const created = await client.request('POST', '/admin/accounts', {
      token: h.adminToken,
      body: { name: 'By token' },
    })
    expect(created.status).toBe(200)
    const { rows } = await h.c.db.query(
      `SELECT operator_id FROM admin_audit WHERE action = 'account.create' ORDER BY id DESC LIMIT 1`,
    )
    expect(rows[0].operator_id).toBe('system')
  })

  it('sets the cookie HttpOnly, SameSite=Strict, and Secure unless the public URL is http on loopback', async () => {
    // This harness's PUBLIC_BASE_URL is http://localhost:8080 (test/admin/session-cookie.test.ts
    // has one on https): the Host header a request carries changes nothing.
    const local = sessions.viewer.setCookie
    expect(local).toMatch(/^svcpay_admin=[A-Za-z0-9_-]{43}; /)
    expect(local).toContain('HttpOnly')
    expect(local).toContain('SameSite=Strict')
    expect(local).not.toContain('Secure')
    const remote = await client.signIn(await client.createOperator('viewer'), { host: 'console.example.com' })
    expect(remote.setCookie).not.toContain('Secure')
    expect(remote.setCookie).toContain('HttpOnly')
  })

  it('ends a disabled operator’s sessions at once', async () => {
    const op = await client.createOperator('support')
    const session = await client.signIn(op)
    expect((await client.request('GET', '/admin/accounts', { session })).status).toBe(200)
    const disabled = await client.request('POST', `/admin/operators/${op.id}/disable`, {
      session: sessions.admin,
      body: {},
    })
    expect(disabled.status).toBe(200)
    expect(disabled.body.operator.status).toBe('disabled')
    expect((await client.request('GET', '/admin/accounts', { session })).status).toBe(401)
    const again = await client.request('POST', '/admin/session', {
      body: { email: op.email, password: OPERATOR_PASSWORD, code: totp(op.secret, Date.now() + 60_000) },
    })
    expect(again.status).toBe(401)
  })

  it('signs out one session, and everywhere', async () => {
    const op = await client.createOperator('viewer')
    const first = await client.signIn(op)
    // A second sign-in needs a code of a later time step than the first: a service whose clock runs
    // a minute ahead signs in with it (its session is just as live for the app).
    const ahead = createOperatorsService({
      db: h.c.db,
      box: h.c.box,
      config: h.c.operatorsConfig,
      now: () => Date.now() + 60_000,
    })
    const signed = await ahead.signIn(
      { email: op.email, password: OPERATOR_PASSWORD, code: totp(op.secret, Date.now() + 60_000) },
      { clientIp: null, requestId: null },
    )
    const second = {
      cookie: `svcpay_admin=${signed.sessionToken}`,
      csrfToken: signed.csrfToken,
      setCookie: '',
    }
    const out = await client.request('DELETE', '/admin/session', { session: first })
    expect(out.status).toBe(200)
    expect(String(out.headers['set-cookie'])).toMatch(/^svcpay_admin=; .*Max-Age=0/)
    expect((await client.request('GET', '/admin/session', { session: first })).status).toBe(401)
    expect((await client.request('GET', '/admin/session', { session: second })).status).toBe(200)
    const everywhere = await client.request('POST', '/admin/sessions/revoke-all', {
      session: second,
      body: {},
    })
    expect(everywhere.body).toEqual({ operatorId: op.id, revoked: 1 })
    expect((await client.request('GET', '/admin/session', { session: second })).status).toBe(401)
    // Only an admin may end another operator's sessions.
    const other = await client.createOperator('viewer')
    const byViewer = await client.request('POST', '/admin/sessions/revoke-all', {
      session: sessions.viewer,
      body: { operatorId: other.id },
    })
    expect(byViewer.status).toBe(403)
  })

  it('locks an operator out after repeated failures, whatever the next attempt', async () => {
    const op = await client.createOperator('finance')
    for (let i = 0; i < 5; i++) {
      const res = await client.request('POST', '/admin/session', {
        body: { email: op.email, password: 'not the password', code: totp(op.secret, Date.now() + 30_000) },
      })
      expect(res.status).toBe(401)
    }
    const right = await client.request('POST', '/admin/session', {
      body: { email: op.email, password: OPERATOR_PASSWORD, code: totp(op.secret, Date.now() + 30_000) },
    })
    expect(right.status).toBe(401)
    expect(right.body.message).toBe('Email, password or code not accepted')
    const { rows } = await h.c.db.query(
      `SELECT action FROM admin_audit WHERE target = $1 AND action = 'operator.locked'`,
      [`operator:${op.id}`],
    )
    expect(rows).toHaveLength(1)
  })
})
