import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness } from '../../test/helpers/harness.js'
import { Sql, toQuery } from '../db/sql.js'
import {
  createOperatorsService,
  lockoutMs,
  operatorsConfigFromEnv,
  type OperatorsService,
} from './service.js'
import { fromBase32, totp, TOTP_STEP_S } from './totp.js'
import { DECOY_HASH, hashPassword, verifyPassword } from './password.js'

const ctx = { clientIp: '203.0.113.7', requestId: 'req-test' }
const PASSWORD = 'correct horse battery staple'

describe('operators: set-up, sign-in, lockout, sessions', () => {
  let h: Harness
  let clock = 1_800_000_000_000
  let ops: OperatorsService
  const config = operatorsConfigFromEnv({})
  const step = () => (clock += TOTP_STEP_S * 1000)

  /** A new active operator; returns its email and TOTP secret. */
  async function activeOperator(email: string, role: 'viewer' | 'admin' = 'viewer') {
    const created = await ops.create({ email, role })
    const begun = await ops.setupBegin(created.setupSecret, ctx)
    const secret = fromBase32(begun.totpSecret)
    await ops.setupFinish(
      { setupSecret: created.setupSecret, password: PASSWORD, code: totp(secret, clock) },
      ctx,
    )
    step()
    return { id: created.operator.id, email, secret }
  }

  beforeAll(async () => {
    h = await createHarness()
    ops = createOperatorsService({ db: h.c.db, box: h.c.box, config, now: () => clock })
  })
  afterAll(() => h.close())

  it('keeps passwords as salted scrypt with their parameters, never in clear', async () => {
    const a = await hashPassword(PASSWORD)
    const b = await hashPassword(PASSWORD)
    expect(a).toMatch(/^scrypt\$15\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/)
    expect(a).not.toBe(b)
    expect(await verifyPassword(PASSWORD, a)).toBe(true)
    expect(await verifyPassword(PASSWORD + '!', a)).toBe(false)
  })

  it('stores only hashes of the set-up secret and a sealed TOTP secret', async () => {
    const created = await ops.create({ email: 'Stored@Example.com', role: 'support' })
    expect(created.operator.email).toBe('stored@example.com')
    const begun = await ops.setupBegin(created.setupSecret, ctx)
    const { rows } = await h.c.db.query('SELECT * FROM operators WHERE id = $1', [created.operator.id])
    const text = JSON.stringify(rows[0], (_k, v) => (typeof v === 'bigint' ? v.toString() : v))
    expect(text).not.toContain(created.setupSecret)
    expect(text).not.toContain(begun.totpSecret)
    await expect(ops.create({ email: 'stored@example.com', role: 'viewer' })).rejects.toMatchObject({
      code: 'invalid_state',
    })
  })

  it('needs a correct code to finish set-up, and the set-up secret works once', async () => {
    const created = await ops.create({ email: 'setup@example.com', role: 'viewer' })
    const begun = await ops.setupBegin(created.setupSecret, ctx)
    const secret = fromBase32(begun.totpSecret)
    const wrong = totp(secret, clock + 10 * TOTP_STEP_S * 1000)
    await expect(
      ops.setupFinish({ setupSecret: created.setupSecret, password: PASSWORD, code: wrong }, ctx),
    ).rejects.toMatchObject({ code: 'unauthorized' })
    await expect(
      ops.setupFinish(
        { setupSecret: created.setupSecret, password: 'short', code: totp(secret, clock) },
        ctx,
      ),
    ).rejects.toMatchObject({
      code: 'invalid_request',
    })
    const operator = await ops.setupFinish(
      { setupSecret: created.setupSecret, password: PASSWORD, code: totp(secret, clock) },
      ctx,
    )
    expect(operator.status).toBe('active')
    await expect(ops.setupBegin(created.setupSecret, ctx)).rejects.toMatchObject({ code: 'unauthorized' })
  })

  it('refuses an expired set-up secret', async () => {
    const created = await ops.create({ email: 'late@example.com', role: 'viewer' })
    clock += config.setupTtlMs
    await expect(ops.setupBegin(created.setupSecret, ctx)).rejects.toMatchObject({ code: 'unauthorized' })
  })

  it('signs in with password and TOTP, and refuses a replayed code', async () => {
    const op = await activeOperator('replay@example.com')
    const code = totp(op.secret, clock)
    const signed = await ops.signIn({ email: op.email, password: PASSWORD, code }, ctx)
    expect(signed.sessionToken).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(await ops.session(signed.sessionToken)).toMatchObject({
      operatorId: op.id,
      role: 'viewer',
      via: 'session',
    })
    // The same code again, within its window: refused.
    await expect(ops.signIn({ email: op.email, password: PASSWORD, code }, ctx)).rejects.toMatchObject({
      code: 'unauthorized',
    })
    // A code of the previous step is older than the one used: refused too.
    await expect(
      ops.signIn({ email: op.email, password: PASSWORD, code: totp(op.secret, clock - 30_000) }, ctx),
    ).rejects.toMatchObject({
      code: 'unauthorized',
    })
    // The next step's code is accepted (drift of one step).
    await ops.signIn({ email: op.email, password: PASSWORD, code: totp(op.secret, clock + 30_000) }, ctx)
    const { rows } = await h.c.db.query('SELECT id_hash FROM operator_sessions WHERE operator_id = $1', [
      op.id,
    ])
    expect(rows.map((r) => r.id_hash)).not.toContain(signed.sessionToken)
  })

  it('locks out after failed attempts, doubling the wait, and says nothing about why', async () => {
    const op = await activeOperator('lock@example.com')
    for (let i = 0; i < config.lockAfterFailures; i++) {
      await expect(
        ops.signIn({ email: op.email, password: 'wrong password', code: totp(op.secret, clock) }, ctx),
      ).rejects.toMatchObject({
        code: 'unauthorized',
        message: 'Email, password or code not accepted',
      })
    }
    // Locked: the right password and code are refused with the same answer.
    await expect(
      ops.signIn({ email: op.email, password: PASSWORD, code: totp(op.secret, clock) }, ctx),
    ).rejects.toMatchObject({
      message: 'Email, password or code not accepted',
    })
    // Counted per email and client address (ctx's), not on the operator's row.
    const failures = `SELECT failed_attempts, locked_until FROM operator_sign_in_failures
                        WHERE email = $1 AND client_net = $2`
    const { rows } = await h.c.db.query(failures, [op.email, ctx.clientIp])
    expect(Number(rows[0].failed_attempts)).toBe(config.lockAfterFailures)
    expect(Number(rows[0].locked_until)).toBe(clock + config.lockBaseMs)
    // After the lock, one more failure locks for twice as long.
    clock += config.lockBaseMs + 1
    await expect(
      ops.signIn({ email: op.email, password: 'wrong again', code: totp(op.secret, clock) }, ctx),
    ).rejects.toThrow()
    const after = await h.c.db.query(failures, [op.email, ctx.clientIp])
    expect(Number(after.rows[0].locked_until)).toBe(clock + 2 * config.lockBaseMs)
    clock += 2 * config.lockBaseMs + 1
    await ops.signIn({ email: op.email, password: PASSWORD, code: totp(op.secret, clock) }, ctx)
    // A success forgets the failures of the address it came from.
    const reset = await h.c.db.query(failures, [op.email, ctx.clientIp])
    expect(reset.rows).toEqual([])
    const audit = await h.c.db.query(`SELECT action FROM admin_audit WHERE target = $1 ORDER BY id`, [
      `operator:${op.id}`,
    ])
    expect(audit.rows.map((r) => r.action)).toEqual([
      'operator.setup_begin',
      'operator.setup',
      'operator.locked',
      'operator.locked',
      'operator.sign_in',
    ])
  })

  it('backs off up to an hour', () => {
    expect(lockoutMs(4, config)).toBe(0)
    expect(lockoutMs(5, config)).toBe(30_000)
    expect(lockoutMs(6, config)).toBe(60_000)
    expect(lockoutMs(12, config)).toBe(3_600_000)
    expect(lockoutMs(1000, config)).toBe(3_600_000)
  })

  it('ends a session after the idle time-out, and after the absolute one however busy', async () => {
    const op = await activeOperator('timeouts@example.com')
    const idle = await ops.signIn({ email: op.email, password: PASSWORD, code: totp(op.secret, clock) }, ctx)
    clock += config.sessionIdleMs - 1000
    expect(await ops.session(idle.sessionToken)).toBeDefined()
    clock += config.sessionIdleMs - 1000
    expect(await ops.session(idle.sessionToken)).toBeDefined()
    clock += config.sessionIdleMs + 1
    expect(await ops.session(idle.sessionToken)).toBeUndefined()

    step()
    const busy = await ops.signIn({ email: op.email, password: PASSWORD, code: totp(op.secret, clock) }, ctx)
    const start = clock
    while (clock + config.sessionIdleMs / 2 < start + config.sessionMaxMs) {
      clock += config.sessionIdleMs / 2
      expect(await ops.session(busy.sessionToken)).toBeDefined()
    }
    clock = start + config.sessionMaxMs
    expect(await ops.session(busy.sessionToken)).toBeUndefined()
  })

  it('ends every session of a disabled operator at once, and refuses its sign-in', async () => {
    const op = await activeOperator('disabled@example.com')
    const a = await ops.signIn({ email: op.email, password: PASSWORD, code: totp(op.secret, clock) }, ctx)
    expect(await ops.session(a.sessionToken)).toBeDefined()
    // Even without the revocation, the session query reads the operator's status.
    await h.c.db.query(`UPDATE operators SET status = 'disabled' WHERE id = $1`, [op.id])
    expect(await ops.session(a.sessionToken)).toBeUndefined()
    await h.c.db.query(`UPDATE operators SET status = 'active' WHERE id = $1`, [op.id])
    expect(await ops.session(a.sessionToken)).toBeDefined()
    const changed = await ops.disable(op.id)
    expect(changed).toMatchObject({ before: { status: 'active' }, after: { status: 'disabled' } })
    expect(await ops.session(a.sessionToken)).toBeUndefined()
    step()
    await expect(
      ops.signIn({ email: op.email, password: PASSWORD, code: totp(op.secret, clock) }, ctx),
    ).rejects.toMatchObject({ code: 'unauthorized' })
  })

  it('signs out one session or all of them', async () => {
    const op = await activeOperator('signout@example.com')
    const a = await ops.signIn({ email: op.email, password: PASSWORD, code: totp(op.secret, clock) }, ctx)
    step()
    const b = await ops.signIn({ email: op.email, password: PASSWORD, code: totp(op.secret, clock) }, ctx)
    step()
    const c = await ops.signIn({ email: op.email, password: PASSWORD, code: totp(op.secret, clock) }, ctx)
    const actorA = (await ops.session(a.sessionToken))!
    expect(await ops.signOut(actorA.sessionHash!)).toBe(true)
    expect(await ops.session(a.sessionToken)).toBeUndefined()
    expect(await ops.session(b.sessionToken)).toBeDefined()
    expect(await ops.revokeAll(op.id)).toBe(2)
    expect(await ops.session(b.sessionToken)).toBeUndefined()
    expect(await ops.session(c.sessionToken)).toBeUndefined()
  })

  it('refuses an unknown email like a wrong password', async () => {
    await expect(
      ops.signIn({ email: 'nobody@example.com', password: PASSWORD, code: '123456' }, ctx),
    ).rejects.toMatchObject({
      code: 'unauthorized',
      message: 'Email, password or code not accepted',
    })
  })

  it('a lock from one address keeps out that address only: a clean one still signs in', async () => {
    const op = await activeOperator('targeted@example.com', 'admin')
    const attacker = { clientIp: '203.0.113.66', requestId: 'req-attacker' }
    const office = { clientIp: '198.51.100.20', requestId: 'req-office' }
    for (let i = 0; i < config.lockAfterFailures; i++)
      await expect(
        ops.signIn({ email: op.email, password: 'a guess', code: '000000' }, attacker),
      ).rejects.toMatchObject({ code: 'unauthorized' })
    // Locked where the failures came from, even with the right password and code...
    await expect(
      ops.signIn({ email: op.email, password: PASSWORD, code: totp(op.secret, clock) }, attacker),
    ).rejects.toMatchObject({ message: 'Email, password or code not accepted' })
    // ...while the operator, from an address that has not failed, is let in.
    const signed = await ops.signIn(
      { email: op.email, password: PASSWORD, code: totp(op.secret, clock) },
      office,
    )
    expect(signed.operator.id).toBe(op.id)
    // That success does not lift the lock of the address that failed (a fresh code, same clock).
    await expect(
      ops.signIn({ email: op.email, password: PASSWORD, code: totp(op.secret, clock + 30_000) }, attacker),
    ).rejects.toMatchObject({ code: 'unauthorized' })
    const audit = await h.c.db.query(
      `SELECT client_ip FROM admin_audit WHERE target = $1 AND action = 'operator.locked'`,
      [`operator:${op.id}`],
    )
    expect(audit.rows.map((r) => r.client_ip)).toEqual([attacker.clientIp])
  })

  it('counts IPv6 failures per /64, so one network cannot spread them over its addresses', async () => {
    const op = await activeOperator('ipv6@example.com')
    for (let i = 0; i < config.lockAfterFailures; i++)
      await expect(
        ops.signIn(
          { email: op.email, password: 'a guess', code: '000000' },
          { clientIp: `2001:db8:1:2::${(i + 1).toString(16)}`, requestId: null },
        ),
      ).rejects.toThrow()
    await expect(
      ops.signIn(
        { email: op.email, password: PASSWORD, code: totp(op.secret, clock) },
        { clientIp: '2001:db8:1:2:ffff::1', requestId: null },
      ),
    ).rejects.toMatchObject({ code: 'unauthorized' })
    await ops.signIn(
      { email: op.email, password: PASSWORD, code: totp(op.secret, clock) },
      { clientIp: '2001:db8:1:3::1', requestId: null },
    )
  })

  it('does the same work for an unknown email as for a known one with a wrong password', async () => {
    const op = await activeOperator('same-work@example.com')
    // The statements each failure sends, with the parameters that name the operator left out.
    const statements: string[] = []
    const record = (q: { query: (...a: any[]) => Promise<any> }) => ({
      ...q,
      query: (text: any, params?: unknown[]) => {
        statements.push((text instanceof Sql ? toQuery(text).text : String(text)).replace(/\s+/g, ' '))
        return q.query(text, params)
      },
    })
    const db = h.c.db
    const recorded = {
      ...record(db),
      engine: db.engine,
      listen: db.listen.bind(db),
      close: db.close.bind(db),
      notify: db.notify.bind(db),
      tx: <T>(fn: (q: any) => Promise<T>) => db.tx((q) => fn(record(q))),
    }
    const watched = createOperatorsService({ db: recorded as any, box: h.c.box, config, now: () => clock })
    const from = { clientIp: '192.0.2.99', requestId: null }
    const run = async (email: string) => {
      statements.length = 0
      await expect(
        watched.signIn({ email, password: 'a wrong password', code: '123456' }, from),
      ).rejects.toMatchObject({ code: 'unauthorized', message: 'Email, password or code not accepted' })
      return [...statements]
    }
    const known = await run(op.email)
    const unknown = await run('nobody-here@example.com')
    expect(unknown).toEqual(known)
    expect(known.some((t) => /operator_sign_in_failures/.test(t))).toBe(true)
    // And the password check is scrypt with the same parameters either way.
    const stored = (await db.query('SELECT password_hash FROM operators WHERE id = $1', [op.id])).rows[0]
    expect(DECOY_HASH.split('$').slice(0, 4)).toEqual(String(stored.password_hash).split('$').slice(0, 4))
  })
})
