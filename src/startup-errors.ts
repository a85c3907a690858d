import type { Config } from './config/config.js'
import { ConfigError } from './config/config.js'
import { describeDbUrl, parseDbUrl } from './db/hosts.js'
import { SealedSecretError, UnknownSealingKeyError } from './shared/secret-box.js'

/**
 * What an operator reads when the start fails: which setting to look at, and for a master key that
 * cannot open the stored secrets, what to do about it. The raw errors (`ECONNREFUSED`, `Unsupported
 * state or unable to authenticate data`, `EADDRINUSE`) name no setting; these do.
 */

/** The phases of the start, each with the settings it depends on. */
export type StartPhase = 'local-secrets' | 'database' | 'listen'

export interface StartFailure {
  /** The whole message, one or more lines, without the `svcpay:` prefix. */
  message: string
  /** 2 for a setting to fix (as configuration errors), 1 otherwise. */
  exitCode: 1 | 2
}

/** PostgreSQL client and server errors that mean "cannot reach or log in to that database". */
const PG_CONNECT_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  '28P01', // invalid_password
  '28000', // invalid_authorization_specification
  '3D000', // invalid_catalog_name: the database does not exist
  '57P03', // cannot_connect_now: starting up or shutting down
  '53300', // too_many_connections
  '08001', // no host of a several-host DATABASE_URL gave a session of the kind asked for
])

/** File-system errors: a directory or file that cannot be made, read or written. */
const FS_CODES = new Set([
  'EACCES',
  'EPERM',
  'EROFS',
  'ENOSPC',
  'ENOTDIR',
  'EISDIR',
  'EEXIST',
  'ENOENT',
  'ELOOP',
])

/** The failure of `phase` described for an operator, naming the setting to look at. */
export function describeStartFailure(err: unknown, phase: StartPhase, config: Config): StartFailure {
  const e = err as NodeJS.ErrnoException & { address?: string; port?: number }
  const detail = err instanceof Error ? err.message : String(err)
  if (err instanceof ConfigError) return { message: `configuration error: ${detail}`, exitCode: 2 }
  if (err instanceof UnknownSealingKeyError)
    return {
      message: [
        masterKeyMismatch(config),
        `  The secrets name the master key with id ${err.keyId}. During a rotation (docs/operations.md,`,
        '  "Key rotation"), keep that key in MASTER_KEY_PREVIOUS until `svcpay keys status` says that no',
        '  value is sealed by it any more.',
      ].join('\n'),
      exitCode: 2,
    }
  if (err instanceof SealedSecretError) return { message: masterKeyMismatch(config), exitCode: 2 }

  if (phase === 'local-secrets') {
    return {
      message: `configuration error: DATA_DIR: cannot keep the generated master key and admin token in ${config.dataDir} (${detail}); make it a writable directory, or set MASTER_KEY and ADMIN_TOKEN`,
      exitCode: 2,
    }
  }
  if (phase === 'listen') {
    const where = `${config.host}:${config.port}`
    if (e.code === 'EADDRINUSE')
      return {
        message: `configuration error: PORT: ${where} is already in use; stop what listens there or choose another PORT`,
        exitCode: 2,
      }
    if (e.code === 'EACCES' || e.code === 'EPERM')
      return {
        message: `configuration error: PORT: not allowed to listen on ${where} (${e.code}); ports below 1024 need privileges: choose another PORT`,
        exitCode: 2,
      }
    if (e.code === 'EADDRNOTAVAIL' || e.code === 'ENOTFOUND' || e.code === 'EAI_AGAIN' || e.code === 'EINVAL')
      return {
        message: `configuration error: HOST: cannot listen on ${JSON.stringify(config.host)} (${e.code}); use an address of this machine, 0.0.0.0 or 127.0.0.1`,
        exitCode: 2,
      }
    return { message: `cannot listen on ${where} (HOST, PORT): ${detail}`, exitCode: 1 }
  }
  // The database phase: opening it, migrating it, and building the services on it.
  if (config.databaseUrl && e.name === 'DbUrlError') {
    return { message: `configuration error: DATABASE_URL: ${detail}`, exitCode: 2 }
  }
  if (
    config.databaseUrl &&
    (PG_CONNECT_CODES.has(e.code ?? '') || /connect|Connection terminated/i.test(detail))
  ) {
    return {
      message: `configuration error: DATABASE_URL: cannot use the PostgreSQL database at ${describeDatabaseUrl(config.databaseUrl)}: ${detail}`,
      exitCode: 2,
    }
  }
  if (e.code && FS_CODES.has(e.code)) {
    const path = e.path ?? ''
    if (path && path === config.ratesFile)
      return { message: `configuration error: RATES_FILE: cannot read ${path} (${e.code})`, exitCode: 2 }
    if (!config.databaseUrl)
      return {
        message: `configuration error: DATA_DIR: cannot open the embedded database in ${config.dataDir}${path ? ` (${e.code} on ${path})` : ` (${e.code})`}; make it a writable directory, or set DATABASE_URL`,
        exitCode: 2,
      }
  }
  if (!config.databaseUrl && /pglite|wasm|database files are incompatible|PG_VERSION/i.test(detail)) {
    return {
      message: `configuration error: DATA_DIR: cannot open the embedded database in ${config.dataDir}: ${detail}`,
      exitCode: 2,
    }
  }
  return { message: `failed to start: ${detail}`, exitCode: 1 }
}

/** What to do when the master key cannot open the secrets the database holds. */
function masterKeyMismatch(config: Config): string {
  const store = config.databaseUrl
    ? `the PostgreSQL database at ${describeDatabaseUrl(config.databaseUrl)} (DATABASE_URL)`
    : `the embedded database in ${config.dataDir} (DATA_DIR)`
  const keySource = config.masterKey
    ? 'MASTER_KEY as set in the environment'
    : `the key in ${config.dataDir}/master.key (no MASTER_KEY is set)`
  return [
    `configuration error: MASTER_KEY does not open the secrets stored in ${store}.`,
    `  They were sealed under another master key; the one in use is ${keySource}.`,
    '  What to do: start with the MASTER_KEY this database was first started with (on the embedded',
    '  default without MASTER_KEY, that is the master.key file its DATA_DIR held then). No secret was',
    '  changed. The secrets sealed in this database (API secrets, webhook secrets, the Lightning node',
    '  key and the on-chain wallet key) cannot be opened without that key: if it is lost, do not',
    '  delete this database while it may hold funds; point DATABASE_URL or DATA_DIR at a new, empty',
    '  database to start afresh.',
  ].join('\n')
}

/** A PostgreSQL URL without its password, for messages. */
export function describeDatabaseUrl(url: string): string {
  // Several hosts (h1:5432,h2:5432) are not a WHATWG URL: src/db/hosts.ts reads them.
  if (/^postgres(ql)?:\/\/[^/?#]*,/.test(url)) {
    try {
      const parsed = parseDbUrl(url)
      return `${describeDbUrl(parsed)}/${parsed.database}`
    } catch {
      return '(an unparsable URL)'
    }
  }
  try {
    const u = new URL(url)
    const user = u.username ? `${decodeURIComponent(u.username)}@` : ''
    return `${user}${u.hostname}${u.port ? ':' + u.port : ''}${u.pathname}`
  } catch {
    return '(an unparsable URL)'
  }
}
