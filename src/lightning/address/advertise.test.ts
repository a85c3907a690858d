import { describe, expect, it } from 'vitest'
import { parseLnAddress } from '../lnurl-pay.js'
import { decodeLnurl } from './lnurl-encoding.js'
import { metadataOf } from './lnurl.js'
import { addressJson } from './routes.js'

/**
 * The Lightning Address parser of the two JavaScript libraries wallets and shops use most:
 * `LN_ADDRESS_REGEX` of lnurl-pay (dolcalmi/lnurl-pay, src/utils.ts) and of Alby's
 * @getalby/lightning-tools (getAlby/js-lightning-tools, src/lnurl/LightningAddress.ts), the same
 * expression in both. Neither package is a dependency here, so the expression is written out; it
 * has no port, no `localhost` (no dot) and no bare IP literal (the TLD must be letters).
 */
const WALLET_LN_ADDRESS_RE =
  /^((?:[^<>()[\]\\.,;:\s@"]+(?:\.[^<>()[\]\\.,;:\s@"]+)*)|(?:".+"))@((?:\[[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\])|(?:(?:[a-zA-Z\-0-9]+\.)+[a-zA-Z]{2,}))$/

const at = 1_790_000_000_000
const claimed = {
  username: 'alice.shop',
  accountId: 'acc_1',
  creditCcy: 'BTC',
  createdAtMs: at,
  updatedAtMs: at,
}
const config = (publicBaseUrl: string) => ({ publicBaseUrl, invoicePageUrl: `${publicBaseUrl}/pay` })

/** Issue 29.8: LUD-16 has no port; an address is advertised only where a wallet can use it. */
describe('which Lightning Address the service advertises (issue 29.8)', () => {
  const advertised: [string, string][] = [
    ['https://pay.example.com', 'alice.shop@pay.example.com'],
    ['https://Pay.Example.COM/', 'alice.shop@pay.example.com'],
    // 443 is https's own port: the URL has no port.
    ['https://pay.example.com:443', 'alice.shop@pay.example.com'],
    ['https://xn--bcher-kva.example', 'alice.shop@xn--bcher-kva.example'],
    // LUD-16: an onion domain is asked over http.
    [
      'http://2gzyxa5ihm7nsggfxnu52rck2vv4rvmdlkiu3zzui5du4xyclen53wid.onion',
      'alice.shop@2gzyxa5ihm7nsggfxnu52rck2vv4rvmdlkiu3zzui5du4xyclen53wid.onion',
    ],
  ]
  const withheld = [
    'http://localhost:8080', // the default: a port, plain http, no dot
    'https://localhost', // no dot: no wallet resolves it as a domain
    'https://pay.example.com:8443', // a port: LUD-16 has none
    'http://pay.example.com', // clearnet http: wallets ask https://
    'https://127.0.0.1', // an IP literal: the TLD must be letters
    'https://[::1]',
    'https://pay.example.com/svcpay', // wallets ask https://host/.well-known/…, not under a path
    'https://pay.example.c0m',
  ]

  it.each(advertised)(
    '%s advertises %s, which the wallet libraries and our own send accept',
    (base, address) => {
      const json = addressJson(config(base), claimed)
      expect(json.address).toBe(address)
      expect(WALLET_LN_ADDRESS_RE.test(address)).toBe(true)
      expect(parseLnAddress(address)).toMatchObject({ kind: 'address', lnAddress: address })
      // LUD-16: the metadata names the address it is paid at.
      expect(JSON.parse(metadataOf(config(base), claimed.username))).toContainEqual([
        'text/identifier',
        address,
      ])
    },
  )

  it.each(withheld)(
    '%s advertises no address, only the LNURL, and the metadata has no identifier',
    (base) => {
      const json = addressJson(config(base), claimed)
      expect(json.address).toBeNull()
      expect(decodeLnurl(json.lnurl)).toBe(`${base}/.well-known/lnurlp/alice.shop`)
      const pairs = JSON.parse(metadataOf(config(base), claimed.username)) as [string, string][]
      expect(pairs.filter(([mime]) => mime === 'text/plain')).toHaveLength(1)
      expect(pairs.map(([mime]) => mime)).not.toContain('text/identifier')
    },
  )

  it('user@host:port, localhost and IP literals are what the wallet libraries refuse', () => {
    for (const host of ['localhost:8080', 'localhost', 'pay.example.com:8443', '127.0.0.1'])
      expect(WALLET_LN_ADDRESS_RE.test(`alice.shop@${host}`), host).toBe(false)
  })
})
