import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import type { Config } from './config.js'
import { ConfigError } from './config.js'

/**
 * Secrets the embedded default keeps in DATA_DIR (mode 0600) when they are not configured: the
 * master key that encrypts secrets at rest and the admin token of the operator API.
 */
export function masterKey(config: Config): Buffer {
  if (config.masterKey) return parseMasterKey(config.masterKey, 'MASTER_KEY')
  return Buffer.from(
    readOrCreate(config.dataDir, 'master.key', () => randomBytes(32).toString('hex')),
    'hex',
  )
}

/**
 * The old master keys that still open (MASTER_KEY_PREVIOUS, comma-separated, each as MASTER_KEY is
 * written), for a rotation: `svcpay keys rotate-master` reseals under MASTER_KEY what they sealed.
 */
export function previousMasterKeys(config: Config): Buffer[] {
  if (config.masterKeyPrevious.length > 8)
    throw new ConfigError(
      'MASTER_KEY_PREVIOUS: at most 8 keys (drop the ones `svcpay keys status` says seal nothing)',
    )
  return config.masterKeyPrevious.map((k, i) => parseMasterKey(k, `MASTER_KEY_PREVIOUS (key ${i + 1})`))
}

function parseMasterKey(text: string, name: string): Buffer {
  const key = Buffer.from(text, /^[0-9a-f]{64}$/i.test(text) ? 'hex' : 'base64')
  if (key.length !== 32) throw new ConfigError(`${name}: expected 32 bytes as 64 hex characters or base64`)
  return key
}

export function adminToken(config: Config): string {
  if (config.adminToken) {
    if (config.adminToken.length < 16) throw new ConfigError('ADMIN_TOKEN: use at least 16 characters')
    return config.adminToken
  }
  return readOrCreate(config.dataDir, 'admin-token', () => 'adm_' + randomBytes(24).toString('base64url'))
}

/** Read a secret the server wrote, for the command line; undefined when there is none. */
export function readAdminToken(config: Config): string | undefined {
  if (config.adminToken) return config.adminToken
  const file = join(config.dataDir, 'admin-token')
  return existsSync(file) ? readFileSync(file, 'utf8').trim() : undefined
}

function readOrCreate(dir: string, name: string, make: () => string): string {
  const file = join(dir, name)
  if (existsSync(file)) return readFileSync(file, 'utf8').trim()
  mkdirSync(dir, { recursive: true })
  const value = make()
  writeFileSync(file, value + '\n', { mode: 0o600, flag: 'wx' })
  chmodSync(file, 0o600)
  return value
}
