import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, ENGINE, type Harness } from '../helpers/harness.js'
import { fromBase32, totp } from '../../src/operators/totp.js'
import { operatorClient, OPERATOR_PASSWORD, type Session } from './operator-client.js'

/**
 * Managing operators after their creation: a new role in force at the operator's next request, a
 * disabled operator enabled again, a reset that clears the password and second factor and issues a
 * new set-up secret, and an admin ending another operator's sessions. Admin only, each audited.
 */
describe(`operator management (${ENGINE})`, () => {
  let h: Harness
  let client: ReturnType<typeof operatorClient>
  let admin: Session

  beforeAll(async () => {
    h = await createHarness()
    client = operatorClient(h.app, h.adminToken)
    admin = await client.signIn(await client.createOperator('admin'))
  })
  afterAll(async () => h?.close())

  const lastAudit = async (action: string) =>
    (await h.c.db.query('SELECT * FROM admin_audit WHERE action = $1 ORDER BY id DESC LIMIT 1', [action]))
      .rows[0]

  it("changes a role, in force at the operator's very next request", async () => {
    const op = await client.createOperator('viewer')
    const session = await client.signIn(op)
    expect((await client.request('GET', '/admin/audit', { session })).status).toBe(403)
    const res = await client.request('POST', `/admin/operators/${op.id}/role`, {
      session: admin,
      body: { role: 'compliance' },
    })
    expect(res.status, res.raw).toBe(200)
    expect(res.body.operator).toMatchObject({ id: op.id, role: 'compliance', status: 'active' })
    expect((await client.request('GET', '/admin/audit', { session })).status).toBe(200)
    expect(await lastAudit('operator.role')).toMatchObject({
      target: `operator:${op.id}`,
      before: { role: 'viewer' },
      after: { role: 'compliance' },
    })
    const bad = await client.request('POST', `/admin/operators/${op.id}/role`, {
      session: admin,
      body: { role: 'owner' },
    })
    expect(bad.status).toBe(400)
    const missing = await client.request('POST', '/admin/operators/opr_nobody/role', {
      session: admin,
      body: { role: 'viewer' },
    })
    expect(missing.status).toBe(404)
  })

  it('keeps one active admin: the last one can be neither demoted, reset nor disabled', async () => {
    const h2 = await createHarness()
    try {
      const c2 = operatorClient(h2.app, h2.adminToken)
      const only = await c2.createOperator('admin')
      const refused = await c2.request('POST', `/admin/operators/${only.id}/role`, {
        token: h2.adminToken,
        body: { role: 'viewer' },
      })
      expect(refused.status).toBe(409)
      expect(refused.body.error).toBe('invalid_state')
      for (const action of ['reset', 'disable'])
        expect(
          (await c2.request('POST', `/admin/operators/${only.id}/${action}`, { token: h2.adminToken }))
            .status,
        ).toBe(409)
      const second = await c2.createOperator('admin')
      expect(
        (
          await c2.request('POST', `/admin/operators/${only.id}/role`, {
            token: h2.adminToken,
            body: { role: 'viewer' },
          })
        ).status,
      ).toBe(200)
      // The refused attempts changed nothing and wrote no row.
      const { rows } = await h2.c.db.query(
        "SELECT count(*)::int AS n FROM admin_audit WHERE action = 'operator.role'",
      )
      expect(rows[0].n).toBe(1)
      expect(
        (
          await c2.request('POST', `/admin/operators/${second.id}/role`, {
            token: h2.adminToken,
            body: { role: 'finance' },
          })
        ).status,
      ).toBe(409)
    } finally {
      await h2.close()
    }
  })

  it('enables a disabled operator, which can sign in again', async () => {
    // Signed in only after: each sign-in spends a TOTP step, and the set-up spent the current one.
    const op = await client.createOperator('support')
    expect(
      (await client.request('POST', `/admin/operators/${op.id}/disable`, { session: admin })).status,
    ).toBe(200)
    await expect(client.signIn(op)).rejects.toThrow(/401/)
    const enabled = await client.request('POST', `/admin/operators/${op.id}/enable`, { session: admin })
    expect(enabled.status).toBe(200)
    expect(enabled.body.operator).toMatchObject({ status: 'active', disabledAt: null })
    expect(
      (await client.request('POST', `/admin/operators/${op.id}/enable`, { session: admin })).status,
    ).toBe(409)
    const fresh = await client.signIn(op)
    expect((await client.request('GET', '/admin/session', { session: fresh })).status).toBe(200)
    expect(await lastAudit('operator.enable')).toMatchObject({
      target: `operator:${op.id}`,
      before: { status: 'disabled' },
      after: { status: 'active' },
    })
  })

  it('resets an operator: old password and code refused, sessions ended, a new set-up works once', async () => {
    const op = await client.createOperator('finance')
    const old = await client.signIn(op)
    const res = await client.request('POST', `/admin/operators/${op.id}/reset`, { session: admin })
    expect(res.status, res.raw).toBe(200)
    expect(res.body.operator).toMatchObject({ id: op.id, status: 'pending' })
    const setupSecret = res.body.setupSecret as string
    expect(setupSecret).toMatch(/^setup_[A-Za-z0-9_-]{43}$/)
    expect((await client.request('GET', '/admin/session', { session: old })).status).toBe(401)
    const signIn = await client.request('POST', '/admin/session', {
      body: { email: op.email, password: OPERATOR_PASSWORD, code: totp(op.secret, Date.now() + 60_000) },
    })
    expect(signIn.status).toBe(401)
    // The secret is nowhere in the trail; the row says what was done.
    const row = await lastAudit('operator.reset')
    expect(JSON.stringify(row, (_k, v) => (typeof v === 'bigint' ? String(v) : v))).not.toContain(
      setupSecret.slice(6),
    )
    expect(row).toMatchObject({
      before: { status: 'active' },
      after: { status: 'pending', sessionsEnded: true },
    })

    const begun = await client.request('POST', '/admin/setup/begin', { body: { setupSecret } })
    expect(begun.status).toBe(200)
    const secret = fromBase32(begun.body.totpSecret)
    expect(secret.equals(op.secret)).toBe(false)
    const finished = await client.request('POST', '/admin/setup/finish', {
      body: { setupSecret, password: 'another long enough password', code: totp(secret, Date.now()) },
    })
    expect(finished.status).toBe(200)
    expect((await client.request('POST', '/admin/setup/begin', { body: { setupSecret } })).status).toBe(401)
    const again = await client.request('POST', '/admin/session', {
      body: {
        email: op.email,
        password: 'another long enough password',
        code: totp(secret, Date.now() + 30_000),
      },
    })
    expect(again.status).toBe(200)

    // A disabled operator is enabled first, then reset.
    await client.request('POST', `/admin/operators/${op.id}/disable`, { session: admin })
    expect((await client.request('POST', `/admin/operators/${op.id}/reset`, { session: admin })).status).toBe(
      409,
    )
  })

  it("lets only an admin end another operator's sessions everywhere", async () => {
    const target = await client.createOperator('viewer')
    const a = await client.signIn(target)
    const support = await client.signIn(await client.createOperator('support'))
    const refused = await client.request('POST', '/admin/sessions/revoke-all', {
      session: support,
      body: { operatorId: target.id },
    })
    expect(refused.status).toBe(403)
    expect((await client.request('GET', '/admin/session', { session: a })).status).toBe(200)
    const res = await client.request('POST', '/admin/sessions/revoke-all', {
      session: admin,
      body: { operatorId: target.id },
    })
    expect(res.body).toEqual({ operatorId: target.id, revoked: 1 })
    expect((await client.request('GET', '/admin/session', { session: a })).status).toBe(401)
    expect((await client.request('GET', '/admin/session', { session: admin })).status).toBe(200)
    expect(await lastAudit('operator.sessions_revoked')).toMatchObject({ target: `operator:${target.id}` })
  })

  it('refuses every management route to a role without operators.manage, and without CSRF', async () => {
    const op = await client.createOperator('viewer')
    const compliance = await client.signIn(await client.createOperator('compliance'))
    for (const [path, body] of [
      ['role', { role: 'admin' }],
      ['enable', undefined],
      ['reset', undefined],
    ] as const) {
      const url = `/admin/operators/${op.id}/${path}`
      expect((await client.request('POST', url, { session: compliance, body })).status).toBe(403)
      expect((await client.request('POST', url, { session: admin, body, csrf: false })).status).toBe(403)
    }
    const { rows } = await h.c.db.query('SELECT role, status FROM operators WHERE id = $1', [op.id])
    expect(rows[0]).toEqual({ role: 'viewer', status: 'active' })
  })
})
