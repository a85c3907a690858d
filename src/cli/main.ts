import { CliError, parseArgs, type Commands } from './args.js'
import { accountCommands } from './accounts.js'
import { approvalCommands } from './approvals.js'
import { backupCommands } from './backup.js'
import { screeningCommands } from './screening.js'
import { capitalCommands } from './capital.js'
import { checkCommands } from './checks.js'
import { creditCommands } from './credits.js'
import { exportCommands } from './exports.js'
import { limitCommands } from './limits.js'
import { keyCommands } from './keys.js'
import { localCommands } from './local.js'
import { onchainCommands } from './onchain.js'
import { operatorCommands } from './operators.js'
import { sandboxCommands } from './sandbox.js'
import { transactionCommands } from './transactions.js'
import { webhookCommands } from './webhooks.js'

export { CliError, parseArgs } from './args.js'

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
  capital add --rail tron|bank|lightning|onchain|ethereum --amount AMOUNT --note TEXT [--reference REF] [--json]
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
  limits show ACCOUNT_ID [--json]
  limits set ACCOUNT_ID [--tier NAME|none] [--allow-list-only true|false] --reason TEXT
  limits override ACCOUNT_ID LIMIT AMOUNT [--method M] [--expires ISO_DATE] --reason TEXT
  limits unoverride ACCOUNT_ID LIMIT [--method M] --reason TEXT
  limits allow|disallow ACCOUNT_ID DESTINATION --reason TEXT   (tron:T…, btc:bc1…, ln:NODE_KEY, bank:CODE:ACCOUNT)
  screening load SOURCE FILE [--type bitcoin|lightning_node|lightning|tron|bank|ethereum]
                                       (replaces the list SOURCE: one destination a line, or type,value)
  screening clear SOURCE
  screening lists [--json]
  screening hits [--unreviewed] [--json]
  screening review|release HIT_ID      (release: a held deposit is credited)
  operator enable OPERATOR_ID|EMAIL
  operator role OPERATOR_ID|EMAIL viewer|support|finance|compliance|admin
  operator reset OPERATOR_ID|EMAIL     (new set-up secret; password and second factor set up again)
  operator signout OPERATOR_ID|EMAIL   (ends every session of the operator)
  export transactions|ledger-entries --from DATE --to DATE [--account ACCOUNT_ID] [--out FILE]
                                       (CSV; from inclusive, to exclusive; stdout without --out)
  backup FILE                          (the embedded database, while the server runs)
  restore FILE                         (into DATA_DIR, the server stopped; starts in recovery)
  recovery status|check [--json]       (exit 1 while in recovery)
  recovery begin [--backup-taken-at TIME]   (last step of a PostgreSQL restore)
  recovery end --note TEXT
  keys status [--json]                 (what each master key still seals; the token keys)
  keys rotate-master [--batch N]       (reseal every stored secret under MASTER_KEY, online; audited)
  keys rotate-jwt                      (a new token signing key; old tokens keep working; audited)
  migrate

Environment: SVCPAY_URL (default http://localhost:$PORT), ADMIN_TOKEN (default: DATA_DIR/admin-token).`

/** Every command, by `group verb` as typed; each group's are in its own module beside this one. */
const COMMANDS: Commands = {
  ...accountCommands,
  ...checkCommands,
  ...capitalCommands,
  ...transactionCommands,
  ...sandboxCommands,
  ...creditCommands,
  ...onchainCommands,
  ...webhookCommands,
  ...operatorCommands,
  ...approvalCommands,
  ...limitCommands,
  ...screeningCommands,
  ...exportCommands,
  ...keyCommands,
  ...localCommands,
  ...backupCommands,
}

export async function run(argv: string[], out: (s: string) => void): Promise<void> {
  const { positional, flags } = parseArgs(argv)
  const [group, verb, ...rest] = positional
  const json = flags.json === true
  const print = (value: unknown, human: string) => out(json ? JSON.stringify(value) : human)
  // Own keys only: a command named like an Object method ("constructor") is no command.
  const key = `${group ?? ''} ${verb ?? ''}`.trim()
  const command = Object.hasOwn(COMMANDS, key) ? COMMANDS[key] : undefined
  if (command) return command({ verb, rest, flags, out, print })
  // A command of one word whose next word is its argument (`backup FILE`).
  if (group && verb !== undefined && Object.hasOwn(COMMANDS, group))
    return COMMANDS[group]!({ verb: undefined, rest: [verb, ...rest], flags, out, print })
  out(HELP)
  if (group && group !== 'help' && flags.help !== true) process.exitCode = 2
}

const isMain = process.argv[1] && /cli[\\/]main\.[jt]s$|bin[\\/]svcpay(\.js)?$/.test(process.argv[1])
if (isMain) {
  run(process.argv.slice(2), (s) => console.log(s)).catch((err) => {
    console.error(err instanceof CliError ? `svcpay: ${err.message}` : err)
    process.exitCode = 1
  })
}
