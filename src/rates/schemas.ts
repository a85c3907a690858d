import { Type } from 'typebox'

/** BTC exchange rates: 'BTC' + currency code -> units of that currency per 1 BTC, exact decimals. */
export const RatesSchema = Type.Record(Type.String({ pattern: '^BTC[A-Z]{3,5}$' }), Type.Number(), {
  description: "Keys are 'BTC' + currency code; values are units of that currency per 1 BTC.",
  examples: [{ BTCUSD: 95000, BTCVND: 2470000000, BTCUSDT: 95010.5 }],
})
