import { CliError, need, type Command, type Commands } from './args.js'
import { call, type DataList } from './client.js'

interface ApprovalRow {
  txnId: string
  type: string
  status: string
  /** A threshold gone over, or another rule's reason in words (src/approvals/policy.ts). */
  reasons: ({ amount: string; ccy: string; threshold: string } | { rule: string; text: string })[]
  expiresAt: number
  review?: { email: string } | null
}

interface Decided {
  txnId: string
  status: string
  review?: unknown
  txnState: string
}

// Reviewing, approving and rejecting differ in the verb, which is also the route's last segment.
const decide: Command = async ({ verb, rest, flags, print }) => {
  if (!rest[0]) throw new CliError(`usage: svcpay approvals ${verb} TXN_ID`)
  const body =
    verb === 'reject'
      ? { reason: need(flags, 'reason') }
      : flags.note === undefined
        ? {}
        : { note: need(flags, 'note') }
  const r = await call<Decided>('POST', `/admin/approvals/${encodeURIComponent(rest[0])}/${verb}`, body)
  return print(
    r,
    `${r.txnId}: approval ${r.status}${r.review && verb === 'review' ? ' (reviewed)' : ''}, transaction ${r.txnState}`,
  )
}

/** Four-eyes approval (issue 19): docs/operators.md, "Approvals". */
export const approvalCommands: Commands = {
  async 'approvals list'({ flags, print }) {
    const status = flags.status === undefined ? 'waiting' : need(flags, 'status')
    const r = await call<DataList<ApprovalRow>>(
      'GET',
      `/admin/approvals?status=${encodeURIComponent(status)}&limit=200`,
    )
    return print(
      r.data,
      r.data
        .map(
          (a) =>
            `${a.txnId}  ${a.type.padEnd(12)}  ${a.status.padEnd(8)}  ` +
            a.reasons
              .map((x) => ('rule' in x ? x.text : `${x.amount} ${x.ccy} > ${x.threshold}`))
              .join(', ') +
            `  until ${new Date(a.expiresAt).toISOString()}` +
            (a.review ? `  reviewed by ${a.review.email}` : ''),
        )
        .join('\n') || '(none)',
    )
  },
  'approvals review': decide,
  'approvals approve': decide,
  'approvals reject': decide,
}
