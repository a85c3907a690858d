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
  if (config.masterKey) {
    const key = Buffer.from(config.masterKey, /^[0-9a-f]{64}$/i.test(config.masterKey) ? 'hex' : 'base64')
    if (key.length !== 32)
      throw new ConfigError('MASTER_KEY: expected 32 bytes as 64 hex characters or base64')
    return key
  }
  return Buffer.from(
    readOrCreate(config.dataDir, 'master.key', () => randomBytes(32).toString('hex')),
    'hex',
  )
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
