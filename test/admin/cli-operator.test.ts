import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, ENGINE, type Harness } from '../helpers/harness.js'
import { pointCliAt, runCli } from '../helpers/cli.js'
import { fromBase32, totp } from '../../src/operators/totp.js'
import { operatorClient, OPERATOR_PASSWORD } from './operator-client.js'

/**
 * `svcpay operator create|list|disable` against the service over real HTTP: the set-up secret is
 * printed once and works once; disabling ends the operator's session at its next request.
 */
describe(`svcpay operator (${ENGINE})`, () => {
  let h: Harness
  let restoreCli: () => void
  const cli = async (...args: string[]) => (await runCli(...args)).out

  beforeAll(async () => {
    h = await createHarness()
    restoreCli = await pointCliAt(h)
  })
  afterAll(async () => {
    restoreCli?.()
    await h.close()
  })

  it('creates an operator with a one-time set-up secret, lists it, and disables it by email', async () => {
    const printed = await cli('operator', 'create', '--email', 'Ana@Example.com', '--role', 'support')
    const setupSecret = /set-up secret: (setup_[A-Za-z0-9_-]{43})/.exec(printed)?.[1]
    expect(setupSecret, printed).toBeDefined()
    expect(printed).toMatch(/opr_\w+ {2}ana@example\.com {2}\(support\)/)
    const { rows } = await h.c.db.query('SELECT setup_hash FROM operators WHERE email = $1', [
      'ana@example.com',
    ])
    expect(rows[0].setup_hash).not.toContain(setupSecret)

    const client = operatorClient(h.app, h.adminToken)
    const begun = await client.request('POST', '/admin/setup/begin', { body: { setupSecret } })
    expect(begun.body.otpauthUri).toMatch(
      /^otpauth:\/\/totp\/svcpay%3Aana%40example\.com\?secret=[A-Z2-7]{32}&/,
    )
    const secret = fromBase32(begun.body.totpSecret)
    const finished = await client.request('POST', '/admin/setup/finish', {
      body: { setupSecret, password: OPERATOR_PASSWORD, code: totp(secret, Date.now()) },
    })
    expect(finished.status).toBe(200)
    // The set-up secret works once.
    expect((await client.request('POST', '/admin/setup/begin', { body: { setupSecret } })).status).toBe(401)
    const session = await client.signIn({
      id: finished.body.operator.id,
      email: 'ana@example.com',
      role: 'support',
      secret,
    })
    expect((await client.request('GET', '/admin/accounts', { session })).status).toBe(200)

    expect(await cli('operator', 'list')).toMatch(/opr_\w+ {2}support +active +ana@example\.com/)
    expect(JSON.parse(await cli('operator', 'list', '--json'))).toHaveLength(1)
    expect(await cli('operator', 'disable', 'ana@example.com')).toMatch(/disabled; its sessions have ended/)
    expect((await client.request('GET', '/admin/accounts', { session })).status).toBe(401)
    await expect(cli('operator', 'create', '--email', 'not-an-email', '--role', 'viewer')).rejects.toThrow(
      /valid email/,
    )
    await expect(cli('operator', 'create', '--email', 'b@example.com', '--role', 'root')).rejects.toThrow(
      /invalid_request/,
    )
    await expect(cli('operator', 'disable', 'nobody@example.com')).rejects.toThrow(/no operator/)
  })

  it('changes a role, enables, resets with a new set-up secret, and signs an operator out', async () => {
    const client = operatorClient(h.app, h.adminToken)
    const op = await client.createOperator('viewer', 'bo@example.com')
    const session = await client.signIn(op)
    expect(await cli('operator', 'role', 'bo@example.com', 'finance')).toBe(
      `${op.id} (bo@example.com) is now finance`,
    )
    expect(await cli('operator', 'signout', op.id)).toBe(`${op.id}: 1 session(s) ended`)
    expect((await client.request('GET', '/admin/session', { session })).status).toBe(401)

    await cli('operator', 'disable', op.id)
    expect(await cli('operator', 'enable', 'bo@example.com')).toBe(
      `${op.id} (bo@example.com) enabled: active`,
    )
    const printed = await cli('operator', 'reset', 'bo@example.com')
    const setupSecret = /set-up secret: (setup_[A-Za-z0-9_-]{43})/.exec(printed)?.[1]
    expect(setupSecret, printed).toBeDefined()
    expect((await client.request('POST', '/admin/setup/begin', { body: { setupSecret } })).status).toBe(200)
    const { rows } = await h.c.db.query('SELECT action FROM admin_audit WHERE target = $1 ORDER BY id', [
      `operator:${op.id}`,
    ])
    expect(rows.map((r: any) => r.action)).toEqual(
      expect.arrayContaining([
        'operator.role',
        'operator.sessions_revoked',
        'operator.enable',
        'operator.reset',
      ]),
    )
    await expect(cli('operator', 'role', 'bo@example.com')).rejects.toThrow(/usage/)
    await expect(cli('operator', 'role', 'bo@example.com', 'root')).rejects.toThrow(/invalid_request/)
  })
})
