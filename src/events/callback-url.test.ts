import { describe, expect, it } from 'vitest'

import {
  CALLBACK_URL_LENGTH_MAX,
  checkCallbackUrl,
  classifyAddress,
  isBlockedAddress,
  isLoopbackAddress,
  type AddressClass,
  type CallbackUrlIssueCode,
} from './callback-url.js'

describe('classifyAddress / isBlockedAddress', () => {
  const cases: Array<[string, AddressClass]> = [
    // Public IPv4 and the edges just outside blocked ranges.
    ['8.8.8.8', 'public'],
    ['1.1.1.1', 'public'],
    ['9.255.255.255', 'public'],
    ['11.0.0.0', 'public'],
    ['100.63.255.255', 'public'],
    ['100.128.0.0', 'public'],
    ['172.15.255.255', 'public'],
    ['172.32.0.0', 'public'],
    ['192.167.255.255', 'public'],
    ['192.169.0.0', 'public'],
    ['198.17.255.255', 'public'],
    ['198.20.0.0', 'public'],
    ['223.255.255.255', 'public'],
    // Blocked IPv4.
    ['0.0.0.0', 'forbidden'],
    ['0.1.2.3', 'forbidden'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['100.64.0.1', 'private'],
    ['100.127.255.255', 'private'],
    ['100.100.100.200', 'forbidden'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['169.254.0.1', 'private'],
    ['169.254.169.254', 'forbidden'],
    ['169.254.170.2', 'forbidden'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.0.0.8', 'private'],
    ['192.0.2.1', 'private'],
    ['192.168.1.1', 'private'],
    ['198.18.0.1', 'private'],
    ['198.19.255.255', 'private'],
    ['198.51.100.7', 'private'],
    ['203.0.113.9', 'private'],
    ['224.0.0.1', 'forbidden'],
    ['239.255.255.250', 'forbidden'],
    ['240.0.0.1', 'forbidden'],
    ['255.255.255.255', 'forbidden'],
    // IPv6.
    ['2606:4700:4700::1111', 'public'],
    ['2001:4860:4860::8888', 'public'],
    ['::', 'forbidden'],
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['fc00::1', 'private'],
    ['fd12:3456:789a::1', 'private'],
    ['fe80::1', 'private'],
    ['fe80::1%eth0', 'private'],
    ['febf::1', 'private'],
    ['fec0::1', 'private'],
    ['ff02::1', 'forbidden'],
    ['fd00:ec2::254', 'forbidden'],
    ['2001:db8::1', 'private'],
    ['100::1', 'forbidden'],
    // IPv4 embedded in IPv6.
    ['::ffff:8.8.8.8', 'public'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:a00:1', 'private'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:169.254.169.254', 'forbidden'],
    ['::ffff:a9fe:a9fe', 'forbidden'],
    ['0:0:0:0:0:ffff:c0a8:0101', 'private'],
    ['::10.0.0.1', 'forbidden'],
    ['64:ff9b::8.8.8.8', 'public'],
    ['64:ff9b::10.0.0.1', 'private'],
    ['64:ff9b::a9fe:a9fe', 'forbidden'],
    ['64:ff9b::127.0.0.1', 'forbidden'],
    ['64:ff9b:1::1', 'private'],
    ['2002:0808:0808::1', 'public'],
    ['2002:c0a8:0101::1', 'private'],
    ['2002:7f00:0001::1', 'forbidden'],
    // The IANA special-purpose registries (issue 16): every range not globally reachable.
    ['::ffff:0:8.8.8.8', 'forbidden'], // IPv4-translated (SIIT), even of a public address
    ['::ffff:0:10.0.0.1', 'forbidden'],
    ['::ffff:0:0a00:0001', 'forbidden'],
    ['2001:2::1', 'private'], // benchmarking 2001:2::/48
    ['2001:2:0:ffff::1', 'private'],
    ['2001:10::1', 'private'], // ORCHID 2001:10::/28
    ['2001:1f:ffff::1', 'private'],
    ['2001:20::1', 'private'], // ORCHIDv2 2001:20::/28
    ['2001:2f:ffff::1', 'private'],
    ['2001::1', 'private'], // Teredo 2001::/32
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'private'], // a Teredo address
    ['2001:1::1', 'private'], // anycast services in 2001::/23
    ['2001:3::1', 'private'], // AMT
    ['2001:4:112::1', 'private'], // AS112-v6
    ['2001:1ff:ffff::1', 'private'], // the top of 2001::/23
    ['2001:200::1', 'public'], // just past 2001::/23: WIDE's allocation
    ['3fff::1', 'private'], // documentation 3fff::/20
    ['3fff:fff:ffff::1', 'private'],
    ['3fff:1000::1', 'public'], // just past 3fff::/20
    ['5f00::1', 'private'], // SRv6 SIDs 5f00::/16
    ['5f00:ffff::1', 'private'],
    ['100:0:0:1::1', 'forbidden'], // dummy prefix 100:0:0:1::/64
    ['64:ff9b::192.168.1.1', 'private'], // NAT64 of a private address
    ['64:ff9b::100.64.0.1', 'private'], // NAT64 of shared address space
    ['64:ff9b::198.18.0.1', 'private'], // NAT64 of benchmarking space
    ['64:ff9b::0.0.0.1', 'forbidden'],
    ['64:ff9b::224.0.0.1', 'forbidden'],
    ['2002:0a00:0001::1', 'private'], // 6to4 of 10.0.0.1
    ['2002:a9fe:a9fe::1', 'forbidden'], // 6to4 of the metadata address
    ['2002:c000:0201::1', 'private'], // 6to4 of TEST-NET-1
    ['2002:6440:0001::1', 'private'], // 6to4 of shared address space
    ['::ffff:100.64.0.1', 'private'],
    ['::ffff:192.0.0.170', 'private'],
    ['::ffff:198.51.100.1', 'private'],
    ['::ffff:0.0.0.0', 'forbidden'],
    ['::ffff:255.255.255.255', 'forbidden'],
    // Outside global unicast 2000::/3 and not assigned: reserved by the IETF.
    ['4000::1', 'forbidden'],
    ['1000::1', 'forbidden'],
    ['e000::1', 'forbidden'],
    ['::2', 'forbidden'],
    ['0:0:1::1', 'forbidden'],
    // Not addresses at all: blocked, because the check fails closed.
    ['', 'forbidden'],
    ['example.com', 'forbidden'],
    ['256.1.1.1', 'forbidden'],
    ['1.2.3', 'forbidden'],
    ['010.0.0.1', 'forbidden'],
    ['1:2:3:4:5:6:7:8:9', 'forbidden'],
    ['1::2::3', 'forbidden'],
  ]

  it.each(cases)('%s is %s', (ip, expected) => {
    expect(classifyAddress(ip)).toBe(expected)
    expect(isBlockedAddress(ip)).toBe(expected !== 'public')
    expect(isLoopbackAddress(ip)).toBe(expected === 'loopback')
  })
})

describe('checkCallbackUrl', () => {
  const production = { allowHttp: false, allowPrivate: false }
  const sandbox = { allowHttp: true, allowPrivate: false }
  const internal = { allowHttp: false, allowPrivate: true }

  type Expectation = true | CallbackUrlIssueCode
  const cases: Array<[string, string, { allowHttp: boolean; allowPrivate: boolean }, Expectation]> = [
    ['public https', 'https://hooks.example.com/svcpay', production, true],
    ['https with port and query', 'https://hooks.example.com:8443/in?x=1', production, true],
    ['public IPv4 literal', 'https://8.8.8.8/hook', production, true],
    ['public IPv6 literal', 'https://[2606:4700:4700::1111]/hook', production, true],
    ['upper-case scheme and host', 'HTTPS://HOOKS.EXAMPLE.COM/', production, true],
    ['not a URL', 'hooks.example.com/path', production, 'invalid_url'],
    ['empty', '', production, 'invalid_url'],
    ['https without host', 'https://', production, 'invalid_url'],
    ['ftp scheme', 'ftp://hooks.example.com/', production, 'unsupported_scheme'],
    ['javascript scheme', 'javascript:alert(1)', production, 'unsupported_scheme'],
    ['file scheme', 'file:///etc/passwd', production, 'unsupported_scheme'],
    ['plain http to a public host', 'http://hooks.example.com/', production, 'https_required'],
    ['plain http to a public host in the sandbox', 'http://hooks.example.com/', sandbox, 'https_required'],
    ['plain http to localhost in production', 'http://localhost:3000/', production, 'https_required'],
    ['plain http to localhost in the sandbox', 'http://localhost:3000/hook', sandbox, true],
    ['plain http to 127.0.0.1 in the sandbox', 'http://127.0.0.1:3000/hook', sandbox, true],
    ['plain http to 127.8.9.10 in the sandbox', 'http://127.8.9.10/', sandbox, true],
    ['plain http to [::1] in the sandbox', 'http://[::1]:3000/', sandbox, true],
    [
      'plain http to a private host even when private is allowed',
      'http://10.0.0.5/',
      internal,
      'https_required',
    ],
    ['user and password', 'https://user:pass@hooks.example.com/', production, 'credentials_not_allowed'],
    ['user only', 'https://user@hooks.example.com/', production, 'credentials_not_allowed'],
    ['credentials in the sandbox too', 'http://u:p@localhost/', sandbox, 'credentials_not_allowed'],
    ['too long', `https://hooks.example.com/${'a'.repeat(CALLBACK_URL_LENGTH_MAX)}`, production, 'too_long'],
    ['loopback over https in production', 'https://127.0.0.1/', production, 'blocked_address'],
    ['loopback over https in the sandbox', 'https://127.0.0.1/', sandbox, true],
    ['loopback is not opened by allowPrivate', 'https://127.0.0.1/', internal, 'blocked_address'],
    ['localhost over https in production', 'https://localhost/', production, 'blocked_host'],
    ['a .localhost name in production', 'https://api.localhost/', production, 'blocked_host'],
    ['IPv6 loopback in production', 'https://[::1]/', production, 'blocked_address'],
    ['10/8', 'https://10.1.2.3/', production, 'blocked_address'],
    ['10/8 when private is allowed', 'https://10.1.2.3/', internal, true],
    ['172.16/12', 'https://172.20.0.1/', production, 'blocked_address'],
    ['192.168/16', 'https://192.168.0.10/', production, 'blocked_address'],
    ['100.64/10', 'https://100.64.1.1/', production, 'blocked_address'],
    ['198.18/15', 'https://198.19.0.1/', production, 'blocked_address'],
    ['192.0.0/24', 'https://192.0.0.1/', production, 'blocked_address'],
    ['link-local', 'https://169.254.10.10/', production, 'blocked_address'],
    ['cloud metadata', 'https://169.254.169.254/latest/meta-data/', production, 'blocked_address'],
    ['cloud metadata even when private is allowed', 'https://169.254.169.254/', internal, 'blocked_address'],
    ['cloud metadata in the sandbox', 'http://169.254.169.254/', sandbox, 'https_required'],
    ['0.0.0.0', 'https://0.0.0.0/', production, 'blocked_address'],
    ['0.0.0.0 when private is allowed', 'https://0.0.0.0/', internal, 'blocked_address'],
    ['multicast', 'https://224.0.0.1/', production, 'blocked_address'],
    ['broadcast', 'https://255.255.255.255/', production, 'blocked_address'],
    ['decimal-integer loopback', 'https://2130706433/', production, 'blocked_address'],
    ['hex loopback', 'https://0x7f.0.0.1/', production, 'blocked_address'],
    ['octal private', 'https://012.0.0.1/', production, 'blocked_address'],
    ['short-form private', 'https://10.1/', production, 'blocked_address'],
    ['IPv4-mapped private', 'https://[::ffff:10.0.0.1]/', production, 'blocked_address'],
    ['IPv4-mapped metadata', 'https://[::ffff:169.254.169.254]/', production, 'blocked_address'],
    ['IPv4-mapped loopback in production', 'https://[::ffff:127.0.0.1]/', production, 'blocked_address'],
    ['NAT64 metadata', 'https://[64:ff9b::169.254.169.254]/', production, 'blocked_address'],
    ['NAT64 public', 'https://[64:ff9b::8.8.8.8]/', production, true],
    ['unique local IPv6', 'https://[fd00::1]/', production, 'blocked_address'],
    ['link-local IPv6', 'https://[fe80::1]/', production, 'blocked_address'],
    // The IPv6 special-purpose ranges of issue 16, refused at registration.
    ['IPv4-translated', 'https://[::ffff:0:8.8.8.8]/', production, 'blocked_address'],
    [
      'IPv4-translated even when private is allowed',
      'https://[::ffff:0:10.0.0.1]/',
      internal,
      'blocked_address',
    ],
    ['benchmarking IPv6', 'https://[2001:2::1]/', production, 'blocked_address'],
    ['ORCHID', 'https://[2001:10::1]/', production, 'blocked_address'],
    ['ORCHIDv2', 'https://[2001:20::1]/', production, 'blocked_address'],
    ['Teredo', 'https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/', production, 'blocked_address'],
    ['documentation 3fff::/20', 'https://[3fff::1]/', production, 'blocked_address'],
    ['SRv6 SIDs', 'https://[5f00::1]/', production, 'blocked_address'],
    ['dummy IPv6 prefix', 'https://[100:0:0:1::1]/', production, 'blocked_address'],
    ['NAT64 of a private address', 'https://[64:ff9b::192.168.0.1]/', production, 'blocked_address'],
    ['6to4 of a private address', 'https://[2002:c0a8:0001::1]/', production, 'blocked_address'],
    ['reserved IPv6 outside 2000::/3', 'https://[4000::1]/', production, 'blocked_address'],
    ['unspecified IPv6', 'https://[::]/', production, 'blocked_address'],
    ['GCP metadata name', 'https://metadata.google.internal/computeMetadata/v1/', production, 'blocked_host'],
    [
      'GCP metadata name with a trailing dot',
      'https://metadata.google.internal./',
      production,
      'blocked_host',
    ],
    ['GCP metadata name, upper case', 'https://METADATA.GOOGLE.INTERNAL/', production, 'blocked_host'],
    [
      'GCP metadata name even when private is allowed',
      'https://metadata.google.internal/',
      internal,
      'blocked_host',
    ],
    ['bare metadata name', 'https://metadata/', internal, 'blocked_host'],
    ['AWS metadata name', 'https://instance-data.ec2.internal/', production, 'blocked_host'],
    ['single-label name', 'https://intranet/hook', production, 'blocked_host'],
    ['single-label name when private is allowed', 'https://intranet/hook', internal, true],
    ['.internal name', 'https://billing.corp.internal/', production, 'blocked_host'],
    ['.local name', 'https://printer.local/', production, 'blocked_host'],
    ['.home.arpa name', 'https://nas.home.arpa/', production, 'blocked_host'],
    ['.internal name when private is allowed', 'https://billing.corp.internal/', internal, true],
    ['a public name that merely contains "internal"', 'https://internal.example.com/', production, true],
    ['a public name that merely starts with "metadata"', 'https://metadata.example.com/', production, true],
  ]

  it.each(cases)('%s', (_name, url, opts, expected) => {
    const result = checkCallbackUrl(url, opts)
    if (expected === true) {
      expect(result).toMatchObject({ ok: true })
      if (result.ok) expect(result.url).toBeInstanceOf(URL)
    } else {
      expect(result).toMatchObject({ ok: false, code: expected })
      if (!result.ok) expect(result.issue.length).toBeGreaterThan(0)
    }
  })

  it('accepts a URL of exactly the maximum length', () => {
    const prefix = 'https://hooks.example.com/'
    const url = `${prefix}${'a'.repeat(CALLBACK_URL_LENGTH_MAX - prefix.length)}`
    expect(url).toHaveLength(CALLBACK_URL_LENGTH_MAX)
    expect(checkCallbackUrl(url, production).ok).toBe(true)
  })

  it('returns the parsed URL', () => {
    const result = checkCallbackUrl('https://Hooks.Example.com:8443/a/b?c=d', production)
    expect(result.ok && result.url.href).toBe('https://hooks.example.com:8443/a/b?c=d')
  })
})
