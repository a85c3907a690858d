/**
 * The LND rail's settings as the service reads them (src/wiring/bitcoin-rails.ts): route hints on by default
 * and switchable, the request deadline, and clear errors for values that mean nothing.
 */
import { afterEach, describe, expect, it } from 'vitest'

import { ConfigError, type Config } from '../../config/config.js'
import type { Db } from '../../db/db.js'
import { startLndStandIn, type LndStandIn } from '../../../test/standins/lnd.js'
import { createRails } from '../../wiring/bitcoin-rails.js'
import type { BitcoinKeys } from '../../bitcoin/keys.js'

const nodes: LndStandIn[] = []
afterEach(async () => {
  for (const n of nodes.splice(0)) await n.close()
})

/** The rails for an LND node and an Esplora chain view (neither needs the database or keys). */
function railsFor(n: LndStandIn, env: Record<string, string>) {
  const config = {
    lightning: 'lnd',
    onchain: 'esplora',
    network: 'regtest',
    env: {
      LND_REST_URL: n.url,
      LND_MACAROON_HEX: n.macaroonHex,
      LND_TLS_CERT_PATH: n.certPath,
      ESPLORA_URL: 'http://127.0.0.1:9',
      ...env,
    },
  } as unknown as Config
  return createRails(config, undefined as unknown as Db, {} as BitcoinKeys)
}

describe('LND settings', () => {
  it('invoices carry route hints unless LND_INVOICE_ROUTE_HINTS=false', async () => {
    const n = await startLndStandIn()
    nodes.push(n)
    const withHints = await railsFor(n, {}).lightning.createInvoice({
      amountMsat: 1_000n,
      description: 'a',
      expirySeconds: 60,
    })
    const without = await railsFor(n, { LND_INVOICE_ROUTE_HINTS: 'false' }).lightning.createInvoice({
      amountMsat: 1_000n,
      description: 'b',
      expirySeconds: 60,
    })
    expect(n.invoices.get(withHints.paymentHash)!.private).toBe(true)
    expect(n.invoices.get(without.paymentHash)!.private).toBe(false)
  })

  it('LND_TIMEOUT_MS bounds each request; meaningless values are refused at start', async () => {
    const n = await startLndStandIn()
    nodes.push(n)
    n.fault('stall')
    const started = Date.now()
    const err = await railsFor(n, { LND_TIMEOUT_MS: '200' })
      .lightning.lookupInvoice('ab'.repeat(32))
      .catch((e: unknown) => e)
    expect(err).toMatchObject({ code: 'node_timeout', retryable: true })
    expect(Date.now() - started).toBeLessThan(2_000)
    expect(() => railsFor(n, { LND_INVOICE_ROUTE_HINTS: 'maybe' })).toThrow(ConfigError)
    expect(() => railsFor(n, { LND_TIMEOUT_MS: '0' })).toThrow(ConfigError)
    expect(() => railsFor(n, { LND_TIMEOUT_MS: 'soon' })).toThrow(ConfigError)
  })
})
