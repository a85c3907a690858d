/**
 * The statement poll of incoming bank transfers (issue 20; docs/payouts.md, "Incoming credits"):
 * the fallback that finds every credit whose notification never came. Every `BANK_CREDITS_POLL_S`
 * seconds one instance (whichever claims the `bank_credit_cursor` row, as the reconciliation
 * schedule is claimed) reads the partner's `GET /v1/credits` from the stored position and hands
 * every credit to the sink. The sink takes a credit once by its `bankRef`, so reading a credit twice
 * is harmless; missing one is not. Hence:
 *
 * - the position moves only after the sink took every credit of a page, to the newest booking time
 *   handed on less `OVERLAP_MS`, so a credit the partner lists late, or books a little out of order,
 *   is still read on the next poll; it never moves back;
 * - an item that cannot be used (malformed, or refused by the sink as it stands) is left out, logged
 *   with its id and the field at fault, and kept for operators (src/payouts/vnd/skipped-credits.ts): one bad item
 *   never stops the rest of the statement from being read;
 * - a poll that fails (the partner down, the sink unable to record) keeps the position, and the
 *   next one is tried after a growing pause (`backoffMs`); `svcpay rails check` shows the failures.
 */
import { ConfigError } from '../../config/config.js'
import type { Queryable } from '../../db/db.js'
import type { CreditSink } from './bank-credit.js'
import { RailFailure, type CheckableRail } from '../../rails/rail.js'
import type { CreditPage } from './bank-http-credits.js'
import { ApiError } from '../../shared/errors.js'
import { recordSkippedCredit, refusedField } from './skipped-credits.js'
import { sql } from '../../db/sql.js'

export const BANK_CREDITS_POLL_S_DEFAULT = 60
/** How far before the newest credit handed on the next poll reads again. */
export const OVERLAP_MS = 10 * 60_000
/** Where the first poll starts, before now: credits older than this are not ours to match. */
export const FIRST_LOOKBACK_MS = 24 * 3_600_000
/** Pages one poll reads at most; with more, the next poll follows at once. */
export const PAGES_PER_POLL = 50
/** How long a claimed poll is held from other instances; renewed with every page. */
export const LEASE_MS = 2 * 60_000
/** The longest pause between two tries while polls fail. */
export const BACKOFF_MAX_MS = 15 * 60_000

/** BANK_CREDITS_POLL_S in milliseconds: 0 turns the poll off. */
export function bankCreditsPollMs(env: Record<string, string | undefined>): number {
  const text = env.BANK_CREDITS_POLL_S
  if (text === undefined || text === '') return BANK_CREDITS_POLL_S_DEFAULT * 1000
  const seconds = Number(text)
  if (!/^\d+$/.test(text) || seconds > 3_600)
    throw new ConfigError('BANK_CREDITS_POLL_S must be a whole number of seconds from 0 (off) to 3600')
  return seconds * 1000
}

/** The pause before the next try after `failures` failed polls in a row. */
export function backoffMs(intervalMs: number, failures: number): number {
  return Math.min(intervalMs * 2 ** Math.min(Math.max(failures - 1, 0), 16), BACKOFF_MAX_MS)
}

export interface CreditPollDeps {
  db: Queryable
  /** One page of the partner's statement (`BankHttpRail.listCredits`). */
  list(sinceMs: number, cursor: string | null): Promise<CreditPage>
  sink: CreditSink
  intervalMs: number
  log: { warn(obj: object, msg: string): void }
  now?: () => number
}

/** Claim the poll when it is due and nobody holds it; the position to read from when this caller won. */
async function claimPoll(
  q: Queryable,
  now: number,
): Promise<{ sinceMs: number | null; failures: number } | null> {
  const nowParam = sql.param(now)
  const { rows } = await q.query<{ since_ms: string | number | null; failures: number }>(
    sql`UPDATE bank_credit_cursor SET lease_until = ${nowParam}::int8 + ${LEASE_MS}::int8
      WHERE id = 1 AND next_run_at <= ${nowParam} AND lease_until <= ${nowParam}
      RETURNING since_ms, failures`,
  )
  const row = rows[0]
  if (!row) return null
  return { sinceMs: row.since_ms === null ? null : Number(row.since_ms), failures: Number(row.failures) }
}

/** Every credit of a page was taken: the next poll may start later, and the lease is renewed. */
async function advance(q: Queryable, sinceMs: number, now: number): Promise<void> {
  const since = sql.param(sinceMs)
  await q.query(
    sql`UPDATE bank_credit_cursor SET since_ms = GREATEST(COALESCE(since_ms, ${since}::int8), ${since}::int8),
       lease_until = ${now}::int8 + ${LEASE_MS}::int8 WHERE id = 1`,
  )
}

async function finish(
  q: Queryable,
  outcome: { nextRunAt: number; now: number } & ({ ok: true } | { ok: false; error: string }),
): Promise<void> {
  if (outcome.ok)
    await q.query(
      sql`UPDATE bank_credit_cursor SET next_run_at = ${outcome.nextRunAt}, lease_until = 0, failures = 0, last_error = NULL,
         last_ok_at = ${outcome.now} WHERE id = 1`,
    )
  else
    await q.query(
      sql`UPDATE bank_credit_cursor SET next_run_at = ${outcome.nextRunAt}, lease_until = 0, failures = failures + 1,
         last_error = ${outcome.error} WHERE id = 1`,
    )
}

/**
 * One step of the worker's credit poll: read the statement when this instance wins the claim.
 * Returns true when pages were left unread (the loop runs again at once), else false.
 */
export async function runBankCreditPoll(deps: CreditPollDeps): Promise<boolean> {
  const now = deps.now ?? Date.now
  if (deps.intervalMs <= 0) return false
  const started = now()
  const claim = await claimPoll(deps.db, started)
  if (!claim) return false
  const since = claim.sinceMs ?? started - FIRST_LOOKBACK_MS
  let cursor: string | null = null
  try {
    for (let page = 0; page < PAGES_PER_POLL; page++) {
      const { credits, skipped, nextCursor } = await deps.list(since, cursor)
      // Only the partner's id (when valid) and the field at fault: a credit's details are personal.
      for (const item of skipped) {
        deps.log.warn({ ...item }, 'the bank partner listed a malformed credit; left out')
        await recordSkippedCredit(deps.db, item, 'statement', now())
      }
      for (const credit of credits) {
        try {
          await deps.sink(credit)
        } catch (err) {
          // A credit the sink refuses as it stands (an ApiError: bad input, not a failure to
          // record) will be refused at every poll: left out and shown to operators, and the rest of
          // the statement is read. Anything else (the database down) fails the poll as before.
          if (!(err instanceof ApiError) || err.status >= 500) throw err
          const item = { id: credit.bankRef, problem: refusedField(err) }
          deps.log.warn(
            { ...item, error: err.code },
            'the bank partner listed a credit that cannot be recorded; left out',
          )
          await recordSkippedCredit(deps.db, item, 'statement', now())
        }
      }
      if (credits.length > 0) {
        const newest = Math.max(...credits.map((c) => c.bookedAtMs))
        await advance(deps.db, newest - OVERLAP_MS, now())
      }
      if (nextCursor === null) {
        await finish(deps.db, { ok: true, now: now(), nextRunAt: started + deps.intervalMs })
        return false
      }
      cursor = nextCursor
    }
    await finish(deps.db, { ok: true, now: now(), nextRunAt: 0 })
    return true
  } catch (err) {
    const error = err instanceof RailFailure ? err.code : 'credit_not_recorded'
    const failures = claim.failures + 1
    const retryMs = backoffMs(deps.intervalMs, failures)
    deps.log.warn({ error, failures, retryInMs: retryMs }, 'reading the bank statement of credits failed')
    await finish(deps.db, { ok: false, error, now: now(), nextRunAt: now() + retryMs })
    return false
  }
}

/** What `svcpay rails check` adds for the credit poll: its failures in a row, if any. */
export async function creditPollProblems(q: Queryable): Promise<string[]> {
  const { rows } = await q.query<{
    failures: number
    last_error: string | null
    last_ok_at: string | number | null
  }>(sql`SELECT failures, last_error, last_ok_at FROM bank_credit_cursor WHERE id = 1`)
  const row = rows[0]
  if (!row || Number(row.failures) === 0) return []
  const lastOk = row.last_ok_at === null ? 'never' : new Date(Number(row.last_ok_at)).toISOString()
  return [
    `the statement of incoming credits could not be read ${row.failures} time(s) in a row (${row.last_error ?? 'unknown'}); last read ${lastOk}`,
  ]
}

/** The bank rail's check with the credit poll's failures added to its problems. */
export function withCreditPollCheck(rail: CheckableRail, q: Queryable): CheckableRail {
  const check = rail.check?.bind(rail)
  if (!check) return rail
  return {
    async check() {
      const report = await check()
      return { ...report, problems: [...report.problems, ...(await creditPollProblems(q))] }
    },
  }
}
