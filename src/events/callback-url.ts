import { isIP } from 'node:net'

import { assert } from '../shared/assert.js'

/**
 * What a network address is, as far as webhook delivery cares (SSRF protection):
 * - `public`: an ordinary internet address; always allowed.
 * - `loopback`: this machine (127.0.0.0/8, ::1); allowed only in the sandbox (`ALLOW_HTTP_WEBHOOKS`).
 * - `private`: private, shared, link-local, benchmarking, documentation and other non-public ranges;
 *   allowed only when the operator opts in (`allowPrivate`), for receivers on an internal network.
 * - `forbidden`: never a webhook receiver whatever the configuration: "this network" (0.0.0.0/8, ::),
 *   multicast, reserved and broadcast space, and the cloud instance-metadata endpoints, which hand
 *   out credentials to whoever asks from inside the instance.
 */
export type AddressClass = 'public' | 'loopback' | 'private' | 'forbidden'

/** The longest callback URL accepted at registration. */
export const CALLBACK_URL_LENGTH_MAX = 2048

/** Why a callback URL was refused; `issue` in the result says it for a person. */
export type CallbackUrlIssueCode =
  | 'too_long'
  | 'invalid_url'
  | 'unsupported_scheme'
  | 'https_required'
  | 'credentials_not_allowed'
  | 'blocked_address'
  | 'blocked_host'

export type CallbackUrlCheck =
  { ok: true; url: URL } | { ok: false; code: CallbackUrlIssueCode; issue: string }

export interface CallbackUrlOptions {
  /** `ALLOW_HTTP_WEBHOOKS`: permits `http://` and loopback hosts (localhost, 127.0.0.0/8, ::1). */
  allowHttp: boolean
  /** Permits hosts in private ranges and private-use names (internal receivers). */
  allowPrivate: boolean
}

/** Host names that reach a cloud provider's instance-metadata service from inside an instance. */
const METADATA_HOSTNAMES = new Set([
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'instance-data',
  'instance-data.ec2.internal',
  'metadata.azure.internal',
])

/** Name suffixes reserved for private use; such names only resolve inside some organisation's network. */
const PRIVATE_NAME_SUFFIXES = [
  '.local',
  '.localdomain',
  '.internal',
  '.intranet',
  '.home.arpa',
  '.corp',
  '.lan',
]

const ISSUES: Record<CallbackUrlIssueCode, string> = {
  too_long: `must be at most ${CALLBACK_URL_LENGTH_MAX} characters`,
  invalid_url: 'must be an absolute URL',
  unsupported_scheme: 'must use https',
  https_required: 'must use https (http is accepted only for a loopback host in the sandbox)',
  credentials_not_allowed: 'must not contain a user name or password',
  blocked_address: 'must not point at a private, loopback, link-local, reserved or metadata address',
  blocked_host: 'must not name a local, private-use or cloud metadata host',
}

function refuse(code: CallbackUrlIssueCode): CallbackUrlCheck {
  return { ok: false, code, issue: ISSUES[code] }
}

/**
 * Checks a webhook callback URL at registration (contract section 7). The WHATWG parser has
 * already turned odd IPv4 spellings (`0x7f.1`, `2130706433`) into dotted quads, so the address
 * checks below see the address the URL really names. This is the first of two gates: delivery
 * checks the resolved addresses again, because a public name can point anywhere at send time.
 */
export function checkCallbackUrl(url: string, opts: CallbackUrlOptions): CallbackUrlCheck {
  if (url.length > CALLBACK_URL_LENGTH_MAX) return refuse('too_long')
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return refuse('invalid_url')
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return refuse('unsupported_scheme')
  if (parsed.username !== '' || parsed.password !== '') return refuse('credentials_not_allowed')

  const host = hostOf(parsed)
  if (host === '') return refuse('invalid_url')
  const ipVersion = isIP(host)
  const isLoopbackHost = ipVersion !== 0 ? classifyAddress(host) === 'loopback' : isLoopbackName(host)
  if (parsed.protocol === 'http:' && !(opts.allowHttp && isLoopbackHost)) return refuse('https_required')

  if (ipVersion !== 0) {
    const addressClass = classifyAddress(host)
    if (!isClassAllowed(addressClass, { allowLoopback: opts.allowHttp, allowPrivate: opts.allowPrivate })) {
      return refuse('blocked_address')
    }
    return { ok: true, url: parsed }
  }

  if (METADATA_HOSTNAMES.has(host)) return refuse('blocked_host')
  if (isLoopbackName(host)) return opts.allowHttp ? { ok: true, url: parsed } : refuse('blocked_host')
  // A name without a dot is completed by the resolver's search domains, so it reaches internal hosts.
  const isPrivateName = !host.includes('.') || PRIVATE_NAME_SUFFIXES.some((suffix) => host.endsWith(suffix))
  if (isPrivateName && !opts.allowPrivate) return refuse('blocked_host')
  return { ok: true, url: parsed }
}

/** The URL's host in lower case, without IPv6 brackets or the trailing dot of a fully qualified name. */
function hostOf(url: URL): string {
  let host = url.hostname.toLowerCase()
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1)
  while (host.endsWith('.')) host = host.slice(0, -1)
  return host
}

function isLoopbackName(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost')
}

/** Whether an address of this class may be contacted under the given switches. */
export function isClassAllowed(
  addressClass: AddressClass,
  opts: { allowLoopback: boolean; allowPrivate: boolean },
): boolean {
  switch (addressClass) {
    case 'public':
      return true
    case 'loopback':
      return opts.allowLoopback
    case 'private':
      return opts.allowPrivate
    case 'forbidden':
      return false
  }
}

/**
 * True unless `ip` is an ordinary public address. Handles IPv4, IPv6, IPv4-mapped IPv6
 * (`::ffff:10.0.0.1`), NAT64 (`64:ff9b::/96`) and 6to4 (`2002::/16`) embeddings and IPv6 zone ids.
 * Anything that does not parse as an address counts as blocked: this check fails closed.
 */
export function isBlockedAddress(ip: string): boolean {
  return classifyAddress(ip) !== 'public'
}

/** True when `ip` is this machine's loopback (127.0.0.0/8, ::1, or an IPv4-mapped loopback). */
export function isLoopbackAddress(ip: string): boolean {
  return classifyAddress(ip) === 'loopback'
}

/** Sorts an address into the classes of {@link AddressClass}; unparseable input is `forbidden`. */
export function classifyAddress(ip: string): AddressClass {
  const text = ip.trim()
  const v4 = parseIpv4(text)
  if (v4 !== null) return classifyIpv4(v4)
  const v6 = parseIpv6(text)
  if (v6 !== null) return classifyIpv6(v6)
  return 'forbidden'
}

/** An IPv4 range as the first address and the prefix length. */
type Ipv4Range = readonly [number, number, AddressClass]

// Order matters: the first matching range wins, so the single metadata addresses come before the
// wider ranges that contain them.
const IPV4_RANGES: readonly Ipv4Range[] = [
  [ipv4('169.254.169.254'), 32, 'forbidden'], // AWS, GCP, Azure, OCI, DigitalOcean instance metadata
  [ipv4('169.254.170.2'), 32, 'forbidden'], // AWS ECS task metadata and credentials
  [ipv4('100.100.100.200'), 32, 'forbidden'], // Alibaba Cloud instance metadata
  [ipv4('0.0.0.0'), 8, 'forbidden'], // "this network"; 0.0.0.0 reaches the local host on Linux
  [ipv4('10.0.0.0'), 8, 'private'],
  [ipv4('100.64.0.0'), 10, 'private'], // carrier-grade NAT shared space
  [ipv4('127.0.0.0'), 8, 'loopback'],
  [ipv4('169.254.0.0'), 16, 'private'], // link-local
  [ipv4('172.16.0.0'), 12, 'private'],
  [ipv4('192.0.0.0'), 24, 'private'], // IETF protocol assignments
  [ipv4('192.0.2.0'), 24, 'private'], // documentation (TEST-NET-1)
  [ipv4('192.88.99.0'), 24, 'private'], // former 6to4 relay anycast
  [ipv4('192.168.0.0'), 16, 'private'],
  [ipv4('198.18.0.0'), 15, 'private'], // benchmarking
  [ipv4('198.51.100.0'), 24, 'private'], // documentation (TEST-NET-2)
  [ipv4('203.0.113.0'), 24, 'private'], // documentation (TEST-NET-3)
  [ipv4('224.0.0.0'), 3, 'forbidden'], // multicast 224/4, reserved 240/4 and broadcast
]

function classifyIpv4(address: number): AddressClass {
  for (const [start, prefix, addressClass] of IPV4_RANGES) {
    if (inIpv4Range(address, start, prefix)) return addressClass
  }
  return 'public'
}

function inIpv4Range(address: number, start: number, prefix: number): boolean {
  // Shifting by 32 is a no-op in JavaScript, so the whole-space prefix needs its own case.
  if (prefix === 0) return true
  const shift = 32 - prefix
  return address >>> shift === start >>> shift
}

function classifyIpv6(bytes: Uint8Array): AddressClass {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const [w0, w1, w2, w3, w4, w5, w6, w7] = Array.from({ length: 8 }, (_, i) => view.getUint16(i * 2)) as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ]
  const low32 = view.getUint32(12)
  const firstFiveZero = w0 === 0 && w1 === 0 && w2 === 0 && w3 === 0 && w4 === 0

  // The IANA IPv6 Special-Purpose Address Registry, every entry not globally reachable, plus the
  // embeddings of IPv4 whose real destination is the embedded address. Checked in this order.
  if (firstFiveZero && w5 === 0 && w6 === 0 && w7 === 0) return 'forbidden' // ::
  if (firstFiveZero && w5 === 0 && w6 === 0 && w7 === 1) return 'loopback' // ::1
  // IPv4-mapped (::ffff:a.b.c.d): the socket layer talks IPv4 to the embedded address, so that
  // address is what is judged.
  if (firstFiveZero && w5 === 0xffff) return classifyIpv4(low32)
  // IPv4-translated (::ffff:0:a.b.c.d, SIIT): only meaningful behind a translator of someone's own
  // network, never a destination on the internet.
  if (w0 === 0 && w1 === 0 && w2 === 0 && w3 === 0 && w4 === 0xffff && w5 === 0) return 'forbidden'
  // IPv4-compatible (::a.b.c.d) is deprecated and never a legitimate destination.
  if (firstFiveZero && w5 === 0) return 'forbidden'
  // NAT64 well-known prefix: the translator forwards to the embedded IPv4 address, but a
  // translated loopback would be the translator's, not ours, so it is never allowed.
  if (w0 === 0x64 && w1 === 0xff9b && w2 === 0 && w3 === 0 && w4 === 0 && w5 === 0) {
    return embeddedClass(classifyIpv4(low32))
  }
  if (w0 === 0x64 && w1 === 0xff9b && w2 === 1) return 'private' // local-use NAT64 (64:ff9b:1::/48)
  if (w0 === 0x2002) return embeddedClass(classifyIpv4(((w1 << 16) | w2) >>> 0)) // 6to4
  if (w0 === 0x0100 && w1 === 0 && w2 === 0 && (w3 === 0 || w3 === 1)) return 'forbidden' // discard-only 100::/64, dummy 100:0:0:1::/64
  // IETF protocol assignments 2001::/23: Teredo 2001::/32 (tunnels to hidden IPv4 hosts),
  // benchmarking 2001:2::/48, ORCHID 2001:10::/28 and ORCHIDv2 2001:20::/28 (identifiers, not
  // routable), and the anycast services and AS112 sinks beside them, none of them a receiver.
  if (w0 === 0x2001 && w1 < 0x0200) return 'private'
  if (w0 === 0x2001 && w1 === 0x0db8) return 'private' // documentation 2001:db8::/32
  if (w0 === 0x3fff && w1 < 0x1000) return 'private' // documentation 3fff::/20
  if (w0 === 0x5f00) return 'private' // segment routing (SRv6) SIDs 5f00::/16
  if (w0 === 0xfd00 && w1 === 0x0ec2 && w2 === 0 && w3 === 0 && w4 === 0 && w5 === 0 && w6 === 0) {
    if (w7 === 0x254) return 'forbidden' // AWS instance metadata over IPv6 (fd00:ec2::254)
  }
  if ((w0 & 0xfe00) === 0xfc00) return 'private' // unique local fc00::/7
  if ((w0 & 0xffc0) === 0xfe80) return 'private' // link-local fe80::/10
  if ((w0 & 0xffc0) === 0xfec0) return 'private' // deprecated site-local fec0::/10
  if ((w0 & 0xff00) === 0xff00) return 'forbidden' // multicast ff00::/8
  // Everything else outside global unicast 2000::/3 is reserved by the IETF (IANA IPv6 Address
  // Space registry): no host there is reachable on the internet.
  if ((w0 & 0xe000) !== 0x2000) return 'forbidden'
  return 'public'
}

function embeddedClass(v4Class: AddressClass): AddressClass {
  return v4Class === 'loopback' ? 'forbidden' : v4Class
}

function ipv4(text: string): number {
  const value = parseIpv4(text)
  assert(value !== null, `bad IPv4 constant ${text}`)
  return value
}

/** Strict dotted-quad parser (four decimal octets, no leading zeros); returns the 32-bit value. */
function parseIpv4(text: string): number | null {
  const parts = text.split('.')
  if (parts.length !== 4) return null
  let value = 0
  for (const part of parts) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(part)) return null
    const octet = Number(part)
    if (octet > 255) return null
    value = value * 256 + octet
  }
  return value >>> 0
}

/** IPv6 text (with `::`, an optional trailing dotted quad and an optional `%zone`) to 16 bytes. */
function parseIpv6(text: string): Uint8Array | null {
  let rest = text
  if (rest.startsWith('[') && rest.endsWith(']')) rest = rest.slice(1, -1)
  const zoneAt = rest.indexOf('%')
  if (zoneAt !== -1) rest = rest.slice(0, zoneAt)
  if (isIP(rest) !== 6) return null

  const halves = rest.split('::')
  if (halves.length > 2) return null
  const toWords = (part: string): number[] | null => {
    if (part === '') return []
    const words: number[] = []
    for (const group of part.split(':')) {
      if (group.includes('.')) {
        const v4 = parseIpv4(group)
        if (v4 === null) return null
        words.push(v4 >>> 16, v4 & 0xffff)
      } else {
        if (!/^[0-9a-f]{1,4}$/i.test(group)) return null
        words.push(parseInt(group, 16))
      }
    }
    return words
  }
  const head = toWords(halves[0] ?? '')
  const tail = halves.length === 2 ? toWords(halves[1] ?? '') : []
  if (head === null || tail === null) return null
  const missing = 8 - head.length - tail.length
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null
  const words = [...head, ...new Array<number>(halves.length === 2 ? missing : 0).fill(0), ...tail]
  const bytes = new Uint8Array(16)
  words.forEach((w, i) => {
    bytes[i * 2] = w >>> 8
    bytes[i * 2 + 1] = w & 0xff
  })
  return bytes
}
