/**
 * Where a V8 CPU profile (`node --cpu-prof`, or `npm run bench -- --profile`) spends its time: the
 * top functions by self time, and the top source files (or packages) by self time.
 *
 *   npx tsx bench/profile-top.ts bench/results/profiles/CPU....cpuprofile [count] [--skip=<seconds>]
 *
 * `--skip` leaves out the first seconds of the profile (the server's start and the seeding).
 */
import { readFileSync } from 'node:fs'

interface Node {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  children?: number[]
}
interface Profile {
  nodes: Node[]
  samples: number[]
  timeDeltas: number[]
}

const args = process.argv.slice(2).filter((a) => !a.startsWith('--'))
const skipUs = Number(process.argv.find((a) => a.startsWith('--skip='))?.slice(7) ?? 0) * 1e6
const file = args[0]
if (!file) {
  console.error('usage: tsx bench/profile-top.ts <file.cpuprofile> [count]')
  process.exit(2)
}
const top = Number(args[1] ?? 30)
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile
const byId = new Map(profile.nodes.map((n) => [n.id, n]))
const selfUs = new Map<number, number>()
let elapsedUs = 0
profile.samples.forEach((id, i) => {
  elapsedUs += profile.timeDeltas[i] ?? 0
  if (elapsedUs >= skipUs) selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0))
})
const total = [...selfUs.values()].reduce((a, b) => a + b, 0)

const where = (url: string) => {
  if (!url) return '(native)'
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
  if (m) return m[1]!
  return url.replace(/^file:\/\/.*?\/(src|bench|test)\//, '$1/').replace(/^node:/, 'node:')
}

const fns = new Map<string, number>()
const files = new Map<string, number>()
for (const [id, us] of selfUs) {
  const n = byId.get(id)!
  const f = where(n.callFrame.url)
  const name = `${n.callFrame.functionName || '(anonymous)'}  ${f}:${n.callFrame.lineNumber + 1}`
  fns.set(name, (fns.get(name) ?? 0) + us)
  files.set(f, (files.get(f) ?? 0) + us)
}
const show = (title: string, m: Map<string, number>) => {
  console.log(`\n${title}`)
  for (const [k, us] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(
      `${((100 * us) / total).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(7)} ms  ${k}`,
    )
  }
}
console.log(`${file}: ${(total / 1000).toFixed(0)} ms sampled`)
show('functions by self time', fns)
show('files and packages by self time', files)
