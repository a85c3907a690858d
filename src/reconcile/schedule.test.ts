import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness } from '../../test/helpers/harness.js'
import { startWorkers } from '../worker.js'
import { claimRun, reconcileIntervalMs, reconcileWindowMs } from './schedule.js'

describe('reconciliation on a schedule: RECONCILE_INTERVAL_S', () => {
  let h: Harness
  let other: Harness
  beforeAll(async () => {
    const env = {
      RAILS: 'sandbox',
      RECONCILE_INTERVAL_S: '1',
      RECONCILE_HALT_SENDS: 'true',
      RECONCILE_HALT_AFTER: '1',
    }
    h = await createHarness(env)
    // A second instance on the same database.
    other = await createHarness(env, { shareDbWith: h })
  })
  afterAll(async () => {
    await other?.close()
    await h?.close()
  })

  it('lets one claimer of many win a due run, and none before the next is due', async () => {
    const now = Date.now() + 10 * 86_400_000
    const claims = await Promise.all(
      Array.from({ length: 6 }, (_, i) => claimRun((i % 2 ? other : h).c.db, now, 60_000, 60_000)),
    )
    expect(claims.filter(Boolean)).toHaveLength(1)
    // The lease is released by the run; the next run is due a minute later, not before.
    await h.c.db.query('UPDATE reconcile_schedule SET lease_until = 0')
    expect(await claimRun(h.c.db, now + 59_000, 60_000, 60_000)).toBe(false)
    expect(await claimRun(h.c.db, now + 60_000, 60_000, 60_000)).toBe(true)
    // Put the schedule back to due-now for the next test.
    await h.c.db.query('UPDATE reconcile_schedule SET next_run_at = 0, lease_until = 0')
  })

  it('runs in the workers of two instances, one run at a time, and feeds the gauges and the brake', async () => {
    const before = Date.now()
    await h.api('POST', '/admin/sandbox/drift/move', h.adminToken, {
      rail: 'bank',
      direction: 'out',
      amount: '50000',
    })
    const workers = [startWorkers(h.c), startWorkers(other.c)]
    try {
      const deadline = Date.now() + 8_000
      for (;;) {
        const { rows } = await h.c.db.query<{ rail: string }>(
          'SELECT rail FROM reconcile_brake WHERE paused_at IS NOT NULL',
        )
        if (rows.length > 0) {
          expect(rows.map((r) => r.rail)).toEqual(['bank'])
          break
        }
        if (Date.now() > deadline) throw new Error('no scheduled reconciliation paused the bank rail')
        await new Promise((r) => setTimeout(r, 50))
      }
    } finally {
      await Promise.all(workers.map((w) => w.stop()))
    }
    const { rows } = await h.c.db.query<{ last_run_at: unknown; last_ok: boolean; lease_until: unknown }>(
      'SELECT last_run_at, last_ok, lease_until FROM reconcile_schedule',
    )
    expect(Number(rows[0]!.last_run_at)).toBeGreaterThanOrEqual(before)
    expect(rows[0]!.last_ok).toBe(false)
    expect(Number(rows[0]!.lease_until)).toBe(0)
    // Whichever instance ran it, the one that did shows the deficit in its gauge.
    const gauges = await Promise.all(
      [h, other].map(async (x) => (await x.app.inject({ method: 'GET', url: '/metrics' })).body),
    )
    expect(gauges.some((g) => g.includes('svcpay_reserve_delta{rail="bank",ccy="VND"} -50000'))).toBe(true)
  })

  it('checks its setting', () => {
    expect(reconcileIntervalMs({})).toBe(0)
    expect(reconcileIntervalMs({ RECONCILE_INTERVAL_S: '60' })).toBe(60_000)
    expect(() => reconcileIntervalMs({ RECONCILE_INTERVAL_S: '-1' })).toThrow(/RECONCILE_INTERVAL_S/)
    expect(() => reconcileIntervalMs({ RECONCILE_INTERVAL_S: '1.5' })).toThrow(/RECONCILE_INTERVAL_S/)
  })
})

describe('RECONCILE_WINDOW_S', () => {
  it('defaults to 7 days, takes whole seconds from 60 to 90 days, and refuses anything else', () => {
    expect(reconcileWindowMs({})).toBe(7 * 86_400_000)
    expect(reconcileWindowMs({ RECONCILE_WINDOW_S: '3600' })).toBe(3_600_000)
    expect(reconcileWindowMs({ RECONCILE_WINDOW_S: '7776000' })).toBe(7_776_000_000)
    for (const bad of ['59', '7776001', '1.5', 'week', '-1'])
      expect(() => reconcileWindowMs({ RECONCILE_WINDOW_S: bad })).toThrow(/RECONCILE_WINDOW_S/)
  })
})
