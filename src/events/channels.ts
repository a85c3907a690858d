/**
 * Every notification channel of the service, in one place. Code notifies with `q.notify(channel)`
 * (src/db/db.ts): inside a database transaction the notification leaves only if it commits.
 */

/** Carries a transaction id after each committed state change (streams, hosted pages, Redis mirror). */
export const TXN_CHANNEL = 'svcpay_txn'

/**
 * Wakes the delivery workers: sent only by a commit that enqueued a webhook delivery, so that a
 * busy service's other commits do not make them look for work that is not there.
 */
export const DELIVERY_CHANNEL = 'svcpay_deliveries'

/** Wakes the rail workers at once (rail events, new work), instead of at their next poll. */
export const WAKE_CHANNEL = 'svcpay_wake'

export type Channel = typeof TXN_CHANNEL | typeof DELIVERY_CHANNEL | typeof WAKE_CHANNEL
