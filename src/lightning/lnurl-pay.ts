import { bech32 } from '@scure/base'

import { commentChars, hasUnsafeCommentChar } from './comment-text.js'
import { lnSendError, type LnSendError } from './errors.js'

/**
 * What a Lightning send may name instead of an invoice, and what the payee's LNURL service answers
 * (LUD-01, 06, 12, 16, 17). Pure: parsing and checks only; the HTTP lives in lnurl-client.ts and the
 * order of the exchange in send-destination.ts.
 */

export const LN_ADDRESS_FIELD = 'destReq.reqDetails.lnAddress'
export const LNURL_FIELD = 'destReq.reqDetails.lnurl'
export const COMMENT_FIELD = 'destReq.reqDetails.comment'

/** LUD-16 usernames are `a-z0-9-_.+`; a bound of ours keeps the URL short. */
const USERNAME_RE = /^[a-z0-9\-_.+]{1,64}$/
/** A DNS name (labels of letters, digits and hyphens) or a dotted IPv4 literal, lower case. */
const DOMAIN_RE = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/
export const LN_ADDRESS_CHARS_MAX = 320
/** An `lnurl1…` longer than this is not a payee's link (a QR code holds no more). */
export const LNURL_CHARS_MAX = 2048
/** Comments we pass on at most, whatever a payee allows (LUD-12 leaves the bound to the payee). */
export const COMMENT_CHARS_MAX = 640

/** LUD-06 `payRequest`, as a payee's service (or ours) answers the first request. */
export interface PayRequest {
  tag: 'payRequest'
  callback: string
  minSendable: number
  maxSendable: number
  /** A JSON array as a string; the invoice's description hash is sha256 of exactly these bytes. */
  metadata: string
  /** LUD-12: the longest comment the payee accepts; absent or 0: none. */
  commentAllowed?: number
}

/** LUD-06 error answer, at either step. */
export interface LnurlError {
  status: 'ERROR'
  reason: string
}

/** Where the send goes, as the request names it. */
export type PayDestination =
  | { kind: 'invoice'; paymentRequest: string }
  | { kind: 'address'; lnAddress: string; username: string; domain: string; url: URL; field: string }
  | { kind: 'lnurl'; lnurl: string; url: URL; field: string }

/**
 * The one destination of a Lightning send's `reqDetails`: exactly one of `paymentRequest`,
 * `lnAddress` and `lnurl`. A missing one is left to the invoice check, which names the invoice.
 */
export function payDestination(
  details: Record<string, unknown> | undefined,
  ownHost?: string,
): PayDestination | LnSendError {
  const given = (['paymentRequest', 'lnAddress', 'lnurl'] as const).filter((k) => details?.[k] !== undefined)
  if (given.length > 1) {
    return lnSendError(
      'destination_ambiguous',
      `destReq.reqDetails.${given[1]}`,
      'give exactly one of paymentRequest, lnAddress and lnurl',
    )
  }
  if (details?.lnAddress !== undefined) return parseLnAddress(details.lnAddress)
  if (details?.lnurl !== undefined) return parseLnurl(details.lnurl, ownHost)
  return { kind: 'invoice', paymentRequest: details?.paymentRequest as string }
}

/** LUD-16: `user@domain` is served at `https://domain/.well-known/lnurlp/user`. */
export function parseLnAddress(value: unknown): PayDestination | LnSendError {
  const invalid = (issue: string) => lnSendError('ln_address_invalid', LN_ADDRESS_FIELD, issue)
  if (typeof value !== 'string' || value.length > LN_ADDRESS_CHARS_MAX)
    return invalid(`must be a Lightning Address, user@domain, at most ${LN_ADDRESS_CHARS_MAX} characters`)
  const text = value.trim().toLowerCase()
  const at = text.lastIndexOf('@')
  const username = text.slice(0, at)
  const domain = text.slice(at + 1)
  if (at < 1 || !USERNAME_RE.test(username))
    return invalid('the name before @ must be 1 to 64 of a-z, 0-9, -, _, . and +')
  // A URL resolves the dot segments `.` and `..` away: `/.well-known/lnurlp/..` is `/.well-known/`,
  // another resource than the payee's.
  if (username === '.' || username === '..') return invalid('the name before @ cannot be "." or ".."')
  // LUD-16 has a domain and no port; the LNURL of such a service is what pays it.
  if (/:\d*$/.test(domain)) return invalid('a Lightning Address has no port (LUD-16); pay its LNURL instead')
  if (!DOMAIN_RE.test(domain)) return invalid('the part after @ must be a domain name')
  const url = new URL(`https://${domain}/.well-known/lnurlp/${username}`)
  return {
    kind: 'address',
    lnAddress: `${username}@${domain}`,
    username,
    domain,
    url,
    field: LN_ADDRESS_FIELD,
  }
}

/**
 * LUD-01 bech32 `lnurl1…` (any case, `lightning:` tolerated) or LUD-17 `lnurlp://`, leading to an
 * https URL. LUD-01 takes http only on an onion service, which this service cannot reach; `ownHost`
 * (this service's host and port, from PUBLIC_BASE_URL) is the one http host taken, because an http
 * PUBLIC_BASE_URL makes that the LNURL this service advertises, and it is answered inside.
 */
export function parseLnurl(value: unknown, ownHost?: string): PayDestination | LnSendError {
  const invalid = (issue: string) => lnSendError('lnurl_invalid', LNURL_FIELD, issue)
  if (typeof value !== 'string' || value.length > LNURL_CHARS_MAX)
    return invalid(`must be an lnurl1… or lnurlp:// link, at most ${LNURL_CHARS_MAX} characters`)
  const text = value.trim().replace(/^lightning:/i, '')
  let target: string
  if (/^lnurlp:\/\//i.test(text)) {
    // LUD-17: https, or http for an onion domain.
    const rest = text.slice('lnurlp://'.length)
    const onion = /^[^/?#]*\.onion(:\d+)?([/?#]|$)/i.test(rest)
    target = `${onion ? 'http' : 'https'}://${rest}`
  } else if (/^lnurl1/i.test(text)) {
    if (text !== text.toLowerCase() && text !== text.toUpperCase())
      return invalid('mixed case: bech32 is written all in lower or all in upper case')
    try {
      const { prefix, words } = bech32.decode(text.toLowerCase() as `${string}1${string}`, LNURL_CHARS_MAX)
      if (prefix !== 'lnurl') return invalid('not an lnurl')
      target = new TextDecoder('utf-8', { fatal: true }).decode(bech32.fromWords(words))
    } catch {
      return invalid('not valid bech32')
    }
  } else {
    return invalid('must start with lnurl1 (LUD-01) or lnurlp:// (LUD-17)')
  }
  let url: URL
  try {
    url = new URL(target)
  } catch {
    return invalid('does not hold a URL')
  }
  const ours = ownHost !== undefined && url.host === ownHost.toLowerCase()
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && ours))
    return invalid('must lead to an https URL')
  return { kind: 'lnurl', lnurl: text, url, field: LNURL_FIELD }
}

/**
 * The optional LUD-12 comment: text within our bound, counted in characters (code points), without
 * control or bidirectional-override characters (comment-text.ts).
 */
export function parseComment(value: unknown): string | undefined | LnSendError {
  if (value === undefined) return undefined
  if (typeof value !== 'string' || commentChars(value) > COMMENT_CHARS_MAX || hasUnsafeCommentChar(value))
    return lnSendError(
      'comment_not_accepted',
      COMMENT_FIELD,
      `must be text of at most ${COMMENT_CHARS_MAX} characters, without control or bidirectional-override characters`,
    )
  return value
}

/** The reason of an `ERROR` answer, or undefined for any other JSON. */
function lnurlErrorReason(json: unknown): string | undefined {
  if (!isObject(json) || json.status !== 'ERROR') return undefined
  // Shown to the customer: printable, short.
  const reason = typeof json.reason === 'string' ? json.reason : ''
  const clean = reason
    .replace(/[^\x20-\x7e]/g, ' ')
    .trim()
    .slice(0, 200)
  return clean === '' ? 'no reason given' : clean
}

/** An `ERROR` answer (LUD-06, at either step) as the send's refusal naming `field`; else undefined. */
export function refusedByPayee(json: unknown, field: string): LnSendError | undefined {
  const reason = lnurlErrorReason(json)
  return reason === undefined
    ? undefined
    : lnSendError('lnurl_error', field, `the payee's service refused: ${reason}`)
}

/** LUD-06 step 3: the first answer, checked field by field. Returns an issue for a person when wrong. */
export function parsePayRequest(json: unknown): PayRequest | { issue: string } {
  if (!isObject(json)) return { issue: 'the answer is not a JSON object' }
  if (json.tag !== 'payRequest') return { issue: 'the answer is not a payRequest (LUD-06)' }
  const { callback, minSendable, maxSendable, metadata, commentAllowed } = json
  if (typeof callback !== 'string' || callback.length > 2048) return { issue: 'callback is missing' }
  if (!isMsat(minSendable) || !isMsat(maxSendable) || minSendable < 1 || minSendable > maxSendable)
    return { issue: 'minSendable and maxSendable must be whole millisatoshis, min ≤ max' }
  if (typeof metadata !== 'string' || metadata.length > 64 * 1024 || !isJsonArray(metadata))
    return { issue: 'metadata must be a JSON array in a string' }
  if (
    commentAllowed !== undefined &&
    !(Number.isSafeInteger(commentAllowed) && (commentAllowed as number) >= 0)
  )
    return { issue: 'commentAllowed must be a whole number' }
  return {
    tag: 'payRequest',
    callback,
    minSendable,
    maxSendable,
    metadata,
    ...(commentAllowed === undefined ? {} : { commentAllowed: commentAllowed as number }),
  }
}

/**
 * The amount and comment checked against the payee's pay request (LUD-06 step 4, LUD-12): the field
 * and issue of the first that does not fit.
 */
export function checkAgainstPayRequest(
  pay: PayRequest,
  amountMsat: bigint,
  comment: string | undefined,
): LnSendError | undefined {
  if (amountMsat < BigInt(pay.minSendable) || amountMsat > BigInt(pay.maxSendable)) {
    return lnSendError(
      'lnurl_amount_out_of_range',
      'destReq.amtRequested',
      `the payee accepts ${pay.minSendable} to ${pay.maxSendable} millisatoshis`,
    )
  }
  // LUD-12's commentAllowed is in characters: code points, not UTF-16 units.
  if (comment !== undefined && commentChars(comment) > (pay.commentAllowed ?? 0)) {
    return lnSendError(
      'comment_not_accepted',
      COMMENT_FIELD,
      pay.commentAllowed
        ? `the payee accepts comments of at most ${pay.commentAllowed} characters`
        : 'the payee accepts no comment',
    )
  }
  return undefined
}

/** LUD-06 step 5: `amount` (msat) and the LUD-12 `comment` appended to the callback's own query. */
export function callbackWith(callback: string, amountMsat: bigint, comment: string | undefined): string {
  const [base] = callback.split('#', 1) as [string]
  const query = `amount=${amountMsat}${comment === undefined ? '' : `&comment=${encodeURIComponent(comment)}`}`
  return `${base}${base.includes('?') ? '&' : '?'}${query}`
}

/** LUD-06 step 6: the invoice in the callback's answer. */
export function invoiceOf(json: unknown): string | { issue: string } {
  if (!isObject(json) || typeof json.pr !== 'string' || json.pr === '')
    return { issue: 'the answer has no invoice (pr)' }
  return json.pr
}

// Integers only; a far bound beyond 2^53 (a payee with no real maximum) is compared as it reads.
const isMsat = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v)

function isJsonArray(text: string): boolean {
  try {
    return Array.isArray(JSON.parse(text))
  } catch {
    return false
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}
