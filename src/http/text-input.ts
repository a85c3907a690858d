import type { FastifyInstance } from 'fastify'
import { ApiError } from '../shared/errors.js'
import { safeKey } from './errors.js'

/** Nesting deeper than this is refused by the JSON parser already; the walk below stops there too. */
const WALK_DEPTH_MAX = 64

/**
 * PostgreSQL text cannot hold the NUL character: a query given one fails with an encoding error,
 * which would surface as a 500. Requests carrying NUL in a path parameter, a query value or any
 * string or key of the JSON body are refused up front with 400 invalid_request naming the field.
 */
export function refuseNulCharacters(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    const field =
      nulIn(request.params, 'params', 0) ?? nulIn(request.query, 'query', 0) ?? nulIn(request.body, 'body', 0)
    if (field !== undefined) {
      const issue = 'must not contain the NUL character'
      throw new ApiError('invalid_request', `${field}: ${issue}`, [{ field, issue }])
    }
  })
}

/** The dotted path of the first string or key holding NUL, or undefined. */
function nulIn(value: unknown, path: string, depth: number): string | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? path : undefined
  if (value === null || typeof value !== 'object' || depth > WALK_DEPTH_MAX) return undefined
  for (const [key, child] of Object.entries(value)) {
    const at = path === 'body' ? safeKey(key) : `${path}.${safeKey(key)}`
    if (key.includes('\u0000')) return path
    const found = nulIn(child, at, depth + 1)
    if (found !== undefined) return found
  }
  return undefined
}
