import { decodeResponse, encodeBody, type DecodeOptions } from './decode.js'
import { errorFromResponse, SvcpayError, SvcpayNetworkError } from './errors.js'
import { hmacSha256, randomHex, toHex } from './hmac.js'
import type { AmountFormat } from './amounts.js'

/**
 * Options of {@link SvcpayClient}; only `baseUrl`, `apiKey` and one of `apiSecret` or
 * `signTokenRequest` are required.
 */
export interface ClientOptions<F extends AmountFormat = 'decimal'> {
  /** The service's base address, e.g. `http://localhost:8080` (no `/api/v2`). */
  baseUrl: string
  /** The API key (`X-Api-Key`). */
  apiKey: string
  /**
   * The API secret; it signs token requests and never leaves this process. Only on a server: code
   * that runs in a browser must never hold it (use `signTokenRequest` there).
   */
  apiSecret?: string
  /**
   * Instead of `apiSecret`, for browsers: asks your backend for the signature of a token request.
   * Given the text to sign (`<API_KEY>&payload=<body>`), it resolves to its lowercase hex
   * HMAC-SHA256 under the API secret, computed where the secret is kept.
   */
  signTokenRequest?: (message: string) => Promise<string>
  /** Amounts in responses as exact decimal strings (`'decimal'`, the default) or bigint minor units (`'minor'`). */
  amounts?: F
  /** Decimals of currencies the SDK does not know yet, e.g. `{ XYZ: 4 }`. */
  currencies?: Readonly<Record<string, number>>
  /** How many times one call is retried after a 429, a network error or a 5xx (where safe). Default 3. */
  maxRetries?: number
  /** The longest the SDK waits before one retry; a 429 asking for longer is thrown at once. Default 60 000 ms. */
  maxRetryWaitMs?: number
  /** Time-out of one HTTP attempt. Default 30 000 ms. */
  timeoutMs?: number
  /** A token is renewed this long before its expiredAt (at most a fifth of its lifetime). Default 60 000 ms. */
  tokenRenewBeforeMs?: number
  /** The fetch to use; the platform's by default. */
  fetch?: typeof fetch
}

/** The rate-limit headers of the latest answer. */
export interface RateLimitInfo {
  limit: number
  remaining: number
  /** When the reported window resets, epoch ms. */
  resetAt: number
}

/**
 * When a call may be sent again after a failure that leaves its outcome unknown (a network error,
 * a time-out, a 502/503/504): `safe` for reads and idempotent writes (confirm, an update, a create
 * with extRefId), `never` for the rest. A 429 or a 401 is always retried, because the service
 * refuses those before doing anything.
 */
export type RetryPolicy = 'safe' | 'never'

export interface CallOptions {
  body?: unknown
  query?: Record<string, string | number | boolean | undefined>
  retry: RetryPolicy
  decode?: Partial<DecodeOptions>
  signal?: AbortSignal
}

interface CachedToken {
  accessToken: string
  accountId: string
  expiredAt: number
  renewAt: number
}

const TOKEN_PATH = '/api/v2/authentication/token-signature'
const BACKOFF_BASE_MS = 200
const BACKOFF_MAX_MS = 5_000
/** Statuses whose request may not have been carried out, retried only for safe calls. */
const TRANSIENT_STATUSES = new Set([502, 503, 504])

/**
 * The HTTP layer under the client: signed token exchange and reuse, Bearer headers, one renewal on
 * a 401, bounded retries honouring Retry-After / X-RateLimit-Reset, and lossless JSON both ways.
 */
export class Transport {
  readonly baseUrl: string
  private readonly opts: Required<
    Omit<ClientOptions<AmountFormat>, 'currencies' | 'fetch' | 'apiSecret' | 'signTokenRequest'>
  > & {
    currencies: Readonly<Record<string, number>> | undefined
    signTokenRequest: (message: string) => Promise<string>
  }
  private readonly fetchFn: typeof fetch
  private cached: CachedToken | undefined
  private pending: Promise<CachedToken> | undefined
  /** The rate-limit headers of the latest answer that carried them. */
  rateLimit: RateLimitInfo | undefined

  constructor(options: ClientOptions<AmountFormat>) {
    if (!options.baseUrl) throw new TypeError('baseUrl is required')
    if (!options.apiKey) throw new TypeError('apiKey is required')
    if (!options.apiSecret === !options.signTokenRequest)
      throw new TypeError('Give one of apiSecret (on a server) or signTokenRequest (in a browser)')
    const { apiSecret, signTokenRequest } = options
    this.baseUrl = options.baseUrl.replace(/\/+$/, '')
    this.opts = {
      baseUrl: this.baseUrl,
      apiKey: options.apiKey,
      signTokenRequest: apiSecret
        ? async (message) => toHex(await hmacSha256(apiSecret, message))
        : signTokenRequest!,
      amounts: options.amounts ?? 'decimal',
      currencies: options.currencies,
      maxRetries: options.maxRetries ?? 3,
      maxRetryWaitMs: options.maxRetryWaitMs ?? 60_000,
      timeoutMs: options.timeoutMs ?? 30_000,
      tokenRenewBeforeMs: options.tokenRenewBeforeMs ?? 60_000,
    }
    this.fetchFn = options.fetch ?? globalThis.fetch.bind(globalThis)
  }

  /** The current access token, requesting a fresh one when there is none or it is about to expire. */
  async token(): Promise<{ accessToken: string; accountId: string; expiredAt: number }> {
    const t = this.cached
    if (t && Date.now() < t.renewAt) return t
    // Concurrent calls share one token request rather than each signing their own.
    this.pending ??= this.requestToken().finally(() => {
      this.pending = undefined
    })
    return this.pending
  }

  /** Drops the cached token if it is still `accessToken`, so the next call requests a new one. */
  private invalidate(accessToken: string): void {
    if (this.cached?.accessToken === accessToken) this.cached = undefined
  }

  private async requestToken(): Promise<CachedToken> {
    for (let attempt = 0; ; attempt++) {
      // A signature is accepted once, so every attempt signs a fresh body with a new nonce.
      const body = JSON.stringify({ nonce: randomHex(16), ts: Date.now() })
      const signature = await this.opts.signTokenRequest(`${this.opts.apiKey}&payload=${body}`)
      const request = { method: 'POST', path: TOKEN_PATH }
      let res: Response
      let text: string
      try {
        res = await this.send(TOKEN_PATH, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-api-key': this.opts.apiKey,
            'x-api-signature': signature,
          },
          body,
        })
        text = await res.text()
      } catch (err) {
        // Nothing is lost by asking again: the next attempt is a new, independent request.
        if (attempt < this.opts.maxRetries && isRetryableFetchError(err)) {
          await sleep(backoffMs(attempt))
          continue
        }
        throw networkError(err, request)
      }
      if (res.ok) {
        const t = decodeResponse(text, { amounts: 'decimal' }) as {
          accessToken: string
          accountId: string
          expiredAt: number
        }
        // The lifetime is measured on the service's clock (the JWT's iat to exp) and counted from
        // now on ours, so a skewed local clock neither renews every call nor keeps a dead token.
        const receivedAt = Date.now()
        const lifetime = Math.max(0, jwtLifetimeMs(t.accessToken) ?? t.expiredAt - receivedAt)
        const margin = Math.min(this.opts.tokenRenewBeforeMs, lifetime / 5)
        this.cached = {
          accessToken: t.accessToken,
          accountId: t.accountId,
          expiredAt: t.expiredAt,
          renewAt: receivedAt + lifetime - margin,
        }
        return this.cached
      }
      const wait = this.retryWait(res, attempt, 'safe')
      if (wait !== undefined) {
        await sleep(wait)
        continue
      }
      throw errorFromResponse(res.status, safeDecode(text), request, retryAfterMs(res))
    }
  }

  /** One authenticated JSON call; see {@link RetryPolicy} for what is retried. */
  async call<T>(method: string, path: string, options: CallOptions): Promise<T> {
    const url = path + queryString(options.query)
    const request = { method, path }
    const body =
      options.body === undefined
        ? undefined
        : encodeBody(options.body, {
            currencies: this.opts.currencies,
            defaultCcy: options.decode?.defaultCcy,
          })
    let renewed = false
    for (let attempt = 0; ;) {
      const { accessToken } = await this.token()
      let res: Response
      let text: string
      try {
        res = await this.send(
          url,
          {
            method,
            // The spec asks for the JSON content type on PUTs even without a body.
            headers: {
              authorization: `Bearer ${accessToken}`,
              accept: 'application/json',
              ...(body !== undefined || method === 'PUT' ? { 'content-type': 'application/json' } : {}),
            },
            ...(body !== undefined ? { body } : {}),
          },
          options.signal,
        )
        // A connection that breaks while the answer is read leaves the outcome as unknown as no answer.
        text = await res.text()
      } catch (err) {
        if (options.retry === 'safe' && attempt < this.opts.maxRetries && isRetryableFetchError(err)) {
          await sleep(backoffMs(attempt++), options.signal)
          continue
        }
        throw networkError(err, request)
      }
      if (res.status === 401 && !renewed) {
        // The token may have expired or been revoked in between: renew it once and try again.
        renewed = true
        this.invalidate(accessToken)
        continue
      }
      if (res.ok) {
        if (res.status === 204 || text === '') return undefined as T
        return decodeResponse(text, {
          amounts: this.opts.amounts,
          currencies: this.opts.currencies,
          ...options.decode,
        }) as T
      }
      const wait = this.retryWait(res, attempt, options.retry)
      if (wait !== undefined) {
        attempt++
        await sleep(wait, options.signal)
        continue
      }
      throw errorFromResponse(res.status, safeDecode(text), request, retryAfterMs(res))
    }
  }

  /**
   * Opens a long-lived authenticated GET (the status stream) and hands back the response once it
   * answers 2xx. Refusals are handled as for {@link call}; the caller reads and closes the body.
   */
  async open(
    path: string,
    accept: string,
    signal?: AbortSignal,
    headers: Record<string, string> = {},
  ): Promise<Response> {
    const request = { method: 'GET', path }
    let renewed = false
    for (let attempt = 0; ;) {
      const { accessToken } = await this.token()
      let res: Response
      try {
        res = await this.send(
          path,
          { method: 'GET', headers: { ...headers, authorization: `Bearer ${accessToken}`, accept } },
          signal,
          false,
        )
      } catch (err) {
        throw networkError(err, request)
      }
      if (res.ok) return res
      if (res.status === 401 && !renewed) {
        await res.body?.cancel()
        renewed = true
        this.invalidate(accessToken)
        continue
      }
      const text = await res.text().catch(() => '')
      const wait = this.retryWait(res, attempt, 'safe')
      if (wait !== undefined) {
        attempt++
        await sleep(wait, signal)
        continue
      }
      throw errorFromResponse(res.status, safeDecode(text), request, retryAfterMs(res))
    }
  }

  /** How long to wait before retrying this answer, or undefined when it must not be retried. */
  private retryWait(res: Response, attempt: number, retry: RetryPolicy): number | undefined {
    if (attempt >= this.opts.maxRetries) return undefined
    if (res.status === 429) {
      const wait = retryAfterMs(res) ?? backoffMs(attempt)
      // A little spread, so that clients refused together do not all come back in the same instant.
      return wait > this.opts.maxRetryWaitMs ? undefined : wait + Math.floor(Math.random() * 100)
    }
    if (retry === 'safe' && TRANSIENT_STATUSES.has(res.status))
      return Math.min(retryAfterMs(res) ?? backoffMs(attempt), this.opts.maxRetryWaitMs)
    return undefined
  }

  /** One HTTP attempt with the time-out (unless `timeout` is false, for streams) and the caller's signal. */
  private async send(
    path: string,
    init: RequestInit,
    signal?: AbortSignal,
    timeout = true,
  ): Promise<Response> {
    const signals = [signal, timeout ? AbortSignal.timeout(this.opts.timeoutMs) : undefined].filter(
      (s): s is AbortSignal => s !== undefined,
    )
    const res = await this.fetchFn(this.baseUrl + path, {
      ...init,
      ...(signals.length ? { signal: signals.length === 1 ? signals[0] : AbortSignal.any(signals) } : {}),
    })
    this.noteRateLimit(res)
    return res
  }

  private noteRateLimit(res: Response): void {
    const limit = Number(res.headers.get('x-ratelimit-limit'))
    const remaining = Number(res.headers.get('x-ratelimit-remaining'))
    const reset = Number(res.headers.get('x-ratelimit-reset'))
    if (res.headers.has('x-ratelimit-limit') && Number.isFinite(limit + remaining + reset)) {
      this.rateLimit = { limit, remaining, resetAt: reset * 1000 }
    }
  }
}

/** A JWT's lifetime (exp - iat) in ms, or undefined when the token does not say. */
export function jwtLifetimeMs(token: string): number | undefined {
  const payload = token.split('.')[1]
  if (!payload) return undefined
  try {
    const base64 = payload
      .replace(/-/g, '+')
      .replace(/_/g, '/')
      .padEnd(Math.ceil(payload.length / 4) * 4, '=')
    const claims = JSON.parse(atob(base64)) as { iat?: unknown; exp?: unknown }
    if (typeof claims.iat !== 'number' || typeof claims.exp !== 'number' || claims.exp <= claims.iat)
      return undefined
    return (claims.exp - claims.iat) * 1000
  } catch {
    return undefined
  }
}

/** The wait a 429 asks for: Retry-After (seconds or an HTTP date), else until X-RateLimit-Reset. */
export function retryAfterMs(res: Response): number | undefined {
  const retryAfter = res.headers.get('retry-after')
  if (retryAfter !== null && retryAfter.trim() !== '') {
    const seconds = Number(retryAfter)
    if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000)
    const date = Date.parse(retryAfter)
    if (Number.isFinite(date)) return Math.max(0, date - Date.now())
  }
  const reset = Number(res.headers.get('x-ratelimit-reset') ?? NaN)
  if (res.headers.has('x-ratelimit-reset') && Number.isFinite(reset))
    return Math.max(0, reset * 1000 - Date.now())
  return undefined
}

function backoffMs(attempt: number): number {
  // Full jitter: a random wait up to an exponentially growing ceiling.
  return Math.floor(Math.random() * Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** (attempt + 1)))
}

function isRetryableFetchError(err: unknown): boolean {
  // The caller's own abort is final; a failed connection or our time-out may be tried again.
  const name = (err as Error)?.name
  return name !== 'AbortError'
}

/** The error to throw for a failed attempt: the caller's own abort as it is, anything else as a network error. */
function networkError(err: unknown, request: { method: string; path: string }): unknown {
  if (err instanceof SvcpayError || (err as Error)?.name === 'AbortError') return err
  const timedOut = (err as Error)?.name === 'TimeoutError'
  // Node's fetch says only "fetch failed"; the reason (ECONNREFUSED, ...) is in its cause.
  const cause = (err as { cause?: { code?: string; message?: string } })?.cause
  const reason = [(err as Error)?.message ?? String(err), cause?.code ?? cause?.message]
    .filter(Boolean)
    .join(': ')
  return new SvcpayNetworkError({
    code: timedOut ? 'timeout' : 'network_error',
    message: timedOut
      ? `${request.method} ${request.path} timed out`
      : `${request.method} ${request.path} failed: ${reason}`,
    status: 0,
    request,
    cause: err,
  })
}

function safeDecode(text: string): unknown {
  try {
    return decodeResponse(text, { amounts: 'decimal' })
  } catch {
    return undefined
  }
}

function queryString(query: CallOptions['query']): string {
  if (!query) return ''
  const params = new URLSearchParams()
  for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v))
  const s = params.toString()
  return s ? `?${s}` : ''
}

/** Waits `ms`, or rejects at once when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal!.reason)
    }
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}
