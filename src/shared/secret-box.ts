import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'

/** AES-256-GCM encryption of secrets at rest (API secrets, webhook secrets) under the master key. */
export interface SecretBox {
  seal(plain: string): string
  open(sealed: string): string
}

/**
 * A sealed secret that this master key cannot open: it was sealed under another key (or altered).
 * AES-GCM's own error says only "Unsupported state or unable to authenticate data".
 */
export class SealedSecretError extends Error {
  override name = 'SealedSecretError'
  constructor() {
    super('a stored secret cannot be opened with this master key (MASTER_KEY): sealed under another key')
  }
}

export function createSecretBox(masterKey: Buffer): SecretBox {
  if (masterKey.length !== 32) throw new Error('the master key must be 32 bytes')
  return {
    seal(plain) {
      const iv = randomBytes(12)
      const cipher = createCipheriv('aes-256-gcm', masterKey, iv)
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()])
      return [
        'v1',
        iv.toString('base64'),
        cipher.getAuthTag().toString('base64'),
        body.toString('base64'),
      ].join('.')
    },
    open(sealed) {
      const [version, iv, tag, body] = sealed.split('.')
      if (version !== 'v1' || !iv || !tag || body === undefined)
        throw new Error('unknown sealed secret format')
      const decipher = createDecipheriv('aes-256-gcm', masterKey, Buffer.from(iv, 'base64'))
      decipher.setAuthTag(Buffer.from(tag, 'base64'))
      let plain: Buffer
      try {
        plain = Buffer.concat([decipher.update(Buffer.from(body, 'base64')), decipher.final()])
      } catch {
        throw new SealedSecretError()
      }
      return plain.toString('utf8')
    },
  }
}
