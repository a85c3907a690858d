/**
 * What the stand-in nodes share: an HTTP server on 127.0.0.1 that can be stopped and started again
 * on the same port (a node restart), and faults a test switches on: a stall (the node accepts the
 * connection and never answers), an HTTP status with a body (a proxy's 502, a 503 while starting),
 * a connection dropped half-way through an answer.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'

export type Fault =
  | { kind: 'stall' }
  /** The node does the work (a wallet commits the send) and the answer never arrives. */
  | { kind: 'work-then-stall' }
  | { kind: 'status'; status: number; body: string }
  | { kind: 'cut' }

export interface FaultRule {
  /** Which requests: a predicate on method and path (and the JSON-RPC method for bitcoind). */
  match: (req: { method: string; path: string; rpcMethod?: string }) => boolean
  fault: Fault
  /** How many matching requests it applies to; Infinity until cleared. */
  times: number
}

export interface StandinServer {
  url: string
  port: number
  faults: FaultRule[]
  /** Requests seen, in order (method, path, JSON-RPC method). */
  seen: { method: string; path: string; rpcMethod?: string; body: string }[]
  /** A restart: stop listening (dropping open connections), then listen again on the same port. */
  restart(downMs?: number): Promise<void>
  stop(): Promise<void>
  close(): Promise<void>
}

export type Handler = (req: { method: string; path: string; body: string; authorization?: string }) => {
  status: number
  contentType: string
  body: string
  rpcMethod?: string
}

/** The fault for a request, consuming one use of its rule. */
export function takeFault(
  faults: FaultRule[],
  req: { method: string; path: string; rpcMethod?: string },
): Fault | null {
  const rule = faults.find((f) => f.times > 0 && f.match(req))
  if (!rule) return null
  rule.times--
  return rule.fault
}

export async function startStandin(
  handle: Handler,
  peekRpcMethod?: (body: string) => string | undefined,
): Promise<StandinServer> {
  const faults: FaultRule[] = []
  const seen: StandinServer['seen'] = []
  const server = http.createServer((req, res) => {
    let body = ''
    req.on('data', (c: Buffer) => (body += c.toString()))
    req.on('end', () => {
      const info = { method: req.method!, path: req.url!, rpcMethod: peekRpcMethod?.(body) }
      seen.push({ ...info, body })
      const fault = takeFault(faults, info)
      if (fault?.kind === 'stall') return
      if (fault?.kind === 'status') {
        res.writeHead(fault.status, { 'content-type': 'text/plain' }).end(fault.body)
        return
      }
      if (fault?.kind === 'work-then-stall') {
        handle({ method: req.method!, path: req.url!, body, authorization: req.headers.authorization })
        return
      }
      const answer = handle({
        method: req.method!,
        path: req.url!,
        body,
        authorization: req.headers.authorization,
      })
      if (fault?.kind === 'cut') {
        // Headers promise the whole body; half of it arrives and the connection closes.
        res.writeHead(answer.status, {
          'content-type': answer.contentType,
          'content-length': String(Buffer.byteLength(answer.body)),
        })
        res.write(answer.body.slice(0, Math.floor(answer.body.length / 2)))
        res.socket?.destroy()
        return
      }
      res.writeHead(answer.status, { 'content-type': answer.contentType }).end(answer.body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  let listening = true
  const stop = async () => {
    if (!listening) return
    listening = false
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    faults,
    seen,
    async restart(downMs = 0) {
      await stop()
      if (downMs) await new Promise((r) => setTimeout(r, downMs))
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
      listening = true
    },
    stop,
    close: stop,
  }
}
