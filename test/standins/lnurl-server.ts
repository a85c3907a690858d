import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import https from 'node:https'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sha256 } from '@noble/hashes/sha2.js'
import { utf8ToBytes } from '@noble/hashes/utils.js'

/**
 * A payee's LNURL-pay service on the internet (a wallet provider serving Lightning Addresses),
 * played over real HTTPS with a certificate made for the test. It answers as LUD-06 (payRequest),
 * LUD-12 (comments) and LUD-16 (Lightning Address) say, and can misbehave on demand.
 *
 * Its invoices are issued by `issueInvoice`, so that the test's Lightning network can pay them: the
 * sandbox node's outside world, or the LND stand-in's.
 */

/** The host names the certificate is made for; tests resolve them to 127.0.0.1. */
export const LNURL_STANDIN_HOST = 'wallet.example'

export interface TestCertificate {
  certPem: string
  keyPem: string
}

/**
 * A self-signed certificate for localhost, 127.0.0.1 and {@link LNURL_STANDIN_HOST}, made with the
 * openssl CLI into a temporary directory (removed again). The client trusts it as an extra CA;
 * nothing turns TLS verification off.
 */
export function makeTestCertificate(): TestCertificate {
  const dir = mkdtempSync(join(tmpdir(), 'svcpay-lnurl-cert-'))
  try {
    const key = join(dir, 'key.pem')
    const cert = join(dir, 'cert.pem')
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-addext',
        `subjectAltName=DNS:localhost,DNS:${LNURL_STANDIN_HOST},IP:127.0.0.1`,
        '-keyout',
        key,
        '-out',
        cert,
      ],
      { stdio: 'ignore' },
    )
    return { certPem: readFileSync(cert, 'utf8'), keyPem: readFileSync(key, 'utf8') }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Ways the service misbehaves, for the next answers until set back to `none`. */
export type LnurlMisbehaviour =
  | 'none'
  /** The callback's invoice is for 1 sat more than asked. */
  | 'wrong-amount'
  /** The callback's invoice commits to other metadata than the payRequest showed. */
  | 'wrong-hash'
  /** Every answer is `{ status: "ERROR", reason }` (LUD-06), the reason with a control character. */
  | 'error'
  /** A 100 KiB JSON answer. */
  | 'oversize'
  /** Answers nothing until closed. */
  | 'slow'
  /** A 302 to the same path on another host. */
  | 'redirect'
  /** A proxy's HTML error page with status 200. */
  | 'not-json'
  /** The payRequest's callback names a private address. */
  | 'private-callback'

export interface LnurlStandIn {
  /** `https://wallet.example:<port>`, the base of its URLs. */
  origin: string
  port: number
  /** The CA the client must trust: the server's own certificate. */
  caPem: string
  misbehave: LnurlMisbehaviour
  /** The metadata string of a user's payRequest (its sha256 is the invoice's description hash). */
  metadataOf(user: string): string
  /** Path and query of every request, in order. */
  seen: string[]
  /** LUD-12: the longest comment accepted. */
  commentAllowed: number
  close(): Promise<void>
}

const MIN_SENDABLE_MSAT = 1_000
const MAX_SENDABLE_MSAT = 100_000_000_000
const USERS = new Set(['alice', 'bob'])

export async function startLnurlStandIn(opts: {
  /** Issues an invoice of the test's outside world for exactly this amount and description hash. */
  issueInvoice(amountMsat: bigint, descriptionHash: Uint8Array): Promise<string>
  certificate?: TestCertificate
}): Promise<LnurlStandIn> {
  const { certPem, keyPem } = opts.certificate ?? makeTestCertificate()
  const pending = new Set<import('node:http').ServerResponse>()
  const metadataOf = (user: string) =>
    // LUD-06: metadata is a JSON array of [mime, content] in a string; LUD-16 adds text/identifier.
    JSON.stringify([
      ['text/plain', `Pay ${user} on the stand-in wallet`],
      ['text/identifier', `${user}@${LNURL_STANDIN_HOST}`],
    ])

  const server = https.createServer({ cert: certPem, key: keyPem }, (req, res) => {
    const url = new URL(req.url ?? '/', `https://${LNURL_STANDIN_HOST}`)
    standIn.seen.push(`${url.pathname}${url.search}`)
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' })
      res.end(JSON.stringify(body))
    }
    switch (standIn.misbehave) {
      case 'slow':
        pending.add(res)
        return
      case 'oversize':
        return json(200, { tag: 'payRequest', padding: 'x'.repeat(100 * 1024) })
      case 'redirect':
        res.writeHead(302, { location: `https://127.0.0.2:${standIn.port}${url.pathname}` })
        return res.end()
      case 'not-json':
        res.writeHead(200, { 'content-type': 'text/html' })
        return res.end('<html><body>502 Bad Gateway</body></html>')
      case 'error':
        // LUD-06: "in case of an error" the service answers this, at any step.
        return json(200, { status: 'ERROR', reason: 'Payee\u0007 is on holiday' })
    }
    const wellKnown = /^\/\.well-known\/lnurlp\/([a-z0-9\-_.+]+)$/.exec(url.pathname)
    if (req.method === 'GET' && wellKnown) {
      // LUD-16: the address user@domain is served at https://domain/.well-known/lnurlp/user.
      const user = wellKnown[1]!
      if (!USERS.has(user)) return json(404, { status: 'ERROR', reason: 'Unknown user' })
      const host = req.headers.host ?? LNURL_STANDIN_HOST
      // LUD-06 step 3; the callback keeps a query of its own, so the wallet must append with `&`.
      return json(200, {
        tag: 'payRequest',
        callback:
          standIn.misbehave === 'private-callback'
            ? `https://10.0.0.1/lnurlp/${user}/callback?k=1`
            : `https://${host}/lnurlp/${user}/callback?k=1`,
        minSendable: MIN_SENDABLE_MSAT,
        maxSendable: MAX_SENDABLE_MSAT,
        metadata: metadataOf(user),
        // LUD-12: the payee accepts a comment of this many characters.
        commentAllowed: standIn.commentAllowed,
      })
    }
    const callback = /^\/lnurlp\/([a-z0-9\-_.+]+)\/callback$/.exec(url.pathname)
    if (req.method === 'GET' && callback && USERS.has(callback[1]!)) {
      // LUD-06 step 5: `amount` in millisatoshis, within the bounds shown.
      const amount = url.searchParams.get('amount') ?? ''
      if (url.searchParams.get('k') !== '1' || !/^[1-9][0-9]*$/.test(amount))
        return json(400, { status: 'ERROR', reason: 'Bad callback query' })
      const amountMsat = BigInt(amount)
      if (amountMsat < BigInt(MIN_SENDABLE_MSAT) || amountMsat > BigInt(MAX_SENDABLE_MSAT))
        return json(200, { status: 'ERROR', reason: 'Amount out of range' })
      // LUD-12: a longer comment than commentAllowed is refused.
      if ((url.searchParams.get('comment') ?? '').length > standIn.commentAllowed)
        return json(200, { status: 'ERROR', reason: 'Comment too long' })
      const user = callback[1]!
      const metadata = standIn.misbehave === 'wrong-hash' ? metadataOf(`${user}-other`) : metadataOf(user)
      const invoiceMsat = standIn.misbehave === 'wrong-amount' ? amountMsat + 1_000n : amountMsat
      // LUD-06 step 6: the invoice's description hash is sha256 of the metadata string.
      opts.issueInvoice(invoiceMsat, sha256(utf8ToBytes(metadata))).then(
        (pr) => json(200, { pr, routes: [] }),
        () => json(500, { status: 'ERROR', reason: 'Node unavailable' }),
      )
      return
    }
    json(404, { status: 'ERROR', reason: 'Not found' })
  })
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
  const port = (server.address() as AddressInfo).port

  const standIn: LnurlStandIn = {
    origin: `https://${LNURL_STANDIN_HOST}:${port}`,
    port,
    caPem: certPem,
    misbehave: 'none',
    metadataOf,
    seen: [],
    commentAllowed: 32,
    async close() {
      for (const res of pending) res.destroy()
      server.closeAllConnections()
      await new Promise<void>((done) => server.close(() => done()))
    },
  }
  return standIn
}
