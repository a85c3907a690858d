import type { FastifyInstance } from 'fastify'
import { ApiError } from '../shared/errors.js'
import { JsonInputError, parseJsonBody, stringify } from '../shared/json.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The exact body text, for signatures computed over the bytes the client sent. */
    rawBody?: string
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
  app.addContentTypeParser(/^application\/([\w.+-]+\+)?json(\s*;.*)?$/i, { parseAs: 'string' }, (request, body, done) => {
    const text = body as string
    request.rawBody = text
    if (text.trim() === '') return done(null, undefined)
    try {
      done(null, parseJsonBody(text))
    } catch (err) {
      const message = err instanceof JsonInputError ? `The body is not valid JSON: ${err.message}` : 'The body is not valid JSON'
      done(new ApiError('invalid_json', message.slice(0, 200)), undefined)
    }
  })
  app.setReplySerializer((payload) => stringify(payload))
  app.setSerializerCompiler(() => (data) => stringify(data))
}
