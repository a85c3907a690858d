/**
 * The LND rail's options and the deps every part of the rail works over: the call to the node's
 * REST gateway, its base URL, and the payment and invoice settings, checked once.
 */
import https from 'node:https'
import type http from 'node:http'

import { NODE_TIMEOUT_MS_DEFAULT } from '../../rails/http-json.js'
import type { Network } from '../../config/network.js'
import { lndCall, type LndCall } from './lnd-http.js'

export interface LndRailOptions {
  /** The REST listener, e.g. `https://127.0.0.1:8080`. */
  url: string
  /** The macaroon (admin, or one baked for invoices and offchain), hex as `xxd -p -c 1000` prints it. */
  macaroonHex: string
  /** LND's `tls.cert`, PEM. Without it the system's certificate authorities decide. */
  tlsCertPem?: string
  network: Network
  /** Deadline of each request, and how long `sendPayment` waits for an outcome before reporting in flight. */
  timeoutMs?: number
  /** How long LND itself keeps trying routes for one payment (`timeout_seconds`). */
  paymentTimeoutSeconds?: number
  /**
   * Issue invoices with route hints for the node's private (unannounced) channels (`private: true`),
   * so that a node whose channels are all unannounced can still be paid. Default true.
   */
  privateInvoices?: boolean
}

/** LND's own default for `timeout_seconds` is 60; we state it so the request says what it means. */
export const PAYMENT_TIMEOUT_SECONDS_DEFAULT = 60

export interface LndDeps {
  options: LndRailOptions
  /** The base URL without a trailing slash. */
  baseUrl: string
  /** One exchange with the node (lnd-http.ts). */
  call: LndCall
  paymentTimeoutSeconds: number
  privateInvoices: boolean
}

export function lndDeps(options: LndRailOptions): LndDeps {
  if (!/^(?:[0-9a-fA-F]{2})+$/.test(options.macaroonHex)) throw new Error('LND macaroon must be hex')
  const baseUrl = options.url.replace(/\/+$/, '')
  // One keep-alive agent per rail; it carries the pinned certificate for every connection.
  const agent: http.Agent | undefined = baseUrl.startsWith('https:')
    ? new https.Agent({ keepAlive: true, ca: options.tlsCertPem })
    : undefined
  const endpoint = {
    baseUrl,
    headers: { 'Grpc-Metadata-macaroon': options.macaroonHex, 'content-type': 'application/json' },
    timeoutMs: options.timeoutMs ?? NODE_TIMEOUT_MS_DEFAULT,
    agent,
  }
  return {
    options,
    baseUrl,
    call: (method, path, body, stream) => lndCall(endpoint, method, path, body, stream),
    paymentTimeoutSeconds: options.paymentTimeoutSeconds ?? PAYMENT_TIMEOUT_SECONDS_DEFAULT,
    privateInvoices: options.privateInvoices ?? true,
  }
}
