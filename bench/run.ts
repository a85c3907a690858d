/**
 * `npm run bench` (about 4 minutes with the 1,000,000-row seed) and `npm run bench -- --quick` (a
 * smoke run well under 3 minutes). Starts svcpay against PostgreSQL and Redis, seeds it, drives
 * load from a separate process, and prints and writes every scenario with its ratio to its ceiling.
 * See bench/README.md.
 *
 * Options: --quick, --only=<id,...> (scenario ids, or groups: ceilings, pg, limiter, ln, embedded,
 * startup, tsx), --profile (write the servers' V8 CPU profiles to bench/results/profiles/), --runtime=tsx
 * (run the servers through tsx, as `npm start` does, instead of compiled JavaScript),
 * --src-root=<checkout> (compile another checkout's src/ as "before" and this one's as "after", and
 * run them alternately, each pass a fresh server on a fresh database; with the default runtime
 * only), --rounds=<n> (before/after pairs with --src-root, else repeats of this checkout; each
 * figure printed by round with its mean and min–max, and the ratio after/before with the range of
 * the rounds' ratios), --label=<name> (added to the summary's file name).
 */
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { cpus, totalmem, tmpdir } from 'node:os'
import { join } from 'node:path'
import { compileServer } from './lib/build.js'
import { FULL, MEMORY_TARGET_MB, QUICK, type BenchContext } from './lib/context.js'
import { recreateDatabase, pgReachable, dropDatabase, withClient } from './lib/pg.js'
import { ROOT } from './lib/proc.js'
import { normalise } from './lib/stats.js'
import {
  limiterTable,
  summaryMarkdown,
  table,
  tableRow,
  writeScenario,
  writesTable,
  type ScenarioResult,
} from './lib/report.js'
import { START_SETTLE_MS, startServer, type ServerHandle } from './lib/server.js'
import { createAccounts } from './lib/seed.js'
import { roundsRows, roundsTable } from './lib/rounds.js'
import { prepareWriteCounting } from './lib/writes.js'
import { fastifyCeiling, pgbenchCeiling } from './scenarios/ceilings.js'
import { lightningScenario } from './scenarios/lightning.js'
import { LIMITS_ON_ENV, limiterRun } from './scenarios/limiter.js'
import { getTxnScenario, listScenario, seedListAccounts } from './scenarios/reads.js'
import { checkBooks, swapAccounts, swapScenario } from './scenarios/swaps.js'

const DB_NAME = 'svcpay_bench'
/** The embedded default's memory targets (issue 17): after start-up, and at peak under swap load. */
const EMBEDDED_IDLE_TARGET_MB = 400
const EMBEDDED_PEAK_TARGET_MB = 500
const REDIS_URL = process.env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379'
const RESULTS_DIR = join(ROOT, 'bench', 'results')
/** At most this many rounds (a full round of every scenario is about 5 minutes). */
const MAX_ROUNDS = 10

const GROUPS: Record<string, string[]> = {
  ceilings: ['ceiling-fastify', 'ceiling-pgbench'],
  pg: ['get-txn', 'swap-many', 'swap-hot', 'list-1k', 'list-big'],
  limiter: ['limiter-overhead'],
  ln: ['ln-receive-webhook'],
  embedded: ['swap-embedded'],
  startup: ['startup-memory'],
  tsx: ['get-txn-tsx'],
}

async function main(): Promise<void> {
  const args = process.argv.slice(2)
  const quick = args.includes('--quick')
  const profile = args.includes('--profile')
  const only = args.find((a) => a.startsWith('--only='))?.slice('--only='.length)
  const runtime = args.find((a) => a.startsWith('--runtime='))?.slice('--runtime='.length) ?? 'js'
  // Another checkout's src/ (e.g. a `git worktree` of an older commit), to measure before and after.
  const srcRoot = args.find((a) => a.startsWith('--src-root='))?.slice('--src-root='.length)
  // Written into the summary's file name, e.g. --label=before for summary-full-before.md.
  const label = args.find((a) => a.startsWith('--label='))?.slice('--label='.length)
  if (label !== undefined && !/^[a-z0-9-]{1,40}$/.test(label))
    throw new Error('--label: lower-case letters, digits and dashes')
  if (runtime !== 'js' && runtime !== 'tsx') throw new Error('--runtime must be js or tsx')
  // --src-root compares: its src/ (before) and this checkout's (after), alternating for --rounds
  // rounds; without --src-root, --rounds repeats this checkout's run to show the drift of the figures.
  const roundsArg = args.find((a) => a.startsWith('--rounds='))?.slice('--rounds='.length)
  const rounds = roundsArg === undefined ? 1 : Number(roundsArg)
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > MAX_ROUNDS)
    throw new Error(`--rounds: a whole number from 1 to ${MAX_ROUNDS}`)
  const compare = srcRoot !== undefined
  if (compare && runtime !== 'js')
    throw new Error('--src-root compares compiled servers: not with --runtime=tsx')
  // The tsx memory check belongs to the full run only: the quick run has to stay short.
  const groups = only ? only.split(',') : Object.keys(GROUPS).filter((g) => !(quick && g === 'tsx'))
  const wanted = new Set(groups.flatMap((id) => GROUPS[id] ?? [id]))
  const want = (id: string) => wanted.has(id)
  const settings = quick ? QUICK : FULL
  const startedAt = new Date()
  const workDir = mkdtempSync(join(tmpdir(), 'svcpay-bench-'))
  mkdirSync(RESULTS_DIR, { recursive: true })
  const profileDir = profile ? join(RESULTS_DIR, 'profiles') : undefined
  if (profileDir) mkdirSync(profileDir, { recursive: true })
  const ctx: BenchContext = {
    quick,
    settings,
    workDir,
    profileDir,
    log: (line) =>
      process.stdout.write(
        `[bench ${((Date.now() - startedAt.getTime()) / 1000).toFixed(0).padStart(3)}s] ${line}\n`,
      ),
  }

  const entry = runtime === 'js' ? await compileServer(join(workDir, 'app'), srcRoot) : undefined
  const pgVersion = await pgReachable()
  if (!pgVersion)
    throw new Error('PostgreSQL is not reachable at 127.0.0.1:5432 (set BENCH_PG_URL to point elsewhere)')
  const redisOk = await redisPing(REDIS_URL)
  const machine = {
    cpus: `${cpus().length} x ${cpus()[0]?.model ?? '?'}`,
    memory: `${Math.round(totalmem() / 2 ** 30)} GiB`,
    node: process.version,
    postgres: pgVersion,
    redis: redisOk ? REDIS_URL : 'unreachable',
    ...(srcRoot ? { 'server source': `before: ${srcRoot}; after: ${ROOT}` } : {}),
    ...(rounds > 1 || compare ? { rounds: String(rounds) } : {}),
    'server runtime':
      runtime === 'js'
        ? 'src/ compiled to JavaScript with esbuild (the build of npm run build), run by node'
        : 'src/server.ts through tsx (npm start)',
  }
  ctx.log(`${quick ? 'quick' : 'full'} run: ${JSON.stringify(settings)}`)
  ctx.log(`machine: ${JSON.stringify(machine)}`)

  const passes: Array<{ side: 'before' | 'after' | 'only'; round: number; entry: string | undefined }> = []
  if (compare) {
    // Alternate, each pass a fresh server on a fresh database: before, after, before, after, ...
    const after = await compileServer(join(workDir, 'app-after'))
    for (let round = 1; round <= rounds; round++) {
      passes.push({ side: 'before', round, entry })
      passes.push({ side: 'after', round, entry: after })
    }
  } else {
    for (let round = 1; round <= rounds; round++) passes.push({ side: 'only', round, entry })
  }
  const done: Array<(typeof passes)[number] & PassOutput> = []
  try {
    for (const [i, pass] of passes.entries()) {
      if (passes.length > 1) ctx.log(`pass ${i + 1} of ${passes.length}: ${pass.side}, round ${pass.round}`)
      const passDir = join(workDir, `pass-${i + 1}`)
      mkdirSync(passDir)
      const out = await runPass({ ...ctx, workDir: passDir }, { want, entry: pass.entry, redisOk })
      done.push({ ...pass, ...out })
    }
  } finally {
    rmSync(workDir, { recursive: true, force: true })
  }

  // The last pass is the one summarised as a single run (in a comparison: the last "after").
  const { results, limiter, targets } = done[done.length - 1]!
  const elapsedS = (Date.now() - startedAt.getTime()) / 1000
  const md = summaryMarkdown({
    mode: quick ? 'quick' : 'full',
    startedAt,
    elapsedS,
    machine,
    settings: { ...settings },
    results,
    limiter,
    targets,
  })
  const summary = {
    mode: quick ? 'quick' : 'full',
    startedAt,
    elapsedS,
    machine,
    settings,
    results,
    limiter,
    targets,
  }
  const base = `summary-${quick ? 'quick' : 'full'}${label ? '-' + label : ''}`
  writeFileSync(join(RESULTS_DIR, `${base}.json`), JSON.stringify(summary, null, 2) + '\n')
  writeFileSync(join(RESULTS_DIR, `${base}.md`), md)
  if (!quick && !only && !srcRoot && !label && rounds === 1) writeFileSync(join(RESULTS_DIR, 'latest.md'), md)
  process.stdout.write(`\n${table(results)}\n`)
  const writes = writesTable(results)
  if (writes) process.stdout.write(`\n${writes}\n`)
  if (limiter.length) process.stdout.write(`\nlimiter-overhead\n${limiterTable(limiter)}\n`)
  for (const t of targets) process.stdout.write(`${t.met ? 'met' : 'MISSED'}: ${t.text}\n`)
  if (done.length > 1) {
    const rows = roundsRows(
      done.map((d) => ({ side: d.side, round: d.round, results: d.results })),
      compare ? 'compare' : 'repeat',
    )
    const text = roundsTable(rows, compare ? 'compare' : 'repeat')
    const heading = compare
      ? `Before (${srcRoot}) and after (${ROOT}), alternating, ${rounds} round${rounds > 1 ? 's' : ''}`
      : `The same code, ${rounds} rounds`
    const file = `summary-${quick ? 'quick' : 'full'}-${compare ? 'compare' : 'rounds'}${label ? '-' + label : ''}`
    writeFileSync(
      join(RESULTS_DIR, `${file}.md`),
      `# svcpay bench: ${heading}\n\nRun ${startedAt.toISOString()}, ${Math.round(elapsedS)} s in all.\n\n${text}\n`,
    )
    writeFileSync(
      join(RESULTS_DIR, `${file}.json`),
      JSON.stringify(
        { startedAt, elapsedS, machine, settings, rounds, compare, rows, passes: done },
        null,
        2,
      ) + '\n',
    )
    process.stdout.write(`\n${heading}\n${text}\n`)
  }
  process.stdout.write(`\nbench: done in ${elapsedS.toFixed(0)} s; results in bench/results/\n`)
}

interface PassOutput {
  results: ScenarioResult[]
  limiter: ScenarioResult[]
  targets: Array<{ text: string; met: boolean }>
}

/** One pass over the wanted scenarios against one build of the server: fresh databases, fresh servers. */
async function runPass(
  ctx: BenchContext,
  input: { want: (id: string) => boolean; entry: string | undefined; redisOk: boolean },
): Promise<PassOutput> {
  const { want, entry, redisOk } = input
  const { settings, workDir, profileDir } = ctx

  const results: ScenarioResult[] = []
  const limiter: ScenarioResult[] = []
  const record = (r: ScenarioResult) => {
    results.push(r)
    writeScenario(RESULTS_DIR, r)
    ctx.log(`${r.id}: ${tableRow(r)}`)
    return r
  }
  const byId = (id: string) => results.find((r) => r.id === id && r.status === 'ok')

  // Ceilings first, on an idle machine.
  if (want('ceiling-fastify')) record(await fastifyCeiling(ctx))
  if (want('ceiling-pgbench')) record(await pgbenchCeiling(ctx))

  const pgWanted = [
    ...GROUPS.pg!,
    'limiter-overhead',
    'ln-receive-webhook',
    'get-txn-tsx',
    'startup-memory',
  ].some(want)
  if (pgWanted) {
    const url = await recreateDatabase(DB_NAME)
    ctx.analyze = () => withClient(url, (c) => c.query('ANALYZE')).then(() => undefined)
    ctx.checkpoint = () => withClient(url, (c) => c.query('CHECKPOINT')).then(() => undefined)
    const masterKey = randomBytes(32).toString('hex')
    const env = { DATABASE_URL: url, MASTER_KEY: masterKey, ...(redisOk ? { REDIS_URL } : {}) }
    const server = await startServer({
      name: 'postgres',
      logDir: workDir,
      dataDir: join(workDir, 'data-pg'),
      env,
      profileDir,
      entry,
    })
    try {
      ctx.log(`svcpay on PostgreSQL at ${server.url} (pid ${server.pid})`)
      // Counting what the loads write: pg_walinspect and pg_stat_statements in the bench database,
      // created after the server's migrations, where the server allows them.
      const counting = await withClient(url, prepareWriteCounting)
      ctx.writes = { url, ...counting }
      for (const note of counting.notes) ctx.log(`write counting: ${note}`)
      if (want('startup-memory')) {
        // Resident memory after start-up, idle: the compiled server (npm run build && npm run
        // start:prod, as this bench runs it) beside the same server through tsx (npm start).
        record(startupResult(entry ? 'compiled' : 'tsx', server))
        if (entry) {
          const viaTsx = await startServer({
            name: 'postgres-tsx-start',
            logDir: workDir,
            dataDir: join(workDir, 'data-tsx-start'),
            env,
          })
          record(startupResult('tsx', viaTsx))
          await viaTsx.stop()
        }
      }
      if (want('get-txn')) record(await getTxnScenario(ctx, server))
      if (want('swap-many')) {
        const accounts = await swapAccounts(server, settings.swapConnections, '1', 'Swapper')
        record(
          await swapScenario(ctx, server, {
            id: 'swap-many',
            title: 'swap create+confirm, many accounts',
            accounts,
          }),
        )
      }
      if (want('swap-hot')) {
        const accounts = await swapAccounts(server, 1, '100', 'Hot wallet')
        record(
          await swapScenario(ctx, server, {
            id: 'swap-hot',
            title: 'swap create+confirm, one hot wallet',
            accounts,
          }),
        )
      }
      if (want('swap-many') || want('swap-hot')) await requireBalancedBooks(ctx, server)
      if (want('list-1k') || want('list-big')) {
        const list = await seedListAccounts(ctx, server, DB_NAME)
        if (want('list-1k')) {
          record(
            await listScenario(ctx, server, {
              id: 'list-1k',
              title: `GET /api/v2/transaction, ${count(settings.smallListRows)} rows`,
              account: list.small,
              rows: settings.smallListRows,
            }),
          )
        }
        if (want('list-big')) {
          record(
            await listScenario(ctx, server, {
              id: 'list-big',
              title: `GET /api/v2/transaction, ${count(settings.bigListRows)} rows`,
              account: list.big,
              rows: settings.bigListRows,
            }),
          )
        }
      }
      if (want('ln-receive-webhook')) record(await lightningScenario(ctx, server))
      if (want('limiter-overhead')) {
        const [account] = await createAccounts(server, 1, { name: 'Limited', tier: 'premium' })
        limiter.push(await limiterRun(ctx, server, { on: false, account: account! }))
        if (!redisOk) {
          limiter.push({
            id: 'limiter-on',
            title: 'on (Redis)',
            status: 'skipped',
            note: `Redis unreachable at ${REDIS_URL}`,
          })
        } else {
          const limited = await startServer({
            name: 'postgres-limited',
            logDir: workDir,
            dataDir: join(workDir, 'data-pg-limited'),
            env: {
              ...env,
              ...LIMITS_ON_ENV,
              RATE_LIMIT_REDIS_PREFIX: `svcpay:bench:${randomBytes(4).toString('hex')}`,
            },
            profileDir,
            entry,
          })
          try {
            limiter.push(await limiterRun(ctx, limited, { on: true, account: account! }))
          } finally {
            await limited.stop()
          }
        }
        const off = limiter[0]!
        for (const r of limiter)
          if (r.status === 'ok' && off.throughput) r.ratio = r.throughput! / off.throughput
        writeScenario(RESULTS_DIR, {
          id: 'limiter-overhead',
          title: 'limiter-overhead (GET /api/v2/rate)',
          status: 'ok',
          details: { runs: limiter },
        })
        ctx.log(`limiter-overhead:\n${limiterTable(limiter)}`)
      }
      if (want('get-txn-tsx') && entry) {
        // The same GET on a second server run the way `npm start` runs it, for its memory.
        const viaTsx = await startServer({
          name: 'postgres-tsx',
          logDir: workDir,
          dataDir: join(workDir, 'data-tsx'),
          env,
        })
        try {
          const title = 'GET /api/v2/transaction/{txnId}, tsx runtime (npm start)'
          record(await getTxnScenario(ctx, viaTsx, { id: 'get-txn-tsx', title }))
        } finally {
          await viaTsx.stop()
        }
      }
    } finally {
      ctx.log(`server peak RSS over the whole run (VmHWM): ${server.rss.hwmMb()} MB`)
      await server.stop()
    }
    ctx.analyze = undefined
    ctx.checkpoint = undefined
    ctx.writes = undefined
    await dropDatabase(DB_NAME)
  }

  if (want('swap-embedded')) {
    const server = await startServer({
      name: 'embedded',
      logDir: workDir,
      dataDir: join(workDir, 'data-embedded'),
      env: {},
      profileDir,
      entry,
    })
    try {
      ctx.log(`svcpay on embedded PGlite at ${server.url} (pid ${server.pid})`)
      const idleRssMb = server.startRssMb
      ctx.log(`embedded: resident memory after start-up, idle: ${idleRssMb} MB`)
      const accounts = await swapAccounts(server, settings.swapConnections, '1', 'Embedded swapper')
      const r = await swapScenario(ctx, server, {
        id: 'swap-embedded',
        title: 'swap create+confirm, embedded (PGlite)',
        accounts,
      })
      r.idleRssMb = idleRssMb
      r.details = { ...r.details, peakRssOverWholeRunMb: server.rss.hwmMb() }
      record(r)
      await requireBalancedBooks(ctx, server)
    } finally {
      await server.stop()
    }
  }

  return { results, limiter, targets: applyCeilingsAndTargets(results, byId) }
}

/** Each result against its ceiling, and the targets of the issue. */
function applyCeilingsAndTargets(
  results: ScenarioResult[],
  byId: (id: string) => ScenarioResult | undefined,
): Array<{ text: string; met: boolean }> {
  const fastify = byId('ceiling-fastify')
  const pgbench = byId('ceiling-pgbench')
  const small = byId('list-1k')
  for (const r of results) {
    // PostgreSQL's CPU per operation in pgbench transactions of the same run (the DB's control).
    if (r.status === 'ok' && pgbench) {
      r.dbCpuNorm = normalise(r.dbCpuMsPerOp, pgbench.dbCpuMsPerOp)
      r.dbBackendCpuNorm = normalise(r.dbBackendCpuMsPerOp, pgbench.dbBackendCpuMsPerOp)
    }
    if (r.status !== 'ok' || r.id.startsWith('ceiling-')) continue
    if (r.id.startsWith('get-txn') && fastify) {
      r.ceiling = { id: 'bare Fastify', value: fastify.throughput!, unit: 'req/s' }
      r.ratio = r.throughput! / fastify.throughput!
      if (r.id === 'get-txn') r.target = { text: '>= 0.33 of bare Fastify', met: r.ratio >= 1 / 3 }
    }
    if (r.id.startsWith('swap-') && pgbench) {
      r.ceiling = { id: 'pgbench', value: pgbench.throughput!, unit: 'tps' }
      r.ratio = r.throughput! / pgbench.throughput!
      if (r.id === 'swap-many') r.target = { text: '>= 0.25 of pgbench', met: r.ratio >= 0.25 }
    }
    if (r.id === 'list-big' && small?.latencyMs && r.latencyMs) {
      // The list is held against itself at 1,000 rows: the ratio is of times, lower is better.
      r.ceiling = { id: 'list-1k', value: small.latencyMs.mean, unit: 'ms mean' }
      r.ratio = r.latencyMs.mean / small.latencyMs.mean
      r.ratioText = `${r.ratio.toFixed(2)}x time`
      r.target = { text: '<= 2x the time at 1,000 rows', met: r.ratio <= 2 }
    }
    if (r.id === 'list-1k' && fastify) {
      r.ceiling = { id: 'bare Fastify', value: fastify.throughput!, unit: 'req/s' }
      r.ratio = r.throughput! / fastify.throughput!
    }
    if (r.id === 'swap-embedded' && r.peakRssMb !== undefined && r.idleRssMb !== undefined) {
      // The embedded default has its own bounds (issue 17), not the 200 MB of svcpay on PostgreSQL.
      r.target = {
        text: `idle < ${EMBEDDED_IDLE_TARGET_MB} MB, peak < ${EMBEDDED_PEAK_TARGET_MB} MB`,
        met: r.idleRssMb < EMBEDDED_IDLE_TARGET_MB && r.peakRssMb < EMBEDDED_PEAK_TARGET_MB,
      }
    } else if (r.peakRssMb !== undefined && r.peakRssMb >= MEMORY_TARGET_MB) {
      r.target = {
        text: `${r.target ? r.target.text + '; ' : ''}peak RSS < ${MEMORY_TARGET_MB} MB`,
        met: false,
      }
    }
  }
  // The summary: each target of the issue once, with the figures it was judged on.
  const targets: Array<{ text: string; met: boolean }> = []
  const judged = (id: string, text: (r: ScenarioResult) => string) => {
    const r = byId(id)
    if (r?.target) targets.push({ text: text(r), met: r.target.met })
  }
  // A ratio's baseline may not have run (--only): the figure is then said to be missing.
  const ratio = (r: ScenarioResult, unit = '') =>
    r.ratio === undefined ? 'no baseline in this run' : `${r.ratio.toFixed(2)}${unit}`
  judged('swap-many', (r) => `swaps at >= 0.25 of pgbench TPC-B: ${ratio(r)}`)
  judged('get-txn', (r) => `single GET at >= 1/3 of bare Fastify: ${ratio(r)}`)
  judged('list-big', (r) => `list at the big size <= 2x its time at 1,000 rows: ${ratio(r, 'x')}`)
  judged('ln-receive-webhook', (r) => `pay-to-webhook p99 < 250 ms: ${r.latencyMs!.p99} ms`)
  const server = results.filter(
    (r) =>
      r.peakRssMb !== undefined &&
      !r.id.startsWith('ceiling-') &&
      r.id !== 'swap-embedded' &&
      r.id !== 'get-txn-tsx' &&
      !r.id.startsWith('startup-'),
  )
  if (server.length) {
    const peak = Math.max(...server.map((r) => r.peakRssMb!))
    targets.push({
      text: `peak memory < ${MEMORY_TARGET_MB} MB (svcpay on PostgreSQL, every scenario): ${peak} MB`,
      met: peak < MEMORY_TARGET_MB,
    })
  }
  const viaTsx = byId('get-txn-tsx')
  if (viaTsx?.peakRssMb !== undefined) {
    targets.push({
      text: `peak memory < ${MEMORY_TARGET_MB} MB, ${viaTsx.title}: ${viaTsx.peakRssMb} MB`,
      met: viaTsx.peakRssMb < MEMORY_TARGET_MB,
    })
  }
  const embedded = byId('swap-embedded')
  if (embedded?.idleRssMb !== undefined) {
    targets.push({
      text: `embedded default idle after start-up < ${EMBEDDED_IDLE_TARGET_MB} MB: ${embedded.idleRssMb} MB`,
      met: embedded.idleRssMb < EMBEDDED_IDLE_TARGET_MB,
    })
  }
  if (embedded?.peakRssMb !== undefined) {
    targets.push({
      text: `embedded default peak under swap load < ${EMBEDDED_PEAK_TARGET_MB} MB: ${embedded.peakRssMb} MB`,
      met: embedded.peakRssMb < EMBEDDED_PEAK_TARGET_MB,
    })
  }
  const compiled = byId('startup-compiled')
  const tsx = byId('startup-tsx')
  if (compiled?.idleRssMb !== undefined && tsx?.idleRssMb !== undefined) {
    targets.push({
      text: `compiled start (npm run start:prod) lighter than tsx (npm start) after start-up: ${compiled.idleRssMb} MB vs ${tsx.idleRssMb} MB`,
      met: compiled.idleRssMb < tsx.idleRssMb,
    })
  }
  return targets
}

/** One start-up memory row: the server's resident memory once started, idle, on PostgreSQL. */
function startupResult(runtime: 'compiled' | 'tsx', server: ServerHandle): ScenarioResult {
  return {
    id: `startup-${runtime}`,
    title:
      runtime === 'compiled'
        ? 'start-up, compiled JavaScript (npm run start:prod), PostgreSQL, idle'
        : 'start-up, TypeScript through tsx (npm start), PostgreSQL, idle',
    status: 'ok',
    idleRssMb: server.startRssMb,
    details: { settleMs: START_SETTLE_MS },
  }
}

async function requireBalancedBooks(ctx: BenchContext, server: ServerHandle): Promise<void> {
  const books = await checkBooks(server)
  if (!books.ok) throw new Error(`the books do not balance after the load: ${JSON.stringify(books.report)}`)
  ctx.log('books balanced after the load')
}

const count = (n: number) => (n >= 1_000_000 ? `${n / 1_000_000}M` : n >= 1000 ? `${n / 1000}k` : String(n))

/** Whether Redis answers PING. */
function redisPing(url: string): Promise<boolean> {
  const u = new URL(url)
  return new Promise((resolve) => {
    const socket = connect({ host: u.hostname, port: Number(u.port || 6379) })
    const done = (ok: boolean) => {
      socket.destroy()
      resolve(ok)
    }
    socket.setTimeout(1000, () => done(false))
    socket.once('error', () => done(false))
    socket.once('connect', () => socket.write('PING\r\n'))
    socket.once('data', (d) => done(d.toString().startsWith('+PONG')))
  })
}

main().catch((err) => {
  process.stderr.write(`bench: failed: ${(err as Error).stack ?? err}\n`)
  process.exit(1)
})
