import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'

/**
 * The Node.js lines the project supports (package.json `engines`, the README, .ci/run) are the ones
 * every installed package accepts: `npm install` on any of them prints no EBADENGINE warning. The
 * versions below are the oldest of each line that the dependencies allow; npm warns for any package
 * of package-lock.json whose own `engines.node` leaves one out.
 */

const semver = createRequire(import.meta.url)('semver') as {
  satisfies(version: string, range: string): boolean
}
const ROOT = new URL('..', import.meta.url)
const pkg = JSON.parse(readFileSync(new URL('package.json', ROOT), 'utf8'))
const lock = JSON.parse(readFileSync(new URL('package-lock.json', ROOT), 'utf8'))
const SUPPORTED = ['20.19.0', '22.13.0', '24.0.0']

describe('supported Node.js versions', () => {
  it('are the ones package.json declares', () => {
    for (const v of SUPPORTED) expect(semver.satisfies(v, pkg.engines.node), v).toBe(true)
    expect(semver.satisfies('18.20.0', pkg.engines.node)).toBe(false)
  })

  it('are accepted by every package of package-lock.json, so npm install warns of no engine', () => {
    const refused: string[] = []
    for (const [path, entry] of Object.entries(lock.packages as Record<string, any>)) {
      const range = entry.engines?.node
      if (!path || typeof range !== 'string') continue
      for (const v of SUPPORTED) {
        if (!semver.satisfies(v, range))
          refused.push(`${path.replace(/^.*node_modules\//, '')} (${range}) on ${v}`)
      }
    }
    expect(refused).toEqual([])
  })
})
