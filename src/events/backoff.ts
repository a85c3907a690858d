import { assert } from '../shared/assert.js'

/** Nominal wait before the first retry. */
export const BACKOFF_BASE_MS = 5_000

/** No single wait is longer than this, so a receiver that comes back is reached within two hours. */
export const BACKOFF_CAP_MS = 2 * 60 * 60 * 1000

/**
 * Delivery attempts in all, the first included. With the doubling and the cap above, 26 retries
 * span about 24.6 hours on average (at least 16.4 h, at most 32.8 h; see docs/webhooks.md), after
 * which the delivery is marked failed.
 */
export const ATTEMPTS_MAX = 27

/**
 * The un-jittered wait after failed attempt `attempt` (1-based): 5 s, 10 s, 20 s, ... doubling
 * up to the two-hour cap.
 */
export function nominalDelayMs(attempt: number): number {
  assert(Number.isInteger(attempt) && attempt >= 1, `attempt must be a positive integer, got ${attempt}`)
  // Beyond 2^11 the doubling is past the cap already; bounding the exponent keeps the number small.
  const exponent = Math.min(attempt - 1, 30)
  return Math.min(BACKOFF_BASE_MS * 2 ** exponent, BACKOFF_CAP_MS)
}

/**
 * How long to wait after failed attempt `attempt` (1-based) before the next one, or null when
 * that was the last attempt and the delivery is to be marked failed.
 *
 * The wait is "equal jitter": half the nominal delay for sure plus a uniformly random share of
 * the other half, so it lies in [nominal / 2, nominal]. The certain half keeps the schedule from
 * collapsing into a burst of immediate retries; the random half spreads the retries of many
 * deliveries that failed together (a receiver outage) so they do not all return at once.
 *
 * @param random a source of numbers in [0, 1); injectable so tests can seed it.
 */
export function nextAttemptDelayMs(attempt: number, random: () => number = Math.random): number | null {
  assert(Number.isInteger(attempt) && attempt >= 1, `attempt must be a positive integer, got ${attempt}`)
  if (attempt >= ATTEMPTS_MAX) return null
  const halfMs = nominalDelayMs(attempt) / 2
  const share = random()
  assert(share >= 0 && share < 1, `random() must return a number in [0, 1), got ${share}`)
  return Math.floor(halfMs + share * halfMs)
}
