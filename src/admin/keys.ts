import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import type { Db, Queryable } from '../db/db.js'
import {
  countSealedByKey,
  resealAll,
  RESEAL_BATCH_MAX,
  type ResealReport,
  type SealedColumn,
} from '../db/reseal.js'
import type { SecretBox } from '../shared/secret-box.js'
import { ApiError } from '../shared/errors.js'
import {
  AUTH_SEALED_COLUMNS,
  jwtKeyStatus,
  rotateJwtKey,
  type JwtKeySet,
  type JwtKeyStatus,
} from '../auth/jwt-key.js'
import { OPERATOR_SEALED_COLUMNS } from '../operators/sealed.js'
import { writeAudit } from '../operators/audit.js'
import { WEBHOOK_SEALED_COLUMNS } from '../events/sealed.js'
import { BITCOIN_SEALED_COLUMNS } from '../bitcoin/keys.js'

/**
 * Key rotation (issue 32, docs/operations.md "Key rotation"): the master keyring's status, the
 * reseal of every stored secret under the current master key, and the token signing keys.
 */

/** Every column that holds a value sealed under the master key, from the modules that own them. */
export const SEALED_COLUMNS: readonly SealedColumn[] = [
  ...AUTH_SEALED_COLUMNS,
  ...OPERATOR_SEALED_COLUMNS,
  ...WEBHOOK_SEALED_COLUMNS,
  ...BITCOIN_SEALED_COLUMNS,
]

export interface MasterKeyStatus {
  keyId: string
  role: 'current' | 'previous'
  /** How many stored values this key seals. */
  sealed: number
}

export interface KeysStatus {
  master: {
    currentKeyId: string
    keys: MasterKeyStatus[]
    /** Values sealed before key ids: they open with a key of the ring; a reseal marks them. */
    unmarked: number
    /** Values sealed by keys the ring does not hold (they cannot be opened), by key id. */
    unknown: Array<{ keyId: string; sealed: number }>
    /** By column, the counts by key id (`''` for unmarked values). */
    columns: Array<{ column: string; byKey: Record<string, number> }>
    /** Whether every stored value is sealed by the current key. */
    resealed: boolean
    /** The previous keys that seal nothing any more and can be dropped from MASTER_KEY_PREVIOUS. */
    droppable: string[]
  }
  jwt: { keys: JwtKeyStatus[]; configured: boolean }
  /** What an operator reads, one line each. */
  notes: string[]
}

export async function keysStatus(
  q: Queryable,
  box: SecretBox,
  opts: { now: number; jwtConfigured: boolean; columns?: readonly SealedColumn[] },
): Promise<KeysStatus> {
  const totals = new Map<string, number>()
  const columns: KeysStatus['master']['columns'] = []
  for (const c of opts.columns ?? SEALED_COLUMNS) {
    const byKey = await countSealedByKey(q, c)
    columns.push({ column: c.name, byKey: Object.fromEntries(byKey) })
    for (const [kid, n] of byKey) totals.set(kid, (totals.get(kid) ?? 0) + n)
  }
  const unmarked = totals.get('') ?? 0
  const keys: MasterKeyStatus[] = box.keyIds.map((keyId) => ({
    keyId,
    role: keyId === box.currentKeyId ? 'current' : 'previous',
    sealed: totals.get(keyId) ?? 0,
  }))
  const unknown = [...totals]
    .filter(([kid]) => kid !== '' && !box.keyIds.includes(kid))
    .map(([keyId, sealed]) => ({ keyId, sealed }))
  // A value of before key ids may be sealed by any key of the ring: none is droppable until the
  // reseal has marked them all.
  const droppable =
    unmarked > 0 ? [] : keys.filter((k) => k.role === 'previous' && k.sealed === 0).map((k) => k.keyId)
  const notes: string[] = []
  for (const k of keys.filter((k) => k.role === 'previous')) {
    if (droppable.includes(k.keyId))
      notes.push(`no value is sealed by key ${k.keyId} any more: it can be dropped from MASTER_KEY_PREVIOUS`)
    else
      notes.push(
        `key ${k.keyId} still seals ${k.sealed} value(s)${unmarked ? ` (and ${unmarked} value(s) name no key)` : ''}: run \`svcpay keys rotate-master\` before dropping it`,
      )
  }
  if (unmarked > 0 && keys.length === 1)
    notes.push(`${unmarked} value(s) were sealed before key ids: \`svcpay keys rotate-master\` marks them`)
  for (const u of unknown)
    notes.push(
      `${u.sealed} value(s) are sealed by key ${u.keyId}, which is not in the ring: they cannot be opened`,
    )
  const resealed =
    unmarked === 0 && keys.every((k) => k.role === 'current' || k.sealed === 0) && unknown.length === 0
  if (resealed) notes.push(`every stored secret is sealed by the current key ${box.currentKeyId}`)
  const jwt = {
    keys: opts.jwtConfigured ? [] : await jwtKeyStatus(q, opts.now),
    configured: opts.jwtConfigured,
  }
  return {
    master: { currentKeyId: box.currentKeyId, keys, unmarked, unknown, columns, resealed, droppable },
    jwt,
    notes,
  }
}

/** The one-line summary of a status for the command line. */
export function formatKeysStatus(s: KeysStatus): string {
  const lines = [
    `master key ${s.master.currentKeyId} (current) seals ${s.master.keys[0]?.sealed ?? 0} value(s)`,
  ]
  for (const k of s.master.keys.slice(1))
    lines.push(`master key ${k.keyId} (previous) seals ${k.sealed} value(s)`)
  if (s.master.unmarked) lines.push(`${s.master.unmarked} value(s) sealed before key ids`)
  if (s.jwt.configured) lines.push('token signing key: JWT_SECRET (does not rotate)')
  for (const k of s.jwt.keys)
    lines.push(
      `token key ${k.kid}: ${k.current ? 'signs' : `verifies until ${new Date(k.verifiesUntil!).toISOString()}`}`,
    )
  return [...lines, ...s.notes].join('\n')
}

export function keysRoutes(
  fastify: FastifyInstance,
  deps: {
    db: Db
    box: SecretBox
    jwtKeys: JwtKeySet
    config: { jwtSecret: string | undefined; tokenTtlS: number }
  },
): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const schema = { hide: true, tags: ['Admin'] }
  const status = () =>
    keysStatus(deps.db, deps.box, { now: Date.now(), jwtConfigured: deps.config.jwtSecret !== undefined })

  app.get('/admin/key-rotation', { schema }, async () => status())

  // Long (batches over every stored secret), so not one transaction: the route writes its own audit
  // rows, one when it starts and one with what it did, and a run cut short is simply run again.
  app.post(
    '/admin/key-rotation/master',
    {
      schema: {
        ...schema,
        body: Type.Object({
          batchSize: Type.Optional(Type.Integer({ minimum: 1, maximum: RESEAL_BATCH_MAX })),
        }),
      },
    },
    async (request) => {
      const actor = request.operator!
      const audit = (action: string, after: unknown) =>
        writeAudit(deps.db, {
          operatorId: actor.operatorId,
          operatorEmail: actor.email,
          action,
          target: `masterKey=${deps.box.currentKeyId}`,
          before: null,
          after,
          clientIp: request.ip,
          requestId: request.id,
        })
      await audit('keys.rotate_master.start', { keyIds: deps.box.keyIds })
      const report: ResealReport = await resealAll(deps.db, deps.box, SEALED_COLUMNS, {
        batchSize: request.body.batchSize ?? 200,
      })
      const after = await status()
      await audit('keys.rotate_master.finish', { ...report, droppable: after.master.droppable })
      return { ...report, status: after }
    },
  )

  app.post(
    '/admin/key-rotation/jwt',
    {
      schema,
      // This instance signs with the new key at once; the others within KEYSET_TTL_MS.
      onResponse: async (_request, reply) => {
        if (reply.statusCode === 200) deps.jwtKeys.refresh()
      },
    },
    async (request) => {
      if (deps.config.jwtSecret !== undefined)
        throw new ApiError(
          'invalid_state',
          'JWT_SECRET is set: the token key is that secret and does not rotate; unset it to keep rotating keys in the database',
        )
      let rotation
      try {
        // The guard runs this route in one transaction with its audit row (src/operators/guard.ts).
        rotation = await rotateJwtKey(deps.db, deps.box, {
          tokenTtlS: deps.config.tokenTtlS,
          now: Date.now(),
        })
      } catch (err) {
        if (err instanceof RangeError) throw new ApiError('invalid_state', err.message)
        throw err
      }
      request.auditNote = { target: `kid=${rotation.kid}` }
      return rotation
    },
  )
}
