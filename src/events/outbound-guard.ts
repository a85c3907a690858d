import { lookup as dnsLookup } from 'node:dns/promises'
import { isIP, type LookupFunction } from 'node:net'

import { assert } from '../shared/assert.js'
import { classifyAddress, isClassAllowed } from './callback-url.js'

/**
 * The SSRF guard of every outbound call to a host a customer names: webhook delivery
 * (http-deliver.ts) and the Lightning Address / LNURL client (src/lightning/lnurl-client.ts).
 * The host is resolved once, every address it resolves to must be allowed (a name that mixes a
 * public and a private address is refused as a whole), and the socket is then pinned to the
 * address that was checked, so a name that changes its answer between check and connect (DNS
 * rebinding) cannot redirect the request.
 */

/** One address a host name resolved to. */
export interface ResolvedAddress {
  address: string
  family: 4 | 6
}

/** Resolves a host name to every address it has; rejects when it cannot. */
export type ResolveHost = (hostname: string) => Promise<ResolvedAddress[]>

/** Which non-public classes of address a caller may reach (see `AddressClass`). */
export interface AddressPolicy {
  allowLoopback: boolean
  allowPrivate: boolean
}

export async function systemResolve(hostname: string): Promise<ResolvedAddress[]> {
  // `verbatim` keeps the resolver's own order, so the first address is the one it prefers.
  const answers = await dnsLookup(hostname, { all: true, verbatim: true })
  return answers.map((answer) => ({ address: answer.address, family: answer.family === 6 ? 6 : 4 }))
}

/** Resolves `host` (or takes an IP literal as it is), giving up when the time-out passes first. */
export async function resolveWithin(
  host: string,
  resolve: ResolveHost,
  timeoutMs: number,
): Promise<ResolvedAddress[] | 'timeout' | 'dns_failure'> {
  const literalFamily = isIP(host)
  if (literalFamily === 4 || literalFamily === 6) return [{ address: host, family: literalFamily }]
  let timer: NodeJS.Timeout | undefined
  const expiry = new Promise<'timeout'>((done) => {
    timer = setTimeout(() => done('timeout'), timeoutMs)
  })
  const answer = resolve(host).then(
    (addresses) => (addresses.length === 0 ? ('dns_failure' as const) : addresses),
    () => 'dns_failure' as const,
  )
  try {
    return await Promise.race([answer, expiry])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * The one address of `host` a request may connect to: resolved within `timeoutMs`, and refused
 * (`blocked_address`) when any address the name has falls outside `policy`.
 */
export async function resolveAllowed(
  host: string,
  opts: { lookup?: ResolveHost | undefined; timeoutMs: number; policy: AddressPolicy },
): Promise<ResolvedAddress | 'timeout' | 'dns_failure' | 'blocked_address'> {
  const resolved = await resolveWithin(host, opts.lookup ?? systemResolve, opts.timeoutMs)
  if (resolved === 'timeout' || resolved === 'dns_failure') return resolved
  if (resolved.some((entry) => !isPeerAllowed(entry.address, opts.policy))) return 'blocked_address'
  const [chosen] = resolved
  assert(chosen !== undefined, 'resolution returned no address')
  return chosen
}

/** Whether a connected peer's address (or a resolved one) falls inside `policy`. */
export function isPeerAllowed(address: string | undefined, policy: AddressPolicy): boolean {
  return isClassAllowed(address === undefined ? 'forbidden' : classifyAddress(address), policy)
}

/**
 * A lookup for the socket layer that can only ever answer with the address that was checked;
 * `all` is asked for when Node tries several address families.
 */
export function pinnedLookup(chosen: ResolvedAddress): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all === true) callback(null, [{ address: chosen.address, family: chosen.family }])
    else callback(null, chosen.address, chosen.family)
  }
}
