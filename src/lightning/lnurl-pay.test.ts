import { describe, expect, it } from 'vitest'
import { bech32 } from '@scure/base'
import {
  callbackWith,
  checkAgainstPayRequest,
  COMMENT_CHARS_MAX,
  refusedByPayee,
  parseLnAddress,
  parseComment,
  parseLnurl,
  parsePayRequest,
  payDestination,
  type PayRequest,
} from './lnurl-pay.js'

/** LUD-01's own example: the encoded link and the URL it holds. */
const LUD01_LNURL =
  'LNURL1DP68GURN8GHJ7UM9WFMXJCM99E3K7MF0V9CXJ0M385EKVCENXC6R2C35XVUKXEFCV5MKVV34X5EKZD3EV56NYD3HXQURZEPEXEJXXEPNXSCRVWFNV9NXZCN9XQ6XYEFHVGCXXCMYXYMNSERXFQ5FNS'
const LUD01_URL = 'https://service.com/api?q=3fc3645b439ce8e7f2553a69e5267081d96dcd340693afabe04be7b0ccd178df'

const issue = (v: object) => ('details' in v ? (v as { details: { issue: string }[] }).details[0]!.issue : '')
const code = (v: object) => ('code' in v ? (v as { code: string }).code : 'none')

describe('LNURL and Lightning Address parsing', () => {
  it('decodes the LUD-01 example in either case, with or without lightning:', () => {
    for (const text of [LUD01_LNURL, LUD01_LNURL.toLowerCase(), `lightning:${LUD01_LNURL}`]) {
      const dest = parseLnurl(text)
      expect(dest).toMatchObject({ kind: 'lnurl' })
      expect((dest as { url: URL }).url.href).toBe(LUD01_URL)
    }
    const mixed = LUD01_LNURL.slice(0, 10) + LUD01_LNURL.slice(10).toLowerCase()
    expect(issue(parseLnurl(mixed))).toMatch(/^mixed case/)
    expect(issue(parseLnurl(LUD01_LNURL.slice(0, -1) + 'Q'))).toBe('not valid bech32')
  })

  it('reads LUD-17 lnurlp:// as https and refuses anything that is not https', () => {
    expect((parseLnurl('lnurlp://pay.example/u/1?x=2') as { url: URL }).url.href).toBe(
      'https://pay.example/u/1?x=2',
    )
    expect(issue(parseLnurl('https://pay.example/u'))).toMatch(/must start with lnurl1/)
    expect(code(parseLnurl(42))).toBe('lnurl_invalid')
  })

  it('maps a LUD-16 address to its well-known URL, lower-cased, within the charset', () => {
    const dest = parseLnAddress(' Satoshi.N+tips@Pay.Example ')
    expect(dest).toMatchObject({
      kind: 'address',
      lnAddress: 'satoshi.n+tips@pay.example',
      username: 'satoshi.n+tips',
    })
    expect((dest as { url: URL }).url.href).toBe('https://pay.example/.well-known/lnurlp/satoshi.n+tips')
    for (const bad of [
      'satoshi',
      '@pay.example',
      'sa/toshi@pay.example',
      'a@b@pay.example',
      'a@-pay.example',
      'a@pay.example:443',
      'a@pay.example/x',
    ]) {
      expect(code(parseLnAddress(bad))).toBe('ln_address_invalid')
    }
    expect(code(parseLnAddress(`${'a'.repeat(65)}@pay.example`))).toBe('ln_address_invalid')
  })

  it('takes a comment of printable text within our bound', () => {
    expect(parseComment(undefined)).toBeUndefined()
    expect(parseComment('Danke schön 🍜')).toBe('Danke schön 🍜')
    for (const bad of ['a\nb', 'a\u0000', 'x'.repeat(641), 7])
      expect(code(parseComment(bad) as object)).toBe('comment_not_accepted')
  })

  it('counts a comment in characters (code points, LUD-12) and refuses bidi controls (issue 28.12)', () => {
    const emoji = '🍜'.repeat(COMMENT_CHARS_MAX)
    expect(parseComment(emoji)).toBe(emoji)
    expect(code(parseComment(`${emoji}🍜`) as object)).toBe('comment_not_accepted')
    for (const bidi of ['abc\u202eexe.txt', 'a\u2066b\u2069', 'a\u2028b', 'lone \ud800'])
      expect(code(parseComment(bidi) as object), JSON.stringify(bidi)).toBe('comment_not_accepted')
  })

  it('refuses dot-segment names, which a URL resolves away from the address (issue 28.12)', () => {
    for (const bad of ['.@pay.example', '..@pay.example'])
      expect(code(parseLnAddress(bad)), bad).toBe('ln_address_invalid')
  })

  it("takes http only to this service's own host and port; LUD-17 onion links are http (issue 29.8)", () => {
    const enc = (url: string) => bech32.encode('lnurl', bech32.toWords(new TextEncoder().encode(url)), 2048)
    const ours = enc('http://localhost:8080/.well-known/lnurlp/bob')
    expect((parseLnurl(ours, 'localhost:8080') as { url: URL }).url.href).toBe(
      'http://localhost:8080/.well-known/lnurlp/bob',
    )
    expect(issue(parseLnurl(ours))).toBe('must lead to an https URL')
    expect(issue(parseLnurl(ours, 'localhost:9999'))).toBe('must lead to an https URL')
    expect(issue(parseLnurl(ours, 'localhost'))).toBe('must lead to an https URL')
    expect(payDestination({ lnurl: ours }, 'localhost:8080')).toMatchObject({ kind: 'lnurl' })
    const onion =
      'lnurlp://2gzyxa5ihm7nsggfxnu52rck2vv4rvmdlkiu3zzui5du4xyclen53wid.onion/.well-known/lnurlp/a'
    expect(issue(parseLnurl(onion))).toBe('must lead to an https URL')
    const host = '2gzyxa5ihm7nsggfxnu52rck2vv4rvmdlkiu3zzui5du4xyclen53wid.onion'
    expect((parseLnurl(onion, host) as { url: URL }).url.protocol).toBe('http:')
    // An address has no port (LUD-16): the refusal says what to pay instead.
    expect(issue(parseLnAddress('bob@localhost:8080'))).toMatch(/has no port .*LNURL/)
  })

  it('takes exactly one destination', () => {
    expect(payDestination({ paymentRequest: 'lnbc1' })).toEqual({ kind: 'invoice', paymentRequest: 'lnbc1' })
    expect(code(payDestination({ lnurl: LUD01_LNURL, lnAddress: 'a@b.example' }))).toBe(
      'destination_ambiguous',
    )
    expect(payDestination(undefined)).toEqual({ kind: 'invoice', paymentRequest: undefined })
  })
})

describe('the LUD-06 exchange', () => {
  const pay: PayRequest = {
    tag: 'payRequest',
    callback: 'https://pay.example/cb',
    minSendable: 1_000,
    maxSendable: 5_000,
    metadata: '[["text/plain","hi"]]',
    commentAllowed: 5,
  }

  it('checks the pay request field by field', () => {
    expect(parsePayRequest({ ...pay, extra: true })).toEqual(pay)
    expect(parsePayRequest({ ...pay, tag: 'withdrawRequest' })).toEqual({
      issue: expect.stringMatching(/not a payRequest/),
    })
    expect(parsePayRequest({ ...pay, minSendable: 6_000 })).toHaveProperty('issue')
    expect(parsePayRequest({ ...pay, maxSendable: '5000' })).toHaveProperty('issue')
    expect(parsePayRequest({ ...pay, minSendable: 1.5 })).toHaveProperty('issue')
    expect(parsePayRequest({ ...pay, metadata: '{"a":1}' })).toHaveProperty('issue')
    expect(parsePayRequest({ ...pay, commentAllowed: -1 })).toHaveProperty('issue')
    expect(parsePayRequest([pay])).toHaveProperty('issue')
  })

  it('keeps the amount within min and max sendable, and a comment within commentAllowed (LUD-12)', () => {
    expect(checkAgainstPayRequest(pay, 1_000n, 'hello')).toBeUndefined()
    expect(checkAgainstPayRequest(pay, 5_000n, undefined)).toBeUndefined()
    expect(code(checkAgainstPayRequest(pay, 999n, undefined)!)).toBe('lnurl_amount_out_of_range')
    expect(code(checkAgainstPayRequest(pay, 5_001n, undefined)!)).toBe('lnurl_amount_out_of_range')
    expect(issue(checkAgainstPayRequest(pay, 1_000n, 'hello!')!)).toMatch(/at most 5 characters/)
    // LUD-12 counts characters: five emoji are five, not ten UTF-16 units (issue 28.12).
    expect(checkAgainstPayRequest(pay, 1_000n, '☕🍜🍣🍺🎉')).toBeUndefined()
    expect(issue(checkAgainstPayRequest(pay, 1_000n, '☕🍜🍣🍺🎉🎉')!)).toMatch(/at most 5 characters/)
    const { commentAllowed: _, ...silent } = pay
    expect(issue(checkAgainstPayRequest(silent, 1_000n, 'x')!)).toBe('the payee accepts no comment')
  })

  it("appends amount and comment to the callback's own query", () => {
    expect(callbackWith('https://p.example/cb', 1_000n, undefined)).toBe('https://p.example/cb?amount=1000')
    expect(callbackWith('https://p.example/cb?k=1#top', 1_000n, 'a b&c')).toBe(
      'https://p.example/cb?k=1&amount=1000&comment=a%20b%26c',
    )
  })

  it('cleans the reason of an ERROR answer', () => {
    const reason = (json: unknown) =>
      refusedByPayee(json, 'f') ? issue(refusedByPayee(json, 'f')!) : undefined
    expect(reason({ status: 'ERROR', reason: 'No\u0000 <b>' + 'x'.repeat(300) })).toBe(
      `the payee's service refused: No  <b>${'x'.repeat(193)}`,
    )
    expect(reason({ status: 'ERROR' })).toBe("the payee's service refused: no reason given")
    expect(reason({ status: 'OK' })).toBeUndefined()
    expect(reason('ERROR')).toBeUndefined()
  })
})
