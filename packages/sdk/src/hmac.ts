/**
 * HMAC-SHA256 through Web Crypto, which Node (20+), Deno, Bun, browsers and edge runtimes all
 * provide, so the SDK needs no crypto dependency and no `node:` import.
 */

const encoder = new TextEncoder()

function subtle(): SubtleCrypto {
  const s = globalThis.crypto?.subtle
  if (!s) throw new Error('Web Crypto (globalThis.crypto.subtle) is not available in this runtime')
  return s
}

/** The UTF-8 bytes of a string, or the bytes themselves. */
export function bytesOf(data: string | Uint8Array): Uint8Array<ArrayBuffer> {
  return typeof data === 'string' ? encoder.encode(data) : new Uint8Array(data)
}

/** HMAC-SHA256 of `data` under `secret` (a string is taken as its UTF-8 bytes). */
export async function hmacSha256(secret: string, data: string | Uint8Array): Promise<Uint8Array> {
  const key = await subtle().importKey('raw', bytesOf(secret), { name: 'HMAC', hash: 'SHA-256' }, false, [
    'sign',
  ])
  return new Uint8Array(await subtle().sign('HMAC', key, bytesOf(data)))
}

export function toHex(bytes: Uint8Array): string {
  let out = ''
  for (const b of bytes) out += b.toString(16).padStart(2, '0')
  return out
}

/** Hex to bytes, or undefined when the text is not an even number of hex digits. */
export function fromHex(hex: string): Uint8Array | undefined {
  if (hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) return undefined
  const out = new Uint8Array(hex.length / 2)
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16)
  return out
}

/**
 * Compares two byte strings in time that depends only on their length, never on where they first
 * differ, so a forger learns nothing from how long a rejection takes.
 */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false
  let diff = 0
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!
  return diff === 0
}

/** A random hex string of `bytes` bytes, for one-time token-request nonces. */
export function randomHex(bytes: number): string {
  const buf = new Uint8Array(bytes)
  globalThis.crypto.getRandomValues(buf)
  return toHex(buf)
}
