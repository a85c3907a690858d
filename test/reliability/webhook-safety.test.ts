import http from 'node:http'
import net from 'node:net'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runDueDeliveries } from '../../src/events/delivery-worker.js'
import type { ResolvedAddress } from '../../src/events/http-deliver.js'
import { deliveryDepsOf, startReceiver, type Receiver } from '../helpers/webhooks.js'
import type { TestAccount } from '../helpers/harness.js'
import { createAppHarness, type AppHarness } from '../helpers/app-harness.js'
import { finishCase } from '../helpers/invariants.js'

/**
 * Webhook safety (SSRF) through the service's own paths: registration, update and the delivery
 * worker. Callbacks at private, link-local, loopback and metadata addresses are refused whether
 * written as addresses or reached through a name that resolves to one, including a name that
 * changes its answer after registration (DNS rebinding); and a receiver's redirect is never followed.
 * Names resolve through a stub zone, so no request ever leaves this machine.
 */

const SECRET = 'safety-webhook-secret-0123'
const PUBLIC = '93.184.216.34'

/** A plain TCP listener that counts connections: proof that nothing connected to it. */
async function connectionCounter(): Promise<{ port: number; count(): number; close(): Promise<void> }> {
  let connections = 0
  const server = net.createServer((socket) => {
    connections++
    socket.destroy()
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return {
    port: (server.address() as AddressInfo).port,
    count: () => connections,
    close: () => new Promise((r) => server.close(() => r())),
  }
}

describe('webhook safety', () => {
  const zone = new Map<string, string[]>()
  const resolveHost = async (name: string): Promise<ResolvedAddress[]> =>
    (zone.get(name) ?? []).map(
      (address) => ({ address, family: net.isIP(address) === 6 ? 6 : 4 }) as ResolvedAddress,
    )
  let prod: AppHarness
  let sandbox: AppHarness
  let a: TestAccount
  let s: TestAccount
  let ops = 0
  beforeAll(async () => {
    prod = await createAppHarness({
      env: { ALLOW_HTTP_WEBHOOKS: 'false', WEBHOOK_BACKOFF_BASE_MS: '1' },
      resolveHost,
    })
    sandbox = await createAppHarness({
      env: { ALLOW_HTTP_WEBHOOKS: 'true', WEBHOOK_BACKOFF_BASE_MS: '1' },
      resolveHost,
    })
    a = await prod.createAccount({ name: 'Production' })
    s = await sandbox.createAccount({ name: 'Sandbox' })
    await prod.admin('POST', '/admin/sandbox/fund', { accountId: a.accountId, ccy: 'BTC', amount: '0.01' })
    await sandbox.admin('POST', '/admin/sandbox/fund', { accountId: s.accountId, ccy: 'BTC', amount: '0.01' })
  })
  afterAll(async () => {
    await prod?.close()
    await sandbox?.close()
  })

  const call = (h: AppHarness, method: string, url: string, token: string, body?: unknown) => {
    ops++
    return h.api(method, url, token, body)
  }
  /** A swap, quoted and confirmed: two events for the account's webhook. */
  const twoEvents = async (h: AppHarness, acct: TestAccount) => {
    const q = await call(h, 'POST', '/api/v2/transaction', acct.token, {
      sourceReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '0.00001', reqDetails: {} },
      destReq: { ccy: 'USD', method: 'svcpay', reqDetails: {} },
    })
    await call(h, 'PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, acct.token)
  }
  const deliveries = async (h: AppHarness, acct: TestAccount, webhookId: string) =>
    (await call(h, 'GET', `/api/v2/webhook/${webhookId}/deliveries?limit=100`, acct.token)).body.data as any[]

  it('refuses private, link-local, loopback and metadata callbacks at registration and update, also through names', async () => {
    ops = 0
    const targets: Record<string, string[]> = {
      'metadata.example.com': ['169.254.169.254'],
      'ecs-metadata.example.com': ['169.254.170.2'],
      'alibaba-metadata.example.com': ['100.100.100.200'],
      'aws-v6-metadata.example.com': ['fd00:ec2::254'],
      'link-local.example.com': ['169.254.10.20'],
      'link-local-v6.example.com': ['fe80::1'],
      'private10.example.com': ['10.0.0.5'],
      'private172.example.com': ['172.16.0.1'],
      'private192.example.com': ['192.168.1.1'],
      'cgnat.example.com': ['100.64.0.1'],
      'ula.example.com': ['fd12:3456::1'],
      'loopback.example.com': ['127.0.0.1'],
      'loopback-v6.example.com': ['::1'],
      'mapped.example.com': ['::ffff:10.0.0.1'],
      'mapped-metadata.example.com': ['::ffff:169.254.169.254'],
      'nat64-loopback.example.com': ['64:ff9b::7f00:1'],
      'zero.example.com': ['0.0.0.0'],
      'mixed.example.com': [PUBLIC, '10.0.0.1'],
      // The IANA special-purpose ranges of issue 16, as DNS answers.
      'translated.example.com': ['::ffff:0:93.184.216.34'],
      'benchmarking-v6.example.com': ['2001:2::1'],
      'orchid.example.com': ['2001:10::1'],
      'orchid2.example.com': ['2001:20::1'],
      'teredo.example.com': ['2001:0:4136:e378:8000:63bf:3fff:fdd2'],
      'doc3fff.example.com': ['3fff::1'],
      'srv6.example.com': ['5f00::1'],
      'nat64-private.example.com': ['64:ff9b::10.0.0.1'],
      '6to4-private.example.com': ['2002:0a00:0001::1'],
    }
    for (const [name, addresses] of Object.entries(targets)) zone.set(name, addresses)
    zone.set('fine.example.com', [PUBLIC])
    const urls = [
      ...Object.keys(targets).map((name) => `https://${name}/hook`),
      'https://169.254.169.254/latest/meta-data/',
      'https://[fd00:ec2::254]/latest/meta-data/',
      'https://[::ffff:a9fe:a9fe]/',
      'https://0251.0376.0251.0376/',
      'https://2852039166/',
      'https://0xa9fea9fe/',
      'https://10.1.2.3/',
      'https://[fe80::1]/',
      'https://[::ffff:0:93.184.216.34]/',
      'https://[2001:2::1]/',
      'https://[2001:10::1]/',
      'https://[2001:20::1]/',
      'https://[3fff::1]/',
      'https://[5f00::1]/',
      'https://metadata.google.internal/computeMetadata/v1/',
      'https://localhost/hook',
      'https://printer.local/hook',
      'https://intranet/hook',
      'http://fine.example.com/hook',
    ]
    const hook = await call(prod, 'POST', '/api/v2/webhook', a.token, {
      callback: 'https://fine.example.com/hook',
      secret: SECRET,
    })
    expect(hook.status).toBe(200)
    for (const callback of urls) {
      const created = await call(prod, 'POST', '/api/v2/webhook', a.token, { callback, secret: SECRET })
      expect([callback, created.status, created.body.error]).toEqual([callback, 400, 'invalid_request'])
      expect(created.body.details).toEqual([{ field: 'callback', issue: expect.any(String) }])
      const updated = await call(prod, 'PUT', `/api/v2/webhook/${hook.body.id}`, a.token, { callback })
      expect([callback, updated.status, updated.body.error]).toEqual([callback, 400, 'invalid_request'])
    }
    // The webhook registered first is still the one, unchanged.
    const list = await call(prod, 'GET', '/api/v2/webhook', a.token)
    expect(list.body.data).toEqual([
      { id: hook.body.id, callback: 'https://fine.example.com/hook', createdAt: expect.any(Number) },
    ])
    // The sandbox allows loopback receivers over http, and nothing else that is not public.
    for (const callback of [
      'http://10.0.0.5/hook',
      'http://metadata.example.com/',
      'http://169.254.169.254/',
      'https://link-local.example.com/',
    ]) {
      const r = await call(sandbox, 'POST', '/api/v2/webhook', s.token, { callback, secret: SECRET })
      expect([callback, r.status]).toEqual([callback, 400])
    }
    await finishCase('webhook registration SSRF checks', prod.c.db, {
      ops,
      detail: `${urls.length} callbacks refused`,
    })
  })

  it('refuses at delivery a name that resolved to a public address at registration and points inside now', async () => {
    ops = 0
    const inside = await connectionCounter()
    try {
      zone.set('rebind.example.com', [PUBLIC])
      const url = `https://rebind.example.com:${inside.port}/hook`
      const hook = await call(prod, 'POST', '/api/v2/webhook', a.token, { callback: url, secret: SECRET })
      expect(hook.status).toBe(200)
      const deps = deliveryDepsOf(prod.c)
      const answers = [
        '127.0.0.1',
        '169.254.169.254',
        '10.0.0.7',
        'fe80::1',
        '::ffff:127.0.0.1',
        `${PUBLIC},127.0.0.1`,
        '2001:2::1',
        '3fff::1',
        '5f00::1',
        '::ffff:0:93.184.216.34',
        '2002:c0a8:0101::1',
      ]
      for (const answer of answers) {
        // The name now answers with an inside address, as a rebinding attacker's DNS server would.
        zone.set('rebind.example.com', answer.split(','))
        await twoEvents(prod, a)
        const outcomes = await runDueDeliveries(deps)
        expect(outcomes.length, answer).toBeGreaterThanOrEqual(2)
        for (const o of outcomes)
          expect([answer, o.result, o.error]).toEqual([answer, 'retrying', 'blocked_address'])
      }
      expect(inside.count()).toBe(0)
      const recorded = await deliveries(prod, a, hook.body.id)
      expect(recorded.length).toBeGreaterThanOrEqual(answers.length * 2)
      expect(
        recorded.every(
          (d) => d.status === 'pending' && d.lastError === 'blocked_address' && d.lastStatus === null,
        ),
      ).toBe(true)
      await finishCase('webhook delivery after DNS rebinding', prod.c.db, {
        ops,
        detail: `${answers.length} inside answers, 0 connections`,
      })
    } finally {
      await inside.close()
    }
  })

  it('does not follow a receiver’s redirect to another host, an inside address or the metadata service', async () => {
    ops = 0
    const target = await startReceiver(SECRET)
    const redirects = [
      [302, `http://127.0.0.1:${target.port}/stolen`],
      [307, `http://127.0.0.1:${target.port}/stolen`],
      [308, 'http://169.254.169.254/latest/meta-data/iam/security-credentials/'],
      [301, 'http://10.0.0.1/'],
      [303, `http://metadata.example.com/`],
    ] as const
    let served = 0
    const redirector = http.createServer((req, res) => {
      const [status, location] = redirects[served++ % redirects.length]!
      req.resume()
      res.writeHead(status, { location }).end()
    })
    await new Promise<void>((r) => redirector.listen(0, '127.0.0.1', r))
    const port = (redirector.address() as AddressInfo).port
    let receiver: Receiver | undefined
    try {
      const hook = await call(sandbox, 'POST', '/api/v2/webhook', s.token, {
        callback: `http://127.0.0.1:${port}/hook`,
        secret: SECRET,
      })
      expect(hook.status).toBe(200)
      const deps = deliveryDepsOf(sandbox.c)
      for (let round = 0; round < 3; round++) {
        await twoEvents(sandbox, s)
        // A few passes, so that the retries (1 ms apart here) meet the other redirects too.
        for (let pass = 0; pass < 3; pass++) {
          const outcomes = await runDueDeliveries(deps)
          for (const o of outcomes) expect([o.result, o.error]).toEqual(['retrying', 'redirect_not_followed'])
          await new Promise((r) => setTimeout(r, 20))
        }
      }
      expect(served).toBeGreaterThanOrEqual(redirects.length)
      expect(target.received).toEqual([])
      const recorded = await deliveries(sandbox, s, hook.body.id)
      expect(recorded.every((d) => d.status === 'pending' && d.lastError === 'redirect_not_followed')).toBe(
        true,
      )
      expect(recorded.every((d) => [301, 302, 303, 307, 308].includes(d.lastStatus))).toBe(true)
      // Once the receiver answers 200 itself, the same deliveries go out there, and only there.
      redirector.removeAllListeners('request')
      redirector.on('request', (_req, res) => res.writeHead(500).end())
      receiver = await startReceiver(SECRET)
      expect(
        (await call(sandbox, 'PUT', `/api/v2/webhook/${hook.body.id}`, s.token, { callback: receiver.url }))
          .status,
      ).toBe(200)
      await sandbox.c.db.query(
        `UPDATE webhook_deliveries SET next_attempt_at = $1 WHERE status = 'pending'`,
        [Date.now()],
      )
      const outcomes = await runDueDeliveries(deps)
      expect(outcomes.length).toBe(recorded.length)
      expect(outcomes.every((o) => o.result === 'succeeded')).toBe(true)
      expect(receiver.received.length).toBe(recorded.length)
      expect(target.received).toEqual([])
      await finishCase('webhook redirects', sandbox.c.db, {
        ops,
        detail: `${served} redirects answered, none followed`,
      })
    } finally {
      await new Promise((r) => redirector.close(r))
      await target.close()
      await receiver?.close()
    }
  })
})
