import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto'

/**
 * AES-256-GCM encryption of secrets at rest (API secrets, webhook secrets, operators' TOTP secrets,
 * the token signing keys, the node keys) under a keyring of master keys: the current key seals,
 * every key of the ring opens (issue 32).
 *
 * A value sealed today is `v2.<keyId>.<iv>.<tag>.<body>`: the key id is derived from the key
 * (`masterKeyId`), never the key, and is bound to the ciphertext as additional data. A value
 * sealed before key ids (`v1.<iv>.<tag>.<body>`) names no key: it opens with whichever key of the
 * ring opens it, and a reseal (`svcpay keys rotate-master`) marks it.
 */
export interface SecretBox {
  seal(plain: string): string
  open(sealed: string): string
  /** The id of the key that seals (MASTER_KEY). */
  readonly currentKeyId: string
  /** The ids of every key of the ring, the current one first. */
  readonly keyIds: readonly string[]
  /** The key id a sealed value records; undefined for a value sealed before key ids (v1). */
  keyIdOf(sealed: string): string | undefined
  /** Whether the value is sealed by another key than the current one (or names no key). */
  needsReseal(sealed: string): boolean
}

/**
 * A sealed secret that no key of the ring can open: it was sealed under another key (or altered).
 * AES-GCM's own error says only "Unsupported state or unable to authenticate data".
 */
export class SealedSecretError extends Error {
  override name = 'SealedSecretError'
  constructor(
    message = 'a stored secret cannot be opened with this master key (MASTER_KEY): sealed under another key',
  ) {
    super(message)
  }
}

/** A sealed value that names a key this ring does not hold (neither MASTER_KEY nor MASTER_KEY_PREVIOUS). */
export class UnknownSealingKeyError extends SealedSecretError {
  override name = 'UnknownSealingKeyError'
  constructor(readonly keyId: string) {
    super(
      `a stored secret was sealed by master key ${keyId}, which is neither MASTER_KEY nor in MASTER_KEY_PREVIOUS`,
    )
  }
}

const KEY_ID_RE = /^[0-9a-f]{16}$/

/** The id of a master key: 16 hex characters of an HMAC under the key, which tell nothing of it. */
export function masterKeyId(key: Buffer): string {
  return createHmac('sha256', key).update('svcpay master key id').digest('hex').slice(0, 16)
}

export function createSecretBox(masterKey: Buffer, previousKeys: readonly Buffer[] = []): SecretBox {
  const ring = [masterKey, ...previousKeys]
  for (const key of ring) if (key.length !== 32) throw new Error('the master key must be 32 bytes')
  const byId = new Map<string, Buffer>()
  for (const key of ring) {
    const id = masterKeyId(key)
    if (!byId.has(id)) byId.set(id, key)
  }
  const currentKeyId = masterKeyId(masterKey)

  function decrypt(key: Buffer, iv: string, tag: string, body: string, aad?: string): string | undefined {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64'))
    if (aad !== undefined) decipher.setAAD(Buffer.from(aad, 'utf8'))
    decipher.setAuthTag(Buffer.from(tag, 'base64'))
    try {
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64')), decipher.final()]).toString('utf8')
    } catch {
      return undefined
    }
  }

  function keyIdOf(sealed: string): string | undefined {
    if (!sealed.startsWith('v2.')) return undefined
    const id = sealed.slice(3, sealed.indexOf('.', 3))
    return KEY_ID_RE.test(id) ? id : undefined
  }

  return {
    currentKeyId,
    keyIds: [...byId.keys()],
    keyIdOf,
    needsReseal: (sealed) => keyIdOf(sealed) !== currentKeyId,
    seal(plain) {
      const iv = randomBytes(12)
      const cipher = createCipheriv('aes-256-gcm', masterKey, iv)
      cipher.setAAD(Buffer.from(`v2.${currentKeyId}`, 'utf8'))
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()])
      return [
        'v2',
        currentKeyId,
        iv.toString('base64'),
        cipher.getAuthTag().toString('base64'),
        body.toString('base64'),
      ].join('.')
    },
    open(sealed) {
      const parts = sealed.split('.')
      if (parts[0] === 'v2' && parts.length === 5) {
        const [, id, iv, tag, body] = parts as [string, string, string, string, string]
        if (!KEY_ID_RE.test(id)) throw new Error('unknown sealed secret format')
        const key = byId.get(id)
        if (!key) throw new UnknownSealingKeyError(id)
        const plain = decrypt(key, iv, tag, body, `v2.${id}`)
        if (plain === undefined)
          throw new SealedSecretError(`a stored secret sealed by master key ${id} was altered`)
        return plain
      }
      const [version, iv, tag, body] = parts
      if (version !== 'v1' || parts.length !== 4 || !iv || !tag || body === undefined)
        throw new Error('unknown sealed secret format')
      // Sealed before key ids: whichever key of the ring opens it (GCM's tag tells a wrong key).
      for (const key of byId.values()) {
        const plain = decrypt(key, iv, tag, body)
        if (plain !== undefined) return plain
      }
      throw new SealedSecretError()
    },
  }
}

/** A value sealed as before key ids (`v1`), for the tests of backward compatibility. */
export function sealV1(masterKey: Buffer, plain: string): string {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', masterKey, iv)
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()])
  return ['v1', iv.toString('base64'), cipher.getAuthTag().toString('base64'), body.toString('base64')].join(
    '.',
  )
}
