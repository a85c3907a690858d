import { ApiError } from '../shared/errors.js'
import { RailFailure } from './rail.js'

/**
 * Run a node or partner call made on behalf of a request (a Bitcoin node, the bank's account-name
 * look-up): one that cannot answer is a 503 the caller may retry (the transaction is left as it
 * was), not a 500.
 */
export async function nodeCall<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call()
  } catch (err) {
    if (!(err instanceof RailFailure)) throw err
    throw new ApiError('service_unavailable', `The ${what} is not available right now; try again shortly`)
  }
}
