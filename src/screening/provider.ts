import http from 'node:http'
import https from 'node:https'
import { pinnedLookup, resolveAllowed, type ResolveHost } from '../events/outbound-guard.js'
import { httpRequest } from '../rails/http-json.js'
import type { Destination } from './normalise.js'

/**
 * The optional HTTP screening provider (SCREENING_URL): asked at quote, outside any database
 * transaction, about the destinations of a send (and about a deposit's sources), with one deadline
 * (SCREENING_TIMEOUT_MS) for resolving, connecting and reading. The host is resolved once and must
 * be public unless SCREENING_ALLOW_PRIVATE is set (a provider run beside the service); the socket
 * is pinned to the address checked, and a redirect is not followed. The request and answer are
 * described in docs/screening.md:
 *
 *   POST SCREENING_URL  Authorization: Bearer SCREENING_API_KEY
 *   {"reference":"txn_…","direction":"out","destinations":[{"type":"bitcoin","value":"bc1…"}]}
 *   200 {"matches":[{"type":"bitcoin","value":"bc1…","list":"…"}]}   (empty: nothing matched)
 *
 * Anything else (no answer in time, another status, a body that is not that shape) is an error,
 * which the caller treats as SCREENING_ON_ERROR says.
 */
export interface ProviderSettings {
  url: string
  apiKey: string
  timeoutMs: number
  allowPrivate: boolean
  resolveHost?: ResolveHost | undefined
}

export type ProviderAnswer =
  | { verdict: 'clear' }
  | { verdict: 'hit'; matches: Array<Destination & { list: string }> }
  | { verdict: 'error'; detail: string }

const ANSWER_BYTES_MAX = 64 * 1024
const MATCHES_MAX = 100

export type ScreeningProvider = (ask: {
  reference: string
  direction: 'in' | 'out'
  destinations: readonly Destination[]
}) => Promise<ProviderAnswer>

export function httpScreeningProvider(settings: ProviderSettings): ScreeningProvider {
  const target = new URL(settings.url)
  const host = target.hostname.replace(/^\[(.*)\]$/, '$1')
  const policy = { allowLoopback: settings.allowPrivate, allowPrivate: settings.allowPrivate }
  return async (ask) => {
    const startedAt = performance.now()
    const chosen = await resolveAllowed(host, {
      lookup: settings.resolveHost,
      timeoutMs: settings.timeoutMs,
      policy,
    })
    if (typeof chosen === 'string') return { verdict: 'error', detail: `provider host: ${chosen}` }
    const remainingMs = Math.floor(settings.timeoutMs - (performance.now() - startedAt))
    if (remainingMs <= 0) return { verdict: 'error', detail: 'provider time-out' }
    const options = { keepAlive: false, lookup: pinnedLookup(chosen) }
    const agent = target.protocol === 'https:' ? new https.Agent(options) : new http.Agent(options)
    try {
      const answer = await httpRequest({
        url: target.href,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${settings.apiKey}`,
          'user-agent': 'svcpay-screening/1',
        },
        body: JSON.stringify({
          reference: ask.reference,
          direction: ask.direction,
          destinations: ask.destinations.map((d) => ({ type: d.type, value: d.value })),
        }),
        timeoutMs: remainingMs,
        agent,
        responseBytesMax: ANSWER_BYTES_MAX,
        refuseRedirects: true,
        label: `POST ${host}`,
      })
      if (answer.status !== 200) return { verdict: 'error', detail: `provider answered ${answer.status}` }
      return readAnswer(answer.text, ask.destinations)
    } catch (err) {
      return { verdict: 'error', detail: `provider: ${(err as Error).message}`.slice(0, 200) }
    } finally {
      agent.destroy()
    }
  }
}

/** The provider's answer: only matches on destinations that were asked about count. */
export function readAnswer(text: string, asked: readonly Destination[]): ProviderAnswer {
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    return { verdict: 'error', detail: 'provider answer is not JSON' }
  }
  const matches = (body as { matches?: unknown } | null)?.matches
  if (!Array.isArray(matches) || matches.length > MATCHES_MAX)
    return { verdict: 'error', detail: 'provider answer has no matches list' }
  const found: Array<Destination & { list: string }> = []
  for (const m of matches) {
    const { type, value, list } = (m ?? {}) as Record<string, unknown>
    const mine = asked.find((d) => d.type === type && d.value === value)
    if (!mine) return { verdict: 'error', detail: 'provider matched a destination it was not asked about' }
    found.push({ ...mine, list: typeof list === 'string' && list !== '' ? list.slice(0, 100) : 'provider' })
  }
  return found.length === 0 ? { verdict: 'clear' } : { verdict: 'hit', matches: found }
}
