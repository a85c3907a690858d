import { decodeResponse } from './decode.js'
import { SvcpayWebhookError } from './errors.js'
import { constantTimeEqual, fromHex, hmacSha256 } from './hmac.js'
import type { TransactionEvent } from './types.js'

/**
 * The signature headers a delivery may carry: `X-Svcpay-Signature` (variant a, POST on every state
 * change) and `X-Svc-Signature` (variant b, PUT on final states). Receivers accept both.
 */
export const SIGNATURE_HEADERS = ['x-svcpay-signature', 'x-svc-signature'] as const

/** The HTTP methods a delivery may use; route both to your receiver. */
export const WEBHOOK_METHODS = ['POST', 'PUT'] as const

/** Headers as Node (`IncomingHttpHeaders`), a plain object, or a Web `Headers` give them. */
export type HeadersLike = Headers | Record<string, string | string[] | undefined>

const SHA256_BYTES = 32

function header(headers: HeadersLike, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function' && typeof (headers as Headers).has === 'function') {
    return (headers as Headers).get(name) ?? undefined
  }
  const record = headers as Record<string, string | string[] | undefined>
  for (const key of Object.keys(record)) {
    if (key.toLowerCase() !== name) continue
    const v = record[key]
    return Array.isArray(v) ? v[0] : v
  }
  return undefined
}

function reject(message: string, code = 'invalid_signature', status = 401): never {
  throw new SvcpayWebhookError({ code, message, status })
}

/**
 * Verifies a webhook delivery and returns its event. `rawBody` must be the exact bytes received
 * (a Buffer or Uint8Array, or the body text) — parse JSON only after this, never before. The
 * signature (lowercase hex HMAC-SHA256 of the body under the webhook secret) is read from either
 * header name and compared in constant time. Throws {@link SvcpayWebhookError} (status 401) when it
 * does not verify; answer such a request with 401 and do not act on it.
 *
 * The same event may arrive more than once: act on it idempotently (by txnId and txnState).
 */
export async function verifyWebhook(
  rawBody: string | Uint8Array,
  headers: HeadersLike,
  secret: string,
): Promise<TransactionEvent> {
  if (!secret) throw new TypeError('verifyWebhook needs the webhook secret')
  const given = SIGNATURE_HEADERS.map((name) => header(headers, name)).filter(
    (v): v is string => v !== undefined,
  )
  if (given.length === 0) reject('The delivery carries no X-Svcpay-Signature or X-Svc-Signature header')
  const expected = await hmacSha256(secret, rawBody)
  let valid = false
  for (const value of given) {
    const bytes = fromHex(value.trim())
    // Every candidate is compared in full, so the time taken does not depend on which one matched.
    if (bytes && bytes.length === SHA256_BYTES && constantTimeEqual(bytes, expected)) valid = true
  }
  if (!valid) reject('The webhook signature does not match the body and secret')
  return parseEvent(typeof rawBody === 'string' ? rawBody : new TextDecoder().decode(rawBody))
}

/**
 * Verifies a delivery given as a Web-standard `Request` (Deno, Bun, Cloudflare Workers, Next.js
 * route handlers, `Request` objects in Node) and returns its event. Accepts POST and PUT; reads
 * the body's bytes itself, so pass the request before anything else consumes its body.
 */
export async function verifyWebhookRequest(request: Request, secret: string): Promise<TransactionEvent> {
  if (!(WEBHOOK_METHODS as readonly string[]).includes(request.method.toUpperCase())) {
    reject(`A webhook delivery is a POST or a PUT, not a ${request.method}`, 'method_not_allowed', 405)
  }
  const body = new Uint8Array(await request.arrayBuffer())
  return verifyWebhook(body, request.headers, secret)
}

/** The event of a verified body, checked for the fields every delivery carries. */
export function parseEvent(text: string): TransactionEvent {
  let event: unknown
  try {
    event = decodeResponse(text, { amounts: 'decimal' })
  } catch {
    reject('The webhook body is not JSON', 'invalid_event', 400)
  }
  const e = event as Record<string, unknown>
  if (
    typeof e !== 'object' ||
    e === null ||
    typeof e.txnId !== 'string' ||
    typeof e.txnState !== 'string' ||
    typeof e.updatedAt !== 'number'
  ) {
    reject('The webhook body is not a transaction event', 'invalid_event', 400)
  }
  return {
    txnId: e.txnId as string,
    extRefId: typeof e.extRefId === 'string' ? e.extRefId : '',
    txnState: e.txnState as string,
    msg: typeof e.msg === 'string' ? e.msg : '',
    updatedAt: e.updatedAt as number,
  }
}
