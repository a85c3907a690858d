import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'

import type { Config } from '../config/config.js'
import { isFlowRefusal } from '../transactions/errors.js'
import type { DecodedInvoice } from './bolt11.js'
import { lnSendError, type LnSendError } from './errors.js'
import { getLnurlJson, LNURL_CLIENT_DEFAULTS, type LnurlClientOptions } from './lnurl-client.js'
import {
  callbackWith,
  checkAgainstPayRequest,
  invoiceOf,
  refusedByPayee,
  parsePayRequest,
  type LnurlError,
  type PayDestination,
  type PayRequest,
} from './lnurl-pay.js'
import { addressDomain } from './address/lnurl.js'
import { MSAT_PER_SAT } from './invoices.js'
import { parseInvoiceText } from './send-invoice.js'

/**
 * The Lightning Addresses of this service, answered without HTTP (src/lightning/address/lnurl.ts,
 * bound to its deps by the container).
 */
export interface LocalLnurl {
  payRequestFor(username: string): Promise<PayRequest | LnurlError>
  /**
   * `forSend`, the id of a send of this service: the address then issues one invoice for that send
   * however often it is asked (a retried confirm, a worker that died, two confirms at once), and a
   * failure of our own (the node, the database) is thrown for the caller to retry, not answered as
   * the address's refusal.
   */
  invoiceFor(
    username: string,
    amountMsat: bigint,
    comment?: string,
    forSend?: string,
  ): Promise<{ pr: string; routes: [] } | LnurlError>
}

/** Until this service has addresses of its own, every one of its domain is unknown. */
export const NO_LOCAL_ADDRESSES: LocalLnurl = {
  payRequestFor: async () => ({ status: 'ERROR', reason: 'unknown address' }),
  invoiceFor: async () => ({ status: 'ERROR', reason: 'unknown address' }),
}

/** How a send reaches a payee named by address or LNURL. */
export interface LnurlDeps {
  client: LnurlClientOptions
  local: LocalLnurl
}

export const LNURL_DEPS_DEFAULT: LnurlDeps = { client: LNURL_CLIENT_DEFAULTS, local: NO_LOCAL_ADDRESSES }

/** The path of a LUD-16 address's pay request, under a base path. */
const WELL_KNOWN_RE = /^\/\.well-known\/lnurlp\/([a-z0-9\-_.+]{1,64})$/

type Named = Exclude<PayDestination, { kind: 'invoice' }>

/** A payee that is an address of this service: its invoice is asked for only at confirm. */
export interface LocalPayee {
  localUsername: string
}

/**
 * The invoice a payee named by address or LNURL issues for `amountSats` (LUD-06 steps 3 to 6):
 * fetched from the payee's service and checked: for this network, unexpired, for exactly the
 * amount asked, and describing exactly the metadata the payee sent. An address of this service is
 * asked only for its pay request (it exists, takes the amount and the comment): its invoice, and
 * with it a receive in the payee's account, is made when the send is confirmed
 * (`localInvoice`), so a quote nobody confirms leaves nothing there. Nothing is written; a refusal
 * names the request's field.
 */
export async function resolvePayDestination(
  deps: { config: Config; lnurl?: LnurlDeps | undefined },
  dest: Named,
  amountSats: bigint,
  comment: string | undefined,
  at: number,
): Promise<{ text: string; decoded: DecodedInvoice } | LocalPayee | LnSendError> {
  const { client, local } = deps.lnurl ?? LNURL_DEPS_DEFAULT
  const amountMsat = amountSats * MSAT_PER_SAT
  const username = localUsername(deps.config, dest)
  // Each step's answer: JSON from the payee's service, or what our own addresses answer.
  const remote = (url: URL) => getLnurlJson(client, url, dest.field)
  const first =
    username === undefined ? await remote(dest.url) : { json: await local.payRequestFor(username) }
  if (isFlowRefusal(first)) return first
  const pay = payRequestOf(first.json, dest.field)
  if (isFlowRefusal(pay)) return pay
  const misfit = checkAgainstPayRequest(pay, amountMsat, comment)
  if (misfit) return misfit
  if (username !== undefined) return { localUsername: username }

  let callback: URL
  try {
    callback = new URL(callbackWith(pay.callback, amountMsat, comment))
  } catch {
    return lnSendError('lnurl_invalid_response', dest.field, "the payee's callback is not a URL")
  }
  const second = await remote(callback)
  if (isFlowRefusal(second)) return second
  const refused = refusedByPayee(second.json, dest.field)
  if (refused) return refused
  const pr = invoiceOf(second.json)
  if (typeof pr !== 'string')
    return lnSendError('lnurl_invalid_response', dest.field, `the payee's service: ${pr.issue}`)
  return checkInvoice(deps.config.network, dest.field, pr, pay.metadata, amountMsat, at)
}

/**
 * At confirm: the invoice an address of this service issues for a send's amount and comment, which
 * creates the payee's receive. The reason of a refusal (the address given up since the quote, an
 * amount no longer accepted) is returned as text.
 */
export async function localInvoice(
  deps: { config: Config; lnurl?: LnurlDeps | undefined },
  username: string,
  amountSats: bigint,
  comment: string | undefined,
  at: number,
  sendTxnId: string,
): Promise<{ paymentRequest: string; paymentHash: string } | { refused: string }> {
  const { local } = deps.lnurl ?? LNURL_DEPS_DEFAULT
  const amountMsat = amountSats * MSAT_PER_SAT
  const answer = await local.invoiceFor(username, amountMsat, comment, sendTxnId)
  if ('status' in answer) return { refused: answer.reason }
  const invoice = parseInvoiceText(deps.config.network, answer.pr, at, 'destReq.reqDetails')
  if (isFlowRefusal(invoice) || invoice.decoded.amountMsat !== amountMsat)
    return { refused: 'the address issued an invoice that cannot pay this send' }
  return { paymentRequest: invoice.text, paymentHash: invoice.decoded.paymentHash }
}

/** LUD-06 step 6: the wallet pays only an invoice for the amount asked and the metadata shown. */
function checkInvoice(
  network: Config['network'],
  field: string,
  pr: string,
  metadata: string,
  amountMsat: bigint,
  at: number,
): { text: string; decoded: DecodedInvoice } | LnSendError {
  const invoice = parseInvoiceText(network, pr, at, field)
  if (isFlowRefusal(invoice)) {
    const issue = invoice.details.map((d) => d.issue).join('; ')
    return lnSendError('lnurl_invalid_response', field, `the payee's invoice: ${issue}`)
  }
  if (invoice.decoded.amountMsat !== amountMsat)
    return lnSendError('lnurl_amount_mismatch', field, "the payee's invoice is not for the amount asked")
  if (invoice.decoded.descriptionHash !== bytesToHex(sha256(utf8ToBytes(metadata))))
    return lnSendError(
      'lnurl_description_hash_mismatch',
      field,
      "the payee's invoice does not describe the payee's metadata",
    )
  return invoice
}

/**
 * The username of an address or LNURL of this service; undefined for any other payee. An address is
 * ours when its domain is the one our addresses are advertised at (none when PUBLIC_BASE_URL has a
 * port, say: `bob@localhost` is then somebody else's). An LNURL is ours when its host, port
 * included, is PUBLIC_BASE_URL's: another port of the same name is another server.
 */
function localUsername(config: Config, dest: Named): string | undefined {
  if (dest.kind === 'address') return dest.domain === addressDomain(config) ? dest.username : undefined
  const base = new URL(config.publicBaseUrl)
  if (dest.url.host !== base.host) return undefined
  // An LNURL of ours that is not an address's pay request names nothing we serve: no username,
  // which our addresses answer as unknown.
  const basePath = base.pathname.replace(/\/$/, '')
  const path = dest.url.pathname
  if (!path.startsWith(`${basePath}/`)) return ''
  return WELL_KNOWN_RE.exec(path.slice(basePath.length))?.[1] ?? ''
}

function payRequestOf(json: unknown, field: string): PayRequest | LnSendError {
  const refused = refusedByPayee(json, field)
  if (refused) return refused
  const pay = parsePayRequest(json)
  return 'issue' in pay
    ? lnSendError('lnurl_invalid_response', field, `the payee's service: ${pay.issue}`)
    : pay
}
