/**
 * A worker loop: runs `step` until it reports no more work, then sleeps for `idleMs` or until
 * `wake()` is called. Errors are logged and the loop carries on after a pause; `stop()` waits for
 * the step in progress.
 */
export interface Loop {
  wake(): void
  stop(): Promise<void>
}

export function startLoop(opts: {
  name: string
  idleMs: number
  /** Returns true when it did work and should run again at once. */
  step: () => Promise<boolean>
  log: { error(obj: object, msg: string): void }
}): Loop {
  let stopped = false
  let timer: NodeJS.Timeout | undefined
  let wakeUp: (() => void) | undefined
  let woken = false

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      if (woken) {
        woken = false
        return resolve()
      }
      wakeUp = resolve
      timer = setTimeout(resolve, ms)
    }).finally(() => {
      clearTimeout(timer)
      wakeUp = undefined
    })

  const running = (async () => {
    while (!stopped) {
      let more: boolean
      try {
        more = await opts.step()
      } catch (err) {
        opts.log.error({ loop: opts.name, error: (err as Error).message }, 'worker step failed')
        await sleep(Math.min(opts.idleMs * 5, 5_000))
        continue
      }
      if (!more && !stopped) await sleep(opts.idleMs)
    }
  })()

  return {
    wake() {
      if (wakeUp) wakeUp()
      else woken = true
    },
    async stop() {
      stopped = true
      wakeUp?.()
      await running
    },
  }
}
