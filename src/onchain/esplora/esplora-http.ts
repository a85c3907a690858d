/**
 * One request to an Esplora REST API and what its status means, and the small reads every other
 * part shares: a JSON answer, the tip's height, and a transaction's confirmations.
 */
import { httpRequest, parseJsonText, TRANSPORT_CODES } from '../../rails/http-json.js'
import { RailFailure } from '../../rails/rail.js'

/** One GET (or POST with a body): a 2xx answer's text, null for a 404, a failure for the rest. */
export type EsploraRequest = (path: string, body?: string) => Promise<string | null>

/** Where requests go; fixed when the rail is built. */
export interface EsploraEndpoint {
  /** The base URL without a trailing slash. */
  baseUrl: string
  timeoutMs: number
}

export async function esploraRequest(
  endpoint: EsploraEndpoint,
  path: string,
  body?: string,
): Promise<string | null> {
  const res = await httpRequest({
    url: endpoint.baseUrl + path,
    method: body === undefined ? 'GET' : 'POST',
    headers: body === undefined ? {} : { 'content-type': 'text/plain' },
    body,
    timeoutMs: endpoint.timeoutMs,
  })
  return readEsploraAnswer(path, res.status, res.text)
}

/** The body text of a 2xx answer, null for a 404, a failure for the rest. */
export function readEsploraAnswer(path: string, status: number, text: string): string | null {
  if (status >= 200 && status < 300) return text
  if (status === 404) return null
  const message = `esplora ${path.split('/').slice(0, 2).join('/')}: HTTP ${status} ${text.slice(0, 1000)}`
  // 429 is a public instance's rate limit: it passes. Other 4xx say the request itself is wrong.
  const retryable = status === 429 || status >= 500
  throw new RailFailure(status === 400 ? 'rejected' : 'node_error', message, retryable)
}

/** A GET whose answer must exist and be JSON. */
export async function getJson(request: EsploraRequest, path: string): Promise<unknown> {
  const text = await request(path)
  if (text === null) throw new RailFailure('node_error', `esplora ${path}: not found`, false)
  return parseJsonText(text, `esplora ${path}`)
}

export async function tipHeight(request: EsploraRequest): Promise<number> {
  const text = (await request('/blocks/tip/height')) ?? ''
  if (!/^\d+$/.test(text.trim()))
    throw new RailFailure(TRANSPORT_CODES.badResponse, 'esplora tip height', true)
  return Number(text.trim())
}

/** A transaction's confirmations from its `status`, against a tip read a moment ago. */
export function confirmationsOf(status: Record<string, unknown>, tip: number): number {
  if (status.confirmed !== true) return 0
  const height = Number(status.block_height)
  if (!Number.isSafeInteger(height)) throw new RailFailure(TRANSPORT_CODES.badResponse, 'block_height', true)
  // A block above the tip we read a moment ago is a race with a new block: count it once.
  return Math.max(1, tip - height + 1)
}
