import { executionAsyncId } from 'node:async_hooks'
import { describe, expect, it } from 'vitest'
import { ScopedStorage } from './scoped-storage.js'

// With promise hooks installed, a promise continuation runs under the promise's own async id;
// without them, under 0 (no resource is tracked).
const continuationAsyncId = async () => {
  await null
  return executionAsyncId()
}

describe('ScopedStorage', () => {
  it('gives each run its own store, nested and overlapping runs included', async () => {
    const storage = new ScopedStorage<string>()
    const seen: Array<string | undefined> = []
    const step = async (name: string, ms: number) => {
      await new Promise((resolve) => setTimeout(resolve, ms))
      seen.push(`${name}:${storage.getStore()}`)
    }
    await Promise.all([
      storage.run('a', async () => {
        await step('a1', 5)
        await storage.run('n', () => step('n', 1))
        await step('a2', 10)
      }),
      storage.run('b', () => step('b', 8)),
    ])
    expect(seen.sort()).toEqual(['a1:a', 'a2:a', 'b:b', 'n:n'])
    expect(storage.getStore()).toBeUndefined()
  })

  it('shows no store to work that outlives every run', async () => {
    const storage = new ScopedStorage<string>()
    let later: Promise<string | undefined> | undefined
    await storage.run('x', async () => {
      later = new Promise((resolve) => setTimeout(resolve, 5)).then(() => storage.getStore())
    })
    expect(await later).toBeUndefined()
  })

  it('leaves no promise hooks behind once its runs have finished', async () => {
    expect(await continuationAsyncId()).toBe(0)
    const storage = new ScopedStorage<string>()
    await storage.run('x', async () => {
      await null
      expect(storage.getStore()).toBe('x')
    })
    await expect(storage.run('y', () => Promise.reject(new Error('fails')))).rejects.toThrow('fails')
    expect(await continuationAsyncId()).toBe(0)
  })
})
