import { createReadStream, existsSync } from 'node:fs'
import { Readable } from 'node:stream'
import { loadConfig } from '../config/config.js'
import { restorePglite, writeArchiveFile, BackupError } from '../db/backup.js'
import { createPgliteDb, createPostgresDb } from '../db/db.js'
import { writeAudit } from '../operators/audit.js'
import { SYSTEM_OPERATOR_ID } from '../operators/operator.js'
import { migrate } from '../db/migrate.js'
import { beginRecovery, type RecoveryPeriod } from '../reconcile/recovery.js'
import { CliError, need, type Commands } from './args.js'
import { call, refusal, send } from './client.js'

interface RecoveryAnswer {
  active: boolean
  recovery: RecoveryPeriod | null
}

/** A recovery period as `svcpay recovery status` prints it. */
function formatRecovery(r: RecoveryAnswer): string {
  const p = r.recovery
  if (!p) return 'no recovery period: this database was never restored'
  const at = (ms: number | null) => (ms === null ? 'unknown' : new Date(ms).toISOString())
  const lines = [
    r.active
      ? `RECOVERY IN PROGRESS since ${at(p.beganAt)} (${p.reason}); no rail sends anything`
      : `last recovery ended ${at(p.endedAt)} by ${p.endedBy}${p.endNote ? `: ${p.endNote}` : ''}`,
    `backup taken: ${at(p.backupTakenAt)}`,
  ]
  const c = p.lastCheck
  if (!c) lines.push('not checked against the rails yet')
  else {
    lines.push(`last check ${at(c.checkedAt)}:`)
    for (const a of c.adopted) lines.push(`  taken up: ${a.txnId} was already paid on ${a.rail} (${a.ref})`)
    for (const o of c.orphans)
      lines.push(
        `  ${o.rail}: ${o.reason} ${o.amount} ${o.ccy} ref ${o.ref ?? '-'}${o.txnId ? ` txn ${o.txnId}` : ''}`,
      )
    for (const u of c.unread) lines.push(`  ${u.rail}: not read (${u.note})`)
    if (!c.orphans.length && !c.unread.length) lines.push('  every rail read and matched')
  }
  return lines.join('\n')
}

/** Backup of the embedded engine, restore into a stopped service, and recovery after a restore. */
export const backupCommands: Commands = {
  async backup({ rest, flags, print }) {
    const file = rest[0] ?? (typeof flags.out === 'string' ? flags.out : undefined)
    if (!file) throw new CliError('svcpay backup FILE')
    if (existsSync(file)) throw new CliError(`${file} exists: name a new file`)
    const res = await send('POST', '/admin/backup', {})
    if (!res.ok) {
      const text = await res.text()
      let json = {}
      try {
        json = JSON.parse(text)
      } catch {
        // Not JSON: the refusal says the text.
      }
      throw refusal(res, json, text)
    }
    if (!res.body) throw new CliError('the server sent no backup')
    await writeArchiveFile(Readable.fromWeb(res.body as any), file)
    print({ file }, `backup written to ${file}`)
  },

  async restore({ rest, flags, print }) {
    const file = rest[0]
    if (!file) throw new CliError('svcpay restore FILE')
    const config = loadConfig()
    if (config.databaseUrl)
      throw new CliError(
        'DATABASE_URL is set: restore PostgreSQL with pg_restore, then run `svcpay recovery begin` (docs/operations.md)',
      )
    if (!existsSync(file)) throw new CliError(`${file}: no such file`)
    // The service must be stopped: the embedded database is open in its process.
    const base = (process.env.SVCPAY_URL || `http://localhost:${config.port}`).replace(/\/$/, '')
    const running = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(2_000) }).then(
      () => true,
      () => false,
    )
    if (running && flags['service-stopped'] !== true)
      throw new CliError(
        `svcpay answers at ${base}: stop the service before restoring (or --service-stopped)`,
      )
    let restored
    try {
      restored = await restorePglite(createReadStream(file), config.dataDir, Date.now())
    } catch (err) {
      if (err instanceof BackupError) throw new CliError(err.message)
      throw err
    }
    // The restored database learns it was restored: it starts in recovery.
    const db = await createPgliteDb(config.dataDir)
    try {
      await migrate(db)
      await beginRecovery(db, { reason: 'restore', backupTakenAt: restored.header.takenAt, now: Date.now() })
    } finally {
      await db.close()
    }
    print(
      { restored: file, takenAt: restored.header.takenAt, movedAside: restored.movedAside ?? null },
      [
        `restored ${file} (taken ${new Date(restored.header.takenAt).toISOString()}) into ${config.dataDir}`,
        restored.movedAside ? `the database it replaced is in ${restored.movedAside}` : '',
        'the service starts in recovery: no rail sends anything until the rails are reconciled (svcpay recovery status)',
      ]
        .filter(Boolean)
        .join('\n'),
    )
  },

  async 'recovery status'({ print }) {
    const r = await call<RecoveryAnswer>('GET', '/admin/recovery')
    print(r, formatRecovery(r))
    if (r.active) process.exitCode = 1
  },

  async 'recovery begin'({ flags, print }) {
    const taken =
      typeof flags['backup-taken-at'] === 'string' ? Date.parse(flags['backup-taken-at']) : undefined
    if (taken !== undefined && !Number.isFinite(taken))
      throw new CliError('--backup-taken-at must be a date and time (2026-12-03T10:00:00Z)')
    if (flags.local === true) {
      // Before the restored service starts (the documented PostgreSQL procedure): straight into the
      // database, so that no worker can run before the period is open. Audited as the system.
      const config = loadConfig()
      const db = config.databaseUrl
        ? createPostgresDb(config.databaseUrl, { poolMax: 1 })
        : await createPgliteDb(config.dataDir)
      try {
        await migrate(db)
        const period = await db.tx(async (q) => {
          const p = await beginRecovery(q, {
            reason: 'operator',
            backupTakenAt: taken ?? null,
            now: Date.now(),
          })
          await writeAudit(q, {
            operatorId: SYSTEM_OPERATOR_ID,
            operatorEmail: SYSTEM_OPERATOR_ID,
            action: 'recovery.begin',
            target: `recovery=${p.id}`,
            before: null,
            after: p,
            clientIp: null,
            requestId: null,
          })
          return p
        })
        const r: RecoveryAnswer = { active: true, recovery: period }
        return print(r, formatRecovery(r))
      } finally {
        await db.close()
      }
    }
    const r = await call<RecoveryAnswer>(
      'POST',
      '/admin/recovery/begin',
      taken === undefined ? {} : { backupTakenAt: taken },
    )
    print(r, formatRecovery(r))
  },

  async 'recovery check'({ print }) {
    const r = await call<RecoveryAnswer>('POST', '/admin/recovery/check', {})
    print(r, formatRecovery(r))
    if (r.active) process.exitCode = 1
  },

  async 'recovery end'({ flags, print }) {
    const r = await call<RecoveryAnswer>('POST', '/admin/recovery/end', { note: need(flags, 'note') })
    print(r, formatRecovery(r))
  },
}
