import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import type { RatesService } from './service.js'
import type { AuthService } from '../auth/service.js'
import { DecimalText } from '../shared/amount.js'
import { RATE_CODES } from '../shared/currency.js'
import { bearerAuth } from '../auth/hook.js'
import { BEARER, errors } from '../http/schemas.js'
import { RatesSchema } from './schemas.js'

export function rateRoutes(app: FastifyInstance, deps: { rates: RatesService; auth: AuthService }): void {
  app.get(
    '/api/v2/rate',
    {
      onRequest: bearerAuth(deps.auth),
      schema: {
        tags: ['Rates'],
        summary: 'BTC exchange rates',
        description: "Keys are 'BTC' + currency code; values are units of that currency per 1 BTC.",
        security: BEARER,
        response: {
          200: Type.Object({ data: RatesSchema }),
          ...errors(401, 429, 503),
        },
      },
    },
    async () => {
      const snapshot = await deps.rates.current()
      const data: Record<string, DecimalText> = {}
      for (const code of RATE_CODES) data[`BTC${code}`] = new DecimalText(snapshot.texts[code]!)
      return { data }
    },
  )
}
