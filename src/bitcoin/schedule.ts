import type { Queryable } from '../db/db.js'
import { WAKE_CHANNEL } from '../events/channels.js'
import { scheduleCheck } from '../transactions/repository.js'
import type { Txn } from '../transactions/txn.js'

/** Wake every worker once the caller's database transaction commits (NOTIFY is sent on commit). */
export async function wakeWorkers(q: Queryable): Promise<void> {
  await q.notify(WAKE_CHANNEL)
}

/**
 * Ask the worker to look at a transaction again at `at`, unless someone asked for an earlier look
 * meanwhile (a sandbox payment sets it to now); only while it is still in the state the caller saw.
 */
export async function checkAgainAt(q: Queryable, txn: Pick<Txn, 'id' | 'state'>, at: number): Promise<void> {
  await scheduleCheck(q, txn.id, at, 'earliest', { state: txn.state })
}

/** Milliseconds between looks at something that may change any moment: often at first, then less. */
export function pollDelayMs(sinceMs: number, now: number, opts: { minMs: number; maxMs: number }): number {
  const age = Math.max(0, now - sinceMs)
  return Math.min(opts.maxMs, Math.max(opts.minMs, Math.floor(age / 20)))
}
