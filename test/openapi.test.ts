import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Validator } from '@seriousme/openapi-schema-validator'
import { createHarness, type Harness } from './helpers/harness.js'

/**
 * The API reference at /openapi.json: valid OpenAPI 3.1, and complete — every endpoint of the
 * specification and the contract, each with a summary, tags, a success schema, every error answer
 * described with the shared error body and an example, and examples for what it returns.
 */

/** Every operation the specification and the contract define, plus the operational endpoints. */
const EXPECTED = [
  'POST /api/v2/authentication/token-signature',
  'GET /api/v2/account/onchain-address',
  'GET /api/v2/account/{accountId}',
  'GET /api/v2/account/{accountId}/wallet/',
  'GET /api/v2/account/{accountId}/wallet/{walletId}',
  'PUT /api/v2/account/{accountId}/lightning-address',
  'GET /api/v2/account/{accountId}/lightning-address',
  'DELETE /api/v2/account/{accountId}/lightning-address',
  // Contract section 11 (issue 31): an account's limits and usage.
  'GET /api/v2/account/{accountId}/limits',
  'GET /api/v2/rate',
  'POST /api/v2/transaction',
  'GET /api/v2/transaction',
  'GET /api/v2/transaction/{txnId}',
  'PUT /api/v2/transaction/{txnId}/confirm',
  'PUT /api/v2/transaction/{txnId}/cancel',
  'GET /api/v2/transaction/{txnId}/events',
  'POST /api/v2/webhook',
  'GET /api/v2/webhook',
  'PUT /api/v2/webhook/{webhookId}',
  'DELETE /api/v2/webhook/{webhookId}',
  'POST /api/v2/webhook/{webhookId}/rotate-secret',
  'GET /api/v2/webhook/{webhookId}/deliveries',
  'POST /api/v2/webhook/{webhookId}/deliveries/{deliveryId}/redeliver',
  'GET /api/v2/fiat/institutions',
  'GET /api/v2/fiat/source-of-funds-codes',
  'GET /api/v2/fiat/account-name',
  'POST /sandbox/fund',
  'POST /sandbox/lightning/pay',
  'POST /sandbox/lightning/invoice',
  'POST /sandbox/onchain/send',
  'POST /sandbox/onchain/mine',
  'POST /partners/bank/notifications',
  'POST /partners/bank/credits',
  'GET /healthz',
  'GET /readyz',
  'GET /metrics',
]

type Json = Record<string, any>

describe('the OpenAPI document', () => {
  let h: Harness
  let doc: Json

  beforeAll(async () => {
    h = await createHarness()
    const res = await h.app.inject({ method: 'GET', url: '/openapi.json' })
    expect(res.statusCode).toBe(200)
    doc = JSON.parse(res.body)
  })
  afterAll(() => h.close())

  const operations = () => {
    const out: { key: string; path: string; method: string; op: Json }[] = []
    for (const [path, item] of Object.entries(doc.paths as Json)) {
      for (const [method, op] of Object.entries(item as Json)) {
        out.push({ key: `${method.toUpperCase()} ${path}`, path, method, op: op as Json })
      }
    }
    return out
  }

  /** Resolves a local `$ref`. */
  const deref = (node: Json): Json => {
    if (typeof node?.$ref !== 'string') return node
    const parts = (node.$ref as string).replace(/^#\//, '').split('/')
    return parts.reduce((n: Json, p) => n?.[p.replace(/~1/g, '/').replace(/~0/g, '~')], doc)
  }

  /** Whether an example is reachable from a node, following references. */
  const hasExample = (node: unknown, seen = new Set<unknown>()): boolean => {
    if (node === null || typeof node !== 'object' || seen.has(node)) return false
    seen.add(node)
    const n = node as Json
    if (
      n.example !== undefined ||
      (Array.isArray(n.examples) && n.examples.length) ||
      (n.examples && !Array.isArray(n.examples))
    ) {
      return true
    }
    if (typeof n.$ref === 'string') return hasExample(deref(n), seen)
    return Object.values(n).some((v) => hasExample(v, seen))
  }

  it('is valid OpenAPI 3.1', async () => {
    const result = await new Validator().validate(structuredClone(doc))
    expect(result.errors ?? []).toEqual([])
    expect(result.valid).toBe(true)
    expect(doc.openapi).toBe('3.1.0')
  })

  it('documents every endpoint of the specification and the contract, and nothing unexpected', () => {
    expect(
      operations()
        .map((o) => o.key)
        .sort(),
    ).toEqual([...EXPECTED].sort())
  })

  it('documents the two notifications of the bank partner, which answer 404 where the bank rail is not set up', async () => {
    for (const path of ['/partners/bank/notifications', '/partners/bank/credits']) {
      const op = doc.paths[path].post
      expect(op.tags, path).toEqual(['Bank partner'])
      expect(op.security, path).toEqual([])
      expect(op.description, path).toContain('X-Partner-Signature')
      const res = await h.app.inject({ method: 'POST', url: path, payload: { type: 'credit' } })
      expect(res.statusCode, path).toBe(404)
      expect(JSON.parse(res.body).error, path).toBe('not_found')
    }
  })

  it('names the shared schemas', () => {
    const names = Object.keys(doc.components.schemas)
    expect(names).toEqual(expect.arrayContaining(['ErrorBody', 'Wallet', 'Transaction']))
    expect(names.filter((n) => /^def-\d+$/.test(n))).toEqual([])
  })

  it('gives every operation a summary, a declared tag, a success schema and security where a token is needed', () => {
    const tags = new Set((doc.tags as Json[]).map((t) => t.name))
    for (const { key, path, op } of operations()) {
      expect(op.summary, key).toBeTruthy()
      expect(op.tags?.length, key).toBeGreaterThan(0)
      for (const t of op.tags) expect(tags.has(t), `${key}: tag ${t}`).toBe(true)
      const success = Object.entries(op.responses as Json).filter(([status]) => /^2/.test(status))
      // One success answer; a stream may also declare a 204 without content beside it (the status
      // stream resumed after its final state).
      const withContent = success.filter(([status]) => status !== '204')
      expect(success.length === 1 || (success.length === 2 && withContent.length === 1), key).toBe(true)
      const [status, response] = withContent[0] ?? success[0]!
      if (status !== '204') expect(Object.keys(response.content ?? {}).length, key).toBeGreaterThan(0)
      const needsToken =
        (path.startsWith('/api/') && !path.includes('/authentication/')) || path.startsWith('/sandbox/')
      expect(op.security ?? [], key).toEqual(needsToken ? [{ bearerAuth: [] }] : [])
    }
  })

  it('describes every error answer with the shared error body and an example', () => {
    for (const { key, path, op } of operations()) {
      const errorsOf = Object.entries(op.responses as Json).filter(([status]) => !/^2/.test(status))
      if (path.startsWith('/api/') || path.startsWith('/sandbox/')) {
        expect(
          errorsOf.map(([s]) => s),
          key,
        ).toEqual(expect.arrayContaining(['401', '429']))
      }
      for (const [status, response] of errorsOf) {
        const media = response.content?.['application/json']
        expect(media?.schema?.$ref, `${key} ${status}`).toBe('#/components/schemas/ErrorBody')
        expect(response.description, `${key} ${status}`).not.toBe('Default Response')
        expect(media.example?.error, `${key} ${status}`).toMatch(/^[a-z_]+$/)
      }
    }
  })

  it('shows an example of what each operation returns', () => {
    for (const { key, op } of operations()) {
      const success = Object.entries(op.responses as Json).find(([status]) => /^2/.test(status))!
      if (success[0] === '204') continue
      expect(hasExample(success[1]), key).toBe(true)
    }
  })

  it('describes the rate-limit headers of every counted answer', () => {
    for (const { key, path, op } of operations()) {
      // Every answer carries them but the operational endpoints' (issue 16).
      if (['/healthz', '/readyz', '/metrics'].includes(path)) continue
      for (const [status, response] of Object.entries(op.responses as Json)) {
        expect(Object.keys(response.headers ?? {}), `${key} ${status}`).toEqual(
          expect.arrayContaining(['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']),
        )
      }
    }
    expect(doc.components.headers['Retry-After']).toBeDefined()
  })

  it('is rendered at /docs', async () => {
    let res = await h.app.inject({ method: 'GET', url: '/docs' })
    if (res.statusCode === 302)
      res = await h.app.inject({ method: 'GET', url: res.headers.location as string })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toContain('text/html')
    expect(res.body).toContain('swagger')
    const served = await h.app.inject({ method: 'GET', url: '/docs/json' })
    expect(JSON.parse(served.body).paths).toEqual(doc.paths)
  })
})
