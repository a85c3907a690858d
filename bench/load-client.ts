/**
 * The load client: a child process of the bench that runs autocannon against the server and writes
 * one JSON line (a LoadResult) to stdout. It reads its LoadSpec as JSON from the first argument.
 */
import { performance } from 'node:perf_hooks'
import autocannon from 'autocannon'
import { cpuMs } from './lib/proc.js'
import { latencyOf, round, type LoadResult, type LoadSpec } from './lib/load-spec.js'

const ERROR_SAMPLES_MAX = 5

async function main(): Promise<void> {
  const spec = JSON.parse(process.argv[2] ?? '') as LoadSpec
  // The client's own CPU over the run, read like the server's (from /proc), start-up excluded.
  const cpuBefore = cpuMs(process.pid)
  const result = spec.mode === 'swap' ? await runSwaps(spec) : await runGet(spec)
  const cpuAfter = cpuMs(process.pid)
  if (cpuBefore !== undefined && cpuAfter !== undefined) result.clientCpuMs = round(cpuAfter - cpuBefore, 1)
  process.stdout.write(JSON.stringify(result) + '\n')
}

async function runGet(spec: LoadSpec): Promise<LoadResult> {
  const token = spec.tokens?.[0]
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {}
  const paths = spec.paths ?? []
  let nextClient = 0
  const r = await autocannon({
    url: spec.url + (spec.path ?? paths[0] ?? '/'),
    connections: spec.connections,
    duration: spec.durationS,
    headers,
    // Each connection's request is still built once: the client's work stays that of one GET.
    setupClient: paths.length
      ? (client) => client.setRequest({ method: 'GET', path: paths[nextClient++ % paths.length], headers })
      : undefined,
  })
  return summarize(r, undefined, [])
}

/**
 * Each connection loops: POST a swap quote, then PUT its confirm. The connection's token is fixed
 * for its whole life (autocannon resets a connection's context at every loop, so the token is put
 * in that connection's initial context when it is set up).
 */
async function runSwaps(spec: LoadSpec): Promise<LoadResult> {
  const tokens = spec.tokens ?? []
  if (tokens.length === 0) throw new Error('swap load needs at least one token')
  const opLatencies: number[] = []
  const samples: string[] = []
  let failed = 0
  let nextClient = 0
  const note = (text: string) => {
    if (samples.length < ERROR_SAMPLES_MAX) samples.push(text.slice(0, 300))
  }
  const r = await autocannon({
    url: spec.url,
    connections: spec.connections,
    duration: spec.durationS,
    setupClient(client) {
      // autocannon 9 internals: there is no public per-connection context, so it is seeded here.
      const iterator = client.requestIterator
      if (!iterator || typeof iterator.resetContext !== 'function')
        throw new Error('unsupported autocannon version')
      iterator.initialContext = { token: tokens[nextClient++ % tokens.length] }
      iterator.resetContext()
      iterator.rebuildRequest()
    },
    requests: [
      {
        method: 'POST',
        path: '/api/v2/transaction',
        setupRequest(request, context) {
          context.startedAt = performance.now()
          return {
            ...request,
            body: spec.swapBody,
            headers: { authorization: `Bearer ${context.token}`, 'content-type': 'application/json' },
          }
        },
        onResponse(status, body, context) {
          if (status === 200) {
            context.txnId = JSON.parse(body).txnId
          } else {
            context.txnId = undefined
            note(`create ${status}: ${body}`)
          }
        },
      },
      {
        method: 'PUT',
        setupRequest(request, context) {
          // A failed create still sends a confirm (autocannon keeps the sequence); it goes to an id
          // that cannot exist and is counted as a failed operation.
          const id = context.txnId ?? 'txn_0000000000000000000000000'
          return {
            ...request,
            path: `/api/v2/transaction/${id}/confirm`,
            headers: { authorization: `Bearer ${context.token}`, 'content-type': 'application/json' },
          }
        },
        onResponse(status, body, context) {
          if (!context.txnId) {
            failed++
            return
          }
          const state = status === 200 ? (JSON.parse(body).txnState as string) : undefined
          if (state === 'completed') {
            opLatencies.push(performance.now() - (context.startedAt as number))
          } else {
            failed++
            note(`confirm ${status}: ${body}`)
          }
        },
      },
    ],
  })
  const count = opLatencies.length
  return summarize(
    r,
    { count, perSec: round(count / r.duration), latencyMs: latencyOf(opLatencies), failed },
    samples,
  )
}

function summarize(
  r: Awaited<ReturnType<typeof autocannon>>,
  ops: LoadResult['ops'],
  samples: string[],
): LoadResult {
  const statusCodes: Record<string, number> = {}
  for (const [code, s] of Object.entries(r.statusCodeStats ?? {})) statusCodes[code] = Number(s.count)
  return {
    durationS: r.duration,
    requests: r.requests.total,
    requestsPerSec: round(r.requests.total / r.duration),
    latencyMs: { p50: r.latency.p50, p99: r.latency.p99, max: r.latency.max, mean: round(r.latency.mean) },
    ...(ops ? { ops } : {}),
    // In a swap run every non-2xx answer also fails its operation, so operations are counted instead.
    errors: r.errors + r.timeouts + (ops ? ops.failed : r.non2xx),
    statusCodes,
    errorSamples: samples,
  }
}

main().catch((err) => {
  process.stderr.write(`load client: ${(err as Error).stack ?? err}\n`)
  process.exit(1)
})
