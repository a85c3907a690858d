import type { Db, Queryable } from '../db/db.js'
import type { ReviewCheck } from '../approvals/review.js'
import type { ReviewReason } from '../approvals/policy.js'
import { assert } from '../shared/assert.js'
import { ApiError } from '../shared/errors.js'
import { PASS, type ConfirmGate } from '../transactions/gates.js'
import type { KindRegistry } from '../transactions/kinds.js'
import type { TxnKind } from '../transactions/state-machine.js'
import type { Txn } from '../transactions/txn.js'
import { scheduleCheck } from '../transactions/repository.js'
import { destinationsOf, screensKind } from './destinations.js'
import { normalise, parseList, type Destination, type DestType } from './normalise.js'
import type { ScreeningProvider } from './provider.js'
import {
  depositHeld,
  insertHit,
  listHits,
  listLists,
  matchingEntries,
  providerCheck,
  releaseDepositHits,
  removeList,
  replaceList,
  reviewHit,
  saveProviderCheck,
  unreviewedHitCount,
  type Hit,
  type HitStage,
  type ListSummary,
  type NewHit,
} from './repository.js'

/**
 * Screening of destinations and deposits (issue 31; docs/screening.md). Every destination a send or
 * payout names is looked up in the operator's deny lists (and, when one is configured, asked of the
 * screening provider) at quote, and looked up again at confirm, inside its transaction, so a list
 * loaded in between still catches it. A hit refuses (SCREENING_ON_HIT=refuse, the default) or holds
 * the send for an operator's approval (review) through the approval gate's review check. Every
 * incoming on-chain deposit's sources are looked up too; a hit holds its credit until an operator
 * releases it. The customer is told `limit_exceeded` with `limit: screening` and never which list
 * or entry matched; operators see every hit.
 */
export interface ScreeningSettings {
  onHit: 'refuse' | 'review'
  onError: 'refuse' | 'review'
}

export interface ScreeningMetrics {
  counter(name: string, help: string, labels?: string[]): { inc(labels: Record<string, string>): void }
}

export interface ScreeningDeps {
  db: Db
  kinds: Pick<KindRegistry, 'declaration' | 'kindsWith'>
  settings: ScreeningSettings
  provider?: ScreeningProvider | undefined
  metrics?: ScreeningMetrics
  log?: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void }
  now?: () => number
}

/** The one refusal a customer sees, whatever matched (contract section 11). */
export function screeningRefusal(): ApiError {
  // The limits' shape (contract section 11): `limit` names the rule; nothing says which list.
  const detail = { field: 'destReq.reqDetails', issue: 'the destination cannot be paid', limit: 'screening' }
  return new ApiError('limit_exceeded', 'The screening limit does not allow this transaction', [detail])
}

/** What a look at a transaction's destinations found. */
interface Look {
  hits: Array<Destination & { source: string; entry: string }>
  /** The provider could not be asked (or was not, for a quote made before it was configured). */
  providerError?: string
}

export interface ScreeningService {
  gate: ConfirmGate
  review: ReviewCheck
  /** Whether a deposit's credit waits for an operator (a hit on its sources not yet released). */
  depositHeld(q: Queryable, txnId: string): Promise<boolean>
  /**
   * Screen a deposit's sources in the caller's transaction (the one that records the deposit); a
   * hit is recorded `held`, and true is returned: its credit then waits for `releaseDeposit`.
   */
  screenDeposit(
    q: Queryable,
    deposit: { txnId: string; accountId: string; kind: string; sources: readonly string[] },
  ): Promise<boolean>
  loadList(
    q: Queryable,
    list: { source: string; text: string; defaultType?: DestType | undefined; by: string },
  ): Promise<{ source: string; before: number | null; after: number }>
  clearList(q: Queryable, source: string): Promise<number | null>
  lists(q?: Queryable): Promise<ListSummary[]>
  hits(opts: { unreviewed?: boolean; txnId?: string; limit: number }, q?: Queryable): Promise<Hit[]>
  unreviewedCount(q?: Queryable): Promise<number>
  /** An operator has looked at a hit; for a held deposit, `release` lets its credit go on. */
  reviewHit(
    q: Queryable,
    id: string,
    by: string,
    release?: boolean,
  ): Promise<{ before: Hit; after: Hit } | 'not_found' | 'not_held'>
  /** Resolves once every hit recorded outside a refused confirm's transaction is written. */
  settled(): Promise<void>
}

/** A list's source name: what operators call it (`ofac`, `internal`). */
export const SOURCE_NAME = /^[a-z0-9][a-z0-9_.-]{0,63}$/
/** Hits written after a refused confirm, waiting at most. */
const PENDING_WRITES_MAX = 1_000

export function createScreeningService(deps: ScreeningDeps): ScreeningService {
  const { db, kinds, settings } = deps
  const now = deps.now ?? Date.now
  // Every kind that sends money out is screened: one without a line in destinations.ts stops the
  // service here rather than paying unscreened.
  for (const kind of kinds.kindsWith((d) => d.direction === 'out'))
    assert(screensKind(kind), `screening does not know where ${kind} pays (src/screening/destinations.ts)`)
  const hitCounter = deps.metrics?.counter(
    'svcpay_screening_hits_total',
    'Screening hits by stage (quote, confirm, deposit) and outcome (refused, held)',
    ['stage', 'outcome'],
  )
  const canWait = (kind: TxnKind) =>
    kinds.declaration(kind).transitions.quoted?.includes('processing') === true
  const concerns = (kind: TxnKind) => kinds.declaration(kind).direction === 'out' && screensKind(kind)

  const pending = new Set<Promise<void>>()

  async function record(
    q: Queryable,
    txn: Pick<Txn, 'id' | 'accountId' | 'kind'>,
    stage: HitStage,
    look: Look,
    outcome: NewHit['outcome'],
  ) {
    const at = now()
    for (const hit of look.hits) {
      const fresh = await insertHit(q, {
        at,
        accountId: txn.accountId,
        txnId: txn.id,
        kind: txn.kind,
        stage,
        type: hit.type,
        value: hit.value,
        source: hit.source,
        entry: hit.entry,
        outcome,
      })
      if (fresh) hitCounter?.inc({ stage, outcome })
    }
  }

  /**
   * The hits of a refused confirm, written from a connection of their own after the refusal: the
   * confirm's transaction rolls back, and the operator must still see them. On PGlite (one
   * connection) the write waits for that rollback; on PostgreSQL it runs beside it.
   */
  function recordAfterRefusal(txn: Txn, look: Look) {
    if (pending.size >= PENDING_WRITES_MAX) {
      deps.log?.error(
        { txnId: txn.id },
        'screening: too many hits waiting to be written; this one is logged only',
      )
      return
    }
    const write = record(db, txn, 'confirm', look, 'refused')
      .catch((err) =>
        deps.log?.error(
          { txnId: txn.id, error: (err as Error).message },
          'screening: a hit was not recorded',
        ),
      )
      .finally(() => pending.delete(write))
    pending.add(write)
  }

  async function lookUp(q: Queryable, dests: readonly Destination[]): Promise<Look['hits']> {
    const entries = await matchingEntries(q, dests)
    return entries.map((e) => ({
      type: e.type,
      value: e.value,
      source: e.source,
      entry: `${e.type}:${e.value}`,
    }))
  }

  /** At confirm: the lists again, in the confirm's transaction, and the provider's answer of the quote. */
  async function lookAtConfirm(q: Queryable, txn: Txn): Promise<Look> {
    const dests = destinationsOf(txn.kind, txn.destDetails)
    if (dests.length === 0) return { hits: [] }
    const hits = await lookUp(q, dests)
    if (!deps.provider) return { hits }
    const check = await providerCheck(q, txn.id)
    if (!check) return { hits, providerError: 'the provider was not asked at quote' }
    if (check.verdict === 'error') return { hits, providerError: check.detail }
    if (check.verdict === 'hit') {
      for (const m of JSON.parse(check.detail) as Array<Destination & { list: string }>)
        hits.push({ type: m.type, value: m.value, source: 'provider', entry: m.list })
    }
    return { hits }
  }

  // The look the gate made, for the review check that runs right after it in the same confirm (the
  // same transaction and time); any other call looks again.
  let lastLook: { q: Queryable; txnId: string; at: number; look: Look } | undefined
  async function lookOnce(q: Queryable, txn: Txn, at: number): Promise<Look> {
    if (lastLook && lastLook.q === q && lastLook.txnId === txn.id && lastLook.at === at) return lastLook.look
    const look = await lookAtConfirm(q, txn)
    lastLook = { q, txnId: txn.id, at, look }
    return look
  }

  const gate: ConfirmGate = {
    name: 'screening',
    concerns,
    async atQuote(q, quote) {
      const dests = destinationsOf(quote.kind, quote.destDetails)
      if (dests.length === 0) return undefined
      const look: Look = { hits: await lookUp(q, dests) }
      if (deps.provider) {
        const answer = await deps.provider({ reference: quote.id, direction: 'out', destinations: dests })
        const detail =
          answer.verdict === 'hit'
            ? JSON.stringify(answer.matches)
            : answer.verdict === 'error'
              ? answer.detail
              : ''
        if (answer.verdict === 'hit')
          look.hits.push(
            ...answer.matches.map((m) => ({
              type: m.type,
              value: m.value,
              source: 'provider',
              entry: m.list,
            })),
          )
        if (answer.verdict === 'error') {
          look.providerError = answer.detail
          deps.log?.warn({ txnId: quote.id, detail: answer.detail }, 'screening provider could not be asked')
        }
        // Written before the quote is (the quote's own statement follows): its confirm reads it.
        await saveProviderCheck(q, { txnId: quote.id, at: now(), verdict: answer.verdict, detail })
      }
      const review = canWait(quote.kind)
      if (look.hits.length > 0 && (settings.onHit === 'refuse' || !review)) {
        await record(q, quote, 'quote', look, 'refused')
        return screeningRefusal()
      }
      if (look.providerError !== undefined && (settings.onError === 'refuse' || !review)) {
        hitCounter?.inc({ stage: 'quote', outcome: 'provider_error_refused' })
        return screeningRefusal()
      }
      // A hit to review: the quote stands, and its confirm holds it for an operator.
      return undefined
    },
    async atConfirm(q, txn, at) {
      const look = await lookOnce(q, txn, at)
      const review = canWait(txn.kind)
      if (look.hits.length > 0 && (settings.onHit === 'refuse' || !review)) {
        recordAfterRefusal(txn, look)
        return { verdict: 'refuse', error: screeningRefusal() }
      }
      if (look.providerError !== undefined && (settings.onError === 'refuse' || !review))
        return { verdict: 'refuse', error: screeningRefusal() }
      // Anything left to say is a review: the approval gate's check below holds it.
      return PASS
    },
  }

  const review: ReviewCheck = {
    name: 'screening',
    concerns: (kind) => concerns(kind) && canWait(kind),
    async reasons(q, txn, at) {
      const look = await lookOnce(q, txn, at)
      const reasons: ReviewReason[] = []
      if (look.hits.length > 0) {
        // Recorded with the hold, in the confirm's transaction.
        await record(q, txn, 'confirm', look, 'held')
        for (const hit of look.hits)
          reasons.push({
            rule: 'screening',
            text: `screening hit: ${hit.type} ${hit.value} on ${hit.source} (${hit.entry})`,
          })
      }
      if (look.providerError !== undefined)
        reasons.push({
          rule: 'screening',
          text: `screening provider could not be asked: ${look.providerError}`,
        })
      return reasons
    },
  }

  return {
    gate,
    review,
    depositHeld,
    async screenDeposit(q, deposit) {
      const dests: Destination[] = []
      for (const source of deposit.sources) {
        const value = normalise('bitcoin', source)
        if (value !== undefined) dests.push({ type: 'bitcoin', value })
      }
      if (dests.length === 0) return false
      const look: Look = { hits: await lookUp(q, dests) }
      if (look.hits.length === 0) return false
      await record(
        q,
        {
          id: deposit.txnId as Txn['id'],
          accountId: deposit.accountId as Txn['accountId'],
          kind: deposit.kind,
        },
        'deposit',
        look,
        'held',
      )
      deps.log?.warn(
        { txnId: deposit.txnId },
        'screening: a deposit from a listed source waits for an operator',
      )
      return true
    },
    async loadList(q, list) {
      if (!SOURCE_NAME.test(list.source))
        throw new ApiError(
          'invalid_request',
          'source: lower-case letters, digits, ".", "_" or "-", at most 64',
          [{ field: 'source', issue: 'is not a list name' }],
        )
      const parsed = parseList(list.text, list.defaultType)
      if ('error' in parsed) {
        const lines = (parsed.rejected ?? []).map((r) => `line ${r.line}`).join(', ')
        throw new ApiError('invalid_request', `list: ${parsed.error}${lines ? ` (${lines})` : ''}`, [
          { field: 'list', issue: parsed.error },
        ])
      }
      const result = await replaceList(q, {
        source: list.source,
        entries: parsed.entries,
        by: list.by,
        at: now(),
      })
      return { source: list.source, ...result }
    },
    clearList: (q, source) => removeList(q, source),
    lists: (q = db) => listLists(q),
    hits: (opts, q = db) => listHits(q, opts),
    unreviewedCount: (q = db) => unreviewedHitCount(q),
    async reviewHit(q, id, by, release) {
      const done = await reviewHit(q, id, by, now())
      if (!done) return 'not_found'
      if (!release) return done
      if (done.before.stage !== 'deposit' || done.before.outcome === 'refused') return 'not_held'
      // Every hit on the deposit's sources is released with it, and its credit is looked at now.
      await releaseDepositHits(q, done.before.txnId, by, now())
      await scheduleCheck(q, done.before.txnId as Txn['id'], now(), 'earliest')
      const after = (await listHits(q, { txnId: done.before.txnId, limit: 100 })).find((h) => h.id === id)!
      return { before: done.before, after }
    },
    async settled() {
      while (pending.size > 0) await Promise.all([...pending])
    },
  }
}
