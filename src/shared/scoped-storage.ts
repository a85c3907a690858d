import { AsyncLocalStorage } from 'node:async_hooks'

/**
 * An AsyncLocalStorage that is switched on only while one of its `run`s is under way.
 *
 * On Node.js 20 and 22 the first `AsyncLocalStorage.run` of a process installs promise hooks that
 * then run for every promise the process creates, for as long as the storage stays enabled: every
 * API request paid for them once an admin request (the bench's seeding) or a worker step had used a
 * storage. Two million `await`s take 155 ms of CPU without the hooks and 502 ms with them (Node
 * 20.20); in a CPU profile of the single GET the hooks were about 5 µs per request. Here the storage
 * is disabled again when its last run has finished, and the hooks go with it once no other storage
 * is enabled.
 *
 * Work a run started that outlives it (a timer, a callback) sees no store once no run is left; a
 * caller that needs a store to end with its run must mark it closed itself (ambient-tx.ts does).
 */
export class ScopedStorage<T> {
  readonly #storage = new AsyncLocalStorage<T>()
  #running = 0

  /** Runs `fn` with `store` as the store of everything it starts, until it settles. */
  async run<R>(store: T, fn: () => Promise<R>): Promise<R> {
    this.#running++
    try {
      return await this.#storage.run(store, fn)
    } finally {
      if (--this.#running === 0) this.#storage.disable()
    }
  }

  /** The store of the run this code was started by, if one is still under way. */
  getStore(): T | undefined {
    return this.#running === 0 ? undefined : this.#storage.getStore()
  }
}
