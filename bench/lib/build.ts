import { join } from 'node:path'
import { compileServer as compile } from '../../scripts/build.js'
import { ROOT } from './proc.js'

/**
 * Compiles src/ of `root` (this checkout by default: another checkout's for before-and-after
 * comparisons) with the production build of `npm run build` (scripts/build.ts), into
 * `<outDir>/src`, with the repository's node_modules linked beside it. Returns the entry point.
 *
 * The bench measures the compiled server by default, as production runs it (`npm run
 * start:prod`), and the tsx runtime of `npm start` on request (`--runtime=tsx`, and the start-up
 * memory check).
 */
export async function compileServer(outDir: string, root = ROOT): Promise<string> {
  return compile(outDir, { root, linkNodeModules: join(ROOT, 'node_modules') })
}
