import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'

import { httpRequest, parseJsonText, renameTransportFailure } from './http-json.js'
import { RailFailure } from './rail.js'

const servers: http.Server[] = []

async function serve(handler: http.RequestListener): Promise<string> {
  const server = http.createServer(handler)
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
})

async function failureOf(promise: Promise<unknown>): Promise<RailFailure> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(RailFailure)
  return err as RailFailure
}

describe('httpRequest', () => {
  it('sends the method, headers and body and returns any status with its body', async () => {
    let seen: { method?: string; headers?: http.IncomingHttpHeaders; body?: string } = {}
    const url = await serve((req, res) => {
      let body = ''
      req.on('data', (c: Buffer) => (body += c.toString()))
      req.on('end', () => {
        seen = { method: req.method, headers: req.headers, body }
        res.writeHead(503, { 'content-type': 'application/json' }).end('{"busy":true}')
      })
    })
    const res = await httpRequest({
      url: `${url}/x`,
      method: 'POST',
      headers: { 'x-test': 'yes' },
      body: '{"a":1}',
      timeoutMs: 2000,
    })
    expect(res).toEqual({ status: 503, contentType: 'application/json', text: '{"busy":true}' })
    expect(seen.method).toBe('POST')
    expect(seen.headers?.['x-test']).toBe('yes')
    expect(seen.headers?.['content-length']).toBe('7')
    expect(seen.body).toBe('{"a":1}')
  })

  it('gives up on a server that never answers, within the deadline, as a retryable failure', async () => {
    const url = await serve(() => {
      // Never answers.
    })
    const started = Date.now()
    const failure = await failureOf(httpRequest({ url, method: 'GET', timeoutMs: 300 }))
    const elapsed = Date.now() - started
    expect(failure.code).toBe('node_timeout')
    expect(failure.retryable).toBe(true)
    expect(elapsed).toBeGreaterThanOrEqual(290)
    expect(elapsed).toBeLessThan(1500)
  })

  it('counts a body that trickles past the deadline as a time-out too', async () => {
    const url = await serve((_req, res) => {
      res.writeHead(200)
      res.write('{"partial":')
    })
    const failure = await failureOf(httpRequest({ url, method: 'GET', timeoutMs: 300 }))
    expect(failure.code).toBe('node_timeout')
  })

  it('returns the first line of a stream that stays open', async () => {
    const url = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.write('{"result":{"n":')
      setTimeout(() => res.write('1}}\n{"result":{"n":2}}\n'), 20)
    })
    const res = await httpRequest({ url, method: 'GET', timeoutMs: 2000, firstLineOnly: true })
    expect(res.text).toBe('{"result":{"n":1}}')
  })

  it('refuses an answer over the size bound', async () => {
    const url = await serve((_req, res) => res.end('x'.repeat(5000)))
    const failure = await failureOf(
      httpRequest({ url, method: 'GET', timeoutMs: 2000, responseBytesMax: 1000 }),
    )
    expect(failure.code).toBe('response_too_large')
    expect(failure.retryable).toBe(false)
  })

  it('reports a refused connection and a connection cut mid-answer as retryable', async () => {
    const closedUrl = await serve(() => {})
    const server = servers.pop()!
    await new Promise((resolve) => server.close(resolve))
    const refused = await failureOf(httpRequest({ url: closedUrl, method: 'GET', timeoutMs: 2000 }))
    expect(refused.code).toBe('node_unreachable')
    expect(refused.retryable).toBe(true)

    const url = await serve((_req, res) => {
      res.writeHead(200, { 'content-length': '100' })
      res.write('{"half":')
      setTimeout(() => res.socket?.destroy(), 20)
    })
    const cut = await failureOf(httpRequest({ url, method: 'GET', timeoutMs: 2000 }))
    expect(cut.code).toBe('node_unreachable')
    expect(cut.retryable).toBe(true)
  })
})

describe('httpRequest: what the partner adapters need', () => {
  it('sends body bytes unchanged, and names the request by its label in failures', async () => {
    let received = Buffer.alloc(0)
    const url = await serve((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        received = Buffer.concat(chunks)
        res.end(`${req.headers['content-length']}`)
      })
    })
    const bytes = Buffer.from('{"name":"Nguyễn Văn An"}', 'utf8')
    const res = await httpRequest({ url, method: 'POST', body: bytes, timeoutMs: 2000 })
    expect(received.equals(bytes)).toBe(true)
    expect(res.text).toBe(String(bytes.length))

    const silent = await serve(() => {})
    const slow = await failureOf(httpRequest({ url: silent, method: 'GET', timeoutMs: 100, label: '/v1/x' }))
    expect(slow.message).toBe('/v1/x did not answer within 100 ms')
  })

  it('answers a redirect with its status, or refuses it as unreachable when asked', async () => {
    const url = await serve((_req, res) => res.writeHead(302, { location: 'http://example.invalid/' }).end())
    expect((await httpRequest({ url, method: 'GET', timeoutMs: 2000 })).status).toBe(302)
    const refused = await failureOf(
      httpRequest({ url, method: 'GET', timeoutMs: 2000, refuseRedirects: true }),
    )
    expect([refused.code, refused.retryable]).toEqual(['node_unreachable', true])
  })
})

describe('renameTransportFailure', () => {
  const names = {
    node_timeout: 'x_timeout',
    node_unreachable: 'x_unreachable',
    node_tls_error: 'x_unreachable',
    response_too_large: 'x_bad_response',
  }

  it('renames the transport failures, all retryable, and keeps their messages', () => {
    const slow = renameTransportFailure(new RailFailure('node_timeout', 'late', true), names) as RailFailure
    expect([slow.code, slow.message, slow.retryable]).toEqual(['x_timeout', 'late', true])
    const big = renameTransportFailure(
      new RailFailure('response_too_large', 'big', false),
      names,
    ) as RailFailure
    expect([big.code, big.retryable]).toEqual(['x_bad_response', true])
    const odd = renameTransportFailure(new TypeError('bad header'), names) as RailFailure
    expect([odd.code, odd.message, odd.retryable]).toEqual(['x_unreachable', 'bad header', true])
  })

  it('passes any other failure unchanged', () => {
    const own = new RailFailure('invalid_config', 'no', false)
    expect(renameTransportFailure(own, names)).toBe(own)
  })
})

describe('parseJsonText', () => {
  it('parses JSON and turns anything else into a retryable bad_response', () => {
    expect(parseJsonText('{"a":[1]}', 'x')).toEqual({ a: [1] })
    let failure: unknown
    try {
      parseJsonText('<html>502 Bad Gateway</html>', 'proxy')
    } catch (e) {
      failure = e
    }
    expect(failure).toBeInstanceOf(RailFailure)
    expect((failure as RailFailure).code).toBe('bad_response')
    expect((failure as RailFailure).retryable).toBe(true)
  })
})
