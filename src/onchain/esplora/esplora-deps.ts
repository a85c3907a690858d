/**
 * The Esplora rail's options and the deps every part of the rail works over: the request
 * function, the clock, and the operator's signer and address lists as given.
 */
import { NODE_TIMEOUT_MS_DEFAULT } from '../../rails/http-json.js'
import type { Network } from '../../config/network.js'
import { esploraRequest, type EsploraRequest } from './esplora-http.js'

/** Signs a send with the operator's keys; must return the same transaction for the same `requestId`. */
export type OnchainSigner = (input: {
  address: string
  amountSats: bigint
  feeRateSatPerVb: bigint
  requestId: string
}) => Promise<{ rawTxHex: string }>

export interface EsploraRailOptions {
  /** The API root, e.g. `https://blockstream.info/api` or `http://127.0.0.1:3002`. */
  url: string
  network: Network
  timeoutMs?: number
  /**
   * Sending through Esplora: a signer builds the transaction, Esplora broadcasts it. `addresses`,
   * where the signer tells them, are the ones its coins and change sit on (for reconciliation).
   */
  broadcast?: { sign: OnchainSigner; addresses?: () => Promise<string[]> }
  /**
   * The receive addresses the service has handed out: with them the rail can report what they hold
   * and what they received (reconciliation). Without them it cannot.
   */
  receiveAddresses?: () => Promise<string[]>
  /** ONCHAIN_CONFIRMATIONS: fewer confirmations are still arriving, not yet in the books. Default 1. */
  creditConfirmations?: number
}

export interface EsploraDeps {
  options: EsploraRailOptions
  /** One GET (or POST with a body): a 2xx answer's text, null for a 404 (esplora-http.ts). */
  request: EsploraRequest
  /** The clock the tip's age is judged by. */
  now: () => number
}

export function esploraDeps(options: EsploraRailOptions): EsploraDeps {
  const endpoint = {
    baseUrl: options.url.replace(/\/+$/, ''),
    timeoutMs: options.timeoutMs ?? NODE_TIMEOUT_MS_DEFAULT,
  }
  // Date.now is looked up at each call, so that a clock faked after the rail is built is seen.
  return { options, request: (path, body) => esploraRequest(endpoint, path, body), now: () => Date.now() }
}
