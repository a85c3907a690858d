import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { finished } from 'node:stream/promises'
import { backupPglite } from '../db/backup.js'
import type { Db } from '../db/db.js'
import { auditNote } from '../operators/guard.js'
import {
  beginRecovery,
  endRecovery,
  latestRecovery,
  openRecovery,
  RECOVERY_NOTE_MAX,
  runRecoveryCheck,
  type RecoveryDeps,
} from '../reconcile/recovery.js'
import { ApiError } from '../shared/errors.js'

/**
 * Backup and recovery in the operator API (docs/operations.md, "Backup and restore"):
 * - `POST /admin/backup` (`operators.manage`: a backup holds every account's data): a consistent
 *   copy of the embedded database while the service runs, answered as the archive itself
 *   (`svcpay backup FILE`). On PostgreSQL it is refused: pg_dump and base backups are the tools.
 * - `GET /admin/recovery`: the latest recovery period and what its last check found.
 * - `POST /admin/recovery/begin`: opens one (the last step of a PostgreSQL restore), audited.
 * - `POST /admin/recovery/check`: a recovery check now, audited once it ran.
 * - `POST /admin/recovery/end`: an operator ends the period, with a note, audited.
 */
export function backupRoutes(
  fastify: FastifyInstance,
  deps: {
    db: Db
    dataDir: string
    recovery: Omit<RecoveryDeps, 'db'>
    adminPreHandler: (request: FastifyRequest) => Promise<void>
  },
): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const schema = { hide: true, tags: ['Admin'] }
  const onRequest = deps.adminPreHandler

  app.post('/admin/backup', { onRequest, schema }, async (request, reply) => {
    if (deps.db.engine !== 'pglite')
      throw new ApiError(
        'invalid_request',
        'svcpay backup copies the embedded database; back PostgreSQL up with pg_dump or a base backup (docs/operations.md)',
      )
    if (!existsSync(join(deps.dataDir, 'PG_VERSION')))
      throw new ApiError(
        'invalid_request',
        'The embedded database is not kept in DATA_DIR: nothing to back up',
      )
    const header = await backupPglite(deps.db, deps.dataDir, async (archive) => {
      reply.header('content-type', 'application/gzip').header('cache-control', 'no-store')
      reply.send(archive)
      await finished(reply.raw)
    })
    request.log.info(
      { takenAt: header.takenAt, bytes: header.bytes, pausedMs: header.pausedMs },
      'backup made',
    )
    auditNote(request, {
      target: 'database',
      after: { takenAt: header.takenAt, files: header.files, bytes: header.bytes, pausedMs: header.pausedMs },
    })
    return reply
  })

  app.get('/admin/recovery', { onRequest, schema }, async () => {
    const period = (await openRecovery(deps.db)) ?? (await latestRecovery(deps.db))
    return { active: period?.endedAt === null, recovery: period ?? null }
  })

  app.post(
    '/admin/recovery/begin',
    {
      onRequest,
      schema: {
        ...schema,
        body: Type.Object(
          { backupTakenAt: Type.Optional(Type.Integer({ minimum: 0, maximum: 8_640_000_000_000_000 })) },
          { additionalProperties: false },
        ),
      },
    },
    async (request) => {
      const period = await beginRecovery(deps.db, {
        reason: 'operator',
        backupTakenAt: request.body.backupTakenAt ?? null,
        now: Date.now(),
      })
      auditNote(request, { target: `recovery=${period.id}` })
      return { active: true, recovery: period }
    },
  )

  app.post('/admin/recovery/check', { onRequest, schema }, async (request) => {
    const check = await runRecoveryCheck({ ...deps.recovery, db: deps.db })
    if (!check) throw new ApiError('invalid_state', 'No recovery is in progress')
    auditNote(request, {
      target: 'recovery',
      after: { ended: check.ended, adopted: check.adopted, orphans: check.orphans.length },
    })
    const period = await latestRecovery(deps.db)
    return { active: period?.endedAt === null, recovery: period ?? null }
  })

  app.post(
    '/admin/recovery/end',
    {
      onRequest,
      schema: {
        ...schema,
        body: Type.Object(
          { note: Type.String({ minLength: 1, maxLength: RECOVERY_NOTE_MAX }) },
          { additionalProperties: false },
        ),
      },
    },
    async (request) => {
      const actor = request.operator
      if (!actor) throw new Error('POST /admin/recovery/end ran without the admin guard')
      const ended = await endRecovery(deps.db, { by: actor.email, note: request.body.note, now: Date.now() })
      if (!ended) throw new ApiError('invalid_state', 'No recovery is in progress')
      auditNote(request, { target: `recovery=${ended.id}` })
      return { active: false, recovery: ended }
    },
  )
}
