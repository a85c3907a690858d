import { sleep } from './service-process.js'

/**
 * Waits for the workers to finish after a load: mines a block, and then one more each time something
 * is still open (a send not yet confirmed, a delivery not yet out), until `look` finds nothing open.
 * A block only wakes the workers; the receives they credit and the sends they confirm, with their
 * events, come after the mine's answer. So the wait ends only on a look that began at least
 * `quietMs` after the last block. Returns what was still open when `timeoutMs` ran out.
 */
export async function settle(opts: {
  mine: () => Promise<void>
  look: () => Promise<string[]>
  timeoutMs: number
  quietMs?: number
  pollMs?: number
}): Promise<string[]> {
  const quietMs = opts.quietMs ?? 2_000
  const deadline = Date.now() + opts.timeoutMs
  await opts.mine()
  let minedAt = Date.now()
  for (;;) {
    const lookedAt = Date.now()
    const open = await opts.look()
    if (open.length === 0 && lookedAt - minedAt >= quietMs) return []
    if (Date.now() >= deadline) return open
    if (open.length > 0) {
      await opts.mine()
      minedAt = Date.now()
    }
    await sleep(open.length > 0 ? (opts.pollMs ?? 1_000) : quietMs / 2)
  }
}
