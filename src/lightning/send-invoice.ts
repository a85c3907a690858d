import type { Config } from '../config/config.js'
import type { CreateInput } from '../transactions/flow.js'
import { decodeInvoice, type DecodedInvoice } from './bolt11.js'
import { lnSendError, type LnSendError } from './errors.js'
import { canonicalInvoice } from './invoices.js'

export const PAYMENT_REQUEST_FIELD = 'destReq.reqDetails.paymentRequest'

/** The invoice of a send request, checked for this service's network and still unexpired at `at`. */
export function parseInvoice(
  network: Config['network'],
  input: CreateInput,
  at: number,
): { text: string; decoded: DecodedInvoice } | LnSendError {
  return parseInvoiceText(network, input.destReq.reqDetails?.paymentRequest, at, PAYMENT_REQUEST_FIELD)
}

/**
 * An invoice's text, checked for this service's network and still unexpired at `at`; a refusal
 * names `field` (the request's own invoice, or the address whose payee returned it).
 */
export function parseInvoiceText(
  network: Config['network'],
  raw: unknown,
  at: number,
  field: string,
): { text: string; decoded: DecodedInvoice } | LnSendError {
  if (typeof raw !== 'string' || raw.trim() === '')
    return lnSendError('invoice_missing', field, 'is required: a BOLT11 invoice')
  // BOLT11 is bech32: all lower or all upper case (QR codes use upper), never mixed. The check runs
  // before the text is lower-cased for storage, which would hide it.
  const written = raw.trim().replace(/^lightning:/i, '')
  if (written !== written.toLowerCase() && written !== written.toUpperCase()) {
    return lnSendError(
      'invoice_mixed_case',
      field,
      'mixed case: a BOLT11 invoice is written all in lower case or all in upper case',
    )
  }
  const text = canonicalInvoice(raw)
  const decoded = decodeInvoice(text)
  if ('error' in decoded) return lnSendError('invoice_unreadable', field, decoded.error)
  if (decoded.network !== network) {
    return lnSendError(
      'invoice_wrong_network',
      field,
      `the invoice is for ${decoded.network}; this service runs on ${network}`,
    )
  }
  if (decoded.expiresAtMs <= at) return lnSendError('invoice_expired', field, 'the invoice has expired')
  return { text, decoded }
}
