import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import type { AuthService } from './service.js'
import { ApiError } from '../shared/errors.js'
import { errors } from '../http/schemas.js'
import { TokenResponseSchema } from './schemas.js'
import { limitTokenRequest, refuseSpentAddress } from './hook.js'

export function authRoutes(app: FastifyInstance, deps: { auth: AuthService }): void {
  app.post(
    '/api/v2/authentication/token-signature',
    {
      // Nothing here spends the account's windows: only a verified, unused signature does (in
      // `admit`); every other answer is counted against the client address when it is sent.
      onRequest: refuseSpentAddress,
      schema: {
        tags: ['Authentication'],
        summary: 'Exchange a signed request for an access token',
        description:
          'Sign `<API_KEY>&payload=<body>` with HMAC-SHA256 under the API secret and send the lowercase hex in X-Api-Signature. The signature is checked over the body bytes exactly as sent (not over a decoded or re-serialised text). The body is any JSON object, sent exactly as signed. Each signature is accepted once. Only a request with a valid, unused signature counts against the account rate limit; every other answer (unknown key, wrong or reused signature, malformed body) counts against the client address, and an address that has used up its budget gets 429 until its window resets.',
        headers: Type.Object({
          'x-api-key': Type.Optional(Type.String({ description: 'The API key' })),
          'x-api-signature': Type.Optional(Type.String({ description: 'Lowercase hex HMAC-SHA256' })),
        }),
        body: Type.Optional(Type.Any({ description: 'Any JSON object; the exact text that was signed' })),
        response: {
          200: TokenResponseSchema,
          ...errors(400, 401, 415, 429),
        },
      },
    },
    async (request, reply) => {
      const body = request.body
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        throw new ApiError('invalid_json', 'The body must be a JSON object (the exact text that was signed)')
      }
      return deps.auth.exchange({
        apiKey: request.headers['x-api-key'] as string | undefined,
        signature: request.headers['x-api-signature'] as string | undefined,
        rawBody: request.rawBodyBytes ?? Buffer.alloc(0),
        admit: (owner) => limitTokenRequest(request, reply, owner),
      })
    },
  )
}
