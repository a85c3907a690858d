/** A sent or received transaction is asked about for confirmations this often; `mine` wakes it at once. */
export const CONFIRMATION_POLL_MS = 30_000
/** A node that could not be reached is asked again after this long. */
export const RAIL_RETRY_MS = 15_000
