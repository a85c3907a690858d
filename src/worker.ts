import type { Container } from './container.js'

export interface Workers {
  stop(): Promise<void>
}

/** The loops that move money forward without a request. Each is safe to run on many instances. */
export function startWorkers(c: Container): Workers {
  const loops: Array<{ stop(): Promise<void> }> = []
  c.log.debug({ loops: loops.length }, 'workers started')
  return {
    async stop() {
      await Promise.all(loops.map((l) => l.stop()))
    },
  }
}
