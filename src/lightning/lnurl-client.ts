import https from 'node:https'

import { checkCallbackUrl } from '../events/callback-url.js'
import { pinnedLookup, resolveAllowed, type ResolveHost } from '../events/outbound-guard.js'
import { httpRequest, TRANSPORT_CODES, type HttpResponse } from '../rails/http-json.js'
import { RailFailure } from '../rails/rail.js'
import { lnSendError, type LnSendError } from './errors.js'
import { refusedByPayee } from './lnurl-pay.js'

/** One LNURL request, resolution and connection included, gets this long. */
export const LNURL_TIMEOUT_MS = 5_000
/** An LNURL answer is a few hundred bytes; one near this is not an LNURL service. */
export const LNURL_RESPONSE_BYTES_MAX = 64 * 1024

/**
 * How the service reaches a payee's LNURL service. Production has the defaults only: https, public
 * addresses, the system's resolver and certificate authorities. The other fields exist for tests,
 * which set them through the container's options, never from the environment.
 */
export interface LnurlClientOptions {
  timeoutMs: number
  /** Tests only: a stand-in on 127.0.0.1 may be reached (still https, still through the guard). */
  allowLoopback?: boolean
  /** Tests only: resolves names instead of the system resolver. */
  resolveHost?: ResolveHost
  /** Tests only: a certificate authority trusted beside the system's (the stand-in's own). */
  ca?: string
  /** Tests only: the port of a URL that names none (a Lightning Address has no port). */
  defaultPort?: number
}

export const LNURL_CLIENT_DEFAULTS: LnurlClientOptions = { timeoutMs: LNURL_TIMEOUT_MS }

/**
 * GETs one LNURL URL and returns its JSON, or the refusal naming `field`. SSRF-safe as webhook
 * delivery is (src/events/outbound-guard.ts): https only, the name checked, resolved once, every
 * address allowed, the socket pinned to the checked one; redirects are not followed; one time-out
 * for the whole exchange; the answer capped and required to be JSON. An `ERROR` answer (LUD-06) is
 * `lnurl_error` with the payee's reason, cleaned.
 */
export async function getLnurlJson(
  opts: LnurlClientOptions,
  target: URL,
  field: string,
): Promise<{ json: unknown } | LnSendError> {
  const startedAt = performance.now()
  const url = new URL(target.href)
  if (url.protocol !== 'https:')
    return lnSendError('lnurl_invalid_response', field, 'the payee names a URL that is not https')
  if (opts.defaultPort !== undefined && url.port === '') url.port = String(opts.defaultPort)
  const allowLoopback = opts.allowLoopback === true
  const named = checkCallbackUrl(url.href, { allowHttp: allowLoopback, allowPrivate: false })
  if (!named.ok) {
    return named.code === 'blocked_address' || named.code === 'blocked_host'
      ? lnSendError('lnurl_private_address', field, `the payee's service ${named.issue}`)
      : lnSendError('lnurl_invalid_response', field, `the payee's URL ${named.issue}`)
  }
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1')
  const policy = { allowLoopback, allowPrivate: false }
  const chosen = await resolveAllowed(host, { lookup: opts.resolveHost, timeoutMs: opts.timeoutMs, policy })
  if (chosen === 'blocked_address')
    return lnSendError('lnurl_private_address', field, `${host} resolves to a private or local address`)
  if (typeof chosen === 'string')
    return lnSendError('lnurl_unreachable', field, `${host} could not be resolved (${chosen})`)

  const remainingMs = Math.floor(opts.timeoutMs - (performance.now() - startedAt))
  // A fresh agent per request, its lookup pinned to the address checked above: no pooled socket
  // and no second resolution.
  const agent = new https.Agent({
    keepAlive: false,
    lookup: pinnedLookup(chosen),
    ...(opts.ca === undefined ? {} : { ca: opts.ca }),
  })
  let answer: HttpResponse
  try {
    if (remainingMs <= 0) throw new RailFailure(TRANSPORT_CODES.timeout, 'time-out', true)
    answer = await httpRequest({
      url: url.href,
      method: 'GET',
      headers: { 'user-agent': 'svcpay-lnurl/1' },
      timeoutMs: remainingMs,
      agent,
      responseBytesMax: LNURL_RESPONSE_BYTES_MAX,
      label: `GET ${host}`,
    })
  } catch (err) {
    return transportRefusal(err, field, opts.timeoutMs)
  } finally {
    agent.destroy()
  }
  return judgeAnswer(answer, field)
}

function transportRefusal(err: unknown, field: string, timeoutMs: number): LnSendError {
  const code = err instanceof RailFailure ? err.code : ''
  if (code === TRANSPORT_CODES.tooLarge)
    return lnSendError(
      'lnurl_invalid_response',
      field,
      `the payee's service answered more than ${LNURL_RESPONSE_BYTES_MAX} bytes`,
    )
  if (code === TRANSPORT_CODES.timeout)
    return lnSendError(
      'lnurl_unreachable',
      field,
      `the payee's service did not answer within ${timeoutMs} ms`,
    )
  if (code === TRANSPORT_CODES.tls)
    return lnSendError('lnurl_unreachable', field, "the payee's service has no valid TLS certificate")
  return lnSendError('lnurl_unreachable', field, "the payee's service could not be reached")
}

/** What an answer is worth: JSON of a 2xx, or the payee's `ERROR` whatever the status. */
function judgeAnswer(answer: HttpResponse, field: string): { json: unknown } | LnSendError {
  const invalid = (issue: string) =>
    lnSendError('lnurl_invalid_response', field, `the payee's service ${issue}`)
  if (answer.status >= 300 && answer.status <= 399)
    return invalid(`redirected (HTTP ${answer.status}); redirects are not followed`)
  const mediaType = answer.contentType.split(';')[0]!.trim().toLowerCase()
  if (mediaType !== 'application/json' && !mediaType.endsWith('+json'))
    return invalid(`answered ${mediaType || 'no content type'}, not JSON (HTTP ${answer.status})`)
  let json: unknown
  try {
    json = JSON.parse(answer.text)
  } catch {
    return invalid(`answered malformed JSON (HTTP ${answer.status})`)
  }
  const refused = refusedByPayee(json, field)
  if (refused) return refused
  if (answer.status < 200 || answer.status > 299) return invalid(`answered HTTP ${answer.status}`)
  return { json }
}
