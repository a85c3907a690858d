import { createServer } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness } from '../../test/helpers/harness.js'
import { runDueAddresses } from './deposits.js'

/**
 * The deposit watcher against an Esplora server that is not there: each failed look at an address
 * puts the next one off by the on-chain rail's backoff (counted in the database), instead of asking
 * the absent node about every address at every lease.
 */
async function closedPort(): Promise<number> {
  const srv = createServer()
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve))
  const { port } = srv.address() as { port: number }
  await new Promise((resolve) => srv.close(resolve))
  return port
}

describe('the deposit watcher backs off from a node that does not answer', () => {
  let h: Harness
  beforeAll(async () => {
    h = await createHarness({
      ONCHAIN: 'esplora',
      ESPLORA_URL: `http://127.0.0.1:${await closedPort()}`,
      RAIL_ONCHAIN_RETRY_BASE_MS: '120000',
      RAIL_ONCHAIN_RETRY_MAX_MS: '480000',
    })
  }, 120_000)
  afterAll(async () => {
    await h?.close()
  })

  it('waits 120 s, 240 s, then 480 s (the cap), less jitter, counting each failure in the database', async () => {
    const a = await h.createAccount({ name: 'Static address owner' })
    const r = await h.api('GET', '/api/v2/account/onchain-address', a.token)
    expect(r.status).toBe(200)
    const address = r.body.staticOnchainAddress as string
    const row = async () =>
      (
        await h.c.db.query<{ next_check_at: string; rail_failures: number }>(
          'SELECT next_check_at::text, rail_failures FROM onchain_addresses WHERE address = $1',
          [address],
        )
      ).rows[0]!
    const log = { error: () => {}, warn: () => {} }
    let clock = Number((await row()).next_check_at)
    for (const [i, nominal] of [120_000, 240_000, 480_000, 480_000].entries()) {
      await runDueAddresses({ ...h.c.bitcoin, now: () => clock, log })
      const { next_check_at, rail_failures } = await row()
      expect(rail_failures).toBe(i + 1)
      const wait = Number(next_check_at) - clock
      // Never sooner than the one-minute lease, nor than half the nominal wait.
      expect(wait).toBeGreaterThanOrEqual(Math.max(60_000, nominal / 2))
      expect(wait).toBeLessThanOrEqual(nominal)
      clock = Number(next_check_at)
    }
  })
})
