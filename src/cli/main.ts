import { createWriteStream, existsSync } from 'node:fs'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { loadConfig } from '../config/config.js'
import { readAdminToken } from '../config/local-secrets.js'
import { createPgliteDb, createPostgresDb } from '../db/db.js'
import { migrate } from '../db/migrate.js'
import { formatRailsCheck, type RailsCheckResult } from '../rails/check.js'
import { randomUUID } from 'node:crypto'
import { formatReconciliation, type ReconciliationReport } from '../reconcile/reconcile.js'
import { serviceKinds } from '../kinds.js'

/**
 * The operator command line. It talks to a running server's admin API (so it works while the
 * embedded database is open), found at SVCPAY_URL or http://localhost:$PORT with the admin token
 * from ADMIN_TOKEN or DATA_DIR. `migrate` alone opens the database directly.
 */
const HELP = `svcpay <command>

  serve                       start the compiled server (build it first: npm run build)
  account create --name NAME [--parent ACCOUNT_ID] [--tier premium] [--json]
  account list [--json]
  account tier ACCOUNT_ID standard|premium
  key create --account ACCOUNT_ID [--json]
  key revoke API_KEY
  ledger check
  rails check [--json]                 (exit 1 when any rail is not ready)
  reconcile [--record] [--json]        (exit 1 on a deficit or an orphan, 3 when a rail is unknown;
                                        --record counts the run towards the brake, audited)
  capital add --rail tron|bank|lightning|onchain --amount AMOUNT --note TEXT [--reference REF] [--json]
  capital withdraw --rail RAIL --amount AMOUNT --note TEXT [--reference REF] [--json]
  capital list [--json]              (operator money on the rails, booked against equity)
  transactions stuck [--page N] [--limit N] [--json]
  sandbox fund --account ACCOUNT_ID --ccy BTC --amount 0.5
  sandbox ln-pay PAYMENT_REQUEST
  sandbox ln-invoice [--amount BTC] [--outcome succeed|fail]
  sandbox onchain-send ADDRESS AMOUNT_BTC
  sandbox mine [BLOCKS]
  sandbox vnd-transfer --memo MEMO --amount DONG   (a customer's bank transfer in, VND=sandbox)
  credits list [--status unassigned|assigned|matched|deposit] [--json]
  credits assign CREDIT_ID --account ACCOUNT_ID [--txn TXN_ID] --reason TEXT [--json]
  onchain bumpfee TXN_ID [--rate SAT_PER_VB]
  onchain reorgs [--json]
  webhook deliveries --account ACCOUNT_ID
  webhook redeliver DELIVERY_ID
  operator create --email EMAIL --role viewer|support|finance|compliance|admin [--json]
  operator list [--json]
  operator disable OPERATOR_ID|EMAIL
  approvals list [--status waiting|approved|rejected|expired] [--json]
  approvals review|approve TXN_ID [--note TEXT]   (as the operator system: it may not approve what it reviewed)
  approvals reject TXN_ID --reason TEXT
  operator enable OPERATOR_ID|EMAIL
  operator role OPERATOR_ID|EMAIL viewer|support|finance|compliance|admin
  operator reset OPERATOR_ID|EMAIL     (new set-up secret; password and second factor set up again)
  operator signout OPERATOR_ID|EMAIL   (ends every session of the operator)
  export transactions|ledger-entries --from DATE --to DATE [--account ACCOUNT_ID] [--out FILE]
                                       (CSV; from inclusive, to exclusive; stdout without --out)
  migrate

Environment: SVCPAY_URL (default http://localhost:$PORT), ADMIN_TOKEN (default: DATA_DIR/admin-token).`

export class CliError extends Error {}

/** The currency each rail holds (the kind registry's `railCurrencies`, src/kinds.ts). */
const RAIL_CCY: Record<string, string> = Object.fromEntries(
  serviceKinds().railCurrencies.map((r) => [r.rail, r.ccy]),
)

interface Parsed {
  positional: string[]
  flags: Record<string, string | true>
}

export function parseArgs(argv: string[]): Parsed {
  const positional: string[] = []
  const flags: Record<string, string | true> = {}
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!
    if (a.startsWith('--')) {
      const name = a.slice(2)
      const next = argv[i + 1]
      if (next !== undefined && !next.startsWith('--') && !['json', 'help'].includes(name)) {
        flags[name] = next
        i++
      } else flags[name] = true
    } else positional.push(a)
  }
  return { positional, flags }
}

function need(flags: Parsed['flags'], name: string): string {
  const v = flags[name]
  if (typeof v !== 'string' || !v) throw new CliError(`--${name} is required`)
  return v
}

async function send(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  const config = loadConfig()
  const base = (process.env.SVCPAY_URL || `http://localhost:${config.port}`).replace(/\/$/, '')
  const token = readAdminToken(config)
  if (!token)
    throw new CliError(
      `No admin token: set ADMIN_TOKEN or start the server once with DATA_DIR=${config.dataDir}`,
    )
  try {
    return await fetch(base + path, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body: body ? JSON.stringify(body) : undefined,
    })
  } catch {
    throw new CliError(`Cannot reach svcpay at ${base}: is the server running? (set SVCPAY_URL)`)
  }
}

async function call(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<any> {
  const res = await send(method, path, body, headers)
  const text = await res.text()
  const json = text ? JSON.parse(text) : {}
  if (!res.ok) throw new CliError(`${json.error ?? res.status}: ${json.message ?? text}`)
  return json
}

/** An operator's id, given as the id or the email address (looked up in the list). */
async function operatorIdOf(who: string | undefined, usage: string): Promise<string> {
  if (!who) throw new CliError(`usage: svcpay operator ${usage}`)
  if (!who.includes('@')) return who
  const list = await call('GET', '/admin/operators')
  const found = list.data.find((o: any) => o.email === who.trim().toLowerCase())
  if (!found) throw new CliError(`no operator with email ${who}`)
  return found.id
}

export async function run(argv: string[], out: (s: string) => void): Promise<void> {
  const { positional, flags } = parseArgs(argv)
  const [group, verb, ...rest] = positional
  const json = flags.json === true
  const print = (value: unknown, human: string) => out(json ? JSON.stringify(value) : human)
  switch (`${group ?? ''} ${verb ?? ''}`.trim()) {
    case 'account create': {
      const tier = flags.tier === undefined ? undefined : need(flags, 'tier')
      const r = await call('POST', '/admin/accounts', {
        name: need(flags, 'name'),
        ...(flags.parent ? { parentId: need(flags, 'parent') } : {}),
        ...(tier ? { tier } : {}),
      })
      const summary = { accountId: r.accountId, apiKey: r.apiKey, apiSecret: r.apiSecret }
      return print(
        summary,
        `accountId:  ${r.accountId}\nAPI key:    ${r.apiKey}\nAPI secret: ${r.apiSecret}  (shown once; keep it)`,
      )
    }
    case 'account list': {
      const r = await call('GET', '/admin/accounts')
      return print(
        r.data,
        r.data
          .map((a: any) => `${a.id}  ${a.tier.padEnd(8)}  ${a.parentId ?? '-'}  ${a.displayName}`)
          .join('\n') || '(none)',
      )
    }
    case 'account tier': {
      const [accountId, tier] = rest
      if (!accountId || !tier) throw new CliError('usage: svcpay account tier ACCOUNT_ID standard|premium')
      const r = await call('PUT', `/admin/accounts/${encodeURIComponent(accountId)}/tier`, { tier })
      return print(r, `${r.accountId} is now ${r.tier}`)
    }
    case 'key create': {
      const r = await call('POST', '/admin/keys', { accountId: need(flags, 'account') })
      return print(
        { accountId: r.accountId, apiKey: r.apiKey, apiSecret: r.apiSecret },
        `API key:    ${r.apiKey}\nAPI secret: ${r.apiSecret}  (shown once; keep it)`,
      )
    }
    case 'key revoke': {
      if (!rest[0]) throw new CliError('usage: svcpay key revoke API_KEY')
      const r = await call('POST', `/admin/keys/${encodeURIComponent(rest[0])}/revoke`)
      return print(r, `${r.apiKey} revoked`)
    }
    case 'ledger check': {
      const r = await call('GET', '/admin/ledger/check')
      print(r, r.ok ? 'books balance' : `BOOKS DO NOT BALANCE: ${JSON.stringify(r)}`)
      if (!r.ok) process.exitCode = 1
      return
    }
    case 'rails check': {
      const r = (await call('GET', '/admin/rails')) as RailsCheckResult
      print(r, formatRailsCheck(r))
      if (!r.ok) process.exitCode = 1
      return
    }
    case 'reconcile': {
      // A reading by default; --record makes it a run the brake counts (docs/reconciliation.md).
      const r = (
        flags.record === true
          ? await call('POST', '/admin/reconciliation/run', {})
          : await call('GET', '/admin/reconciliation')
      ) as ReconciliationReport
      print(r, formatReconciliation(r))
      // A deficit or orphan first; a rail that could not be read is never taken for a clean one.
      if (!r.ok || r.orphans.length > 0) process.exitCode = 1
      else if (r.incomplete) process.exitCode = 3
      return
    }
    // Operator capital (issue 18): see docs/reconciliation.md "Operator capital".
    case 'capital add':
    case 'capital withdraw': {
      const rail = need(flags, 'rail')
      const ccy = flags.ccy === undefined ? RAIL_CCY[rail] : need(flags, 'ccy').toUpperCase()
      if (!ccy) throw new CliError('--rail: one of tron, bank, lightning, onchain')
      // The same --reference books once however often the command is run; without one, a fresh
      // reference is made, and printed so that a retry can reuse it.
      const reference = flags.reference === undefined ? `cli-${randomUUID()}` : need(flags, 'reference')
      const r = await call(
        'POST',
        '/admin/capital',
        {
          rail,
          ccy,
          direction: verb === 'add' ? 'in' : 'out',
          amount: need(flags, 'amount'),
          note: need(flags, 'note'),
        },
        { 'idempotency-key': reference },
      )
      return print(
        r,
        `${r.replayed ? 'already booked' : 'booked'}: ${r.direction === 'in' ? 'put on' : 'taken off'} ${r.rail}: ${r.amount} ${r.ccy} (reference ${r.reference})`,
      )
    }
    case 'capital list': {
      const r = await call('GET', '/admin/capital')
      return print(
        r.data,
        r.data
          .map(
            (c: any) =>
              `${new Date(c.at).toISOString()}  ${c.rail.padEnd(9)}  ${c.direction === 'in' ? '+' : '-'}${c.amount} ${c.ccy}  ${c.reference}  ${c.operatorId}  ${c.note}`,
          )
          .join('\n') || '(none)',
      )
    }
    case 'transactions stuck': {
      const query = new URLSearchParams()
      if (flags.page !== undefined) query.set('page', need(flags, 'page'))
      if (flags.limit !== undefined) query.set('limit', need(flags, 'limit'))
      const r = await call('GET', `/admin/transactions/stuck${query.size ? `?${query}` : ''}`)
      const when = (ms: number | null) => (ms === null ? '-' : new Date(ms).toISOString())
      return print(
        r,
        r.data
          .map(
            (t: any) =>
              `${t.txnId}  ${t.rail.padEnd(9)}  ${t.state.padEnd(10)}  ${t.reason.padEnd(12)}  since ${when(t.since)}  ` +
              `failures=${t.failures} lastError=${t.lastError ?? '-'} next=${when(t.nextRetryAt)}`,
          )
          .join('\n') + `\n(${r.data.length} of ${r.pagination.total} stuck)`,
      )
    }
    case 'sandbox fund': {
      const r = await call('POST', '/admin/sandbox/fund', {
        accountId: need(flags, 'account'),
        ccy: need(flags, 'ccy').toUpperCase(),
        amount: need(flags, 'amount'),
      })
      return print(r, `funded: ${r.data.ccy} wallet ${r.data.id} now ${r.data.amount}`)
    }
    case 'sandbox ln-pay': {
      if (!rest[0]) throw new CliError('usage: svcpay sandbox ln-pay PAYMENT_REQUEST')
      const r = await call('POST', '/admin/sandbox/lightning/pay', { paymentRequest: rest[0] })
      return print(r, `paid: ${JSON.stringify(r)}`)
    }
    case 'sandbox ln-invoice': {
      const r = await call('POST', '/admin/sandbox/lightning/invoice', {
        ...(flags.amount ? { amount: need(flags, 'amount') } : {}),
        ...(flags.outcome ? { outcome: need(flags, 'outcome') } : {}),
      })
      return print(r, r.paymentRequest)
    }
    case 'sandbox onchain-send': {
      const [address, amount] = rest
      if (!address || !amount) throw new CliError('usage: svcpay sandbox onchain-send ADDRESS AMOUNT_BTC')
      const r = await call('POST', '/admin/sandbox/onchain/send', { address, amount })
      return print(r, `sent: txid ${r.txid}`)
    }
    case 'sandbox mine': {
      const r = await call('POST', '/admin/sandbox/onchain/mine', { blocks: Number(rest[0] ?? 1) })
      return print(r, `mined to height ${r.height}`)
    }
    case 'sandbox vnd-transfer': {
      const r = await call('POST', '/admin/sandbox/vnd/transfer', {
        memo: need(flags, 'memo'),
        amount: need(flags, 'amount'),
      })
      return print(
        r,
        `transfer ${r.bankRef} of ${r.amount} VND: ${r.outcome}${r.txnId ? ` (${r.txnId})` : ''}`,
      )
    }
    case 'credits list': {
      const status = flags.status === undefined ? 'unassigned' : need(flags, 'status')
      const r = await call('GET', `/admin/bank-credits?status=${encodeURIComponent(status)}`)
      return print(
        r,
        r.data
          .map(
            (c: any) =>
              `${c.creditId}  ${new Date(c.bookedAt).toISOString()}  ${c.amount} VND  ${c.status}  ${JSON.stringify(c.memo)}`,
          )
          .join('\n') + `\n(${r.data.length} of ${r.total} ${status})`,
      )
    }
    case 'credits assign': {
      if (!rest[0])
        throw new CliError(
          'usage: svcpay credits assign CREDIT_ID --account ACCOUNT_ID [--txn TXN_ID] --reason TEXT',
        )
      const r = await call('POST', `/admin/bank-credits/${encodeURIComponent(rest[0])}/assign`, {
        accountId: need(flags, 'account'),
        ...(flags.txn !== undefined ? { txnId: need(flags, 'txn') } : {}),
        reason: need(flags, 'reason'),
      })
      return print(r, `assigned ${r.creditId} (${r.amount} VND) to ${r.accountId}: ${r.txnId}`)
    }
    case 'onchain bumpfee': {
      // A stuck on-chain send: its transaction is replaced (BIP 125) at a higher fee rate.
      if (!rest[0]) throw new CliError('usage: svcpay onchain bumpfee TXN_ID [--rate SAT_PER_VB]')
      const rate = flags.rate === undefined ? undefined : Number(need(flags, 'rate'))
      if (rate !== undefined && !(Number.isSafeInteger(rate) && rate >= 1))
        throw new CliError('--rate: a whole number of sat/vB')
      const r = await call(
        'POST',
        `/admin/onchain/sends/${encodeURIComponent(rest[0])}/bumpfee`,
        rate === undefined ? {} : { feeRate: rate },
      )
      return print(r, `${r.txnId}: ${r.replacedTxid} replaced by ${r.txid} at ${r.feeRateSatPerVb} sat/vB`)
    }
    case 'onchain reorgs': {
      const r = await call('GET', '/admin/onchain/reorgs')
      return print(
        r.data,
        r.data
          .map(
            (d: any) =>
              `${d.txnId}  ${d.txid}:${d.vout}  ${d.amountSats} sats  left the chain at ${new Date(d.reorgedAt).toISOString()}`,
          )
          .join('\n') || '(none)',
      )
    }
    case 'webhook deliveries': {
      const r = await call(
        'GET',
        `/admin/webhook/deliveries?accountId=${encodeURIComponent(need(flags, 'account'))}`,
      )
      return print(
        r.data,
        r.data
          .map(
            (d: any) => `${d.id}  ${d.status.padEnd(9)}  attempts=${d.attempts}  ${d.txnState}  ${d.txnId}`,
          )
          .join('\n') || '(none)',
      )
    }
    case 'webhook redeliver': {
      if (!rest[0]) throw new CliError('usage: svcpay webhook redeliver DELIVERY_ID')
      const r = await call('POST', `/admin/webhook/deliveries/${encodeURIComponent(rest[0])}/redeliver`)
      return print(r, `queued delivery ${r.data?.id ?? rest[0]}`)
    }
    // Operators (issue 19): named identities for the operator API; see docs/operators.md.
    case 'operator create': {
      const r = await call('POST', '/admin/operators', {
        email: need(flags, 'email'),
        role: need(flags, 'role'),
      })
      const summary = {
        operatorId: r.operator.id,
        email: r.operator.email,
        role: r.operator.role,
        setupSecret: r.setupSecret,
        setupExpiresAt: r.setupExpiresAt,
      }
      return print(
        summary,
        [
          `operator:      ${r.operator.id}  ${r.operator.email}  (${r.operator.role})`,
          `set-up secret: ${r.setupSecret}`,
          `               shown once, valid until ${new Date(r.setupExpiresAt).toISOString()}; give it to the operator`,
          `               over a channel of its own. Set-up: docs/operators.md ("Setting up the first operator").`,
        ].join('\n'),
      )
    }
    case 'operator list': {
      const r = await call('GET', '/admin/operators')
      return print(
        r.data,
        r.data
          .map((o: any) => `${o.id}  ${o.role.padEnd(10)}  ${o.status.padEnd(8)}  ${o.email}`)
          .join('\n') || '(none)',
      )
    }
    case 'operator disable': {
      const operatorId = await operatorIdOf(rest[0], 'disable OPERATOR_ID|EMAIL')
      const r = await call('POST', `/admin/operators/${encodeURIComponent(operatorId)}/disable`)
      return print(r, `${r.operator.id} (${r.operator.email}) disabled; its sessions have ended`)
    }
    // Four-eyes approval (issue 19): docs/operators.md, "Approvals".
    case 'approvals list': {
      const status = flags.status === undefined ? 'waiting' : need(flags, 'status')
      const r = await call('GET', `/admin/approvals?status=${encodeURIComponent(status)}&limit=200`)
      return print(
        r.data,
        r.data
          .map(
            (a: any) =>
              `${a.txnId}  ${a.type.padEnd(12)}  ${a.status.padEnd(8)}  ` +
              a.reasons.map((x: any) => `${x.amount} ${x.ccy} > ${x.threshold}`).join(', ') +
              `  until ${new Date(a.expiresAt).toISOString()}` +
              (a.review ? `  reviewed by ${a.review.email}` : ''),
          )
          .join('\n') || '(none)',
      )
    }
    case 'approvals review':
    case 'approvals approve':
    case 'approvals reject': {
      if (!rest[0]) throw new CliError(`usage: svcpay approvals ${verb} TXN_ID`)
      const body =
        verb === 'reject'
          ? { reason: need(flags, 'reason') }
          : flags.note === undefined
            ? {}
            : { note: need(flags, 'note') }
      const r = await call('POST', `/admin/approvals/${encodeURIComponent(rest[0])}/${verb}`, body)
      return print(
        r,
        `${r.txnId}: approval ${r.status}${r.review && verb === 'review' ? ' (reviewed)' : ''}, transaction ${r.txnState}`,
      )
    }
    case 'operator role': {
      const role = rest[1]
      const operatorId = await operatorIdOf(rest[0], 'role OPERATOR_ID|EMAIL ROLE')
      if (!role) throw new CliError('usage: svcpay operator role OPERATOR_ID|EMAIL ROLE')
      const r = await call('POST', `/admin/operators/${encodeURIComponent(operatorId)}/role`, { role })
      return print(r, `${r.operator.id} (${r.operator.email}) is now ${r.operator.role}`)
    }
    case 'operator enable': {
      const operatorId = await operatorIdOf(rest[0], 'enable OPERATOR_ID|EMAIL')
      const r = await call('POST', `/admin/operators/${encodeURIComponent(operatorId)}/enable`)
      return print(
        r,
        `${r.operator.id} (${r.operator.email}) enabled: ${r.operator.status}` +
          (r.operator.status === 'pending'
            ? ' (it never finished its set-up: reset it for a new secret)'
            : ''),
      )
    }
    case 'operator reset': {
      const operatorId = await operatorIdOf(rest[0], 'reset OPERATOR_ID|EMAIL')
      const r = await call('POST', `/admin/operators/${encodeURIComponent(operatorId)}/reset`)
      return print(
        {
          operatorId: r.operator.id,
          email: r.operator.email,
          setupSecret: r.setupSecret,
          setupExpiresAt: r.setupExpiresAt,
        },
        [
          `operator:      ${r.operator.id}  ${r.operator.email}: password and second factor cleared, sessions ended`,
          `set-up secret: ${r.setupSecret}`,
          `               shown once, valid until ${new Date(r.setupExpiresAt).toISOString()}; give it to the operator`,
          `               over a channel of its own, to set up a password and an authenticator again.`,
        ].join('\n'),
      )
    }
    case 'operator signout': {
      const operatorId = await operatorIdOf(rest[0], 'signout OPERATOR_ID|EMAIL')
      const r = await call('POST', '/admin/sessions/revoke-all', { operatorId })
      return print(r, `${r.operatorId}: ${r.revoked} session(s) ended`)
    }
    // Exports for accountants (issue 19): the CSV streams from the server to the file as it comes.
    case 'export transactions':
    case 'export ledger-entries': {
      const query = new URLSearchParams({ from: need(flags, 'from'), to: need(flags, 'to') })
      if (typeof flags.account === 'string') query.set('accountId', flags.account)
      const res = await send('GET', `/admin/exports/${verb}.csv?${query}`)
      if (!res.ok || !res.body) {
        const text = await res.text()
        const json = text.startsWith('{') ? JSON.parse(text) : {}
        throw new CliError(`${json.error ?? res.status}: ${json.message ?? text}`)
      }
      const file = typeof flags.out === 'string' ? flags.out : undefined
      await pipeline(Readable.fromWeb(res.body as any), file ? createWriteStream(file) : process.stdout, {
        end: file !== undefined,
      })
      if (file) out(`${verb} written to ${file}`)
      return
    }
    case 'serve': {
      // The compiled server (npm run build): beside this file when this file is compiled itself,
      // in dist/ when the command line runs from its sources.
      const here = import.meta.url
      const server = here.endsWith('.js')
        ? new URL('../server.js', here)
        : new URL('../../dist/src/server.js', here)
      if (!existsSync(server)) {
        throw new CliError(
          'No compiled server: run `npm run build` first (or `npm start` to run the sources)',
        )
      }
      await import(server.href)
      return
    }
    case 'migrate': {
      const config = loadConfig()
      const db = config.databaseUrl
        ? createPostgresDb(config.databaseUrl)
        : await createPgliteDb(config.dataDir)
      const applied = await migrate(db)
      await db.close()
      return print({ applied }, applied.length ? `applied ${applied.join(', ')}` : 'up to date')
    }
    default:
      out(HELP)
      if (group && group !== 'help' && flags.help !== true) process.exitCode = 2
  }
}

const isMain = process.argv[1] && /cli[\\/]main\.[jt]s$|bin[\\/]svcpay(\.js)?$/.test(process.argv[1])
if (isMain) {
  run(process.argv.slice(2), (s) => console.log(s)).catch((err) => {
    console.error(err instanceof CliError ? `svcpay: ${err.message}` : err)
    process.exitCode = 1
  })
}
