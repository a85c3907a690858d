import { loadConfig } from '../config/config.js'
import { readAdminToken } from '../config/local-secrets.js'
import { createPgliteDb, createPostgresDb } from '../db/db.js'
import { migrate } from '../db/migrate.js'

/**
 * The operator command line. It talks to a running server's admin API (so it works while the
 * embedded database is open), found at SVCPAY_URL or http://localhost:$PORT with the admin token
 * from ADMIN_TOKEN or DATA_DIR. `migrate` alone opens the database directly.
 */
const HELP = `svcpay <command>

  account create --name NAME [--parent ACCOUNT_ID] [--tier premium] [--json]
  account list [--json]
  account tier ACCOUNT_ID standard|premium
  key create --account ACCOUNT_ID [--json]
  key revoke API_KEY
  ledger check
  sandbox fund --account ACCOUNT_ID --ccy BTC --amount 0.5
  sandbox ln-pay PAYMENT_REQUEST
  sandbox ln-invoice [--amount BTC] [--outcome succeed|fail]
  sandbox onchain-send ADDRESS AMOUNT_BTC
  sandbox mine [BLOCKS]
  webhook deliveries --account ACCOUNT_ID
  webhook redeliver DELIVERY_ID
  migrate

Environment: SVCPAY_URL (default http://localhost:$PORT), ADMIN_TOKEN (default: DATA_DIR/admin-token).`

export class CliError extends Error {}

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

async function call(method: string, path: string, body?: unknown): Promise<any> {
  const config = loadConfig()
  const base = (process.env.SVCPAY_URL || `http://localhost:${config.port}`).replace(/\/$/, '')
  const token = readAdminToken(config)
  if (!token) throw new CliError(`No admin token: set ADMIN_TOKEN or start the server once with DATA_DIR=${config.dataDir}`)
  let res: Response
  try {
    res = await fetch(base + path, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    })
  } catch {
    throw new CliError(`Cannot reach svcpay at ${base}: is the server running? (set SVCPAY_URL)`)
  }
  const text = await res.text()
  const json = text ? JSON.parse(text) : {}
  if (!res.ok) throw new CliError(`${json.error ?? res.status}: ${json.message ?? text}`)
  return json
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
        r.data.map((a: any) => `${a.id}  ${a.tier.padEnd(8)}  ${a.parentId ?? '-'}  ${a.displayName}`).join('\n') || '(none)',
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
    case 'webhook deliveries': {
      const r = await call('GET', `/admin/webhook/deliveries?accountId=${encodeURIComponent(need(flags, 'account'))}`)
      return print(
        r.data,
        r.data.map((d: any) => `${d.id}  ${d.status.padEnd(9)}  attempts=${d.attempts}  ${d.txnState}  ${d.txnId}`).join('\n') ||
          '(none)',
      )
    }
    case 'webhook redeliver': {
      if (!rest[0]) throw new CliError('usage: svcpay webhook redeliver DELIVERY_ID')
      const r = await call('POST', `/admin/webhook/deliveries/${encodeURIComponent(rest[0])}/redeliver`)
      return print(r, `queued delivery ${r.data?.id ?? rest[0]}`)
    }
    case 'migrate': {
      const config = loadConfig()
      const db = config.databaseUrl ? createPostgresDb(config.databaseUrl) : await createPgliteDb(config.dataDir)
      const applied = await migrate(db)
      await db.close()
      return print({ applied }, applied.length ? `applied ${applied.join(', ')}` : 'up to date')
    }
    default:
      out(HELP)
      if (group && group !== 'help' && flags.help !== true) process.exitCode = 2
  }
}

const isMain = process.argv[1] && /cli[\\/]main\.ts$|bin[\\/]svcpay(\.js)?$/.test(process.argv[1])
if (isMain) {
  run(process.argv.slice(2), (s) => console.log(s)).catch((err) => {
    console.error(err instanceof CliError ? `svcpay: ${err.message}` : err)
    process.exitCode = 1
  })
}
