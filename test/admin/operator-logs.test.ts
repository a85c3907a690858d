import { Writable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAppHarness, type AppHarness } from '../helpers/app-harness.js'
import { ENGINE } from '../helpers/harness.js'
import { fromBase32, totp } from '../../src/operators/totp.js'
import { operatorClient, OPERATOR_PASSWORD } from './operator-client.js'

/** Operator credentials never reach a trace-level log, in good requests or failed ones. */
describe(`operator credentials in logs (${ENGINE})`, () => {
  let h: AppHarness
  let logged = ''

  beforeAll(async () => {
    const destination = new Writable({
      write(chunk, _enc, done) {
        logged += chunk.toString()
        done()
      },
    })
    h = await createAppHarness({ logLevel: 'trace', logDestination: destination })
  })
  afterAll(() => h.close())

  it('logs no password, set-up secret, TOTP secret, session or CSRF token', async () => {
    const client = operatorClient(h.app, h.adminToken)
    const created = await client.asSystem('POST', '/admin/operators', {
      email: 'logs@example.com',
      role: 'admin',
    })
    const begun = await client.request('POST', '/admin/setup/begin', {
      body: { setupSecret: created.setupSecret },
    })
    const secret = fromBase32(begun.body.totpSecret)
    await client.request('POST', '/admin/setup/finish', {
      body: { setupSecret: created.setupSecret, password: OPERATOR_PASSWORD, code: totp(secret, Date.now()) },
    })
    await client.request('POST', '/admin/session', {
      body: { email: 'logs@example.com', password: OPERATOR_PASSWORD + 'x', code: '000000' },
    })
    const session = await client.signIn({
      id: created.operator.id,
      email: 'logs@example.com',
      role: 'admin',
      secret,
    })
    await client.request('POST', '/admin/accounts', { session, csrf: false, body: { name: 'no csrf' } })
    await client.request('POST', '/admin/accounts', { session, body: { name: 'with csrf' } })
    await client.request('DELETE', '/admin/session', { session })
    expect(logged.length).toBeGreaterThan(1000)
    const token = session.cookie.split('=')[1]!
    for (const value of [
      OPERATOR_PASSWORD,
      created.setupSecret,
      begun.body.totpSecret,
      token,
      session.csrfToken,
      h.adminToken,
    ])
      expect(logged).not.toContain(value)
  })
})
