import fc from 'fast-check'
import { afterAll, beforeAll, describe, it } from 'vitest'
import { commandArbs } from './commands.js'
import { initialModel } from './model.js'
import { createWorld, ENGINE, type World } from './world.js'

/**
 * The stateful model test (issue 29): random sequences of API and world actions against a real
 * service, compared after every step with the model (model.ts). CI runs a few short sequences;
 * `MODEL_RUNS=2000 MODEL_STEPS=40 MODEL_SEED=42 npx vitest run test/model` runs thousands on demand
 * (README.md, Testing). A failure prints its seed and path, and the shrunk sequence of commands.
 */
const RUNS = Number(process.env.MODEL_RUNS ?? 25)
const STEPS = Number(process.env.MODEL_STEPS ?? 20)
const SEED = process.env.MODEL_SEED === undefined ? undefined : Number(process.env.MODEL_SEED)
const PATH = process.env.MODEL_PATH
// Per run: a few seconds at most on either engine; thousands of runs get the time they need.
const TIMEOUT_MS = Math.max(120_000, RUNS * STEPS * 2_000)

describe(`model test (${ENGINE})`, () => {
  let w: World
  beforeAll(async () => {
    w = await createWorld()
  })
  afterAll(async () => w?.close())

  it('every sequence of actions leaves the service as the model says', { timeout: TIMEOUT_MS }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.commands(commandArbs(), { maxCommands: STEPS, size: 'max' }), async (cmds) => {
        // A fresh pair of accounts per run (not a fresh database): each run, and each shrink of
        // it, starts from an empty model.
        const run = await w.freshRun()
        w.setReceiverUp(true)
        await fc.asyncModelRun(() => ({ model: initialModel(), real: { w, run } }), cmds)
      }),
      {
        numRuns: RUNS,
        ...(SEED === undefined ? {} : { seed: SEED }),
        ...(PATH === undefined ? {} : { path: PATH }),
        endOnFailure: false,
        verbose: 1,
      },
    )
  })
})
