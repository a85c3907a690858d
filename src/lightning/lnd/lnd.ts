/**
 * The Lightning rail on a real LND node, through its REST gateway (LND 0.17 and later).
 *
 * REST follows LND's gRPC definitions through grpc-gateway: field names are the proto names
 * (snake_case), 64-bit integers are JSON strings, `bytes` fields are base64 and enums are their
 * names. Errors are `{ code, message, details }` with `code` the gRPC status code; streaming
 * endpoints write one JSON object per line, `{ result }` or `{ error }`.
 *
 * The rail is a table of functions over one set of deps (lnd-deps.ts): the exchange and what
 * LND's errors mean (lnd-http.ts), invoices (lnd-invoices.ts), payments (lnd-payments.ts), the
 * health check (lnd-check.ts) and reconciliation (lnd-reconcile.ts).
 */
import type { LightningRail } from '../../rails/rail.js'
import { checkLnd } from './lnd-check.js'
import { lndDeps, type LndRailOptions } from './lnd-deps.js'
import { getOk } from './lnd-http.js'
import { cancelInvoice, createInvoice, lookupInvoice } from './lnd-invoices.js'
import { lookupPayment, sendPayment } from './lnd-payments.js'
import { lndPayments, lndReserves } from './lnd-reconcile.js'

export { LND_PERMISSIONS_NEEDED } from './lnd-check.js'
export { PAYMENT_TIMEOUT_SECONDS_DEFAULT, type LndRailOptions } from './lnd-deps.js'
export { classifyLndError, type LndErrorKind } from './lnd-http.js'
export { FAILURE_REASONS } from './lnd-payments.js'

export function createLndRail(options: LndRailOptions): LightningRail {
  const deps = lndDeps(options)
  const get = (path: string) => getOk(deps.call, path)
  return {
    name: 'lnd',
    network: options.network,
    reserves: () => lndReserves(get),
    payments: (sinceMs) => lndPayments(get, sinceMs),
    createInvoice: (input) => createInvoice(deps, input),
    lookupInvoice: (paymentHash) => lookupInvoice(deps, paymentHash),
    cancelInvoice: (paymentHash) => cancelInvoice(deps, paymentHash),
    sendPayment: (input) => sendPayment(deps, input),
    lookupPayment: (paymentHash) => lookupPayment(deps, paymentHash),
    check: () => checkLnd(deps),
  }
}
