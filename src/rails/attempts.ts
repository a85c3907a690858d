/**
 * What the worker hears from the rails, per transaction, and how long it waits after a failure.
 *
 * Each rail the flows use is wrapped by `observeRail`: while the worker advances a transaction
 * (inside `withAttemptLog`), every call to the rail is noted, answered or failed. Afterwards
 * `recordAttempts` keeps the outcome in `rail_attempts` (migration 018): a call that answered
 * clears the failure count; a retryable failure counts one more and puts the transaction's next
 * look off by an exponential backoff with jitter and a cap, set per rail. The count and the next
 * retry time are in the database, so a restarted worker does not start hammering a failing node
 * from the first step again. The flows keep their own retry times; the backoff only ever makes the
 * next look later, never earlier.
 */
import type { Queryable } from '../db/db.js'
import type { TxnId } from '../shared/ids.js'
import type { TxnState } from '../shared/txn-states.js'
import { ScopedStorage } from '../shared/scoped-storage.js'
import type { RailOpsConfig, RailOpsSettings } from '../config/rail-ops.js'
import { RailFailure, type RailKind } from './rail.js'
import { sql } from '../db/sql.js'

/**
 * The wait before retry number `failures` (1 for the first failure): base * 2^(failures - 1), at
 * most the cap, then a random part of up to half of it taken off, so that many transactions that
 * failed together do not all come back in the same instant. `random` is in [0, 1).
 */
export function backoffDelayMs(
  settings: Pick<RailOpsSettings, 'retryBaseMs' | 'retryMaxMs'>,
  failures: number,
  random: () => number = Math.random,
): number {
  const exponent = Math.min(Math.max(failures, 1) - 1, 40)
  const nominal = Math.min(settings.retryMaxMs, settings.retryBaseMs * 2 ** exponent)
  return Math.max(1, Math.round(nominal - (nominal / 2) * random()))
}

interface RailCall {
  rail: RailKind
  ok: boolean
  code?: string
  retryable?: boolean
}

/** The calls made to rails while one transaction was advanced. */
export interface AttemptLog {
  calls: RailCall[]
}

// Enabled only while the worker advances a transaction (see ScopedStorage).
const current = new ScopedStorage<AttemptLog>()

/** Run `fn`, noting in `log` every call it makes to an observed rail (also when `fn` throws). */
export function withAttemptLog<T>(log: AttemptLog, fn: () => Promise<T>): Promise<T> {
  return current.run(log, fn)
}

/**
 * The rail, unchanged in behaviour, with every method call that returns a promise noted in the
 * attempt log of the transaction being advanced (outside the worker nothing is noted).
 */
export function observeRail<T extends object>(rail: RailKind, target: T): T {
  const wrapped = new Map<PropertyKey, unknown>()
  return new Proxy(target, {
    get(obj, property, receiver) {
      const value: unknown = Reflect.get(obj, property, receiver)
      if (typeof value !== 'function') return value
      let fn = wrapped.get(property)
      if (!fn) {
        fn = function (this: unknown, ...args: unknown[]) {
          const result: unknown = (value as (...a: unknown[]) => unknown).apply(obj, args)
          const log = current.getStore()
          if (!log || !(result instanceof Promise)) return result
          return result.then(
            (answer: unknown) => {
              log.calls.push({ rail, ok: true })
              return answer
            },
            (err: unknown) => {
              // Anything else an adapter throws (an answer it could not read, a bug) leaves the
              // transaction as unanswered as a time-out does: it backs off too, and shows as
              // `unexpected_error` (its message may quote the node, so it is not kept).
              if (err instanceof RailFailure)
                log.calls.push({ rail, ok: false, code: err.code, retryable: err.retryable })
              else log.calls.push({ rail, ok: false, code: 'unexpected_error', retryable: true })
              throw err
            },
          )
        }
        wrapped.set(property, fn)
      }
      return fn
    },
  })
}

/**
 * Keep what the rails said while `txn` was advanced. When the last call failed and can be retried,
 * returns when to try again (the backoff); the worker puts the transaction's next look off until
 * then, only while it is still in the state it was advanced from.
 */
export async function recordAttempts(
  q: Queryable,
  txn: { id: TxnId; state: TxnState },
  log: AttemptLog,
  settings: RailOpsConfig,
  now: number,
  random: () => number = Math.random,
): Promise<number | undefined> {
  const last = log.calls.at(-1)
  if (!last) return undefined
  if (last.ok || last.retryable === false) {
    // The rail answered (a final refusal is an answer too): the failures in a row are over.
    const rail = sql.param(last.rail)
    const nowParam = sql.param(now)
    await q.query(
      sql`INSERT INTO rail_attempts (txn_id, rail, failures, last_attempt_at, last_answer_at)
       VALUES (${txn.id}, ${rail}, 0, ${nowParam}, ${nowParam})
       ON CONFLICT (txn_id) DO UPDATE SET rail = ${rail}, failures = 0, first_failed_at = NULL,
         last_attempt_at = ${nowParam}, last_answer_at = ${nowParam}, next_retry_at = NULL`,
    )
    return undefined
  }
  const rail = sql.param(last.rail)
  const nowParam = sql.param(now)
  const code = sql.param(last.code ?? 'unknown')
  const { rows } = await q.query<{ failures: number }>(
    sql`INSERT INTO rail_attempts (txn_id, rail, failures, first_failed_at, last_error, last_attempt_at)
     VALUES (${txn.id}, ${rail}, 1, ${nowParam}, ${code}, ${nowParam})
     ON CONFLICT (txn_id) DO UPDATE SET rail = ${rail}, failures = rail_attempts.failures + 1,
       first_failed_at = COALESCE(rail_attempts.first_failed_at, ${nowParam}), last_error = ${code}, last_attempt_at = ${nowParam}
     RETURNING failures`,
  )
  const failures = Number(rows[0]?.failures ?? 1)
  const at = now + backoffDelayMs(settings[last.rail], failures, random)
  await q.query(sql`UPDATE rail_attempts SET next_retry_at = ${at} WHERE txn_id = ${txn.id}`)
  return at
}
