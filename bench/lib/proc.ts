import { spawn, type ChildProcess } from 'node:child_process'
import { createWriteStream, readdirSync, readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The repository root (bench/lib/ is two levels down). */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')

/** A port free right now on the loopback interface. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port
      s.close(() => resolve(port))
    })
  })
}

/**
 * The environment a child starts from: only what a process needs to run, so that a DATABASE_URL or
 * REDIS_URL of the calling shell never leaks into a server meant to run without one.
 */
export function baseEnv(): Record<string, string> {
  const out: Record<string, string> = {}
  for (const name of ['PATH', 'HOME', 'TMPDIR', 'LANG', 'TZ']) {
    const v = process.env[name]
    if (v !== undefined) out[name] = v
  }
  return out
}

/**
 * Starts an entry point under Node, its output going to `logFile`: TypeScript through tsx, or
 * JavaScript (`.js`) as it is.
 */
export function spawnTs(
  entry: string,
  opts: {
    env: Record<string, string>
    logFile: string
    nodeArgs?: string[]
    args?: string[]
    stdout?: 'pipe'
  },
): ChildProcess {
  const log = createWriteStream(opts.logFile, { flags: 'a' })
  const loader = entry.endsWith('.ts') ? ['--import', 'tsx'] : []
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), ...loader, entry, ...(opts.args ?? [])], {
    cwd: ROOT,
    env: opts.env,
    stdio: ['ignore', opts.stdout ?? 'pipe', 'pipe'],
  })
  if (opts.stdout !== 'pipe') child.stdout?.pipe(log)
  child.stderr?.pipe(log)
  child.once('exit', () => log.end())
  return child
}

/** Resolves when the child has exited (at once if it already has). */
export function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode)
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)))
}

/** Asks the child to stop (SIGTERM), and kills it if it has not exited within `graceMs`. */
export async function stopChild(child: ChildProcess, graceMs = 15_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs)
  await exited(child)
  clearTimeout(timer)
}

/** The last lines of a log file, for error messages. */
export function tail(file: string, lines = 20): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n')
  } catch {
    return ''
  }
}

/**
 * Samples a process's resident memory every `intervalMs` from /proc/<pid>/status. `peakMb()` is the
 * highest sample since the last `reset()`; `hwmMb()` is the kernel's own high-water mark (VmHWM)
 * over the whole life of the process, which also catches spikes between samples.
 */
export function sampleRss(pid: number, intervalMs = 100) {
  let peakKb = 0
  const read = (): { rssKb: number; hwmKb: number } | undefined => {
    try {
      const text = readFileSync(`/proc/${pid}/status`, 'utf8')
      const rss = /VmRSS:\s+(\d+)/.exec(text)
      const hwm = /VmHWM:\s+(\d+)/.exec(text)
      return rss && hwm ? { rssKb: Number(rss[1]), hwmKb: Number(hwm[1]) } : undefined
    } catch {
      return undefined
    }
  }
  const sample = () => {
    const s = read()
    if (s && s.rssKb > peakKb) peakKb = s.rssKb
  }
  const timer = setInterval(sample, intervalMs)
  timer.unref()
  sample()
  const mb = (kb: number) => Math.round((kb / 1024) * 10) / 10
  return {
    /** Resident memory right now. */
    nowMb: () => mb(read()?.rssKb ?? 0),
    reset() {
      peakKb = 0
      sample()
    },
    peakMb: () => mb(peakKb),
    hwmMb: () => mb(read()?.hwmKb ?? 0),
    stop: () => clearInterval(timer),
  }
}

export type RssSampler = ReturnType<typeof sampleRss>

/** Runs a command to completion, collecting its output. */
export function run(
  cmd: string,
  args: string[],
  opts: { env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: opts.env ?? baseEnv(), stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    const timer = opts.timeoutMs ? setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs) : undefined
    child.once('error', reject)
    child.once('exit', (code) => {
      if (timer) clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
}

/** User + system CPU time of a process so far, in milliseconds (from /proc/<pid>/stat). */
export function cpuMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // The command name may hold spaces; the fields after its closing parenthesis are fixed.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    const ticks = Number(fields[11]) + Number(fields[12])
    return (ticks / CLOCK_TICKS_PER_S) * 1000
  } catch {
    return undefined
  }
}

/** User + system CPU time so far of every process named postgres (the server and its backends). */
export function postgresCpuMs(): number {
  let total = 0
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue
    try {
      if (!readFileSync(`/proc/${pid}/comm`, 'utf8').startsWith('postgres')) continue
      total += cpuMs(Number(pid)) ?? 0
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return total
}

// USER_HZ: 100 on every Linux this runs on (getconf CLK_TCK).
const CLOCK_TICKS_PER_S = 100
