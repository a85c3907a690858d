import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, ENGINE, type Harness } from '../helpers/harness.js'
import { operatorClient, type Session, type TestOperator } from './operator-client.js'
import { csvField } from '../../src/operators/audit.js'

/**
 * The audit trail (issue 19): one row per state-changing admin action, written in the same
 * transaction as the change, append-only in the database, read with filters and exported as CSV.
 */
describe(`admin audit trail (${ENGINE})`, () => {
  let h: Harness
  let client: ReturnType<typeof operatorClient>
  let admin: TestOperator
  let session: Session

  const json = (value: unknown) =>
    JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))
  const rows = async (where = 'TRUE', params: unknown[] = []) =>
    (await h.c.db.query(`SELECT * FROM admin_audit WHERE ${where} ORDER BY id`, params)).rows

  beforeAll(async () => {
    h = await createHarness()
    client = operatorClient(h.app, h.adminToken)
    admin = await client.createOperator('admin')
    session = await client.signIn(admin)
  }, 60_000)
  afterAll(() => h.close())

  it('is append-only in the database: UPDATE, DELETE and TRUNCATE are refused', async () => {
    expect((await rows()).length).toBeGreaterThan(0)
    await expect(h.c.db.query(`UPDATE admin_audit SET action = 'changed'`)).rejects.toThrow(
      /never changed or deleted/,
    )
    await expect(h.c.db.query('DELETE FROM admin_audit')).rejects.toThrow(/never changed or deleted/)
    await expect(h.c.db.query('TRUNCATE admin_audit')).rejects.toThrow(/never changed or deleted/)
    await expect(h.c.db.tx((q) => q.query(`DELETE FROM admin_audit WHERE id = 1`))).rejects.toThrow(
      /never changed or deleted/,
    )
  })

  it('records who did what to what, before and after, from where, and never a secret', async () => {
    const created = await client.request('POST', '/admin/accounts', {
      session,
      body: { name: 'Audited Ltd' },
    })
    expect(created.status).toBe(200)
    const { accountId, apiKey, apiSecret } = created.body
    const tier = await client.request('PUT', `/admin/accounts/${accountId}/tier`, {
      session,
      body: { tier: 'premium' },
    })
    expect(tier.status).toBe(200)
    const key = await client.request('POST', '/admin/keys', { session, body: { accountId } })
    const revoked = await client.request('POST', `/admin/keys/${apiKey}/revoke`, { session, body: {} })
    expect(revoked.status).toBe(200)

    const trail = await rows('operator_id = $1 AND action LIKE $2', [admin.id, 'account.%'])
    expect(trail.map((r) => r.action)).toEqual(['account.create', 'account.tier'])
    const [create, tierRow] = trail
    expect(create).toMatchObject({
      operator_email: admin.email,
      target: null,
      before: null,
      client_ip: '127.0.0.1',
    })
    expect(create.request_id).toMatch(/^req-/)
    expect(Number(create.at)).toBeGreaterThan(Date.now() - 60_000)
    expect(create.after).toMatchObject({
      accountId,
      apiKey,
      apiSecret: '[redacted]',
      account: { displayName: 'Audited Ltd' },
    })
    expect(tierRow).toMatchObject({
      target: `accountId=${accountId}`,
      before: { tier: 'standard' },
      after: { accountId, tier: 'premium' },
    })
    const keyRows = await rows('operator_id = $1 AND action LIKE $2', [admin.id, 'key.%'])
    expect(keyRows.map((r) => r.action)).toEqual(['key.create', 'key.revoke'])
    expect(keyRows[0].target).toBe(`accountId=${accountId}`)
    expect(keyRows[1]).toMatchObject({ target: `apiKey=${apiKey}`, before: { accountId, revokedAt: null } })
    const everything = json(await rows())
    for (const secret of [apiSecret, key.body.apiSecret]) expect(everything).not.toContain(secret)
  })

  it('writes the row in the change’s own transaction: no row without the change, no change without the row', async () => {
    const { accountId } = (
      await client.request('POST', '/admin/accounts', { session, body: { name: 'Atomic' } })
    ).body
    // A refused change leaves no audit row.
    const before = (await rows()).length
    const missing = await client.request('PUT', '/admin/accounts/acc_0000000000000000000000000/tier', {
      session,
      body: { tier: 'premium' },
    })
    expect(missing.status).toBe(404)
    expect((await rows()).length).toBe(before)
    // An audit row the database refuses undoes the change it records.
    await h.c.db.query(
      `ALTER TABLE admin_audit ADD CONSTRAINT audit_test_refuse CHECK (action <> 'account.tier') NOT VALID`,
    )
    try {
      const res = await client.request('PUT', `/admin/accounts/${accountId}/tier`, {
        session,
        body: { tier: 'premium' },
      })
      expect(res.status).toBe(500)
      const { rows: account } = await h.c.db.query('SELECT tier FROM accounts WHERE id = $1', [accountId])
      expect(account[0].tier).toBe('standard')
      // The account creation joins its transaction the same way (its wallets are written by a nested transaction).
      await h.c.db.query(`ALTER TABLE admin_audit DROP CONSTRAINT audit_test_refuse`)
      await h.c.db.query(
        `ALTER TABLE admin_audit ADD CONSTRAINT audit_test_refuse CHECK (action <> 'account.create') NOT VALID`,
      )
      const accountsBefore = (await h.c.db.query('SELECT count(*) AS n FROM accounts')).rows[0].n
      const walletsBefore = (await h.c.db.query('SELECT count(*) AS n FROM ledger_accounts')).rows[0].n
      expect(
        (await client.request('POST', '/admin/accounts', { session, body: { name: 'Never' } })).status,
      ).toBe(500)
      expect((await h.c.db.query('SELECT count(*) AS n FROM accounts')).rows[0].n).toBe(accountsBefore)
      expect((await h.c.db.query('SELECT count(*) AS n FROM ledger_accounts')).rows[0].n).toBe(walletsBefore)
    } finally {
      await h.c.db.query(`ALTER TABLE admin_audit DROP CONSTRAINT IF EXISTS audit_test_refuse`)
    }
    expect(
      (
        await client.request('PUT', `/admin/accounts/${accountId}/tier`, {
          session,
          body: { tier: 'premium' },
        })
      ).status,
    ).toBe(200)
  })

  it('records the amounts of a sandbox action as exact decimals, not as objects', async () => {
    const owner = await h.createAccount({ name: 'Sandbox audited' })
    const funded = await client.request('POST', '/admin/sandbox/fund', {
      session,
      body: { accountId: owner.accountId, ccy: 'BTC', amount: '0.2' },
    })
    expect(funded.status, funded.raw).toBe(200)
    const [row] = await rows('action = $1 AND target = $2', [
      'POST /admin/sandbox/fund',
      `accountId=${owner.accountId}`,
    ])
    expect(row, 'the fund is audited').toBeDefined()
    expect(JSON.stringify(row.after)).not.toContain('"text"')
    expect(row.after.data).toMatchObject({ ccy: 'BTC', amount: '0.2', availableBalance: '0.2' })
  })

  it('records operator management, sign-in and sign-out', async () => {
    const op = await client.createOperator('viewer')
    const s = await client.signIn(op)
    await client.request('DELETE', '/admin/session', { session: s })
    await client.request('POST', `/admin/operators/${op.id}/disable`, { session, body: {} })
    const trail = await rows('target = $1', [`operator:${op.id}`])
    expect(trail.map((r) => [r.action, r.operator_id])).toEqual([
      ['operator.create', 'system'],
      ['operator.setup_begin', op.id],
      ['operator.setup', op.id],
      ['operator.sign_in', op.id],
      ['operator.sign_out', op.id],
      ['operator.disable', admin.id],
    ])
    expect(trail[5]).toMatchObject({ before: { status: 'active' }, after: { status: 'disabled' } })
    expect(json(trail)).not.toMatch(/setup_[A-Za-z0-9_-]{20}/)
  })

  it('lists with filters and cursor paging, newest first', async () => {
    const viewer = await client.signIn(await client.createOperator('viewer'))
    expect((await client.request('GET', '/admin/audit', { session: viewer })).status).toBe(403)
    const compliance = await client.signIn(await client.createOperator('compliance'))
    const all = (await client.request('GET', '/admin/audit?limit=200', { session: compliance })).body.data
    const ids = all.map((r: any) => Number(r.id))
    expect(ids).toEqual([...ids].sort((a, b) => b - a))

    const byOperator = (
      await client.request('GET', `/admin/audit?operator=${encodeURIComponent(admin.email)}`, {
        session: compliance,
      })
    ).body
    expect(byOperator.data.length).toBeGreaterThan(3)
    expect(byOperator.data.every((r: any) => r.operatorId === admin.id)).toBe(true)
    const byAction = (await client.request('GET', '/admin/audit?action=key.revoke', { session: compliance }))
      .body.data
    expect(byAction.map((r: any) => r.action)).toEqual(['key.revoke'])
    const target = byAction[0].target
    expect(
      (
        await client.request('GET', `/admin/audit?target=${encodeURIComponent(target)}`, {
          session: compliance,
        })
      ).body.data,
    ).toHaveLength(1)
    const at = byAction[0].at
    const window = (
      await client.request('GET', `/admin/audit?from=${at}&to=${at + 1}&action=key.revoke`, {
        session: compliance,
      })
    ).body.data
    expect(window).toHaveLength(1)
    const iso = new Date(at + 1).toISOString()
    expect(
      (
        await client.request('GET', `/admin/audit?from=${encodeURIComponent(iso)}&action=key.revoke`, {
          session: compliance,
        })
      ).body.data,
    ).toHaveLength(0)

    const seen: string[] = []
    let cursor: string | null = null
    do {
      const res: any = await client.request(
        'GET',
        `/admin/audit?limit=3${cursor ? `&cursor=${cursor}` : ''}`,
        { session: compliance },
      )
      expect(res.status).toBe(200)
      expect(res.body.data.length).toBeLessThanOrEqual(3)
      seen.push(...res.body.data.map((r: any) => r.id))
      cursor = res.body.nextCursor
    } while (cursor)
    expect(seen).toEqual(all.map((r: any) => r.id).slice(0, seen.length))
    expect(seen.length).toBeGreaterThanOrEqual(all.length)

    expect((await client.request('GET', '/admin/audit?cursor=bogus', { session: compliance })).status).toBe(
      400,
    )
    expect((await client.request('GET', '/admin/audit?from=yesterday', { session: compliance })).status).toBe(
      400,
    )
    expect((await client.request('GET', '/admin/audit?limit=0', { session: compliance })).status).toBe(400)
  })

  it('exports CSV in batches, quoted and safe to open in a spreadsheet', async () => {
    // More rows than one batch of the export, written as audit rows of a made-up action.
    await h.c.db.query(
      `INSERT INTO admin_audit (at, operator_id, operator_email, action, target, after)
       SELECT $1::bigint + g, 'opr_x', 'x@example.com', 'test.bulk', '=HYPERLINK("x")', '{"note":"a, \\"b\\""}'::jsonb
         FROM generate_series(1, 2500) AS g`,
      [Date.now()],
    )
    const res = await client.request('GET', '/admin/audit.csv?action=test.bulk', { session })
    expect(res.status).toBe(200)
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8')
    expect(res.headers['content-disposition']).toContain('attachment')
    const lines = res.raw.split('\r\n').filter(Boolean)
    expect(lines[0]).toBe('id,at,operator_id,operator_email,action,target,before,after,client_ip,request_id')
    expect(lines).toHaveLength(2501)
    expect(lines[1]).toMatch(/^\d+,\d{4}-\d{2}-\d{2}T[^,]+Z,opr_x,x@example\.com,/)
    expect(lines[1]!.endsWith(`,test.bulk,"'=HYPERLINK(""x"")",,"{""note"":""a, \\""b\\""""}",,`)).toBe(true)
    const all = await client.request('GET', '/admin/audit.csv', { session })
    expect(all.raw.split('\r\n').filter(Boolean).length).toBeGreaterThan(2501)
  })

  it('quotes CSV fields only where needed', () => {
    expect(csvField('plain')).toBe('plain')
    expect(csvField(null)).toBe('')
    expect(csvField('a,b')).toBe('"a,b"')
    expect(csvField('say "hi"')).toBe('"say ""hi"""')
    expect(csvField('line\nbreak')).toBe('"line\nbreak"')
    expect(csvField('+1')).toBe("'+1")
    expect(csvField('@cmd')).toBe("'@cmd")
    expect(csvField({ a: 1 })).toBe('"{""a"":1}"')
  })
})

describe(`admin audit of awkward text (${ENGINE})`, () => {
  it('keeps a change whose values jsonb cannot hold as they are (lone surrogates, NUL)', async () => {
    const h = await createHarness()
    try {
      const client = operatorClient(h.app, h.adminToken)
      const res = await client.request('POST', '/admin/accounts', {
        token: h.adminToken,
        body: { name: 'a\ud800b' },
      })
      expect(res.status).toBe(200)
      const { rows } = await h.c.db.query(`SELECT after FROM admin_audit WHERE action = 'account.create'`)
      expect(rows[0].after.account.displayName).toBe('a\ufffdb')
      const { redact } = await import('../../src/operators/audit.js')
      expect(redact({ ['k\udc00']: 'x\u0000y' })).toEqual({ ['k\ufffd']: 'x\ufffdy' })
    } finally {
      await h.close()
    }
  })
})
