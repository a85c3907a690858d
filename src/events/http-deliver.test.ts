import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import http from 'node:http'
import https from 'node:https'
import net, { type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import tls from 'node:tls'

import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'

import { deliver, RESPONSE_BYTES_MAX, type DeliveryRequest, type ResolveHost } from './http-deliver.js'
import { signBody, verifySignature } from './signature.js'

interface Received {
  method: string
  url: string
  headers: http.IncomingHttpHeaders
  body: Buffer
}

interface TestServer {
  port: number
  received: Received[]
  close: () => Promise<void>
}

const servers: TestServer[] = []

/** A real HTTP server on a loopback address and an ephemeral port, recording every request. */
async function startServer(
  respond: (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer) => void,
  host = '127.0.0.1',
): Promise<TestServer> {
  const received: Received[] = []
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const body = Buffer.concat(chunks)
      received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body })
      respond(req, res, body)
    })
  })
  await new Promise<void>((done) => server.listen(0, host, done))
  const testServer: TestServer = {
    port: (server.address() as AddressInfo).port,
    received,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections()
        server.close(() => done())
      }),
  }
  servers.push(testServer)
  return testServer
}

afterEach(async () => {
  vi.restoreAllMocks()
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

/** A resolver that answers every name with fixed addresses and counts how often it was asked. */
function fixedLookup(...addresses: string[]): ResolveHost & { calls: string[] } {
  const calls: string[] = []
  const lookup = async (hostname: string) => {
    calls.push(hostname)
    return addresses.map((address) => ({
      address,
      family: net.isIP(address) === 6 ? (6 as const) : (4 as const),
    }))
  }
  return Object.assign(lookup, { calls })
}

/**
 * Makes any attempt to open a TCP connection fail loudly instead of reaching the network, so the
 * tests of refused addresses can never send a packet anywhere, even if the code under test is wrong.
 */
function forbidConnections() {
  return vi.spyOn(net.Socket.prototype, 'connect').mockImplementation(function (): never {
    throw new Error('this test must not open any connection')
  })
}

function request(overrides: Partial<DeliveryRequest> & Pick<DeliveryRequest, 'url'>): DeliveryRequest {
  return {
    method: 'POST',
    headers: {},
    body: Buffer.from('{}'),
    timeoutMs: 5_000,
    allowPrivate: false,
    allowLoopback: true,
    lookup: fixedLookup('127.0.0.1'),
    ...overrides,
  }
}

const wait = (ms: number) => new Promise((done) => setTimeout(done, ms))

describe('deliver: answers', () => {
  it('delivers the exact body bytes with headers, and the receiver verifies the signature over them', async () => {
    const secret = 'receiver-shared-secret-0123'
    const server = await startServer((req, res, body) => {
      const signature = req.headers['x-svcpay-signature']
      const valid = typeof signature === 'string' && verifySignature(body, secret, signature)
      res.writeHead(valid ? 200 : 401).end()
    })
    // Unusual spacing, key order and non-ASCII text: a receiver that re-serialised would fail.
    const body = Buffer.from(
      '{"txnId":"t_9",  "extRefId":"", "txnState":"completed","msg":"Đã xong ✓","updatedAt":1}',
    )
    const result = await deliver(
      request({
        url: `http://hooks.example.test:${server.port}/svcpay/in?source=test`,
        headers: {
          'Content-Type': 'application/json',
          'X-Svcpay-Signature': signBody(body, secret),
          'X-Svcpay-Event-Id': 'evt_1',
          'X-Svcpay-Delivery-Attempt': '3',
        },
        body,
      }),
    )

    expect(result).toMatchObject({ ok: true, status: 200, connectedAddress: '127.0.0.1' })
    expect(result.error).toBeUndefined()
    expect(result.latencyMs).toBeGreaterThanOrEqual(0)
    expect(server.received).toHaveLength(1)
    const [got] = server.received
    expect(got?.method).toBe('POST')
    expect(got?.url).toBe('/svcpay/in?source=test')
    expect(got?.body.equals(body)).toBe(true)
    expect(got?.headers.host).toBe(`hooks.example.test:${server.port}`)
    expect(got?.headers['content-length']).toBe(String(body.length))
    expect(got?.headers['x-svcpay-event-id']).toBe('evt_1')
    expect(got?.headers['x-svcpay-delivery-attempt']).toBe('3')
  })

  it('sends variant b as PUT with X-Svc-Signature', async () => {
    const secret = 'variant-b-secret-0123'
    const server = await startServer((req, res, body) => {
      const signature = req.headers['x-svc-signature']
      res
        .writeHead(typeof signature === 'string' && verifySignature(body, secret, signature) ? 204 : 401)
        .end()
    })
    const body = Buffer.from('{"txnId":"t_2","extRefId":"r","txnState":"expired","msg":"","updatedAt":2}')
    const result = await deliver(
      request({
        url: `http://hooks.example.test:${server.port}/`,
        method: 'PUT',
        headers: { 'X-Svc-Signature': signBody(body, secret) },
        body,
      }),
    )
    expect(result).toMatchObject({ ok: true, status: 204 })
    expect(server.received[0]?.method).toBe('PUT')
  })

  it.each([
    [500, 'http_500'],
    [503, 'http_503'],
    [404, 'http_404'],
    [401, 'http_401'],
    [429, 'http_429'],
  ])('treats status %i as a failure with error %s', async (status, error) => {
    const server = await startServer((_req, res) => res.writeHead(status).end('nope'))
    const result = await deliver(request({ url: `http://hooks.example.test:${server.port}/` }))
    expect(result).toMatchObject({ ok: false, status, error })
  })

  it('does not follow a 302 redirect, and the redirect target receives nothing', async () => {
    const target = await startServer((_req, res) => res.writeHead(200).end())
    const redirector = await startServer((_req, res) =>
      res.writeHead(302, { Location: `http://127.0.0.1:${target.port}/stolen` }).end(),
    )
    const result = await deliver(request({ url: `http://hooks.example.test:${redirector.port}/` }))
    expect(result).toMatchObject({ ok: false, status: 302, error: 'redirect_not_followed' })
    await wait(100)
    expect(redirector.received).toHaveLength(1)
    expect(target.received).toHaveLength(0)
  })

  it('reads at most 64 KiB of an endless answer and does not wait for its end', async () => {
    let bytesSent = 0
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/octet-stream' })
      const chunk = Buffer.alloc(16 * 1024, 0x61)
      const pump = (): void => {
        // Stop pumping once the client has gone, or after far more than the cap.
        while (!res.destroyed && bytesSent < 64 * RESPONSE_BYTES_MAX) {
          bytesSent += chunk.length
          if (!res.write(chunk)) return void res.once('drain', pump)
        }
      }
      pump()
    })
    const result = await deliver(
      request({ url: `http://hooks.example.test:${server.port}/`, timeoutMs: 5_000 }),
    )
    expect(result).toMatchObject({ ok: true, status: 200 })
    expect(result.error).toBeUndefined()
    expect(result.latencyMs).toBeLessThan(4_000)
    expect(bytesSent).toBeLessThan(64 * RESPONSE_BYTES_MAX)
  })
})

describe('deliver: time-outs and connection failures', () => {
  it('gives up with "timeout" after about timeoutMs when the receiver never answers', async () => {
    const server = await startServer(() => {
      // Never answer.
    })
    const result = await deliver(
      request({ url: `http://hooks.example.test:${server.port}/`, timeoutMs: 300 }),
    )
    expect(result).toMatchObject({ ok: false, error: 'timeout' })
    expect(result.status).toBeUndefined()
    expect(result.latencyMs).toBeGreaterThanOrEqual(290)
    expect(result.latencyMs).toBeLessThan(1_500)
    // The server records the request when it has read it. After a stall of the event loop the
    // time-out (a timer) runs before that read (I/O), so the record may come after the answer.
    await expect.poll(() => server.received.length).toBe(1)
  })

  it('counts name resolution against the time-out', async () => {
    const neverResolves: ResolveHost = () => new Promise(() => {})
    const result = await deliver(
      request({ url: 'http://hooks.example.test:9/', timeoutMs: 200, lookup: neverResolves }),
    )
    expect(result).toMatchObject({ ok: false, error: 'timeout' })
    expect(result.latencyMs).toBeGreaterThanOrEqual(190)
  })

  it('reports "connection_refused" when nothing listens on the port', async () => {
    const server = await startServer(() => {})
    const { port } = server
    await server.close()
    const result = await deliver(request({ url: `http://hooks.example.test:${port}/` }))
    expect(result).toMatchObject({ ok: false, error: 'connection_refused' })
  })

  it('reports "dns_failure" when the name does not resolve', async () => {
    const failing: ResolveHost = () => Promise.reject(Object.assign(new Error('nope'), { code: 'ENOTFOUND' }))
    expect(await deliver(request({ url: 'http://nowhere.example.test/', lookup: failing }))).toMatchObject({
      ok: false,
      error: 'dns_failure',
    })
    expect(
      await deliver(request({ url: 'http://nowhere.example.test/', lookup: fixedLookup() })),
    ).toMatchObject({
      ok: false,
      error: 'dns_failure',
    })
  })

  it('reports "invalid_url" for something that is not an http(s) URL', async () => {
    expect(await deliver(request({ url: 'ftp://hooks.example.test/' }))).toMatchObject({
      error: 'invalid_url',
    })
    expect(await deliver(request({ url: 'not a url' }))).toMatchObject({ error: 'invalid_url' })
  })
})

describe('deliver: address checks (SSRF)', () => {
  it.each([
    ['cloud metadata', ['169.254.169.254'], { allowPrivate: false }],
    ['cloud metadata, even with private allowed', ['169.254.169.254'], { allowPrivate: true }],
    ['a private address', ['10.0.0.1'], { allowPrivate: false }],
    ['an IPv4-mapped private address', ['::ffff:10.0.0.1'], { allowPrivate: false }],
    ['a unique-local IPv6 address', ['fd00::1'], { allowPrivate: false }],
    ['a public and a private address together', ['93.184.216.34', '10.0.0.1'], { allowPrivate: false }],
    ['0.0.0.0, even with private allowed', ['0.0.0.0'], { allowPrivate: true }],
    // DNS answers in the special-purpose ranges of issue 16.
    ['an IPv4-translated address', ['::ffff:0:93.184.216.34'], { allowPrivate: true }],
    ['a benchmarking IPv6 address', ['2001:2::1'], { allowPrivate: false }],
    ['an ORCHID address', ['2001:10::1'], { allowPrivate: false }],
    ['an ORCHIDv2 address', ['2001:20::1'], { allowPrivate: false }],
    ['a Teredo address', ['2001:0:4136:e378:8000:63bf:3fff:fdd2'], { allowPrivate: false }],
    ['a 3fff::/20 documentation address', ['3fff::1'], { allowPrivate: false }],
    ['an SRv6 SID', ['5f00::1'], { allowPrivate: false }],
    ['a NAT64 translation of a private address', ['64:ff9b::10.0.0.1'], { allowPrivate: false }],
    ['a 6to4 address of a private address', ['2002:0a00:0001::1'], { allowPrivate: false }],
    ['a reserved IPv6 address', ['4000::1'], { allowPrivate: true }],
    [
      'a public and a special-purpose IPv6 address together',
      ['2606:4700:4700::1111', '3fff::1'],
      { allowPrivate: false },
    ],
  ])('refuses a name resolving to %s without any connection attempt', async (_name, addresses, opts) => {
    const connect = forbidConnections()
    const lookup = fixedLookup(...addresses)
    const result = await deliver(
      request({ url: 'https://hooks.example.test/', lookup, allowLoopback: true, ...opts }),
    )
    expect(result).toMatchObject({ ok: false, error: 'blocked_address' })
    expect(result.connectedAddress).toBeUndefined()
    expect(lookup.calls).toEqual(['hooks.example.test'])
    expect(connect).not.toHaveBeenCalled()
  })

  it('refuses loopback when loopback is not allowed, even with private allowed', async () => {
    const server = await startServer((_req, res) => res.writeHead(200).end())
    const connect = vi.spyOn(net.Socket.prototype, 'connect')
    const result = await deliver(
      request({ url: `http://hooks.example.test:${server.port}/`, allowLoopback: false, allowPrivate: true }),
    )
    expect(result).toMatchObject({ ok: false, error: 'blocked_address' })
    expect(connect).not.toHaveBeenCalled()
    expect(server.received).toHaveLength(0)
  })

  it('refuses a blocked IP literal in the URL without asking the resolver', async () => {
    const connect = forbidConnections()
    const lookup = fixedLookup('127.0.0.1')
    const result = await deliver(request({ url: 'http://169.254.169.254/latest/meta-data/', lookup }))
    expect(result).toMatchObject({ ok: false, error: 'blocked_address' })
    expect(lookup.calls).toHaveLength(0)
    expect(connect).not.toHaveBeenCalled()
  })

  it('connects to an allowed IP literal directly, without the resolver', async () => {
    const server = await startServer((_req, res) => res.writeHead(200).end())
    const lookup = fixedLookup('10.0.0.1')
    const result = await deliver(request({ url: `http://127.0.0.1:${server.port}/`, lookup }))
    expect(result).toMatchObject({ ok: true, connectedAddress: '127.0.0.1' })
    expect(lookup.calls).toHaveLength(0)
  })

  it('resolves once and connects to exactly the checked address (DNS rebinding)', async () => {
    // Two receivers on two loopback addresses: the checked one, and the one a second resolution
    // would have produced. Only the first may see the request.
    const checked = await startServer((_req, res) => res.writeHead(200).end(), '127.0.0.2')
    const rebound = await startServer((_req, res) => res.writeHead(200).end(), '127.0.0.1')
    expect(checked.port).not.toBe(rebound.port)
    const calls: string[] = []
    const rebinding: ResolveHost = async (hostname) => {
      calls.push(hostname)
      return [{ address: calls.length === 1 ? '127.0.0.2' : '127.0.0.1', family: 4 }]
    }
    const result = await deliver(
      request({ url: `http://rebind.example.test:${checked.port}/`, lookup: rebinding }),
    )
    expect(result).toMatchObject({ ok: true, connectedAddress: '127.0.0.2' })
    expect(calls).toEqual(['rebind.example.test'])
    expect(checked.received).toHaveLength(1)
    expect(checked.received[0]?.headers.host).toBe(`rebind.example.test:${checked.port}`)
    expect(rebound.received).toHaveLength(0)
  })
})

describe('deliver: TLS', () => {
  it('sends the host name as SNI while connecting to the checked address', async () => {
    const serverNames: string[] = []
    const server = tls.createServer({
      SNICallback: (name, callback) => {
        serverNames.push(name)
        callback(new Error('this test server has no certificate'), undefined)
      },
    })
    server.on('tlsClientError', () => {})
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
    try {
      const { port } = server.address() as AddressInfo
      const result = await deliver(request({ url: `https://hooks.example.test:${port}/` }))
      expect(result).toMatchObject({ ok: false, error: 'tls_error', connectedAddress: '127.0.0.1' })
      expect(serverNames).toEqual(['hooks.example.test'])
    } finally {
      await new Promise((done) => server.close(done))
    }
  })

  it('reports "tls_error" when the receiver does not speak TLS', async () => {
    const server = await startServer((_req, res) => res.writeHead(200).end())
    const result = await deliver(request({ url: `https://hooks.example.test:${server.port}/` }))
    expect(result).toMatchObject({ ok: false, error: 'tls_error' })
    expect(server.received).toHaveLength(0)
  })

  describe.skipIf(!hasOpenssl())('with a real certificate', () => {
    let directory = ''
    let certificate = ''
    let key = ''
    beforeAll(() => {
      directory = mkdtempSync(join(tmpdir(), 'svcpay-deliver-'))
      const certificatePath = join(directory, 'cert.pem')
      const keyPath = join(directory, 'key.pem')
      execFileSync(
        'openssl',
        [
          ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'],
          ...['-keyout', keyPath, '-out', certificatePath, '-days', '2', '-subj', '/CN=hooks.example.test'],
          ...['-addext', 'subjectAltName=DNS:hooks.example.test'],
        ],
        { stdio: 'ignore' },
      )
      certificate = readFileSync(certificatePath, 'utf8')
      key = readFileSync(keyPath, 'utf8')
    })
    afterAll(() => rmSync(directory, { recursive: true, force: true }))

    async function startHttpsServer(): Promise<{
      port: number
      hosts: string[]
      close: () => Promise<void>
    }> {
      const hosts: string[] = []
      const server = https.createServer({ cert: certificate, key }, (req, res) => {
        hosts.push(req.headers.host ?? '')
        req.resume()
        req.on('end', () => res.writeHead(200).end())
      })
      await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
      const close = () =>
        new Promise<void>((done) => {
          server.closeAllConnections()
          server.close(() => done())
        })
      return { port: (server.address() as AddressInfo).port, hosts, close }
    }

    it('verifies the certificate against the host name, not the connected address', async () => {
      const server = await startHttpsServer()
      try {
        const result = await deliver(
          request({ url: `https://hooks.example.test:${server.port}/`, ca: certificate }),
        )
        expect(result).toMatchObject({ ok: true, status: 200, connectedAddress: '127.0.0.1' })
        expect(server.hosts).toEqual([`hooks.example.test:${server.port}`])
      } finally {
        await server.close()
      }
    })

    it('refuses an untrusted certificate and one issued for another name', async () => {
      const server = await startHttpsServer()
      try {
        const untrusted = await deliver(request({ url: `https://hooks.example.test:${server.port}/` }))
        expect(untrusted).toMatchObject({ ok: false, error: 'tls_error' })
        const otherName = await deliver(
          request({ url: `https://other.example.test:${server.port}/`, ca: certificate }),
        )
        expect(otherName).toMatchObject({ ok: false, error: 'tls_error' })
        expect(server.hosts).toHaveLength(0)
      } finally {
        await server.close()
      }
    })
  })
})

function hasOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}
