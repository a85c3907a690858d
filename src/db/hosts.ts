/**
 * Connection URLs with several hosts, as libpq reads them:
 * `postgres://user:pass@h1:5432,h2:5433/db?target_session_attrs=read-write`. node-postgres connects
 * to one host only, so the URL is split here into one single-host URL per host (in the order given)
 * and the session attribute the connection must have; src/db/db.ts tries the hosts in turn.
 *
 * What libpq does, and this follows (src/interfaces/libpq/fe-connect.c, PostgreSQL 17):
 * - hosts are comma-separated in the authority (`[::1]:5432` for IPv6), or given as the `host`
 *   parameter with a `port` parameter that is either one port for all or one per host;
 * - `target_session_attrs` is `any` (the default, also from PGTARGETSESSIONATTRS), `read-write`,
 *   `read-only`, `primary`, `standby` or `prefer-standby`; anything else is refused;
 * - read-write / read-only are decided by `SHOW transaction_read_only` (`on` = read-only), primary /
 *   standby by `SELECT pg_catalog.pg_is_in_recovery()` (CONNECTION_CHECK_WRITABLE and
 *   CONNECTION_CHECK_STANDBY); a host of the wrong kind is left and the next one tried;
 *   prefer-standby makes a second pass accepting any host (SERVER_TYPE_PREFER_STANDBY_PASS2).
 */

export type TargetSessionAttrs = 'any' | 'read-write' | 'read-only' | 'primary' | 'standby' | 'prefer-standby'

const TARGET_SESSION_ATTRS: readonly TargetSessionAttrs[] = [
  'any',
  'read-write',
  'read-only',
  'primary',
  'standby',
  'prefer-standby',
]

/** One host of the URL: where it is, and a URL node-postgres can use for it alone. */
export interface DbHost {
  host: string
  port: number
  /** The URL with this host only and without the parameters node-postgres does not know. */
  url: string
  /** `host:port`, for logs and errors (never the credentials). */
  label: string
}

export interface DbUrl {
  hosts: DbHost[]
  targetSessionAttrs: TargetSessionAttrs
  /** The database name (for messages). */
  database: string
}

/** Bounds: a URL is configuration, not input, but a typo must not make thousands of hosts. */
const HOSTS_MAX = 16
const DEFAULT_PORT = 5432

export class DbUrlError extends Error {
  override name = 'DbUrlError'
}

/** Parameters this module consumes; node-postgres is not handed them. */
const CONSUMED_PARAMS = new Set(['target_session_attrs', 'load_balance_hosts', 'host', 'port'])

export function parseDbUrl(url: string, env: NodeJS.ProcessEnv = process.env): DbUrl {
  const m = /^(postgres(?:ql)?:\/\/)([^/?#]*)([^?#]*)(\?[^#]*)?(#.*)?$/s.exec(url)
  if (!m) throw new DbUrlError('a database URL starts with postgres:// or postgresql://')
  const [, scheme, authority, path, query] = m as unknown as [
    string,
    string,
    string,
    string,
    string | undefined,
  ]
  const at = authority.lastIndexOf('@')
  const userinfo = at >= 0 ? authority.slice(0, at + 1) : ''
  const hostList = at >= 0 ? authority.slice(at + 1) : authority
  const params = new URLSearchParams(query ? query.slice(1) : '')

  const attrs = params.get('target_session_attrs') ?? env.PGTARGETSESSIONATTRS ?? 'any'
  if (!TARGET_SESSION_ATTRS.includes(attrs as TargetSessionAttrs)) {
    throw new DbUrlError(`invalid target_session_attrs value: "${attrs}"`)
  }
  const balance = params.get('load_balance_hosts') ?? 'disable'
  if (balance !== 'disable') {
    throw new DbUrlError('load_balance_hosts is not supported: the hosts are tried in the order given')
  }

  let hosts: Array<{ host: string; port: number }>
  const paramHost = params.get('host')
  const paramPorts = (params.get('port') ?? '').split(',').filter((p, i, all) => all.length > 1 || p !== '')
  if (paramHost !== null && hostList === '') {
    const names = paramHost.split(',')
    if (paramPorts.length > 1 && paramPorts.length !== names.length) {
      throw new DbUrlError(`could not match ${paramPorts.length} port numbers to ${names.length} hosts`)
    }
    hosts = names.map((host, i) => ({
      host,
      port: portOf(paramPorts.length > 1 ? paramPorts[i]! : (paramPorts[0] ?? ''), env),
    }))
  } else {
    hosts = hostList.split(',').map((item) => splitHostPort(item, env))
    if (paramPorts.length === 1) hosts = hosts.map((h) => ({ ...h, port: portOf(paramPorts[0]!, env) }))
  }
  if (hosts.length > HOSTS_MAX) throw new DbUrlError(`at most ${HOSTS_MAX} hosts in a database URL`)

  // The other parameters pass as they were written (not re-encoded): node-postgres reads them.
  const tail = (query ? query.slice(1) : '')
    .split('&')
    .filter((piece) => piece !== '' && !CONSUMED_PARAMS.has(decodeURIComponent(piece.split('=')[0]!)))
    .join('&')
  const database = decodeURIComponent(path.replace(/^\//, ''))
  return {
    targetSessionAttrs: attrs as TargetSessionAttrs,
    database,
    hosts: hosts.map(({ host, port }) => {
      const shown = host.includes(':') ? `[${host}]` : host
      const authorityOf = host === '' ? '' : `${shown}:${port}`
      return {
        host,
        port,
        label: host === '' ? `(default host):${port}` : `${decodeURIComponent(shown)}:${port}`,
        url: `${scheme}${userinfo}${authorityOf}${path}${tail ? `?${tail}` : ''}`,
      }
    }),
  }
}

function splitHostPort(item: string, env: NodeJS.ProcessEnv): { host: string; port: number } {
  if (item.startsWith('[')) {
    const close = item.indexOf(']')
    if (close < 0) throw new DbUrlError('an IPv6 host in a database URL lacks its closing bracket')
    const after = item.slice(close + 1)
    if (after !== '' && !after.startsWith(':')) throw new DbUrlError('unexpected text after an IPv6 host')
    return { host: item.slice(1, close), port: portOf(after.slice(1), env) }
  }
  const colon = item.lastIndexOf(':')
  if (colon < 0) return { host: item, port: portOf('', env) }
  return { host: item.slice(0, colon), port: portOf(item.slice(colon + 1), env) }
}

function portOf(text: string, env: NodeJS.ProcessEnv): number {
  const given = text === '' ? (env.PGPORT ?? '') : text
  if (given === '') return DEFAULT_PORT
  if (!/^\d{1,5}$/.test(given) || Number(given) < 1 || Number(given) > 65535) {
    throw new DbUrlError(`invalid port number: "${given}"`)
  }
  return Number(given)
}

/** The same URL naming another database (the tests' harness makes one database per test). */
export function withDatabase(url: string, database: string): string {
  const m = /^(postgres(?:ql)?:\/\/[^/?#]*)([^?#]*)(.*)$/s.exec(url)
  if (!m) throw new DbUrlError('a database URL starts with postgres:// or postgresql://')
  return `${m[1]}/${encodeURIComponent(database)}${m[3]}`
}

/** The hosts of a URL, for logs and errors: `h1:5432,h2:5432 (read-write)`, no credentials. */
export function describeDbUrl(parsed: DbUrl): string {
  return `${parsed.hosts.map((h) => h.label).join(',')} (${parsed.targetSessionAttrs})`
}

/**
 * What a session must answer to be taken: the query libpq sends, and whether its answer is
 * acceptable. `undefined` for `any` (and the second pass of prefer-standby): no query.
 */
export function sessionCheck(
  attrs: TargetSessionAttrs,
): { query: string; accept(value: string): boolean; refusal: string } | undefined {
  switch (attrs) {
    case 'read-write':
      return {
        query: 'SHOW transaction_read_only',
        accept: (v) => v !== 'on',
        refusal: 'session is read-only',
      }
    case 'read-only':
      return {
        query: 'SHOW transaction_read_only',
        accept: (v) => v === 'on',
        refusal: 'session is not read-only',
      }
    case 'primary':
      return {
        query: 'SELECT pg_catalog.pg_is_in_recovery()',
        accept: (v) => v !== 't' && v !== 'true',
        refusal: 'server is in hot standby mode',
      }
    case 'standby':
    case 'prefer-standby':
      return {
        query: 'SELECT pg_catalog.pg_is_in_recovery()',
        accept: (v) => v === 't' || v === 'true',
        refusal: 'server is not in hot standby mode',
      }
    case 'any':
      return undefined
  }
}
