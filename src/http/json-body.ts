import type { FastifyInstance } from 'fastify'
import { ApiError } from '../shared/errors.js'
import { JsonInputError, parseJsonBody, stringify } from '../shared/json.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The body decoded as UTF-8 (invalid sequences become U+FFFD): for reading, not for signatures. */
    rawBody?: string
    /** The body's bytes exactly as the client sent them, for signatures (contract section 4). */
    rawBodyBytes?: Buffer
  }
}

/**
 * JSON in and out: bodies are parsed losslessly (amounts keep their exact text), the raw text is
 * kept for signature checks, and an empty body is a request without a body (the spec tells clients
 * to send `Content-Type: application/json` on bodiless PUTs). Responses are written by our own
 * serializer so that amounts come out as exact decimal numbers.
 */
export function installJson(app: FastifyInstance): void {
  app.removeContentTypeParser(['application/json', 'text/plain'])
  app.addContentTypeParser(
    /^application\/([\w.+-]+\+)?json(\s*;.*)?$/i,
    { parseAs: 'buffer' },
    (request, body, done) => {
      const bytes = body as Buffer
      const text = bytes.toString('utf8')
      request.rawBodyBytes = bytes
      request.rawBody = text
      if (text.trim() === '') return done(null, undefined)
      try {
        done(null, parseJsonBody(text))
      } catch (err) {
        done(new ApiError('invalid_json', jsonErrorMessage(err)), undefined)
      }
    },
  )
  app.setReplySerializer((payload) => stringify(payload))
  app.setSerializerCompiler(() => (data) => stringify(data))
}

/**
 * The parser's reasons quote the character they stopped at; error texts never echo input, so only
 * the position (or the nesting limit, which is ours) is kept.
 */
function jsonErrorMessage(err: unknown): string {
  if (!(err instanceof JsonInputError)) return 'The body is not valid JSON'
  if (err.message.startsWith('nesting deeper than')) return `The body is not valid JSON: ${err.message}`
  const at = /at position (\d{1,9})/.exec(err.message)
  return at ? `The body is not valid JSON (at character ${at[1]})` : 'The body is not valid JSON'
}
