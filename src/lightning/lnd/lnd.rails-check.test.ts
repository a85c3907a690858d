/**
 * The rails check (`GET /admin/rails`, `svcpay rails check`) with the Lightning rail on the LND
 * stand-in: ready against a good node, a problem against a node on another network and with a
 * macaroon that lacks a permission the rail needs.
 */
import { afterAll, describe, expect, it } from 'vitest'

import { createHarness, type Harness } from '../../../test/helpers/harness.js'
import { startLndStandIn, type LndStandIn } from '../../../test/standins/lnd.js'
import { checkRails, formatRailsCheck } from '../../rails/check.js'
import { createLndRail } from './lnd.js'

describe('rails check: the LND rail', () => {
  const open: Array<Harness | LndStandIn> = []
  afterAll(async () => {
    for (const x of open.splice(0).reverse()) await x.close()
  })

  it('a service configured for a good node reports the Lightning rail ready', async () => {
    const good = await startLndStandIn()
    open.push(good)
    const h = await createHarness({
      LIGHTNING: 'lnd',
      LND_REST_URL: good.url,
      LND_MACAROON_HEX: good.macaroonHex,
      LND_TLS_CERT_PATH: good.certPath,
    })
    open.push(h)
    // What GET /admin/rails answers and `svcpay rails check` prints.
    const result = await h.c.checkRails()
    const entry = result.rails.find((r) => r.rail === 'lightning')!
    expect(entry).toMatchObject({ adapter: 'lnd', verdict: 'ok', problems: [] })
    expect(entry.report).toMatchObject({ network: 'regtest', synced: true, balances: { BTC: '0.005' } })
  }, 60_000)

  it('another network, and a macaroon without offchain:write, are problems', async () => {
    const testnet = await startLndStandIn({ network: 'testnet' })
    open.push(testnet)
    const rail = (node: LndStandIn, macaroonHex = node.macaroonHex) =>
      createLndRail({ url: node.url, macaroonHex, tlsCertPem: node.certPem, network: 'regtest' })
    const wrongNet = await checkRails([{ rail: 'lightning', adapter: 'lnd', impl: rail(testnet) }], 5_000)
    expect(wrongNet.ok).toBe(false)
    expect(wrongNet.rails[0]).toMatchObject({
      verdict: 'problem',
      problems: ['LND is on testnet, the service is configured for regtest'],
    })
    // What the operator reads from `svcpay rails check` (which then exits 1).
    const printed = formatRailsCheck(wrongNet)
    expect(printed).toMatch(
      /^lightning\s+lnd\s+problem\s+0\.21\.2-beta commit=v0\.21\.2-beta\s+testnet\s+yes\s+0\.005 BTC$/m,
    )
    expect(printed).toContain('  lightning: LND is on testnet, the service is configured for regtest')
    expect(printed).toContain('NOT READY')
    const regtest = await startLndStandIn()
    open.push(regtest)
    const noSend = await checkRails(
      [
        {
          rail: 'lightning',
          adapter: 'lnd',
          impl: rail(
            regtest,
            regtest.bake(['info:read', 'offchain:read', 'invoices:read', 'invoices:write', 'macaroon:read']),
          ),
        },
      ],
      5_000,
    )
    expect(noSend.rails[0]).toMatchObject({
      verdict: 'problem',
      problems: ['the macaroon lacks offchain:write'],
    })
  })
})
