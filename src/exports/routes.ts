import { accountExists } from '../accounts/reads.js'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Type, type Static } from 'typebox'
import type { Db } from '../db/db.js'
import { writeAudit } from '../operators/audit.js'
import { toMs } from '../admin/audit-routes.js'
import { csvStream } from '../shared/csv.js'
import { ApiError, notFound } from '../shared/errors.js'
import {
  LEDGER_ENTRY_COLUMNS,
  ledgerEntryRows,
  TRANSACTION_COLUMNS,
  transactionRows,
  type ExportRange,
} from './exports.js'

/**
 * `GET /admin/exports/transactions.csv` and `/admin/exports/ledger-entries.csv` (permission
 * `exports.read`): CSV for accountants over `from` (inclusive) to `to` (exclusive), of one account
 * (`accountId`) or of the whole service. Each export is written to the audit trail before the first
 * row leaves, since it is data leaving the service; the rows then stream a batch at a time. A HEAD
 * (Fastify answers it from the GET route) checks the range and sends the headers only, unaudited.
 */
export const EXPORT_KINDS = {
  transactions: { columns: TRANSACTION_COLUMNS, rows: transactionRows },
  'ledger-entries': { columns: LEDGER_ENTRY_COLUMNS, rows: ledgerEntryRows },
} as const
export type ExportKind = keyof typeof EXPORT_KINDS

const time = Type.String({
  minLength: 1,
  maxLength: 40,
  description: 'ISO 8601 date or time, or epoch milliseconds',
})
const querystring = Type.Object({
  from: time,
  to: time,
  // Empty is the whole service, as a form's empty field sends it.
  accountId: Type.Optional(Type.String({ maxLength: 64 })),
})

type ExportQuery = Static<typeof querystring>

export function exportRoutes(fastify: FastifyInstance, deps: { db: Db }): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  for (const kind of Object.keys(EXPORT_KINDS) as ExportKind[]) {
    app.get(
      `/admin/exports/${kind}.csv`,
      { schema: { hide: true, tags: ['Admin'], querystring } },
      async (request, reply) => sendExport(deps.db, kind, request.query, request, reply),
    )
  }
}

/** Parses and checks the range of an export's query string (400 when malformed, 404 for no account). */
export async function exportRange(db: Db, query: ExportQuery): Promise<ExportRange> {
  const fromMs = toMs(query.from, 'from')
  const toMsValue = toMs(query.to, 'to')
  if (toMsValue <= fromMs)
    throw new ApiError('invalid_request', 'to must be later than from', [{ field: 'to', issue: 'invalid' }])
  const accountId = query.accountId?.trim() || undefined
  if (accountId !== undefined) {
    if (!(await accountExists(db, accountId))) throw notFound('Account')
  }
  return { fromMs, toMs: toMsValue, ...(accountId !== undefined ? { accountId } : {}) }
}

async function sendExport(
  db: Db,
  kind: ExportKind,
  query: ExportQuery,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const range = await exportRange(db, query)
  const actor = request.operator
  if (!actor) throw new Error('an export ran without the admin guard')
  const from = new Date(range.fromMs).toISOString()
  const to = new Date(range.toMs).toISOString()
  const name = `svcpay-${kind}-${range.accountId ?? 'all'}-${from.slice(0, 10)}-${to.slice(0, 10)}.csv`
  reply
    .header('content-type', 'text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${name.replace(/[^A-Za-z0-9_.-]/g, '_')}"`)
    .header('cache-control', 'no-store')
    .header('x-content-type-options', 'nosniff')
  // A HEAD is answered with the GET's headers and no rows: nothing leaves, so nothing is audited.
  if (request.method === 'HEAD') return reply.send()
  await writeAudit(db, {
    operatorId: actor.operatorId,
    operatorEmail: actor.email,
    action: `export.${kind}`,
    target: range.accountId === undefined ? 'service' : `accountId=${range.accountId}`,
    before: null,
    after: { from, to, accountId: range.accountId ?? null },
    clientIp: request.ip,
    requestId: String(request.id),
  })
  const { columns, rows } = EXPORT_KINDS[kind]
  return reply.send(csvStream(columns, rows(db, range)))
}
