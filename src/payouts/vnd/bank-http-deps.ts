/**
 * The bank rail's configuration, checked once, and the deps every part of the rail works over:
 * the request function and the configuration's secrets.
 */
import { assert } from '../../shared/assert.js'
import { bankRequest, type BankRequest } from './bank-http-request.js'

export interface BankHttpConfig {
  /** The partner's base URL, e.g. `https://payouts.partner.example`. */
  url: string
  /** Sent as `Authorization: Bearer <apiKey>`. */
  apiKey: string
  /** The shared secret the partner signs notifications with; without it notifications are refused. */
  webhookSecret?: string
  /**
   * The shared secret our requests are signed with (`X-Svcpay-Timestamp`, `X-Svcpay-Signature`);
   * without it requests go unsigned and `check()` reports that as a problem. Never logged.
   */
  signingSecret?: string
  /** Per HTTP request, body included. Default 15 s. */
  timeoutMs?: number
  /** The clock the signatures' timestamps are read from (tests). */
  now?: () => number
}

export const BANK_TIMEOUT_MS_DEFAULT = 15_000
const TIMEOUT_MS_MAX = 60_000

export interface BankHttpDeps {
  config: BankHttpConfig
  /** One request to the partner (bank-http-request.ts). */
  request: BankRequest
}

/** Checks the configuration (an operator's mistake stops the start) and builds the deps from it. */
export function bankHttpDeps(config: BankHttpConfig): BankHttpDeps {
  const baseUrl = config.url.replace(/\/+$/, '')
  assert(/^https?:\/\//.test(baseUrl), 'BANK_PAYOUT_URL must be an http(s) URL')
  assert(config.apiKey.length > 0, 'BANK_PAYOUT_API_KEY is required')
  const timeoutMs = config.timeoutMs ?? BANK_TIMEOUT_MS_DEFAULT
  assert(timeoutMs > 0 && timeoutMs <= TIMEOUT_MS_MAX, `timeoutMs must be in (0, ${TIMEOUT_MS_MAX}]`)
  const endpoint = {
    baseUrl,
    apiKey: config.apiKey,
    signingSecret: config.signingSecret,
    timeoutMs,
    now: config.now ?? Date.now,
  }
  return {
    config,
    request: (method, path, body, extraHeaders) => bankRequest(endpoint, method, path, body, extraHeaders),
  }
}
