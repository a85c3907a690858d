/**
 * One request to the bank payout partner: its headers (the API key, and our signature when a
 * signing secret is set), the send through src/rails/http-json.ts, and the failure codes of a
 * request that got no usable answer. What an answer's status means is decided by each operation.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'
import {
  httpRequest,
  renameTransportFailure,
  TRANSPORT_CODES,
  type TransportCode,
} from '../../rails/http-json.js'

export type Json = Record<string, unknown>

/** An answer: its status, and its body when that is a JSON object. */
export interface BankAnswer {
  status: number
  json: Json | undefined
}

export type BankRequest = (
  method: 'GET' | 'POST',
  path: string,
  body?: Json,
  extraHeaders?: Record<string, string>,
) => Promise<BankAnswer>

/** The headers of a signed request (docs/payouts.md, "Request signing"). */
export const SIGNATURE_HEADER = 'x-svcpay-signature'
export const TIMESTAMP_HEADER = 'x-svcpay-timestamp'
/** How far a signed request's timestamp may be from the partner's clock before it is refused. */
export const SIGNATURE_MAX_AGE_MS = 5 * 60_000

/** A notification is one payout or one credit; anything near this size is not one. */
export const NOTIFICATION_BYTES_MAX = 64 * 1024

/** A payout is a few hundred bytes; a partner answering more than this is broken. */
const RESPONSE_BYTES_MAX = 256 * 1024
/**
 * Our codes for a request that got no usable answer (the codes `httpRequest` raises). A redirect
 * is refused as unreachable; what an answer's status means is decided by each operation.
 */
const NO_ANSWER: Record<TransportCode, string> = {
  [TRANSPORT_CODES.timeout]: 'bank_timeout',
  [TRANSPORT_CODES.unreachable]: 'bank_unreachable',
  [TRANSPORT_CODES.tls]: 'bank_unreachable',
  [TRANSPORT_CODES.tooLarge]: 'bank_bad_response',
}

/** Where requests go and how they are sent and signed; fixed when the rail is built. */
export interface BankEndpoint {
  /** The base URL without a trailing slash. */
  baseUrl: string
  apiKey: string
  signingSecret?: string
  timeoutMs: number
  now: () => number
}

/**
 * The signature of one request: lowercase hex HMAC-SHA256, under the signing secret, of
 * `<timestamp>.<METHOD>.<path>.<body>`, where the timestamp is epoch milliseconds as sent in
 * `X-Svcpay-Timestamp`, the path includes any query, and the body is the exact bytes sent (empty
 * for a GET). The partner recomputes it over what it received.
 */
export function signRequest(
  secret: string,
  timestamp: string,
  method: string,
  path: string,
  body: string | Uint8Array,
): string {
  return createHmac('sha256', secret)
    .update(`${timestamp}.${method.toUpperCase()}.${path}.`)
    .update(body)
    .digest('hex')
}

/** Sends one request; a failure to get an answer becomes a `bank_*` failure (NO_ANSWER). */
export async function bankRequest(
  endpoint: BankEndpoint,
  method: 'GET' | 'POST',
  path: string,
  body?: Json,
  extraHeaders: Record<string, string> = {},
): Promise<BankAnswer> {
  // These bytes are both signed and sent: the partner checks the signature over what it received.
  const sent = body ? Buffer.from(JSON.stringify(body), 'utf8') : undefined
  const headers = requestHeaders(endpoint, method, path, sent, extraHeaders)
  try {
    const res = await httpRequest({
      url: endpoint.baseUrl + path,
      method,
      headers,
      body: sent,
      timeoutMs: endpoint.timeoutMs,
      responseBytesMax: RESPONSE_BYTES_MAX,
      label: `${method} ${pathLabel(path)}`,
      refuseRedirects: true,
    })
    return { status: res.status, json: parseObject(res.text) }
  } catch (err) {
    throw renameTransportFailure(err, NO_ANSWER)
  }
}

/**
 * A path as failure messages show it: an account inquiry's path holds the account number
 * (personal data), so it is shown as its template.
 */
export function pathLabel(path: string): string {
  return path.startsWith('/v1/accounts/') ? '/v1/accounts/{bankBin}/{accountNumber}' : path
}

/** The headers of one request: the API key, the body's type, and the signature when we sign. */
export function requestHeaders(
  endpoint: Pick<BankEndpoint, 'apiKey' | 'signingSecret' | 'now'>,
  method: 'GET' | 'POST',
  path: string,
  sent: Uint8Array | undefined,
  extraHeaders: Record<string, string> = {},
): Record<string, string> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${endpoint.apiKey}`,
    ...extraHeaders,
  }
  if (sent) headers['content-type'] = 'application/json'
  if (endpoint.signingSecret) {
    const timestamp = String(endpoint.now())
    headers[TIMESTAMP_HEADER] = timestamp
    headers[SIGNATURE_HEADER] = signRequest(endpoint.signingSecret, timestamp, method, path, sent ?? '')
  }
  return headers
}

/** A body as a JSON object, or undefined when it is empty, not JSON, or not an object. */
export function parseObject(text: string): Json | undefined {
  if (text.length === 0) return undefined
  try {
    const value: unknown = JSON.parse(text)
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : undefined
  } catch {
    return undefined
  }
}

/**
 * The bytes of a partner notification when `signature` (the `X-Partner-Signature` header) is the
 * lowercase hex HMAC-SHA256 of exactly those bytes under `secret`, compared in constant time; null
 * when there is no secret, the signature is missing or wrong, or the body is too large.
 */
export function partnerSignedBody(
  secret: string | undefined,
  rawBody: string | Uint8Array,
  signature: string | undefined,
): Buffer | null {
  if (!secret || typeof signature !== 'string') return null
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : Buffer.from(rawBody)
  if (body.length > NOTIFICATION_BYTES_MAX || !/^[0-9a-f]{64}$/.test(signature)) return null
  const expected = createHmac('sha256', secret).update(body).digest()
  return timingSafeEqual(expected, Buffer.from(signature, 'hex')) ? body : null
}
