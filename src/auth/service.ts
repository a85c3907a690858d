import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { SignJWT, decodeProtectedHeader, jwtVerify, errors as joseErrors } from 'jose'
import type { JwtKeySet } from './jwt-key.js'
import type { Db } from '../db/db.js'
import type { SecretBox } from '../shared/secret-box.js'
import { ApiError } from '../shared/errors.js'
import { newId } from '../shared/ids.js'
import { sql } from '../db/sql.js'

export interface AuthDeps {
  db: Db
  box: SecretBox
  /** The signing keys by kid (src/auth/jwt-key.ts); or one fixed key, with no kid. */
  jwtKey: Uint8Array | JwtKeySet
  tokenTtlS: number
  now?: () => number
}

export interface TokenResponse {
  accessToken: string
  expiredAt: number
  accountId: string
}

/** Who a request acts for, once its bearer token is verified. */
export interface Principal {
  accountId: string
  keyId: string
  tier: 'standard' | 'premium'
  displayName: string
}

export interface IssuedKey {
  apiKey: string
  apiSecret: string
}

export interface AuthService {
  createKey(accountId: string): Promise<IssuedKey>
  revokeKey(apiKey: string): Promise<boolean>
  /**
   * The token exchange: checks the key, the signature over the exact body bytes, and its one-time
   * use; then `admit` (the account's rate limit) may still refuse before a token is signed.
   */
  exchange(input: {
    apiKey: string | undefined
    signature: string | undefined
    /** The body exactly as received; a string stands for its UTF-8 bytes. */
    rawBody: Buffer | string
    admit?: (owner: { accountId: string; tier: 'standard' | 'premium'; keyId: string }) => Promise<void>
  }): Promise<TokenResponse>
  authenticate(authorization: string | undefined): Promise<Principal>
}

const JWT_ISSUER = 'svcpay'
const SIGNATURE_RE = /^[0-9a-fA-F]{64}$/
// A revoked key's tokens stop working within this time on every instance.
const KEY_CACHE_TTL_MS = 2_000
const KEY_CACHE_MAX = 10_000
// Tokens whose signature was verified once. A token is a fixed string, so its signature and claims
// stay valid until it expires; only the expiry and the key's revocation (above) can change, and both
// are still checked on every request. Verifying an HS256 token through WebCrypto costs more than the
// rest of a cheap GET together.
const VERIFIED_TOKENS_MAX = 10_000

interface VerifiedToken {
  keyId: string
  sub: string | undefined
  /** The `exp` claim, Unix seconds. */
  expS: number
}

interface KeyInfo {
  accountId: string
  revoked: boolean
  tier: 'standard' | 'premium'
  displayName: string
  secretEnc: string
  loadedAt: number
}

export function createAuthService(deps: AuthDeps): AuthService {
  const now = deps.now ?? Date.now
  const cache = new Map<string, KeyInfo>()
  const verified = new Map<string, VerifiedToken>()
  const fixed = deps.jwtKey instanceof Uint8Array ? deps.jwtKey : undefined
  const keys: JwtKeySet = fixed
    ? { signing: async () => ({ kid: undefined, key: fixed }), verifying: async () => [fixed], refresh() {} }
    : (deps.jwtKey as JwtKeySet)

  async function loadKey(apiKey: string): Promise<KeyInfo | undefined> {
    const hit = cache.get(apiKey)
    if (hit && now() - hit.loadedAt < KEY_CACHE_TTL_MS) return hit
    const { rows } = await deps.db.query<{
      account_id: string
      revoked_at: bigint | null
      tier: 'standard' | 'premium'
      display_name: string
      secret_enc: string
    }>(
      sql`SELECT k.account_id, k.revoked_at, k.secret_enc, a.tier, a.display_name
         FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.id = ${apiKey}`,
    )
    const row = rows[0]
    if (!row) {
      cache.delete(apiKey)
      return undefined
    }
    const info: KeyInfo = {
      accountId: row.account_id,
      revoked: row.revoked_at !== null,
      tier: row.tier,
      displayName: row.display_name,
      secretEnc: row.secret_enc,
      loadedAt: now(),
    }
    if (cache.size >= KEY_CACHE_MAX) cache.clear()
    cache.set(apiKey, info)
    return info
  }

  const unauthorized = (message = 'Missing, invalid or expired credentials') =>
    new ApiError('unauthorized', message)

  return {
    async createKey(accountId) {
      const apiKey = newId('key')
      const apiSecret = 'sk_' + randomBytes(32).toString('base64url')
      await deps.db.query(
        sql`INSERT INTO api_keys (id, account_id, secret_enc, created_at) VALUES (${apiKey}, ${accountId}, ${deps.box.seal(apiSecret)}, ${now()})`,
      )
      return { apiKey, apiSecret }
    },

    async revokeKey(apiKey) {
      const r = await deps.db.query(
        sql`UPDATE api_keys SET revoked_at = ${now()} WHERE id = ${apiKey} AND revoked_at IS NULL`,
      )
      cache.delete(apiKey)
      return r.rowCount > 0
    },

    async exchange({ apiKey, signature, rawBody, admit }) {
      if (!apiKey || !signature) throw unauthorized('X-Api-Key and X-Api-Signature headers are required')
      if (!SIGNATURE_RE.test(signature)) {
        throw new ApiError('invalid_signature', 'X-Api-Signature must be 64 hex characters (HMAC-SHA256)')
      }
      const key = apiKey.length <= 64 ? await loadKey(apiKey) : undefined
      if (!key || key.revoked) throw unauthorized('Unknown or revoked API key')
      const secret = deps.box.open(key.secretEnc)
      // Over the bytes as sent (contract section 4): decoding them first would turn every invalid
      // UTF-8 sequence into U+FFFD, so a body signed over its bytes would fail and one signed over
      // the replaced text would pass.
      const expected = createHmac('sha256', secret)
        .update(Buffer.from(`${apiKey}&payload=`, 'utf8'))
        .update(typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody)
        .digest()
      const given = Buffer.from(signature, 'hex')
      if (!timingSafeEqual(expected, given)) {
        throw new ApiError('invalid_signature', 'The signature does not match the API key and body')
      }
      const inserted = await deps.db.query(
        sql`INSERT INTO used_signatures (key_id, signature, used_at) VALUES (${apiKey}, ${signature.toLowerCase()}, ${now()}) ON CONFLICT DO NOTHING`,
      )
      if (inserted.rowCount === 0) {
        throw new ApiError(
          'signature_reused',
          'This signature was already used; sign a fresh body for each token request',
        )
      }
      // Only now, with the signature verified and claimed, may the request spend its account's
      // windows: a wrong or replayed signature never does (contract section 8).
      await admit?.({ accountId: key.accountId, tier: key.tier, keyId: apiKey })
      const issuedAtS = Math.floor(now() / 1000)
      const expiredAtS = issuedAtS + deps.tokenTtlS
      const signing = await keys.signing()
      const accessToken = await new SignJWT({ key: apiKey })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT', ...(signing.kid ? { kid: signing.kid } : {}) })
        .setIssuer(JWT_ISSUER)
        .setSubject(key.accountId)
        .setIssuedAt(issuedAtS)
        .setExpirationTime(expiredAtS)
        .setJti(randomBytes(12).toString('base64url'))
        .sign(signing.key)
      return { accessToken, expiredAt: expiredAtS * 1000, accountId: key.accountId }
    },

    async authenticate(authorization) {
      const m = /^Bearer ([A-Za-z0-9_\-.]{10,4096})$/.exec(authorization ?? '')
      if (!m) throw unauthorized('Send Authorization: Bearer <accessToken>')
      const token = m[1]!
      let claims = verified.get(token)
      // The same rule as jose's: expired once the current Unix second reaches `exp`.
      if (claims && Math.floor(now() / 1000) >= claims.expS) {
        verified.delete(token)
        throw unauthorized('The access token has expired; request a new one')
      }
      if (!claims) {
        let payload
        let kid: unknown
        try {
          kid = decodeProtectedHeader(token).kid
        } catch {
          throw unauthorized('The access token is invalid')
        }
        // The key the token names (issue 32); a kid no live key has is a token nobody can verify.
        const candidates =
          kid === undefined
            ? await keys.verifying(undefined)
            : typeof kid === 'string' && kid.length <= 64
              ? await keys.verifying(kid)
              : []
        if (candidates.length === 0) throw unauthorized('The access token is invalid')
        for (let i = 0; ; i++) {
          try {
            ;({ payload } = await jwtVerify(token, candidates[i]!, {
              issuer: JWT_ISSUER,
              algorithms: ['HS256'],
              currentDate: new Date(now()),
            }))
            break
          } catch (err) {
            if (err instanceof joseErrors.JWTExpired) {
              throw unauthorized('The access token has expired; request a new one')
            }
            if (i + 1 < candidates.length && err instanceof joseErrors.JWSSignatureVerificationFailed)
              continue
            throw unauthorized('The access token is invalid')
          }
        }
        const keyId = typeof payload.key === 'string' ? payload.key : ''
        claims = { keyId, sub: payload.sub, expS: payload.exp ?? 0 }
        // Tokens always carry exp (exchange sets it); one without is verified every time.
        if (payload.exp !== undefined) {
          if (verified.size >= VERIFIED_TOKENS_MAX) verified.clear()
          verified.set(token, claims)
        }
      }
      const keyId = claims.keyId
      const key = keyId ? await loadKey(keyId) : undefined
      if (!key || key.revoked || key.accountId !== claims.sub)
        throw unauthorized('The API key of this token was revoked')
      return { accountId: key.accountId, keyId, tier: key.tier, displayName: key.displayName }
    },
  }
}
