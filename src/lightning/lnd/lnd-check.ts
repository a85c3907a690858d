/**
 * `svcpay rails check` for the LND rail: the node's version, network and sync, the macaroon's
 * permissions (asked of LND, or probed with calls that change nothing), and the channel balance.
 */
import type { Network } from '../../config/network.js'
import type { RailCheckReport } from '../../rails/rail.js'
import type { LndDeps } from './lnd-deps.js'
import { classifyLndError, GRPC, type LndAnswer, type LndCall } from './lnd-http.js'

/** The permissions the rail uses, by LND's entity:action names (rpcserver.go MainRPCServerPermissions, routerrpc and invoicesrpc permission maps). */
export const LND_PERMISSIONS_NEEDED = [
  'info:read',
  'offchain:read',
  'offchain:write',
  'invoices:read',
  'invoices:write',
] as const

/** LND's `chains[].network` names for our networks (chainreg, lncfg). */
const LND_NETWORK: Record<Network, string[]> = {
  mainnet: ['mainnet'],
  testnet: ['testnet', 'testnet4'],
  signet: ['signet'],
  regtest: ['regtest'],
}

export async function checkLnd(deps: LndDeps): Promise<RailCheckReport> {
  const { call, options } = deps
  const report: RailCheckReport = { rail: 'lightning', adapter: 'lnd', reachable: false, problems: [] }
  const { problems } = report
  let info: LndAnswer
  try {
    info = await call('GET', '/v1/getinfo')
  } catch (err) {
    problems.push(`LND at ${deps.baseUrl} did not answer: ${(err as Error).message}`)
    return report
  }
  report.reachable = true
  if ('error' in info) problems.push(`GET /v1/getinfo was refused: ${info.error.message}`)
  else readNodeInfo(report, info.ok, options.network)
  // Permissions: CheckMacaroonPermissions (rpcserver.go; needs macaroon:read) checks each one
  // the rail uses; it answers InvalidArgument for one the macaroon lacks.
  const granted: string[] = []
  let checked = true
  for (const perm of LND_PERMISSIONS_NEEDED) {
    const [entity, action] = perm.split(':') as [string, string]
    let res: LndAnswer
    try {
      res = await call('POST', '/v1/macaroon/checkpermissions', {
        macaroon: Buffer.from(options.macaroonHex, 'hex').toString('base64'),
        permissions: [{ entity, action }],
      })
    } catch (err) {
      problems.push(`checking the macaroon failed: ${(err as Error).message}`)
      checked = false
      break
    }
    if (!('error' in res)) {
      if (res.ok.valid === true) granted.push(perm)
      else problems.push(`the macaroon lacks ${perm}`)
      continue
    }
    if (res.error.code === GRPC.invalidArgument || res.error.status === 400) {
      problems.push(`the macaroon lacks ${perm}`)
      continue
    }
    // The macaroon may not carry macaroon:read itself: then ask harmless calls instead.
    checked = false
    break
  }
  if (!checked) {
    granted.length = 0
    problems.splice(0, problems.length, ...problems.filter((p) => !p.startsWith('the macaroon lacks')))
    for (const [perm, ok] of await probePermissions(call)) {
      if (ok === true) granted.push(perm)
      else if (ok === false) problems.push(`the macaroon lacks ${perm}`)
      else problems.push(`could not tell whether the macaroon has ${perm}`)
    }
  }
  report.permissions = granted
  if (granted.includes('offchain:read')) {
    const balance = await call('GET', '/v1/balance/channels').catch((err: Error) => ({
      error: { status: 0, code: undefined, message: err.message },
    }))
    if ('error' in balance) problems.push(`channel balance unavailable: ${balance.error.message}`)
    else {
      const local = asRecord(balance.ok.local_balance)
      const msat = intOrNull(local?.msat)
      if (msat !== null) report.balances = { BTC: formatMsatAsBtc(msat) }
      if (msat === 0n) problems.push('LND has no outbound channel balance: it cannot pay anything')
    }
  }
  return report
}

/** What GetInfo says about the node's version, network and sync, written into the report. */
export function readNodeInfo(report: RailCheckReport, i: Record<string, unknown>, configured: Network): void {
  const { problems } = report
  if (typeof i.version === 'string') report.version = i.version
  const chains = Array.isArray(i.chains) ? (i.chains as Array<Record<string, unknown>>) : []
  const bitcoin = chains.find((c) => c && c.chain === 'bitcoin') ?? chains[0]
  const network = typeof bitcoin?.network === 'string' ? bitcoin.network : undefined
  if (network) report.network = network
  if (!network) problems.push('LND did not say which network it is on')
  else if (!LND_NETWORK[configured].includes(network))
    problems.push(`LND is on ${network}, the service is configured for ${configured}`)
  if (bitcoin && bitcoin.chain !== 'bitcoin')
    problems.push(`LND runs on ${String(bitcoin.chain)}, not bitcoin`)
  report.synced = i.synced_to_chain === true
  if (!report.synced) problems.push('LND is not synced to the chain (synced_to_chain is false)')
  const major = /^(\d+)\.(\d+)/.exec(String(i.version ?? ''))
  if (major && Number(major[1]) === 0 && Number(major[2]) < 17)
    problems.push(`LND ${String(i.version)} is older than 0.17, the oldest version this rail supports`)
}

/**
 * Which permissions the macaroon has, from calls that change nothing: each either passes the
 * macaroon check and fails (or answers) as LND does for the request, or is refused with
 * "permission denied". Null where neither answer came.
 */
async function probePermissions(call: LndCall): Promise<Array<[string, boolean | null]>> {
  const zeroHash = '00'.repeat(32)
  const probes: Array<[string, () => Promise<LndAnswer>]> = [
    ['info:read', () => call('GET', '/v1/getinfo')],
    ['offchain:read', () => call('GET', '/v1/balance/channels')],
    // A time preference out of range is the first thing SendPaymentV2 refuses
    // (router_backend.go extractIntentFromSendRequest), before any payment exists.
    ['offchain:write', () => call('POST', '/v2/router/send', { time_pref: 2 }, true)],
    ['invoices:read', () => call('GET', `/v1/invoice/${zeroHash}`)],
    // Cancelling a hash no invoice has: "unable to locate invoice" when allowed.
    [
      'invoices:write',
      () => call('POST', '/v2/invoices/cancel', { payment_hash: Buffer.alloc(32).toString('base64') }),
    ],
  ]
  const out: Array<[string, boolean | null]> = []
  for (const [perm, probe] of probes) {
    try {
      out.push([perm, probeVerdict(await probe())])
    } catch {
      out.push([perm, null])
    }
  }
  return out
}

/** A probe's answer: the permission held (true), refused (false), or not told (null). */
export function probeVerdict(res: LndAnswer): boolean | null {
  if (!('error' in res)) return true
  const kind = classifyLndError(res.error)
  if (kind === 'unauthorized') return false
  if (kind === 'transient') return null
  return true
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined
}

function intOrNull(value: unknown): bigint | null {
  return typeof value === 'string' && /^\d{1,20}$/.test(value) ? BigInt(value) : null
}

/** Millisatoshis as exact BTC text (11 decimals at most, trailing zeros dropped). */
export function formatMsatAsBtc(msat: bigint): string {
  const whole = msat / 100_000_000_000n
  const frac = (msat % 100_000_000_000n).toString().padStart(11, '0').replace(/0+$/, '')
  return frac ? `${whole}.${frac}` : `${whole}`
}
