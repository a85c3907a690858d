import type { ConsoleDeps } from './deps.js'
import { asTxnId } from '../shared/ids.js'
import { listStuck } from '../transactions/stuck.js'
import { accountIdsOf } from '../transactions/reads.js'
import { awaitingApproval } from './approvals.js'
import { listCredits } from '../payins/credits.js'
import { listSkippedCredits, SKIPPED_SHOWN_MS } from '../payouts/vnd/skipped-credits.js'
import { formatMinor } from '../shared/amount.js'
import { CONSOLE_BASE } from './nav.js'
import { latestRecovery, openRecovery } from '../reconcile/recovery.js'
import type { Localized } from './strings.js'
import { unreviewedHits } from './screening.js'

/**
 * What the overview lists under "needs attention": one section per kind of trouble, each read by
 * the service that owns it. Approvals (four-eyes, issue 19) add their section by appending to
 * ATTENTION_SECTIONS; nothing else in the overview changes.
 */
export interface AttentionRow {
  /** The transaction; empty for a row about something else (then `ref` names it). */
  txnId: string
  /** Empty when no account is known yet (a bank credit in suspense). */
  accountId: string
  /** What a row that is not about a transaction is about (a bank credit's id), and its page. */
  ref?: { id: string; href: string }
  state: string
  /** Since when it has been so, epoch ms. */
  since: number
  /** A short code or text: why it is listed; words in both languages when it has any. */
  why: string | Localized<string>
}

export interface AttentionSection {
  key: string
  heading: Localized<string>
  /** What the list is empty of, shown when there is nothing. */
  none: Localized<string>
  read(c: ConsoleDeps, now: number, limit: number): Promise<{ total: number; rows: AttentionRow[] }>
}

const stuck: AttentionSection = {
  key: 'stuck',
  heading: { en: 'Stuck transactions', vi: 'Giao dịch bị kẹt' },
  none: { en: 'No transaction is stuck.', vi: 'Không có giao dịch nào bị kẹt.' },
  async read(c, now, limit) {
    const page = await listStuck(c.db, c.kinds, c.config.railOps, now, { page: 1, limit })
    return {
      total: page.pagination.total,
      rows: page.data.map((s) => ({
        txnId: s.txnId,
        accountId: s.accountId,
        state: s.state,
        since: s.since,
        why: `${s.rail}: ${s.reason}${s.lastError ? ` (${s.lastError})` : ''}`,
      })),
    }
  },
}

const failedDeliveries: AttentionSection = {
  key: 'failed-deliveries',
  heading: { en: 'Failed webhook deliveries', vi: 'Gửi webhook thất bại' },
  none: { en: 'No webhook delivery has failed.', vi: 'Không có lần gửi webhook nào thất bại.' },
  async read(c, _now, limit) {
    const page = await c.webhooks.listDeliveries({}, { status: 'failed', limit: String(limit) })
    const accounts = await accountsOf(
      c,
      page.data.map((d) => d.txnId),
    )
    return {
      total: page.pagination.total,
      rows: page.data.map((d) => ({
        txnId: d.txnId,
        accountId: accounts.get(d.txnId) ?? '',
        state: d.txnState,
        since: d.updatedAt,
        why: `#${d.id}: ${d.attempts} × ${d.lastError ?? d.lastStatus ?? '?'}`,
      })),
    }
  },
}

function accountsOf(c: ConsoleDeps, txnIds: string[]): Promise<Map<string, string>> {
  return accountIdsOf(c.db, txnIds.map(asTxnId))
}

/**
 * Bank transfers in that matched no receive (src/payins/credits.ts), waiting in suspense for an
 * operator to assign them (POST /admin/bank-credits/:creditId/assign). The payer's name and account
 * are personal data and are not listed; the transfer's description is, as the bank gave it.
 */
const unassignedCredits: AttentionSection = {
  key: 'bank-credits',
  heading: { en: 'Bank transfers to assign', vi: 'Chuyển khoản chưa xác định' },
  none: { en: 'Every bank transfer in has been matched.', vi: 'Mọi chuyển khoản đến đều đã được khớp.' },
  async read(c, _now, limit) {
    const page = await listCredits(c.db, 'unassigned', limit)
    return {
      total: page.total,
      rows: page.rows.map((r) => ({
        txnId: '',
        accountId: '',
        ref: { id: r.creditId, href: `${CONSOLE_BASE}/bank-credits` },
        state: r.status,
        since: r.bookedAt,
        why: `${formatMinor(r.amountMinor, 'VND')} VND: ${JSON.stringify(r.memo.slice(0, 120))}`,
      })),
    }
  },
}

/**
 * Credits the bank partner reported that could not be recorded (src/payouts/vnd/skipped-credits.ts), seen in the
 * last week: left out of the statement or refused as a notification. Only the partner's id and the
 * field at fault are shown, never the item's amount or payer; the operator takes it up with the
 * partner.
 */
const skippedCredits: AttentionSection = {
  key: 'bank-credits-skipped',
  heading: { en: 'Bank credits that could not be read', vi: 'Khoản ghi có không đọc được' },
  none: {
    en: 'Every credit the bank reported could be read.',
    vi: 'Mọi khoản ghi có ngân hàng báo đều đọc được.',
  },
  async read(c, now, limit) {
    const page = await listSkippedCredits(c.db, now - SKIPPED_SHOWN_MS, limit)
    return {
      total: page.total,
      rows: page.rows.map((r) => ({
        txnId: '',
        accountId: '',
        ref: { id: r.bankRef ?? '(no valid id)', href: `${CONSOLE_BASE}/bank-credits` },
        state: `skipped: ${r.problem}`,
        since: r.firstSeen,
        why: `${r.source}, ${r.problem}, seen ${r.times} time(s)`,
      })),
    }
  },
}

/** Appended to by later work (approvals awaiting a second operator). */
/**
 * Recovery after a restore (src/reconcile/recovery.ts): while a period is open, one row saying so
 * (no rail sends anything), then what its last check found: each payment a rail made or received
 * that the restored database does not explain, as the rail said it (amount, reference), each rail
 * that could not be read, and each send taken up because the rail had already made it. After the
 * period ended, the rows of its last check stay listed for a day, so that what an operator ended it
 * over is still in sight.
 */
const RECOVERY_SHOWN_AFTER_END_MS = 86_400_000

const recovery: AttentionSection = {
  key: 'recovery',
  heading: { en: 'Recovery after a restore', vi: 'Khôi phục sau khi phục hồi dữ liệu' },
  none: { en: 'The database is not in recovery.', vi: 'Cơ sở dữ liệu không ở chế độ khôi phục.' },
  async read(c, now, limit) {
    const period = (await openRecovery(c.db)) ?? (await latestRecovery(c.db))
    if (!period) return { total: 0, rows: [] }
    const open = period.endedAt === null
    if (!open && now - period.endedAt! > RECOVERY_SHOWN_AFTER_END_MS) return { total: 0, rows: [] }
    const href = `${CONSOLE_BASE}/reconciliation`
    const at = period.lastCheckAt ?? period.beganAt
    const rows: AttentionRow[] = []
    if (open)
      rows.push({
        txnId: '',
        accountId: '',
        ref: { id: `recovery ${period.id}`, href },
        state: 'recovery',
        since: period.beganAt,
        why: {
          en: `restored from a backup of ${period.backupTakenAt === null ? 'unknown time' : new Date(period.backupTakenAt).toISOString()}: no rail sends anything until every rail is matched or an operator ends recovery`,
          vi: `đã phục hồi từ bản sao lưu: không kênh nào gửi tiền cho đến khi mọi kênh khớp hoặc người vận hành kết thúc khôi phục`,
        },
      })
    const check = period.lastCheck
    for (const o of check?.orphans ?? [])
      rows.push({
        txnId: o.txnId ?? '',
        accountId: '',
        ref: { id: o.ref ?? '(no reference)', href },
        state: o.side === 'rail' ? 'on rail only' : o.side === 'ledger' ? 'in ledger only' : 'amounts differ',
        since: o.at || at,
        why: `${o.rail}: ${o.reason}, the rail says ${o.railAmount ?? o.amount} ${o.ccy}`,
      })
    for (const u of check?.unread ?? [])
      rows.push({
        txnId: '',
        accountId: '',
        ref: { id: u.rail, href },
        state: 'not read',
        since: at,
        why: `${u.rail}: ${u.note}`,
      })
    for (const a of check?.adopted ?? [])
      rows.push({
        txnId: a.txnId,
        accountId: '',
        state: 'taken up',
        since: at,
        why: `${a.rail}: already paid before the restore (${a.ref}); completed, not sent again`,
      })
    return { total: rows.length, rows: rows.slice(0, limit) }
  },
}

export const ATTENTION_SECTIONS: AttentionSection[] = [
  recovery,
  stuck,
  failedDeliveries,
  awaitingApproval,
  unassignedCredits,
  skippedCredits,
  unreviewedHits,
]
