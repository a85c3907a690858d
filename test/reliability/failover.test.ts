import { afterAll, describe, expect, it } from 'vitest'
import { createPostgresDb, type Db } from '../../src/db/db.js'
import { CLAIM_LEASE_MS } from '../../src/transactions/worker.js'
import { ENGINE } from '../helpers/harness.js'
import { finishCase, historyProblems, moneyProblems, stuckTransactions } from '../helpers/invariants.js'
import {
  canRunReplicatedPair,
  startReplicatedPair,
  type ReplicatedPair,
} from '../helpers/replicated-postgres.js'
import {
  createServiceStore,
  serviceClient,
  sleep,
  startServiceProcess,
  type HttpResult,
  type RemoteAccount,
  type ServiceClient,
  type ServiceProcess,
  type ServiceStore,
} from '../helpers/service-process.js'

/**
 * A database failover under load, with a real standby. A scratch primary and a synchronous
 * streaming standby of it (test/helpers/replicated-postgres.ts); two API processes and a worker
 * process on the URL naming both (`target_session_attrs=read-write`); swaps, Lightning sends and
 * TRON payouts driven through both APIs. Mid-load the primary is stopped hard
 * (`pg_ctl stop -m immediate`) and the standby promoted, with no restart of the service. Then, in
 * the promoted database: every request answered 2xx is there, nothing happened twice, the books
 * balance, every send that was in flight finished once on its network, and both APIs answered
 * again within the bound below. Requests cut by the failover got the contract's 503 and were
 * retried with the same extRefId (a create) or as the same confirm, as a client would.
 *
 * FAILOVER_BREAK=async runs the same test on asynchronous replication (commits acknowledged before
 * the standby has them): it must then fail, finding acknowledged payments missing.
 *
 * PostgreSQL only: the embedded engine has no standby.
 */

const DATABASE = 'svcpay_failover'
/** The bound: both APIs answer a write again within this long after the standby was promoted. */
const ANSWER_AGAIN_WITHIN_MS = 15_000
/** How long a client keeps retrying one request through the failover. */
const RETRY_FOR_MS = 30_000
const TRON_ADDRESS = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t'

type Kind = 'swap' | 'ln_send' | 'tron_payout'

/** What a client was told: a transaction exists (created) and, if confirmed, moved on. */
interface Acknowledged {
  txnId: string
  kind: Kind
  extRefId: string
  confirmed: boolean
  paymentRequest?: string
}

describe.skipIf(ENGINE !== 'postgres' || !canRunReplicatedPair())(
  'database failover to a synchronous standby (PostgreSQL only: the embedded engine has no standby)',
  () => {
    let pair: ReplicatedPair | undefined
    let store: ServiceStore | undefined
    const procs: ServiceProcess[] = []
    afterAll(async () => {
      await Promise.all(procs.map((p) => p.stop()))
      await store?.cleanup()
      await pair?.destroy()
    })

    it(
      'loses no acknowledged payment, doubles none, and answers again without a restart',
      { timeout: 150_000 },
      async () => {
        const started = Date.now()
        pair = await startReplicatedPair({ asynchronous: process.env.FAILOVER_BREAK === 'async' })
        await pair.createDatabase(DATABASE)
        store = await createServiceStore(
          { QUOTE_TTL_S: '600', SANDBOX_PAYOUT_DELAY_MS: '300' },
          { databaseUrl: pair.multiHostUrl(DATABASE) },
        )
        // The standby is made while the service starts: three processes at once (the migrations take
        // an advisory lock, so one of them applies each).
        const env = store.env
        const kept = (p: ServiceProcess) => void procs.push(p)
        await Promise.all([
          pair.startStandby(),
          startServiceProcess(env, { role: 'api' }).then(kept),
          startServiceProcess(env, { role: 'api' }).then(kept),
          startServiceProcess(env, { role: 'worker', workerSettleMs: 1_000 }).then(kept),
        ])
        const apis: ServiceClient[] = procs
          .filter((p) => p.port !== undefined)
          .map((p) => serviceClient(p.base, store!.adminToken))
        const [one] = apis as [ServiceClient, ServiceClient]
        const accounts: RemoteAccount[] = []
        for (let i = 0; i < 3; i++) {
          const a = await one.createAccount(`Failover ${i}`, 'premium')
          for (const [ccy, amount] of [
            ['BTC', '1'],
            ['USD', '100000'],
            ['USDT', '100000'],
          ] as const) {
            await one.admin('POST', '/admin/sandbox/fund', { accountId: a.accountId, ccy, amount })
          }
          accounts.push(a)
        }
        const setupMs = Date.now() - started

        // --- The load: lanes of create + confirm, each request retried through the failover. ---
        const acknowledged = new Map<string, Acknowledged>()
        const answers: Record<number, number> = {}
        const bad: Array<{ what: string; status: number; body: unknown }> = []
        let inFlight = 0
        let noAnswer = 0
        let stopping = false
        let seq = 0
        const pick = <T>(xs: readonly T[]) => xs[Math.floor(Math.random() * xs.length)]!

        /** One request, retried (after a 503 or no answer) until it gets another answer. */
        const call = async (
          what: string,
          method: string,
          path: string,
          token: string,
          body?: unknown,
        ): Promise<HttpResult> => {
          for (const deadline = Date.now() + RETRY_FOR_MS; ;) {
            inFlight++
            let r: HttpResult | undefined
            try {
              r = await pick(apis).call(method, path, token, body)
            } catch {
              // No answer: the client cannot know whether it was done, and asks again.
              noAnswer++
            } finally {
              inFlight--
            }
            if (r) {
              answers[r.status] = (answers[r.status] ?? 0) + 1
              if (
                r.status !== 503 ||
                r.body?.error !== 'service_unavailable' ||
                typeof r.body.message !== 'string'
              ) {
                if (r.status >= 500) bad.push({ what, status: r.status, body: r.body })
                return r
              }
            }
            if (Date.now() > deadline) throw new Error(`${what}: no answer but 503 for ${RETRY_FOR_MS} ms`)
            await sleep(100)
          }
        }

        const operation = async (kind: Kind): Promise<void> => {
          const a = pick(accounts)
          const extRefId = `fo-${process.pid}-${++seq}`
          let body: Record<string, unknown>
          let paymentRequest: string | undefined
          if (kind === 'swap') {
            body = {
              sourceReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '0.0001', reqDetails: {} },
              destReq: { ccy: 'USD', method: 'svcpay', reqDetails: {} },
            }
          } else if (kind === 'ln_send') {
            const inv = await call('ln-invoice', 'POST', '/sandbox/lightning/invoice', a.token, {
              amount: '0.00005',
            })
            if (inv.status !== 200) throw new Error(`invoice: ${inv.status} ${JSON.stringify(inv.body)}`)
            paymentRequest = inv.body.paymentRequest as string
            body = {
              sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
              destReq: { ccy: 'BTC', method: 'lightning', reqDetails: { paymentRequest } },
            }
          } else {
            body = {
              sourceReq: { ccy: 'USDT', method: 'svcpay', reqDetails: {} },
              destReq: {
                ccy: 'USDT',
                method: 'tron',
                amtRequested: '5',
                reqDetails: { address: TRON_ADDRESS },
              },
            }
          }
          // The same extRefId and body on every retry: the service returns what it already made.
          const q = await call(`create ${kind}`, 'POST', '/api/v2/transaction', a.token, {
            ...body,
            extRefId,
          })
          expect(q.status, `create ${kind}: ${JSON.stringify(q.body)}`).toBe(200)
          const txnId = q.body.txnId as string
          const earlier = [...acknowledged.values()].find((x) => x.extRefId === extRefId)
          expect(earlier?.txnId ?? txnId).toBe(txnId)
          acknowledged.set(txnId, {
            txnId,
            kind,
            extRefId,
            confirmed: false,
            ...(paymentRequest ? { paymentRequest } : {}),
          })
          const c = await call(`confirm ${kind}`, 'PUT', `/api/v2/transaction/${txnId}/confirm`, a.token)
          expect(c.status, `confirm ${kind}: ${JSON.stringify(c.body)}`).toBe(200)
          expect(c.body.txnId).toBe(txnId)
          acknowledged.get(txnId)!.confirmed = true
        }
        const kinds: Kind[] = ['swap', 'swap', 'ln_send', 'tron_payout']
        const laneErrors: string[] = []
        const lanes = Array.from({ length: 6 }, async () => {
          while (!stopping)
            await operation(pick(kinds)).catch((err: Error) => void laneErrors.push(err.message))
        })

        // --- The failover. ---
        await sleep(2_000)
        const beforeKill = acknowledged.size
        const killedAt = Date.now()
        const inFlightAtKill = inFlight
        await pair.killPrimary()
        // What a failover manager does: notice, then promote (Patroni's loop_wait is ~10 s; ours is short).
        await sleep(1_000)
        await pair.promoteStandby()
        const promotedAt = Date.now()
        // Each API answers a write again: a quote, created on the new primary.
        const answeredAgainAt = await Promise.all(
          apis.map(async (api) => {
            for (;;) {
              const r = await api
                .call('POST', '/api/v2/transaction', accounts[0]!.token, {
                  sourceReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '0.00001', reqDetails: {} },
                  destReq: { ccy: 'USD', method: 'svcpay', reqDetails: {} },
                })
                .catch(() => undefined)
              if (r?.status === 200) return Date.now()
              if (Date.now() - promotedAt > ANSWER_AGAIN_WITHIN_MS) return Infinity
              await sleep(50)
            }
          }),
        )
        const answerAgainMs = Math.max(...answeredAgainAt) - promotedAt
        await sleep(2_000)
        stopping = true
        await Promise.all(lanes)

        // --- The promoted database. ---
        const db: Db = createPostgresDb(pair.url(pair.standbyPort, DATABASE))
        try {
          // First of all: every acknowledged transaction is on the promoted standby.
          const present = new Set(
            (await db.query<{ id: string }>('SELECT id FROM transactions')).rows.map((r) => r.id),
          )
          const lost = [...acknowledged.values()].filter((a) => !present.has(a.txnId)).map((a) => a.txnId)
          expect(
            lost,
            `acknowledged but not on the promoted standby (${lost.length} of ${acknowledged.size})`,
          ).toEqual([])
          // Every operation ran to its end: each request was answered 2xx after its retries.
          expect(laneErrors).toEqual([])

          // The worker finishes the sends (Lightning at once, TRON once the sandbox settles them). A send
          // the worker was advancing when the primary died stays claimed until its lease runs out
          // (CLAIM_LEASE_MS, src/transactions/worker.ts): the lease is what keeps a second worker off
          // a send that may be half made, so it is waited for, not cut short.
          const open = async () =>
            (
              await db.query<{ what: string }>(
                `SELECT id || ' ' || kind || ' ' || state AS what FROM transactions
                  WHERE kind IN ('ln_send', 'tron_payout') AND state IN ('srccreated', 'destsent')`,
              )
            ).rows.map((r) => r.what)
          const sendsDeadline = killedAt + CLAIM_LEASE_MS + 15_000
          while ((await open()).length > 0 && Date.now() < sendsDeadline) await sleep(250)
          const sendsDoneMs = Date.now() - killedAt
          expect(await open(), procs.map((p) => p.output().slice(-2_000)).join('\n---\n')).toEqual([])

          const { rows } = await db.query<{ id: string; kind: string; state: string; ext_ref_id: string }>(
            'SELECT id, kind, state, ext_ref_id FROM transactions',
          )
          const inDb = new Map(rows.map((r) => [r.id, r]))
          // As far as it was acknowledged: a confirmed transaction did not go back to quoted.
          const unconfirmed = [...acknowledged.values()]
            .filter(
              (a) => a.confirmed && ['quoted', 'expired', 'usercanceled'].includes(inDb.get(a.txnId)!.state),
            )
            .map((a) => `${a.txnId} ${inDb.get(a.txnId)!.state}`)
          expect(unconfirmed, 'confirmed but back to an earlier state').toEqual([])
          // Nothing doubled: one transaction per extRefId, one journal entry at most per transaction.
          const doubledRefs = await db.query(
            `SELECT account_id, ext_ref_id FROM transactions WHERE ext_ref_id <> '' GROUP BY 1, 2 HAVING count(*) > 1`,
          )
          expect(doubledRefs.rows).toEqual([])
          expect(await moneyProblems(db)).toEqual([])
          expect(await historyProblems(db)).toEqual([])
          expect(await stuckTransactions(db)).toEqual([])

          // Every send in flight finished exactly once on its network.
          const lnPaid = await db.query<{ payment_request: string; n: bigint; ok: bigint }>(
            `SELECT payment_request, count(*)::int8 AS n, count(*) FILTER (WHERE status = 'succeeded')::int8 AS ok
               FROM sandbox_ln_payments GROUP BY payment_request`,
          )
          const paidByRequest = new Map(lnPaid.rows.map((r) => [r.payment_request, r]))
          const tronSent = await db.query<{ request_id: string; n: bigint }>(
            `SELECT request_id, count(*)::int8 AS n FROM sandbox_payouts WHERE kind = 'tron' GROUP BY request_id`,
          )
          const sentById = new Map(tronSent.rows.map((r) => [r.request_id, Number(r.n)]))
          const sendProblems: string[] = []
          let sendsChecked = 0
          for (const t of rows) {
            if (t.kind === 'tron_payout') {
              const n = sentById.get(t.id) ?? 0
              if (['completed', 'failed', 'rejected'].includes(t.state)) sendsChecked++
              if (t.state === 'completed' ? n !== 1 : n > 1)
                sendProblems.push(`${t.id} tron_payout ${t.state} sent ${n} times`)
            }
          }
          for (const a of acknowledged.values()) {
            if (a.kind !== 'ln_send' || !a.confirmed) continue
            const t = inDb.get(a.txnId)!
            const paid = paidByRequest.get(a.paymentRequest!)
            sendsChecked++
            if (t.state === 'completed' && (!paid || Number(paid.n) !== 1 || Number(paid.ok) !== 1))
              sendProblems.push(`${a.txnId} ln_send completed, paid ${paid ? paid.n : 0} times`)
            if (t.state !== 'completed' && paid && Number(paid.ok) > 0)
              sendProblems.push(`${a.txnId} ln_send ${t.state} although the network paid it`)
          }
          for (const id of sentById.keys())
            if (!inDb.has(id)) sendProblems.push(`TRON sent ${id}, a transaction the books do not know`)
          expect(sendProblems).toEqual([])

          // Cut requests were answered 503 in the contract's shape, never 500, and every request was
          // answered: no API process fell over.
          expect(bad).toEqual([])
          expect(noAnswer).toBe(0)
          expect(answerAgainMs, `an API did not answer within ${ANSWER_AGAIN_WITHIN_MS} ms`).toBeLessThan(
            ANSWER_AGAIN_WITHIN_MS,
          )
          const statuses = Object.entries(answers)
            .map(([s, n]) => `${s}: ${n}`)
            .join(', ')
          console.log(
            `[failover] requests in flight at the kill: ${inFlightAtKill}; ` +
              `kill to promotion ${promotedAt - killedAt} ms; both APIs answered a write again ` +
              `${answerAgainMs} ms after the promotion (${Math.max(...answeredAgainAt) - killedAt} ms after the kill; ` +
              `bound ${ANSWER_AGAIN_WITHIN_MS} ms); acknowledged transactions ${beforeKill} before the kill, ` +
              `${acknowledged.size} in all, all on the promoted standby; every send final ${sendsDoneMs} ms after the kill ` +
              `(claim lease ${CLAIM_LEASE_MS} ms), ${sendsChecked} checked once each on their networks; ` +
              `answers ${statuses}; set-up ${setupMs} ms, whole case ${Date.now() - started} ms`,
          )
          await finishCase('failover', db, {
            ops: acknowledged.size,
            detail: 'across a primary killed and a standby promoted',
          })
        } finally {
          await db.close()
        }
      },
    )
  },
)
