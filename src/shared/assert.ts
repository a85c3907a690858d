/** Thrown when an invariant the code relies on does not hold: a bug, never a user error. */
export class InvariantError extends Error {
  override name = 'InvariantError'
}

export function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new InvariantError(message)
}
