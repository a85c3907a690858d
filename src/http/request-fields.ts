import type { FastifyRequest } from 'fastify'
import { Type, type Static, type TSchema } from 'typebox'
import { Value } from 'typebox/value'
import { InvariantError } from '../shared/assert.js'

/*
 * Readers for code that serves many routes (the admin guard, the audit's `before`, the sends brake,
 * the console's pages): there `request.params` and `request.body` are `unknown`, since no single
 * route's schema types them. Rather than cast, these check the value as it is at run time.
 */

/** Path parameters as the router gives them: every value a string. */
export const PathParams = Type.Record(Type.String(), Type.String())

/** The value of the field `name` of a parsed body or other object, or undefined if it has none. */
export function fieldOf(value: unknown, name: string): unknown {
  if (typeof value !== 'object' || value === null || !Object.hasOwn(value, name)) return undefined
  return Reflect.get(value, name)
}

/**
 * The route's path parameters, checked against the schema the caller expects (declare them as plain
 * strings: the router fills in every one of its path). A mismatch is a bug of the route table, never
 * the client's doing, and fails as such.
 */
export function paramsOf<Params extends TSchema>(request: FastifyRequest, schema: Params): Static<Params> {
  const { params } = request
  if (!Value.Check(schema, params))
    throw new InvariantError(
      `${request.routeOptions.url ?? 'a route'} lacks the path parameters expected of it`,
    )
  return params
}
