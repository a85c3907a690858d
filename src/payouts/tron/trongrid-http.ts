/**
 * One request to TronGrid (or any java-tron node's HTTP API) through src/rails/http-json.ts, and
 * what each way it can go wrong becomes: the one place our `tron_*` transport and HTTP failure
 * codes are decided. Also the small readers of the node's JSON every other part shares.
 */
import { hexToBytes } from '@noble/hashes/utils.js'
import {
  httpRequest,
  renameTransportFailure,
  TRANSPORT_CODES,
  type TransportCode,
} from '../../rails/http-json.js'
import { RailFailure } from '../../rails/rail.js'

export type Json = Record<string, unknown>

/** Where requests go and how they are sent; fixed when the rail is built. */
export interface TronGridEndpoint {
  /** The base URL without a trailing slash. */
  baseUrl: string
  /** Sent as `TRON-PRO-API-KEY`. */
  apiKey?: string
  timeoutMs: number
}

/**
 * Our codes for a request that got no usable answer (the codes `httpRequest` raises). A redirect
 * is refused as unreachable; what an answer's status and body mean is decided in `tronGridRequest`.
 */
const NO_ANSWER: Record<TransportCode, string> = {
  [TRANSPORT_CODES.timeout]: 'tron_timeout',
  [TRANSPORT_CODES.unreachable]: 'tron_unreachable',
  [TRANSPORT_CODES.tls]: 'tron_unreachable',
  [TRANSPORT_CODES.tooLarge]: 'tron_bad_response',
}

/** A java-tron POST with a JSON body, or (no body) a GET of TronGrid's v1 API. */
export async function tronGridRequest(endpoint: TronGridEndpoint, path: string, body?: Json): Promise<Json> {
  const headers: Record<string, string> = {}
  if (body) headers['content-type'] = 'application/json'
  if (endpoint.apiKey) headers['TRON-PRO-API-KEY'] = endpoint.apiKey
  let res: { status: number; text: string }
  try {
    res = await httpRequest({
      url: endpoint.baseUrl + path,
      method: body ? 'POST' : 'GET',
      headers,
      ...(body ? { body: JSON.stringify(body) } : {}),
      timeoutMs: endpoint.timeoutMs,
      // The default bound (8 MiB) is ample for the largest answer, `getnowblock`'s whole block.
      label: path,
      refuseRedirects: true,
    })
  } catch (err) {
    throw renameTransportFailure(err, NO_ANSWER)
  }
  const text = res.text
  // TronGrid's v1 API answers a bad request 400 with {success: false, error}: keep its reason.
  if (!body && res.status === 400)
    throw new RailFailure('tron_http_400', `${path.split('?')[0]}: ${v1Error(text)}`, true)
  if (res.status === 401 || res.status === 403)
    throw new RailFailure(
      'tron_api_key_refused',
      `${path}: TronGrid refused the API key (HTTP ${res.status})`,
      true,
    )
  if (res.status !== 200)
    throw new RailFailure(`tron_http_${res.status}`, `${path} answered HTTP ${res.status}`, true)
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    throw new RailFailure('tron_bad_response', `${path} answered with something other than JSON`, true)
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new RailFailure('tron_bad_response', `${path} answered with something other than an object`, true)
  const answer = parsed as Json
  // java-tron reports exceptions as {"Error": "..."} with status 200.
  if (typeof answer.Error === 'string')
    throw new RailFailure('tron_node_error', `${path}: ${cleanMessage(answer.Error)}`, true)
  return answer
}

/** The reason of a TronGrid v1 error body, kept short and printable. */
export function v1Error(text: string): string {
  let reason = text
  try {
    const parsed = JSON.parse(text) as Json
    if (typeof parsed.error === 'string') reason = parsed.error
  } catch {
    // Not JSON: a gateway's page. Its first characters say enough.
  }
  return cleanMessage(reason, 200) || 'no reason given'
}

/** With `visible: false` the node hex-encodes its messages; anything else is taken as text. */
export function decodeNodeMessage(message: unknown): string {
  if (typeof message !== 'string' || message.length === 0) return 'the node gave no reason'
  if (/^([0-9a-fA-F]{2})+$/.test(message)) {
    try {
      return cleanMessage(new TextDecoder('utf-8', { fatal: true }).decode(hexToBytes(message.toLowerCase())))
    } catch {
      return cleanMessage(message)
    }
  }
  return cleanMessage(message)
}

/** Node text ends up in logs and failure messages: keep it short and printable. */
export function cleanMessage(text: string, lengthMax = 300): string {
  return text.replace(/\p{Cc}/gu, ' ').slice(0, lengthMax)
}

/** A non-negative whole number from the node's JSON (absent means 0), exact or refused. */
export function count(value: unknown, what: string): bigint {
  if (value === undefined) return 0n
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)
    throw new RailFailure('tron_bad_response', `${what} is not a whole number`, true)
  return BigInt(value)
}

/** java-tron answers `{}` for what it does not have (a transaction, an account). */
export function hasKeys(value: Json): boolean {
  return Object.keys(value).length > 0
}
