import { randomBytes } from 'node:crypto'
import type { Db, Queryable } from '../db/db.js'
import type { SecretBox } from '../shared/secret-box.js'
import { sql } from '../db/sql.js'
import type { SealedColumn } from '../db/reseal.js'

/**
 * The token signing keys (issue 32), shared by every instance through the table jwt_keys (migration
 * 042), each sealed under the master key and named by the `kid` of the tokens it signs. One key is
 * current and signs; a key superseded by `svcpay keys rotate-jwt` keeps verifying until the longest
 * token it can have signed has expired, and is then retired: nobody is signed out by a rotation.
 * Every instance reads the set again within KEYSET_TTL_MS, and at once when a token names a kid it
 * does not know yet (another instance rotated), at most once per KEYSET_MISS_MS.
 *
 * With JWT_SECRET configured the one key is that secret, with no kid, and does not rotate.
 */
export interface JwtKeySet {
  /** The key that signs now, with its kid (undefined for JWT_SECRET). */
  signing(): Promise<{ kid: string | undefined; key: Uint8Array }>
  /**
   * The keys that may verify a token naming `kid`: that key alone when it is still live; for a
   * token with no kid (signed before kids, or with JWT_SECRET) the legacy key, else every live key.
   */
  verifying(kid: string | undefined): Promise<Uint8Array[]>
  /** Forget the cached set (after a rotation by this instance). */
  refresh(): void
}

/** How long an instance signs with a key it read before looking again. */
export const KEYSET_TTL_MS = 5_000
const KEYSET_MISS_MS = 1_000
/** Beyond the longest token: clocks of instances that differ, and a slow request. */
const RETIRE_MARGIN_MS = 60_000
const LEGACY_KID = 'legacy'
/** No more live keys than this: a rotation that would keep more is refused. */
export const JWT_KEYS_MAX = 8

interface KeyRow {
  id: string
  secret_enc: string
  created_at: bigint
  superseded_at: bigint | null
  verify_until: bigint | null
}

/**
 * The current signing key, made at first start (and shared by every instance); with JWT_SECRET
 * configured, that secret. For callers that sign with one fixed key (the tests' other instances).
 */
export async function loadJwtKey(
  db: Db,
  box: SecretBox,
  configured: string | undefined,
): Promise<Uint8Array> {
  if (configured) return new TextEncoder().encode(configured)
  const set = await createJwtKeySet({ db, box, configured })
  return (await set.signing()).key
}

export async function createJwtKeySet(deps: {
  db: Db
  box: SecretBox
  configured: string | undefined
  now?: () => number
}): Promise<JwtKeySet> {
  const now = deps.now ?? Date.now
  if (deps.configured) {
    const key = new TextEncoder().encode(deps.configured)
    return { signing: async () => ({ kid: undefined, key }), verifying: async () => [key], refresh() {} }
  }
  await ensureCurrentJwtKey(deps.db, deps.box, now())
  let loaded: { at: number; current: string; keys: Map<string, Uint8Array> } | undefined
  let loading: Promise<NonNullable<typeof loaded>> | undefined
  let lastMiss = 0

  async function load(): Promise<NonNullable<typeof loaded>> {
    const at = now()
    const rows = await liveJwtKeys(deps.db, at)
    const keys = new Map(rows.map((r) => [r.id, new TextEncoder().encode(deps.box.open(r.secret_enc))]))
    const current = rows.find((r) => r.superseded_at === null)?.id
    if (!current) throw new Error('no current token signing key in jwt_keys')
    return (loaded = { at, current, keys })
  }
  const get = async (fresh = false) => {
    if (!fresh && loaded && now() - loaded.at < KEYSET_TTL_MS) return loaded
    loading ??= load().finally(() => (loading = undefined))
    return loading
  }
  await get()

  return {
    async signing() {
      const set = await get()
      return { kid: set.current, key: set.keys.get(set.current)! }
    },
    async verifying(kid) {
      let set = await get()
      if (kid === undefined) {
        const legacy = set.keys.get(LEGACY_KID)
        return legacy ? [legacy] : [...set.keys.values()]
      }
      if (!set.keys.has(kid) && now() - lastMiss >= KEYSET_MISS_MS) {
        // Another instance may have rotated a moment ago: look once, not once per forged token.
        lastMiss = now()
        set = await get(true)
      }
      const key = set.keys.get(kid)
      return key ? [key] : []
    },
    refresh() {
      loaded = undefined
    },
  }
}

/** Live keys: the current one and those superseded whose tokens may still be alive. */
async function liveJwtKeys(q: Queryable, at: number): Promise<KeyRow[]> {
  const { rows } = await q.query<KeyRow>(
    sql`SELECT id, secret_enc, created_at, superseded_at, verify_until FROM jwt_keys
         WHERE verify_until IS NULL OR verify_until > ${at} ORDER BY created_at DESC, id`,
  )
  return rows
}

async function ensureCurrentJwtKey(db: Db, box: SecretBox, at: number): Promise<void> {
  const fresh = box.seal(randomBytes(32).toString('base64url'))
  // At most one row without superseded_at (a unique index): two instances starting together make one.
  await db.query(
    sql`INSERT INTO jwt_keys (id, secret_enc, created_at)
        SELECT ${newKid()}, ${fresh}, ${at}
         WHERE NOT EXISTS (SELECT 1 FROM jwt_keys WHERE superseded_at IS NULL)
        ON CONFLICT DO NOTHING`,
  )
}

const newKid = () => 'jwk_' + randomBytes(9).toString('base64url')

export interface JwtRotation {
  kid: string
  previousKid: string
  /** When the previous key stops verifying and is retired, epoch ms. */
  previousVerifiesUntil: number
  retired: string[]
}

/**
 * Makes a new signing key current, in one transaction: the current key is superseded and keeps
 * verifying for the longest token it can have signed (`tokenTtlS`, plus the time an instance may
 * still sign with it from its cache, plus a margin); keys past that are retired (deleted).
 */
export async function rotateJwtKey(
  q: Queryable,
  box: SecretBox,
  opts: { tokenTtlS: number; now: number },
): Promise<JwtRotation> {
  const current = await q.query<{ id: string }>(
    sql`SELECT id FROM jwt_keys WHERE superseded_at IS NULL FOR UPDATE`,
  )
  const previousKid = current.rows[0]?.id
  if (!previousKid) throw new Error('no current token signing key in jwt_keys')
  const retired = await q.query<{ id: string }>(
    sql`DELETE FROM jwt_keys WHERE verify_until IS NOT NULL AND verify_until <= ${opts.now} RETURNING id`,
  )
  const live = await q.query<{ n: bigint }>(sql`SELECT count(*)::int8 AS n FROM jwt_keys`)
  if (Number(live.rows[0]!.n) >= JWT_KEYS_MAX)
    throw new RangeError(`${JWT_KEYS_MAX} token keys still verify: wait until the oldest is retired`)
  const previousVerifiesUntil = opts.now + opts.tokenTtlS * 1000 + KEYSET_TTL_MS + RETIRE_MARGIN_MS
  await q.query(
    sql`UPDATE jwt_keys SET superseded_at = ${opts.now}, verify_until = ${previousVerifiesUntil} WHERE id = ${previousKid}`,
  )
  const kid = newKid()
  await q.query(
    sql`INSERT INTO jwt_keys (id, secret_enc, created_at) VALUES (${kid}, ${box.seal(randomBytes(32).toString('base64url'))}, ${opts.now})`,
  )
  return { kid, previousKid, previousVerifiesUntil, retired: retired.rows.map((r) => r.id) }
}

export interface JwtKeyStatus {
  kid: string
  current: boolean
  createdAt: number
  verifiesUntil: number | null
}

/** The token keys as `svcpay keys status` shows them (no secret). */
export async function jwtKeyStatus(q: Queryable, at: number): Promise<JwtKeyStatus[]> {
  return (await liveJwtKeys(q, at)).map((r) => ({
    kid: r.id,
    current: r.superseded_at === null,
    createdAt: Number(r.created_at),
    verifiesUntil: r.verify_until === null ? null : Number(r.verify_until),
  }))
}

/** The sealed columns this folder owns (src/db/reseal.ts): API secrets and token signing keys. */
export const AUTH_SEALED_COLUMNS: readonly SealedColumn[] = [
  { name: 'api_keys.secret_enc', table: 'api_keys', id: 'id', column: 'secret_enc' },
  { name: 'jwt_keys.secret_enc', table: 'jwt_keys', id: 'id', column: 'secret_enc' },
  // The signing key of before kids, kept for instances not yet upgraded (migration 042).
  {
    name: 'settings.jwt_secret',
    table: 'settings',
    id: 'name',
    column: 'value',
    where: sql`name = 'jwt_secret'`,
  },
]
