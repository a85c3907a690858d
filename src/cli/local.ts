import { existsSync } from 'node:fs'
import { loadConfig } from '../config/config.js'
import { createPgliteDb, createPostgresDb } from '../db/db.js'
import { migrate } from '../db/migrate.js'
import { CliError, type Commands } from './args.js'

/** The commands that run in this process rather than ask a running server: start it, migrate. */
export const localCommands: Commands = {
  async serve() {
    // The compiled server (npm run build): beside this file when this file is compiled itself,
    // in dist/ when the command line runs from its sources.
    const here = import.meta.url
    const server = here.endsWith('.js')
      ? new URL('../server.js', here)
      : new URL('../../dist/src/server.js', here)
    if (!existsSync(server)) {
      throw new CliError('No compiled server: run `npm run build` first (or `npm start` to run the sources)')
    }
    await import(server.href)
  },

  async migrate({ print }) {
    const config = loadConfig()
    const db = config.databaseUrl
      ? createPostgresDb(config.databaseUrl)
      : await createPgliteDb(config.dataDir)
    const applied = await migrate(db)
    await db.close()
    return print({ applied }, applied.length ? `applied ${applied.join(', ')}` : 'up to date')
  },
}
